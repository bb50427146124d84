"""The reference solutions, for tests and benchmarks only (never imported by notebooks).

    ref = load("ch01_perceptron")
    ref.perceptron_train(X, y)
"""
from __future__ import annotations

import types

from IPython.core.inputtransformer2 import TransformerManager

from .course import Chapter, role, strip_solution_markers

_python = TransformerManager().transform_cell


def code_cells(chapter: str, replace: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """(role, python source) of the given and solution cells, solution markers removed.

    ``replace`` maps a solution grade_id to the code that stands in its place
    (a student's attempt, a plausible mistake).
    """
    replace = replace or {}
    out = []
    for cell in Chapter.load(chapter).cells("given", "solution"):
        source = cell.source
        if role(cell) == "solution":
            gid = cell.metadata["nbgrader"]["grade_id"]
            source = replace.get(gid, strip_solution_markers(source))
        out.append((role(cell), _python(source)))
    return out


def namespace(chapter: str, replace: dict[str, str] | None = None) -> dict:
    ns: dict = {"__name__": "__main__"}
    for _, source in code_cells(chapter, replace):
        exec(compile(source, f"<{chapter}>", "exec"), ns)
    return ns


def load(chapter: str) -> types.SimpleNamespace:
    ns = namespace(chapter)
    return types.SimpleNamespace(**{k: v for k, v in ns.items() if not k.startswith("__")})
