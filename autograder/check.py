"""A full check of one notebook, for self-learners:
``make check NOTEBOOK=course/ch01_perceptron/ch01_perceptron.ipynb``.

    python -m autograder check [--json] [--limits "cell_seconds=120 ..."] NOTEBOOK

The notebook is graded exactly as in ``make grade`` (sandboxed, hidden tests
included) and a table per exercise is printed: score, and for every failing
check its description and message. Hidden checks show their description and
message only, never their code: the grader's result holds nothing else.
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
import sys
import textwrap
from pathlib import Path

from dlcourse import vocabulary

from .course import SOLUTIONS, chapters, source_path
from .errors import SelfCheckError
from .job import grade_submission
from .result import SubmissionResult
from .sandbox.isolation import probe
from .sandbox.limits import Limits
from .task import Task


def _grade_ids(nb: dict) -> set[str]:
    """The grade_ids of a notebook's nbgrader cells (the ``setup`` cell every chapter has left out)."""
    ids = set()
    for cell in nb.get("cells") or []:
        meta = cell.get("metadata", {}).get("nbgrader") if isinstance(cell, dict) else None
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
    result = grade_submission(Task("you", chapter, path.name, str(path.resolve()),  # your own link is fine
                                   unsafe=probe() is not None, limits=limits))
    result.notebook_json = None
    return result


def format_table(result: SubmissionResult, path: str = "", width: int = 100) -> str:
    """The self-check as text: one row per exercise (``dlcourse.vocabulary``, as the kernel's table words it),
    each failing check under it, the total and the notes."""
    wire = result.to_json(summary=True)
    rows, total = vocabulary.rows(wire), vocabulary.totals(wire)
    lines = [f"Self-check of {result.assignment}" + (f" ({path})" if path else ""),
             "This checks the notebook as saved on disk: save it first (Ctrl+S).", ""]
    name_width = max([len(row["exercise"]) for row in rows] + [8])
    rule = "-" * min(width, name_width + 30)
    lines += [f"{'exercise':<{name_width}}  {'score':>9}  checks passed", rule]
    for row in rows:
        lines += vocabulary.text_row(row, name_width, width)
    lines += [rule, f"{'total':<{name_width}}  {total['score']:>9}"]
    if total["manual"]:
        lines.append(f"({total['manual']})")
    if wire["notes"]:
        lines += ["", "Notes:"] + [textwrap.fill(f"- {n}", width, initial_indent="  ", subsequent_indent="      ")
                                   for n in wire["notes"]]
    return "\n".join(lines)


def run(notebook: str, as_json: bool = False, limits: Limits = Limits()) -> int:
    """``python -m autograder check [--json] NOTEBOOK``: print the table (or the JSON); the exit status."""
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
        print(format_table(result, notebook))
    return 0

