"""The whole class on a real JupyterHub (`make hub`), driven in headless Chromium: `make test-hub`.

The test stands its own hub up with hub/hub.py (its own HUB_DIR, port and account names, so that it never
meets a `make hub` of the machine's), then:

1. student 1 logs in, fetches ch01_perceptron in nbgrader's Assignments tab, writes `perceptron_predict`
   in its cell, runs the cells above and its test cell (which says its checks passed), answers the free
   question, saves and submits; student 2 does the same (no written answer);
2. a student's server cannot open the solutions, the gradebook, the instructor's files or the other
   student's files, and its lab has nbgrader's instructor parts disabled and locked;
3. the instructor logs in (the formgrader opens in its own tab, as nbgrader's docs say for JupyterHub >= 4.1);
   `nbgrader collect` and `nbgrader autograde` run as the instructor's account with the environment its
   server has (the same commands a terminal in its lab runs; the formgrader's buttons are not driven); the
   instructor gives points to student 1's free answer by hand in the formgrader; `nbgrader
   generate_feedback` and `release_feedback` as the instructor;
4. each student fetches the feedback in the Assignments tab, opens it and sees the gradebook's score.

Screenshots: tests/screenshots/hub/ (printed). The hub is stopped, and everything it made removed (hub/hub.py
down), at the end, also when a step fails. Root only (accounts, PAM), Linux, configurable-http-proxy from npm.
"""
from __future__ import annotations

import json
import os
import pwd
import re
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from autograder.course import ROOT
from autograder.nbgrader_settings import COURSE_ID
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, _unavailable

pytestmark = [pytest.mark.hub, pytest.mark.xdist_group("hub")]  # not "browser": make test-browser leaves it out

CHAPTER = "ch01_perceptron"
FUNCTION = "perceptron_predict"
ANSWER = '''def perceptron_predict(X, w, b):
    """Labels of the rows of X under the perceptron (w, b)."""
    return np.sign(np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) + float(b))
'''
WRITTEN = "The bound depends only on R / gamma, and scaling every point by 10 scales R and gamma alike."
POINTS, COMMENT = 1.5, "Right: a ratio of lengths. Say why the updates do not change."
SCREENSHOTS = ROOT / "tests" / "screenshots" / "hub"
HUB = [sys.executable, str(ROOT / "hub" / "hub.py")]
LONG = 180_000  # ms: a server's first start (the hub spawns it, its first import of numpy and matplotlib)


def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def hub():
    if os.geteuid() != 0:
        _unavailable("the hub test makes accounts and logs them in with PAM: run it as root")
    if not Path(CHROMIUM).is_file():
        _unavailable(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    if not shutil.which("configurable-http-proxy"):
        _unavailable("configurable-http-proxy is not installed (npm install -g configurable-http-proxy)")
    tag = secrets.token_hex(2)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_"))},
           "HUB_DIR": f"/srv/dlcourse-hub-test-{tag}", "HUB_PORT": str(_free_port()), "HUB_IP": "127.0.0.1",
           "HUB_ACCOUNT_PREFIX": f"dlct{tag}-"}
    started = time.monotonic()
    done = subprocess.run([*HUB, "up"], env=env, capture_output=True, text=True, timeout=900)
    print(f"\nhub/hub.py up: {time.monotonic() - started:.0f} s\n{done.stdout[-1500:]}", flush=True)
    try:
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        hub_dir = Path(env["HUB_DIR"])
        state = json.loads((hub_dir / "state.json").read_text())
        state["passwords"] = json.loads((hub_dir / "hub-state" / "passwords.json").read_text())
        state["env"] = env
        yield state
    finally:
        stopped = subprocess.run([*HUB, "down"], env=env, capture_output=True, text=True, timeout=300)
        print(f"hub/hub.py down:\n{stopped.stdout[-1500:]}{stopped.stderr[-1500:]}", flush=True)
        names = [f"dlct{tag}-{n}" for n in ("instructor", "student1", "student2")]
        left = [n for n in names if _exists(n)] + [p for p in (env["HUB_DIR"], *(f"/home/{n}" for n in names))
                                                    if os.path.exists(p)]
        assert stopped.returncode == 0 and not left, f"left behind: {left}\n{stopped.stderr}"


def _exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=False)


def login(browser, hub, name):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(f"{hub['url']}/hub/login", wait_until="domcontentloaded", timeout=60_000)
    page.fill("#username_input", name)
    page.fill("#password_input", hub["passwords"][name])
    page.click("#login_submit")
    page.wait_for_url(re.compile(rf"/user/{re.escape(name)}/lab"), timeout=LONG)
    page.wait_for_selector("#jp-main-dock-panel", timeout=LONG)
    page.locator(".lm-MenuBar-item", has_text="Nbgrader").first.wait_for(timeout=60_000)
    return context, page


def assignments(page):
    """Nbgrader > Assignment List; the panel."""
    page.keyboard.press("Escape")
    page.locator(".lm-MenuBar-item", has_text="Nbgrader").first.click()
    page.locator('.lm-Menu-item[data-command="nbgrader:open-assignment-list"]').click()
    panel = page.locator("#nbgrader-assignment-list")
    panel.wait_for(timeout=60_000)
    return panel


def cell(page, index: int):
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").nth(index)


def run_selected(page) -> None:
    page.keyboard.press("Shift+Enter")


def student_works(browser, hub, name: str, written: str | None) -> None:
    context, page = login(browser, hub, name)
    try:
        panel = assignments(page)
        released = panel.locator("#released_assignments_list .list_item", has_text=CHAPTER)
        released.locator("button", has_text="Fetch").click(timeout=60_000)
        fetched = panel.locator("#fetched_assignments_list .list_item", has_text=CHAPTER).first
        fetched.wait_for(timeout=60_000)
        shot(page, f"{name}-1-fetched")
        home = Path(pwd.getpwnam(name).pw_dir)
        notebook = home / CHAPTER / f"{CHAPTER}.ipynb"
        assert notebook.is_file(), f"fetched into {notebook}"
        nb = nbformat.read(str(notebook), as_version=4)
        ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells]
        solution, test, free = ids.index(FUNCTION), ids.index(f"test_{FUNCTION}"), ids.index("free_response_margin")

        page.goto(f"{hub['url']}/user/{name}/lab/tree/{CHAPTER}/{CHAPTER}.ipynb", wait_until="domcontentloaded",
                  timeout=60_000)
        page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=LONG)
        page.wait_for_function(
            """() => { const s = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');
                       return s && s.getAttribute('data-status') === 'idle'; }""", timeout=LONG)
        # the function: its cell's text replaced by the student's answer
        editor = cell(page, solution).locator(".cm-content")
        editor.click()
        page.keyboard.press("Control+a")
        page.keyboard.insert_text(ANSWER)
        # the cells above (setup) and the function, then its test cell, one at a time
        for index in [*(i for i in range(solution + 1) if nb.cells[i].cell_type == "code"), test]:
            cell(page, index).locator(".jp-InputArea-prompt").click()  # selects it (its collapser would hide it)
            page.keyboard.press("Control+Enter")
        output = cell(page, test).locator(".jp-OutputArea-output")
        output.first.wait_for(timeout=LONG)
        page.wait_for_function(
            """() => { const s = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');
                       return s && s.getAttribute('data-status') === 'idle'; }""", timeout=LONG)
        said = output.all_inner_texts()
        assert any("checks passed" in text for text in said), said
        cell(page, test).scroll_into_view_if_needed()
        shot(page, f"{name}-2-test-cell-passed")
        if written is not None:
            answer = cell(page, free)
            answer.scroll_into_view_if_needed()
            answer.dblclick()
            answer.locator(".cm-content").click()
            page.keyboard.press("Control+a")
            page.keyboard.insert_text(written)
            page.keyboard.press("Shift+Enter")
        page.keyboard.press("Control+s")
        deadline = time.monotonic() + 30
        while True:  # saved: the file holds the student's function (and answer)
            saved = nbformat.read(str(notebook), as_version=4)
            if "np.sign(" in saved.cells[solution].source and (written is None or written in saved.cells[free].source):
                break
            assert time.monotonic() < deadline, "the notebook was not saved"
            time.sleep(0.5)

        panel = assignments(page)
        fetched = panel.locator("#fetched_assignments_list .list_item", has_text=CHAPTER).first
        fetched.locator("button", has_text="Submit").click(timeout=60_000)
        panel.locator("#submitted_assignments_list .list_item", has_text=CHAPTER).first.wait_for(timeout=60_000)
        shot(page, f"{name}-3-submitted")
        inbound = Path(hub["exchange"]) / COURSE_ID / "inbound"
        assert any(p.name.startswith(f"{name}+{CHAPTER}+") for p in inbound.iterdir()), sorted(inbound.iterdir())
    finally:
        context.close()


PROBE = """
import sys
denied, opened = [], []
for path in sys.argv[1:]:
    try:
        open(path).close()
        opened.append(path)
    except PermissionError:
        denied.append(path)
print(opened)
"""


def cannot_read(hub, student: str, other: str) -> None:
    """As the student's account, in its server's environment: open() of each private path fails."""
    copy = Path(hub["course_copy"])
    paths = [copy / "solutions" / CHAPTER / f"{CHAPTER}.ipynb", copy / "grading" / "gradebook.db",
             copy / "nbgrader_config.py",
             Path(pwd.getpwnam(hub["instructor"]).pw_dir) / ".jupyter" / "nbgrader_config.py",
             Path(pwd.getpwnam(other).pw_dir) / CHAPTER / f"{CHAPTER}.ipynb",
             Path(hub["hub_state"]) / "passwords.json", Path(hub["hub_state"]) / "jupyterhub.sqlite"]
    for path in paths:
        assert path.exists(), path
    done = subprocess.run(["runuser", "-u", student, "--", f"{hub['venv']}/bin/python", "-c", PROBE,
                           *map(str, paths)], capture_output=True, text=True, timeout=60, cwd="/")
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr
    # the student's environment has the course's package, not its grader (which needs solutions/)
    done = subprocess.run(["runuser", "-u", student, "--", f"{hub['venv']}/bin/python", "-c",
                           "import importlib.util as u, dlcourse; print(dlcourse.__file__, u.find_spec('autograder'))"],
                          capture_output=True, text=True, timeout=60, cwd="/")
    assert done.stdout.startswith(hub["venv"]) and done.stdout.strip().endswith("None"), done.stdout + done.stderr


def as_instructor(hub, *args, program="nbgrader") -> str:
    """An nbgrader command as the instructor's account, in its course directory, with its server's environment
    (what a terminal in the instructor's lab runs)."""
    name = hub["instructor"]
    home = pwd.getpwnam(name).pw_dir
    env = {"HOME": home, "USER": name, "LOGNAME": name, "LANG": "C.UTF-8", "MPLBACKEND": "Agg",
           "PATH": f"{hub['venv']}/bin:/usr/local/bin:/usr/bin:/bin", "PYTHONPATH": hub["course_copy"],
           "DLCOURSE_EXISTING_ENV": "1"}
    done = subprocess.run(["runuser", "-u", name, "--", "/usr/bin/env", "-i", *(f"{k}={v}" for k, v in env.items()),
                           f"{hub['venv']}/bin/{program}", *args], cwd=hub["course_copy"], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, f"{program} {' '.join(args)}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout if program == "python" else done.stdout + done.stderr


GRADEBOOK = """
import json, sys
from nbgrader.api import Gradebook
chapter, students, student = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
with Gradebook("sqlite:///grading/gradebook.db") as gb:
    assignment = gb.find_assignment(chapter)
    print(json.dumps({
        "submitted": sorted(s.student_id for s in assignment.submissions),
        "submission_id": gb.find_submission_notebook(chapter, chapter, student).id,
        "manual_score": gb.find_grade("free_response_margin", chapter, chapter, student).manual_score,
        "manual_comment": gb.find_comment("free_response_margin", chapter, chapter, student).manual_comment,
        "scores": {s: [gb.find_submission(chapter, s).score, assignment.max_score] for s in students}}))
"""


def gradebook(hub) -> dict:
    """The instructor's gradebook, read as the instructor (root would leave files the instructor cannot write)."""
    said = as_instructor(hub, "-c", GRADEBOOK, CHAPTER, ",".join(hub["students"]), hub["students"][0],
                         program="python")
    return json.loads(said.strip().splitlines()[-1])


def instructor_grades(browser, hub) -> None:
    name = hub["instructor"]
    context, page = login(browser, hub, name)
    try:
        shot(page, "instructor-1-lab")
        as_instructor(hub, "collect", CHAPTER)
        as_instructor(hub, "autograde", CHAPTER)
        book = gradebook(hub)
        assert book["submitted"] == sorted(hub["students"]), book
        submission_id = book["submission_id"]
        # the formgrader in a tab of its own (JupyterHub >= 4.1 forbids the lab's iframe)
        page.goto(f"{hub['url']}/user/{name}/formgrader/manage_assignments", wait_until="domcontentloaded",
                  timeout=60_000)
        row = page.locator("tr", has=page.locator(f"text={CHAPTER}")).first
        row.locator(".num-submissions").wait_for(timeout=60_000)
        assert row.locator(".num-submissions").inner_text().strip() == "2"
        shot(page, "instructor-2-formgrader-assignments")
        page.goto(f"{hub['url']}/user/{name}/formgrader/submissions/{submission_id}/", wait_until="domcontentloaded",
                  timeout=60_000)
        score = page.locator("input.score#free_response_margin")
        score.wait_for(timeout=60_000)
        assert WRITTEN in page.content()
        score.fill(f"{POINTS:g}")
        score.press("Tab")
        comment = page.locator("textarea#free_response_margin-comment")
        comment.fill(COMMENT)
        comment.press("Tab")
        deadline = time.monotonic() + 60
        while True:
            book = gradebook(hub)
            if (book["manual_score"], book["manual_comment"]) == (POINTS, COMMENT):
                break
            assert time.monotonic() < deadline, "the formgrader did not save the hand grade and its comment"
            time.sleep(0.5)
        score.scroll_into_view_if_needed()
        shot(page, "instructor-3-hand-grade")
        as_instructor(hub, "generate_feedback", CHAPTER)
        as_instructor(hub, "release_feedback", CHAPTER)
    finally:
        context.close()


def student_reads_feedback(browser, hub, name: str, expected: tuple, comment: str | None) -> None:
    context, page = login(browser, hub, name)
    try:
        panel = assignments(page)
        submitted = panel.locator("#submitted_assignments_list .list_item", has_text=CHAPTER).first
        submitted.locator("button", has_text="Fetch Feedback").click(timeout=60_000)
        link = panel.locator("#submitted_assignments_list a", has_text="view feedback").first
        link.wait_for(timeout=60_000)
        shot(page, f"{name}-4-feedback-fetched")
        home = Path(pwd.getpwnam(name).pw_dir)
        pages = sorted((home / CHAPTER / "feedback").glob(f"*/{CHAPTER}.html"))
        assert len(pages) == 1, pages
        relative = pages[0].relative_to(home)
        page.goto(f"{hub['url']}/user/{name}/files/{relative}", wait_until="domcontentloaded", timeout=60_000)
        score, maximum = expected
        text = page.locator("body").inner_text()
        assert f"Score: {score:g} / {maximum:g}" in text, text[:1500]
        assert name in text
        if comment:
            assert comment in text, text[:1500]
        shot(page, f"{name}-5-feedback")
    finally:
        context.close()


def test_the_class_on_a_real_hub(hub, playwright):
    started = time.monotonic()
    print(f"screenshots: {SCREENSHOTS}", flush=True)
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)
    browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    try:
        first, second = hub["students"]
        student_works(browser, hub, first, WRITTEN)
        student_works(browser, hub, second, None)
        print(f"students submitted: {time.monotonic() - started:.0f} s", flush=True)
        cannot_read(hub, first, second)
        cannot_read(hub, second, first)
        # the course id said once: the hub's global config is generated from the course's settings, which the
        # instructor's copy reads too
        config = Path(hub["global_nbgrader_config"]).read_text()
        assert f"c.CourseDirectory.course_id = {COURSE_ID!r}" in config, config
        copied = (Path(hub["course_copy"]) / "autograder" / "nbgrader_settings.py").read_text()
        assert copied == (ROOT / "autograder" / "nbgrader_settings.py").read_text()
        instructor_grades(browser, hub)
        print(f"graded and feedback released: {time.monotonic() - started:.0f} s", flush=True)
        scores = {name: tuple(score) for name, score in gradebook(hub)["scores"].items()}
        assert scores[first][0] == pytest.approx(scores[second][0] + POINTS), scores
        for name in hub["students"]:
            student_reads_feedback(browser, hub, name, scores[name], COMMENT if name == first else None)
        print(f"students read their feedback: {time.monotonic() - started:.0f} s; scores {scores}", flush=True)
    finally:
        browser.close()
