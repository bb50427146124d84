"""What grading makes from the course alone, kept by content: made once, read by every later run.

Two things a grading run would otherwise make again each time, whoever its students are: each chapter's
empty gradebook (nbgrader's ``generate_assignment``: its notebooks, cells and checksums; ``outputs``) and the
HTML of each chapter's released cells on the feedback pages (``feedback.release_pieces``). Both depend only
on the course and on the code that makes them, so they are kept in ``.cache/grading/`` at the course root,
owner-only, each file named by the digest of everything it is made from (``digest``): a changed chapter,
grader or library is a miss, made anew, never a stale hit. Nothing of a student's is kept here. Where the
folder cannot be written, each run makes what it needs, as before. ``python -m autograder prepare`` (run
by ``make release``) makes them for every chapter ahead of the first grading run.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import os
import tempfile
from pathlib import Path

from .course import ROOT

FOLDER = ROOT / ".cache" / "grading"


def versions(*distributions: str) -> list[str]:
    """``name==version`` of each installed distribution (a part of a digest)."""
    found = []
    for name in distributions:
        try:
            found.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{name}==?")
    return found


def sources(*paths: Path) -> list[str]:
    """The digest of each file (a part of a digest): the code that makes an entry is part of its name."""
    return [hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in paths]


def digest(*parts) -> str:
    """One name for everything an entry is made from (strings and bytes)."""
    h = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else str(part).encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little") + data)
    return h.hexdigest()[:40]


def path(name: str) -> Path:
    return FOLDER / name


def load(name: str) -> bytes | None:
    """The entry ``name``, or None where there is none (or it cannot be read)."""
    try:
        return path(name).read_bytes()
    except OSError:
        return None


def save(name: str, data: bytes) -> bool:
    """Keep ``data`` as ``name`` (written aside, then moved in: a reader sees a whole entry or none); False
    where the folder cannot be written."""
    try:
        FOLDER.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=FOLDER, prefix=".new-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(temporary, path(name))
        except BaseException:
            os.unlink(temporary)
            raise
        return True
    except OSError:
        return False
