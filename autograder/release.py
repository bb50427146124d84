"""Generate the student release ``course/`` from ``solutions/`` with nbgrader.

    python -m autograder.release            # regenerate course/ (what `make release` runs)
    python -m autograder.release --check    # fail when course/ differs from a fresh release

nbgrader's ``generate_assignment`` replaces solutions by stubs and removes hidden
tests; the same command works by hand from the repository root with the
shipped nbgrader_config.py.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from .notebooks import COURSE, ROOT, chapters


def generate(release_dir: Path, only: list[str] | None = None) -> None:
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config

    with tempfile.TemporaryDirectory() as tmp:
        config = Config()
        config.CourseDirectory.root = str(ROOT)
        config.CourseDirectory.source_directory = "solutions"
        config.CourseDirectory.release_directory = str(release_dir)
        config.CourseDirectory.db_url = f"sqlite:///{tmp}/gradebook.db"
        config.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "README.md"]
        config.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
        config.ClearSolutions.text_stub = "YOUR ANSWER HERE"
        config.Exchange.root = os.path.join(tmp, "exchange")
        api = NbGraderAPI(config=config)
        for chapter in only or chapters():
            result = api.generate_assignment(chapter, force=True, create=True)
            if not result.get("success"):
                raise SystemExit(f"nbgrader could not release {chapter}:\n{result.get('error') or result.get('log')}")


def differences(a: Path, b: Path) -> list[str]:
    """Relative paths that are in one tree only or differ in content."""
    def files(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*")
                if p.is_file() and not any(part.startswith(".") or part == "__pycache__"
                                           for part in p.relative_to(root).parts)}
    left, right = files(a), files(b)
    return sorted(k for k in left.keys() | right.keys() if left.get(k) != right.get(k))


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--check":
        with tempfile.TemporaryDirectory() as tmp:
            fresh = Path(tmp) / "course"
            generate(fresh)
            diff = differences(COURSE, fresh)
        if diff:
            print("course/ is stale or was edited by hand; run `make release`. Differs:", *diff, sep="\n  ")
            return 1
        print("course/ matches a fresh release of solutions/")
        return 0
    generate(COURSE)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
