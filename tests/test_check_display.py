"""What a test cell shows in a student's kernel: a short verdict, never a library traceback.

One small notebook runs in a real IPython kernel (nbclient): a function not written yet, one that is
wrong, one that raises inside the student's own code, one that passes. Its outputs are checked as
JupyterLab shows them and as nbgrader's Validate prints them (nbgrader's own ``Validator`` layout,
which cuts lines wider than its ``width``).
"""
from __future__ import annotations

import os
import re

import nbformat
import pytest
from nbclient import NotebookClient

ANSI = re.compile(r"\x1b\[[0-9;]*m")
HINT = ("a point exactly on the hyperplane gets the label 0, neither +1 nor -1: use np.sign, "
        "which returns 0 there, rather than a comparison with >= or <=")

CELLS = [
    "import numpy as np\nfrom dlcourse.testing import check, assert_close",
    "def not_written(x):\n    raise NotImplementedError()",
    "def wrong(x):\n    return x + 1",
    "def broken(x):\n    y = x[:, 7]\n    return y",
    "def right(x):\n    return 2 * x",
    # test cells: 5, 6, 7, 8
    "with check('doubles a vector (not written)'):\n    assert_close(not_written(np.ones(2)), [2.0, 2.0])",
    "with check('doubles a vector (wrong)'):\n"
    f"    assert_close(wrong(np.array([1.0, 3.0])), [2.0, 6.0], hint={HINT!r})",
    "with check('doubles a matrix (raises in the student\\'s code)'):\n    broken(np.ones((2, 2)))",
    "for n in range(1, 6):\n    with check(f'doubles a vector of length {n}'):\n"
    "        assert_close(right(np.ones(n)), 2 * np.ones(n))",
]


@pytest.fixture(scope="module")
def executed():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    client = NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True)
    client.execute(env={**os.environ, "MPLBACKEND": "Agg"})
    return nb


def error_of(cell):
    errors = [o for o in cell.outputs if o.output_type == "error"]
    assert len(errors) == 1, cell.outputs
    return errors[0], [ANSI.sub("", line) for line in "\n".join(errors[0].traceback).splitlines()]


def assert_short_block(lines):
    assert len(lines) <= 8, "\n".join(lines)
    text = "\n".join(lines)
    for library in ("dlcourse/testing.py", "site-packages", "Traceback", "The above exception",
                    "assert_close(", "File "):
        assert library not in text, f"the block shows {library!r}:\n{text}"


def test_a_missing_function_says_which_and_not_written_yet(executed):
    error, lines = error_of(executed.cells[5])
    assert error.ename == "CheckFailed"
    assert lines[0] == "Check failed: doubles a vector (not written)"
    assert "not_written is not written yet" in "\n".join(lines)
    assert_short_block(lines)


def test_a_wrong_result_shows_got_expected_and_the_whole_hint(executed):
    _, lines = error_of(executed.cells[6])
    text = " ".join(line.strip() for line in lines)
    assert lines[0] == "Check failed: doubles a vector (wrong)"
    assert "got 4.0, expected 6.0" in text and "index (1,)" in text and HINT in text
    assert_short_block(lines)
    assert max(map(len, lines)) <= 78


def test_an_error_in_the_students_code_shows_the_students_line_only(executed):
    _, lines = error_of(executed.cells[7])
    text = "\n".join(lines)
    assert "IndexError: index 7 is out of bounds" in text
    assert "raised in your code: Cell In[4], line 2, in broken" in text and "y = x[:, 7]" in text
    assert_short_block(lines)


def test_a_passing_cell_says_so_in_one_line(executed):
    cell = executed.cells[8]
    assert [o.output_type for o in cell.outputs] == ["stream"]
    assert cell.outputs[0].text == "5 checks passed\n"
    for other in executed.cells[:5]:  # cells without checks print nothing
        assert not other.outputs
    for failed in executed.cells[5:8]:  # nor does a failing cell
        assert not [o for o in failed.outputs if o.output_type == "stream"]


def test_nbgrader_validate_shows_every_line_whole(executed):
    """nbgrader's Validate prints a failing cell's error through ``Validator._indent``, which cuts each
    line at ``width - 3`` characters with "...": the block's lines fit, so the hint is shown whole."""
    from nbgrader.validator import Validator

    validator = Validator()
    for cell in executed.cells[5:8]:
        shown = validator._indent(validator._extract_error(cell))
        assert not any(line.endswith("...") for line in shown.splitlines()), shown
    shown = validator._indent(validator._extract_error(executed.cells[6]))
    assert HINT in " ".join(line.strip() for line in shown.splitlines())


def test_nbgrader_validate_shows_the_test_cells_whole(tmp_path, monkeypatch):
    """Validate prints a failing test cell's source too, cut at the same width: the course's nbgrader
    configuration (jupyter-config/nbgrader_config.json, installed into the environment's etc/jupyter
    with the rest of jupyter-config/) makes it wide enough for every line of the release's test cells,
    and Validate (the command, and the lab's button, which loads its configuration this way) reads it."""
    import json

    from jupyter_core.paths import jupyter_config_path
    from nbgrader.apps import NbGrader
    from nbgrader.validator import Validator

    from autograder.course import ROOT, chapters, read, release_path, role

    width = json.loads((ROOT / "jupyter-config" / "nbgrader_config.json").read_text())["Validator"]["width"]
    longest = max(len(line) for chapter in chapters() for cell in read(release_path(chapter)).cells
                  if role(cell) == "tests" for line in cell.source.splitlines())
    assert len(Validator().indent) + longest <= width - 3, f"a test cell's line of {longest} characters is cut"
    monkeypatch.chdir(tmp_path)  # as a student's notebook folder: no nbgrader_config.py of the course
    app = NbGrader()
    app.config_file_paths.append([str(tmp_path)] + jupyter_config_path())
    app.load_config_file()
    assert app.config.Validator.width == width, "run make setup: jupyter-config/ is not installed"
