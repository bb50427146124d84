"""What a grading run leaves in OUT: gradebook, autograded notebooks, feedback, CSVs, report.

Feedback pages are ``feedback``'s: each check's description and message in words, never a hidden
test's source (test cells are shown with their public part only) nor anything the student's process
printed; text from the student is escaped. They are made here, in the instructor's process, once all
results are back: each chapter's prose and given cells are rendered once for the whole class.

Any input is data (``text``): lone surrogates are written as ``\\udXXX`` text, never raised on;
CSV cells that a spreadsheet would read as a formula are neutralised.
"""
from __future__ import annotations

import contextlib
import csv
import datetime
import json
import os
import sqlite3
import tempfile
import warnings
from pathlib import Path

import nbformat

from .course import ROOT, chapters
from .feedback import autograded_notebook, feedback_html
from .result import SubmissionResult
from .text import csv_cell, scrub

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


def _write_csv(path: Path, rows: list[list]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([[csv_cell(v) for v in row] for row in rows])


def _new_gradebook(db: Path) -> None:
    """An empty gradebook stamped with nbgrader's schema version, as nbgrader's ``Gradebook`` stamps a new one,
    without the ``alembic heads`` command it runs for that (another Python: 2.9 s, measured; and it fails where
    the environment's bin folder is not on PATH)."""
    import nbgrader
    from alembic.script import ScriptDirectory
    head = ScriptDirectory(os.path.join(os.path.dirname(nbgrader.__file__), "alembic")).get_current_head()
    with contextlib.closing(sqlite3.connect(db)) as connection, connection:
        connection.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
        connection.execute("INSERT INTO alembic_version (version_num) VALUES (?)", (head,))


# nbgrader's tables that generate_assignment fills (the course's chapters; no student, no grade), parents first
SKELETON_TABLES = ("course", "assignment", "notebook", "base_cell", "grade_cells", "solution_cells", "task_cells",
                   "source_cell")


def chapter_gradebook(assignment: str) -> bytes:
    """The empty gradebook of one chapter as nbgrader's ``generate_assignment`` makes it: kept by content
    (``course_cache``: the chapter's source, nbgrader's version and settings), made where not kept."""
    import nbgrader

    from . import course_cache
    from .course import source_path
    from .release import generate
    name = "gradebook-" + course_cache.digest(
        assignment, source_path(assignment).read_bytes(), nbgrader.__version__,
        *course_cache.sources(*(Path(__file__).parent / f for f in ("nbgrader_settings.py", "release.py",
                                                                     "outputs.py")))) + ".db"
    kept = course_cache.load(name)
    if kept is not None:
        return kept
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "gradebook.db"
        _new_gradebook(db)
        generate(Path(tmp) / "release", [assignment], db_url=f"sqlite:///{db}")
        data = db.read_bytes()
    course_cache.save(name, data)
    return data


def _prepare_chapter(assignment: str) -> None:
    from .feedback import release_pieces
    chapter_gradebook(assignment)
    release_pieces(assignment)


def prepare(assignments: list[str]) -> None:
    """Make and keep (``course_cache``) what grading derives from these chapters alone: each one's empty
    gradebook and its released cells as the feedback pages show them; a chapter per process, on every core."""
    on_every_core(_prepare_chapter, assignments)


def on_every_core(function, items: list, meanwhile=lambda: None) -> None:
    """``function`` of each item, in forked copies of this process, one per core, while this process does
    ``meanwhile``. Only while it runs one thread (a fork copies no other thread, nor a lock one of them
    holds); in this process, one item after another, otherwise."""
    import multiprocessing
    import threading
    processes = min(len(items), len(os.sched_getaffinity(0)))
    if processes < 2 or threading.active_count() > 1:
        for item in items:
            function(item)
        meanwhile()
        return
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        done = pool.map_async(function, items, chunksize=1)
        meanwhile()
        done.get()


def _populate_gradebook(db: Path, assignments: list[str]) -> None:
    """An empty gradebook of these chapters at ``db``: the first chapter's, the others' rows added to it (each
    chapter's own ids: nbgrader draws them at random)."""
    db.write_bytes(chapter_gradebook(assignments[0]))
    with tempfile.TemporaryDirectory() as tmp, contextlib.closing(sqlite3.connect(db, isolation_level=None)) as c:
        for assignment in assignments[1:]:
            part = Path(tmp) / f"{assignment}.db"
            part.write_bytes(chapter_gradebook(assignment))
            c.execute("ATTACH DATABASE ? AS part", (str(part),))
            c.execute("BEGIN")
            for table in SKELETON_TABLES:
                c.execute(f"INSERT {'OR IGNORE ' if table == 'course' else ''}INTO main.{table} "
                          f"SELECT * FROM part.{table}")
            c.execute("COMMIT")
            c.execute("DETACH DATABASE part")


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
        publish(out)
    return run


def publish(out: Path) -> tuple[int, int]:
    """The CSVs, every feedback page and the report, from what OUT holds: the gradebook (with the hand
    grades and comments of the formgrader), the results and the graded notebooks. ``make grade`` runs it
    last, ``make feedback`` and ``make export`` after grading by hand; a page made from the same result,
    hand grades and notebook is kept. Returns (submissions, graded cells) as in grades.csv/tests.csv."""
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
        pages = []
        for key, r in results.items():
            path = out / "feedback" / r.student / r.assignment / f"{r.assignment}.html"
            name, inputs = f"{r.student}/{r.assignment}", _page_inputs(r, notebooks.get(key))
            if made.get(name) == inputs and path.is_file():
                continue  # made from the same result, hand grades and notebook already
            pages.append((path, r, notebooks.get(key)))
            made[name] = inputs
        scores = {(s["student"], s["assignment"]): (float(s["score"]), float(s["max_score"])) for s in submissions}
        write_pages(pages, meanwhile=lambda: write_report(out, list(results.values()), scores,
                                                          float(run.get("elapsed") or 0.0), submissions=submissions,
                                                          run=run))
        (out / PAGES).write_text(json.dumps(made, indent=0, sort_keys=True), encoding="utf-8")
    return len(submissions), cells


def _write_page(path: Path, result: SubmissionResult, notebook: Path | None) -> None:
    graded = nbformat.read(str(notebook), as_version=4) if notebook is not None else None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(scrub(feedback_html(result, graded)), encoding="utf-8")


def _write_share(share: list) -> None:
    from .feedback import release_pieces
    for chapter in dict.fromkeys(result.assignment for _, result, _ in share):
        release_pieces(chapter)  # its prose, given cells and test code: kept from an earlier run, or rendered once
    for page in share:
        _write_page(*page)


def write_pages(pages: list[tuple[Path, SubmissionResult, Path | None]], meanwhile=lambda: None) -> None:
    """Each (page's path, result, graded notebook) written as its feedback page, on every core
    (``on_every_core``): a chapter's pages in one process (its prose and given cells are rendered once there,
    ``feedback.html_page``), the chapters shared out largest first. ``meanwhile``: what this process does while
    they are written (the report)."""
    chapters: dict[str, list] = {}
    for page in pages:
        chapters.setdefault(page[1].assignment, []).append(page)
    shares: list[list] = [[] for _ in range(max(min(len(chapters), len(os.sched_getaffinity(0))), 1))]
    for group in sorted(chapters.values(), key=len, reverse=True):
        min(shares, key=len).extend(group)
    on_every_core(_write_share, shares, meanwhile)
