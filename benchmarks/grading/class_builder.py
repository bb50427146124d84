"""The synthetic class: correct, partial, untouched and broken submissions of every chapter."""
from __future__ import annotations

import json
import random
from pathlib import Path

PATTERN = ["correct", "partial", "correct", "untouched", "partial", "correct", "hang", "partial", "correct",
           "json", "correct", "partial", "untouched", "correct", "partial", "exit", "correct", "partial",
           "correct", "correct"]
KINDS = ["correct", "partial", "untouched", "json", "hang", "exit"]
HANG = "while True:\n    pass\n"
EXIT = "import os; os._exit(1)\n"


def mutants(chapter: str) -> dict:
    from autograder.mistakes import load
    try:
        return load(chapter)
    except ImportError:  # a chapter without a mistakes file
        return {}


def submission(chapter: str, kind: str, rng: random.Random):
    """(notebook or raw text, description of what was done)."""
    import nbformat

    from autograder.submissions import filled, reference, untouched
    if kind == "correct":
        return reference(chapter), {}
    if kind == "untouched":
        return untouched(chapter), {}
    if kind == "partial":
        table_ = mutants(chapter)
        names = sorted(table_)
        if not names:
            return untouched(chapter), {"note": "no mutants: graded as untouched"}
        picks = rng.sample(names, min(len(names), rng.choice([1, 2])))
        replace = {name: table_[name][rng.choice(sorted(table_[name]))] for name in picks}
        chosen = {name: next(k for k, v in table_[name].items() if v == replace[name]) for name in picks}
        return filled(chapter, replace), {"mutants": chosen}
    if kind == "json":
        text = nbformat.writes(reference(chapter))
        return text[: len(text) // 2], {}
    if kind == "hang":
        return filled(chapter, append=[HANG]), {}
    if kind == "exit":
        return filled(chapter, append=[EXIT]), {}
    raise ValueError(kind)


def build_class(folder: Path, chapters: list[str], students: int, seed: int = 0,
                kinds: list[str] | None = None) -> dict:
    """Write the class; returns the manifest {"<student>/<chapter>": {"kind": ..., ...}}."""
    from autograder.submissions import write_class
    notebooks, manifest = {}, {}
    for c_index, chapter in enumerate(chapters):
        for i in range(students):
            student = f"s{i:03d}"
            kind = kinds[i % len(kinds)] if kinds else PATTERN[(i + 7 * c_index) % len(PATTERN)]
            rng = random.Random(f"{seed}-{student}-{chapter}")
            nb, info = submission(chapter, kind, rng)
            notebooks[(student, chapter)] = nb
            manifest[f"{student}/{chapter}"] = {"student": student, "chapter": chapter, "kind": kind, **info}
    write_class(folder, notebooks)
    (folder.parent / f"{folder.name}-manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest

