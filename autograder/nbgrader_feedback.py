"""``nbgrader generate_feedback`` writes the course's feedback page, not nbgrader's.

The page is the one ``make grade`` writes (``autograder.feedback``): the course's summary template at the
top, student markdown through the course's whitelist sanitizer (``text.clean_html``), the grader's
tables of checks, and the same Content-Security-Policy (only the template's own scripts run): a
``<script>`` or ``<iframe srcdoc=...>`` in a student's answer is never live. Scores are the gradebook's
(hand grades included, with the grader's comments next to the answers they grade).

``configure(c, hide_hidden_tests)`` (called from ``autograder.nbgrader_plugin.configure``) sets
``GenerateFeedback``'s preprocessors and exporter.
"""
from __future__ import annotations

import nbformat
from nbconvert.exporters import Exporter
from nbgrader.preprocessors import GetGrades, NbGraderPreprocessor
from nbgrader.utils import is_grade, is_solution
from traitlets import default

from .feedback import hand_grade_cell, html_page, summary_markdown
from .result import HandGrade, SubmissionResult

METADATA = "dlcourse"  # set by nbgrader_plugin.SandboxedExecute: the grader's result for this notebook


class GetGradesPending(GetGrades):
    """``GetGrades``, but a written answer still to be graded by hand has no score (nbgrader's is 0 until a
    person grades it): the page says "to be graded by hand", as ``make grade``'s does, not ``0 / 2``."""

    def _get_score(self, cell, resources):
        super()._get_score(cell, resources)
        if cell.cell_type == "markdown" and is_solution(cell) and self.gradebook.find_grade(
                cell.metadata.nbgrader["grade_id"], self.notebook_id, self.assignment_id,
                self.student_id).needs_manual_grade:
            cell.metadata.nbgrader["score"] = None


class CourseSummary(NbGraderPreprocessor):
    """After ``GetGrades``: the course's summary on top (the grader's verdicts, the gradebook's scores),
    and each hand-graded answer followed by its score and the grader's comment, escaped."""

    def preprocess(self, nb, resources):
        stored = (nb.metadata.pop(METADATA, None) or {}).get("result")
        info = resources.get("nbgrader") or {}
        result = SubmissionResult.from_json(stored) if isinstance(stored, dict) else SubmissionResult(
            str(info.get("student", "")), str(info.get("assignment", "")), str(info.get("notebook", "")))
        graded = {cell.metadata.nbgrader["grade_id"]: cell.metadata.nbgrader for cell in nb.cells
                  if is_grade(cell) and "grade_id" in cell.metadata.get("nbgrader", {})}
        for manual in result.manual:  # the gradebook has the hand grade (GetGrades put it on the cell)
            if manual.grade_id in graded and graded[manual.grade_id].get("score") is not None:
                manual.score = float(graded[manual.grade_id]["score"])
        cells = []
        for cell in nb.cells:
            cells.append(cell)
            meta = cell.metadata.get("nbgrader", {})
            if is_solution(cell) and is_grade(cell) and cell.cell_type == "markdown":
                cells.append(_marginal(meta))
        nb.cells = [nbformat.v4.new_markdown_cell(summary_markdown(result.scrubbed())), *cells]
        return nb, resources


def _marginal(meta):
    score = None if meta.get("score") is None else float(meta["score"])
    return hand_grade_cell(HandGrade(score=score, comment=meta.get("comment")), float(meta.get("points", 0)))


class CourseFeedbackExporter(Exporter):
    """The course's HTML page (``feedback.html_page``) after nbgrader's feedback preprocessors: each chapter's
    prose and given cells rendered once for all the students of one ``generate_feedback``."""

    output_mimetype = "text/html"

    @default("file_extension")
    def _file_extension_default(self):
        return ".html"

    def from_notebook_node(self, nb, resources=None, **kw):
        nb_copy, resources = super().from_notebook_node(nb, resources, **kw)  # runs the preprocessors
        return html_page(nb_copy), resources


def configure(c, hide_hidden_tests) -> None:
    c.GenerateFeedback.preprocessors = [GetGradesPending, hide_hidden_tests, CourseSummary]
    c.GenerateFeedback.exporter_class = CourseFeedbackExporter
