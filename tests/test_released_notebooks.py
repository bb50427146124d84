"""Notebooks already handed out keep working: every name they import from ``dlcourse`` stays importable.

The notebooks are copies of earlier releases kept in ``tests/released/`` (see its README).
"""
import ast
import importlib
from pathlib import Path

import nbformat
import pytest

from tests.helpers import code_cell_trees

RELEASED = sorted((Path(__file__).parent / "released").glob("*.ipynb"))


def dlcourse_imports(notebook: Path) -> list[tuple[str, str | None]]:
    """(module, name) of every ``from dlcourse... import name`` and (module, None) of every
    ``import dlcourse...`` in the notebook's code cells (IPython magics are not Python: skipped)."""
    found = []
    for _, tree in code_cell_trees(nbformat.read(str(notebook), as_version=4)):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "dlcourse":
                found += [(node.module, alias.name) for alias in node.names]
            elif isinstance(node, ast.Import):
                found += [(alias.name, None) for alias in node.names if alias.name.split(".")[0] == "dlcourse"]
    return found


def test_released_notebooks_are_kept():
    assert {p.stem for p in RELEASED} >= {"ch03_backprop", "ch04_cnn", "ch05_rnn", "ch06_transformers", "ch07_gnn",
                                          "ch08_tricks", "ch08_tricks_train_digits"}


@pytest.mark.parametrize("notebook", RELEASED, ids=[p.stem for p in RELEASED])
def test_every_name_a_released_notebook_imports_still_exists(notebook):
    imports = dlcourse_imports(notebook)
    assert imports, f"{notebook.name} imports nothing from dlcourse: is it a released notebook?"
    missing = []
    for module, name in imports:
        try:
            loaded = importlib.import_module(module)
        except ImportError as exc:
            missing.append(f"{module} ({exc})")
            continue
        if name is not None and not hasattr(loaded, name):
            try:  # `from package import submodule`
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                missing.append(f"{module}.{name}")
    assert not missing, f"{notebook.name} imports names that no longer exist: {missing}"


def test_a_chapter_number_still_names_its_widgets():
    """Releases before 28 Nov 2026 import ``dlcourse.widgets.ch04``; the module is now ``ch04_cnn``."""
    from autograder.course import chapters
    for chapter in chapters():
        short = importlib.import_module(f"dlcourse.widgets.{chapter[:4]}")
        assert short is importlib.import_module(f"dlcourse.widgets.{chapter}"), chapter
