"""Plausible mistakes of every chapter: the tests of its tests (``quickcheck``, the grading proofs, the
kernel tests and the benchmarks all load them here).

A file ``autograder/tests/mutants/<chapter>.py`` (``FOLDER``) holds

    from autograder.mistakes import swap
    MUTANTS = {function: {mistake: swap(old, new) | swap((old, new), (old2, new2), ...) | "<whole cell>"}}
    INTEGRATION = {"test_integration_x": ["function/mistake", ...]}   # optional

A mistake is written as an edit of the reference solution of its function (the solution cell
``function`` with the BEGIN/END SOLUTION markers removed): each ``(old, new)`` replaces a piece of
text that occurs exactly once in the cell as edited so far. A plain string is the whole content of
the solution cell, kept only where an edit cannot express the mistake. An INTEGRATION entry names
a mistake of MUTANTS that must also make that end-to-end check fail.

    load(chapter)        -> {function: {mistake: code of the whole solution cell}}
    integration(chapter) -> {test cell: [(function, mistake), ...]}

A mistake whose ``old`` no longer occurs exactly once (the reference changed) raises
``MistakeDoesNotApply`` naming the chapter, function and mistake: it never silently stops applying.
The files are read by path, as data: production code never imports the proof suite.
"""
from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass

from .course import ROOT, Chapter, strip_solution_markers

# one file of mistakes per chapter, <chapter>.py; data of the proof suite, read here by path (never imported)
FOLDER = ROOT / "autograder" / "tests" / "mutants"

__all__ = ["MistakeDoesNotApply", "Swap", "integration", "load", "swap"]


class MistakeDoesNotApply(ValueError):
    """An edit of a mistake does not match the reference exactly once."""


@dataclass(frozen=True)
class Swap:
    """Replacements applied in order to the reference solution cell of one function."""

    edits: tuple[tuple[str, str], ...]

    def apply(self, reference: str, where: str = "") -> str:
        source = reference
        for number, (old, new) in enumerate(self.edits, 1):
            count = source.count(old)
            if count != 1:
                raise MistakeDoesNotApply(
                    f"{where}: edit {number} of {len(self.edits)} expects {old!r} exactly once in the "
                    f"reference solution, found it {count} times (did the reference change?)")
            source = source.replace(old, new)
        return source


def swap(*edits) -> Swap:
    """``swap(old, new)`` for one replacement, ``swap((old, new), (old2, new2), ...)`` for several."""
    if len(edits) == 2 and all(isinstance(e, str) for e in edits):
        edits = (tuple(edits),)
    if not edits or not all(isinstance(e, tuple) and len(e) == 2 and all(isinstance(s, str) for s in e)
                            for e in edits):
        raise TypeError("swap(old, new) or swap((old, new), ...) with strings")
    return Swap(tuple(edits))


@functools.cache
def _module(chapter: str):
    """The chapter's file of mistakes, run once (its ``swap``s are this module's)."""
    path = FOLDER / f"{chapter}.py"
    if not path.is_file():
        raise FileNotFoundError(f"no plausible mistakes for {chapter}: {path} is missing")
    spec = importlib.util.spec_from_file_location(f"autograder.mistakes.{chapter}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def _references(chapter: str) -> dict[str, str]:
    return {cell.metadata["nbgrader"]["grade_id"]: strip_solution_markers(cell.source)
            for cell in Chapter.load(chapter).cells("solution")}


def load(chapter: str) -> dict[str, dict[str, str]]:
    """{function: {mistake: code of the whole solution cell}}, in the order the file writes them."""
    out: dict[str, dict[str, str]] = {}
    for function, wrong in _module(chapter).MUTANTS.items():
        out[function] = {}
        for mistake, spec in wrong.items():
            where = f"{chapter} {function}/{mistake}"
            if isinstance(spec, Swap):
                reference = _references(chapter).get(function)
                if reference is None:
                    raise MistakeDoesNotApply(f"{where}: no solution cell {function!r} to edit")
                out[function][mistake] = spec.apply(reference, where)
            elif isinstance(spec, str):
                out[function][mistake] = spec
            else:
                raise TypeError(f"{where}: a mistake is a swap(...) or a whole cell's source, not {type(spec)}")
    return out


def integration(chapter: str) -> dict[str, list[tuple[str, str]]]:
    """Integration test cell -> the (function, mistake)s of MUTANTS that must also fail it."""
    return {cell: [tuple(entry.split("/", 1)) for entry in entries]
            for cell, entries in getattr(_module(chapter), "INTEGRATION", {}).items()}
