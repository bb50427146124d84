"""`python -m autograder check` and `dlcourse.selfcheck`: full feedback for self-learners, never hidden code."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import nbformat
import pytest

from autograder import submissions
from autograder.course import HIDDEN_BEGIN, HIDDEN_END, ROOT, Chapter, split_hidden

# one worker runs this file: its module fixtures grade notebooks, once (not once per xdist worker)
pytestmark = pytest.mark.xdist_group("selfcheck")
CHAPTER = "ch02_universal_approximation"  # a finished chapter


def hidden_source_lines(chapter: str) -> set[str]:
    """Stripped lines of the hidden regions of the test cells that the public part does not also hold."""
    hidden, public = set(), set()
    for cell in Chapter.load(chapter).cells("tests"):
        inside = False
        for line in cell.source.splitlines():
            if line.strip() == HIDDEN_BEGIN:
                inside = True
            elif line.strip() == HIDDEN_END:
                inside = False
            elif inside:
                hidden.add(line.strip())
        public.update(line.strip() for line in split_hidden(cell.source)[0].splitlines())
    return {line for line in hidden - public if len(line) > 20}


def write_notebook(root, nb, chapter=CHAPTER):
    path = root / "course" / chapter / f"{chapter}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


def run_cli(*args):
    env = {**os.environ, "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, "-m", "autograder", "check", *map(str, args)],
                          capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    return done


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory):
    return {kind: write_notebook(tmp_path_factory.mktemp(kind), getattr(submissions, kind)(CHAPTER))
            for kind in ("reference", "untouched")}


@pytest.fixture(scope="module")
def hidden():
    lines = hidden_source_lines(CHAPTER)
    assert lines, "the chapter has no hidden test code to look for"
    return lines


@pytest.fixture(scope="module")
def tables(notebooks):
    """The CLI's table for each notebook (one grading run each), and the untouched one's with --details."""
    out = {}
    for kind, path in notebooks.items():
        done = run_cli(path)
        assert done.returncode == 0, done.stderr
        out[kind] = done
    out["untouched --details"] = done = run_cli("--details", notebooks["untouched"])
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def results(notebooks):
    """What the notebook side gets through `python -m autograder check --json`: the untouched notebook through
    check_my_work, the reference through the button (one grading run each)."""
    from dlcourse.selfcheck import check_button, check_my_work
    untouched = check_my_work(notebooks["untouched"], show=False)
    box = check_button(notebooks["reference"])
    assert box.children == (box.button, box.output)
    box.button.click()
    assert not box.button.disabled
    return {"untouched": untouched, "reference": box.result, "button": box}


def assert_no_hidden_source(text: str, hidden: set[str]):
    leaked = sorted(line for line in hidden if line in text)
    assert not leaked, f"hidden test code in the feedback: {leaked[:3]}"


def test_reference_gets_full_marks_in_the_table(tables, hidden):
    done = tables["reference"]
    text = done.stdout
    assert f"Self-check of {CHAPTER}" in text
    assert "save it first" in text
    assert "✗" not in text, text
    for name in ("relu", "mlp_forward", "relu_interpolant", "count_linear_pieces"):
        assert any(line.startswith(name + " ") for line in text.splitlines()), f"{name} has no row"
    total = next(line for line in text.splitlines() if line.startswith("total"))
    score, points = total.split()[1].split("/")
    assert float(score) == float(points) > 0
    assert_no_hidden_source(text + done.stderr, hidden)


def test_untouched_shows_failures_with_descriptions(tables, hidden, results):
    """The table says each exercise is not written yet, in one line each, and what to do next; with --details
    it lists every failing check with its description."""
    result = results["untouched"]
    short, done = tables["untouched"].stdout, tables["untouched --details"]
    for text in (short, done.stdout):
        total = next(line for line in text.splitlines() if line.startswith("total"))
        assert total.split()[1].startswith("0/")
        assert "not written yet" in text
        assert "free_response_" in text and "still empty" in text  # the release's placeholder is no answer
        assert_no_hidden_source(text, hidden)
    exercises = [cell["grade_id"].removeprefix("test_") for cell in result["cells"]]
    for name in exercises:
        assert any(line.startswith(name + " ") and line.endswith("not written yet") for line in short.splitlines()), \
            f"{name} has no row saying it is not written yet:\n{short}"
    assert len(short.splitlines()) <= len(exercises) + 20, short
    assert f"Next: write {exercises[0]}" in " ".join(short.split()) and "--details" in short
    text = done.stdout
    descriptions = [c["description"] for cell in result["cells"] for c in cell["checks"]]
    hidden_descriptions = [c["description"] for cell in result["cells"] for c in cell["checks"] if c["hidden"]]
    assert hidden_descriptions, "hidden checks are reported"
    flat = " ".join(text.split())  # the table wraps long lines
    for description in descriptions:
        assert " ".join(description.split()) in flat, f"{description!r} missing from the feedback"
    assert "✗ hidden check:" in text and "✗ check:" in text
    assert_no_hidden_source(text + done.stderr, hidden)


def half_done(chapter: str, written: tuple[str, ...], wrong: dict[str, str]) -> nbformat.NotebookNode:
    """The release with the reference solutions of ``written``, the code of ``wrong``, the other exercises as
    handed out, and the written answers left empty: a chapter half done."""
    from autograder.course import grade_id, role
    stubs = {grade_id(c): c.source for c in submissions.untouched(chapter).cells if role(c) == "solution"}
    replace = {gid: source for gid, source in stubs.items() if gid not in written}
    return submissions.filled(chapter, {**replace, **wrong}, answers=None)


def test_a_half_done_chapter_fits_a_screen_and_names_each_failing_function(tmp_path):
    """make check on chapter 1 with one function right, one wrong and the rest not written: one line per
    exercise, the total, the first failing check in full, what to do next; at most 40 lines. --details
    lists every failing check."""
    chapter = "ch01_perceptron"
    wrong_margin = "def margin(X, y, w, b):\n    return float((y * (X @ w + b)).min())\n"
    path = write_notebook(tmp_path, half_done(chapter, ("perceptron_predict",), {"margin": wrong_margin}), chapter)
    done = run_cli(path)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) <= 40, f"{len(lines)} lines:\n{done.stdout}"
    result = json.loads(run_cli("--json", path).stdout)
    failing = [cell["grade_id"].removeprefix("test_") for cell in result["cells"] if cell["score"] < cell["points"]]
    assert "margin" in failing and "perceptron_train" in failing and "perceptron_predict" not in failing
    for name in failing:  # each failing function named on its own line, with what it comes to
        row = [line for line in lines if line.startswith(name + " ")]
        assert len(row) == 1, f"{name}:\n{done.stdout}"
        assert row[0].endswith("not written yet") or "fail" in row[0], row[0]
    assert [line for line in lines if line.startswith("perceptron_predict ")][0].endswith(" ok")
    first = next(c for cell in result["cells"] if cell["grade_id"] == "test_margin" for c in cell["checks"]
                 if not c["passed"])
    flat = " ".join(done.stdout.split())
    assert "First failing check, in margin:" in done.stdout and " ".join(first["description"].split()) in flat
    assert "Next: fix margin" in flat and "--details" in flat
    assert "Traceback" not in done.stdout + done.stderr
    details = run_cli("--details", path)
    flat = " ".join(details.stdout.split())
    for cell in result["cells"]:
        for c in cell["checks"]:
            if not c["passed"]:
                assert " ".join(c["description"].split()) in flat, c["description"]


def test_json_is_the_result_without_the_notebook(results, hidden):
    for kind in ("reference", "untouched"):
        result = results[kind]
        assert "notebook_json" not in result and "feedback_html" not in result  # no page where nobody reads it
        assert result["assignment"] == CHAPTER and result["student"] == "you"
        assert result["status"] == "graded" and result["cells"]
        assert_no_hidden_source(json.dumps(result, ensure_ascii=False), hidden)
        full = all(cell["score"] == cell["points"] for cell in result["cells"])
        assert full == (kind == "reference"), kind
    untouched = results["untouched"]
    assert all(cell["score"] == 0 for cell in untouched["cells"])
    assert untouched["totals"]["score"] == 0 and untouched["totals"]["points"] == sum(
        cell["points"] for cell in untouched["cells"])  # totals and notes come computed, once, by the grader
    assert any("still empty" in note for note in untouched["notes"])
    assert all(not c["passed"] for cell in untouched["cells"] for c in cell["checks"])


def test_chapter_comes_from_the_folder_or_the_file_name(tmp_path):
    nb = submissions.reference(CHAPTER)
    renamed = tmp_path / "course" / CHAPTER / "my copy.ipynb"
    renamed.parent.mkdir(parents=True)
    nbformat.write(nb, str(renamed))
    flat = tmp_path / "downloads" / f"{CHAPTER}.ipynb"
    flat.parent.mkdir()
    nbformat.write(nb, str(flat))
    from autograder.check import chapter_of
    assert chapter_of(renamed) == CHAPTER and chapter_of(flat) == CHAPTER
    stray = tmp_path / "elsewhere" / "notes.ipynb"  # no nbgrader metadata, no chapter name
    stray.parent.mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), str(stray))
    done = run_cli("--json", stray)
    assert done.returncode == 2 and "not a notebook of this course" in json.loads(done.stdout)["error"]
    done = run_cli(tmp_path / "missing.ipynb")
    assert done.returncode == 2 and "no such notebook" in done.stderr


def test_format_table_reports_notes_and_errors():
    from autograder.check import format_table
    from autograder.result import SubmissionResult
    result = {"assignment": CHAPTER, "status": "limit", "problems": ["cell relu was modified: restored"],
              "cell_errors": {"cell 3 (given)": "NameError: name 'np' is not defined"}, "restarts": 1,
              "manual": [{"grade_id": "free_response_x", "points": 2.0, "score": 0.0, "answer": ""}],
              "cells": [{"grade_id": "test_relu", "points": 1.0, "score": 0.0, "status": "timeout",
                         "error": "stopped: the time limit was reached", "checks": []}]}
    text = format_table(SubmissionResult.from_json(result))
    for expected in ("cell relu was modified", "NameError", "restarted 1 time", "free_response_x",
                     "the test cell stopped: stopped: the time limit", "grading status: limit"):
        assert expected in text


def test_check_my_work_with_an_explicit_path_shows_a_table(notebooks, results, hidden):
    import html

    from markupsafe import escape

    from dlcourse.selfcheck import render_html
    result = results["untouched"]
    markup = render_html(result, notebooks["untouched"])
    assert "<table" in markup and "<i>hidden</i>" in markup and "not written yet" in markup
    assert "relu_interpolant" in markup and "unsaved changes are not checked" in markup
    assert "still empty" in markup and "still empty" not in render_html(results["reference"])
    for cell in result["cells"]:
        for c in cell["checks"]:
            assert str(escape(c["description"])) in markup
    assert_no_hidden_source(html.unescape(markup), hidden)
    assert "✗" not in render_html(results["reference"]) and "✗" in markup


def test_render_html_escapes_everything():
    from dlcourse.selfcheck import render_html
    evil = "<script>alert(1)</script>"
    markup = render_html({"assignment": evil, "problems": [evil], "cell_errors": {evil: evil}, "manual": [],
                          "cells": [{"grade_id": "test_" + evil, "points": 1.0, "score": 0.0, "error": evil,
                                     "status": "ok",
                                     "checks": [{"description": evil, "passed": False, "message": evil,
                                                 "hidden": True}]}]})
    assert "<script>" not in markup and "&lt;script&gt;" in markup
    assert "<script>" not in render_html({"error": evil})


def test_notebook_path_finding(tmp_path, monkeypatch):
    from dlcourse import selfcheck
    folder = tmp_path / "course" / CHAPTER
    folder.mkdir(parents=True)
    monkeypatch.chdir(folder)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.setattr(selfcheck, "_ipython_user_ns", lambda: {})
    assert selfcheck.notebook_path() is None
    (folder / "a.ipynb").write_text("{}")
    assert selfcheck.notebook_path() == (folder / "a.ipynb").resolve()  # the only notebook here
    (folder / "b.ipynb").write_text("{}")
    assert selfcheck.notebook_path() is None  # two: cannot tell
    monkeypatch.setenv("JPY_SESSION_NAME", str(folder / "b.ipynb"))
    assert selfcheck.notebook_path() == (folder / "b.ipynb").resolve()
    monkeypatch.setenv("JPY_SESSION_NAME", f"course/{CHAPTER}/a.ipynb")  # relative to the server's root
    assert selfcheck.notebook_path() == (folder / "a.ipynb").resolve()
    monkeypatch.setattr(selfcheck, "_ipython_user_ns", lambda: {"__session__": str(folder / "b.ipynb")})
    assert selfcheck.notebook_path() == (folder / "b.ipynb").resolve()


def test_without_the_grader_the_student_is_told(tmp_path, monkeypatch):
    from dlcourse import selfcheck
    monkeypatch.setattr(selfcheck.importlib.util, "find_spec", lambda name: None)
    result = selfcheck.check_my_work(tmp_path / "x.ipynb", show=False)
    assert result["error"] == "no grader" and "autograder" in result["html"]


def test_the_notebook_side_holds_no_test_code(hidden):
    text = (ROOT / "dlcourse" / "selfcheck.py").read_text()
    assert_no_hidden_source(text, hidden)
    assert "BEGIN HIDDEN" not in text and "BEGIN SOLUTION" not in text
    assert "import autograder" not in text and "from autograder" not in text  # it only runs the command



def test_check_inside_the_repository_itself():
    """A learner on Binder checks course/<chapter>/<chapter>.ipynb in place: the sandbox must still work."""
    import subprocess
    import sys

    from autograder.course import ROOT, release_path
    chapter = "ch02_universal_approximation"
    proc = subprocess.run([sys.executable, "-m", "autograder", "check", "--json", str(release_path(chapter))],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    import json
    result = json.loads(proc.stdout)
    assert result["cells"] and all(c["score"] == 0 for c in result["cells"])
    assert not result["cell_errors"], result["cell_errors"]
    assert "not written yet" in proc.stdout
