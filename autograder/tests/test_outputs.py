"""Fast tests of what the grader writes, on hostile inputs (issue 11: findings 5, 7, 9, 10).

The same inputs go through the real `make grade` in test_grading.py; here each piece is
checked on its own in seconds: lone surrogates never crash an output, CSV cells cannot
start a formula, a log record is one line, symbolic links are refused (listing and
opening), and the feedback renders markdown while nothing a student wrote can run.
"""
from __future__ import annotations

import csv
import logging
import os
import re

import nbformat
import pytest

from autograder.classroom import OneLineFormatter, discover
from autograder.course import chapters, grade_id, read, release_path, role
from autograder.feedback import feedback_html, feedback_notebook, html_page, whole_page
from autograder.job import read_submission
from autograder.outputs import write_outputs
from autograder.result import CellVerdict, Check, ManualAnswer, SubmissionResult
from autograder.sanitize import sanitize
from autograder.submissions import Link, Renamed, reference, untouched, write_class
from autograder.task import Task
from autograder.tests import cases
from autograder.text import FORMULA_STARTS, clean_html, csv_cell, folder_id, log_text, scrub, scrubbed

CHAPTER = chapters()[0]
RUNS_SCRIPT = re.compile(r"<[a-z][^>]*\son[a-z]+\s*=|<script(?![^>]*\bsrc=\"https://cdnjs)(?![^>]*type=\"(module|"
                         r"text/x-mathjax-config)\")|<iframe|<svg|<object|<embed|<form|href=\"?javascript:", re.I)


def fake_result(notebook, student="alice", message="expected 3, got 2") -> SubmissionResult:
    """A grading result as grade_submission returns it, without running the sandbox."""
    nb, notes = sanitize(notebook, read(release_path(CHAPTER)))
    cells = [CellVerdict(grade_id(c), 2.0, 1.0, [Check("the shape is right", True, None, False),
                                                  Check("values on a hidden input", False, message, True)])
             for c in nb.cells if role(c) == "tests"]
    manual = [ManualAnswer(grade_id(c), 1.0, None, c.source) for c in nb.cells if role(c) == "answer"]
    return SubmissionResult(student, CHAPTER, f"{CHAPTER}.ipynb", "graded",
                            notes + ["a note with <b>markup</b> and \ud800"],
                            {"cell 3 (scratch)": f"ValueError: {message}"}, 0, None, cells, manual,
                            nbformat.writes(nb))


# ------------------------------------------------------------------ finding 5: any code point is data

def test_scrub_writes_lone_surrogates_as_text():
    assert scrub("plain é 😀") == "plain é 😀"
    assert scrub("a\ud800b\udcff") == "a\\ud800b\\udcff"
    value = scrubbed({"k\udfff": ["x\ud83d", ("y", 1)], "n": None})
    assert value == {"k\\udfff": ["x\\ud83d", ("y", 1)], "n": None}
    import json
    json.dumps(value, ensure_ascii=False).encode("utf-8")


def test_feedback_with_lone_surrogates_does_not_raise():
    nb = reference(CHAPTER)
    nb.cells.append(nbformat.v4.new_markdown_cell("notes \ud800 here"))
    page = feedback_html(fake_result(nb, student="bob\udcff", message="bad \udfff value"))
    page.encode("utf-8")
    assert "bob\\udcff" in page and "bad \\udfff value" in page and "notes \\ud800 here" in page


def test_read_submission_scrubs_surrogates_spelled_in_json(tmp_path):
    path = tmp_path / "nb.ipynb"
    path.write_text(cases.surrogate_notebook(CHAPTER))
    nb, problem = read_submission(str(path))
    assert problem is None
    text = nbformat.writes(nb)
    text.encode("utf-8")
    assert "\\ud800" in text


def test_write_outputs_survives_every_hostile_name_and_message(tmp_path):
    names = ["plain", "bob\\xff", "=1+1", "-1+1", "@SUM(1;1)", "+1", "\tTAB", "eve\\r\\nforged"]
    results = [fake_result(untouched(CHAPTER), student=name, message="boom \ud800 <script>x</script>")
               for name in names]
    results.append(fake_result(untouched(CHAPTER), student="raw\udcff"))  # not escaped by discover: still fine
    write_outputs(tmp_path, results, 1.0)
    for name in ("grades.csv", "tests.csv", "report.html", "gradebook.db"):
        assert (tmp_path / name).is_file(), name
    with open(tmp_path / "grades.csv", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert len(rows) == len(results) + 1
    for row in rows:
        assert not any(cell.startswith(FORMULA_STARTS) for cell in row), row
    students = {row[0] for row in rows[1:]}
    assert {"'=1+1", "'-1+1", "'@SUM(1;1)", "'+1", "'\tTAB", "plain", "raw\\udcff"} <= students
    with open(tmp_path / "tests.csv", encoding="utf-8") as f:
        assert not any(cell.startswith(FORMULA_STARTS) for row in csv.reader(f) for cell in row)
    assert (tmp_path / "feedback" / "raw\\udcff" / CHAPTER / f"{CHAPTER}.html").is_file()
    page = (tmp_path / "feedback" / "eve\\r\\nforged" / CHAPTER / f"{CHAPTER}.html").read_text(encoding="utf-8")
    assert "eve\\r\\nforged" in page and "boom \\ud800 &lt;script&gt;" in page and not RUNS_SCRIPT.search(page)
    assert "boom \\ud800" in (tmp_path / "report.html").read_text(encoding="utf-8")


# ------------------------------------------------------------------ finding 9: CSV and log

@pytest.mark.parametrize("value", ["=1+1", "+1", "-1", "@SUM(A1)", "\t=1", "\r=1"])
def test_csv_cells_that_start_a_formula_are_quoted(value):
    assert csv_cell(value) == "'" + value


@pytest.mark.parametrize("value", ["alice", "1.5", "a=b", "", "'=x"])
def test_other_csv_cells_are_unchanged(value):
    assert csv_cell(value) == value
    assert csv_cell(2.5) == 2.5


def test_a_log_record_is_one_line_whatever_it_holds():
    assert log_text("eve\r\n2026-01-01 INFO forged\x1b[2J\u2028\u202e\ud800") == \
        "eve\\r\\n2026-01-01 INFO forged\\x1b[2J\\u2028\\u202e\\ud800"
    assert log_text("é 😀 plain") == "é 😀 plain"
    record = logging.LogRecord("autograder", logging.INFO, __file__, 1, "%s: %s", ("a\nb", "c\rd"), None)
    line = OneLineFormatter("%(levelname)s %(message)s").format(record)
    assert line == "INFO a\\nb: c\\rd"


def test_folder_ids_are_one_line_text():
    assert folder_id("bob\udcff") == "bob\\xff"
    assert folder_id("eve\n2026 INFO x") == "eve\\n2026 INFO x"
    assert folder_id("Zoë") == "Zoë"


# ------------------------------------------------------------------ finding 7: symbolic links

def test_discover_refuses_symbolic_links(tmp_path):
    a = CHAPTER
    folder = write_class(tmp_path / "class", {
        ("reference", a): reference(a),
        ("link-notebook", a): Link(f"../../reference/{a}/{a}.ipynb"),
        ("link-assignment", a): Link(f"../reference/{a}", at="assignment"),
        ("link-student", a): Link("reference", at="student"),
        ("renamed-link", a): Renamed("x.ipynb", "{}"),
        ("odd\udcff\nname", a): reference(a),
    })
    os.remove(folder / "renamed-link" / a / "x.ipynb")
    os.symlink(f"../../reference/{a}/{a}.ipynb", folder / "renamed-link" / a / "x.ipynb")
    tasks, warnings, not_graded = discover(folder)
    by = {t.student: t for t in tasks}
    assert "link-student" not in by and any("link-student" in w and "symbolic link" in w for w in warnings)
    for student in ("link-notebook", "link-assignment", "renamed-link"):
        assert by[student].path is None, student
        assert "symbolic link" in " ".join(by[student].problems), student
    assert by["reference"].path and by["reference"].parts == ("reference", a, f"{a}.ipynb")
    assert by["odd\\xff\\nname"].parts[0] == "odd\udcff\nname"


def test_opening_never_follows_a_link_swapped_in_after_listing(tmp_path):
    a = CHAPTER
    folder = write_class(tmp_path / "class", {("reference", a): reference(a), ("eve", a): untouched(a)})
    tasks, _, _ = discover(folder)
    eve = next(t for t in tasks if t.student == "eve")
    nb, problem = read_submission(eve.path, eve.root, eve.parts)
    assert problem is None and nb is not None
    # the notebook swapped for a link to a classmate's
    target = folder / "eve" / a / f"{a}.ipynb"
    target.unlink()
    target.symlink_to(folder / "reference" / a / f"{a}.ipynb")
    nb, problem = read_submission(eve.path, eve.root, eve.parts)
    assert nb is None and "symbolic link" in problem
    # the assignment folder swapped for a link
    target.unlink()
    (folder / "eve" / a).rmdir()
    (folder / "eve" / a).symlink_to(folder / "reference" / a)
    nb, problem = read_submission(eve.path, eve.root, eve.parts)
    assert nb is None and "symbolic link" in problem
    # without the class folder (python -m autograder.job): the last component is still not followed
    nb, problem = read_submission(str(folder / "eve" / a / f"{a}.ipynb"))
    assert nb is not None  # a link above the file is the caller's choice there
    link = tmp_path / "link.ipynb"
    link.symlink_to(folder / "reference" / a / f"{a}.ipynb")
    nb, problem = read_submission(str(link))
    assert nb is None and "symbolic link" in problem


def test_a_fifo_is_not_read(tmp_path):
    fifo = tmp_path / "nb.ipynb"
    os.mkfifo(fifo)
    nb, problem = read_submission(str(fifo))
    assert nb is None and "not a regular file" in problem


# ------------------------------------------------------------------ finding 10: feedback a student can read

def test_clean_html_keeps_structure_and_drops_what_runs():
    kept = clean_html('<h1 id="t">T</h1><p>x <b>y</b> <code>z</code></p><table><thead><tr><th style="text-align: '
                      'right">h</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table><pre>p</pre>'
                      '<a href="https://example.org">l</a>')
    for tag in ('<h1 id="t">', "<p>", "<b>", "<code>", "<table>", "<thead>", "<th", "text-align: right", "<td>",
                "<pre>", 'href="https://example.org"'):
        assert tag in kept, tag
    dropped = clean_html(cases.XSS_MARKDOWN + cases.XSS_MESSAGE + '<p style="position:fixed" onclick="x()">q</p>'
                         '<a href="data:text/html,x">d</a><object data="x"></object><math><mi>x</mi></math>')
    assert not RUNS_SCRIPT.search(dropped), dropped
    assert "position" not in dropped and "data:" not in dropped and "<style" not in dropped


def test_feedback_renders_markdown_and_runs_nothing_a_student_wrote():
    page = feedback_html(fake_result(cases.xss_notebook(CHAPTER), message=cases.XSS_MESSAGE))
    assert "&lt;h1" not in page and "&lt;p&gt;" not in page and "&lt;/p&gt;" not in page
    assert page.count("<h1") >= 2 and "<p>" in page and "<th>" in page and '<div class="highlight' in page
    assert "$x^2$" in page  # math stays TeX, typeset by MathJax
    assert not RUNS_SCRIPT.search(page), RUNS_SCRIPT.search(page)
    assert "&lt;img src=x onerror=" in page  # the message is shown, as text
    assert page.count("<head><meta http-equiv=\"Content-Security-Policy\" content=\"script-src ") == 1  # in <head>
    template_scripts = len(re.findall(r"<script", feedback_html(fake_result(untouched(CHAPTER)))))
    assert len(re.findall(r"<script", page)) == template_scripts


def test_a_page_assembled_from_cells_rendered_before_is_the_whole_page():
    """Issue 28, render what differs: each cell (a code cell's code and outputs apart) is rendered once per
    process and a page is put together from the pieces; it is the page nbconvert renders in one piece, byte
    for byte (two students, hostile markup, surrogates, a comment from the formgrader), and a classmate's
    page renders only what differs."""
    from autograder import feedback
    from autograder.result import HandGrade
    hostile = fake_result(cases.xss_notebook(CHAPTER), student="eve\udcff", message=cases.XSS_MESSAGE)
    hostile.hand = {hostile.manual[0].grade_id: HandGrade(1.0, None, "see <b>me</b>\nafter class")}
    results = [fake_result(reference(CHAPTER), student="ann"), hostile,
               fake_result(reference(CHAPTER), student="cy", message="expected 4, got 5")]
    for result in results:
        nb = feedback_notebook(result)
        before = dict(feedback.RENDERED)
        page = html_page(nb)
        assert page == whole_page(nb), result.student
        rendered = feedback.RENDERED["rendered"] - before.get("rendered", 0)
    # the last page shares all but the summary and the verdicts with the first: only those were rendered
    assert rendered == 1 + len(result.cells), rendered
    assert "see &lt;b&gt;me&lt;/b&gt;<br/>after class" in html_page(feedback_notebook(hostile))  # quoted, as text



def test_a_page_from_a_chapter_kept_by_content_is_the_whole_page(tmp_path, monkeypatch):
    """Issue 28: a chapter's released cells, rendered once and kept by content (``course_cache``), make the same
    page as rendering it whole; a later process renders only the student's summary and verdicts; a changed
    release is a miss, never a stale page."""
    from autograder import course_cache, feedback
    monkeypatch.setattr(course_cache, "FOLDER", tmp_path / "cache")
    monkeypatch.setattr(feedback, "_PIECES", feedback._PIECES.__class__())
    monkeypatch.setattr(feedback, "_FRAMES", {})
    kept = feedback.release_pieces(CHAPTER)
    assert kept > 10 and len(list((tmp_path / "cache").glob("pieces-*.json"))) == 1
    assert oct((tmp_path / "cache").stat().st_mode & 0o777) == "0o700"
    feedback._PIECES.clear()
    feedback._FRAMES.clear()  # a new process: only what was kept
    assert feedback.release_pieces(CHAPTER) == kept
    result = fake_result(untouched(CHAPTER), student="ann")  # nothing written: all but the verdicts is the release
    nb = feedback_notebook(result)
    before = dict(feedback.RENDERED)
    assert html_page(nb) == whole_page(nb)
    assert feedback.RENDERED["rendered"] - before.get("rendered", 0) == 1 + len(result.cells)  # summary, verdicts
    changed = read(release_path(CHAPTER))
    changed.cells[0].source += "\n\nOne more sentence."
    monkeypatch.setattr(feedback, "read", lambda path: changed)
    feedback.release_pieces(CHAPTER)
    assert len(list((tmp_path / "cache").glob("pieces-*.json"))) == 2


def test_a_gradebook_made_from_chapters_kept_apart_is_nbgraders_own(tmp_path, monkeypatch):
    """Issue 28: each chapter's empty gradebook is made once (nbgrader's generate_assignment) and kept by
    content; a class's gradebook joins them, and holds the rows nbgrader's own generation of those chapters
    makes (ids apart: nbgrader draws them at random)."""
    import sqlite3

    from autograder import course_cache, outputs
    from autograder.release import generate
    monkeypatch.setattr(course_cache, "FOLDER", tmp_path / "cache")
    some = chapters()[:3]
    outputs._populate_gradebook(tmp_path / "joined.db", some)
    assert len(list((tmp_path / "cache").glob("gradebook-*.db"))) == 3
    outputs._new_gradebook(tmp_path / "nbgrader.db")
    generate(tmp_path / "release", some, db_url=f"sqlite:///{tmp_path / 'nbgrader.db'}")

    def rows(db):
        c = sqlite3.connect(db)
        assignments = dict(c.execute("SELECT id, name FROM assignment"))
        notebooks = {i: (assignments[a], n) for i, n, a in c.execute("SELECT id, name, assignment_id FROM notebook")}
        cells = {i: (notebooks[nb], n, t)
                 for i, n, nb, t in c.execute("SELECT id, name, notebook_id, type FROM base_cell")}
        named = {"assignment_id": assignments, "notebook_id": notebooks}
        found = {}
        for (table,) in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            columns = [r[1] for r in c.execute(f"PRAGMA table_info({table})")]
            found[table] = sorted(
                repr(sorted((k, cells[v] if k == "id" and table.endswith("_cells") else named[k][v] if k in named
                             else v) for k, v in zip(columns, row) if k != "id" or table.endswith("_cells")
                            or table in ("course", "student")))
                for row in c.execute(f"SELECT * FROM {table}"))
        c.close()
        return found
    joined, own = rows(tmp_path / "joined.db"), rows(tmp_path / "nbgrader.db")
    assert len(joined["assignment"]) == 3 and len(joined["grade_cells"]) > 10
    assert joined == own


# ------------------------------------------------------------------ one result model

RESULT_KEYS = ["student", "assignment", "notebook", "status", "problems", "cell_errors", "restarts", "isolation",
               "cells", "manual", "seconds", "submitted_at", "submitted_from", "timings"]


def test_the_result_keeps_its_json_keys_and_round_trips():
    result = fake_result(untouched(CHAPTER))
    data = result.to_json()
    assert list(data) == RESULT_KEYS  # results/*.json, read by dlcourse.selfcheck, the tests and benchmarks
    assert list(data["cells"][0]) == ["grade_id", "points", "score", "checks", "error", "status", "seconds", "refused"]
    assert list(data["cells"][0]["checks"][0]) == ["description", "passed", "message", "hidden"]
    assert list(data["manual"][0]) == ["grade_id", "points", "score", "answer"]
    assert SubmissionResult.from_json(result.to_json(notebook=True, feedback=True)) == result
    wire = result.to_json(summary=True)
    totals = result.totals()
    assert wire["totals"] == {"score": totals.auto_score, "points": totals.auto_points,
                              "manual_points": totals.manual_points}
    assert wire["notes"] == result.notes()
    assert "running cell 3 (scratch) raised ValueError: expected 3, got 2" in wire["notes"]


def test_totals_and_notes_are_computed_from_the_verdicts():
    result = SubmissionResult("s", CHAPTER, "n.ipynb", "limit", ["repaired"], {"cell 2 (given)": "NameError: x"}, 1,
                              None, [CellVerdict("test_a", 2.0, 1.5), CellVerdict("test_b", 1.0, 1.0)],
                              [ManualAnswer("free_a", 2.0, None, "an answer"), ManualAnswer("free_b", 1.0, 0.0, ""),
                               ManualAnswer("free_c", 0.5, None, "YOUR ANSWER HERE ")])
    totals = result.totals()
    assert (totals.score, totals.maximum) == (2.5, 6.5)
    assert (totals.auto_score, totals.auto_points, totals.manual_points) == (2.5, 3.0, 3.5)
    assert result.notes() == ["repaired", "running cell 2 (given) raised NameError: x",
                              "your code had to be restarted 1 time(s) (a crash or a time limit)",
                              "grading status: limit", "the written answer free_b (1 points) is still empty",
                              "the written answer free_c (0.50 points) is still empty"]
    failed = SubmissionResult.failed(Task("s", CHAPTER, "n.ipynb", "/x", problems=("renamed",)), "the grader failed")
    assert failed.status == "error" and failed.problems == ["renamed", "the grader failed"] and not failed.cells
    assert list(failed.to_json()) == RESULT_KEYS  # no task fields (paths) in the results file


def test_report_escapes_every_name_and_message(tmp_path):
    from autograder.report import write_report
    evil = "<script>alert(1)</script>"
    result = SubmissionResult(evil, evil, "n.ipynb", "limit", [evil], {}, 1, "none " + evil,
                              [CellVerdict(evil, 1.0, 0.0, [Check(evil, False, evil, True)], evil, "timeout")])
    write_report(tmp_path, [result], {(evil, evil): (0.0, 1.0)}, 1.0)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<script>" not in page and page.count("&lt;script&gt;") >= 6 and "UNSAFE" in page


def test_hardest_checks_count_attempts_only_one_row_per_check(tmp_path):
    """Issue 26, finding 8: blank submissions ("not implemented yet") are counted apart, a check failing with
    two messages is one row, and a report with nothing to list says so in a sentence, not an empty table."""
    from autograder.report import hardest_checks, write_report
    from dlcourse.testing import describe
    blank = describe(NotImplementedError())

    def result(student, passed, message):
        return SubmissionResult(student, CHAPTER, "n.ipynb", cells=[CellVerdict("test_f", 2.0, 0.0, [
            Check("f on a hidden input", passed, None if passed else message, True),
            Check("f's shape", True, None, False)])])
    results = [result("a", False, "expected 3, got 2"), result("b", False, "expected 3, got 4"),
               result("c", True, None), result("d", False, blank), result("e", False, blank)]
    rows = hardest_checks(results)
    assert len(rows) == 1
    assert (rows[0]["check"], rows[0]["failed"], rows[0]["attempted"], rows[0]["blank"]) == \
        ("f on a hidden input", 2, 3, 2)
    assert rows[0]["message"] in ("expected 3, got 2", "expected 3, got 4")
    assert hardest_checks([result("d", False, blank)]) == []
    write_report(tmp_path, [result("c", True, None)], {("c", CHAPTER): (2.0, 2.0)}, 1.0)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "No hidden check failed on a submission that attempted it." in page
    assert "No submission hit a limit, crashed or needed repair." in page
    for table in re.findall(r"<table.*?</table>", page, re.S):
        assert "<td>" in table, table  # every table shown has rows
