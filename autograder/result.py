"""The result of grading one submission: one typed model, made by the job, read by everything after it.

    SubmissionResult                   one notebook of one student
      .cells: [CellVerdict]            one per test cell: score of points, status, error
          .checks: [Check]             one per check the test cell ran (public or hidden)
      .manual: [ManualAnswer]          free-response answers, graded by hand later
      .status, .problems, .cell_errors, .restarts, .isolation, .seconds
      .timings                         where those seconds went, by phase (TIMINGS; the benchmarks read them)
      .submitted_at, .submitted_from   when it was handed in, and who says so (classroom.discover)
      .hand: {grade_id: HandGrade}     what a person entered in the formgrader (from the gradebook, never
                                       written to the results files: nbgrader's gradebook is their one home)
      .totals(), .notes()              computed here, once, for every output

``autograder.job.grade_submission`` makes it; the class runner (``classroom``) carries it between
processes; ``outputs`` writes it (``results/<student>/<assignment>.json`` through ``to_json``, the
gradebook, feedback, CSVs), ``report`` sums it up, and ``check`` prints it as a table or, with
``--json``, as the wire ``dlcourse.selfcheck`` reads (same keys, plus ``totals`` and ``notes``).
The JSON keys are those the results files have always had: change them only with their readers.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import Any

from dlcourse.vocabulary import points  # the words of a result have one home

from .task import Task
from .text import scrub, scrubbed

PLACEHOLDER = "YOUR ANSWER HERE"  # what the release hands out in a free-response cell
# The phases of grading one notebook (seconds, as ``SubmissionResult.timings``; restarts included):
TIMINGS = {
    "sandbox_start": "making the sandboxes (Sandbox.start)",
    "preload": "until each sandbox's first cell ran: its interpreter, the preloaded libraries, the prelude",
    "cells": "the notebook's code cells (given, answers, scratch) running in the sandbox",
    "checks": "the test cells: the trusted side and the calls into the sandbox",
    "checks_in_sandbox": "of which waiting for the sandbox: the student's functions and the drivers running",
    "total": "the whole job, as SubmissionResult.seconds",
}


class Outcome(StrEnum):
    """How grading one notebook ended (``SubmissionResult.status``)."""
    GRADED = "graded"   # every test cell ran
    LIMIT = "limit"     # a limit stopped a cell or the notebook (the rest was graded)
    ERROR = "error"     # the grader could not grade it (a grader bug, a grading process lost twice)


class CellStatus(StrEnum):
    """How one test cell ended (``CellVerdict.status``); the stops are ``sandbox.process.Stop``'s values."""
    OK = "ok"
    TIMEOUT = "timeout"      # a time limit was reached
    CRASH = "crash"          # the student's process died
    PROTOCOL = "protocol"    # it sent something that is not a well-formed reply
    ISOLATION = "isolation"  # no sandbox could be made
    NOT_RUN = "not run"      # the notebook's limits were reached before it


@dataclass
class Check:
    """One check of a test cell, as recorded in the grader (``dlcourse.testing.check``)."""
    description: str
    passed: bool
    message: str | None
    hidden: bool

    @classmethod
    def from_json(cls, data: dict) -> Check:
        return cls(str(data.get("description", "")), bool(data.get("passed")), data.get("message"),
                   bool(data.get("hidden")))


@dataclass
class CellVerdict:
    """The verdict on one test cell: ``score = points × passed / checks`` (0 when it failed before any check)."""
    grade_id: str
    points: float
    score: float
    checks: list[Check] = field(default_factory=list)
    error: str | None = None        # a failure outside any check
    status: CellStatus = CellStatus.OK
    seconds: float = 0.0
    refused: str | None = None      # why its answer earns nothing whatever the checks said (provenance.py)

    @property
    def passed(self) -> int:
        """How many of its checks passed."""
        return sum(c.passed for c in self.checks)

    @property
    def full(self) -> bool:
        """Full marks."""
        return self.score >= self.points - 1e-9

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> CellVerdict:
        return cls(str(data.get("grade_id", "")), float(data.get("points", 0.0)), float(data.get("score", 0.0)),
                   [Check.from_json(c) for c in data.get("checks") or []], data.get("error"),
                   CellStatus(data.get("status", "ok")), float(data.get("seconds", 0.0)), data.get("refused"))


@dataclass
class ManualAnswer:
    """A free-response answer: ``score`` is None until graded by hand, 0.0 when left unanswered."""
    grade_id: str
    points: float
    score: float | None
    answer: str

    @property
    def unanswered(self) -> bool:
        """Still empty: the grader said so, or only the release's placeholder is left."""
        return self.score == 0.0 or not str(self.answer or "").replace(PLACEHOLDER, "").strip()

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> ManualAnswer:
        score = data.get("score")
        return cls(str(data.get("grade_id", "")), float(data.get("points", 0.0)),
                   None if score is None else float(score), str(data.get("answer") or ""))


@dataclass
class HandGrade:
    """What a person entered in the formgrader for one cell: a score (it replaces the grader's), extra
    credit, a comment; ``answer_changed``: the answer differs from the one it was given on (kept, flagged)."""
    score: float | None = None
    extra_credit: float | None = None
    comment: str | None = None
    answer_changed: bool = False


@dataclass
class Totals:
    score: float           # automatically graded cells, plus free responses already graded
    maximum: float         # every point of the notebook, free responses included
    auto_score: float      # the automatically graded cells only
    auto_points: float
    manual_points: float   # the free responses' points, graded by hand
    pending: int = 0       # free responses still waiting for a hand grade
    pending_points: float = 0.0


@dataclass
class SubmissionResult:
    """What grading one notebook of one student gave. Never raised for a broken submission: it says so."""
    student: str
    assignment: str
    notebook: str
    status: Outcome = Outcome.GRADED
    problems: list[str] = field(default_factory=list)            # notes on the submission (repaired, missing...)
    cell_errors: dict[str, str] = field(default_factory=dict)    # "cell 3 (given)" -> what it raised
    restarts: int = 0
    isolation: str | None = None                                 # how the sandboxes were made
    cells: list[CellVerdict] = field(default_factory=list)
    manual: list[ManualAnswer] = field(default_factory=list)
    notebook_json: str | None = None                             # the sanitized notebook that was graded
    feedback_html: str | None = None
    seconds: float = 0.0
    submitted_at: str | None = None                              # "2027-01-15 23:59:00 UTC"
    submitted_from: str | None = None                            # where that time comes from
    hand: dict[str, HandGrade] = field(default_factory=dict)     # from the gradebook, per cell
    timings: dict[str, float] = field(default_factory=dict)      # seconds per phase (TIMINGS); {} in old files

    @classmethod
    def failed(cls, task: Task, problem: str, status: Outcome = Outcome.ERROR) -> SubmissionResult:
        """A submission the grader could not grade (a grader bug, a grading process lost twice)."""
        return cls(task.student, task.assignment, task.notebook, status, [*task.problems, problem])

    def score_of(self, grade_id: str, auto: float | None) -> float | None:
        """A cell's score as nbgrader counts it: a hand grade replaces the grader's, extra credit adds."""
        hand = self.hand.get(grade_id)
        if hand is None:
            return auto
        score = hand.score if hand.score is not None else auto
        return None if score is None else score + (hand.extra_credit or 0.0)

    def pending(self) -> list[ManualAnswer]:
        """Free responses that still wait for a hand grade."""
        return [m for m in self.manual if self.score_of(m.grade_id, m.score) is None]

    def totals(self) -> Totals:
        """Free responses not yet graded count 0."""
        auto_score = sum(c.score for c in self.cells)
        auto_points = sum(c.points for c in self.cells)
        manual_points = sum(m.points for m in self.manual)
        score = sum(self.score_of(c.grade_id, c.score) or 0.0 for c in self.cells) + \
            sum(self.score_of(m.grade_id, m.score) or 0.0 for m in self.manual)
        pending = self.pending()
        return Totals(round(score, 4), auto_points + manual_points, auto_score, auto_points, manual_points,
                      len(pending), sum(m.points for m in pending))

    def notes(self) -> list[str]:
        """What else the student should know: repaired cells, errors while running the notebook, limits,
        written answers still empty."""
        out = list(self.problems)
        out += [f"{where} was {error}" if error.startswith("stopped: ") else f"running {where} raised {error}"
                for where, error in self.cell_errors.items()]  # stopped by a limit, or raised
        if self.restarts:
            out.append(f"your code had to be restarted {self.restarts} time(s) (a crash or a time limit)")
        if self.status != Outcome.GRADED:
            out.append(f"grading status: {self.status}")
        out += [f"the written answer {answer.grade_id} ({points(answer.points)} points) is still empty"
                for answer in self.manual if answer.unanswered]
        return out

    # ------------------------------------------------------------------ JSON (results files, check --json)

    def to_json(self, notebook: bool = False, feedback: bool = False, summary: bool = False) -> dict:
        """A plain dict with the keys of ``results/*.json``; ``notebook``/``feedback``: with the graded
        notebook / the feedback page; ``summary``: with ``totals`` and ``notes`` (check --json's wire)."""
        data: dict[str, Any] = {
            "student": self.student, "assignment": self.assignment, "notebook": self.notebook,
            "status": self.status, "problems": list(self.problems), "cell_errors": dict(self.cell_errors),
            "restarts": self.restarts, "isolation": self.isolation,
            "cells": [c.to_json() for c in self.cells], "manual": [m.to_json() for m in self.manual]}
        if notebook:
            data["notebook_json"] = self.notebook_json
        if feedback:
            data["feedback_html"] = self.feedback_html
        data["seconds"] = self.seconds
        data["submitted_at"], data["submitted_from"] = self.submitted_at, self.submitted_from
        data["timings"] = dict(self.timings)
        if summary:
            totals = self.totals()
            data["totals"] = {"score": totals.auto_score, "points": totals.auto_points,
                              "manual_points": totals.manual_points}
            data["notes"] = self.notes()
        return data

    @classmethod
    def from_json(cls, data: dict) -> SubmissionResult:
        return cls(str(data.get("student", "")), str(data.get("assignment", "")), str(data.get("notebook", "")),
                   Outcome(data.get("status", "graded")), [str(p) for p in data.get("problems") or []],
                   {str(k): str(v) for k, v in (data.get("cell_errors") or {}).items()},
                   int(data.get("restarts") or 0), data.get("isolation"),
                   [CellVerdict.from_json(c) for c in data.get("cells") or []],
                   [ManualAnswer.from_json(m) for m in data.get("manual") or []],
                   data.get("notebook_json"), data.get("feedback_html"), float(data.get("seconds") or 0.0),
                   data.get("submitted_at"), data.get("submitted_from"),
                   timings={str(k): float(v) for k, v in (data.get("timings") or {}).items()})

    def scrubbed(self) -> SubmissionResult:
        """A copy whose every string encodes as UTF-8 (lone surrogates written as ``\\udXXX``)."""
        copy = SubmissionResult.from_json(scrubbed(self.to_json(notebook=True, feedback=True)))
        copy.hand = {scrub(k): replace(h, comment=None if h.comment is None else scrub(h.comment))
                     for k, h in self.hand.items()}
        return copy
