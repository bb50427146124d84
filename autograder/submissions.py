"""Synthetic submissions, built on the release as a student would: for tests and benchmarks.

    reference("ch01_perceptron")                         # the release with the solutions filled in
    untouched("ch01_perceptron")                         # the release as handed out
    filled("ch01_perceptron", {"margin": "def margin(...): ..."})   # one answer replaced
    write_class(folder, {("alice", "ch01_perceptron"): notebook, ...})
"""
from __future__ import annotations

import copy
from pathlib import Path

import nbformat

from .notebooks import Chapter, grade_id, read, release_path, role, strip_solution_markers


def untouched(chapter: str) -> nbformat.NotebookNode:
    return read(release_path(chapter))


def filled(chapter: str, replace: dict[str, str] | None = None, append: list[str] | None = None,
           answers: str | None = "A short answer.") -> nbformat.NotebookNode:
    """The release with reference solutions, ``replace`` overriding some; ``append`` adds scratch code cells."""
    replace = replace or {}
    solutions = {grade_id(c): strip_solution_markers(c.source)
                 for c in Chapter.load(chapter).cells("solution")}
    nb = copy.deepcopy(untouched(chapter))
    for cell in nb.cells:
        gid = grade_id(cell)
        if role(cell) == "solution":
            cell.source = replace.get(gid, solutions.get(gid, cell.source))
        elif role(cell) == "answer" and answers is not None:
            cell.source = answers
    for code in append or []:
        nb.cells.append(nbformat.v4.new_code_cell(code))
    return nb


def reference(chapter: str) -> nbformat.NotebookNode:
    return filled(chapter)


def write_class(folder: Path, notebooks: dict[tuple[str, str], object]) -> Path:
    """Lay out ``folder/<student>/<assignment>/<assignment>.ipynb``; a str value is written as raw text."""
    folder = Path(folder)
    for (student, chapter), nb in notebooks.items():
        path = folder / student / chapter / f"{chapter}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(nb, str):
            path.write_text(nb)
        else:
            nbformat.write(nb, str(path))
    return folder
