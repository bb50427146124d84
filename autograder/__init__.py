"""Grading tools of the course: a hardened nbgrader pipeline and its proofs."""
