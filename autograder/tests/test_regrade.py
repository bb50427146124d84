"""The instructor's work is data (issue 26: findings 4, 5, 6, 8, 9).

One small class is graded for real, twice, into the same OUT: between the runs, hand grades,
extra credit and comments are written into OUT's gradebook as the formgrader writes them (nbgrader's
Gradebook API), one student changes an answer and fixes a function, and one submission is taken out
of SUBMISSIONS. The re-grade must keep every hand grade and comment (in the gradebook, the CSVs and
the feedback pages), flag the one whose answer changed, list each score that changed and why, and
keep the submission it did not see. The other tests work on copies of that OUT, without grading again.
"""
from __future__ import annotations

import csv
import datetime
import os
import shutil
import stat
import subprocess
from pathlib import Path

import nbformat
import pytest

from autograder.classroom import discover, grade_class, parse_due
from autograder.course import ROOT, grade_id
from autograder.errors import UsageError
from autograder.submissions import filled, reference, untouched, write_class
from autograder.tests.test_outputs import RUNS_SCRIPT

pytestmark = [pytest.mark.slow]

CH, CH2 = "ch01_perceptron", "ch02_universal_approximation"  # the fastest chapters to grade
DUE = "2027-01-15 23:59 UTC"
ON_TIME, LATE = "2027-01-15 20:00:00.000000 UTC", "2027-01-16 02:01:00.000000 UTC"  # as nbgrader writes them
FREE, FREE2 = "free_response_margin", "free_response_depth_vs_width"
EVIL = "Clear <b>and</b> right <script>alert(1)</script> é"
# (student, chapter, cell): (manual score, extra credit, comment), as a grader enters them in the formgrader
HAND = {("ref", CH, FREE): (2.0, 0.5, EVIL),
        ("ref", CH, "test_perceptron_train"): (3.0, None, None),   # an automatic score overridden by hand
        ("ref", CH, "perceptron_train"): (None, None, "Loops could be vectorised."),  # a comment on code
        ("partial", CH, FREE): (1.0, None, "Half of it: the norm of w is missing."),
        ("ref", CH2, FREE2): (1.5, None, "Depth, yes; width too.")}


def _stub(chapter: str, name: str) -> str:
    return next(c.source for c in untouched(chapter).cells if grade_id(c) == name)


def _rows(path: Path, *key: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return {tuple(row[k] for k in key): row for row in csv.DictReader(f)}


def _write_hand_grades(out: Path, hand: dict) -> None:
    """As the formgrader saves them: manual_score, extra_credit and manual_comment in OUT's gradebook."""
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        for (student, chapter, cell), (score, extra, comment) in hand.items():
            if score is not None or extra is not None:
                grade = gb.find_grade(cell, chapter, chapter, student)
                grade.manual_score, grade.extra_credit = score, extra
            if comment is not None:
                gb.find_comment(cell, chapter, chapter, student).manual_comment = comment
        gb.db.commit()


def _make(*args, cwd=ROOT, **kwargs) -> subprocess.CompletedProcess:
    """``make`` as a user types it (not a sub-make of ``make test``), quiet."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    return subprocess.run(["make", "-s", "--no-print-directory", *args], cwd=cwd, env={**env, "MPLBACKEND": "Agg"},
                          capture_output=True, text=True, timeout=300, **kwargs)


def _timestamp(folder: Path, text: str) -> None:
    (folder / "timestamp.txt").write_text(text)


@pytest.fixture(scope="module")
def regraded(tmp_path_factory):
    """The OUT of a class graded, graded by hand, then graded again; with what each run logged."""
    base = tmp_path_factory.mktemp("regrade")
    partial = filled(CH, {"margin": _stub(CH, "margin")}, answers="The margin is y (w x + b).")
    folder = write_class(base / "class", {("ref", CH): reference(CH), ("ref", CH2): reference(CH2),
                                          ("blank", CH): untouched(CH), ("partial", CH): partial})
    _timestamp(folder / "ref" / CH, ON_TIME)
    _timestamp(folder / "partial" / CH, LATE)
    nbformat.write(reference(CH), str(folder / f"{CH}.ipynb"))          # loose, at the top
    (folder / "dana").mkdir()
    nbformat.write(reference(CH), str(folder / "dana" / f"{CH}.ipynb"))  # no chapter folder
    out = base / "out"
    grade_class(str(folder), str(out), jobs=2, due=DUE)
    first = {"log": (out / "grading.log").read_text(encoding="utf-8"),
             "grades": _rows(out / "grades.csv", "student", "assignment"),
             "report": (out / "report.html").read_text(encoding="utf-8")}
    _write_hand_grades(out, HAND)
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:  # the formgrader's "Manage students", an extension
        gb.update_or_create_student("ref", first_name="Ada", last_name="Lovelace", email="ada@example.org")
        gb.find_submission(CH, "partial").extension = datetime.timedelta(hours=3)
        gb.db.commit()
    # between the runs: partial rewrites the written answer and fixes margin; ref's ch02 is not handed in again
    fixed = filled(CH, answers="The margin divides by the norm of w.")
    nbformat.write(fixed, str(folder / "partial" / CH / f"{CH}.ipynb"))
    shutil.rmtree(folder / "ref" / CH2)
    grade_class(str(folder), str(out), jobs=2)
    return {"out": out, "first": first, "log": (out / "grading.log").read_text(encoding="utf-8"),
            "base": base}


def _copy(regraded, name: str) -> Path:
    copy = regraded["base"] / name
    shutil.copytree(regraded["out"], copy)
    return copy


# ------------------------------------------------------------------ finding 4: a re-grade keeps the hand grades

def test_a_regrade_keeps_every_hand_grade_and_comment(regraded):
    from nbgrader.api import Gradebook
    out = regraded["out"]
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        for (student, chapter, cell), (score, extra, comment) in HAND.items():
            if score is not None:
                grade = gb.find_grade(cell, chapter, chapter, student)
                assert (grade.manual_score, grade.extra_credit) == (score, extra), (student, chapter, cell)
            if comment is not None:
                assert gb.find_comment(cell, chapter, chapter, student).manual_comment == comment
    tests = _rows(out / "tests.csv", "student", "assignment", "grade_id")
    comments = _rows(out / "comments.csv", "student", "assignment", "cell")
    for (student, chapter, cell), (score, extra, comment) in HAND.items():
        if score is not None:
            row = tests[(student, chapter, cell)]
            assert float(row["hand_score"]) == score and float(row["score"]) == score + (extra or 0.0)
        if comment is not None:
            assert comments[(student, chapter, cell)]["comment"] == comment
            if (student, chapter, cell) in tests:
                assert tests[(student, chapter, cell)]["comment"] == comment
    grades = _rows(out / "grades.csv", "student", "assignment")
    before = regraded["first"]["grades"]
    # ref's total: the automatic 19 with test_perceptron_train 4 -> 3 by hand, and 2 + 0.5 for the written answer
    assert float(before[("ref", CH)]["score"]) == 19.0 and float(grades[("ref", CH)]["score"]) == 19 - 1 + 2.5
    assert grades[("ref", CH)]["pending_hand_grades"] == "0" and grades[("ref", CH2)]["pending_hand_grades"] == "0"
    # ref's ch02 was not in SUBMISSIONS this time: kept as graded before, with its hand grade
    assert float(grades[("ref", CH2)]["score"]) == float(before[("ref", CH2)]["score"]) + 1.5
    assert "kept 1 submissions graded by an earlier run" in regraded["log"]
    assert "kept 5 hand grades and comments" in regraded["log"]
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:  # what else the instructor entered is kept too
        ref = gb.find_student("ref")
        assert (ref.first_name, ref.last_name, ref.email) == ("Ada", "Lovelace", "ada@example.org")
        assert gb.find_submission(CH, "partial").extension == datetime.timedelta(hours=3)


def test_the_feedback_shows_the_hand_grades_and_comments_and_runs_none(regraded):
    out = regraded["out"]
    page = (out / "feedback" / "ref" / CH / f"{CH}.html").read_text(encoding="utf-8")
    assert "Clear &lt;b&gt;and&lt;/b&gt; right &lt;script&gt;alert(1)&lt;/script&gt; é" in page
    assert "Loops could be vectorised." in page
    assert "(graded by hand; the checks gave 4)" in page and "to be graded by hand" not in page
    assert "Score:</b> 20.5 / 21" in page
    assert not RUNS_SCRIPT.search(page), RUNS_SCRIPT.search(page)
    assert page.count('<meta http-equiv="Content-Security-Policy" content="script-src ') == 1
    kept = (out / "feedback" / "ref" / CH2 / f"{CH2}.html").read_text(encoding="utf-8")
    assert "Depth, yes; width too." in kept
    blank = (out / "feedback" / "blank" / CH / f"{CH}.html").read_text(encoding="utf-8")
    assert "Comment from the grader" not in blank


def test_a_changed_answer_keeps_its_hand_grade_flagged(regraded):
    from nbgrader.api import Gradebook
    out = regraded["out"]
    tests = _rows(out / "tests.csv", "student", "assignment", "grade_id")
    assert float(tests[("partial", CH, FREE)]["hand_score"]) == 1.0
    assert tests[("partial", CH, FREE)]["answer_changed_since_hand_grade"] == "yes"
    assert tests[("ref", CH, FREE)]["answer_changed_since_hand_grade"] == ""
    grades = _rows(out / "grades.csv", "student", "assignment")
    assert grades[("partial", CH)]["hand_grades_to_review"] == "1"
    assert grades[("ref", CH)]["hand_grades_to_review"] == "0"
    report = (out / "report.html").read_text(encoding="utf-8")
    section = report.split("<h2>Hand grades on an answer that changed since</h2>")[1].split("<h2>")[0]
    assert "partial" in section and FREE in section and "ref" not in section
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:  # nbgrader's own flag, seen in the formgrader
        assert gb.find_submission_notebook(CH, CH, "partial").flagged
        assert not gb.find_submission_notebook(CH, CH, "ref").flagged
    assert "flagged, as the answer changed since: partial/ch01_perceptron" in regraded["log"]


def test_a_regrade_lists_each_changed_score_and_why(regraded):
    report = (regraded["out"] / "report.html").read_text(encoding="utf-8")
    section = report.split("<h2>Scores changed since the last run into this folder</h2>")[1].split("<h2>")[0]
    assert "test_margin: 0 → 2 (the submission changed; now passes:" in section
    assert "partial" in section and "ref" not in section and "blank" not in section
    line = next(line for line in regraded["log"].splitlines() if "re-grade:" in line)
    assert "for 1 students (partial:" in line and "report.html" in line
    assert "No score changed" in regraded["first"]["report"]  # no table without rows


def test_make_feedback_brings_later_hand_grades_everywhere(regraded):
    out = _copy(regraded, "feedback")
    _write_hand_grades(out, {("blank", CH, "perceptron_predict"): (None, None, "Start with the sign of w x + b."),
                             ("blank", CH, "test_margin"): (0.5, None, None)})
    done = _make("feedback", f"OUT={out}")
    assert done.returncode == 0, done.stderr[-2000:]
    page = (out / "feedback" / "blank" / CH / f"{CH}.html").read_text(encoding="utf-8")
    assert "Start with the sign of w x + b." in page and "(graded by hand; the checks gave 0)" in page
    assert float(_rows(out / "grades.csv", "student", "assignment")[("blank", CH)]["score"]) == 0.5
    assert _rows(out / "comments.csv", "student", "cell")[("blank", "perceptron_predict")]["comment"] == \
        "Start with the sign of w x + b."
    # what the re-grade kept is still there: the flag, ref's comments, the report's sections
    assert "Clear &lt;b&gt;and" in (out / "feedback" / "ref" / CH / f"{CH}.html").read_text(encoding="utf-8")
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "test_margin: 0 → 2" in report and f"dana/{CH}.ipynb" in report
    assert _rows(out / "tests.csv", "student", "grade_id")[("partial", FREE)]["answer_changed_since_hand_grade"] \
        == "yes"
    # the instructor looked at partial's new answer and unflagged the notebook in the formgrader: reviewed
    from nbgrader.api import Gradebook

    from autograder.outputs import publish
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        gb.find_submission_notebook(CH, CH, "partial").flagged = False
        gb.db.commit()
    publish(out)
    assert _rows(out / "tests.csv", "student", "grade_id")[("partial", FREE)]["answer_changed_since_hand_grade"] \
        == ""
    assert _rows(out / "grades.csv", "student", "assignment")[("partial", CH)]["hand_grades_to_review"] == "0"


def test_the_reset_switch_drops_hand_grades_and_says_which_scores_moved(regraded):
    from nbgrader.api import Gradebook

    from autograder.outputs import write_outputs
    from autograder.regrade import saved_results
    out = _copy(regraded, "reset")
    results = [r for key, r in saved_results(out).items() if key != ("ref", CH2)]
    run = write_outputs(out, results, 1.0, reset_hand_grades=True)
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        for (student, chapter, cell) in HAND:
            notebook = gb.find_submission_notebook(chapter, chapter, student)
            assert all(g.manual_score is None and g.extra_credit is None for g in notebook.grades)
            assert all(not c.manual_comment for c in notebook.comments) and not notebook.flagged
    assert not any(row["hand_score"] or row["comment"] for row in _rows(out / "tests.csv", "student", "grade_id")
                   .values())
    assert f"{CH} test_perceptron_train: 3 → 4 (hand grade reset, as asked)" in run["changes"]["ref"]
    assert f"{CH} {FREE}: 2.5 → waiting for a hand grade (hand grade reset, as asked)" in run["changes"]["ref"]
    assert _rows(out / "grades.csv", "student", "assignment")[("ref", CH)]["pending_hand_grades"] == "1"
    with Gradebook(f"sqlite:///{out / 'gradebook.previous.db'}") as gb:  # the switch can be undone
        assert gb.find_grade(FREE, CH, CH, "ref").manual_score == 2.0
    cli = _make("-n", "grade", "SUBMISSIONS=s", "OUT=o", "RESET_HAND_GRADES=1", f"DUE={DUE}")
    assert f'--reset-hand-grades --due "{DUE}"' in cli.stdout, cli.stdout
    cli = _make("-n", "grade", "SUBMISSIONS=s", "OUT=o", "RESET_HAND_GRADES=0")
    assert "--reset-hand-grades" not in cli.stdout and "--due" not in cli.stdout


# ------------------------------------------------------------------ finding 8: waiting, time and lateness

def test_grades_show_what_waits_for_a_hand_grade_and_when_each_came_in(regraded):
    first = regraded["first"]["grades"]
    assert (first[("ref", CH)]["pending_hand_grades"], first[("ref", CH)]["pending_points"]) == ("1", "2")
    assert first[("blank", CH)]["pending_hand_grades"] == "0"  # left empty: nothing to grade by hand
    assert (first[("ref", CH)]["submitted_at"], first[("ref", CH)]["time_source"]) == \
        ("2027-01-15 20:00:00 UTC", "timestamp.txt")
    assert (first[("ref", CH)]["late"], first[("partial", CH)]["late"]) == ("no", "yes")
    assert first[("partial", CH)]["hours_late"] == "2.03" and first[("partial", CH)]["due"] == "2027-01-15 23:59:00 UTC"
    assert first[("blank", CH)]["time_source"] == "file mtime"
    report = regraded["first"]["report"]
    pending = report.split("<h2>Waiting for a hand grade</h2>")[1].split("<h2>")[0]
    assert "<td>ref</td><td>ch01_perceptron</td><td>1</td><td>2</td>" in pending and "blank" not in pending
    late = report.split("<h2>Late submissions</h2>")[1].split("<h2>")[0]
    assert "partial" in late and "2.03" in late and "<td>ref</td>" not in late
    # the re-grade was given no due date: the gradebook's is kept, and partial's extension of 3 h with it
    again = _rows(regraded["out"] / "grades.csv", "student", "assignment")[("partial", CH)]
    assert (again["due"], again["late"], again["hours_late"]) == ("2027-01-15 23:59:00 UTC", "no", "0.00")


def test_a_due_date_needs_its_time_zone(tmp_path):
    assert parse_due(DUE) == datetime.datetime(2027, 1, 15, 23, 59)
    assert parse_due("2027-01-15 23:59 +01:00") == datetime.datetime(2027, 1, 15, 22, 59)
    assert parse_due("2027-01-15T23:59:00-05:00") == datetime.datetime(2027, 1, 16, 4, 59)
    for text, says in (("2027-01-15 23:59", "time zone"), ("2027-01-15 23:59 Nowhere/Land", "unknown time zone"),
                       ("someday", "not a date")):
        with pytest.raises(UsageError, match=says):
            parse_due(text)
    (tmp_path / "class").mkdir()
    done = _make("grade", f"SUBMISSIONS={tmp_path / 'class'}", f"OUT={tmp_path / 'out'}", "DUE=2027-01-15 23:59")
    lines = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("make: ***")]
    assert done.returncode != 0 and len(lines) == 1 and "time zone" in lines[0], done.stderr


# ------------------------------------------------------------------ finding 6: nothing silently dropped

def test_notebooks_out_of_place_are_named_in_the_log_and_the_report(regraded):
    lines = [line for line in regraded["first"]["log"].splitlines() if "not graded" in line]
    assert any(f" {CH}.ipynb: not graded; it should be SUBMISSIONS/<student>/{CH}/{CH}.ipynb" in line
               for line in lines), lines
    assert any(f"dana/{CH}.ipynb: not graded; it should be SUBMISSIONS/dana/{CH}/{CH}.ipynb" in line
               for line in lines), lines
    assert any("2 notebooks were not graded" in line for line in lines)
    report = regraded["first"]["report"]
    assert f"dana/{CH}.ipynb: not graded" in report and f"SUBMISSIONS/dana/{CH}/{CH}.ipynb" in report


def test_every_notebook_is_graded_or_named(tmp_path):
    folder = write_class(tmp_path / "class", {("alice", CH): untouched(CH)})
    for extra in (f"alice/{CH}/copy.ipynb", f"alice/{CH}/old/{CH}.ipynb", "alice/notes/x.ipynb", "bob/x.ipynb"):
        (folder / extra).parent.mkdir(parents=True, exist_ok=True)
        (folder / extra).write_text("{}")
    (folder / "alice" / CH / ".ipynb_checkpoints").mkdir()
    (folder / "alice" / CH / ".ipynb_checkpoints" / f"{CH}-checkpoint.ipynb").write_text("{}")
    tasks, _, not_graded = discover(folder)
    assert [t.student for t in tasks] == ["alice"]
    named = {line.split(": not graded; ")[0]: line.split(": not graded; ")[1] for line in not_graded}
    assert named == {f"alice/{CH}/copy.ipynb": f"SUBMISSIONS/alice/{CH}/{CH}.ipynb is graded instead",
                     f"alice/{CH}/old/{CH}.ipynb": f"SUBMISSIONS/alice/{CH}/{CH}.ipynb is graded instead",
                     "alice/notes/x.ipynb": "it should be SUBMISSIONS/alice/<chapter>/<chapter>.ipynb",
                     "bob/x.ipynb": "it should be SUBMISSIONS/bob/<chapter>/<chapter>.ipynb"}
    only_loose = tmp_path / "loose"
    (only_loose / "carol").mkdir(parents=True)
    nbformat.write(untouched(CH), str(only_loose / "carol" / f"{CH}.ipynb"))
    (tmp_path / "out").mkdir()
    os.chmod(tmp_path / "out", 0o755)  # an OUT made by hand, readable by all: said, not changed
    with pytest.raises(UsageError, match=r"nothing to grade.*1 notebooks elsewhere"):
        grade_class(str(only_loose), str(tmp_path / "out"), jobs=1)
    log = (tmp_path / "out" / "grading.log").read_text(encoding="utf-8")
    assert "can be read by other users of this machine (mode 755): chmod 700 it" in log
    assert f"carol/{CH}.ipynb: not graded; it should be SUBMISSIONS/carol/{CH}/{CH}.ipynb" in log
    assert stat.S_IMODE((tmp_path / "out" / "grading.log").stat().st_mode) == 0o600


# ------------------------------------------------------------------ finding 9: the instructor's data is theirs

def test_out_and_its_gradebook_are_readable_by_their_owner_only(regraded):
    out = regraded["out"]
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    for folder, dirs, files in os.walk(out):
        for name in dirs:
            assert stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode) == 0o700, (folder, name)
        for name in files:
            assert stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode) == 0o600, (folder, name)
    assert (out / "gradebook.db").is_file()


def test_make_clean_spares_grading_and_clean_grading_asks(tmp_path):
    for keep in ("grading/gradebook.db", "out/gradebook.db", ".venv/bin/python"):
        (tmp_path / keep).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / keep).write_text("x")

    def make(*args):
        return _make("-f", str(ROOT / "Makefile"), *args, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert make("clean").returncode == 0
    assert (tmp_path / "grading" / "gradebook.db").is_file() and (tmp_path / "out" / "gradebook.db").is_file()
    assert not (tmp_path / ".venv").exists()
    refused = make("clean-grading")
    assert refused.returncode != 0 and "CONFIRM=yes" in refused.stderr
    assert (tmp_path / "grading" / "gradebook.db").is_file()
    assert make("clean-grading", "CONFIRM=yes").returncode == 0 and not (tmp_path / "grading").exists()
