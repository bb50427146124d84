"""What a grading run leaves in OUT: gradebook, autograded notebooks, feedback, CSVs, report.

Feedback shows each check's description and message in words. It never holds a
hidden test's source (test cells are shown with their public part only) nor
anything the student's process printed; text from the student is escaped.

Any input is data: names, notebook text and messages may hold any code point.
Lone surrogates (undecodable bytes of a file name, ``"\\ud800"`` in a notebook's JSON
or an exception message) are written as ``\\udXXX`` text, never raised on;
CSV cells that a spreadsheet would read as a formula are neutralised; the
feedback's markup goes through a whitelist sanitizer (``clean_html``).
"""
from __future__ import annotations

import contextlib
import copy
import csv
import datetime
import json
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

import nbformat
from markupsafe import Markup

from .course import ROOT, chapters, grade_id, role, split_hidden
from .result import CellVerdict, HandGrade, SubmissionResult
from .text import scrub, scrubbed, template, verbatim  # noqa: F401 - the page helpers, re-exported

NBGRADER_CONFIG = '''"""Open this grading run in the formgrader: `cd {out} && jupyter lab` (Nbgrader > Formgrader),
grade the free-response answers by hand, then `make feedback OUT={out}`: feedback pages, CSVs and report anew,
with the hand grades and comments."""
import sys
sys.path.insert(0, {root!r})  # the course's settings and grader, for autograding from this formgrader too
from autograder.nbgrader_plugin import configure as use_the_sandboxed_grader  # noqa: E402
from autograder.nbgrader_settings import configure  # noqa: E402
c = get_config()  # noqa: F821
configure(c, {out!r}, source={source!r}, db_url="sqlite:///" + {db!r})
use_the_sandboxed_grader(c)
'''


# ------------------------------------------------------------------ any input is data

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text: one that would start a formula gets a leading quote (OWASP)."""
    if isinstance(value, str):
        value = scrub(value)
        if value.startswith(FORMULA_STARTS):
            return "'" + value
    return value


def _write_csv(path: Path, rows: list[list]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([[csv_cell(v) for v in row] for row in rows])


# Markup allowed in feedback: what markdown and the grader's own tables produce, nothing that runs.
SAFE_TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "dd", "del", "details", "div", "dl", "dt", "em",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "kbd", "li", "ol", "p", "pre", "s", "samp", "span",
    "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul"})
_HEADING = ["id"]
SAFE_ATTRIBUTES = {
    "a": ["href", "title", "class"], "abbr": ["title"], "div": ["class"], "span": ["class"], "pre": ["class"],
    "code": ["class"], "td": ["style", "colspan", "rowspan"], "th": ["style", "colspan", "rowspan"],
    "ol": ["start"], **{f"h{i}": _HEADING for i in range(1, 7)}}
SAFE_PROTOCOLS = ("http", "https", "mailto")
_CLEANER = []


def clean_html(text) -> str:
    """Sanitize markup for the feedback: whitelisted tags, no attribute or URL that runs script, no style
    but text alignment. Other tags are dropped (their text stays, escaped), comments too."""
    if not _CLEANER:
        import bleach
        from bleach.css_sanitizer import CSSSanitizer
        _CLEANER.append(bleach.Cleaner(tags=SAFE_TAGS, attributes=SAFE_ATTRIBUTES, protocols=SAFE_PROTOCOLS,
                                       strip=True, strip_comments=True,
                                       css_sanitizer=CSSSanitizer(allowed_css_properties=["text-align"])))
    text = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
    return _CLEANER[0].clean(scrub(text))


# ------------------------------------------------------------------ templates (autograder/templates/)

def hand_grade_cell(hand: HandGrade, points: float | None = None) -> nbformat.NotebookNode:
    """The markdown cell put under a hand-graded cell of a feedback page (both doors): the grader's comment,
    and with ``points`` the hand score too."""
    return nbformat.v4.new_markdown_cell(_one_block(template("feedback_comment.html.j2").render(
        hand=hand, points=points)))


def _one_block(markup: str) -> str:
    """A template's output as one line: a raw HTML block of markdown ends at a blank line. Text from the
    submission holds no line break by then (``verbatim`` writes ``<br>``): every one left is the template's."""
    return markup.replace("\n", "")


def _checks_html(cell: CellVerdict) -> str:
    return _one_block(template("feedback_checks.html.j2").render(cell=cell))


def _checks_text(cell: CellVerdict) -> str:
    lines = [f"{cell.grade_id}: {cell.score:g} / {cell.points:g}"]
    if cell.error:
        lines.append(f"  {cell.error}")
    for check in cell.checks:
        lines.append(f"  {'PASS' if check.passed else 'FAIL'} {check.description}"
                     + ("" if check.passed else f": {check.message}"))
    return "\n".join(lines)


def autograded_notebook(result: SubmissionResult) -> nbformat.NotebookNode | None:
    """The graded notebook: the student's cells, test cells with their public part and the verdicts."""
    if not result.notebook_json:
        return None
    nb = nbformat.reads(result.notebook_json, as_version=4)
    verdicts = {c.grade_id: c for c in result.cells}
    for cell in nb.cells:
        if role(cell) == "tests":
            public, _ = split_hidden(cell.source)
            cell.source = public.rstrip() + "\n# (hidden checks of this cell ran in the grader)"
            verdict = verdicts.get(grade_id(cell))
            if verdict:
                cell.outputs = [nbformat.v4.new_output("display_data", data={
                    "text/html": _checks_html(verdict), "text/plain": _checks_text(verdict)})]
    return nb


def summary_markdown(result: SubmissionResult) -> str:
    """The summary at the top of the feedback: one raw HTML block (valid markdown, never read as markdown or
    math), every text from the submission escaped."""
    totals = result.totals()
    return _one_block(template("feedback_summary.html.j2").render(result=result, total=totals.score,
                                                                 maximum=totals.maximum))


_EXPORTER = []


def _exporter():
    """nbconvert's HTML exporter, its ``clean_html`` filter replaced by ours.

    With ``sanitize_html`` nbconvert escapes every tag outside a short list (so headings and
    paragraphs showed as literal ``<h1 ...>`` and ``<p>``); ours renders markdown, tables and
    code and still drops whatever could run (scripts, event handlers, ``javascript:`` links,
    styles, iframes, forms). Math stays TeX text, typeset by MathJax (its Safe extension on).
    """
    if not _EXPORTER:  # building the exporter (templates, filters) costs more than using it
        from nbconvert import HTMLExporter
        exporter = HTMLExporter(sanitize_html=True, exclude_input_prompt=True, exclude_output_prompt=True)
        exporter.register_filter("clean_html", clean_html)
        _EXPORTER.append(exporter)
        _EXPORTER.append(content_security_policy(exporter.from_notebook_node(nbformat.v4.new_notebook())[0]))
    return _EXPORTER[0]


def content_security_policy(template_page: str) -> str:
    """A second line behind the sanitizer: the page runs only the template's own scripts.

    Scripts load only from the origins the template names (MathJax, require.js); inline scripts
    run only if they hash to one of the template's own; so an event handler, ``javascript:`` link
    or ``<script>`` that got past ``clean_html`` would still not run. ``'unsafe-eval'`` is for
    MathJax 2, which evaluates its configuration block. No plugins, frames, forms or ``<base>``."""
    import base64
    import hashlib
    import re
    from urllib.parse import urlparse
    origins, hashes = set(), set()
    for attrs, body in re.findall(r"<script([^>]*)>(.*?)</script>", template_page, re.S):
        src = re.search(r'src="([^"]+)"', attrs)
        if src:
            url = urlparse(src.group(1))
            origins.add(f"{url.scheme}://{url.netloc}")
            continue
        kind = re.search(r'type="([^"]*)"', attrs)
        if kind is None or kind.group(1) in ("module", "text/javascript", "application/javascript"):
            digest = base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode()
            hashes.add(f"'sha256-{digest}'")
    return (f"script-src {' '.join(sorted(origins | hashes))} 'unsafe-eval'; object-src 'none'; "
            "frame-src 'none'; base-uri 'none'; form-action 'none'")


def html_page(nb: nbformat.NotebookNode) -> str:
    """A notebook as the feedback's page: nbconvert's HTML, markup through ``clean_html``, the CSP.
    (``nbgrader generate_feedback`` writes its pages with it: autograder/nbgrader_feedback.py.)"""
    body, _ = _exporter().from_notebook_node(nb)
    policy = Markup('<meta http-equiv="Content-Security-Policy" content="{}">').format(_EXPORTER[1])
    return scrub(body.replace("<head>", "<head>" + str(policy), 1))


def feedback_html(result: SubmissionResult, graded: nbformat.NotebookNode | None = None) -> str:
    """The feedback page of one submission: the summary, then the graded notebook (nbconvert's HTML), each
    comment from the formgrader under its cell. ``graded``: the graded notebook as OUT/autograded holds it
    (made from the result's own notebook when not given)."""
    result = result.scrubbed()
    nb = copy.deepcopy(graded) if graded is not None else autograded_notebook(result) or nbformat.v4.new_notebook()
    for index in reversed(range(len(nb.cells))):
        hand = result.hand.get(grade_id(nb.cells[index]) or "")
        if hand is not None and hand.comment:
            nb.cells.insert(index + 1, hand_grade_cell(hand))
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(summary_markdown(result)))
    return html_page(nb)


def _populate_gradebook(db: Path, assignments: list[str]) -> None:
    from .release import generate
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp) / "release", assignments, db_url=f"sqlite:///{db}")


def write_gradebook(out: Path, results: list[SubmissionResult], due: dict, db: Path | None = None) -> None:
    """A gradebook made anew from the verdicts, at ``db`` (default OUT/gradebook.db; hand grades are put back
    by ``regrade.restore``); ``due``: each chapter's due date (naive UTC, as nbgrader stores it)."""
    from nbgrader.api import Gradebook

    from .regrade import utc
    db = db or out / "gradebook.db"
    if db.exists():
        db.unlink()
    _populate_gradebook(db, sorted({r.assignment for r in results}))
    with Gradebook(f"sqlite:///{db}") as gb, warnings.catch_warnings():
        # nbgrader's add_submission flushes half-made rows (SQLAlchemy's SAWarning): noise, not ours to fix
        warnings.filterwarnings("ignore", message=".*not in session.*")
        for assignment in {r.assignment for r in results}:
            gb.update_or_create_assignment(assignment, duedate=due.get(assignment))
        for r in results:
            gb.update_or_create_student(r.student)
            gb.update_or_create_submission(r.assignment, r.student, timestamp=utc(r.submitted_at))
            notebook = r.assignment  # the course has one notebook per assignment, named after it
            scores = {c.grade_id: c.score for c in r.cells}
            submitted = gb.find_submission_notebook(notebook, r.assignment, r.student)
            for grade in submitted.grades:
                manual = next((m for m in r.manual if m.grade_id == grade.name), None)
                if manual is not None:
                    grade.auto_score = manual.score
                    grade.needs_manual_grade = manual.score is None
                else:
                    grade.auto_score = float(scores.get(grade.name, 0.0))
                    grade.needs_manual_grade = False
            gb.db.commit()
    (out / "nbgrader_config.py").write_text(NBGRADER_CONFIG.format(
        out=str(out.resolve()), source=str(ROOT / "solutions"), db=str((out / "gradebook.db").resolve()),
        root=str(ROOT)), encoding="utf-8")


GRADES_COLUMNS = ["student", "assignment", "score", "max_score", "pending_hand_grades", "pending_points",
                  "hand_grades_to_review", "submitted_at", "time_source", "due", "late", "hours_late"]
TESTS_COLUMNS = ["student", "assignment", "notebook", "grade_id", "score", "max_score", "auto_score", "hand_score",
                 "extra_credit", "comment", "answer_changed_since_hand_grade"]
COMMENTS_COLUMNS = ["student", "assignment", "cell", "comment", "answer_changed_since_hand_grade"]


def _g(value) -> str:
    return "" if value is None else f"{value:g}"


def _csv_rows(out: Path, results: dict, hand) -> tuple[list[list], list[list], list[list]]:
    """(grades, tests, comments rows) from the gradebook, header first, values as they are (not yet CSV
    cells). A free response still waiting for a hand grade has an empty score and counts in ``pending_*``."""
    from nbgrader.api import Gradebook

    from .regrade import utc_text
    rows, test_rows, comment_rows = [], [], []
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        for assignment in sorted(gb.assignments, key=lambda a: a.name):
            for submission in sorted(assignment.submissions, key=lambda s: s.student.id):
                student, name = submission.student.id, assignment.name
                score, pending, pending_points = 0.0, 0, 0.0
                own = hand.of(student, name)
                for notebook in submission.notebooks:
                    comments = {c.name: c.manual_comment for c in notebook.comments if c.manual_comment}
                    for grade in sorted(notebook.grades, key=lambda g: g.name):
                        waiting = grade.needs_manual_grade and grade.manual_score is None
                        value = None if waiting else float(grade.score)
                        score += value or 0.0
                        pending += waiting
                        pending_points += grade.max_score if waiting else 0.0
                        changed = grade.name in own and own[grade.name].answer_changed
                        test_rows.append([student, name, notebook.name + ".ipynb", grade.name, _g(value),
                                          _g(grade.max_score), _g(grade.auto_score), _g(grade.manual_score),
                                          _g(grade.extra_credit), comments.get(grade.name, ""),
                                          "yes" if changed else ""])
                    comment_rows += [[student, name, cell, text,
                                      "yes" if cell in own and own[cell].answer_changed else ""]
                                     for cell, text in sorted(comments.items())]
                late = None
                if submission.timestamp is not None and assignment.duedate is not None:
                    late = submission.total_seconds_late
                result = results.get((student, name))
                rows.append([student, name, f"{score:g}", f"{submission.max_score:g}", pending, _g(pending_points),
                             sum(g.answer_changed for g in own.values()), utc_text(submission.timestamp),
                             (result.submitted_from or "") if result and submission.timestamp else "",
                             utc_text(assignment.duedate), "" if late is None else "yes" if late > 0 else "no",
                             "" if late is None else f"{late / 3600:.2f}"])
    return [GRADES_COLUMNS, *rows], [TESTS_COLUMNS, *test_rows], [COMMENTS_COLUMNS, *comment_rows]


def export_csv(out: Path, results: dict, hand) -> tuple[list[dict], int]:
    """grades.csv, tests.csv and comments.csv from the gradebook (so manual grades made later are included);
    returns grades.csv's rows as dicts, and how many graded cells tests.csv has.

    A cell that starts with ``= + - @``, a tab or a carriage return (a student id such as
    ``=HYPERLINK(...)``) is written with a leading ``'`` so that a spreadsheet shows it as text."""
    rows, test_rows, comment_rows = _csv_rows(out, results, hand)
    _write_csv(out / "grades.csv", rows)
    _write_csv(out / "tests.csv", test_rows)
    _write_csv(out / "comments.csv", comment_rows)
    return [dict(zip(rows[0], row)) for row in rows[1:]], len(test_rows) - 1


# ------------------------------------------------------------------ OUT, written privately

RUN = "run.json"  # what the last grading run found that the report shows again: time, notebooks not graded...
PREVIOUS = "gradebook.previous.db"  # the gradebook as the run before this one (and the instructor) left it
PAGES = "feedback.json"  # what each feedback page was made from (a hash): `make feedback` remakes only what changed


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _page_inputs(result: SubmissionResult, notebook: Path | None) -> str:
    """A hash of everything a feedback page is made from: the result, its hand grades, the graded notebook."""
    import hashlib
    from dataclasses import asdict
    data = json.dumps([result.to_json(), {k: asdict(h) for k, h in sorted(result.hand.items())}], sort_keys=True)
    digest = hashlib.sha256(data.encode("utf-8", "surrogatepass"))
    digest.update(notebook.read_bytes() if notebook is not None else b"")
    return digest.hexdigest()


@contextlib.contextmanager
def private_files():
    """Files and folders made meanwhile are readable by their owner only (0600 / 0700)."""
    old = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(old)


def write_outputs(out: Path, results: list[SubmissionResult], elapsed: float, *, reset_hand_grades: bool = False,
                  due: datetime.datetime | None = None, not_graded: list[str] = ()) -> dict:
    """Everything a grading run leaves in OUT. Into an OUT graded before, the instructor's hand grades,
    comments, flags and due dates are kept (``regrade``), unless ``reset_hand_grades``; ``due`` (naive UTC)
    sets this run's chapters' due date. Returns what changed since the last run: {student: [lines]}."""
    from . import regrade
    with private_files():
        results = [r.scrubbed() for r in results]  # any code point in, UTF-8 out
        before = regrade.Before.read(out)
        kept = before.kept(results, set(chapters()))
        (out / "results").mkdir(exist_ok=True)
        for r in results:
            folder = out / "results" / r.student
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{r.assignment}.json").write_text(json.dumps(r.to_json(), indent=1), encoding="utf-8")
            nb = autograded_notebook(r)
            if nb is not None:
                path = out / "autograded" / r.student / r.assignment / f"{r.assignment}.ipynb"
                path.parent.mkdir(parents=True, exist_ok=True)
                nbformat.write(nb, str(path))
        dates = dict(before.gradebook.due)
        if due is not None:
            dates.update({r.assignment: due for r in results})
        # made aside and moved in once complete: the instructor's gradebook is never half-made nor lost
        db, new = out / "gradebook.db", out / "gradebook.new.db"
        write_gradebook(out, results + kept, dates, new)
        regrade.restore_roster(new, before)
        lost, ours = [], set()
        if not reset_hand_grades:
            ours = regrade.answer_changed(before, out)
            lost = regrade.restore(new, before, ours)
        if db.exists():
            os.replace(db, out / PREVIOUS)
        os.replace(new, db)
        if reset_hand_grades:
            (out / regrade.RECORD).unlink(missing_ok=True)
        else:
            before.hand.write_record(out, ours)
        changes = regrade.changes(before, regrade.Gradebook.read(out / "gradebook.db"), results, out,
                                  reset_hand_grades)
        run = {"elapsed": elapsed, "not_graded": list(not_graded), "changes": changes, "lost": lost,
               "kept": [f"{r.student}/{r.assignment}" for r in kept],
               "hand_grades_kept": 0 if reset_hand_grades else len(before.hand.grades) - len(lost),
               "answer_changed": sorted(f"{s}/{a}" for s, a in ours)}
        (out / RUN).write_text(json.dumps(run, indent=1), encoding="utf-8")
        publish(out, {(r.student, r.assignment): r for r in results})
    return run


def publish(out: Path, fresh: dict | None = None) -> tuple[int, int]:
    """The CSVs, every feedback page and the report, from what OUT holds: the gradebook (with the hand
    grades and comments of the formgrader), the results and the graded notebooks. ``make feedback`` and
    ``make export`` run it after grading by hand; ``fresh``: pages this run made already (used where no
    hand grade or comment changes them). Returns (submissions, graded cells) as in grades.csv/tests.csv."""
    from . import regrade
    from .report import write_report
    with private_files():
        run = _read_json(out / RUN)
        hand = regrade.HandGrades.read(out)
        results = regrade.saved_results(out)
        for (student, assignment), r in results.items():
            r.hand = hand.of(student, assignment)
        submissions, cells = export_csv(out, results, hand)
        notebooks = regrade.graded_notebooks(out)
        made = _read_json(out / PAGES)
        for key, r in results.items():
            path = out / "feedback" / r.student / r.assignment / f"{r.assignment}.html"
            name, inputs = f"{r.student}/{r.assignment}", _page_inputs(r, notebooks.get(key))
            page = (fresh or {}).get(key)
            if page is not None and page.feedback_html and not r.hand:
                page = page.feedback_html
            elif made.get(name) == inputs and path.is_file():
                continue  # made from the same result, hand grades and notebook already
            else:
                graded = nbformat.read(str(notebooks[key]), as_version=4) if key in notebooks else None
                page = feedback_html(r, graded)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(scrub(page), encoding="utf-8")
            made[name] = inputs
        (out / PAGES).write_text(json.dumps(made, indent=0, sort_keys=True), encoding="utf-8")
        write_report(out, list(results.values()), {(s["student"], s["assignment"]): (float(s["score"]),
                     float(s["max_score"])) for s in submissions}, float(run.get("elapsed") or 0.0),
                     submissions=submissions, run=run)
    return len(submissions), cells
