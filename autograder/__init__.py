"""Grading tools of the course: a hardened nbgrader pipeline and its proofs."""
import sys

# nbformat validates with jsonschema, which imports rfc3987_syntax (when installed, as jupyter-events has it)
# only to check "iri" strings, a format no notebook schema uses; that import compiles 39 grammars: 1.2 s of
# every grading process's start (nbformat's import: 1.47 s with it, 0.27 s without, measured Nov 2026).
sys.modules.setdefault("rfc3987_syntax", None)
