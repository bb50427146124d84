"""What a grading run into an existing OUT keeps from the runs before it, and what it says changed.

Once an instructor graded by hand in it, an OUT folder is their data: nbgrader's gradebook
(``OUT/gradebook.db``) holds every score, extra credit, comment and flag entered in the formgrader.
A new ``make grade`` into that OUT (after a fix to a test, or a late submission) rebuilds the
gradebook from the new verdicts, then puts back:

- every hand grade and comment, and the formgrader's flags, unless the instructor asks to reset them
  (``--reset-hand-grades``, ``RESET_HAND_GRADES=1``); a hand grade whose answer changed since it was
  given is kept and flagged (``HandGrade.answer_changed``, and nbgrader's own *flagged* mark);
- each chapter's due date;
- the submissions of earlier runs that this one did not grade again (still counted, as graded then).

``OUT/hand_grades.json`` records what each hand grade was given on: a hash of the answer, with the
score, extra credit and comment it had then. A grade entered or changed since the last run was given
on that run's answer (the one the formgrader showed); an unchanged one, on the recorded answer. Unflag
the notebook in the formgrader (or change the grade) once you have looked at the new answer.

``changes`` lists every score that moved, per student, and why.
"""
from __future__ import annotations

import datetime
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .course import grade_id, role
from .result import HandGrade, SubmissionResult

RECORD = "hand_grades.json"
STUDENT_FIELDS = ("first_name", "last_name", "email", "lms_user_id")
Key = tuple  # (student, assignment, cell name)


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def fingerprints(nb: nbformat.NotebookNode) -> dict[str, str]:
    """What a hand grade on each cell of a graded notebook is given on, as a hash per cell name: a
    free-response answer or a solution cell, its own text; a test cell, all of the notebook's code."""
    code = _hash("\n\0".join(c.source for c in nb.cells if role(c) == "solution"))
    out = {grade_id(c): _hash(c.source) for c in nb.cells if role(c) in ("solution", "answer")}
    out.update({grade_id(c): code for c in nb.cells if role(c) == "tests"})
    return out


def graded_notebooks(out: Path) -> dict[tuple[str, str], Path]:
    """OUT/autograded/<student>/<assignment>/<assignment>.ipynb, per (student, assignment)."""
    return {(p.parts[-3], p.parts[-2]): p for p in sorted((out / "autograded").glob("*/*/*.ipynb"))
            if p.name == f"{p.parts[-2]}.ipynb"}


def _read_cells(path: Path) -> nbformat.NotebookNode:
    """A notebook we wrote, read without nbformat's validation (ten times faster: a class has thousands)."""
    nb = nbformat.from_dict(json.loads(path.read_text(encoding="utf-8")))
    for cell in nb.cells:
        if isinstance(cell.get("source"), list):
            cell.source = "".join(cell.source)
    return nb


def answers(out: Path, pairs: set | None = None) -> dict[Key, str]:
    """The fingerprint of every cell of the graded notebooks in OUT (of ``pairs`` of student and assignment
    only, when given)."""
    found = {}
    for (student, assignment), path in graded_notebooks(out).items():
        if pairs is None or (student, assignment) in pairs:
            found.update({(student, assignment, name): h for name, h in fingerprints(_read_cells(path)).items()})
    return found


def saved_results(out: Path) -> dict[tuple[str, str], SubmissionResult]:
    """OUT/results/<student>/<assignment>.json, per (student, assignment)."""
    found = {}
    for path in sorted((out / "results").glob("*/*.json")):
        result = SubmissionResult.from_json(json.loads(path.read_text(encoding="utf-8")))
        found[(path.parent.name, path.stem)] = result
    return found


def utc(text: str | None) -> datetime.datetime | None:
    """A time written as "2027-01-15 23:59:00 UTC" (as results and CSVs have it) as nbgrader stores it."""
    if not text:
        return None
    from nbgrader.utils import parse_utc
    try:
        return parse_utc(text)
    except (ValueError, OverflowError, TypeError):
        return None


def utc_text(moment: datetime.datetime | None) -> str:
    """nbgrader's naive UTC time as text: "2027-01-15 23:59:00 UTC"."""
    return "" if moment is None else moment.strftime("%Y-%m-%d %H:%M:%S UTC")


# ------------------------------------------------------------------ the gradebook as an instructor left it

@dataclass
class Gradebook:
    """What OUT/gradebook.db holds that a person entered, and the scores it gives."""
    hand: dict[Key, HandGrade] = field(default_factory=dict)
    flagged: set = field(default_factory=set)                      # (student, assignment)
    scores: dict[tuple, dict[str, float | None]] = field(default_factory=dict)   # None: waits for a hand grade
    due: dict[str, datetime.datetime] = field(default_factory=dict)
    students: dict[str, dict] = field(default_factory=dict)       # names, e-mail, LMS id entered for each
    extensions: dict[tuple, datetime.timedelta] = field(default_factory=dict)   # (student, assignment)

    @classmethod
    def read(cls, db: Path) -> Gradebook:
        from nbgrader.api import Gradebook as NbgraderGradebook
        found = cls()
        if not db.is_file():
            return found
        with NbgraderGradebook(f"sqlite:///{db}") as gb:
            for student in gb.students:
                found.students[student.id] = {k: getattr(student, k) for k in STUDENT_FIELDS
                                              if getattr(student, k) is not None}
            for assignment in gb.assignments:
                if assignment.duedate is not None:
                    found.due[assignment.name] = assignment.duedate
                for submission in assignment.submissions:
                    student = submission.student.id
                    if submission.extension is not None:
                        found.extensions[(student, assignment.name)] = submission.extension
                    for notebook in submission.notebooks:
                        if notebook.flagged:
                            found.flagged.add((student, assignment.name))
                        cells = found.scores.setdefault((student, assignment.name), {})
                        for grade in notebook.grades:
                            pending = grade.needs_manual_grade and grade.manual_score is None
                            cells[grade.name] = None if pending else float(grade.score)
                            if grade.manual_score is not None or grade.extra_credit is not None:
                                found.hand[(student, assignment.name, grade.name)] = HandGrade(
                                    grade.manual_score, grade.extra_credit)
                        for comment in notebook.comments:
                            if comment.manual_comment:
                                key = (student, assignment.name, comment.name)
                                found.hand.setdefault(key, HandGrade()).comment = comment.manual_comment
        return found


@dataclass
class HandGrades:
    """Every hand grade and comment of OUT, each with the answer it was given on (a hash)."""
    grades: dict[Key, HandGrade]
    given_on: dict[Key, str | None]
    flagged: set

    @classmethod
    def read(cls, out: Path, gradebook: Gradebook | None = None) -> HandGrades:
        """From the gradebook, the record and the graded notebooks OUT holds now; ``answer_changed`` set."""
        gradebook = gradebook or Gradebook.read(out / "gradebook.db")
        record = _read_record(out)
        now = answers(out, {key[:2] for key in gradebook.hand})
        given_on = {}
        for key, grade in gradebook.hand.items():
            then = record["grades"].get(key)
            reviewed = key[:2] in record["flagged"] and key[:2] not in gradebook.flagged
            same = then is not None and then[1:] == [grade.score, grade.extra_credit, grade.comment]
            given_on[key] = then[0] if same and not reviewed else now.get(key)
            grade.answer_changed = given_on[key] != now.get(key)
        return cls(gradebook.hand, given_on, set(gradebook.flagged))

    def of(self, student: str, assignment: str) -> dict[str, HandGrade]:
        return {k[2]: g for k, g in self.grades.items() if k[:2] == (student, assignment)}

    def write_record(self, out: Path, flagged_by_us: set) -> None:
        grades = [[*key, self.given_on.get(key), g.score, g.extra_credit, g.comment]
                  for key, g in sorted(self.grades.items())]
        (out / RECORD).write_text(json.dumps({"grades": grades, "flagged": sorted(map(list, flagged_by_us))},
                                             indent=1), encoding="utf-8")


def _read_record(out: Path) -> dict:
    try:
        data = json.loads((out / RECORD).read_text(encoding="utf-8"))
        return {"grades": {tuple(row[:3]): list(row[3:]) for row in data["grades"]},
                "flagged": {tuple(pair) for pair in data["flagged"]}}
    except (OSError, ValueError, KeyError, TypeError):
        return {"grades": {}, "flagged": set()}


# ------------------------------------------------------------------ before a re-grade, and after it

@dataclass
class Before:
    """OUT as the previous run (and the instructor) left it: read before anything is overwritten."""
    gradebook: Gradebook
    hand: HandGrades
    results: dict[tuple[str, str], SubmissionResult]
    answers: dict[Key, str]

    @classmethod
    def read(cls, out: Path) -> Before:
        gradebook = Gradebook.read(out / "gradebook.db")
        return cls(gradebook, HandGrades.read(out, gradebook), saved_results(out), answers(out))

    def kept(self, graded: list[SubmissionResult], known: set[str]) -> list[SubmissionResult]:
        """Earlier runs' submissions that this run did not grade again (of chapters the course still has)."""
        now = {(r.student, r.assignment) for r in graded}
        return [r for key, r in sorted(self.results.items()) if key not in now and r.assignment in known]


def restore(db: Path, before: Before, answer_changed: set) -> list[str]:
    """Put the hand grades, comments and flags of ``before`` into the rebuilt gradebook, and flag the notebooks
    of ``answer_changed``. Returns what could not be put back (a cell the chapter no longer has)."""
    from nbgrader.api import Gradebook as NbgraderGradebook
    from nbgrader.api import MissingEntry
    lost = []
    with NbgraderGradebook(f"sqlite:///{db}") as gb:
        for (student, assignment, name), grade in sorted(before.hand.grades.items()):
            try:
                notebook = gb.find_submission_notebook(assignment, assignment, student)
            except MissingEntry:
                lost.append(f"{student}/{assignment} {name}: the submission is no longer in the gradebook")
                continue
            put = False
            found = next((g for g in notebook.grades if g.name == name), None)
            if found is not None and (grade.score is not None or grade.extra_credit is not None):
                found.manual_score, found.extra_credit, put = grade.score, grade.extra_credit, True
            comment = next((c for c in notebook.comments if c.name == name), None)
            if comment is not None and grade.comment:
                comment.manual_comment, put = grade.comment, True
            if not put:
                lost.append(f"{student}/{assignment} {name}: the chapter has no such cell any more")
        for student, assignment in sorted(before.hand.flagged | answer_changed):
            try:
                gb.find_submission_notebook(assignment, assignment, student).flagged = True
            except MissingEntry:
                pass
        gb.db.commit()
    return lost


def restore_roster(db: Path, before: Before) -> None:
    """Put back what the instructor entered that is not a grade: students' names, e-mail and LMS id, and
    extensions (kept even by ``--reset-hand-grades``)."""
    from nbgrader.api import Gradebook as NbgraderGradebook
    from nbgrader.api import MissingEntry
    with NbgraderGradebook(f"sqlite:///{db}") as gb:
        for student, fields in before.gradebook.students.items():
            if fields:
                gb.update_or_create_student(student, **fields)
        for (student, assignment), extension in before.gradebook.extensions.items():
            try:
                gb.find_submission(assignment, student).extension = extension
            except MissingEntry:
                pass
        gb.db.commit()


def answer_changed(before: Before, out: Path) -> set:
    """The notebooks where an answer changed under a hand grade (unflagging one says: reviewed)."""
    now = answers(out, {key[:2] for key in before.hand.grades})
    return {k[:2] for k in before.hand.grades if before.hand.given_on.get(k) != now.get(k)}


def changes(before: Before, after: Gradebook, results: list[SubmissionResult], out: Path,
            reset: bool) -> dict[str, list[str]]:
    """Per student, every score that changed since the last run, each with why."""
    fresh = {(r.student, r.assignment): r for r in results}
    now = answers(out, set(before.gradebook.scores) & set(fresh))
    listed: dict[str, list[str]] = {}
    for (student, assignment), old in sorted(before.gradebook.scores.items()):
        new = after.scores.get((student, assignment))
        if new is None:
            continue  # not graded in this run: kept as it was
        was, now_result = before.results.get((student, assignment)), fresh.get((student, assignment))
        for name in sorted(old.keys() | new.keys()):
            a, b = old.get(name, "absent"), new.get(name, "absent")
            if a == b or (isinstance(a, float) and isinstance(b, float) and abs(a - b) < 1e-9):
                continue
            why = _why(name, (student, assignment), before, now, was, now_result, reset)
            listed.setdefault(student, []).append(f"{assignment} {name}: {_score(a)} → {_score(b)} ({why})")
    return listed


def _score(value) -> str:
    return "waiting for a hand grade" if value is None else value if isinstance(value, str) else f"{value:g}"


def _why(name, pair, before: Before, now: dict, was, result, reset: bool) -> str:
    key = (*pair, name)
    if key in before.hand.grades and reset:
        return "hand grade reset, as asked"
    reasons = []
    if before.answers.get(key) != now.get(key):
        reasons.append("the submission changed")
    old_cell = next((c for c in (was.cells if was else []) if c.grade_id == name), None)
    new_cell = next((c for c in (result.cells if result else []) if c.grade_id == name), None)
    if old_cell is None or new_cell is None:
        reasons.append("the chapter's graded cells changed" if old_cell or new_cell else "the answer was graded")
        return "; ".join(reasons)
    old_checks = {c.description: c.passed for c in old_cell.checks}
    new_checks = {c.description: c.passed for c in new_cell.checks}
    if old_checks.keys() != new_checks.keys() or abs(old_cell.points - new_cell.points) > 1e-9:
        reasons.append("the chapter's checks changed")
    now_pass = [d for d, p in new_checks.items() if p and old_checks.get(d) is False]
    now_fail = [d for d, p in new_checks.items() if not p and old_checks.get(d) is True]
    if now_pass:
        reasons.append("now passes: " + ", ".join(now_pass))
    if now_fail:
        reasons.append("now fails: " + ", ".join(now_fail))
    if old_cell.status != new_cell.status:
        reasons.append(f"was {old_cell.status}, now {new_cell.status}")
    return "; ".join(reasons) or "the same submission and checks gave another result"
