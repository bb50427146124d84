"""The widgets of every chapter, in JupyterLab, in a real (headless) Chromium.

For each chapter the reference notebook (the release with the solutions filled
in) is opened in JupyterLab and run top to bottom (Run > Run All Cells). Then:
every widget of the notebook renders as a widget (no ``VBox(children=...)``
text, no "Loading widget..." left, no traceback), and moving the first control
of the first widget changes what the widget shows. The end-to-end latency of
every widget (its first control moved a few times, from the input event to the
new picture painted) is recorded in tests/screenshots/widget-latency.json and
printed, never failed on: ``python -m benchmarks.widget_latency --strict``
checks the budgets. In SELF_CHECK_CHAPTERS the
"Check my work" button at the end is pressed too: it must find the notebook,
grade it and show full marks. ``test_what_a_student_sees`` runs chapter 1 as a student has it midway
and screenshots each state of a test cell (passing, failing, an error in the student's code, a function
not written yet) and a widget without its function. The lab is the student's (``make lab``'s
jupyter-config/student/). Screenshots go to tests/screenshots/.

    make test-browser          # REQUIRE_BROWSER=1: a missing Chromium fails
    pytest -m browser tests    # a missing Chromium skips

Chromium is Debian's package (``apt-get install chromium``), driven by Python
playwright; ``playwright install`` is never needed.
"""
from __future__ import annotations

import ast
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest

from autograder import submissions
from autograder.course import ROOT, chapters, grade_id
from tests.helpers import code_cell_trees

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = ROOT / "tests" / "screenshots"
CHAPTERS = chapters()
SELF_CHECK_CHAPTERS = ("ch02_universal_approximation",)  # the button is pressed in these (a grading run each)
RUN_ALL_SECONDS = 150        # a chapter runs in well under 60 s; JupyterLab and the browser add some
CHANGE_SECONDS = 20          # a render after a control moves
BAD_TEXTS = ("interactive(children=", "VBox(children=", "HBox(children=", "Loading widget...",
             "Error displaying widget", "not written yet")
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LAB_SETTINGS = {  # JupyterLab settings for the test server only
    # every cell attached, painted or not (screenshots of whole outputs); a student's JupyterLab has
    # the default "contentVisibility" (off-screen cells are not painted), which Lab(default_windowing=True) keeps
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                         "checkForUpdates": False},
}


def _unavailable(reason: str):
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail(f"REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def widget_cells(nb) -> int:
    """How many code cells end with a call of a factory imported from dlcourse.widgets (one widget each)."""
    factories, count = set(), 0
    for _, tree in code_cell_trees(nb):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dlcourse.widgets"):
                factories.update(alias.asname or alias.name for alias in node.names)
        last = tree.body[-1] if tree.body else None
        if (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
                and getattr(last.value.func, "id", None) in factories):
            count += 1
    return count


class Lab:
    """A JupyterLab server on a temporary copy of the reference notebooks."""

    def __init__(self, root: Path, home: Path, prefix: list[str] | tuple = (), default_windowing: bool = False,
                 student: bool = False):
        self.root, self.home, self.prefix = root, home, list(prefix)  # prefix: e.g. taskset -c 0
        self.student = student  # True: the student's lab, as make lab opens it (jupyter-config/student/)
        self.default_windowing = default_windowing  # True: JupyterLab's own windowing mode, as students have it
        self.port, self.token = _free_port(), secrets.token_hex(16)
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = None

    def start(self, timeout: float = 60) -> "Lab":
        settings = self.home / "lab-settings"
        for name, values in LAB_SETTINGS.items():
            if self.default_windowing:
                values = {k: v for k, v in values.items() if k != "windowingMode"}
            path = settings / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MPLBACKEND", "JPY_", "JUPYTER"))}
        env.update({"JUPYTERLAB_SETTINGS_DIR": str(settings),
                    "JUPYTERLAB_WORKSPACES_DIR": str(self.home / "workspaces"),
                    "JUPYTER_CONFIG_DIR": str(self.home / "config"),
                    "JUPYTER_RUNTIME_DIR": str(self.home / "runtime"),
                    "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"})
        if self.student:
            env["JUPYTER_CONFIG_PATH"] = str(ROOT / "jupyter-config" / "student")
        self.log = open(self.home / "jupyter.log", "w")
        self.proc = subprocess.Popen(
            self.prefix + [str(Path(sys.executable).parent / "jupyter"), "lab", "--no-browser",
             "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={self.root}",
             "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
            + (["--allow-root"] if os.geteuid() == 0 else []),
            stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=self.root, start_new_session=True)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited: {self.tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/status?token={self.token}", timeout=2) as reply:
                    if reply.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.3)
        raise RuntimeError(f"jupyter lab did not answer in {timeout} s: {self.tail()}")

    def tail(self) -> str:
        self.log.flush()
        return (self.home / "jupyter.log").read_text()[-2000:]

    def api(self, method: str, path: str):
        request = urllib.request.Request(f"{self.url}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            body = reply.read()
            return json.loads(body) if body else None

    def kernels(self) -> list:
        """The server's kernels; [] on a passing server error (a kernel being shut down while listed)."""
        try:
            return self.api("GET", "/api/kernels") or []
        except urllib.error.HTTPError:
            return []

    def shutdown_kernels(self) -> None:
        for session in self.api("GET", "/api/sessions") or []:
            self.api("DELETE", f"/api/sessions/{session['id']}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()  # jupyter shuts its kernels down on SIGTERM
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
        self.log.close()


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    if not Path(CHROMIUM).is_file():
        _unavailable(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    root = tmp_path_factory.mktemp("lab-root")
    for chapter in CHAPTERS:
        path = root / chapter / f"{chapter}.ipynb"
        path.parent.mkdir()
        nbformat.write(submissions.reference(chapter), str(path))
    server = Lab(root, tmp_path_factory.mktemp("lab-home"), student=True).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser(lab, tmp_path_factory, playwright):
    profile = tmp_path_factory.mktemp("chromium-profile")
    context = playwright.chromium.launch_persistent_context(
        str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
        viewport={"width": 1400, "height": 1000}, device_scale_factor=1)
    yield context
    context.close()


def _fail(page, chapter: str, message: str):
    page.screenshot(path=str(SCREENSHOTS / f"{chapter}-failure.png"), full_page=True)
    pytest.fail(f"{chapter}: {message}", pytrace=False)


def _open_and_run(page, lab: Lab, chapter: str) -> None:
    url = f"{lab.url}/lab/workspaces/{chapter}/tree/{chapter}/{chapter}.ipynb?reset&token={lab.token}"
    page.goto(url, wait_until="domcontentloaded", timeout=60_000)
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=60_000)
    # the kernel is up when the server says it is idle with a client connected, and the toolbar agrees
    deadline = time.monotonic() + 90
    while not any(k.get("connections", 0) >= 1 and k.get("execution_state") == "idle"
                  for k in lab.kernels()):
        if time.monotonic() > deadline:
            _fail(page, chapter, f"the kernel did not start: {lab.kernels()}")
        page.wait_for_timeout(300)
    page.wait_for_function(
        """() => { const s = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');
                   return s && s.getAttribute('data-status') === 'idle'; }""", timeout=60_000)
    for attempt in range(3):  # Run > Run All Cells; again if nothing started (a kernel still settling)
        page.locator(".lm-MenuBar-item", has_text="Run").first.click()
        page.locator('.lm-Menu-item[data-command="runmenu:run-all"]').click()
        try:
            page.wait_for_function(
                """() => [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell .jp-InputArea-prompt')]
                         .some(p => /\\[(\\*|\\d+)\\]/.test(p.textContent))""", timeout=10_000)
            break
        except Exception:  # noqa: BLE001 - playwright's TimeoutError
            page.keyboard.press("Escape")
    else:
        _fail(page, chapter, "Run All Cells started nothing")
    deadline = time.monotonic() + RUN_ALL_SECONDS
    # counted in the file: with JupyterLab's default windowing, cells attach to the page while they run
    notebook = nbformat.read(str(lab.root / chapter / f"{chapter}.ipynb"), as_version=4)
    code_cells = sum(cell.cell_type == "code" for cell in notebook.cells)
    while True:
        state = page.evaluate("""() => {
            const prompts = [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell .jp-InputArea-prompt')]
                .map(p => p.textContent.trim());
            const s = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');
            return {done: prompts.filter(t => /^\\[\\d+\\]:$/.test(t)).length,
                    waiting: prompts.filter(t => t.includes('*')).length,
                    status: s && s.getAttribute('data-status')};
        }""")
        if state["done"] == code_cells and not state["waiting"] and state["status"] == "idle":
            return
        if time.monotonic() > deadline:
            _fail(page, chapter, f"Run All did not finish in {RUN_ALL_SECONDS} s: {state}, {code_cells} code cells")
        page.wait_for_timeout(500)


def _move_first_control(widget) -> str:
    """Change the first control of a widget; the kind of control that was changed."""
    slider = widget.locator(".widget-slider .noUi-handle").first
    if slider.count():
        slider.focus()
        before = widget.locator(".widget-slider .widget-readout").first.inner_text()
        slider.press("ArrowRight")
        if widget.locator(".widget-slider .widget-readout").first.inner_text() == before:
            slider.press("ArrowLeft")  # it was at its maximum
            slider.press("ArrowLeft")
        return "slider"
    select = widget.locator(".widget-dropdown select").first
    if select.count():
        options = select.locator("option")
        current = select.input_value()
        values = [options.nth(i).get_attribute("value") for i in range(options.count())]
        select.select_option(next(v for v in values if v != current))
        return "dropdown"
    toggle = widget.locator(".widget-toggle-buttons button:not(.mod-active)").first
    if toggle.count():
        toggle.click()
        return "toggle buttons"
    checkbox = widget.locator(".widget-checkbox input").first
    if checkbox.count():
        checkbox.click()
        return "checkbox"
    button = widget.locator("button.jupyter-button").first
    button.click()
    return "button"


def _press_check_my_work(page, chapter: str) -> None:
    """The chapter's last cell: the self-check button finds this notebook, grades it, shows full marks."""
    button = page.locator(".jp-NotebookPanel .jupyter-widgets button", has_text="Check my work")
    if not button.count():
        _fail(page, chapter, "no 'Check my work' button")
    view = page.locator(".jp-NotebookPanel .jp-OutputArea-output:has(> .jupyter-widgets.widget-vbox)",
                        has=page.locator("button", has_text="Check my work")).last
    started = time.monotonic()
    button.last.click()
    try:
        view.locator("table", has_text="total").wait_for(timeout=180_000)
    except Exception:  # noqa: BLE001 - playwright's TimeoutError
        _fail(page, chapter, f"the self-check showed no table: {view.inner_text()[:500]!r}")
    view.screenshot(path=str(SCREENSHOTS / f"{chapter}-self-check.png"), animations="disabled")
    text = view.inner_text()
    assert f"Self-check of {chapter}" in text and f"{chapter}.ipynb as saved at" in text, text[:500]
    assert "✗" not in text and "⚠" not in text, f"the reference does not get full marks: {text[:1000]}"
    from tests.test_selfcheck import hidden_source_lines
    leaked = sorted(line for line in hidden_source_lines(chapter) if line in text)
    assert "BEGIN HIDDEN" not in text and not leaked, f"hidden test code in the self-check: {leaked[:3]}"
    print(f"{chapter}: self-check button graded the notebook in {time.monotonic() - started:.1f} s")


LATENCY_MOVES = 3  # per widget, its first control: recorded, never failed on (machines are noisy)


def _record_latency(page, chapter: str) -> None:
    """End-to-end latency of every widget (control moved -> new picture painted), recorded in
    tests/screenshots/widget-latency.json and printed; budgets are checked by benchmarks.widget_latency."""
    from benchmarks.widget_latency import measure_chapter
    result = measure_chapter(page, LATENCY_MOVES, all_controls=False, first=False)
    path = SCREENSHOTS / "widget-latency.json"
    try:
        recorded = json.loads(path.read_text())
    except (OSError, ValueError):
        recorded = {}
    recorded[chapter] = {"when": time.strftime("%Y-%m-%dT%H:%M:%S"), "cpus": len(os.sched_getaffinity(0)),
                         "load_average": [round(x, 2) for x in os.getloadavg()], **result}
    path.write_text(json.dumps(recorded, indent=1, sort_keys=True))
    for w in result["widgets"]:
        print(f"{chapter}: widget {w['widget']} {w['title'][:40]!r}: median {w['median_ms']} ms, "
              f"worst {w['worst_ms']} ms over {w['moves']} moves {w['problems'] or ''}")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_widgets_render_and_respond(browser, lab, chapter):
    SCREENSHOTS.mkdir(exist_ok=True)
    expected = widget_cells(submissions.reference(chapter))
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        started = time.monotonic()
        _open_and_run(page, lab, chapter)
        ran = time.monotonic() - started
        page.wait_for_timeout(500)  # the last widget views attach

        outputs = page.locator(".jp-NotebookPanel .jp-OutputArea-output")
        texts = outputs.all_inner_texts()
        for bad in BAD_TEXTS:
            hit = next((t for t in texts if bad in t), None)
            if hit is not None:
                _fail(page, chapter, f"an output shows {bad!r}: {hit[:300]!r}")
        tracebacks = page.locator('.jp-NotebookPanel .jp-OutputArea-output[data-mime-type='
                                  '"application/vnd.jupyter.stderr"]', has_text="Traceback")
        if page.locator(".jp-NotebookPanel .jp-RenderedText[data-mime-type='application/vnd.jupyter.error']"
                        ).count() or tracebacks.count():
            _fail(page, chapter, "a cell raised an error")
        views = page.locator(".jp-NotebookPanel .jp-OutputArea-output:has(> .jupyter-widgets.widget-vbox)")
        found = views.count()
        if found < max(expected, 1):
            _fail(page, chapter, f"{found} widget views rendered, {expected} widget cells in the notebook")
        for i in range(found):  # every widget view is drawn with controls and a plot or a readout
            view = views.nth(i)
            if not view.locator(".widget-inline-hbox, .widget-button, .widget-dropdown, .widget-slider").count():
                _fail(page, chapter, f"widget {i} has no controls")
            view.screenshot(path=str(SCREENSHOTS / f"{chapter}-widget{i}.png"), animations="disabled")

        widget = views.first.locator(".jupyter-widgets.widget-vbox").first
        widget.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        before_image = widget.screenshot(path=str(SCREENSHOTS / f"{chapter}-widget-before.png"), animations="disabled")
        before_text = widget.inner_text()
        kind = _move_first_control(widget)
        deadline = time.monotonic() + CHANGE_SECONDS
        previous, changed = before_image, False
        while True:  # wait for the picture and the text to change, then for the picture to settle
            page.wait_for_timeout(300)
            image = widget.screenshot(animations="disabled")
            changed = changed or (image != before_image and widget.inner_text() != before_text)
            if changed and image == previous:
                widget.screenshot(path=str(SCREENSHOTS / f"{chapter}-widget-after.png"), animations="disabled")
                break
            previous = image
            if time.monotonic() > deadline:
                widget.screenshot(path=str(SCREENSHOTS / f"{chapter}-widget-after.png"), animations="disabled")
                _fail(page, chapter, f"moving the first {kind} of the first widget changed "
                                     f"{'nothing' if image == before_image else 'the picture only'} "
                                     f"in {CHANGE_SECONDS} s")
        plot = widget.locator("img.explorer-picture, .widget-output img, .jp-OutputArea-output img").first
        assert plot.count() == 0 or plot.bounding_box()["height"] > 50, "the widget's plot is not drawn"
        assert not [e for e in errors if "widget" in e.lower()], errors
        print(f"{chapter}: ran in {ran:.1f} s, {found} widget views, moved a {kind}")
        _record_latency(page, chapter)
        if chapter in SELF_CHECK_CHAPTERS:
            _press_check_my_work(page, chapter)
    finally:
        page.close()
        lab.shutdown_kernels()


# ------------------------------------------------------------- what a student sees

STUDENT = "student-view"  # a chapter 1 as a student has it midway, in the lab fixture's root
WRONG_MARGIN = "def margin(X, y, w, b):\n    return float(np.min(y * (X @ w + b)))  # forgot to divide by ||w||\n"
BROKEN_CRITERION = "def perceptron_criterion(X, y, w, b):\n    return float(np.sum(X[:, 5])), w, b\n"
LIBRARY_TEXTS = ("Traceback", "testing.py", "site-packages", "The above exception", "File ")


def student_notebook():
    """Chapter 1 up to the Cover widget, as a student has it midway: perceptron_predict done, margin
    wrong, perceptron_criterion raising in the student's own line, cover_count not written yet. Every
    code cell is tagged raises-exception, so that Run All runs on past the failing test cells."""
    chapter = "ch01_perceptron"
    stub = next(c.source for c in submissions.untouched(chapter).cells if grade_id(c) == "cover_count")
    nb = submissions.filled(chapter, replace={"margin": WRONG_MARGIN, "perceptron_criterion": BROKEN_CRITERION,
                                              "cover_count": stub})
    last = next(i for i, c in enumerate(nb.cells) if "cover_explorer(cover_count" in c.source)
    nb.cells = nb.cells[:last + 1]
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.metadata.setdefault("tags", []).append("raises-exception")
    return nb


def test_what_a_student_sees(browser, lab):
    """Each state of a test cell (passing, failing, an error in the student's code, a function not written
    yet) and a widget whose function is missing, screenshotted and read as a student sees them, in the
    student's lab (no instructor menus, no news pop-up)."""
    SCREENSHOTS.mkdir(exist_ok=True)
    nb = student_notebook()
    path = lab.root / STUDENT / f"{STUDENT}.ipynb"
    path.parent.mkdir(exist_ok=True)
    nbformat.write(nb, str(path))
    page = browser.new_page()
    try:
        _open_and_run(page, lab, STUDENT)
        page.wait_for_timeout(500)
        cells = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell")
        assert cells.count() == len(nb.cells)

        def cell_output(gid: str, state: str) -> str:
            index = next(i for i, c in enumerate(nb.cells) if grade_id(c) == gid)
            cell = cells.nth(index)
            output = cell.locator(".jp-OutputArea")  # what the cell shows (a whole test cell is taller than the page)
            output.scroll_into_view_if_needed()
            output.screenshot(path=str(SCREENSHOTS / f"check-cell-{state}.png"), animations="disabled")
            text = output.inner_text().strip()
            print(f"{state}: {text!r}")
            for library in LIBRARY_TEXTS:
                assert library not in text, f"the {state} cell shows {library!r}: {text}"
            return text

        passing = cell_output("test_perceptron_predict", "passing")
        assert re.fullmatch(r"\d+ checks? passed", passing), passing
        failing = cell_output("test_margin", "failing")
        lines = failing.splitlines()
        assert lines[0] == "Check failed: margin of the line x1 + x2 = 1 on three points it separates", lines
        words = " ".join(failing.split())
        assert "got 1.0, expected 0.707107. Divide the smallest y_i (w.x_i + b) by ||w||" in words, failing
        assert len(lines) <= 6, failing
        raising = cell_output("test_perceptron_criterion", "error-in-student-code")
        assert raising.startswith("Check failed:") and "IndexError" in raising, raising
        assert "raised in your code:" in raising and "np.sum(X[:, 5])" in raising, raising
        missing = cell_output("test_cover_count", "missing-function")
        assert missing.startswith("Check failed:") and "cover_count is not written yet" in missing, missing

        view = page.locator(".jp-NotebookPanel .jp-OutputArea-output:has(> .jupyter-widgets.widget-vbox)").last
        view.scroll_into_view_if_needed()
        view.screenshot(path=str(SCREENSHOTS / "widget-missing-function.png"), animations="disabled")
        message = view.locator(".explorer-notice")
        assert "cover_count is not written yet" in message.inner_text(), view.inner_text()
        assert not [c for c in view.inner_text() if ord(c) >= 0x2600], "a glyph a font may lack in the message"
        assert not view.locator("img.explorer-picture").is_visible(), "an empty picture is shown"
        top, below = view.bounding_box()["y"], message.bounding_box()["y"]
        assert below - top < 150, f"the message is {below - top:.0f} px below the widget's top"

        config = json.loads(page.locator("#jupyter-config-data").text_content())
        disabled = config.get("disabledExtensions", [])
        for plugin in ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                       "@jupyterlab/apputils-extension:announcements"):
            assert plugin in disabled, f"{plugin} is on in the student's lab"
        with pytest.raises(urllib.error.HTTPError) as refused:
            lab.api("GET", "/formgrader")
        assert refused.value.code == 404, "the formgrader is served in the student's lab"
        assert "news" not in page.locator(".jp-Notification-Toast, .Toastify").all_inner_texts().__str__().lower()
    finally:
        page.close()
        lab.shutdown_kernels()
