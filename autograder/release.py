"""Generate the student release ``course/`` from ``solutions/`` with nbgrader.

    python -m autograder release                    # regenerate course/ (what `make release` runs)
    python -m autograder release ch01_perceptron    # regenerate one chapter's release
    python -m autograder release --check            # fail when course/ differs from a fresh release

nbgrader's ``generate_assignment`` replaces solutions by stubs and removes hidden
tests; the same command works by hand from the repository root with the
shipped nbgrader_config.py.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from .course import COURSE, ROOT, chapters
from .nbgrader_settings import configure


def nbgrader_api(release_dir: Path, db_url: str, exchange: str):
    """nbgrader's API on this repository's layout, with its tools (alembic) on PATH."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config

    bin_dir = os.path.dirname(sys.executable)
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    config = Config()
    configure(config, ROOT, source="solutions", db_url=db_url)
    config.CourseDirectory.release_directory = str(release_dir)
    config.Exchange.root = exchange
    return NbGraderAPI(config=config)


def generate(release_dir: Path, only: list[str] | None = None, db_url: str | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        api = nbgrader_api(release_dir, db_url or f"sqlite:///{tmp}/gradebook.db", os.path.join(tmp, "exchange"))
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


def check_fresh() -> int:
    """0 when course/ equals a fresh release of solutions/, else 1 (and which files differ)."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "course"
        generate(fresh)
        diff = differences(COURSE, fresh)
    if diff:
        print("course/ is stale or was edited by hand; run `make release`. Differs:", *diff, sep="\n  ")
        return 1
    print("course/ matches a fresh release of solutions/")
    return 0
