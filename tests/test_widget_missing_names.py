"""A widget's cell run before the cell that defines its function: one line naming that function, no traceback.

Every widget cell of the release runs in one fresh IPython kernel (nbclient) where no exercise was run: each
stops at the first name it is missing and shows ``missing_name_line`` for it, as the README promises ("a widget
whose function is missing says which one instead of a picture"). Any other NameError keeps its traceback.
"""
from __future__ import annotations

import ast
import builtins
import os
import re

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.course import chapters, nbgrader_meta, read, release_path
from dlcourse.widgets.explorer import missing_name_line

ANSI = re.compile(r"\x1b\[[0-9;]*m")
TYPO = "from dlcourse.widgets.ch01_perceptron import cover_explorer\n\ndef helper():\n    return undefined_name\n"


def free_names(source: str) -> set[str]:
    """The names a cell reads that it neither assigns, imports nor has as builtins."""
    tree = ast.parse(source)
    stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    stored |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    stored |= {a.asname or a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
               for a in n.names}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            and n.id not in stored and not hasattr(builtins, n.id)}


def widget_cells() -> list[tuple[str, str]]:
    """(chapter, source) of each cell of the release that builds a widget (calls a ``*_explorer``) and reads a
    name an earlier cell defines."""
    out = []
    for chapter in chapters():
        for cell in read(release_path(chapter)).cells:
            if cell.cell_type != "code" or nbgrader_meta(cell) or "dlcourse.widgets" not in cell.source:
                continue
            calls = [n for n in ast.walk(ast.parse(cell.source)) if isinstance(n, ast.Call)
                     and getattr(n.func, "id", getattr(n.func, "attr", "")).endswith("_explorer")]
            if calls and free_names(cell.source):
                out.append((chapter, cell.source))
    return out


CELLS = widget_cells()


@pytest.fixture(scope="module")
def executed():
    sources = [source for _, source in CELLS] + [TYPO + "helper()", "undefined_in_plain_cell + 1"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in sources])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    client = NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True)
    client.execute(env={**os.environ, "MPLBACKEND": "Agg"})
    return nb


def error_lines(cell) -> list[str]:
    errors = [o for o in cell.outputs if o.output_type == "error"]
    assert len(errors) == 1, cell.outputs
    return [ANSI.sub("", line) for line in "\n".join(errors[0].traceback).splitlines()]


def test_every_chapter_has_widget_cells_to_run():
    assert {chapter for chapter, _ in CELLS} >= {"ch01_perceptron", "ch02_universal_approximation"}
    assert len(CELLS) >= len(chapters())


def test_the_first_widget_of_chapter_1_names_its_function(executed):
    assert CELLS[0][0] == "ch01_perceptron" and "perceptron_steps_explorer(perceptron_train=" in CELLS[0][1]
    assert error_lines(executed.cells[0]) == [
        "`perceptron_train` is not defined yet: run the cell that defines `perceptron_train` first, "
        "then run this cell again."]


@pytest.mark.parametrize("index", range(len(CELLS)), ids=[f"{c}-{i}" for i, (c, _) in enumerate(CELLS)])
def test_a_widget_cell_run_first_says_in_one_line_which_function_is_missing(executed, index):
    chapter, source = CELLS[index]
    lines = error_lines(executed.cells[index])
    assert len(lines) == 1, "\n".join(lines)
    match = re.fullmatch(r"`(\w+)` is not defined yet: .*", lines[0])
    assert match and lines[0] == missing_name_line(match[1]), lines[0]
    assert match[1] in free_names(source), f"{chapter}: {match[1]} is not a name the cell reads"
    assert not [o for o in executed.cells[index].outputs if o.output_type == "display_data"]  # no widget half made


def test_other_name_errors_keep_their_traceback(executed):
    """A NameError raised inside a function, or in a cell that has nothing to do with the widgets, is shown
    as IPython shows it."""
    for cell, name in ((executed.cells[len(CELLS)], "undefined_name"),
                       (executed.cells[len(CELLS) + 1], "undefined_in_plain_cell")):
        text = "\n".join(error_lines(cell))
        assert f"NameError: name '{name}' is not defined" in text and "Cell In[" in text, text
