"""What one grading job is given: a ``Task``, built by each front end (``classroom.discover`` for
``make grade``, ``check`` for a self-learner, ``nbgrader_plugin`` for ``nbgrader autograde``, the
``grade-one`` verb) and read by ``job.grade_submission``. Frozen and picklable: it crosses to a worker
process or a Dask worker as it is."""
from __future__ import annotations

from dataclasses import dataclass

from .settings import Limits


@dataclass(frozen=True)
class Task:
    student: str
    assignment: str                     # the chapter
    notebook: str                       # the notebook's file name, as the results and feedback name it
    path: str | None = None             # the submitted file; None: graded as the untouched release
    # the class folder and the path below it (student, chapter, file): opened folder by folder, no link followed
    root: str | None = None
    parts: tuple[str, ...] | None = None
    problems: tuple[str, ...] = ()      # what was found before grading (renamed, missing, a link): reported
    submitted_at: str | None = None     # "2027-01-15 23:59:00 UTC"
    submitted_from: str | None = None   # what says so: "timestamp.txt" or "file mtime"
    unsafe: bool = False                # no sandbox can be made here and grading without one was asked for
    limits: Limits = Limits()           # the sandbox's bounds, set once at the front end
    # libraries a grading process's warm template may import beyond this notebook's: the run's chapters' (so one
    # template serves them all, its imports paid once per process, not once per chapter: ``sandbox.template``)
    warm: tuple[str, ...] = ()
