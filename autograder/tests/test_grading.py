"""The grader proves itself through the real command: one `make grade` run over a synthetic class.

The class holds, for every chapter, the reference and the untouched release;
submissions carrying plausible mistakes (three per graded function); attacks of
every class of the threat model; honest variations (noise, seeds, scratch work,
long output); and broken notebooks.
"""
from __future__ import annotations

import csv
import json
import os
import re
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from autograder.notebooks import HIDDEN_BEGIN, HIDDEN_END, ROOT, chapters, read, source_path
from autograder.submissions import reference, untouched, write_class
from autograder.tests import cases

pytestmark = [pytest.mark.xdist_group("grading"), pytest.mark.slow]
LIMITS = {"cell_seconds": 25, "notebook_seconds": 240}


class Graded:
    def __init__(self, out: Path, proc, labels):
        self.out, self.proc, self.labels = out, proc, labels
        self.cells = {}
        with open(out / "tests.csv") as f:
            for row in csv.DictReader(f):
                self.cells[(row["student"], row["assignment"], row["grade_id"])] = (
                    None if row["score"] == "" else float(row["score"]), float(row["max_score"]))
        self.totals = {}
        with open(out / "grades.csv") as f:
            for row in csv.DictReader(f):
                self.totals[(row["student"], row["assignment"])] = (float(row["score"]), float(row["max_score"]))

    def result(self, student, chapter) -> dict:
        return json.loads((self.out / "results" / student / f"{chapter}.json").read_text())

    def auto_cells(self, student, chapter):
        return {g: s for (st, ch, g), s in self.cells.items()
                if st == student and ch == chapter and not g.startswith("free_response")}


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Graded:
    folder = tmp_path_factory.mktemp("class")
    out = tmp_path_factory.mktemp("out")
    notebooks, labels = {}, {}
    for chapter in chapters():
        notebooks[("reference", chapter)] = reference(chapter)
        notebooks[("untouched", chapter)] = untouched(chapter)
    for kind, table in (("attack", cases.attacks()), ("honest", cases.honest()), ("broken", cases.broken())):
        for name, (chapter, nb) in table.items():
            notebooks[(f"{kind}-{name}", chapter)] = nb
    from autograder.submissions import filled
    for i, (chapter, replace, mistakes) in enumerate(cases.mutant_groups()):
        student = f"mistakes-{i:02d}"
        notebooks[(student, chapter)] = filled(chapter, replace)
        labels[student] = mistakes
    # an assignment folder holding a renamed notebook, and one holding none
    write_class(folder, notebooks)
    ch = chapters()[0]
    (folder / "renamed" / ch).mkdir(parents=True)
    import nbformat
    nbformat.write(reference(ch), str(folder / "renamed" / ch / "my_copy.ipynb"))
    (folder / "missing" / ch).mkdir(parents=True)
    (folder / "missing" / "not_an_assignment").mkdir(parents=True)
    env = {**os.environ, "AUTOGRADER_LIMITS": json.dumps(LIMITS)}
    proc = subprocess.run(["make", "--no-print-directory", "grade", f"SUBMISSIONS={folder}", f"OUT={out}"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=3000)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return Graded(out, proc, labels)


def test_reference_earns_full_marks(graded):
    for chapter in chapters():
        cells = graded.auto_cells("reference", chapter)
        assert cells, chapter
        lost = {g: s for g, s in cells.items() if s[0] != s[1]}
        assert not lost, f"{chapter}: the reference loses points in {lost}"
        manual = [s for (st, ch, g), s in graded.cells.items()
                  if st == "reference" and ch == chapter and g.startswith("free_response")]
        assert manual and all(score is None for score, _ in manual), "answered free responses await a human"


def test_untouched_release_earns_nothing(graded):
    for chapter in chapters():
        score, maximum = graded.totals[("untouched", chapter)]
        assert score == 0 and maximum > 0, chapter
        answers = [s for (st, ch, g), s in graded.cells.items()
                   if st == "untouched" and ch == chapter and g.startswith("free_response")]
        assert answers and all(score == 0 for score, _ in answers), "an untouched answer scores 0, not pending"


def test_every_plausible_mistake_loses_points(graded):
    escaped = []
    for student, mistakes in graded.labels.items():
        chapter = next(ch for (st, ch) in graded.totals if st == student)
        for function, mistake in mistakes:
            score, maximum = graded.cells[(student, chapter, f"test_{function}")]
            if score >= maximum:
                escaped.append(f"{chapter}/{function}/{mistake}")
    assert not escaped, f"mistakes that earn full marks: {escaped}"
    per_function = defaultdict(int)
    for mistakes in graded.labels.values():
        for function, _ in mistakes:
            per_function[function] += 1
    assert per_function and min(per_function.values()) >= 3


def test_attacks_earn_no_more_than_the_untouched_release(graded):
    for name, (chapter, _) in cases.attacks().items():
        score, _ = graded.totals[(f"attack-{name}", chapter)]
        baseline, _ = graded.totals[("untouched", chapter)]
        assert score <= baseline, f"attack {name} earned {score} on {chapter}"


def test_attacks_could_not_escape_the_sandbox(graded):
    for path in ("/tmp/stolen", "/tmp/pwned"):
        assert not Path(path).exists(), f"a submission wrote {path}"


def test_honest_variations_earn_what_the_reference_earns(graded):
    for name, (chapter, _) in cases.honest().items():
        assert graded.auto_cells(f"honest-{name}", chapter) == graded.auto_cells("reference", chapter), name


def test_broken_notebooks_are_reported_and_cost_only_what_did_not_run(graded):
    log = (graded.out / "grading.log").read_text()
    a, b = chapters()[0], chapters()[1]
    for name, chapter in (("invalid_json", a), ("not_a_notebook", b)):
        assert graded.totals[(f"broken-{name}", chapter)][0] == 0
        assert "could not be read" in " ".join(graded.result(f"broken-{name}", chapter)["problems"])
        assert f"broken-{name}/{chapter}" in log
    for name, chapter, kind in (("crash_in_function", a, "crash"), ("hang_in_function", b, "timeout")):
        result = graded.result(f"broken-{name}", chapter)
        bad = [c for c in result["cells"] if c["status"] != "ok"]
        assert [c["status"] for c in bad] == [kind], f"{name}: {[(c['grade_id'], c['status']) for c in bad]}"
        ref = graded.auto_cells("reference", chapter)
        mine = graded.auto_cells(f"broken-{name}", chapter)
        assert mine[bad[0]["grade_id"]][0] == 0
        assert {g: s for g, s in mine.items() if g != bad[0]["grade_id"]} == \
            {g: s for g, s in ref.items() if g != bad[0]["grade_id"]}, "a crash cost more than its own cell"
    assert graded.auto_cells("broken-memory_hog", a) == graded.auto_cells("reference", a)
    assert graded.auto_cells("renamed", a) == graded.auto_cells("reference", a)
    assert "renamed" in " ".join(graded.result("renamed", a)["problems"])
    assert graded.totals[("missing", a)][0] == 0
    assert "missing" in " ".join(graded.result("missing", a)["problems"])
    assert "not_an_assignment" in log


def _hidden_lines(chapter: str) -> list[str]:
    """Hidden-test lines that appear nowhere in the release (so seeing one means a leak)."""
    from autograder.notebooks import release_path
    hidden = set()
    for cell in read(source_path(chapter)).cells:
        for part in re.findall(rf"{re.escape(HIDDEN_BEGIN)}(.*?){re.escape(HIDDEN_END)}", cell.source, re.S):
            hidden.update(line.strip() for line in part.splitlines())
    public = {line.strip() for cell in read(release_path(chapter)).cells for line in cell.source.splitlines()}
    return [line for line in hidden - public if len(line) > 25 and not line.startswith("#")]


def test_feedback_names_checks_but_never_shows_hidden_tests(graded):
    for chapter in chapters():
        hidden = _hidden_lines(chapter)
        for student in ("reference", "untouched"):
            html = (graded.out / "feedback" / student / chapter / f"{chapter}.html").read_text()
            assert "Traceback" not in html
            import html as h
            text = h.unescape(html)
            shown = [line for line in hidden if line in text]
            assert not shown, f"feedback for {student}/{chapter} shows hidden test code: {shown[:2]}"
        untouched_html = (graded.out / "feedback" / "untouched" / chapter / f"{chapter}.html").read_text()
        assert "not implemented yet" in untouched_html
        result = graded.result("untouched", chapter)
        hidden_checks = [c for cell in result["cells"] for c in cell["checks"] if c["hidden"]]
        assert hidden_checks, chapter
        import html as h
        assert h.escape(hidden_checks[0]["description"]) in untouched_html


def test_report_shows_the_class_and_its_trouble(graded):
    report = (graded.out / "report.html").read_text()
    assert report.count("<img") >= 2
    for chapter in chapters():
        assert chapter in report
    for student in ("broken-hang_in_function", "broken-crash_in_function", "attack-exit_kernel"):
        assert student in report


def test_outputs_follow_the_contract(graded):
    with open(graded.out / "grades.csv") as f:
        assert f.readline().strip() == "student,assignment,score,max_score"
    with open(graded.out / "tests.csv") as f:
        assert f.readline().strip() == "student,assignment,notebook,grade_id,score,max_score"
    for (student, chapter) in graded.totals:
        assert (graded.out / "feedback" / student / chapter / f"{chapter}.html").is_file()
    assert (graded.out / "gradebook.db").is_file()


@pytest.mark.parametrize("args, message", [
    ([], "usage"), (["SUBMISSIONS=/nonexistent/dir", "OUT=/tmp/x"], "not a directory")])
def test_unusable_arguments_fail_with_one_line(args, message):
    proc = subprocess.run(["make", "--no-print-directory", "grade", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode != 0
    reason = [line for line in proc.stderr.splitlines() if line.startswith("make grade:")]
    assert len(reason) == 1 and message in reason[0], proc.stderr
