"""Shortcuts: a student's routes to points without building the answer, registered per chapter.

A file ``autograder/tests/shortcuts/<chapter>.py`` defines

    SHORTCUTS = {"<name>": {"replace": {<solution grade_id>: <full cell source>},
                            "append": [<scratch code cell>, ...]}}      # "append" optional

Each entry is graded as one notebook (the reference with those cells replaced, the scratch cells appended) in the
big grading run (``test_grading.py``, fixture ``graded``, student ``shortcut-<name>``): every auto-graded test cell
whose source refers to a replaced function scores 0, every other cell keeps the reference's score. Keep entries
few (at most 2 per chapter; independent shortcuts of different functions go in one entry). An empty registry is
fine. The files are read by path, as data.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

FOLDER = Path(__file__).resolve().parent


def load() -> dict[str, dict[str, dict]]:
    """{chapter: {name: entry}} of every ``<chapter>.py`` of this folder, checked for its shape."""
    found: dict[str, dict[str, dict]] = {}
    for path in sorted(FOLDER.glob("*.py")):
        if path.name.startswith("_"):
            continue
        spec = importlib.util.spec_from_file_location(f"_shortcuts_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        entries = getattr(module, "SHORTCUTS", None)
        if not isinstance(entries, dict):
            raise ValueError(f"{path.name}: SHORTCUTS must be a dict of entries")
        for name, entry in entries.items():
            if not (isinstance(entry, dict) and isinstance(entry.get("replace"), dict) and entry["replace"]
                    and set(entry) <= {"replace", "append"} and isinstance(entry.get("append", []), list)):
                raise ValueError(f"{path.name}: shortcut {name!r} must be {{'replace': {{grade_id: source}}, "
                                 f"'append': [code, ...]}}")
        found[path.stem] = dict(entries)
    return found


def replaced(entry: dict) -> set[str]:
    """The graded names an entry replaces: every test cell that refers to one of them must score 0."""
    return set(entry["replace"])
