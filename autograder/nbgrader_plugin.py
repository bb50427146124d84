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
- every markdown cell the student wrote (free-response answers, scratch notes) and every output is written
  through the course's whitelist sanitizer (``feedback.safe_notebook``): the formgrader renders the autograded
  notebook as it is (nbgrader's ``formgrade`` template, no sanitizer), and no script a student wrote runs there.

Each submission is read as ``make grade`` reads it (``SubmissionExporter``, nbgrader's ``exporter_class``
for autograde): opened folder by folder with O_NOFOLLOW (a notebook, assignment or student folder that is a
symbolic link is graded as the untouched release, never as its target), then rebuilt on the release
(``autograder.sanitize``), so that a notebook with an unknown or duplicated grade cell, invalid JSON, or JSON
that is not a notebook's shape (``sanitize.shape_problem``: a string for metadata, cells not a list...), costs
only itself: it is named in one warning and graded as what could be read, and ``nbgrader autograde``
goes on with the class and exits 0, as ``make grade`` does. nbgrader's ``OverwriteCells`` is not used: the
rebuild already restores every read-only cell, and its checksums (taken from the solutions, hidden tests
included) made it warn "checksum has changed" for every untouched test cell.

Before the first notebook, ``autograder.preflight`` checks that a working sandbox starts here; if not,
autograde stops with one line and exit status 1, and no student is touched.

Everything else is nbgrader's: gradebook, late penalties, formgrader, export. ``generate_feedback`` renders
the course's feedback page (``autograder.nbgrader_feedback``).

Switches (in ``nbgrader_config.py`` or on the command line):

    DLCOURSE_STOCK_AUTOGRADE=1 nbgrader autograde ...   # nbgrader's own in-kernel Execute (not trusted)
    nbgrader autograde ... --SandboxedExecute.unsafe_no_isolation=True   # no sandbox can be made here
    nbgrader autograde ... --SandboxedExecute.limits cell_seconds=25 --SandboxedExecute.limits ram_bytes=1e9
        # each sandbox's bounds (autograder/settings.py), as `make grade LIMITS=...`;
        # in nbgrader_config.py: c.SandboxedExecute.limits = {"cell_seconds": 25}
"""
from __future__ import annotations

import fnmatch
import os
import tempfile
from pathlib import Path

import nbformat
from nbconvert.exporters import NotebookExporter
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.converters.base import NbGraderException
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearOutput,
    DeduplicateIds,
    IgnorePattern,
    LimitOutput,
    NbGraderPreprocessor,
    OverwriteKernelspec,
    SaveAutoGrades,
)
from traitlets import Bool, Dict, List, TraitError, validate

from .course import chapters, grade_id, read, release_path, role, split_hidden
from .errors import EnvironmentProblem
from .feedback import safe_notebook, verdict_output
from .job import grade_submission, prepare_worker, read_submission
from .nbgrader_feedback import configure as use_the_course_feedback
from .preflight import check, sandbox_or_refusal
from .result import CellVerdict
from .sandbox import cgroups
from .sanitize import sanitize
from .settings import STOCK_AUTOGRADE, Limits, limits_help
from .task import Task

STOCK_SWITCH = STOCK_AUTOGRADE.variable
UNSAFE_SWITCH = "--SandboxedExecute.unsafe_no_isolation=True"
HIDDEN_NOTE = "# (hidden checks of this cell ran in the grader)"
METADATA = "dlcourse"  # the autograded notebook's metadata key: problems read, then the grader's result


def _hide_hidden(cell) -> None:
    if role(cell) == "tests" and HIDDEN_NOTE not in cell.source:
        public, ranges = split_hidden(cell.source)
        if ranges:
            cell.source = public.rstrip() + "\n" + HIDDEN_NOTE


class HideHiddenTests(NbGraderPreprocessor):
    """Test cells keep their public part only (the hidden checks are named in the verdict's table)."""

    # GenerateFeedback gives every preprocessor of its list this option (nbgrader's GetGrades has it)
    display_data_priority = List([]).tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        _hide_hidden(cell)
        return cell, resources


class SubmissionExporter(NotebookExporter):
    """nbgrader autograde's reader: each submitted notebook read as ``make grade`` reads it.

    Made once per ``nbgrader autograde`` run, before any submission is touched: it runs the pre-flight
    (``autograder.preflight``) for the assignment, and stops the run with one line if the sandbox
    cannot work here. Then, for each submission (nbgrader's sanitizing pass, reading ``submitted/``):
    ``job.read_submission`` (folder by folder, O_NOFOLLOW; a link, unreadable file or invalid JSON is
    refused) and ``sanitize.sanitize`` on the release; what was refused or restored travels in the
    notebook's metadata to ``SandboxedExecute``, which reports it with the grade."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        converter = self.parent
        coursedir = getattr(converter, "coursedir", None)
        if coursedir is None:
            return
        graded = [c for c in chapters() if fnmatch.fnmatchcase(c, coursedir.assignment_id or "*")]
        try:
            check(graded, bool(self.config.SandboxedExecute.get("unsafe_no_isolation", False)), UNSAFE_SWITCH)
        except EnvironmentProblem as exc:
            self.log.error("%s", exc)
            raise NbGraderException(str(exc)) from None

    def from_filename(self, filename, resources=None, **kw):
        converter = self.parent
        if not getattr(converter, "_sanitizing", False):  # the second pass reads nbgrader's own output
            return super().from_filename(filename, resources, **kw)
        path = os.path.abspath(filename)
        root = os.path.abspath(os.path.join(converter.coursedir.root, converter.coursedir.submitted_directory))
        parts = os.path.relpath(path, root).split(os.sep)
        submitted, problem = read_submission(path, *((root, parts) if ".." not in parts else ()))
        release = read(release_path(resources["nbgrader"]["assignment"]))
        nb, notes = sanitize(submitted if submitted is not None else release, release)
        nb.metadata[METADATA] = {"problems": ([problem] if problem else []) + notes}
        resources.setdefault("metadata", {})
        resources["metadata"].update(name=os.path.splitext(os.path.basename(path))[0], path=os.path.dirname(path))
        return self.from_notebook_node(nb, resources, **kw)


_WARM: list[bool] = []


class SandboxedExecute(NbGraderPreprocessor):
    """Grades the notebook with the hardened grader instead of executing it in a kernel."""

    unsafe_no_isolation = Bool(
        False, help="Grade even where no sandbox can be made (the students' code then runs unconfined)."
    ).tag(config=True)
    limits = Dict(
        {}, help="Each sandbox's bounds, by name, the others their defaults; as make grade's LIMITS.\n" + limits_help()
    ).tag(config=True)

    @validate("limits")
    def _known_limits(self, proposal):
        try:
            self._limits = Limits.from_mapping(proposal["value"])  # parsed once, here
        except (TypeError, ValueError) as exc:
            raise TraitError(f"SandboxedExecute.limits: {exc}") from None
        return proposal["value"]

    @property
    def parsed_limits(self) -> Limits:
        """The limits as the grader reads them (``limits`` as given, parsed once when it was set)."""
        return getattr(self, "_limits", None) or Limits()

    def preprocess(self, nb, resources):
        info = resources.get("nbgrader") or {}
        assignment, student = info.get("assignment"), info.get("student")
        notebook_id = info.get("notebook") or assignment
        reason = sandbox_or_refusal(self.unsafe_no_isolation, UNSAFE_SWITCH)  # nbgrader reports it, goes on
        if not _WARM:
            prepare_worker()
            _WARM.append(True)
            # as make grade says it: what this machine cannot bound (once per autograde, in nbgrader's log)
            limited = None if reason is not None else cgroups.limited()
            if limited is not None:
                self.log.warning("%s", limited)
        read_problems = (nb.metadata.pop(METADATA, None) or {}).get("problems") or []
        with tempfile.TemporaryDirectory(prefix="dlcourse-autograde-") as tmp:
            path = Path(tmp) / f"{notebook_id}.ipynb"
            nbformat.write(nb, str(path))
            result = grade_submission(Task(student, assignment, f"{notebook_id}.ipynb", str(path),
                                           problems=tuple(str(p) for p in read_problems),
                                           unsafe=reason is not None, limits=self.parsed_limits))
        self.log.info("%s/%s graded in the sandbox: %s, %.1f s", student, assignment, result.status,
                      result.seconds)
        for problem in result.problems:
            self.log.warning("%s/%s: %s", student, assignment, problem)
        # generate_feedback's summary (autograder.nbgrader_feedback) starts from the grader's own result
        nb.metadata[METADATA] = {"result": result.to_json()}

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
                    verdict_output(verdict),
                    # nbgrader reads a test cell's result as its partial credit
                    nbformat.v4.new_output("execute_result", data={"text/plain": repr(score)}, execution_count=None),
                ]
            elif gid in errors:
                cell.outputs = [nbformat.v4.new_output("display_data", data={
                    "text/plain": f"(when the grader ran this cell: {errors[gid]})"})]
        # what the student wrote, and every output, through the course's sanitizer: the formgrader shows it as is
        return safe_notebook(nb, assignment), resources


# nbgrader's defaults, without OverwriteCells (SubmissionExporter rebuilt the notebook on the release)
SANITIZE_PREPROCESSORS = [ClearOutput, DeduplicateIds, OverwriteKernelspec, CheckCellMetadata]
AUTOGRADE_PREPROCESSORS = [SandboxedExecute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
                           SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]


def configure(c) -> str:
    """Plug the hardened grader into nbgrader's config ``c``; returns which autograde is in use. Called by
    the configuration files (``nbgrader_config.py`` at the root and in each grading run's OUT), after
    ``nbgrader_settings.configure``."""
    use_the_course_feedback(c, HideHiddenTests)
    if STOCK_AUTOGRADE.on():
        return "stock"  # nbgrader's in-kernel Execute: the student's code can change its own verdicts
    c.Autograde.exporter_class = SubmissionExporter
    c.Autograde.sanitize_preprocessors = SANITIZE_PREPROCESSORS
    c.Autograde.autograde_preprocessors = AUTOGRADE_PREPROCESSORS
    return "sandboxed"
