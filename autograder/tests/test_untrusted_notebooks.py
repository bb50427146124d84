"""Issue 38, findings 3, 4 and 5: what a notebook can do to the instructor's tools, through the real `make grade`.

One grading run (``grade_class``, as ``make grade``) of a small class shares the work of every test here:

- ``honest``: the reference; ``untouched``: the release (their scores are the yardstick);
- ``scripted``: the reference, with ``<script>`` and ``<img onerror>`` in its free-response answer and in a
  scratch markdown cell (finding 3): OUT/autograded holds what the student wrote already through the course's
  sanitizer, so that nbgrader's formgrader (its ``formgrade`` template renders markdown as it is) runs nothing;
- ``crowded``: the release and 10,000 small scratch code cells and 2,000 markdown ones (finding 4): its job and
  its page are bounded (``sanitize.BOUNDS``), a note says what was left out;
- ``shape``: JSON that is not a notebook's shape (finding 5): graded as the untouched release, named.

The other doors: ``nbgrader autograde`` in tests/test_lifecycle.py (mia's scripted answer and scratch note,
malformed notebooks), ``make check`` here (one malformed notebook). In Chromium: the formgrader's view of a
scripted autograded notebook, tests/test_formgrader_browser.py.
"""
from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from autograder.course import ROOT, read, release_path, role
from autograder.submissions import reference, untouched, write_class

pytestmark = [pytest.mark.xdist_group("untrusted")]

CHAPTER = "ch01_perceptron"
PAYLOAD = ("<script>document.title = 'pwned'; window.__pwned = 'script'</script>\n\n"
           "<img src=x onerror=\"document.title = 'pwned'; window.__pwned = 'onerror'\">\n\n"
           "[a link](javascript:window.__pwned='link')\n")
ANSWER = ("The margin divides by $\\|w\\|$, so scaling *w* and b changes nothing:\n\n- one\n- two\n\n"
          "```python\nif a < b:\n    pass\n```\n\n" + PAYLOAD + "\nLEGIBLE-ANSWER-TEXT")
NOTE = "My scratch notes, LEGIBLE-SCRATCH-TEXT, $x^2$.\n\n" + PAYLOAD
JOB_SECONDS = 12    # the crowded notebook's job (an honest one takes 1-3 s here, cold sandbox included)
PAGE_KB = 1_200     # its feedback page (an honest one: ~430 KB); 7 MB before the bounds
PAGE_SECONDS = 15   # to render that page in a process that rendered an honest page before


def scripted() -> nbformat.NotebookNode:
    nb = reference(CHAPTER)
    next(c for c in nb.cells if role(c) == "answer").source = ANSWER
    nb.cells.append(nbformat.v4.new_markdown_cell(NOTE))
    return nb


def crowded() -> nbformat.NotebookNode:
    nb = untouched(CHAPTER)
    nb.cells += [nbformat.v4.new_code_cell(f"x{i} = {i}") for i in range(10_000)]
    nb.cells += [nbformat.v4.new_markdown_cell(f"note {i}: *a* $x_{i}$") for i in range(2_000)]
    return nb


def malformed() -> dict[str, dict]:
    """JSON notebooks of another shape than nbformat's, each the release with one thing broken."""
    base = json.loads(nbformat.writes(untouched(CHAPTER)))
    answer = next(i for i, c in enumerate(base["cells"]) if c["cell_type"] == "markdown"
                  and c["metadata"].get("nbgrader", {}).get("solution"))
    code = next(i for i, c in enumerate(base["cells"]) if c["cell_type"] == "code")

    def broken(change) -> dict:
        nb = copy.deepcopy(base)
        change(nb)
        return nb
    return {
        "string-nbgrader-metadata": broken(lambda nb: nb["cells"][answer]["metadata"].update(nbgrader="solution")),
        "string-metadata": broken(lambda nb: nb["cells"][answer].update(metadata="answer")),
        "cells-not-a-list": broken(lambda nb: nb.update(cells={"0": base["cells"][0]})),
        "cell-without-source": broken(lambda nb: nb["cells"][answer].pop("source")),
        "source-a-number": broken(lambda nb: nb["cells"][answer].update(source=42)),
        "outputs-not-a-list": broken(lambda nb: nb["cells"][code].update(outputs="none")),
        "grade-id-a-list": broken(lambda nb: nb["cells"][answer]["metadata"]["nbgrader"].update(grade_id=["x"])),
        "cell-a-string": broken(lambda nb: nb["cells"].insert(1, "a cell")),
    }


def long_line() -> dict:
    """A 2 MB single line of code in a scratch cell: read, cut, graded (a notebook's shape)."""
    nb = json.loads(nbformat.writes(untouched(CHAPTER)))
    nb["cells"].append(json.loads(nbformat.writes(nbformat.v4.new_code_cell("x = '" + "a" * 2_000_000 + "'"))))
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from autograder.classroom import grade_class
    folder, out = tmp_path_factory.mktemp("class"), tmp_path_factory.mktemp("out")
    write_class(folder, {("honest", CHAPTER): reference(CHAPTER), ("untouched", CHAPTER): untouched(CHAPTER),
                         ("scripted", CHAPTER): scripted(), ("crowded", CHAPTER): crowded(),
                         ("shape", CHAPTER): json.dumps(malformed()["string-nbgrader-metadata"]),
                         ("long-line", CHAPTER): json.dumps(long_line())})
    out = grade_class(str(folder), str(out), jobs=1)
    return out


def _result(out: Path, student: str) -> dict:
    return json.loads((out / "results" / student / f"{CHAPTER}.json").read_text())


def _scores(out: Path) -> dict:
    import csv
    return {row["student"]: float(row["score"]) for row in csv.DictReader(open(out / "grades.csv"))}


def _autograded(out: Path, student: str) -> Path:
    return out / "autograded" / student / CHAPTER / f"{CHAPTER}.ipynb"


# ------------------------------------------------------------------ finding 5: JSON that is not a notebook

@pytest.mark.parametrize("shape", sorted(malformed()))
def test_json_of_another_shape_is_read_as_nothing_and_named(shape, tmp_path):
    from autograder.job import read_submission
    from autograder.sanitize import sanitize
    path = tmp_path / f"{CHAPTER}.ipynb"
    path.write_text(json.dumps(malformed()[shape]))
    nb, problem = read_submission(str(path))
    assert nb is None and "is not a valid notebook (" in problem and "untouched release" in problem, problem
    # and rebuilt on the release directly (another reader, another door): a note, never an exception
    release = read(release_path(CHAPTER))
    rebuilt, notes = sanitize(nbformat.from_dict(malformed()[shape]), release)
    assert [c.source for c in rebuilt.cells] == [c.source for c in sanitize(release, release)[0].cells]
    assert any("not a valid notebook" in note for note in notes), notes


def test_make_grade_grades_a_malformed_notebook_as_the_release(graded):
    scores = _scores(graded)
    assert scores["shape"] == scores["untouched"] == 0
    problems = _result(graded, "shape")["problems"]
    assert any("not a valid notebook (cell" in p and "nbgrader metadata is not an object" in p for p in problems)
    assert _result(graded, "long-line")["status"] == "graded" and scores["long-line"] == scores["untouched"]
    assert any("2000006 characters" in p for p in _result(graded, "long-line")["problems"])


def test_make_check_grades_a_malformed_notebook_as_the_release(tmp_path):
    """The student's door: one line names it, the table is the release's, exit status 0."""
    path = tmp_path / CHAPTER / f"{CHAPTER}.ipynb"
    path.parent.mkdir()
    path.write_text(json.dumps(malformed()["string-metadata"]))
    done = subprocess.run([sys.executable, "-m", "autograder", "check", "--json", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "MPLBACKEND": "Agg"})
    assert done.returncode == 0, done.stderr[-2000:]
    said = json.loads(done.stdout)
    assert any("metadata is not an object" in note for note in said["problems"]), said["problems"]
    assert "Traceback" not in done.stderr


# ------------------------------------------------------------------ finding 4: a crowded notebook

def test_a_crowded_notebook_costs_only_its_own_budget(graded):
    from autograder.feedback import feedback_html
    from autograder.result import SubmissionResult
    from autograder.sanitize import BOUNDS
    result = _result(graded, "crowded")
    assert result["seconds"] < JOB_SECONDS, result["timings"]
    assert any(f"not run or shown: more than the limit of {BOUNDS.added_cells}" in p for p in result["problems"])
    assert any(f"not read: more than the limit of {BOUNDS.cells_read}" in p for p in result["problems"])
    page = graded / "feedback" / "crowded" / CHAPTER / f"{CHAPTER}.html"
    assert page.stat().st_size < PAGE_KB * 1024, page.stat().st_size
    assert f"more than the limit of {BOUNDS.added_cells}" in page.read_text()  # the note, in the feedback
    # the page alone, in a process that rendered an honest one before (as the chapter's other pages are)
    for student in ("honest", "crowded"):
        nb = nbformat.read(str(_autograded(graded, student)), as_version=4)
        started = time.monotonic()
        feedback_html(SubmissionResult.from_json(_result(graded, student)), nb)
        seconds = time.monotonic() - started
    assert seconds < PAGE_SECONDS, seconds
    # honest scores unchanged: the reference earns full marks, the crowded release what the release earns
    scores = _scores(graded)
    assert scores["crowded"] == scores["untouched"]
    cells = _result(graded, "honest")["cells"]
    assert cells and all(c["score"] == c["points"] for c in cells), cells


def test_what_is_shown_of_a_notebook_is_bounded():
    """The student's markdown renders to at most BOUNDS.rendered_chars of HTML, their code shows at most
    BOUNDS.shown_code_chars characters; each cell past a bound says so in one line."""
    from autograder.feedback import safe_notebook
    from autograder.sanitize import BOUNDS
    nb = untouched(CHAPTER)
    nb.cells += [nbformat.v4.new_markdown_cell("- *a*\n" * 3_300) for _ in range(8)]
    nb.cells += [nbformat.v4.new_code_cell("a=1;" * 10_000) for _ in range(4)]
    started = time.monotonic()
    safe = safe_notebook(nb, CHAPTER)
    assert time.monotonic() - started < 20  # ~3 s here; unbounded, 8 cells of lists took ~12 s to sanitize
    added = safe.cells[-12:]
    assert sum(len(c.source) for c in added[:8]) < BOUNDS.rendered_chars + 8 * 300
    assert "limit of" in added[7].source and "not shown" in added[7].source
    assert sum(len(c.source) for c in added[8:]) < BOUNDS.shown_code_chars + 4 * 200
    assert "more characters graded, not shown" in added[-1].source


# ------------------------------------------------------------------ finding 3: the formgrader's view

def formgrade_html(notebook: Path, student: str) -> str:
    """The notebook as nbgrader's formgrader shows it (its SubmissionHandler: an HTMLExporter with the template
    'formgrade' from the formgrader's own templates, the same resources)."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from traitlets.config import Config
    config = Config()
    config.HTMLExporter.template_name = "formgrade"
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    resources = {"assignment_id": CHAPTER, "notebook_id": CHAPTER, "submission_id": "0", "index": 0, "total": 1,
                 "base_url": "", "student": student, "last_name": None, "first_name": None,
                 "notebook_path": f"/autograded/{student}/{CHAPTER}/{CHAPTER}.ipynb"}
    html, _ = HTMLExporter(config=config).from_filename(str(notebook), resources=resources)
    return html


RUNS = re.compile(r"<script>(document|window)|onerror=\"document|javascript:window")  # the payload, live


def test_the_autograded_notebook_holds_nothing_that_runs(graded):
    path = _autograded(graded, "scripted")
    nb = nbformat.read(str(path), as_version=4)
    text = path.read_text()
    assert not RUNS.search(text), RUNS.search(text)
    answer = next(c for c in nb.cells if role(c) == "answer")
    released = next(c for c in read(release_path(CHAPTER)).cells if role(c) == "answer")
    assert answer.metadata["nbgrader"] == released.metadata["nbgrader"]  # the formgrader grades it as before
    assert "LEGIBLE-ANSWER-TEXT" in answer.source and "LEGIBLE-SCRATCH-TEXT" in text
    for kept in ("<em>w</em>", "<li>one</li>", "$\\|w\\|$", '<span class="k">if</span>'):
        assert kept in answer.source, kept
    page = formgrade_html(path, "scripted")
    assert not RUNS.search(page), RUNS.search(page)
    # an untouched answer stays as handed out (nbgrader scores it 0 by its checksum)
    untouched_answer = next(c for c in nbformat.read(str(_autograded(graded, "untouched")), as_version=4).cells
                            if role(c) == "answer")
    assert untouched_answer.source == released.source
    # the course's own page of it stays safe too
    feedback = (graded / "feedback" / "scripted" / CHAPTER / f"{CHAPTER}.html").read_text()
    assert not RUNS.search(feedback) and "LEGIBLE-ANSWER-TEXT" in feedback
