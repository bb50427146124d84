"""The grader's errors: one hierarchy, one name per error.

    GraderError
    ├── UsageError              a wrong argument, path or setting: one line, exit status 2 (every verb)
    │   ├── EnvironmentProblem  this machine cannot grade (no sandbox, other packages): no notebook graded
    │   └── SelfCheckError      a notebook a self-learner gave cannot be checked (the line is for them)
    └── SandboxError            (``autograder.sandbox.process``) a student's process died, hung past its
                                limit or broke the protocol: it costs that notebook, never the class

Not the grader's: ``sandbox.client.RemoteError``, a student's exception re-raised in the grader, and
``sandbox.wire.WireError``, a malformed message (the wire is on both sides of the boundary; the sandbox
sees no other module of the grader). A broken submission raises nothing: what went wrong is written in
its ``SubmissionResult``.
This module imports nothing of the grader: every layer may raise these.
"""
from __future__ import annotations


class GraderError(Exception):
    """Every error the grader raises on purpose."""


class UsageError(GraderError):
    """The arguments, paths or settings cannot be used; the message is one line."""


class EnvironmentProblem(UsageError):
    """The grading machine cannot grade: the message is one line, naming what is missing and the way out."""


class SelfCheckError(UsageError):
    """The notebook cannot be checked; the message is for the student."""
