"""What the feedback and the log say about read-only cells a student changed: which cells, once per notebook.

``sanitize`` restores every read-only cell from the release; its note names each cell restored (its grade_id,
or its first line, and its position in the student's notebook) and says it once for all of them, not once
per cell. The same notes are the submission's problems: the feedback page, the self-check and the
grading log (one line per problem) show them.
"""
from __future__ import annotations

import copy
import re

import nbformat

from autograder.course import grade_id, read, release_path, role
from autograder.sanitize import NAMES_LISTED, sanitize
from autograder.submissions import reference

CHAPTER = "ch01_perceptron"


def release():
    return read(release_path(CHAPTER))


def restored(notes: list[str]) -> list[str]:
    return [note for note in notes if "restored" in note]


def test_one_modified_read_only_cell_is_named_by_grade_id_and_position():
    nb = reference(CHAPTER)
    index = next(i for i, c in enumerate(nb.cells) if grade_id(c) == "test_margin")
    nb.cells[index].source += "\nprint('my own check')"
    _, notes = sanitize(nb, release())
    assert restored(notes) == [f"a read-only cell was modified and restored from the release: "
                               f"test_margin (cell {index + 1})"]


def test_a_modified_cell_without_a_grade_id_is_named_by_its_first_line_and_position():
    nb = reference(CHAPTER)
    nb.cells.insert(0, nbformat.v4.new_code_cell("x = 1"))  # a scratch cell first: positions are the student's
    index = next(i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and c.source.startswith("## 1."))
    first = nb.cells[index].source.splitlines()[0]
    nb.cells[index].source = "my notes\n" + nb.cells[index].source
    _, notes = sanitize(nb, release())
    [note] = restored(notes)
    assert note.startswith("a read-only cell was modified and restored from the release: ")
    assert f'cell {index + 1} "' in note and first[:30] in note, note


def test_many_modified_read_only_cells_make_one_note_that_names_them():
    nb = reference(CHAPTER)
    changed = []
    for index, cell in enumerate(nb.cells):
        if role(cell) in ("tests", "given", "demo", "prose") and len(changed) < 12:
            cell.source += "\n# edited"
            changed.append((index, grade_id(cell)))
    assert len(changed) == 12
    _, notes = sanitize(nb, release())
    [note] = restored(notes)  # one line for the notebook, not one per cell
    assert note.startswith("12 read-only cells were modified and restored from the release: "), note
    for index, gid in changed[:NAMES_LISTED]:
        assert f"{gid} (cell {index + 1})" in note if gid else f"cell {index + 1} " in note, (index, gid, note)
    assert note.endswith(f" and {12 - NAMES_LISTED} more"), note
    assert "\n" not in note


def test_a_few_modified_cells_are_all_named_and_deleted_ones_have_their_own_note():
    nb = reference(CHAPTER)
    tests = [i for i, c in enumerate(nb.cells) if role(c) == "tests"]
    for index in tests[:3]:
        nb.cells[index].source = "pass"
    gone = [grade_id(nb.cells[i]) for i in tests[3:5]]
    nb.cells = [c for c in nb.cells if grade_id(c) not in gone]
    _, notes = sanitize(nb, release())
    assert restored(notes) == [
        "3 read-only cells were modified and restored from the release: "
        + ", ".join(f"{grade_id(nb.cells[i])} (cell {i + 1})" for i in tests[:3]),
        f"2 read-only cells were deleted and restored from the release: {gone[0]}, {gone[1]}"]


def test_an_honest_notebook_has_no_such_note():
    _, notes = sanitize(reference(CHAPTER), release())
    assert not restored(notes) and not [n for n in notes if re.search("modified|deleted", n)]


def test_the_grading_log_and_the_self_check_say_it_once(tmp_path):
    """Through the grader (``make check``'s path): one problem, one line of the table's notes."""
    from autograder.check import check, format_table

    nb = reference(CHAPTER)
    for cell in nb.cells:
        if role(cell) in ("tests", "prose"):
            cell.source = cell.source + "\n"  # a stray newline in every read-only cell, as a formatter would
    path = tmp_path / f"{CHAPTER}.ipynb"
    nbformat.write(copy.deepcopy(nb), str(path))
    result = check(path)
    [note] = restored(result.problems)
    count = sum(role(c) in ("tests", "prose") for c in release().cells)
    assert note.startswith(f"{count} read-only cells were modified and restored from the release: "), note
    text = format_table(result, str(path))
    assert sum("read-only" in line for line in text.splitlines()) == 1, text
    assert "was modified: restored" not in text
