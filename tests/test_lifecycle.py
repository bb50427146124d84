"""nbgrader's whole lifecycle with this course, as a JupyterHub course runs it, in a temporary folder.

An instructor course directory (the shipped nbgrader_config.py) and a local exchange; the instructor
generates and releases a chapter; students, each with their own home folder, fetch it, fill it in
and submit (alice twice: nbgrader collects the newest; bob after the due date, then he sets his
``timestamp.txt`` back: nbgrader records how late from what he cannot set back, and its default late
plugin takes no points off); the instructor collects, runs plain
``nbgrader autograde`` (which the shipped config points at the hardened grader,
autograder/nbgrader_plugin.py), generates and releases feedback, exports; the students fetch their
feedback and read the verdict of every check, hidden ones named, never their code.

Every instructor command runs as an unprivileged account (``INSTRUCTOR``, made with useradd when the
tests run as root, as on CI), as on a hub. Beside the two honest students sit the attackers of issue 26:

- mallory: her collected notebook replaced by a symbolic link to the solutions (finding 1);
- oscar: his collected student folder replaced by a link to a folder holding the reference;
- trudy: her submission in the exchange's inbound folder replaced by a link to the solutions (finding 1);
- mia: a ``<script>`` and an ``<iframe srcdoc>`` in her written answer (finding 2);
- eve: an unknown grade cell and a duplicated one (finding 3); ivy: a notebook that is not JSON.

and those of issue 38: mia's scratch note carries an ``<img onerror>`` and a ``<script>`` too, which the
formgrader's view of her autograded notebook must not run (finding 3); ``shape-*``: JSON notebooks that are
not nbformat's shape (a string for nbgrader metadata, cells not a list, a cell without source; finding 5).

Before the real autograde, a machine that cannot grade (user namespaces refused) stops
``nbgrader autograde`` with one line, no student touched. ``make grade`` on a
class of the two honest students alone gives their scores, cell by cell: the attackers changed nothing.
"""
from __future__ import annotations

import csv
import datetime
import html
import json
import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from autograder import submissions
from autograder.course import ROOT, SOLUTION_REGION, Chapter, grade_id, role
from autograder.tests.broken_environments import refusing_user_namespaces
from autograder.tests.mutants import load as load_mistakes
from tests.helpers import shared_folder

pytestmark = [pytest.mark.xdist_group("lifecycle")]

CHAPTER = "ch01_perceptron"
COURSE = "dlcourse"
BIN = Path(sys.executable).parent
WRONG = ("margin", next(iter(load_mistakes(CHAPTER)["margin"].values())))  # bob's plausible mistake
INSTRUCTOR = "dlcourse-instructor"  # the unprivileged account the instructor's commands run as
HONEST = ("alice", "bob")
MALFORMED = {  # issue 38, finding 5: what each notebook of this shape breaks in the release
    "shape-meta": lambda nb: next(c for c in nb["cells"] if c["cell_type"] == "markdown"
                                  and c["metadata"].get("nbgrader", {}).get("solution"))["metadata"].update(
        nbgrader="solution"),
    "shape-cells": lambda nb: nb.update(cells={"0": nb["cells"][0]}),
    "shape-source": lambda nb: nb["cells"][1].pop("source"),
}
ATTACKERS = ("mallory", "oscar", "trudy", "mia", "eve", "ivy", *MALFORMED)
THROUGH_THE_EXCHANGE = ("trudy", "mia", "eve")  # the others' folders are placed in grading/submitted/
MARKUP = ("An answer. <script>document.title = 'pwned'</script>"
          "<iframe srcdoc=\"<script>parent.document.title = 'pwned'</script>\"></iframe>")
SCRATCH_MARKUP = "Scratch note. <img src=x onerror=\"document.title = 'pwned'\">\n\n<script>window.__pwned = 1</script>"


def _environment(home: Path, extra=None) -> dict:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_"))}
    environment.update({"HOME": str(home), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
                        "MPLBACKEND": "Agg", "MPLCONFIGDIR": str(home / ".matplotlib"), **(extra or {})})
    return environment


def nbgrader(*args, cwd: Path, home: Path, check=True, env=None, account: list[str] = ()):
    """``nbgrader args`` in ``cwd``; ``account``: the command prefix that runs it as another user."""
    environment = _environment(home, env)
    command = [*account, "/usr/bin/env", *(f"{k}={v}" for k, v in environment.items() if k in (
        "HOME", "PATH", "MPLBACKEND", "MPLCONFIGDIR", "AUTOGRADER_BWRAP"))] if account else []
    done = subprocess.run([*command, str(BIN / "nbgrader"), *args], cwd=cwd, env=environment, capture_output=True,
                          text=True, timeout=900)
    if check:
        assert done.returncode == 0, f"nbgrader {' '.join(args)}:\n{done.stdout[-1500:]}\n{done.stderr[-3000:]}"
    return done


def _blocking_folder(path: str, uid: int) -> str | None:
    """The first folder on the way to ``path`` that others cannot enter (e.g. /root, 0700), if any."""
    current = "/"
    for part in Path(path).parts[1:-1]:
        current = os.path.join(current, part)
        info = os.stat(current)
        if info.st_uid != uid and not info.st_mode & 0o001:
            return current
    return None


def instructor_account(scratch: Path) -> tuple[list[str], int]:
    """(the command prefix that runs a command as the unprivileged instructor, its uid).

    Not root: this process already is an unprivileged account. Root: ``INSTRUCTOR`` is made with
    useradd (kept for the next run). Where the interpreter lives in a folder that account cannot
    enter (pyenv under /root, 0700), its commands run in a private mount namespace where only that
    installation is visible in the folder: the account still has no other right."""
    if os.geteuid() != 0:
        return [], os.geteuid()
    import pwd
    try:
        uid = pwd.getpwnam(INSTRUCTOR).pw_uid
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", INSTRUCTOR],
                       check=True, capture_output=True)
        uid = pwd.getpwnam(INSTRUCTOR).pw_uid
    runuser = ["runuser", "-u", INSTRUCTOR, "--"]
    interpreter = os.path.realpath(sys.executable)
    blocked = _blocking_folder(interpreter, uid)
    if blocked is None:
        return runuser, uid
    needed = os.path.join(blocked, Path(interpreter).relative_to(blocked).parts[0])  # /root/.pyenv
    view = scratch / "interpreter-view"
    view.mkdir()
    q = shlex.quote
    reveal = (f"mount --bind {q(needed)} {q(str(view))} && mount -t tmpfs -o mode=755 tmpfs {q(blocked)} && "
              f"mkdir -p {q(needed)} && mount --bind {q(str(view))} {q(needed)} && exec \"$@\"")
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", reveal, "sh", *runuser], uid


class Student:
    def __init__(self, tmp: Path, name: str, exchange: Path):
        self.name, self.home = name, tmp / "home" / name
        self.home.mkdir(parents=True)
        # what a JupyterHub user's own config (or the hub's) holds; the student id is the login name there
        (self.home / "nbgrader_config.py").write_text(
            "c = get_config()\n"
            f"c.CourseDirectory.course_id = {COURSE!r}\n"
            f"c.Exchange.root = {str(exchange)!r}\n"
            f"c.Exchange.cache = {str(self.home / '.nbgrader_cache')!r}\n"
            f"c.CourseDirectory.student_id = {name!r}\n")

    def run(self, *args, **kwargs):
        return nbgrader(*args, cwd=self.home, home=self.home, **kwargs)

    @property
    def notebook(self) -> Path:
        return self.home / CHAPTER / f"{CHAPTER}.ipynb"

    def save(self, nb) -> None:
        self.notebook.parent.mkdir(exist_ok=True)
        nbformat.write(nb, str(self.notebook))


def _solution_lines() -> set[str]:
    """Distinctive lines of the reference solutions (what a leak of the solutions would show)."""
    lines = set()
    for cell in Chapter.load(CHAPTER).cells("solution"):
        for region in SOLUTION_REGION.findall(cell.source):
            lines.update(line.strip() for line in region.splitlines() if len(line.strip()) > 30)
    return lines


def _attacks(students: dict) -> None:
    """What mia, eve and trudy submit through the exchange (trudy's link comes after she submitted)."""
    mia = submissions.untouched(CHAPTER)
    next(c for c in mia.cells if role(c) == "answer").source = MARKUP
    mia.cells.append(nbformat.v4.new_markdown_cell(SCRATCH_MARKUP))
    students["mia"].save(mia)
    eve = submissions.untouched(CHAPTER)
    test = next(c for c in eve.cells if role(c) == "tests")
    twin = nbformat.v4.new_code_cell("1.0", metadata={"nbgrader": dict(test.metadata["nbgrader"])})
    unknown = nbformat.v4.new_code_cell("1.0", metadata={"nbgrader": {
        "grade": True, "solution": False, "locked": False, "grade_id": "bonus", "points": 100,
        "schema_version": 3}})
    eve.cells[1:1] = [twin, unknown]  # a duplicated grade cell and an unknown one, before the real one
    students["eve"].save(eve)
    students["trudy"].save(submissions.untouched(CHAPTER))


# session scope: xdist may interleave other modules on the same worker, which would rebuild a module fixture
@pytest.fixture(scope="session")
def course():
    with shared_folder("dlcourse-lifecycle-") as tmp:  # not under pytest's 0700 folder
        yield _lifecycle(tmp)


def _lifecycle(tmp: Path) -> dict:
    exchange = tmp / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    instructor = tmp / "instructor"
    (instructor / "solutions").mkdir(parents=True)
    shutil.copytree(ROOT / "solutions" / CHAPTER, instructor / "solutions" / CHAPTER)
    config = (ROOT / "nbgrader_config.py").read_text()
    (instructor / "nbgrader_config.py").write_text(
        config + f"\nc.Exchange.root = {str(exchange)!r}\nc.ExchangeCollect.check_owner = False\n")
    account, uid = instructor_account(tmp)
    if os.geteuid() == 0:
        shutil.chown(instructor, uid, uid)
        for path in instructor.rglob("*"):
            os.chown(path, uid, uid, follow_symlinks=False)
    teacher = lambda *args, **kw: nbgrader(*args, cwd=instructor, home=instructor, account=account, **kw)  # noqa: E731

    teacher("generate_assignment", CHAPTER, "--force")
    teacher("release_assignment", CHAPTER)
    students = {name: Student(tmp, name, exchange) for name in HONEST + THROUGH_THE_EXCHANGE}
    alice, bob = students["alice"], students["bob"]
    for student in (alice, bob):
        listed = student.run("list")
        assert CHAPTER in listed.stdout + listed.stderr
        student.run("fetch_assignment", CHAPTER)
        assert student.notebook.is_file()
        # what they fetched is the release: no solution, no hidden test
        fetched = student.notebook.read_text()
        assert "BEGIN HIDDEN TESTS" not in fetched and "BEGIN SOLUTION" not in fetched

    _attacks(students)  # (the attackers need not fetch: the release is public)
    for name in THROUGH_THE_EXCHANGE:
        students[name].run("submit", CHAPTER)
    alice.save(submissions.untouched(CHAPTER))  # a first, empty submission...
    alice.run("submit", CHAPTER)
    alice.save(submissions.reference(CHAPTER))  # ...then the finished one
    alice.run("submit", CHAPTER)
    # the due date, in whole seconds, falls strictly between alice's last submission and bob's
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    due = now.replace(microsecond=0) + datetime.timedelta(seconds=1)
    teacher("db", "assignment", "add", CHAPTER, f"--duedate={due.isoformat(sep=' ')} UTC")
    until_due = due - datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    time.sleep(max(0.0, until_due.total_seconds()) + 0.1)
    bob.save(submissions.filled(CHAPTER, {WRONG[0]: WRONG[1]}))  # after the due date, one mistake
    bob.run("submit", CHAPTER)
    # ...and sets the time he claims back to before it (timestamp.txt, his own file in the exchange, in place)
    claimed = (due - datetime.timedelta(hours=1)).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    (next((exchange / COURSE / "inbound").glob(f"bob+{CHAPTER}+*")) / "timestamp.txt").write_text(claimed)

    # trudy swaps her notebook in the inbound folder (hers, writable) for a link to the solutions
    solutions_notebook = instructor / "solutions" / CHAPTER / f"{CHAPTER}.ipynb"
    inbound = next((exchange / COURSE / "inbound").glob(f"trudy+{CHAPTER}+*"))
    (inbound / f"{CHAPTER}.ipynb").unlink()
    (inbound / f"{CHAPTER}.ipynb").symlink_to(solutions_notebook)
    collect = teacher("collect", CHAPTER)
    submitted = instructor / "grading" / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == sorted(HONEST + THROUGH_THE_EXCHANGE)
    # placed in grading/submitted/ (e.g. unpacked from an LMS archive): links and a notebook that is not JSON
    for name in ("mallory", "ivy", *MALFORMED):
        (submitted / name / CHAPTER).mkdir(parents=True)
    (submitted / "mallory" / CHAPTER / f"{CHAPTER}.ipynb").symlink_to(solutions_notebook)
    (submitted / "ivy" / CHAPTER / f"{CHAPTER}.ipynb").write_text('{"cells": [')
    for name, change in MALFORMED.items():
        broken = json.loads(nbformat.writes(submissions.untouched(CHAPTER)))
        change(broken)
        (submitted / name / CHAPTER / f"{CHAPTER}.ipynb").write_text(json.dumps(broken))
    elsewhere = tmp / "elsewhere"
    (elsewhere / CHAPTER).mkdir(parents=True)
    nbformat.write(submissions.reference(CHAPTER), str(elsewhere / CHAPTER / f"{CHAPTER}.ipynb"))
    (submitted / "oscar").symlink_to(elsewhere)
    for folder in (submitted / "mallory" / CHAPTER, submitted / "ivy" / CHAPTER, elsewhere / CHAPTER,
                   *(submitted / name / CHAPTER for name in MALFORMED)):
        # as nbgrader's collect leaves them (release_feedback names each page after the notebook and the secret)
        shutil.copy(submitted / "alice" / CHAPTER / "timestamp.txt", folder / "timestamp.txt")
        (folder / "submission_secret.txt").write_text(secrets.token_hex(16))
    if os.geteuid() == 0:
        for path in [submitted / "mallory", submitted / "ivy", *(submitted / "mallory").rglob("*"),
                     *(submitted / "ivy").rglob("*"), submitted / "oscar", *elsewhere.rglob("*"),
                     *(submitted / name for name in MALFORMED),
                     *(path for name in MALFORMED for path in (submitted / name).rglob("*"))]:
            os.chown(path, uid, uid, follow_symlinks=False)

    # a machine that cannot grade: one line, nothing graded (the pre-flight, before any student; the other
    # case, a sandbox that sees other packages, is autograder/tests/test_preflight.py's, through make grade)
    refused = {"userns": teacher("autograde", CHAPTER, "--force", check=False,
                                 env={"AUTOGRADER_BWRAP": refusing_user_namespaces(tmp)})}
    refused["gradebook"] = _gradebook_scores(instructor)
    refused["autograded"] = (instructor / "grading" / "autograded").exists()

    autograde = teacher("autograde", CHAPTER, "--force", check=False)
    feedback_log = teacher("generate_feedback", CHAPTER, "--force")
    teacher("release_feedback", CHAPTER)
    for name in ("alice", "bob", "mia"):
        students[name].run("fetch_feedback", CHAPTER)
    teacher("export")

    from autograder.classroom import grade_class
    honest = tmp / "honest-class"
    for name in HONEST:
        shutil.copytree(submitted / name, honest / name)
    out = grade_class(str(honest), str(tmp / "make-grade"), jobs=1)
    return {"tmp": tmp, "instructor": instructor, "alice": alice, "bob": bob, "students": students,
            "out": out, "uid": uid, "refused": refused, "autograde": autograde, "collect": collect, "claimed": claimed,
            "autograde_log": autograde.stdout + autograde.stderr, "feedback_log": feedback_log,
            "results": {name: _make_grade_json(out, name) for name in HONEST},
            "solution_lines": _solution_lines()}


def _make_grade_json(out: Path, student: str) -> dict:
    import json
    return json.loads((out / "results" / student / f"{CHAPTER}.json").read_text())


def _gradebook_scores(instructor: Path) -> dict:
    from nbgrader.api import Gradebook
    scores = {}
    with Gradebook(f"sqlite:///{instructor / 'grading' / 'gradebook.db'}") as gb:
        for submission in gb.assignment_submissions(CHAPTER):
            nb = submission.notebooks[0]
            scores[submission.student.id] = {
                "cells": {g.name: g.auto_score for g in nb.grades},
                "late": submission.total_seconds_late, "score": submission.score}
    return scores


def test_newest_submission_is_collected_and_lateness_recorded(course):
    scores = _gradebook_scores(course["instructor"])
    chapter = Chapter.load(CHAPTER)
    tests = {grade_id(c): float(c.metadata["nbgrader"]["points"]) for c in chapter.cells("tests")}
    # alice's second submission (the reference) was collected, not her first (empty) one
    assert all(scores["alice"]["cells"][gid] == points for gid, points in tests.items()), scores["alice"]
    assert scores["alice"]["late"] == 0
    # bob submitted after the due date: nbgrader records it, and by default takes no points off; his
    # timestamp.txt, set back, is kept as what he claims, never as when he submitted (issue 38, finding 6)
    assert scores["bob"]["late"] > 0
    submitted = course["instructor"] / "grading" / "submitted"
    assert (submitted / "bob" / CHAPTER / "timestamp_claimed.txt").read_text() == course["claimed"]
    assert re.search(rf"bob\+{CHAPTER}\+.*timestamp.txt claims '{re.escape(course['claimed'])}'",
                     course["collect"].stdout + course["collect"].stderr)
    assert scores["bob"]["cells"][f"test_{WRONG[0]}"] < tests[f"test_{WRONG[0]}"]
    others = {gid: p for gid, p in tests.items() if gid != f"test_{WRONG[0]}"}
    assert all(scores["bob"]["cells"][gid] == p for gid, p in others.items()), scores["bob"]
    rows = {r["student_id"]: r for r in csv.DictReader(open(course["instructor"] / "grades.csv"))}
    assert float(rows["bob"]["late_submission_penalty"] or 0) == 0
    assert float(rows["bob"]["raw_score"]) == pytest.approx(scores["bob"]["score"])


def test_nbgrader_autograde_gives_make_grades_scores(course):
    """Plain `nbgrader autograde` (the shipped config) grades in the sandbox: same verdicts as make grade."""
    assert "graded in the sandbox" in course["autograde_log"]
    scores = _gradebook_scores(course["instructor"])
    made = {}
    for row in csv.DictReader(open(course["out"] / "tests.csv")):
        made.setdefault(row["student"], {})[row["grade_id"]] = float(row["score"]) if row["score"] else None
    for student in ("alice", "bob"):
        assert made[student] == pytest.approx(scores[student]["cells"]), student
    # the autograded notebook keeps no hidden test code either
    autograded = (course["instructor"] / "grading" / "autograded" / "bob" / CHAPTER / f"{CHAPTER}.ipynb").read_text()
    assert "BEGIN HIDDEN TESTS" not in autograded


def test_students_fetch_feedback_naming_hidden_checks_never_their_code(course):
    from tests.test_selfcheck import hidden_source_lines
    hidden = hidden_source_lines(CHAPTER)
    assert hidden
    for name in ("alice", "bob"):
        student = course[name]
        pages = list((student.home / CHAPTER / "feedback").rglob(f"{CHAPTER}.html"))
        assert len(pages) == 1, pages
        page = pages[0].read_text()
        leaked = sorted(line for line in hidden if line in page)
        assert not leaked and "BEGIN HIDDEN" not in page, leaked[:3]
        assert "hidden" in page and "✘" in page if name == "bob" else "✔" in page
    bob = next((course["bob"].home / CHAPTER / "feedback").rglob(f"{CHAPTER}.html")).read_text()
    result = _make_grade_result(course, "bob")
    failing = [c for cell in result["cells"] for c in cell["checks"] if not c["passed"]]
    assert failing and any(c["hidden"] for c in failing)
    for check in failing:  # every failing check is named in bob's feedback, hidden ones included
        assert html.escape(check["description"]) in bob, check["description"]


def _make_grade_result(course, student):
    return course["results"][student]


def test_stock_autograde_only_by_an_explicit_switch(monkeypatch):
    from traitlets.config import Config

    from autograder import nbgrader_plugin
    monkeypatch.delenv(nbgrader_plugin.STOCK_SWITCH, raising=False)
    c = Config()
    assert nbgrader_plugin.configure(c) == "sandboxed"
    assert c.Autograde.autograde_preprocessors[0] is nbgrader_plugin.SandboxedExecute
    monkeypatch.setenv(nbgrader_plugin.STOCK_SWITCH, "1")
    c = Config()
    assert nbgrader_plugin.configure(c) == "stock" and "autograde_preprocessors" not in c.Autograde
    assert nbgrader_plugin.HideHiddenTests in c.GenerateFeedback.preprocessors


def test_the_instructor_is_an_unprivileged_account(course):
    """Every instructor command ran as a normal account: what they wrote is that account's."""
    assert course["uid"] != 0
    grading = course["instructor"] / "grading"
    written = [grading / "gradebook.db", course["instructor"] / "grades.csv",
               grading / "autograded" / "alice" / CHAPTER / f"{CHAPTER}.ipynb",
               grading / "feedback" / "alice" / CHAPTER / f"{CHAPTER}.html"]
    assert all(path.stat().st_uid == course["uid"] for path in written), [(p, p.stat().st_uid) for p in written]


def test_an_environment_error_stops_nbgrader_autograde_before_the_class(course):
    """Where user namespaces are refused (a container), autograde says so in one line, with the way out."""
    done, says = course["refused"]["userns"], ["user namespaces", "grade on a host or VM", "unsafe_no_isolation"]
    assert done.returncode != 0
    lines = [line for line in (done.stdout + done.stderr).splitlines() if "environment error" in line]
    assert len(lines) == 1 and all(word in lines[0] for word in says), lines
    assert "Traceback" not in done.stderr
    assert course["refused"]["gradebook"] == {} and not course["refused"]["autograded"]  # nobody got a zero


def test_links_earn_nothing_and_leak_no_solution(course):
    """A notebook (mallory) or student folder (oscar) swapped for a link in grading/submitted/, and a link
    in the exchange's inbound folder (trudy): graded as the untouched release, never as their target."""
    scores = _gradebook_scores(course["instructor"])
    assert all(scores[name]["score"] == 0 for name in ("mallory", "oscar")), scores
    assert "trudy" not in scores  # her folder was collected without the link: no notebook to grade
    log = course["autograde_log"]
    for name in ("mallory", "oscar"):
        assert re.search(rf"{name}/{CHAPTER}: .*symbolic link: not followed", log), name
    collected = course["collect"].stdout + course["collect"].stderr
    assert re.search(rf"trudy\+{CHAPTER}\+.*/{CHAPTER}.ipynb is a symbolic link: not collected", collected)
    trudy = course["instructor"] / "grading" / "submitted" / "trudy" / CHAPTER / f"{CHAPTER}.ipynb"
    assert not trudy.exists() and not trudy.is_symlink()
    solution_lines = course["solution_lines"]
    assert solution_lines
    grading = course["instructor"] / "grading"
    for name in ("mallory", "oscar", "trudy"):
        for folder in ("autograded", "feedback"):
            for path in (grading / folder / name).rglob("*.*"):
                text = path.read_text(errors="replace")
                assert not [line for line in solution_lines if line in text], (name, path)


def test_an_answer_not_graded_by_hand_yet_reads_alike_on_both_doors(course):
    """Issue 38, finding 7: nbgrader's generate_feedback showed alice's written answer, still to be graded by hand,
    as `0 / 2` (the gradebook's score until a person grades it); its page says what make grade's says."""
    from dlcourse.vocabulary import FREE_RESPONSE, TO_BE_HAND_GRADED
    answer = Chapter.load(CHAPTER).cells("answer")[0]
    said = f"{TO_BE_HAND_GRADED} / {float(answer.metadata['nbgrader']['points']):g}"
    row = re.compile(rf"{re.escape(grade_id(answer))}(?:</span>)? \({FREE_RESPONSE}\)</td><td>([^<]*)</td>")
    nbgrader_page = (course["instructor"] / "grading" / "feedback" / "alice" / CHAPTER / f"{CHAPTER}.html").read_text()
    make_grade_page = (course["out"] / "feedback" / "alice" / CHAPTER / f"{CHAPTER}.html").read_text()
    assert row.findall(nbgrader_page) == row.findall(make_grade_page) == [said]
    assert re.findall(r"Graded by hand:</b>\s*([^<]*?)\s*</p>", nbgrader_page) == [said]  # under the answer too


def test_student_markup_never_runs_in_nbgrader_feedback(course):
    """mia's <script> and <iframe srcdoc> are dropped by the course's sanitizer, under the course's CSP."""
    fetched = list((course["students"]["mia"].home / CHAPTER / "feedback").rglob(f"{CHAPTER}.html"))
    page = (course["instructor"] / "grading" / "feedback" / "mia" / CHAPTER / f"{CHAPTER}.html").read_text()
    assert fetched and fetched[0].read_text() == page
    assert "An answer." in page and "<iframe" not in page and "srcdoc" not in page
    scripts = re.findall(r"<script[^>]*>(.*?)</script>", page, re.S)
    assert not [body for body in scripts if "pwned" in body]
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    policy = html.unescape(policy.group(1))
    assert "script-src" in policy and "unsafe-inline" not in policy and "frame-src 'none'" in policy


def test_a_broken_notebook_costs_only_itself(course):
    """eve's unknown and duplicated grade cells, ivy's invalid JSON: each graded as what could be read, named
    in a warning; every student has a gradebook entry, autograde exits 0 (as make grade does)."""
    assert course["autograde"].returncode == 0, course["autograde_log"][-3000:]
    scores = _gradebook_scores(course["instructor"])
    assert sorted(scores) == sorted(set(HONEST + ATTACKERS) - {"trudy"})  # trudy: nothing was collected
    assert scores["eve"]["score"] == 0 and "bonus" not in scores["eve"]["cells"]
    assert scores["ivy"]["score"] == 0
    log = course["autograde_log"]
    assert re.search(rf"ivy/{CHAPTER}: the notebook could not be read", log)
    assert re.search(rf"eve/{CHAPTER}: .*nbgrader metadata", log)
    for name in MALFORMED:  # issue 38, finding 5: JSON, but not a notebook's shape
        assert scores[name]["score"] == 0, name
        assert re.search(rf"{name}/{CHAPTER}: the notebook is not a valid notebook \(", log), name
    assert "AttributeError" not in log and "Traceback" not in log
    rows = {r["student_id"] for r in csv.DictReader(open(course["instructor"] / "grades.csv"))}
    assert rows == set(scores)


def test_untouched_cells_raise_no_false_warning(course):
    """nbgrader's OverwriteCells compared the release's test cells with the solutions' (hidden tests
    included) and warned 'checksum has changed' for every untouched one; it is not used any more."""
    log = course["autograde_log"]
    assert "has changed" not in log
    assert not re.search(rf"(alice|bob)/{CHAPTER}: .*(modified|restored)", log)
    assert "not recognized" not in course["feedback_log"].stdout + course["feedback_log"].stderr


def test_student_markup_never_runs_in_the_formgrader(course):
    """Issue 38, finding 3: mia's answer and scratch note in grading/autograded are already through the course's
    sanitizer, so nbgrader's formgrader (its formgrade template renders markdown as it is) shows them as text."""
    from autograder.tests.test_untrusted_notebooks import RUNS, formgrade_html
    path = course["instructor"] / "grading" / "autograded" / "mia" / CHAPTER / f"{CHAPTER}.ipynb"
    page = formgrade_html(path, "mia")
    assert "An answer." in page and "Scratch note." in page
    assert not RUNS.search(page) and "<iframe" not in page and "<img" not in page
    # every cell as any viewer gets it (the notebook's metadata keeps the grader's result, which no viewer renders)
    cells = json.dumps(nbformat.read(str(path), as_version=4).cells)
    assert not RUNS.search(cells) and "<script>" not in cells and "Scratch note." in cells
