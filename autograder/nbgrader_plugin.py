"""The hardened grader inside plain nbgrader: ``nbgrader autograde`` and the formgrader's "autograde" button.

nbgrader's ``Autograde`` converter runs its ``autograde_preprocessors`` on each submitted notebook
(after its own sanitizing ones: read-only cells restored from the gradebook). Stock nbgrader's first
one, ``Execute``, runs the whole notebook, tests included, in a kernel the student's code controls.
``configure(c)`` (called by the shipped ``nbgrader_config.py``) replaces it by ``SandboxedExecute``:

- the notebook is graded by ``autograder.job.grade_submission``, exactly as ``make grade`` does: the
  student's code in the operating-system sandbox, every test cell (hidden checks included) decided
  in this trusted process, the same verdicts and the same scores;
- each test cell gets the verdict as its output: a table of its checks (described, hidden ones
  named, never their code) and its score as the cell's result, which nbgrader's own
  ``SaveAutoGrades`` records as partial credit (``nbgrader.utils.determine_grade``);
- the hidden part of every test cell is removed from the autograded notebook, so neither the
  formgrader's view nor ``generate_feedback``'s HTML can show it (``HideHiddenTests`` also runs in
  ``generate_feedback``).

Everything else is nbgrader's: gradebook, late penalties, formgrader, feedback, export.

Switches (in ``nbgrader_config.py`` or on the command line):

    DLCOURSE_STOCK_AUTOGRADE=1 nbgrader autograde ...   # nbgrader's own in-kernel Execute (not trusted)
    nbgrader autograde ... --SandboxedExecute.unsafe_no_isolation=True   # no sandbox can be made here
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import nbformat
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    IgnorePattern,
    LimitOutput,
    NbGraderPreprocessor,
    SaveAutoGrades,
)
from traitlets import Bool

from .course import grade_id, role, split_hidden

STOCK_SWITCH = "DLCOURSE_STOCK_AUTOGRADE"
HIDDEN_NOTE = "# (hidden checks of this cell ran in the grader)"


class SandboxError(RuntimeError):
    """This notebook could not be graded by the hardened grader (nbgrader reports it and goes on)."""


def _hide_hidden(cell) -> None:
    if role(cell) == "tests" and HIDDEN_NOTE not in cell.source:
        public, ranges = split_hidden(cell.source)
        if ranges:
            cell.source = public.rstrip() + "\n" + HIDDEN_NOTE


class HideHiddenTests(NbGraderPreprocessor):
    """Test cells keep their public part only (the hidden checks are named in the verdict's table)."""

    def preprocess_cell(self, cell, resources, index):
        _hide_hidden(cell)
        return cell, resources


_WARM: list[bool] = []


class SandboxedExecute(NbGraderPreprocessor):
    """Grades the notebook with the hardened grader instead of executing it in a kernel."""

    unsafe_no_isolation = Bool(
        False, help="Grade even where no sandbox can be made (the students' code then runs unconfined)."
    ).tag(config=True)

    def preprocess(self, nb, resources):
        from .classroom import _init_worker
        from .job import grade_submission
        from .outputs import _checks_html, _checks_text
        from .result import CellVerdict
        from .sandbox.isolation import probe
        from .sandbox.process import DEFAULT_LIMITS  # noqa: F401 - fail early when the grader is incomplete

        info = resources.get("nbgrader") or {}
        assignment, student = info.get("assignment"), info.get("student")
        notebook_id = info.get("notebook") or assignment
        reason = probe()
        if reason is not None and not self.unsafe_no_isolation:
            raise SandboxError(f"no sandbox for the students' code can be made here: {reason}; to grade without "
                               f"one anyway, pass --SandboxedExecute.unsafe_no_isolation=True")
        if not _WARM:
            _init_worker()
            _WARM.append(True)
        task = {"student": student, "assignment": assignment, "notebook": f"{notebook_id}.ipynb",
                "unsafe": reason is not None}
        limits = os.environ.get("AUTOGRADER_LIMITS")
        if limits:
            task["limits"] = json.loads(limits)
        with tempfile.TemporaryDirectory(prefix="dlcourse-autograde-") as tmp:
            path = Path(tmp) / f"{notebook_id}.ipynb"
            nbformat.write(nb, str(path))
            task["path"] = str(path)
            result = grade_submission(task)
        self.log.info("%s/%s graded in the sandbox: %s, %.1f s", student, assignment, result.status,
                      result.seconds)
        for problem in result.problems:
            self.log.warning("%s/%s: %s", student, assignment, problem)
        resources.setdefault("dlcourse", {})["result"] = result.to_json()

        verdicts = {c.grade_id: c for c in result.cells}
        errors = {name.rsplit("(", 1)[-1].rstrip(")"): error for name, error in result.cell_errors.items()}
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            cell.outputs, cell.execution_count = [], None
            gid = grade_id(cell)
            if role(cell) == "tests":
                _hide_hidden(cell)
                points = float(cell.metadata["nbgrader"].get("points", 0))
                verdict = verdicts.get(gid) or CellVerdict(gid, points, 0.0, error="not graded by the grader")
                score = min(max(float(verdict.score), 0.0), points)
                cell.outputs = [
                    nbformat.v4.new_output("display_data", data={"text/html": _checks_html(verdict),
                                                                 "text/plain": _checks_text(verdict)}),
                    # nbgrader reads a test cell's result as its partial credit
                    nbformat.v4.new_output("execute_result", data={"text/plain": repr(score)}, execution_count=None),
                ]
            elif gid in errors:
                cell.outputs = [nbformat.v4.new_output("display_data", data={
                    "text/plain": f"(when the grader ran this cell: {errors[gid]})"})]
        return nb, resources


AUTOGRADE_PREPROCESSORS = [SandboxedExecute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
                           SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]


def configure(c) -> str:
    """Plug the hardened grader into nbgrader's config ``c``; returns which autograde is in use."""
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import GetGrades
    c.GenerateFeedback.preprocessors = [GetGrades, CSSHTMLHeaderPreprocessor, HideHiddenTests]
    if os.environ.get(STOCK_SWITCH) == "1":
        return "stock"  # nbgrader's in-kernel Execute: the student's code can change its own verdicts
    c.Autograde.autograde_preprocessors = AUTOGRADE_PREPROCESSORS
    return "sandboxed"
