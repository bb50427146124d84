"""The formgrader in a real (headless) Chromium, after a `make grade` run.

The instructor opens the run's formgrader as the README says (`make formgrader OUT=...`, from a shell
where the venv is not activated; as root, as these machines run), sees the chapter as released with its
graded submission and no warning about a missing exchange, gives points to a free-response answer by
hand and leaves a comment; nbgrader's gradebook records both, and `make export OUT=...` and nbgrader's
own `nbgrader export` show the new total. Offline, as the hub and CI are: every request off the formgrader's server
is left unanswered (as a name that does not resolve), and the page's `load` still comes at once (MathJax is the
server's own, Debian's libjs-mathjax); a grade typed as soon as the page has opened is saved, with the server's
MathJax and, where it has none, with none at all.

    make test-browser          # REQUIRE_BROWSER=1: a missing Chromium fails
    pytest -m browser tests    # a missing Chromium skips

Chromium is Debian's package driven by Python playwright (``executable_path``); never ``playwright install``.
"""
from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder import submissions
from autograder.course import ROOT, grade_id, role
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS, Lab, _unavailable

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

CHAPTER = "ch01_perceptron"
POINTS, COMMENT = 1.5, "Right idea; say why the margin is scale-invariant."
MATHJAX = Path("/usr/share/javascript/mathjax/MathJax.js")  # Debian's libjs-mathjax, served at <server>/static/
LOAD_SECONDS = 10  # the page's own files, from this machine: `load` within this, never the CDN's time-out


def _grades(path: Path, key: str) -> dict:
    return {row[key]: row for row in csv.DictReader(open(path, encoding="utf-8"))}


def _wait_for(predicate, what: str, seconds: float = 60):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"{what} within {seconds} s"
        time.sleep(0.3)


class Formgrader(Lab):
    """`make formgrader OUT=...` as an instructor types it: PATH without the venv, jupyter's own options in
    LAB_ARGS (a port and a token for the test, no browser)."""

    def start(self, timeout: float = 90) -> "Formgrader":
        venv = str(Path(sys.executable).parent)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MPLBACKEND", "JPY_", "JUPYTER", "VIRTUAL"))}
        env.update(PATH=os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p != venv),
                   JUPYTER_CONFIG_DIR=str(self.home / "config"), JUPYTER_RUNTIME_DIR=str(self.home / "runtime"),
                   JUPYTERLAB_WORKSPACES_DIR=str(self.home / "ws"))
        self.log = open(self.home / "jupyter.log", "w")
        self.proc = subprocess.Popen(
            ["make", "--no-print-directory", "formgrader", f"OUT={self.root}",
             f"LAB_ARGS=--no-browser --ServerApp.ip=127.0.0.1 --ServerApp.port={self.port} "
             f"--ServerApp.port_retries=0 --IdentityProvider.token={self.token}"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"make formgrader exited: {self.tail()}")
            try:
                self.api("GET", "/api/status")
                return self
            except (OSError, ValueError):
                time.sleep(0.3)
        raise RuntimeError(f"make formgrader did not answer in {timeout} s: {self.tail()}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)  # make, its shell and jupyter (which stops its kernels)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


def offline_page(browser, lab, mathjax: bool = True):
    """A page that reaches only the formgrader's server: any other request is left unanswered, as a name that does
    not resolve leaves it offline (a refusal would be quicker than what CI sees). ``mathjax=False``: the server's
    MathJax address answers 404, as on a machine without libjs-mathjax."""
    # the formgrader's own API calls need the server's token (a token in the page's URL sets no cookie)
    page = browser.new_page(viewport={"width": 1400, "height": 1000},
                            extra_http_headers={"Authorization": f"token {lab.token}"})

    def answer(route):
        if not route.request.url.startswith(lab.url + "/"):
            return  # never answered
        if not mathjax and "/static/MathJax.js" in route.request.url:
            return route.fulfill(status=404, body="")
        route.continue_()
    page.route("**/*", answer)
    return page


def test_grade_by_hand_in_the_formgrader_then_export(tmp_path, playwright):
    if not Path(CHROMIUM).is_file():
        _unavailable(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    from nbgrader.api import Gradebook

    from autograder.classroom import grade_class

    nb = submissions.untouched(CHAPTER)  # nothing implemented (fast to grade), the written answer given
    answer = next(c for c in nb.cells if role(c) == "answer")
    answer.source = "The margin divides by the norm of w, so scaling w and b changes nothing."
    submissions.write_class(tmp_path / "class", {("alice", CHAPTER): nb})
    out = grade_class(str(tmp_path / "class"), str(tmp_path / "out"), jobs=1)
    before = float(_grades(out / "grades.csv", "student")["alice"]["score"])
    db = f"sqlite:///{out / 'gradebook.db'}"
    with Gradebook(db) as gb:
        submission_id = gb.find_submission_notebook(CHAPTER, CHAPTER, "alice").id
        assert gb.find_grade(grade_id(answer), CHAPTER, CHAPTER, "alice").needs_manual_grade

    home = tmp_path / "home"
    home.mkdir()
    lab = Formgrader(out, home).start()
    try:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = offline_page(browser, lab)
        # the chapter as released, its graded submission counted, no warning about a missing exchange
        page.goto(f"{lab.url}/formgrader/manage_assignments/?token={lab.token}", wait_until="domcontentloaded",
                  timeout=60_000)
        row = page.locator("tr", has=page.locator(f"text={CHAPTER}")).first
        row.locator(".status .label").wait_for(timeout=60_000)
        assert row.locator(".status").inner_text().strip() == "released"
        assert row.locator(".num-submissions").inner_text().strip() == "1"
        assert page.locator("#warning-exchange").count() == 0 and "does not exist" not in page.content()
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "formgrader-assignments.png"), full_page=False)
        submission = f"{lab.url}/formgrader/submissions/{submission_id}/?token={lab.token}"

        def saved(points, said):
            with Gradebook(db) as gb:
                grade = gb.find_grade(grade_id(answer), CHAPTER, CHAPTER, "alice")
                comment = gb.find_comment(grade_id(answer), CHAPTER, CHAPTER, "alice").manual_comment
                return grade.manual_score == points and comment == said

        # a server without MathJax of its own first (its address refused), then this one's
        for points, said, local in ((1, "typed at once, no MathJax anywhere", False), (POINTS, COMMENT, True)):
            page = offline_page(browser, lab, mathjax=local)
            page.goto(submission, wait_until="load", timeout=LOAD_SECONDS * 1000)  # nbgrader's page: never
            state = page.evaluate("""() => ({
                load: performance.getEntriesByType('navigation')[0].loadEventStart / 1000,
                shortcuts: !!(window.formgrader && formgrader.loaded && formgrader.keyboard_manager),
                mathjax: window.dlcourseMathJax || (window.MathJax && String(MathJax.version))})""")
            assert state["load"] < LOAD_SECONDS and state["shortcuts"], state
            if local and MATHJAX.is_file():
                assert state["mathjax"].startswith("2."), state  # the server's MathJax, typesetting
                page.wait_for_selector(".MathJax_CHTML", state="attached", timeout=30_000)
            elif not local:
                assert state["mathjax"] == "the CDN's, asked for after load", state
            assert "hidden checks of this cell ran in the grader" in page.content()  # the graded notebook
            score = page.locator(f"input.score#{grade_id(answer)}")
            score.fill(f"{points:g}")  # as soon as the page has opened: no wait for the formgrader's own set-up
            score.press("Tab")
            comment = page.locator(f"textarea#{grade_id(answer)}-comment")
            comment.fill(said)
            comment.press("Tab")
            _wait_for(lambda p=points, s=said: saved(p, s), f"the formgrader saved {points} and {said!r}")
        SCREENSHOTS.mkdir(exist_ok=True)
        score.scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / "formgrader-manual-grade.png"), full_page=False)
        browser.close()
    finally:
        lab.stop()

    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["make", "-s", "--no-print-directory", "export", f"OUT={out}"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert float(_grades(out / "grades.csv", "student")["alice"]["score"]) == pytest.approx(before + POINTS)
    cells = {row["grade_id"]: row for row in csv.DictReader(open(out / "tests.csv", encoding="utf-8"))}
    assert float(cells[grade_id(answer)]["score"]) == POINTS

    done = subprocess.run([str(Path(sys.executable).parent / "nbgrader"), "export",
                           f"--to={tmp_path / 'nbgrader-grades.csv'}"], cwd=out, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    row = _grades(tmp_path / "nbgrader-grades.csv", "student_id")["alice"]
    assert float(row["raw_score"]) == pytest.approx(before + POINTS)


def test_no_script_a_student_wrote_runs_in_the_formgraders_view(tmp_path, playwright):
    """Issue 38, finding 3: a submission whose free-response answer and scratch note carry ``<script>``,
    ``<img onerror>`` and a ``javascript:`` link, as OUT/autograded holds it (``outputs.write_outputs`` writes
    ``feedback.autograded_notebook``), rendered as the formgrader renders it (nbgrader's SubmissionHandler: an
    HTMLExporter with its 'formgrade' template, no sanitizer) and opened in Chromium: nothing ran, every link
    clicked, and the answer's text is on screen. (nbgrader autograde's notebook: tests/test_lifecycle.py.)"""
    if not Path(CHROMIUM).is_file():
        _unavailable(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    import nbformat
    from playwright.sync_api import Error as PlaywrightError

    from autograder.feedback import autograded_notebook
    from autograder.tests.test_outputs import fake_result
    from autograder.tests.test_untrusted_notebooks import CHAPTER as SCRIPTED
    from autograder.tests.test_untrusted_notebooks import formgrade_html, scripted
    notebook = tmp_path / f"{SCRIPTED}.ipynb"
    nbformat.write(autograded_notebook(fake_result(scripted(), student="mallory")), str(notebook))
    page_file = tmp_path / "formgrade.html"
    page_file.write_text(formgrade_html(notebook, "mallory"), encoding="utf-8")
    browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    try:
        page = browser.new_page()
        dialogs = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        # offline: the page's own files (the formgrader's scripts are not served here: only the student's could run)
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
        page.goto(page_file.as_uri(), wait_until="load", timeout=30_000)
        before = page.evaluate("() => [window.__pwned === undefined ? null : String(window.__pwned), document.title]")
        links = page.locator(".rendered_html a:not(.anchor-link)")
        for index in range(links.count()):
            try:
                links.nth(index).click(timeout=2_000, no_wait_after=True)
            except PlaywrightError:  # a link that is not there any more: what a script did, judged below
                pass
        page.wait_for_timeout(500)
        state = page.evaluate("""() => ({
            pwned: window.__pwned === undefined ? null : String(window.__pwned),
            title: document.title,
            text: document.body.innerText,
            url: location.href,
            handlers: [...document.querySelectorAll('.rendered_html *')].flatMap(
                e => [...e.attributes].filter(a => a.name.startsWith('on')).map(a => e.tagName + ' ' + a.name)),
            hrefs: [...document.querySelectorAll('.rendered_html a[href]')].map(a => a.getAttribute('href'))
                .filter(h => !/^(https?:|mailto:|#)/.test(h)),
        })""")
    finally:
        browser.close()
    assert before == [None, SCRIPTED], before  # no script, no event handler ran
    assert state["pwned"] is None and not dialogs, (state["pwned"], dialogs)  # nor a link, clicked
    assert state["title"] == SCRIPTED and "pwned" not in state["title"]
    assert not state["handlers"] and not state["hrefs"], state
    assert "LEGIBLE-ANSWER-TEXT" in state["text"] and "LEGIBLE-SCRATCH-TEXT" in state["text"]
    assert "Student's answer" in state["text"]  # graded as an answer: its nbgrader metadata is the release's


def test_a_student_id_is_shown_as_text_in_the_formgraders_nav_bar(tmp_path, playwright):
    """Issue 38: nbgrader's formgrade templates write the student id, name and notebook path (autograded/<id>/...)
    into the nav bar unescaped; ids are account names on a hub, but folder names on a plain course. The course's
    formgrade page (nbgrader_settings.configure: autograder/formgrader_config/templates/) escapes them: a student
    whose id (or name) is markup is shown by it, as text, and nothing of theirs runs."""
    if not Path(CHROMIUM).is_file():
        _unavailable(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    from nbconvert.exporters import HTMLExporter
    from traitlets.config import Config

    from autograder.course import release_path
    from autograder.nbgrader_settings import configure

    student = '<img src=x onerror="window.__pwned=1">'
    name = '<img src=y onerror="window.__pwned=2">Mallory'
    config = Config()
    configure(config, tmp_path)  # as every nbgrader_config.py of the course
    config.HTMLExporter.template_name = "formgrade"  # as nbgrader's formgrader (FormgradeExtension.build_extra_config)
    path = f"autograded/{student}/{CHAPTER}/{CHAPTER}.ipynb"
    browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    try:
        for first, last, shown_as in ((None, None, student), (name, name, f"{name}, {name}")):
            resources = {"assignment_id": CHAPTER, "notebook_id": CHAPTER, "submission_id": "0", "index": 0,
                         "total": 1, "base_url": "", "student": student, "last_name": last, "first_name": first,
                         "notebook_path": path}
            html, _ = HTMLExporter(config=config).from_filename(str(release_path(CHAPTER)), resources=resources)
            page_file = tmp_path / "formgrade.html"
            page_file.write_text(html, encoding="utf-8")
            page = browser.new_page()
            page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                       else route.abort())
            page.goto(page_file.as_uri(), wait_until="load", timeout=30_000)
            page.wait_for_timeout(300)  # an image's error event, had there been one
            shown = page.evaluate("""() => ({
                pwned: window.__pwned === undefined ? null : window.__pwned,
                markup: document.querySelectorAll('.navbar img').length,
                name: document.querySelector('.navbar a.name-shown').textContent.trim(),
                links: [...document.querySelectorAll('.navbar [data-link]')].map(a => a.getAttribute('data-link'))})""")
            page.close()
            assert shown["pwned"] is None and shown["markup"] == 0, shown
            assert shown["name"] == shown_as, shown  # as the student gave it, as text
            assert shown["links"] == [path, path], shown
    finally:
        browser.close()
