"""Grade one submitted notebook: the unit of work that runs in parallel (locally or on Dask).

``grade_submission(task)`` takes a plain dict and returns a plain dict, so it can
be shipped to any worker process. It never raises for a broken submission: what
went wrong is reported in the result.
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

import nbformat
from IPython.core.inputtransformer2 import TransformerManager

from .client import Sandbox, SandboxError
from .notebooks import Chapter, grade_id, graded_names, read, release_path, role
from .sanitize import sanitize
from .verdicts import LIMIT_MESSAGES, CellVerdict, run_test_cell

PRELUDE = '''
class _NoShell:
    def __getattr__(self, name):
        return lambda *args, **kwargs: None
def get_ipython():
    return _NoShell()
def display(*args, **kwargs):
    return None
'''
PRELOADABLE = {"torch": "torch", "scipy": "scipy", "sklearn": "sklearn", "networkx": "networkx",
               "matplotlib": "matplotlib.pyplot"}
_python = TransformerManager().transform_cell


def sandbox_cells(notebook) -> list[tuple[str, str]]:
    """(name, python code) of the cells the sandbox runs: given code, answers, scratch work."""
    cells = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code" or role(cell) in ("tests", "demo"):
            continue
        name = grade_id(cell) or ("scratch" if "scratch" in cell.metadata.get("tags", []) else "given")
        try:
            code = _python(cell.source)
        except Exception:  # noqa: BLE001 - let the sandbox report the syntax error
            code = cell.source
        cells.append((f"cell {index} ({name})", code))
    return cells


def _preload(notebook, chapter: Chapter) -> tuple[str, ...]:
    text = "\n".join(c.source for c in notebook.cells + chapter.source.cells if c.cell_type == "code")
    return tuple(module for name, module in PRELOADABLE.items() if re.search(rf"\b{name}\b", text))


class Runner:
    """A sandbox with the notebook's code in it, restarted (code replayed) after a crash or timeout."""

    def __init__(self, cells, limits, preload, budget_end, max_starts=3, hide=()):
        self.cells, self.limits, self.preload, self.hide = cells, limits, preload, tuple(hide)
        self.budget_end, self.starts, self.max_starts = budget_end, 0, max_starts
        self.box: Sandbox | None = None
        self.cell_errors: dict[str, str] = {}
        self.fatal: set[str] = set()  # cells that killed a sandbox: not replayed

    def ready(self) -> Sandbox | None:
        if self.box is not None and self.box.dead is None:
            return self.box
        if self.box is not None:
            self.box.close()
            self.box = None
        while self.starts < self.max_starts and time.monotonic() < self.budget_end:
            self.starts += 1
            box = Sandbox(self.limits, self.preload, self.hide).start()
            current = "prelude"
            try:
                box.run_cell(PRELUDE, "prelude")
                for name, code in self.cells:
                    if name in self.fatal:
                        continue
                    current = name
                    seconds = min(self.limits["setup_seconds"], max(1.0, self.budget_end - time.monotonic()))
                    error = box.run_cell(code, name, seconds)
                    if error and name not in self.cell_errors:
                        self.cell_errors[name] = f"{error['type']}: {error['message']}"
                self.box = box
                return box
            except SandboxError as exc:
                self.fatal.add(current)
                self.cell_errors[current] = LIMIT_MESSAGES.get(exc.kind, str(exc)) + " (skipped when re-running)"
                box.close()
        return None

    def close(self):
        if self.box is not None:
            self.box.close()


def grade_submission(task: dict) -> dict:
    """task: student, assignment, notebook (file name), path (or None), limits (optional)."""
    started = time.monotonic()
    from .client import DEFAULT_LIMITS
    limits = {**DEFAULT_LIMITS, **(task.get("limits") or {})}
    chapter = Chapter.load(task["assignment"])
    release = read(release_path(task["assignment"]))
    problems = list(task.get("problems") or [])
    submitted = None
    if task.get("path"):
        try:
            submitted = nbformat.reads(open(task["path"], encoding="utf-8", errors="replace").read(), as_version=4)
            if not isinstance(submitted.get("cells"), list):
                raise ValueError("no cells")
        except Exception as exc:  # noqa: BLE001 - invalid JSON, wrong format, unreadable file
            problems.append(f"the notebook could not be read ({type(exc).__name__}): graded as the untouched release")
            submitted = None
    notebook, notes = sanitize(submitted if submitted is not None else release, release)
    problems += notes

    names = graded_names(chapter.source)
    cells = sandbox_cells(notebook)
    hide = list(task.get("hide") or [])  # the class and OUT, given by the class grader
    runner = Runner(cells, limits, _preload(notebook, chapter), started + limits["notebook_seconds"], hide=hide)
    verdicts: list[CellVerdict] = []
    status = "graded"
    try:
        for cell in chapter.cells("tests"):
            gid, points = grade_id(cell), float(cell.metadata["nbgrader"].get("points", 0))
            box = runner.ready()
            if box is None:
                verdicts.append(CellVerdict(gid, points, 0.0, [], "not run: the notebook's limits were reached",
                                            "not run"))
                status = "limit"
                continue
            seconds = min(limits["cell_seconds"], max(1.0, started + limits["notebook_seconds"] - time.monotonic()))
            verdict = run_test_cell(box, gid, cell.source, points, names, seconds)
            if verdict.status != "ok":
                status = "limit"
            verdicts.append(verdict)
    finally:
        runner.close()

    manual = []
    handed_out = {grade_id(c): c.source.strip() for c in release.cells if role(c) == "answer"}
    for cell in notebook.cells:
        if role(cell) == "answer":
            meta = cell.metadata["nbgrader"]
            # unanswered: empty, or still the text the release handed out
            unanswered = cell.source.strip() in ("", "YOUR ANSWER HERE", handed_out.get(meta["grade_id"]))
            manual.append({"grade_id": meta["grade_id"], "points": float(meta.get("points", 0)),
                           "score": 0.0 if unanswered else None, "answer": cell.source})
    result = {
        "student": task["student"], "assignment": task["assignment"], "notebook": task["notebook"],
        "status": status, "problems": problems, "cell_errors": runner.cell_errors,
        "restarts": max(runner.starts - 1, 0),
        "cells": [v.as_dict() for v in verdicts], "manual": manual,
        "notebook_json": nbformat.writes(notebook),
    }
    from .outputs import feedback_html, totals
    result["feedback_html"] = feedback_html(result, *totals(result))
    result["seconds"] = round(time.monotonic() - started, 3)
    return result


if __name__ == "__main__":  # python -m autograder.job <assignment> <notebook.ipynb>
    import sys
    result = grade_submission({"student": "cli", "assignment": sys.argv[1], "notebook": sys.argv[1] + ".ipynb",
                               "path": sys.argv[2]})
    result.pop("notebook_json")
    print(json.dumps(result, indent=1))
