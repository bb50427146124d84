"""Issue 40, finding 3: a check that fails because an earlier cell was stopped or raised says so in one line.

When a cell of the notebook is stopped by a limit (or raises) before it binds a name, or an earlier check of the
same test cell is, every check that needs the name used to fail with ``NameError: name 'run' is not defined``
(``KeyError: 'margin'`` for a graded function missing from the student's process), which reads as the student's
own bug. Each case below is graded by the real job (sandbox, limits, verdicts), only the test cell it is about
run, and read where a student reads it: the self-check's table (``python -m autograder check --details``), the
autograded notebook's output under the test cell, and the feedback page. A student's own NameError (a typo in
their function, nothing stopped) still reads as their NameError.
"""
from __future__ import annotations

import copy
import json

import nbformat
import pytest
from markupsafe import escape

from autograder import check as self_check
from autograder import job
from autograder.course import Chapter, grade_id, role, strip_solution_markers
from autograder.feedback import autograded_notebook, feedback_html
from autograder.sandbox import isolation
from autograder.settings import Limits
from autograder.submissions import filled, untouched

SPIN = "\nwhile True:  # an experiment left running\n    pass\n"


@pytest.fixture(autouse=True)
def a_sandbox():
    assert isolation.probe() is None, f"no sandbox can be made here: {isolation.probe()}"


def graded(tmp_path, monkeypatch, chapter: str, notebook, test: str, limits: str = ""):
    """(the result, the self-check's table, the autograded notebook's text under ``test``, the feedback page) of
    ``notebook`` graded as ``python -m autograder check --details --limits LIMITS`` grades it, only the test cell
    ``test`` of the chapter run (the others cost time and say nothing here)."""
    loaded, release = job.course_files(chapter)
    source = copy.deepcopy(loaded.source)
    source.cells = [c for c in source.cells if role(c) != "tests" or grade_id(c) == test]
    monkeypatch.setattr(job, "course_files", lambda assignment: (Chapter(chapter, source), release))
    path = tmp_path / f"{chapter}.ipynb"
    nbformat.write(notebook, str(path))
    mapping = dict(item.split("=") for item in limits.split())
    result = self_check.check(path, Limits.from_mapping({k: float(v) for k, v in mapping.items()}))
    table = self_check.format_table(result, str(path), details=True)
    result.notebook_json = nbformat.writes(notebook)  # as `make grade` keeps it, for the pages
    cells = [c for c in autograded_notebook(result).cells if grade_id(c) == test]
    under = "\n".join(out.data["text/plain"] for out in cells[0].outputs)
    return result, table, under, feedback_html(result)


def messages(result, test: str) -> list[str]:
    verdict = next(c for c in result.cells if c.grade_id == test)
    return [check.message for check in verdict.checks if not check.passed]


def assert_said_everywhere(line: str, table: str, under: str, page: str) -> None:
    """``line`` in the table, under the test cell, and (escaped) on the page; no bare NameError or KeyError."""
    flat = " ".join(table.split())  # the table wraps its lines
    assert line in flat, table
    assert line in " ".join(under.split()), under
    assert str(escape(line)) in page
    for text in (flat, under, page):
        assert "NameError" not in text and "KeyError" not in text


def cell_label(notebook, gid: str) -> str:
    """The grader's name of the notebook cell ``gid`` (as the notes name it: ``cell 6 (margin)``)."""
    index = next(i for i, c in enumerate(notebook.cells) if grade_id(c) == gid)
    return f"cell {index} ({gid})"


def test_a_solution_cell_stopped_by_its_limit_is_named_by_the_checks_that_need_it(tmp_path, monkeypatch):
    """ch01: the margin cell defines margin, then spins: stopped after 2 s of CPU, skipped when re-running, so
    margin is missing from the student's process; each check of margin says which cell and why."""
    solution = next(c.source for c in Chapter.load("ch01_perceptron").cells("solution") if grade_id(c) == "margin")
    nb = filled("ch01_perceptron", {"margin": strip_solution_markers(solution) + SPIN})
    result, table, under, page = graded(tmp_path, monkeypatch, "ch01_perceptron", nb, "test_margin",
                                        "cell_seconds=2 setup_seconds=2")
    line = f"{cell_label(nb, 'margin')} was stopped after 2 s of CPU; this check needs `margin` from it"
    assert messages(result, "test_margin") and set(messages(result, "test_margin")) == {line}, result.cells
    assert_said_everywhere(line, table, under, page)
    # the stop itself, a note of the table: how to raise the limit, for a self-check and for a class
    note = next(n for n in result.notes() if n.startswith(cell_label(nb, "margin")))
    assert note.startswith(f"{cell_label(nb, 'margin')} was stopped: the cell used its 2 s of CPU time"), note
    assert 'make check LIMITS="setup_seconds=4"' in note and 'make grade LIMITS="setup_seconds=4"' in note, note
    assert note in " ".join(table.split())


def test_a_solution_cell_that_raised_before_its_def_is_named(tmp_path, monkeypatch):
    nb = filled("ch01_perceptron", {"margin": "import numpy as np\nnp.ones(3) + np.ones(4)  # a try-out\n\n"
                                              "def margin(X, y, w, b):\n    return 0.0\n"})
    result, table, under, page = graded(tmp_path, monkeypatch, "ch01_perceptron", nb, "test_margin")
    line = f"{cell_label(nb, 'margin')} raised ValueError; this check needs `margin` from it"
    assert set(messages(result, "test_margin")) == {line}, result.cells
    assert_said_everywhere(line, table, under, page)


def train_capstone(body: str):
    nb = copy.deepcopy(untouched("ch12_capstone"))
    for cell in nb.cells:
        if grade_id(cell) == "train_capstone":
            cell.source = "def train_capstone(*args, **kwargs):\n" + body
    return nb


def test_a_check_stopped_by_cell_seconds_is_named_by_the_checks_that_need_its_run(tmp_path, monkeypatch):
    """ch12: the first check of test_train_capstone binds ``run`` from the student's training, which spins past
    cell_seconds=2; the later checks that read ``run`` name that check, and the checks that could not run after
    the stop say so."""
    nb = train_capstone("    while True:\n        pass\n")
    result, table, under, page = graded(tmp_path, monkeypatch, "ch12_capstone", nb, "test_train_capstone",
                                        "cell_seconds=2")
    stopped, *later = messages(result, "test_train_capstone")
    assert 'make check LIMITS="cell_seconds=4"' in stopped and 'make grade LIMITS="cell_seconds=4"' in stopped
    line = "check 1 of this cell was stopped after 2 s of CPU; this check needs `run` from it"
    assert line in later, later
    assert all(m in (line, "not run: check 1 of this cell was stopped after 2 s of CPU") for m in later), later
    assert_said_everywhere(line, table, under, page)
    assert "SandboxError" not in table


def test_a_check_that_raised_is_named_by_the_checks_that_need_its_run(tmp_path, monkeypatch):
    nb = train_capstone("    raise ValueError('no data loaded yet')\n")
    result, table, under, page = graded(tmp_path, monkeypatch, "ch12_capstone", nb, "test_train_capstone")
    raised, *later = messages(result, "test_train_capstone")
    assert raised.startswith("ValueError: no data loaded yet"), raised
    line = "check 1 of this cell raised ValueError; this check needs `run` from it"
    assert line in later, later
    assert_said_everywhere(line, table, under, page)


def test_the_students_own_name_error_is_theirs(tmp_path, monkeypatch):
    """A typo in perceptron_predict (``out``, a name its test cell binds too); nothing stopped, nothing raised."""
    typo = "def perceptron_predict(X, w, b):\n    outs = np.sign(np.asarray(X, float) @ w + b)\n    return out\n"
    nb = filled("ch01_perceptron", {"perceptron_predict": typo})
    result, table, under, page = graded(tmp_path, monkeypatch, "ch01_perceptron", nb, "test_perceptron_predict")
    failing = messages(result, "test_perceptron_predict")
    assert failing and set(failing) == {"NameError: name 'out' is not defined"}, failing
    assert "NameError: name 'out' is not defined" in table and "this check needs" not in table
    assert "this check needs" not in json.dumps(result.to_json())
