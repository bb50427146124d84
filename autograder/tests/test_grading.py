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
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from autograder.course import HIDDEN_BEGIN, HIDDEN_END, ROOT, chapters, grade_id, read, role, source_path
from autograder.submissions import reference, untouched, write_class
from autograder.tests import boundary_attacks, cases, shortcuts

pytestmark = [pytest.mark.xdist_group("grading"), pytest.mark.slow]
# CPU seconds (the longest honest cells, ch05's and ch11's, use 10-25 s alone); a sleeping notebook meets the
# wall-clock cap
LIMITS = {"cell_seconds": 40, "notebook_seconds": 120, "notebook_wall_seconds": 180}
# one process more than make test's two workers: two attacks sleep out the 180-s wall cap (a third of the run's
# process time on a quiet machine) while the others use the CPU; the limits count CPU time, so honest scores hold
GRADE_JOBS = 3


def _unquoted(cell: str) -> str:
    """A student id as on disk: the CSVs write ``=1+1`` as ``'=1+1`` (a spreadsheet must not run it)."""
    from autograder.text import FORMULA_STARTS
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(FORMULA_STARTS) else cell


class Graded:
    def __init__(self, out: Path, proc, labels):
        self.out, self.proc, self.labels = out, proc, labels
        self.cells = {}
        with open(out / "tests.csv") as f:
            for row in csv.DictReader(f):
                row["student"] = _unquoted(row["student"])
                self.cells[(row["student"], row["assignment"], row["grade_id"])] = (
                    None if row["score"] == "" else float(row["score"]), float(row["max_score"]))
        self.totals = {}
        with open(out / "grades.csv") as f:
            for row in csv.DictReader(f):
                row["student"] = _unquoted(row["student"])
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
    for name, (chapter, _, nb) in boundary_attacks.cheats().items():
        notebooks[(f"cheat-{name}", chapter)] = nb
    from autograder.submissions import filled
    for chapter, entries in shortcuts.load().items():  # a route to points without building it (issue 39)
        for name, entry in entries.items():
            notebooks[(f"shortcut-{name}", chapter)] = filled(chapter, entry["replace"], append=entry.get("append"))
    for i, (chapter, replace, mistakes) in enumerate(cases.mutant_groups()):
        student = f"mistakes-{i:02d}"
        notebooks[(student, chapter)] = filled(chapter, replace)
        labels[student] = mistakes
    # names, links and text that attack the outputs (issue 11: findings 5, 7, 9, 10)
    notebooks.update(cases.hostile_inputs())
    # an assignment folder holding a renamed notebook, and one holding none
    write_class(folder, notebooks)
    ch = chapters()[0]
    (folder / "renamed" / ch).mkdir(parents=True)
    import nbformat
    nbformat.write(reference(ch), str(folder / "renamed" / ch / "my_copy.ipynb"))
    (folder / "missing" / ch).mkdir(parents=True)
    (folder / "missing" / "not_an_assignment").mkdir(parents=True)
    before = _fingerprint()
    sentinel = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3000)", boundary_attacks.SENTINEL])
    try:
        limits = " ".join(f"{name}={value}" for name, value in LIMITS.items())
        proc = subprocess.run(["make", "--no-print-directory", "grade", f"SUBMISSIONS={folder}", f"OUT={out}",
                               f"LIMITS={limits}", f"GRADE_JOBS={GRADE_JOBS}"],
                              cwd=ROOT, capture_output=True, text=True, timeout=3000)
        graded = Graded(out, proc, labels) if proc.returncode == 0 else None
        assert proc.returncode == 0, proc.stderr[-3000:]
        graded.sentinel_alive = sentinel.poll() is None
    finally:
        sentinel.kill()
        sentinel.wait()
    after = _fingerprint()
    graded.changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    graded.leftover = _processes_started_by_students()
    graded.machine = _sandboxes_left()
    return graded


def _sandboxes_left() -> list[str]:
    """What the run's sandboxes could have left on the machine: control groups of grading processes that have
    ended (memory, tasks) and sandbox processes still running. (Their disk is a tmpfs in their own mount
    namespace: nothing of it can outlive them; a host folder is only made in the unsafe mode.)"""
    import glob
    left = []
    for group in glob.glob("/sys/fs/cgroup/*/**/autograder-*/sandbox-*", recursive=True):
        pid = int(Path(group).name.split("-")[1])
        if not Path(f"/proc/{pid}").exists():
            left.append(group)
    for entry in Path("/proc").iterdir():
        try:
            if b"autograder.sandbox.server" in (entry / "cmdline").read_bytes() and \
                    f"autograder-{os.getsid(0)}" in (entry / "cgroup").read_text():
                left.append(f"process {entry.name}")
        except OSError:
            continue
    return left


def _fingerprint() -> dict[str, str]:
    """A hash of every file of the grader, the helper package, the solutions and the release."""
    import hashlib
    out = {}
    for top in ("autograder", "dlcourse", "solutions", "course"):
        for path in sorted((ROOT / top).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                out[str(path.relative_to(ROOT))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _processes_started_by_students() -> list[str]:
    """Processes that a submission could have left behind (the attacks start `sleep 600`)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmdline[:2] == [b"/bin/sleep", b"600"] or b"planted" in b" ".join(cmdline):
            found.append(" ".join(c.decode(errors="replace") for c in cmdline))
    return found


def test_reference_earns_full_marks(graded):
    for chapter in chapters():
        cells = graded.auto_cells("reference", chapter)
        assert cells, chapter
        lost = {g: s for g, s in cells.items() if s[0] != s[1]}
        assert not lost, f"{chapter}: the reference loses points in {lost}"
        errors = graded.result("reference", chapter)["cell_errors"]
        assert not errors, f"{chapter}: cells of the reference raised or were stopped: {errors}"
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
    """Each mistake loses points in its function's test cell, and in the integration checks that list it."""
    escaped = []
    for student, mistakes in graded.labels.items():
        chapter = next(ch for (st, ch) in graded.totals if st == student)
        for function, mistake, cell in mistakes:
            score, maximum = graded.cells[(student, chapter, cell)]
            if score >= maximum:
                escaped.append(f"{chapter}/{function}/{mistake} in {cell}")
    assert not escaped, f"mistakes that earn full marks: {escaped}"
    per_function = defaultdict(set)
    for mistakes in graded.labels.values():
        for function, mistake, _ in mistakes:
            per_function[function].add(mistake)
    assert per_function and min(len(m) for m in per_function.values()) >= 3


def test_attacks_earn_no_more_than_the_untouched_release(graded):
    for name, (chapter, _) in cases.attacks().items():
        score, _ = graded.totals[(f"attack-{name}", chapter)]
        baseline, _ = graded.totals[("untouched", chapter)]
        assert score <= baseline, f"attack {name} earned {score} on {chapter}"


def test_attacks_could_not_escape_the_sandbox(graded):
    for path in ("/tmp/stolen", "/tmp/pwned"):
        assert not Path(path).exists(), f"a submission wrote {path}"


def test_no_submission_reaches_outside_its_sandbox(graded):
    """Findings 1-3: no file of the grader, the solutions or the release changed; no process left behind;
    no unrelated process killed; nothing planted."""
    assert graded.changed == [], f"files changed while grading: {graded.changed[:5]}"
    assert graded.sentinel_alive, "a submission killed a process that was not its own"
    assert graded.leftover == [], f"processes left behind by submissions: {graded.leftover}"
    assert not list(ROOT.rglob(f"*{boundary_attacks.PLANTED}*")), "a submission planted a file"


def test_cheating_answers_lose_their_cell(graded):
    """Findings 1 and 8: torch hidden in a thread, TorchScript that would read and write files in the grader."""
    for name, (chapter, function, _) in boundary_attacks.cheats().items():
        mine = graded.auto_cells(f"cheat-{name}", chapter)[f"test_{function}"]
        ref = graded.auto_cells("reference", chapter)[f"test_{function}"]
        assert mine[0] < ref[0], f"{name}: {mine} against the reference's {ref}"


def test_budgets_and_sizes_hold_whatever_the_submission_does(graded):
    """Findings 4 and 6: a killed worker, huge replies, lingering finalisers and slow cells cost only their
    own submission, within its budget, and never bloat what the grader keeps."""
    for name, (chapter, _) in boundary_attacks.attacks().items():
        result = graded.result(f"attack-{name}", chapter)
        assert result["seconds"] <= LIMITS["notebook_wall_seconds"] + 60, f"{name} took {result['seconds']} s"
        longest = max([len(c.get("message") or "") for cell in result["cells"] for c in cell["checks"]] +
                      [len(str(cell.get("error") or "")) for cell in result["cells"]] +
                      [len(e) for e in result["cell_errors"].values()] + [0])
        assert longest <= 5000, f"{name}: a message of {longest} characters was kept"
    assert graded.result("attack-kill_the_grader", chapters()[2])["status"] in ("graded", "limit")


def test_the_machine_is_bounded_and_given_back(graded):
    """Issue 27, findings 1-7, each beside the honest class: memory the address space does not count (tmpfs,
    memfd), disk, threads, a folder too deep to clean, an amplifying reply, huge values and markdown, a search
    of its own memory for hidden tests, forged replies. Each earns no more than the release (checked above),
    stays within its budget, costs only its own notebook a limit/error row, and leaves nothing behind."""
    assert graded.machine == [], f"left on the machine after grading: {graded.machine[:5]}"
    for name, (chapter, _) in boundary_attacks.resource_attacks().items():
        result = graded.result(f"attack-{name}", chapter)
        assert result["status"] in ("graded", "limit"), (name, result["status"], result["problems"])
        assert not [p for p in result["problems"] if "could not be removed" in p], (name, result["problems"])
        assert result["seconds"] <= LIMITS["notebook_wall_seconds"] + 30, (name, result["seconds"])
    assert "bubblewrap" in str(graded.result("reference", chapters()[0])["isolation"])
    for name in ("amplifying_reply", "forged_replies"):
        chapter = boundary_attacks.resource_attacks()[name][0]
        statuses = {c["status"] for c in graded.result(f"attack-{name}", chapter)["cells"]}
        assert "protocol" in statuses, (name, statuses)
    chapter = boundary_attacks.resource_attacks()["long_values_and_markdown"][0]
    result = graded.result("attack-long_values_and_markdown", chapter)
    assert any("only the first" in p for p in result["problems"]), result["problems"]
    page = (graded.out / "feedback" / "attack-long_values_and_markdown" / chapter / f"{chapter}.html").read_text()
    from autograder.sanitize import MAX_CELL_CHARS
    assert "x" * 20_000 in page and "x" * (MAX_CELL_CHARS["code"] + 1) not in page
    chapter = boundary_attacks.READ_THE_DRIVER_CHAPTER
    hidden = _hidden_lines(chapter)
    kept = (graded.out / "results" / "attack-read_the_driver" / f"{chapter}.json").read_text() + \
        (graded.out / "feedback" / "attack-read_the_driver" / chapter / f"{chapter}.html").read_text()
    import html as h
    assert hidden and not [line for line in hidden if line in h.unescape(kept) or json.dumps(line)[1:-1] in kept]


def test_shortcuts_earn_nothing(graded):
    """Issue 39: each registered shortcut (autograder/tests/shortcuts/) earns nothing in every test cell that refers to
    a function it replaced, and changes nothing elsewhere."""
    from autograder.provenance import refers_to
    for chapter, entries in shortcuts.load().items():
        tests = {grade_id(c): c.source for c in read(source_path(chapter)).cells if role(c) == "tests"}
        ref = graded.auto_cells("reference", chapter)
        for name, entry in entries.items():
            mine = graded.auto_cells(f"shortcut-{name}", chapter)
            assert mine.keys() == ref.keys(), name
            for cell, (score, points) in mine.items():
                if refers_to(tests[cell], shortcuts.replaced(entry)):
                    assert score == 0, f"{name}: {cell} earns {score} of {points}"
                else:
                    assert (score, points) == ref[cell], f"{name}: {cell} {score} against the reference's {ref[cell]}"


def test_honest_variations_earn_what_the_reference_earns(graded):
    for name, (chapter, _) in cases.honest().items():
        assert graded.auto_cells(f"honest-{name}", chapter) == graded.auto_cells("reference", chapter), name


def test_broken_notebooks_are_reported_and_cost_only_what_did_not_run(graded):
    log = (graded.out / "grading.log").read_text()
    a, b = chapters()[0], chapters()[1]
    for name, chapter in (("invalid_json", a), ("not_a_notebook", b)):
        assert graded.totals[(f"broken-{name}", chapter)][0] == 0
        problems = " ".join(graded.result(f"broken-{name}", chapter)["problems"])
        assert ("could not be read" in problems or "is not a valid notebook" in problems) and \
            "graded as the untouched release" in problems, problems
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
    """Hidden-test lines that appear nowhere in the release or the solutions (so seeing one means a leak)."""
    from autograder.course import release_path
    hidden = set()
    for cell in read(source_path(chapter)).cells:
        for part in re.findall(rf"{re.escape(HIDDEN_BEGIN)}(.*?){re.escape(HIDDEN_END)}", cell.source, re.S):
            hidden.update(line.strip() for line in part.splitlines())
    public = {line.strip() for cell in read(release_path(chapter)).cells for line in cell.source.splitlines()}
    # a line the reference solution also holds (a loop the test re-computes in NumPy) is the student's own too
    hidden_parts = rf"{re.escape(HIDDEN_BEGIN)}.*?{re.escape(HIDDEN_END)}"
    solution = {line.strip() for cell in read(source_path(chapter)).cells
                for line in re.sub(hidden_parts, "", cell.source, flags=re.S).splitlines()}
    return [line for line in hidden - public - solution if len(line) > 25 and not line.startswith("#")]


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
        assert "not written yet" in untouched_html
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
    from autograder.outputs import GRADES_COLUMNS, TESTS_COLUMNS
    with open(graded.out / "grades.csv") as f:  # the first columns as they always were; more after them
        assert f.readline().strip() == ",".join(GRADES_COLUMNS)
        assert GRADES_COLUMNS[:4] == ["student", "assignment", "score", "max_score"]
    with open(graded.out / "tests.csv") as f:
        assert f.readline().strip() == ",".join(TESTS_COLUMNS)
        assert TESTS_COLUMNS[:6] == ["student", "assignment", "notebook", "grade_id", "score", "max_score"]
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


# ------------------------------------------------------------------ hostile inputs (issue 11: findings 5, 7, 9, 10)

def _reference_cells(graded, student):
    return graded.auto_cells(student, cases._hostile_chapter()) == graded.auto_cells("reference",
                                                                                     cases._hostile_chapter())


def test_symbolic_links_are_never_followed(graded):
    """Finding 7: a link to the solutions (directly or through /proc/self/cwd) or to a classmate's notebook
    or folder is graded as the untouched release, with a note, and a linked student folder is skipped."""
    a = cases._hostile_chapter()
    baseline = graded.totals[("untouched", a)]
    assert graded.totals[("reference", a)][0] > baseline[0]
    for student in ("link-solutions", "link-proc-cwd", "link-classmate", "link-assignment"):
        assert graded.totals[(student, a)] == baseline, f"{student} earned {graded.totals[(student, a)]}"
        assert "symbolic link" in " ".join(graded.result(student, a)["problems"]), student
    assert not any(st == "link-student" for st, _ in graded.totals)
    assert "link-student: the student folder is a symbolic link" in (graded.out / "grading.log").read_text()


def test_lone_surrogates_never_crash_an_output(graded):
    """Finding 5: lone surrogates in a notebook's text, in exception messages, in a folder and a file name."""
    a = cases._hostile_chapter()
    for student in ("surrogate-text", "surrogate-folder-\\xff", "surrogate-file"):
        assert _reference_cells(graded, student), student
    assert "mine-\\xfe.ipynb" in " ".join(graded.result("surrogate-file", a)["problems"])
    message = graded.result("surrogate-message", a)
    failed = [c["message"] for cell in message["cells"] for c in cell["checks"] if not c["passed"]]
    assert any("\\udcff" in (m or "") for m in failed), failed
    for student, shown in (("surrogate-text", "\\ud800"), ("surrogate-message", "\\udcff"),
                           ("surrogate-folder-\\xff", "surrogate-folder-\\xff")):
        page = (graded.out / "feedback" / student / a / f"{a}.html").read_text(encoding="utf-8")
        assert shown in page, student
    for name in ("grades.csv", "tests.csv", "report.html", "grading.log"):
        (graded.out / name).read_text(encoding="utf-8")  # valid UTF-8 throughout


def test_csv_cells_never_start_a_formula(graded):
    """Finding 9: a folder named like a formula is written as text in grades.csv and tests.csv."""
    from autograder.text import FORMULA_STARTS
    for name in ("grades.csv", "tests.csv"):
        with open(graded.out / name, encoding="utf-8", newline="") as f:
            rows = list(csv.reader(f))
        bad = [cell for row in rows for cell in row if cell.startswith(FORMULA_STARTS)]
        assert not bad, f"{name}: {bad}"
        students = {row[0] for row in rows}
        assert {"'" + formula for formula in cases.FORMULA_NAMES} <= students, name


def test_names_cannot_forge_log_lines(graded):
    """Finding 9: a folder name holding a newline and a fake record stays inside its own log line."""
    from autograder.text import folder_id
    log = (graded.out / "grading.log").read_text(encoding="utf-8")
    record = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (INFO|WARNING|ERROR) ")
    lines = log.split("\n")
    assert lines[-1] == "" and all(record.match(line) for line in lines[:-1]), \
        [line for line in lines[:-1] if not record.match(line)][:3]
    assert not any(line.startswith(cases.FORGED_LOG_LINE) for line in lines)
    assert not set(log) & {"\r", "\x1b", "\u2028", "\u202e"}
    forger = next(st for st, _ in cases.hostile_inputs() if st.startswith("eve"))
    assert folder_id(forger) in log and "\\n" + cases.FORGED_LOG_LINE in log
    assert (folder_id(forger), cases._hostile_chapter()) in graded.totals


def test_feedback_renders_markup_and_runs_nothing_a_student_wrote(graded):
    """Finding 10: headings, paragraphs and tables render; scripts, event handlers and javascript: links from
    the student's markdown, answers and exception messages are dropped or shown as text."""
    from autograder.tests.test_outputs import RUNS_SCRIPT
    a = cases._hostile_chapter()
    assert _reference_cells(graded, "xss-feedback")
    reference_page = (graded.out / "feedback" / "reference" / a / f"{a}.html").read_text()
    page = (graded.out / "feedback" / "xss-feedback" / a / f"{a}.html").read_text()
    for shown in (page, reference_page):
        assert "&lt;h1" not in shown and "&lt;p&gt;" not in shown and "<h1" in shown and "<p>" in shown
    assert not RUNS_SCRIPT.search(page), RUNS_SCRIPT.search(page)
    assert page.count("<script") == reference_page.count("<script")
    assert "&lt;img src=x onerror=" in page  # the exception message is shown, as text


def test_each_result_records_where_its_time_went(graded):
    """``SubmissionResult.timings``: every phase of ``result.TIMINGS``, within the job's own seconds (what
    ``benchmarks.grading`` reads); a results file written before timings existed still reads."""
    from autograder.result import TIMINGS, SubmissionResult
    for chapter in chapters():
        data = graded.result("reference", chapter)
        timings = data["timings"]
        assert list(timings) == list(TIMINGS), chapter
        assert all(seconds >= 0 for seconds in timings.values()), timings
        assert timings["total"] == data["seconds"]
        phases = ("sandbox_start", "preload", "cells", "checks")
        assert sum(timings[p] for p in phases) <= timings["total"] + 0.01, (chapter, timings)
        assert 0 < timings["checks_in_sandbox"] <= timings["checks"], (chapter, timings)  # its functions ran
        assert timings["preload"] > 0 and timings["cells"] > 0, (chapter, timings)
        assert SubmissionResult.from_json(data).timings == timings
        old = {k: v for k, v in data.items() if k != "timings"}
        assert SubmissionResult.from_json(old).timings == {}
