"""Rebuild a submission on the release notebook, so that only the student's own cells count.

Every cell of the release that is not the student's to write (prose, given code,
tests, demos) is taken from the release, whatever the submission did to it:
edited, deleted, moved, or its nbgrader metadata re-labelled. The student's
answers are taken from the submission, matched by grade_id, else by cell id.
Cells the student added (scratch work) are kept, in place, stripped of any
nbgrader metadata, so they can never pose as graded cells.
"""
from __future__ import annotations

import copy

import nbformat

from .course import grade_id, nbgrader_meta, role
from .settings import SUBMISSION

BOUNDS = SUBMISSION  # what the student wrote is bounded before any work is spent on it (declared in settings.py)
MAX_CELL_CHARS = BOUNDS.cell_chars
MAX_STUDENT_CHARS = BOUNDS.student_chars
MAX_ADDED_CELLS = BOUNDS.added_cells


def _is_answer(cell) -> bool:
    return role(cell) in ("solution", "answer")


class _Budget:
    """Cuts the student's cells to MAX_CELL_CHARS each and MAX_STUDENT_CHARS in all, with one note per cut."""

    def __init__(self, notes: list[str]):
        self.left, self.notes, self.cuts = MAX_STUDENT_CHARS, notes, 0

    def __call__(self, source, cell_type: str, what: str) -> str:
        source = source if isinstance(source, str) else "".join(source) if isinstance(source, list) else ""
        cap = min(MAX_CELL_CHARS.get(cell_type, 20_000), self.left)
        if len(source) > cap:
            self.cuts += 1
            if self.cuts <= 3:
                self.notes.append(f"{what} holds {len(source)} characters: only the first {cap} are graded")
            source = source[:cap]
        self.left -= len(source)
        return source


FIRST_LINE_CHARS = 40  # of a read-only cell's first line, to name a cell that has no grade_id
NAMES_LISTED = 8       # cells named in one note; the rest counted


def first_line(source) -> str:
    """A cell's first non-blank line, cut to ``FIRST_LINE_CHARS`` characters."""
    source = source if isinstance(source, str) else "".join(source) if isinstance(source, list) else ""
    line = next((line.strip() for line in source.splitlines() if line.strip()), "")
    return line if len(line) <= FIRST_LINE_CHARS else line[:FIRST_LINE_CHARS - 1].rstrip() + "…"


def cell_name(cell, index: int) -> str:
    """A read-only cell as the student can find it in the notebook they submitted (``index`` there, from 0):
    its grade_id if it has one, else its first line, and its position (``cell 12``, counted from 1)."""
    gid = grade_id(cell)
    if gid:
        return f"{gid} (cell {index + 1})"
    line = first_line(cell.get("source", ""))
    return f"cell {index + 1}" + (f' "{line}"' if line else "")


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:NAMES_LISTED])
    return shown + (f" and {len(names) - NAMES_LISTED} more" if len(names) > NAMES_LISTED else "")


def restored_notes(modified: list[str], deleted: list[str]) -> list[str]:
    """One note for the read-only cells modified, one for those deleted (none when there are none),
    each naming the cells: the feedback and the log say it once per notebook, not once per cell."""
    notes = []
    for names, what in ((modified, "modified"), (deleted, "deleted")):
        if names:
            cells = "a read-only cell was" if len(names) == 1 else f"{len(names)} read-only cells were"
            notes.append(f"{cells} {what} and restored from the release: {_listed(names)}")
    return notes


def shape_problem(nb) -> str | None:
    """What makes ``nb`` (JSON read from a submission) something other than a notebook this module can rebuild,
    or None: cells not a list, a cell that is not an object, without a cell type, with a source that is not text,
    metadata or nbgrader metadata that is not an object, a grade_id or cell id that is not text, outputs that
    are not a list. Only the shape: the content is the student's."""
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        return "its cells are not a list"
    if not isinstance(nb.get("metadata", {}), dict):
        return "its metadata is not an object"
    for index, cell in enumerate(cells):
        where = f"cell {index + 1}"
        if not isinstance(cell, dict):
            return f"{where} is not an object"
        if not isinstance(cell.get("cell_type"), str):
            return f"{where} has no cell type"
        source = cell.get("source")
        if not (isinstance(source, str) or isinstance(source, list) and all(isinstance(s, str) for s in source)):
            return f"{where} has no source text"
        metadata = cell.get("metadata", {})
        if not isinstance(metadata, dict):
            return f"{where}'s metadata is not an object"
        meta = metadata.get("nbgrader", {})
        if meta is not None and not isinstance(meta, dict):
            return f"{where}'s nbgrader metadata is not an object"
        if meta and not isinstance(meta.get("grade_id", ""), (str, type(None))):
            return f"{where}'s grade_id is not text"
        if not isinstance(metadata.get("tags", []), list):
            return f"{where}'s tags are not a list"
        if not isinstance(cell.get("id", ""), str):
            return f"{where}'s id is not text"
        if cell["cell_type"] == "code" and not isinstance(cell.get("outputs", []), list):
            return f"{where}'s outputs are not a list"
    return None


def bounded_cells(nb: dict) -> str | None:
    """Keep (in place) the first ``BOUNDS.cells_read`` cells of ``nb`` (JSON of a notebook's shape) that carry a
    grade_id, and as many of the others, in their order; returns the note on what was dropped, or None."""
    limit, kept, counts = BOUNDS.cells_read, [], [0, 0]
    for cell in nb["cells"]:
        graded = bool((cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id"))
        counts[graded] += 1
        if counts[graded] <= limit:
            kept.append(cell)
    dropped = len(nb["cells"]) - len(kept)
    nb["cells"] = kept
    return (f"{dropped} cells were not read: more than the limit of {limit} cells (and {limit} with a grade_id)"
            if dropped else None)


def sanitize(submitted, release) -> tuple[nbformat.NotebookNode, list[str]]:
    """(the notebook to grade, notes on what was restored or missing). A submission of another shape than a
    notebook's (``shape_problem``) is rebuilt as the untouched release, and a note says why: it costs only itself."""
    problem = shape_problem(submitted)
    if problem is None:
        try:
            return _rebuild(submitted, release)
        except (AttributeError, TypeError, KeyError, ValueError, IndexError) as exc:
            problem = f"{type(exc).__name__}"
    notebook, notes = _rebuild(release, release)
    return notebook, [f"the notebook is not a valid notebook ({problem}): graded as the untouched release", *notes]


def _rebuild(submitted, release) -> tuple[nbformat.NotebookNode, list[str]]:
    notes: list[str] = []
    budget = _Budget(notes)
    by_grade_id, by_cell_id = {}, {}
    for index, cell in enumerate(submitted.cells):
        gid = grade_id(cell)
        if gid and gid not in by_grade_id:
            by_grade_id[gid] = index
        if cell.get("id") and cell["id"] not in by_cell_id:
            by_cell_id[cell["id"]] = index
    release_ids = {c.get("id") for c in release.cells}
    release_gids = {grade_id(c) for c in release.cells if grade_id(c)}

    used: set[int] = set()
    modified: list[str] = []  # the read-only cells the student changed, named (cell_name)
    deleted: list[str] = []   # the read-only cells with a grade_id that the student deleted, by grade_id
    slots: list[tuple[int | None, nbformat.NotebookNode]] = []  # (index in submission, cell)
    for cell in release.cells:
        gid = grade_id(cell)
        match = by_grade_id.get(gid) if gid else None
        if match is None and cell.get("id") in by_cell_id:
            match = by_cell_id[cell["id"]]
        out = copy.deepcopy(cell)
        if match is not None:
            used.add(match)
        if _is_answer(cell):
            if match is None:
                notes.append(f"answer cell {gid} is missing: graded as unanswered")
            else:
                theirs = submitted.cells[match]
                if theirs.cell_type == cell.cell_type:
                    out.source = budget(theirs.source, cell.cell_type, f"answer cell {gid}")
                else:
                    notes.append(f"answer cell {gid} changed type: graded as unanswered")
        elif match is not None:
            theirs = submitted.cells[match]
            if theirs.source != cell.source or nbgrader_meta(theirs) != nbgrader_meta(cell):
                modified.append(cell_name(cell, match))
        elif gid:
            deleted.append(gid)
        if out.cell_type == "code":
            out.outputs, out.execution_count = [], None
        slots.append((match, out))

    notes += restored_notes(modified, deleted)

    # the student's own extra cells, after the release cell they followed
    extras: dict[int | None, list] = {}
    anchor, added, left_out = None, 0, 0
    for index, cell in enumerate(submitted.cells):
        if index in used:
            anchor = index
            continue
        if cell.get("id") in release_ids or (grade_id(cell) in release_gids):
            continue  # a duplicate of a release cell: ignored
        added += 1
        if added > BOUNDS.added_cells:
            left_out += 1  # neither run nor shown: counted, in one note
            continue
        kind = "code" if cell.cell_type == "code" else "markdown"
        source = budget(cell.get("source", ""), kind, "an added cell")
        scratch = nbformat.v4.new_code_cell(source) if kind == "code" else nbformat.v4.new_markdown_cell(source)
        if cell.get("id"):
            scratch["id"] = str(cell["id"])[:64]
        scratch.metadata["tags"] = ["scratch"]
        if nbgrader_meta(cell):
            notes.append("an added cell carried nbgrader metadata: it is treated as scratch work")
        extras.setdefault(anchor, []).append(scratch)

    if left_out:
        notes.append(f"{left_out} scratch cells were not run or shown: more than the limit of "
                     f"{BOUNDS.added_cells} added cells")
    cells = list(extras.get(None, []))
    for match, cell in slots:
        cells.append(cell)
        if match is not None:
            cells.extend(extras.pop(match, []))
    notebook = nbformat.v4.new_notebook(cells=cells, metadata=copy.deepcopy(release.metadata))
    return notebook, notes
