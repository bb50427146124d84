"""Synthetic submissions, built on the release as a student would: for tests and benchmarks.

    reference("ch01_perceptron")                         # the release with the solutions filled in
    untouched("ch01_perceptron")                         # the release as handed out
    filled("ch01_perceptron", {"margin": "def margin(...): ..."})   # one answer replaced
    write_class(folder, {("alice", "ch01_perceptron"): notebook, ...})
    write_class(folder, {("eve", "ch01_perceptron"): Link("/elsewhere/x.ipynb")})     # a symbolic link
    write_class(folder, {("eve", "ch01_perceptron"): Renamed("my copy.ipynb", nb)})  # another file name
"""
from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from pathlib import Path

import nbformat

from .course import Chapter, grade_id, read, release_path, role, strip_solution_markers


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


@dataclass(frozen=True)
class Link:
    """A symbolic link to ``target`` where the notebook (``at="notebook"``), the assignment folder
    (``"assignment"``) or the student folder (``"student"``) would be."""
    target: str
    at: str = "notebook"


@dataclass(frozen=True)
class Renamed:
    """A notebook (or raw text) written under another file name in the assignment folder."""
    file_name: str
    notebook: object


def write_class(folder: Path, notebooks: dict[tuple[str, str], object]) -> Path:
    """Lay out ``folder/<student>/<assignment>/<assignment>.ipynb``; a str value is written as raw text,
    a ``Link`` as a symbolic link, a ``Renamed`` under its own file name."""
    folder = Path(folder)
    for (student, chapter), nb in notebooks.items():
        path = folder / student / chapter / f"{chapter}.ipynb"
        if isinstance(nb, Link):
            link = {"notebook": path, "assignment": path.parent, "student": path.parent.parent}[nb.at]
            link.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(nb.target, link)
            continue
        if isinstance(nb, Renamed):
            path, nb = path.parent / nb.file_name, nb.notebook
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(nb, str):
            path.write_text(nb, encoding="utf-8", errors="surrogatepass")
        else:
            nbformat.write(nb, str(path))
    return folder
