"""The formgrader in a real (headless) Chromium, after a `make grade` run.

The instructor opens the run's formgrader (`cd OUT && jupyter lab`, OUT/nbgrader_config.py), gives
points to a free-response answer by hand and leaves a comment; nbgrader's gradebook records both, and
`make export OUT=...` and nbgrader's own `nbgrader export` show the new total.

    make test-browser          # REQUIRE_BROWSER=1: a missing Chromium fails
    pytest -m browser tests    # a missing Chromium skips

Chromium is Debian's package driven by Python playwright (``executable_path``); never ``playwright install``.
"""
from __future__ import annotations

import csv
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder import submissions
from autograder.course import ROOT, grade_id, role
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS, Lab, _unavailable

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

CHAPTER = "ch01_perceptron"
POINTS, COMMENT = 1.5, "Right idea; say why the margin is scale-invariant."


def _grades(path: Path, key: str) -> dict:
    return {row[key]: row for row in csv.DictReader(open(path, encoding="utf-8"))}


def _wait_for(predicate, what: str, seconds: float = 60):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"{what} within {seconds} s"
        time.sleep(0.3)


def test_grade_by_hand_in_the_formgrader_then_export(tmp_path, playwright):
    if not Path(CHROMIUM).is_file():
        _unavailable(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    from nbgrader.api import Gradebook

    from autograder.classroom import grade_class

    nb = submissions.untouched(CHAPTER)  # nothing implemented (fast to grade), the written answer given
    answer = next(c for c in nb.cells if role(c) == "answer")
    answer.source = "The margin divides by the norm of w, so scaling w and b changes nothing."
    submissions.write_class(tmp_path / "class", {("alice", CHAPTER): nb})
    out = grade_class(str(tmp_path / "class"), str(tmp_path / "out"), jobs=1)
    before = float(_grades(out / "grades.csv", "student")["alice"]["score"])
    db = f"sqlite:///{out / 'gradebook.db'}"
    with Gradebook(db) as gb:
        submission_id = gb.find_submission_notebook(CHAPTER, CHAPTER, "alice").id
        assert gb.find_grade(grade_id(answer), CHAPTER, CHAPTER, "alice").needs_manual_grade

    home = tmp_path / "home"
    home.mkdir()
    lab = Lab(out, home).start()
    try:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        # the formgrader's own API calls need the server's token (a token in the page's URL sets no cookie)
        page = browser.new_page(viewport={"width": 1400, "height": 1000},
                                extra_http_headers={"Authorization": f"token {lab.token}"})
        page.goto(f"{lab.url}/formgrader/submissions/{submission_id}/?token={lab.token}",
                  wait_until="domcontentloaded", timeout=60_000)
        score = page.locator(f"input.score#{grade_id(answer)}")
        score.wait_for(timeout=60_000)
        assert "hidden checks of this cell ran in the grader" in page.content()  # the graded notebook
        score.fill(f"{POINTS:g}")
        score.press("Tab")
        comment = page.locator(f"textarea#{grade_id(answer)}-comment")
        comment.fill(COMMENT)
        comment.press("Tab")

        def saved():
            with Gradebook(db) as gb:
                grade = gb.find_grade(grade_id(answer), CHAPTER, CHAPTER, "alice")
                said = gb.find_comment(grade_id(answer), CHAPTER, CHAPTER, "alice").manual_comment
                return grade.manual_score == POINTS and said == COMMENT
        _wait_for(saved, "the formgrader saved the score and the comment in the gradebook")
        SCREENSHOTS.mkdir(exist_ok=True)
        score.scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / "formgrader-manual-grade.png"), full_page=False)
        browser.close()
    finally:
        lab.stop()

    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["make", "-s", "--no-print-directory", "export", f"OUT={out}"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert float(_grades(out / "grades.csv", "student")["alice"]["score"]) == pytest.approx(before + POINTS)
    cells = {row["grade_id"]: row for row in csv.DictReader(open(out / "tests.csv", encoding="utf-8"))}
    assert float(cells[grade_id(answer)]["score"]) == POINTS

    done = subprocess.run([str(Path(sys.executable).parent / "nbgrader"), "export",
                           f"--to={tmp_path / 'nbgrader-grades.csv'}"], cwd=out, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    row = _grades(tmp_path / "nbgrader-grades.csv", "student_id")["alice"]
    assert float(row["raw_score"]) == pytest.approx(before + POINTS)
