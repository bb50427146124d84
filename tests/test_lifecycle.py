"""nbgrader's whole lifecycle with this course, as a JupyterHub course runs it, in a temporary folder.

An instructor course directory (the shipped nbgrader_config.py) and a local exchange; the instructor
generates and releases a chapter; two students, each with their own home folder, fetch it, fill it in
and submit (alice twice: nbgrader collects the newest; bob after the due date: nbgrader records how
late, and its default late plugin takes no points off); the instructor collects, runs plain
``nbgrader autograde`` (which the shipped config points at the hardened grader,
autograder/nbgrader_plugin.py), generates and releases feedback; the students fetch it and read the
verdict of every check, hidden ones named, never their code. ``make grade`` on the collected
``submitted/`` folder gives the same scores, cell by cell.
"""
from __future__ import annotations

import csv
import datetime
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from autograder import submissions
from autograder.course import ROOT, Chapter, grade_id
from autograder.tests.mutants import load as load_mistakes

pytestmark = [pytest.mark.xdist_group("lifecycle")]

CHAPTER = "ch01_perceptron"
COURSE = "dlcourse"
BIN = Path(sys.executable).parent
WRONG = ("margin", next(iter(load_mistakes(CHAPTER)["margin"].values())))  # bob's plausible mistake


def nbgrader(*args, cwd: Path, home: Path, check=True, env=None):
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_"))}
    environment.update({"HOME": str(home), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
                        "MPLBACKEND": "Agg", **(env or {})})
    done = subprocess.run([str(BIN / "nbgrader"), *args], cwd=cwd, env=environment, capture_output=True,
                          text=True, timeout=900)
    if check:
        assert done.returncode == 0, f"nbgrader {' '.join(args)}:\n{done.stdout[-1500:]}\n{done.stderr[-3000:]}"
    return done


class Student:
    def __init__(self, tmp: Path, name: str, exchange: Path):
        self.name, self.home = name, tmp / "home" / name
        self.home.mkdir(parents=True)
        # what a JupyterHub user's own config (or the hub's) holds; the student id is the login name there
        (self.home / "nbgrader_config.py").write_text(
            "c = get_config()\n"
            f"c.CourseDirectory.course_id = {COURSE!r}\n"
            f"c.Exchange.root = {str(exchange)!r}\n"
            f"c.Exchange.cache = {str(self.home / '.nbgrader_cache')!r}\n"
            f"c.CourseDirectory.student_id = {name!r}\n")

    def run(self, *args, **kwargs):
        return nbgrader(*args, cwd=self.home, home=self.home, **kwargs)

    @property
    def notebook(self) -> Path:
        return self.home / CHAPTER / f"{CHAPTER}.ipynb"

    def save(self, nb) -> None:
        nbformat.write(nb, str(self.notebook))


# session scope: xdist may interleave other modules on the same worker, which would rebuild a module fixture
@pytest.fixture(scope="session")
def course(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lifecycle")
    exchange = tmp / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    instructor = tmp / "instructor"
    (instructor / "solutions").mkdir(parents=True)
    shutil.copytree(ROOT / "solutions" / CHAPTER, instructor / "solutions" / CHAPTER)
    config = (ROOT / "nbgrader_config.py").read_text()
    (instructor / "nbgrader_config.py").write_text(
        config + f"\nc.Exchange.root = {str(exchange)!r}\nc.CollectApp.check_owner = False\n")
    teacher = lambda *args, **kw: nbgrader(*args, cwd=instructor, home=instructor, **kw)  # noqa: E731

    teacher("generate_assignment", CHAPTER, "--force")
    teacher("release_assignment", CHAPTER)
    alice, bob = Student(tmp, "alice", exchange), Student(tmp, "bob", exchange)
    for student in (alice, bob):
        listed = student.run("list")
        assert CHAPTER in listed.stdout + listed.stderr
        student.run("fetch_assignment", CHAPTER)
        assert student.notebook.is_file()
        # what they fetched is the release: no solution, no hidden test
        fetched = student.notebook.read_text()
        assert "BEGIN HIDDEN TESTS" not in fetched and "BEGIN SOLUTION" not in fetched

    alice.save(submissions.untouched(CHAPTER))  # a first, empty submission...
    alice.run("submit", CHAPTER)
    alice.save(submissions.reference(CHAPTER))  # ...then the finished one
    alice.run("submit", CHAPTER)
    # the due date, in whole seconds, falls strictly between alice's last submission and bob's
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    due = now.replace(microsecond=0) + datetime.timedelta(seconds=1)
    teacher("db", "assignment", "add", CHAPTER, f"--duedate={due.isoformat(sep=' ')} UTC")
    until_due = due - datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    time.sleep(max(0.0, until_due.total_seconds()) + 0.1)
    bob.save(submissions.filled(CHAPTER, {WRONG[0]: WRONG[1]}))  # after the due date, one mistake
    bob.run("submit", CHAPTER)

    teacher("collect", CHAPTER)
    submitted = instructor / "grading" / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == ["alice", "bob"]
    autograde = teacher("autograde", CHAPTER, "--force")
    teacher("generate_feedback", CHAPTER, "--force")
    teacher("release_feedback", CHAPTER)
    for student in (alice, bob):
        student.run("fetch_feedback", CHAPTER)
    teacher("export")

    from autograder.classroom import grade_class
    out = grade_class(str(submitted), str(tmp / "make-grade"), jobs=1)
    return {"tmp": tmp, "instructor": instructor, "alice": alice, "bob": bob, "out": out,
            "autograde_log": autograde.stdout + autograde.stderr}


def _gradebook_scores(instructor: Path) -> dict:
    from nbgrader.api import Gradebook
    scores = {}
    with Gradebook(f"sqlite:///{instructor / 'grading' / 'gradebook.db'}") as gb:
        for submission in gb.assignment_submissions(CHAPTER):
            nb = submission.notebooks[0]
            scores[submission.student.id] = {
                "cells": {g.name: g.auto_score for g in nb.grades},
                "late": submission.total_seconds_late, "score": submission.score}
    return scores


def test_newest_submission_is_collected_and_lateness_recorded(course):
    scores = _gradebook_scores(course["instructor"])
    chapter = Chapter.load(CHAPTER)
    tests = {grade_id(c): float(c.metadata["nbgrader"]["points"]) for c in chapter.cells("tests")}
    # alice's second submission (the reference) was collected, not her first (empty) one
    assert all(scores["alice"]["cells"][gid] == points for gid, points in tests.items()), scores["alice"]
    assert scores["alice"]["late"] == 0
    # bob submitted after the due date: nbgrader records it, and by default takes no points off
    assert scores["bob"]["late"] > 0
    assert scores["bob"]["cells"][f"test_{WRONG[0]}"] < tests[f"test_{WRONG[0]}"]
    others = {gid: p for gid, p in tests.items() if gid != f"test_{WRONG[0]}"}
    assert all(scores["bob"]["cells"][gid] == p for gid, p in others.items()), scores["bob"]
    rows = {r["student_id"]: r for r in csv.DictReader(open(course["instructor"] / "grades.csv"))}
    assert float(rows["bob"]["late_submission_penalty"] or 0) == 0
    assert float(rows["bob"]["raw_score"]) == pytest.approx(scores["bob"]["score"])


def test_nbgrader_autograde_gives_make_grades_scores(course):
    """Plain `nbgrader autograde` (the shipped config) grades in the sandbox: same verdicts as make grade."""
    assert "graded in the sandbox" in course["autograde_log"]
    scores = _gradebook_scores(course["instructor"])
    made = {}
    for row in csv.DictReader(open(course["out"] / "tests.csv")):
        made.setdefault(row["student"], {})[row["grade_id"]] = float(row["score"]) if row["score"] else None
    for student in ("alice", "bob"):
        assert made[student] == pytest.approx(scores[student]["cells"]), student
    # the autograded notebook keeps no hidden test code either
    autograded = (course["instructor"] / "grading" / "autograded" / "bob" / CHAPTER / f"{CHAPTER}.ipynb").read_text()
    assert "BEGIN HIDDEN TESTS" not in autograded


def test_students_fetch_feedback_naming_hidden_checks_never_their_code(course):
    from tests.test_selfcheck import hidden_source_lines
    hidden = hidden_source_lines(CHAPTER)
    assert hidden
    for name in ("alice", "bob"):
        student = course[name]
        pages = list((student.home / CHAPTER / "feedback").rglob(f"{CHAPTER}.html"))
        assert len(pages) == 1, pages
        page = pages[0].read_text()
        leaked = sorted(line for line in hidden if line in page)
        assert not leaked and "BEGIN HIDDEN" not in page, leaked[:3]
        assert "hidden" in page and "✘" in page if name == "bob" else "✔" in page
    bob = next((course["bob"].home / CHAPTER / "feedback").rglob(f"{CHAPTER}.html")).read_text()
    result = _make_grade_result(course, "bob")
    failing = [c for cell in result["cells"] for c in cell["checks"] if not c["passed"]]
    assert failing and any(c["hidden"] for c in failing)
    import html
    for check in failing:  # every failing check is named in bob's feedback, hidden ones included
        assert html.escape(check["description"]) in bob, check["description"]


def _make_grade_result(course, student):
    import json
    return json.loads((course["out"] / "results" / student / f"{CHAPTER}.json").read_text())


def test_stock_autograde_only_by_an_explicit_switch(monkeypatch):
    from traitlets.config import Config

    from autograder import nbgrader_plugin
    monkeypatch.delenv(nbgrader_plugin.STOCK_SWITCH, raising=False)
    c = Config()
    assert nbgrader_plugin.configure(c) == "sandboxed"
    assert c.Autograde.autograde_preprocessors[0] is nbgrader_plugin.SandboxedExecute
    monkeypatch.setenv(nbgrader_plugin.STOCK_SWITCH, "1")
    c = Config()
    assert nbgrader_plugin.configure(c) == "stock" and "autograde_preprocessors" not in c.Autograde
    assert nbgrader_plugin.HideHiddenTests in c.GenerateFeedback.preprocessors
