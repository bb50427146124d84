"""A full check of one notebook, for self-learners:
``make check NOTEBOOK=course/ch01_perceptron/ch01_perceptron.ipynb``.

    python -m autograder check [--json] [--details] [--limits "cell_seconds=120 ..."] NOTEBOOK

The notebook is graded exactly as in ``make grade`` (sandboxed, hidden tests
included) and a short table is printed: one line per exercise (score, checks
passed, ``ok``, ``not written yet`` or how many checks fail), the total, the first
failing check in full (its description and message), the notes and what to do
next; ``--details`` lists every failing check under its exercise, and every note.
Hidden checks show their description and message only, never their code: the
grader's result holds nothing else.
``--json`` prints the grader's result instead (``SubmissionResult.to_json``:
without the graded notebook, with its ``totals`` and ``notes``), for
``dlcourse.selfcheck.check_my_work`` in the student's kernel, which draws its own
table. No feedback page is made: nobody would read it here.

Exit status: 0 when the notebook was checked (whatever its score), 2 when it
could not be (no such file, not a chapter of this course).
"""
from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
import textwrap
from pathlib import Path

from dlcourse import vocabulary

from .course import SOLUTIONS, chapters, source_path
from .errors import SelfCheckError
from .job import grade_submission
from .result import SubmissionResult
from .sandbox import cgroups
from .sandbox.isolation import probe
from .settings import Limits
from .task import Task


def _grade_ids(nb: dict) -> set[str]:
    """The grade_ids of a notebook's nbgrader cells (the ``setup`` cell every chapter has left out)."""
    ids = set()
    for cell in nb.get("cells") or []:
        metadata = cell.get("metadata") if isinstance(cell, dict) else None
        meta = metadata.get("nbgrader") if isinstance(metadata, dict) else None  # any shape: graded, not raised on
        if isinstance(meta, dict) and isinstance(meta.get("grade_id"), str) and meta["grade_id"] != "setup":
            ids.add(meta["grade_id"])
    return ids


def _read_notebook(path: Path) -> dict:
    try:
        nb = json.loads(path.read_bytes().decode("utf-8", "replace"))
    except (OSError, ValueError) as exc:
        raise SelfCheckError(f"{path} is not a notebook ({type(exc).__name__}): "
                             f"give the .ipynb file saved from JupyterLab") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise SelfCheckError(f"{path} is not a notebook (no cells): give the .ipynb file saved from JupyterLab")
    return nb


def chapter_of(path: Path) -> str:
    """The chapter a notebook belongs to, wherever it is saved and whatever its name.

    The notebook's own nbgrader metadata decides: the chapter whose graded cells (grade_ids) it
    shares most. A notebook whose metadata was lost falls back on its folder or file name
    (``<chapter>/<anything>.ipynb`` or ``<chapter>.ipynb``)."""
    if not SOLUTIONS.is_dir():
        raise SelfCheckError(f"the tests of the course are not in this copy ({SOLUTIONS} is missing): "
                             f"a self-check needs the whole course repository")
    known = chapters()
    ids = _grade_ids(_read_notebook(path))
    if ids:
        overlap = {ch: len(ids & _grade_ids(json.loads(source_path(ch).read_text(encoding="utf-8"))))
                   for ch in known}
        best = max(overlap.values())
        winners = [ch for ch, n in overlap.items() if n == best]
        if best and len(winners) == 1:
            return winners[0]
        if best:
            raise SelfCheckError(f"{path} mixes the exercises of {' and '.join(winners)}: "
                                 f"check one chapter's notebook at a time")
    for candidate in (path.parent.name, path.stem):
        if candidate in known:
            return candidate
    raise SelfCheckError(f"{path} is not a notebook of this course: its cells carry no nbgrader metadata of a "
                         f"chapter (was it copied cell by cell into a new notebook?); check the notebook from "
                         f"course/<chapter>/, or save yours as <chapter>.ipynb with <chapter> one of "
                         f"{', '.join(known)}")


def unsandboxed(reason: str) -> str:
    """The one line of a check run without the sandbox (as ``make grade UNSAFE=1`` says "UNSAFE: ...")."""
    return (f"UNSAFE: checked without the operating-system sandbox, none can be made here ({reason}): your "
            f"notebook's code ran unconfined, as in Jupyter, with your permissions and without the grader's "
            f"limits; `make grade` refuses to grade so")


def check(path, limits: Limits = Limits()) -> SubmissionResult:
    """The grader's result for the notebook at ``path`` (the graded notebook left out), graded within ``limits``."""
    if not str(path).strip():
        raise SelfCheckError("no notebook given: make check NOTEBOOK=course/<chapter>/<chapter>.ipynb")
    path = Path(path).expanduser()
    if path.is_dir():
        raise SelfCheckError(f"{path} is a folder: give the notebook, e.g. NOTEBOOK=course/<chapter>/<chapter>.ipynb")
    if not path.is_file():
        raise SelfCheckError(f"{path}: no such notebook")
    chapter = chapter_of(path.resolve())
    # your own code, checked for you: where no sandbox can be made (Binder), it runs without one
    reason = probe()  # your own code, checked for you: where no sandbox can be made (Binder), without one, said
    if reason is not None:
        print(f"check: {unsandboxed(reason)}", file=sys.stderr)
    elif (limited := cgroups.limited()) is not None:  # as make grade and nbgrader autograde say it
        print(f"check: {limited}", file=sys.stderr)
    result = grade_submission(Task("you", chapter, path.name, str(path.resolve()),  # your own link is fine
                                   unsafe=reason is not None, limits=limits))
    result.notebook_json = None
    if reason is not None:  # in the table's notes too, and in the kernel's (which shows no stderr)
        result.problems.insert(0, unsandboxed(reason))
    return result


NOTES_SHOWN = 6  # notes the short table shows; --details shows them all


def _command(path: str) -> str:
    """The command that shows every failing check of the notebook at ``path``."""
    python = Path(sys.executable)
    with contextlib.suppress(ValueError):
        python = python.relative_to(Path.cwd())
    shown = shlex.quote(path) if path else "NOTEBOOK"
    return f"{python} -m autograder check --details {shown}"


def _wrapped(text: str, width: int, indent: str = "  ", hang: str = "    ") -> list[str]:
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + hang) or [indent]


def format_table(result: SubmissionResult, path: str = "", width: int = 100, details: bool = False) -> str:
    """The self-check as text (``dlcourse.vocabulary``, as the kernel's table words it): one line per exercise
    (its score, its checks passed, and ``ok``, ``not written yet`` or how many checks fail), the total, the
    first failing check in full, the notes, and what to do next. ``details``: every failing check under its
    exercise, and every note."""
    wire = result.to_json(summary=True)
    rows, total = vocabulary.rows(wire), vocabulary.totals(wire)
    lines = [f"Self-check of {result.assignment}" + (f" ({path})" if path else ""),
             "This checks the notebook as saved on disk: save it first (Ctrl+S).", ""]
    name_width = max([len(row["exercise"]) for row in rows] + [8])
    rule = "-" * min(width, name_width + 40)
    lines += [f"{'exercise':<{name_width}}  {'score':>9}  {'passed':>6}", rule]
    for row in rows:
        lines += vocabulary.text_row(row, name_width, width) if details else [vocabulary.short_row(row, name_width)]
    lines += [rule, f"{'total':<{name_width}}  {total['score']:>9}"]
    if total["manual"]:
        lines.append(f"({total['manual']})")
    to_fix = next((row for row in rows if row["failures"] and not vocabulary.row_not_written(row)), None)
    blank = [row["exercise"] for row in rows if vocabulary.row_not_written(row)]
    if to_fix is not None and not details:
        first, more = to_fix["failures"][0], len(to_fix["failures"]) - 1
        lines += ["", f"First failing check, in {to_fix['exercise']}:"]
        lines += _wrapped(f"✗ {vocabulary.failure_line(first)}", width)
        if more:
            lines.append(f"  ({more} more failing check{'s' if more != 1 else ''} in {to_fix['exercise']})")
    notes = wire["notes"]
    if notes:
        shown = notes if details else notes[:NOTES_SHOWN]
        lines += ["", "Notes:"] + [line for note in shown for line in _wrapped(f"- {note}", width)]
        if len(shown) < len(notes):
            lines.append(f"  - and {len(notes) - len(shown)} more (every note: the command below)")
    if to_fix is not None:
        step = (f"Next: fix {to_fix['exercise']} (run its test cell in the notebook for its public checks), "
                f"save, and check again.")
    elif blank:
        step = (f"Next: write {blank[0]}" + (f" ({len(blank) - 1} more exercises not written yet)" if len(blank) > 1
                                             else "") + ", run its test cell, save, and check again.")
    elif any(not row["full"] for row in rows):
        step = "Next: see the exercises not marked ok above, save, and check again."
    else:
        step = "Every exercise passes." + (" The written answers are graded by hand." if total["manual"] else "")
    lines += [""] + _wrapped(step, width, indent="")
    if not details and (any(row["failures"] for row in rows) or len(notes) > NOTES_SHOWN):
        command = _command(path)  # never wrapped: it is copied whole
        one = f"Every failing check: {command}"
        lines += [one] if len(one) <= width else ["Every failing check:", f"  {command}"]
    return "\n".join(lines)


def run(notebook: str, as_json: bool = False, limits: Limits = Limits(), details: bool = False) -> int:
    """``python -m autograder check [--json] [--details] NOTEBOOK``: print the table (or the JSON); the exit
    status."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    try:
        if as_json:  # keep stdout for the JSON alone, whatever the tests print
            with contextlib.redirect_stdout(sys.stderr):
                result = check(notebook, limits)
        else:
            result = check(notebook, limits)
    except SelfCheckError as exc:
        if as_json:
            print(json.dumps({"error": str(exc)}))
        else:
            print(f"check: {exc}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(result.to_json(summary=True), indent=1))
    else:
        print(format_table(result, notebook, details=details))
    return 0

