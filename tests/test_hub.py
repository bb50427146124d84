"""The whole class on a real JupyterHub (`make hub`), driven in headless Chromium: `make test-hub`.

The test stands its own hub up with hub/hub.py (its own HUB_DIR, port and account names, so that it never
meets a `make hub` of the machine's), then:

1. student 1 logs in, fetches ch01_perceptron in nbgrader's Assignments tab, writes `perceptron_predict`
   in its cell, runs the cells above and its test cell (which says its checks passed), answers the free
   question, saves and submits; student 2 does the same;
2. a student's account cannot read the solutions, the gradebook, the instructor's files or the other
   student's files, nor list the exchange's inbound and feedback folders, and its lab has nbgrader's
   instructor parts disabled and locked;
3. the instructor logs in; `nbgrader` is on PATH in a terminal of its lab (a login shell); in the formgrader
   (its own tab, as nbgrader's docs say for JupyterHub >= 4.1) it collects, autogrades each submission (in
   the grader's sandbox), gives points to student 1's free answer by hand, generates and releases feedback,
   with the formgrader's buttons; student 2's written answer is left ungraded;
4. each student fetches the feedback in the Assignments tab, opens it and sees the gradebook's score (student
   2's written answer "to be graded by hand", not 0 points).

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
from dlcourse.vocabulary import TO_BE_HAND_GRADED
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, _unavailable

pytestmark = [pytest.mark.hub, pytest.mark.xdist_group("hub")]  # not "browser": make test-browser leaves it out

CHAPTER = "ch01_perceptron"
FUNCTION = "perceptron_predict"
ANSWER = '''def perceptron_predict(X, w, b):
    """Labels of the rows of X under the perceptron (w, b)."""
    return np.sign(np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) + float(b))
'''
WRITTEN = "The bound depends only on R / gamma, and scaling every point by 10 scales R and gamma alike."
WRITTEN_LATER = "Scaling changes nothing: the mistakes bound is (R / gamma)^2."  # left ungraded by the instructor
POINTS, COMMENT = 1.5, "Right: a ratio of lengths. Say why the updates do not change."
SCREENSHOTS = ROOT / "tests" / "screenshots" / "hub"
# Issue 38: student 1's submission carries script, in its free answer, a scratch markdown note and a scratch code
# cell's saved output (display(HTML(...)), which runs in the student's own lab); none of it may run where the
# instructor opens it (the formgrader's pages, the feedback page)
WATCHED = "/dlcourse-pwned/"  # a path of the hub's that only a payload asks for
MARKER = "__dlcourse_pwned"
SCRATCH_NOTE = "Scratch notes of mine, legible in the formgrader."


def payloads(url: str, where: str) -> str:
    """A ``<script>`` and an ``<img onerror>``: each, if it runs, sets ``window.__dlcourse_pwned`` and the title,
    asks the hub for a URL the test watches, and opens a dialog."""
    def act(kind: str) -> str:
        return (f"window.{MARKER}='{where}-{kind}';document.title='pwned';fetch('{url}{WATCHED}{where}-{kind}');"
                f"alert('{where}-{kind}')")
    return f"<script>{act('script')}</script>\n\n<img src=x onerror=\"{act('img')}\">\n"


def scripted_cells(url: str) -> tuple[str, str]:
    """(a scratch markdown note, a scratch code cell whose output is HTML with script) of student 1."""
    return (f"{SCRATCH_NOTE}\n\n{payloads(url, 'scratch')}",
            f"from IPython.display import HTML, display\ndisplay(HTML({payloads(url, 'output')!r}))")
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
    # its own folder, port and account names; HUB_DIR, HUB_PORT, HUB_ACCOUNT_PREFIX, HUB_IP from the environment
    # when they are set there (two runs on one machine, each with its own)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_"))},
           "HUB_DIR": os.environ.get("HUB_DIR") or f"/srv/dlcourse-hub-test-{tag}",
           "HUB_PORT": os.environ.get("HUB_PORT") or str(_free_port()),
           "HUB_IP": os.environ.get("HUB_IP") or "127.0.0.1",
           "HUB_ACCOUNT_PREFIX": os.environ.get("HUB_ACCOUNT_PREFIX") or f"dlct{tag}-"}
    if Path(env["HUB_DIR"]).exists():  # another run's hub: its `down` below would remove it
        pytest.fail(f"HUB_DIR={env['HUB_DIR']} exists: the test makes its own hub (unset HUB_DIR, or another folder)")
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
        stopping = time.monotonic()
        stopped = subprocess.run([*HUB, "down"], env=env, capture_output=True, text=True, timeout=300)
        print(f"hub/hub.py down: {time.monotonic() - stopping:.0f} s\n{stopped.stdout[-1500:]}"
              f"{stopped.stderr[-1500:]}", flush=True)
        names = [f"{env['HUB_ACCOUNT_PREFIX']}{n}" for n in ("instructor", "student1", "student2")]
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


def student_works(browser, hub, name: str, written: str | None, scripted: bool = False) -> None:
    """``scripted``: the written answer holds script (``written`` has it), and a scratch markdown note and a
    scratch code cell with script are added at the end of the notebook."""
    context, page = login(browser, hub, name)
    asked = []  # the payload's requests: the output's script runs here, in the student's own lab
    context.on("request", lambda request: asked.append(request.url) if WATCHED in request.url else None)
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
        note, code = scripted_cells(hub["url"])
        if scripted:  # below the last cell: a markdown note, then a code cell, run
            last = cell(page, len(nb.cells) - 1)
            last.scroll_into_view_if_needed()
            last.locator(".jp-InputArea-prompt").click()
            for index, source, kind in ((len(nb.cells), note, "m"), (len(nb.cells) + 1, code, "y")):
                page.keyboard.press("b")
                page.keyboard.press("Escape")
                added = cell(page, index)
                added.locator(".jp-InputArea-prompt").click()
                page.keyboard.press(kind)
                added.locator(".cm-content").click()
                page.keyboard.insert_text(source)
                page.keyboard.press("Control+Enter")  # runs it (renders the note), stays on it, command mode
            # the payload is live: where a browser trusts it (the student's own output) both of its forms ran
            deadline = time.monotonic() + 60
            while not {f"output-{kind}" for kind in ("script", "img")} <= {u.rsplit("/", 1)[-1] for u in asked}:
                assert time.monotonic() < deadline, f"the payload did not run in the student's own lab: {asked}"
                page.wait_for_timeout(300)
            shot(page, f"{name}-2b-scripted-cells")
        page.keyboard.press("Control+s")
        deadline = time.monotonic() + 30
        while True:  # saved: the file holds the student's function (and answer, and scripted cells)
            saved = nbformat.read(str(notebook), as_version=4)
            html = [o.get("data", {}).get("text/html", "") for c in saved.cells if c.cell_type == "code"
                    for o in c.get("outputs", [])]
            if ("np.sign(" in saved.cells[solution].source and (written is None or written in saved.cells[free].source)
                    and (not scripted or ([(c.cell_type, c.source) for c in saved.cells[-2:]]
                                          == [("markdown", note), ("code", code)]
                                          and any(f"{MARKER}='output-script'" in h for h in html)))):
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
import os, sys
denied, opened = [], []
for path in sys.argv[1:]:
    try:
        os.listdir(path) if os.path.isdir(path) else open(path).close()
        opened.append(path)
    except PermissionError:
        denied.append(path)
print(opened)
"""


def cannot_read(hub, student: str, other: str) -> None:
    """As the student's account: open() of each private file, and listing each private folder, fails."""
    copy = Path(hub["course_copy"])
    instructor_home = Path(pwd.getpwnam(hub["instructor"]).pw_dir)
    other_home = Path(pwd.getpwnam(other).pw_dir)
    exchange = Path(hub["exchange"]) / COURSE_ID
    paths = [copy / "solutions" / CHAPTER / f"{CHAPTER}.ipynb", copy / "solutions", copy / "grading" / "gradebook.db",
             copy / "grading", copy / "nbgrader_config.py", copy, instructor_home,
             instructor_home / ".jupyter" / "nbgrader_config.py",
             other_home / CHAPTER / f"{CHAPTER}.ipynb", other_home,
             exchange / "inbound", *([exchange / "feedback"] if (exchange / "feedback").exists() else []),
             Path(hub["hub_state"]) / "passwords.json", Path(hub["hub_state"]) / "jupyterhub.sqlite"]
    for path in paths:
        assert path.exists(), path
    # what keeps them out: the homes and the instructor's copy are the owner's alone (0700)
    for folder in (copy, instructor_home, other_home, Path(hub["hub_state"])):
        assert folder.stat().st_mode & 0o777 == 0o700, f"{folder}: {oct(folder.stat().st_mode)}"
    done = subprocess.run(["runuser", "-u", student, "--", f"{hub['venv']}/bin/python", "-c", PROBE,
                           *map(str, paths)], capture_output=True, text=True, timeout=60, cwd="/")
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr
    # the student's environment has the course's package, not its grader (which needs solutions/)
    done = subprocess.run(["runuser", "-u", student, "--", f"{hub['venv']}/bin/python", "-c",
                           "import importlib.util as u, dlcourse; print(dlcourse.__file__, u.find_spec('autograder'))"],
                          capture_output=True, text=True, timeout=60, cwd="/")
    assert done.stdout.startswith(hub["venv"]) and done.stdout.strip().endswith("None"), done.stdout + done.stderr
    # an environment of its own: nothing of it leads into the instructor's checkout, and the student cannot change it
    done = subprocess.run(["runuser", "-u", student, "--", f"{hub['venv']}/bin/python", "-c",
                           "import os, sys, sysconfig; print(os.access(sysconfig.get_paths()['purelib'], os.W_OK), "
                           "os.access(sys.prefix + '/bin', os.W_OK), sys.prefix)"],
                          capture_output=True, text=True, timeout=60, cwd="/")
    assert done.stdout.split() == ["False", "False", hub["venv"]], done.stdout + done.stderr
    scripts = [p for p in Path(hub["venv"], "bin").iterdir() if p.is_file() and not p.is_symlink()]
    assert not [p for p in scripts if str(ROOT).encode() in p.read_bytes()], f"scripts that point into {ROOT}"


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


def watch(context) -> dict:
    """What a payload would do in ``context`` (a browser context: all its pages; or a page): requests to the
    watched URL, dialogs (dismissed)."""
    caught = {"requests": [], "dialogs": []}
    context.on("request", lambda request: caught["requests"].append(request.url) if WATCHED in request.url else None)
    context.on("dialog", lambda dialog: (caught["dialogs"].append(dialog.message), dialog.dismiss()))
    return caught


PAGE_STATE = """() => ({
    pwned: window.%(marker)s === undefined ? null : String(window.%(marker)s),
    title: document.title,
    live: [...document.querySelectorAll('*')].flatMap(e => [...e.attributes]
              .filter(a => a.value.includes('%(marker)s')).map(a => e.tagName + ' ' + a.name))
          .concat([...document.querySelectorAll('script')]
              .filter(e => (!e.type || /javascript|module/i.test(e.type)) && e.textContent.includes('%(marker)s'))
              .map(e => 'SCRIPT ' + e.textContent.slice(0, 200))),
    text: document.body ? document.body.innerText : '',
})""" % {"marker": MARKER}


def nothing_ran(page, caught: dict, where: str) -> str:
    """No payload of student 1's ran on ``page``, in any of its frames: the marker unset, the title unchanged, no
    dialog, no request to the watched URL; and none is left as markup (no attribute, no script holding it): the
    student's text is shown as text, or removed. Returns the page's text (all frames)."""
    page.wait_for_timeout(1000)  # an image's error event, a fetch: after the page's load
    texts = []
    for frame in page.frames:
        state = frame.evaluate(PAGE_STATE)
        assert state["pwned"] is None and "pwned" not in state["title"], f"{where}: a payload ran: {state['pwned']}"
        assert not state["live"], f"{where} ({frame.url}): the student's markup is live: {state['live']}"
        texts.append(state["text"])
    assert not caught["requests"] and not caught["dialogs"], f"{where}: a payload ran: {caught}"
    return "\n".join(texts)


def formgrader_button(page, link, expected: str, screenshot: str | None = None) -> str:
    """Clicks one of the formgrader's buttons; its dialog must say it succeeded (the log it shows returned)."""
    link.click(timeout=60_000)
    dialog = page.locator("#success-modal, #error-modal").first
    dialog.wait_for(timeout=LONG)
    page.wait_for_timeout(500)  # the dialog's fade-in
    said = dialog.inner_text()
    if screenshot:
        shot(page, screenshot)
    assert dialog.get_attribute("id") == "success-modal" and expected in said, said[-3000:]
    dialog.locator("button.btn-primary").click()
    page.locator("#success-modal").wait_for(state="detached", timeout=30_000)
    return said


def nbgrader_in_terminal(page, hub) -> None:
    """A terminal of the instructor's lab (a login shell, whose /etc/profile resets PATH) finds nbgrader in the
    class's environment."""
    name = hub["instructor"]
    answer = Path(pwd.getpwnam(name).pw_dir) / ".nbgrader-on-path"
    page.keyboard.press("Escape")
    page.locator(".lm-MenuBar-item", has_text="File").first.click()
    page.locator(".lm-Menu-item", has_text="New").first.hover()
    page.locator('.lm-Menu-item[data-command="terminal:create-new"]').click()
    screen = page.locator(".jp-Terminal .xterm-screen").first
    screen.wait_for(timeout=60_000)
    screen.click()
    page.keyboard.type(f"command -v nbgrader > {answer}; nbgrader --version\n")
    deadline = time.monotonic() + 60
    while not (answer.is_file() and answer.read_text().strip()):
        assert time.monotonic() < deadline, f"the terminal wrote nothing to {answer}: is a shell running?"
        time.sleep(0.5)
    page.wait_for_timeout(1000)
    shot(page, "instructor-2-terminal")
    assert answer.read_text().strip() == f"{hub['venv']}/bin/nbgrader", answer.read_text()


def instructor_grades(browser, hub) -> None:
    name = hub["instructor"]
    context, page = login(browser, hub, name)
    caught = watch(context)
    try:
        shot(page, "instructor-1-lab")
        nbgrader_in_terminal(page, hub)
        # the formgrader in a tab of its own (JupyterHub >= 4.1 forbids the lab's iframe)
        assignments_page = f"{hub['url']}/user/{name}/formgrader/manage_assignments"
        page.goto(assignments_page, wait_until="domcontentloaded", timeout=60_000)
        row = page.locator("#main-table tr", has=page.locator(".name", has_text=CHAPTER)).first
        row.locator(".collect a").wait_for(timeout=60_000)
        formgrader_button(page, row.locator(".collect a"), f"Successfully collected submissions of '{CHAPTER}'",
                          "instructor-3-collected")
        row = page.locator("#main-table tr", has=page.locator(".name", has_text=CHAPTER)).first
        row.locator(".num-submissions a").wait_for(timeout=60_000)
        assert row.locator(".num-submissions").inner_text().strip() == "2"
        row.locator(".num-submissions a").click()
        page.wait_for_url(re.compile(rf"/formgrader/manage_submissions/{CHAPTER}"), timeout=60_000)
        for student in hub["students"]:
            line = page.locator("#main-table tr", has=page.locator(".student-id", has_text=student)).first
            line.locator(".autograde a").wait_for(timeout=60_000)
            formgrader_button(page, line.locator(".autograde a"),
                              f"Successfully autograded '{CHAPTER}' for student '{student}'",
                              f"instructor-4-autograded-{student}")
            # graded by the course's grader in its sandbox (its result in the notebook), not stock nbgrader
            autograded = Path(hub["course_copy"]) / "grading" / "autograded" / student / CHAPTER / f"{CHAPTER}.ipynb"
            result = nbformat.read(str(autograded), as_version=4).metadata.get("dlcourse", {}).get("result")
            assert result and result.get("student") == student, (autograded, result and list(result))
        for student in hub["students"]:
            line = page.locator("#main-table tr", has=page.locator(".student-id", has_text=student)).first
            line.locator(".status", has_text="needs manual grading").wait_for(timeout=60_000)
        shot(page, "instructor-5-submissions")
        nothing_ran(page, caught, "the formgrader's submissions of the chapter")
        book = gradebook(hub)
        assert book["submitted"] == sorted(hub["students"]), book
        # student 1's submission (scripted) in the formgrader: its page, then the autograded notebook it links
        first = hub["students"][0]
        page.goto(f"{hub['url']}/user/{name}/formgrader/manage_students/{first}/{CHAPTER}",
                  wait_until="domcontentloaded", timeout=60_000)
        link = page.locator(".name a[href*='/formgrader/submissions/']", has_text=CHAPTER).first
        link.wait_for(timeout=60_000)
        nothing_ran(page, caught, f"the formgrader's page of {first}'s submission")
        link.click()
        page.wait_for_url(re.compile(rf"/formgrader/submissions/{book['submission_id']}/?$"), timeout=60_000)
        score = page.locator("input.score#free_response_margin")
        score.wait_for(timeout=60_000)
        shown = nothing_ran(page, caught, f"the formgrader's view of {first}'s autograded notebook")
        assert WRITTEN in shown and SCRATCH_NOTE in shown, f"the student's answer and note, as text: {shown[-3000:]}"
        assert WRITTEN in page.content()
        # the course's formgrade page: `load` without the internet (MathJax from the instructor's server, Debian's
        # libjs-mathjax, else none until after load), so the shortcuts are bound; the inputs show once they save
        state = page.evaluate("""() => ({shortcuts: !!(window.formgrader && formgrader.loaded),
            mathjax: window.dlcourseMathJax || (window.MathJax && String(MathJax.version)) || null})""")
        assert state["shortcuts"], state
        if Path("/usr/share/javascript/mathjax/MathJax.js").is_file():
            assert str(state["mathjax"]).startswith("2."), state
        score.fill(f"{POINTS:g}")  # no wait for the formgrader's own set-up
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
        shot(page, "instructor-6-hand-grade")
        # feedback for the class, released: the second student's written answer not graded yet
        page.goto(assignments_page, wait_until="domcontentloaded", timeout=60_000)
        row = page.locator("#main-table tr", has=page.locator(".name", has_text=CHAPTER)).first
        row.locator(".generate-feedback a").wait_for(timeout=60_000)
        formgrader_button(page, row.locator(".generate-feedback a"),
                          f"Successfully generated feedback of '{CHAPTER}'", "instructor-7-feedback-generated")
        row = page.locator("#main-table tr", has=page.locator(".name", has_text=CHAPTER)).first
        row.locator(".release-feedback a").wait_for(timeout=60_000)
        formgrader_button(page, row.locator(".release-feedback a"),
                          f"Successfully released feedback of '{CHAPTER}'", "instructor-8-feedback-released")
        # the scripted student's feedback page, opened by the instructor in the lab
        copy = Path(hub["course_copy"])
        pages = [*copy.glob(f"feedback/{first}/{CHAPTER}/{CHAPTER}.html"),
                 *copy.glob(f"*/feedback/{first}/{CHAPTER}/{CHAPTER}.html")]
        assert len(pages) == 1, pages
        relative = pages[0].relative_to(pwd.getpwnam(name).pw_dir)
        page.goto(f"{hub['url']}/user/{name}/files/{relative}", wait_until="load", timeout=60_000)
        shown = nothing_ran(page, caught, f"{first}'s feedback page, as the instructor opens it")
        assert WRITTEN in shown and SCRATCH_NOTE in shown, shown[-3000:]
        shot(page, "instructor-9-feedback-page")
    finally:
        context.close()


def student_reads_feedback(browser, hub, name: str, expected: tuple, comment: str | None) -> None:
    """``comment``: the instructor's on the written answer, graded by hand; None: that answer is not graded yet."""
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
        # a page of its own: the lab re-opens the student's notebook, whose saved output (student 1's script) the
        # lab trusts, the student having signed it; that runs in the student's own lab, not on the feedback page
        page.close()
        page = context.new_page()
        caught = watch(page)
        page.goto(f"{hub['url']}/user/{name}/files/{relative}", wait_until="load", timeout=60_000)
        score, maximum = expected
        nothing_ran(page, caught, f"{name}'s feedback page")
        text = page.locator("body").inner_text()
        assert f"Score: {score:g} / {maximum:g}" in text, text[:1500]
        assert name in text
        if comment:
            assert comment in text and f"Graded by hand: {POINTS:g} / " in text, text[:3000]
        else:  # released before the instructor graded it: pending, not 0 points (make grade's page says the same)
            assert f"Graded by hand: {TO_BE_HAND_GRADED} / " in text and "Graded by hand: 0 /" not in text, text[:3000]
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
        student_works(browser, hub, first, f"{WRITTEN}\n\n{payloads(hub['url'], 'answer')}", scripted=True)
        student_works(browser, hub, second, WRITTEN_LATER)
        print(f"students submitted: {time.monotonic() - started:.0f} s", flush=True)
        cannot_read(hub, first, second)
        cannot_read(hub, second, first)
        # the course id said once: the hub's global config is generated from the course's settings, which the
        # instructor's copy reads too
        # the class's environment shares files with this checkout's .venv (hard links) but changed none of them
        script = Path(sys.prefix, "bin", "jupyterhub-singleuser").read_text().splitlines()[0]
        assert script == f"#!{sys.prefix}/bin/python", script
        config = Path(hub["global_nbgrader_config"]).read_text()
        assert f"c.CourseDirectory.course_id = {COURSE_ID!r}" in config, config
        copied = (Path(hub["course_copy"]) / "autograder" / "nbgrader_settings.py").read_text()
        assert copied == (ROOT / "autograder" / "nbgrader_settings.py").read_text()
        instructor_grades(browser, hub)
        print(f"graded and feedback released: {time.monotonic() - started:.0f} s", flush=True)
        cannot_read(hub, first, second)  # now with the autograded notebooks, hand grades and feedback too
        cannot_read(hub, second, first)
        scores = {name: tuple(score) for name, score in gradebook(hub)["scores"].items()}
        assert scores[first][0] == pytest.approx(scores[second][0] + POINTS), scores
        for name in hub["students"]:
            student_reads_feedback(browser, hub, name, scores[name], COMMENT if name == first else None)
        print(f"students read their feedback: {time.monotonic() - started:.0f} s; scores {scores}", flush=True)
    finally:
        browser.close()
