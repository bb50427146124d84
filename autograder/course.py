"""What the cells of a course notebook are, and the sources on disk.

Every code cell of a notebook has one role:

- ``solution``: an nbgrader solution cell; its grade_id names the graded function;
- ``tests``:    an nbgrader grade cell with points (public checks, then hidden ones);
- ``demo``:     tagged ``demo`` (widgets, plots, training demos): never run by the grader;
- ``given``:    any other code (imports, data, helpers): run before the student's code.

Markdown cells are ``prose``, or ``answer`` when they are manually graded.

Authoring tools (``to_py``, ``from_py``, ``normalize_files``), on the command line (see solutions/README.md)::

    python -m autograder to-py   solutions/ch01_perceptron/ch01_perceptron.ipynb out.py
    python -m autograder from-py out.py solutions/ch01_perceptron/ch01_perceptron.ipynb
    python -m autograder normalize solutions/*/*.ipynb
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
COURSE = ROOT / "course"

HIDDEN_BEGIN = "### BEGIN HIDDEN TESTS"
HIDDEN_END = "### END HIDDEN TESTS"
SOLUTION_REGION = re.compile(r"^[ \t]*### BEGIN SOLUTION[ \t]*\n(.*?)^[ \t]*### END SOLUTION[ \t]*\n?",
                             re.S | re.M)
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def chapters() -> list[str]:
    """Assignment ids, in order: every folder of solutions/ holding its own notebook."""
    return sorted(p.name for p in SOLUTIONS.iterdir() if (p / f"{p.name}.ipynb").is_file())


# The chapters whose grading takes longest (their checks train a model), slowest first: a class is graded
# in this order so that no long job starts last and leaves the other workers idle (measured, Nov 2026).
SLOWEST_TO_GRADE = ("ch04_cnn", "ch11_diffusion", "ch07_gnn", "ch06_transformers", "ch05_rnn")


def grading_order(chapter: str) -> tuple[int, str]:
    """Sort key of a chapter in a class's queue: the slowest first, then the others; a chapter's notebooks
    one after another, so that a grading process makes each chapter's warm template once (it keeps two), not
    once per notebook as a class listed student by student would have it."""
    return (SLOWEST_TO_GRADE.index(chapter) if chapter in SLOWEST_TO_GRADE else len(SLOWEST_TO_GRADE), chapter)


def source_path(chapter: str) -> Path:
    return SOLUTIONS / chapter / f"{chapter}.ipynb"


def release_path(chapter: str) -> Path:
    return COURSE / chapter / f"{chapter}.ipynb"


def read(path) -> nbformat.NotebookNode:
    return nbformat.read(str(path), as_version=4)


def nbgrader_meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def grade_id(cell) -> str | None:
    return nbgrader_meta(cell).get("grade_id")


def role(cell) -> str:
    meta = nbgrader_meta(cell)
    if cell.cell_type == "markdown":
        return "answer" if meta.get("solution") else "prose"
    if cell.cell_type != "code":
        return "prose"
    if meta.get("solution"):
        return "solution"
    if meta.get("grade"):
        return "tests"
    if "demo" in cell.get("metadata", {}).get("tags", []):
        return "demo"
    return "given"


def defined_names(source: str) -> list[str]:
    """Top-level functions and classes a cell defines (empty when it does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]


def graded_names(nb) -> list[str]:
    """The names the tests may call: the grade_ids of the solution code cells."""
    return [grade_id(c) for c in nb.cells if role(c) == "solution"]


def strip_solution_markers(source: str) -> str:
    """The reference code of a solution cell, with the BEGIN/END SOLUTION lines removed."""
    return SOLUTION_REGION.sub(lambda m: m.group(1), source)


def split_hidden(source: str) -> tuple[str, list[tuple[int, int]]]:
    """(public source, hidden line ranges as 1-based inclusive (first, last) of the full source)."""
    public, ranges, start = [], [], None
    for number, line in enumerate(source.splitlines(), 1):
        if line.strip() == HIDDEN_BEGIN:
            start = number
        elif line.strip() == HIDDEN_END and start is not None:
            ranges.append((start, number))
            start = None
        elif start is None:
            public.append(line)
    if start is not None:
        ranges.append((start, len(source.splitlines())))
    return "\n".join(public), ranges


def count_checks(source: str) -> int:
    """How many ``with check(...)`` blocks a test cell holds (0 when it does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return 0
    total = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.With):
            for item in node.items:
                call = item.context_expr
                if isinstance(call, ast.Call) and getattr(call.func, "id", getattr(call.func, "attr", "")) == "check":
                    total += 1
    return total


def normalize(nb) -> nbformat.NotebookNode:
    """Outputs stripped, kernelspec set, ids kept: the form sources are committed in."""
    nb.metadata = {"kernelspec": dict(KERNELSPEC),
                   "language_info": {"name": "python"}}
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        meta = dict(cell.get("metadata", {}))
        for key in ("execution", "collapsed", "scrolled", "jupyter", "editable", "deletable", "trusted"):
            meta.pop(key, None)
        cell.metadata = meta
    nbformat.validator.normalize(nb)
    return nb


def write(nb, path) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))


def normalize_files(paths) -> None:
    """Rewrite each notebook stored clean (outputs, execution counts and volatile metadata removed)."""
    for path in paths:
        write(normalize(read(path)), path)


def to_py(notebook, script) -> None:
    """The notebook as a jupytext percent-format script, to author as text."""
    import jupytext
    jupytext.write(read(notebook), str(script), fmt="py:percent")


def from_py(script, notebook) -> None:
    """The script back into the notebook, stored clean; the cell ids of an existing notebook are kept."""
    import jupytext
    nb = jupytext.read(str(script))
    old = {}
    if Path(notebook).exists():  # keep cell ids stable across round trips
        old = {(c.cell_type, c.source): c.get("id") for c in read(notebook).cells}
    nb = nbformat.v4.upgrade(nb) if nb.nbformat < 4 else nb
    nb.nbformat, nb.nbformat_minor = 4, 5
    for i, cell in enumerate(nb.cells):
        cell["id"] = old.get((cell.cell_type, cell.source)) or grade_id(cell) or f"cell-{i:03d}"
    seen = set()
    for i, cell in enumerate(nb.cells):
        if cell["id"] in seen:
            cell["id"] = f"{cell['id']}-{i:03d}"
        seen.add(cell["id"])
    write(normalize(nb), notebook)


@dataclass
class Chapter:
    """A chapter's source notebook, read once."""
    name: str
    source: nbformat.NotebookNode

    @classmethod
    def load(cls, name: str) -> "Chapter":
        return cls(name, read(source_path(name)))

    def cells(self, *roles):
        return [c for c in self.source.cells if role(c) in roles]

    def test_cells(self) -> dict[str, nbformat.NotebookNode]:
        return {grade_id(c): c for c in self.cells("tests")}
