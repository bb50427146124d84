"""What a grading run leaves in OUT: gradebook, autograded notebooks, feedback, CSVs, report.

Feedback shows each check's description and message in words. It never holds a
hidden test's source (test cells are shown with their public part only) nor
anything the student's process printed; text from the student is escaped.
"""
from __future__ import annotations

import copy
import csv
import html
import json
import tempfile
from pathlib import Path

import nbformat

from .notebooks import ROOT, grade_id, role, split_hidden

NBGRADER_CONFIG = '''"""Open this grading run in the formgrader: `cd {out} && jupyter lab` (Nbgrader > Formgrader),
grade the free-response answers by hand, then `make export OUT={out}` to refresh the CSVs."""
c = get_config()  # noqa: F821
c.CourseDirectory.root = {out!r}
c.CourseDirectory.source_directory = {source!r}
c.CourseDirectory.db_url = "sqlite:///" + {db!r}
c.CourseDirectory.course_id = "dlcourse"
'''


def _checks_html(cell: dict) -> str:
    rows = []
    for check in cell["checks"]:
        mark = "✔" if check["passed"] else "✘"
        kind = "hidden" if check["hidden"] else "public"
        message = "" if check["passed"] else html.escape(check["message"] or "")
        rows.append(f"<tr><td>{mark}</td><td>{html.escape(check['description'])}</td><td>{kind}</td>"
                    f"<td>{message}</td></tr>")
    error = f"<p><b>{html.escape(cell['error'])}</b></p>" if cell.get("error") else ""
    return (f"<p><b>{html.escape(cell['grade_id'])}: {cell['score']:g} / {cell['points']:g}</b></p>{error}"
            f"<table><tr><th></th><th>check</th><th></th><th>why it failed</th></tr>{''.join(rows)}</table>")


def _checks_text(cell: dict) -> str:
    lines = [f"{cell['grade_id']}: {cell['score']:g} / {cell['points']:g}"]
    if cell.get("error"):
        lines.append(f"  {cell['error']}")
    for check in cell["checks"]:
        lines.append(f"  {'PASS' if check['passed'] else 'FAIL'} {check['description']}"
                     + ("" if check["passed"] else f": {check['message']}"))
    return "\n".join(lines)


def autograded_notebook(result: dict) -> nbformat.NotebookNode | None:
    """The graded notebook: the student's cells, test cells with their public part and the verdicts."""
    if not result.get("notebook_json"):
        return None
    nb = nbformat.reads(result["notebook_json"], as_version=4)
    verdicts = {c["grade_id"]: c for c in result["cells"]}
    for cell in nb.cells:
        if role(cell) == "tests":
            public, _ = split_hidden(cell.source)
            cell.source = public.rstrip() + "\n# (hidden checks of this cell ran in the grader)"
            verdict = verdicts.get(grade_id(cell))
            if verdict:
                cell.outputs = [nbformat.v4.new_output("display_data", data={
                    "text/html": _checks_html(verdict), "text/plain": _checks_text(verdict)})]
    return nb


def summary_markdown(result: dict, total: float, maximum: float) -> str:
    esc = html.escape
    lines = [f"# Feedback: {esc(result['assignment'])}",
             f"**Student:** {esc(result['student'])} &nbsp; **Score:** {total:g} / {maximum:g}", ""]
    if result["problems"]:
        lines += ["**Notes on this submission:**", ""] + [f"- {esc(p)}" for p in result["problems"]] + [""]
    if result.get("cell_errors"):
        lines += ["**Cells that raised an error when the grader ran your notebook:**", ""]
        lines += [f"- {esc(k)}: {esc(v)}" for k, v in result["cell_errors"].items()] + [""]
    lines += ["| exercise | score | checks passed |", "|---|---|---|"]
    for cell in result["cells"]:
        passed = sum(c["passed"] for c in cell["checks"])
        lines.append(f"| {esc(cell['grade_id'])} | {cell['score']:g} / {cell['points']:g} | "
                     f"{passed} / {len(cell['checks'])} |")
    for manual in result["manual"]:
        score = "to be graded by hand" if manual["score"] is None else f"{manual['score']:g}"
        lines.append(f"| {esc(manual['grade_id'])} (free response) | {score} / {manual['points']:g} | |")
    return "\n".join(lines)


def totals(result: dict) -> tuple[float, float]:
    """(score, max score) of a result; free responses not yet graded count 0."""
    score = sum(c["score"] for c in result["cells"]) + sum(m["score"] or 0.0 for m in result["manual"])
    maximum = sum(c["points"] for c in result["cells"]) + sum(m["points"] for m in result["manual"])
    return round(score, 4), maximum


_EXPORTER = []


def feedback_html(result: dict, total: float, maximum: float) -> str:
    if not _EXPORTER:  # building the exporter (templates, filters) costs more than using it
        from nbconvert import HTMLExporter
        _EXPORTER.append(HTMLExporter(sanitize_html=True, exclude_input_prompt=True, exclude_output_prompt=True))
    nb = autograded_notebook(result) or nbformat.v4.new_notebook()
    nb = copy.deepcopy(nb)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(summary_markdown(result, total, maximum)))
    body, _ = _EXPORTER[0].from_notebook_node(nb)
    return body


def _populate_gradebook(db: Path, assignments: list[str]) -> None:
    from .release import generate
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp) / "release", assignments, db_url=f"sqlite:///{db}")


def write_gradebook(out: Path, results: list[dict]) -> None:
    from nbgrader.api import Gradebook
    db = out / "gradebook.db"
    if db.exists():
        db.unlink()
    _populate_gradebook(db, sorted({r["assignment"] for r in results}))
    with Gradebook(f"sqlite:///{db}") as gb:
        for r in results:
            gb.update_or_create_student(r["student"])
            gb.update_or_create_submission(r["assignment"], r["student"])
            notebook = r["assignment"]  # the course has one notebook per assignment, named after it
            scores = {c["grade_id"]: c["score"] for c in r["cells"]}
            submitted = gb.find_submission_notebook(notebook, r["assignment"], r["student"])
            for grade in submitted.grades:
                manual = next((m for m in r["manual"] if m["grade_id"] == grade.name), None)
                if manual is not None:
                    grade.auto_score = manual["score"]
                    grade.needs_manual_grade = manual["score"] is None
                else:
                    grade.auto_score = float(scores.get(grade.name, 0.0))
                    grade.needs_manual_grade = False
            gb.db.commit()
    (out / "nbgrader_config.py").write_text(NBGRADER_CONFIG.format(
        out=str(out.resolve()), source=str(ROOT / "solutions"), db=str(db.resolve())))


def export_csv(out: Path) -> tuple[int, int]:
    """grades.csv and tests.csv from the gradebook (so manual grades made later are included)."""
    from nbgrader.api import Gradebook
    rows, test_rows = [], []
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        for assignment in sorted(gb.assignments, key=lambda a: a.name):
            for submission in sorted(assignment.submissions, key=lambda s: s.student.id):
                score = 0.0
                for notebook in submission.notebooks:
                    for grade in sorted(notebook.grades, key=lambda g: g.name):
                        pending = grade.needs_manual_grade and grade.manual_score is None
                        value = grade.manual_score if grade.manual_score is not None else grade.auto_score
                        score += value or 0.0
                        test_rows.append([submission.student.id, assignment.name, notebook.name + ".ipynb",
                                          grade.name, "" if pending or value is None else f"{value:g}",
                                          f"{grade.max_score:g}"])
                rows.append([submission.student.id, assignment.name, f"{score:g}", f"{submission.max_score:g}"])
    with open(out / "grades.csv", "w", newline="") as f:
        csv.writer(f).writerows([["student", "assignment", "score", "max_score"], *rows])
    with open(out / "tests.csv", "w", newline="") as f:
        csv.writer(f).writerows([["student", "assignment", "notebook", "grade_id", "score", "max_score"],
                                 *test_rows])
    return len(rows), len(test_rows)


def write_outputs(out: Path, results: list[dict], elapsed: float) -> None:
    from .report import write_report
    (out / "results").mkdir(exist_ok=True)
    for r in results:
        slim = {k: v for k, v in r.items() if k not in ("notebook_json", "feedback_html")}
        folder = out / "results" / r["student"]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{r['assignment']}.json").write_text(json.dumps(slim, indent=1))
        nb = autograded_notebook(r)
        if nb is not None:
            path = out / "autograded" / r["student"] / r["assignment"] / f"{r['assignment']}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, str(path))
    write_gradebook(out, results)
    export_csv(out)
    scores = {}
    with open(out / "grades.csv") as f:
        for row in csv.DictReader(f):
            scores[(row["student"], row["assignment"])] = (float(row["score"]), float(row["max_score"]))
    for r in results:
        path = out / "feedback" / r["student"] / r["assignment"] / f"{r['assignment']}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(r.get("feedback_html") or feedback_html(r, *totals(r)))
    write_report(out, results, scores, elapsed)
