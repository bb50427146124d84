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

    make test-browser          # every chapter run in the lab; REQUIRE_BROWSER=1: a missing Chromium fails
    pytest -m browser tests    # every browser test; a missing Chromium skips

``make test`` runs this module's other tests (``test_what_a_student_sees``) and the other browser tests;
the thirteen chapter runs (``every_chapter``) are ``make test-browser``'s, which ``.ci/run`` runs after it.

Chromium is Debian's package (``apt-get install chromium``), driven by Python
playwright; ``playwright install`` is never needed.
"""
from __future__ import annotations

import ast
import json
import os
import re
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest

from autograder import submissions
from autograder.course import ROOT, chapters, grade_id
from benchmarks.browser import CHROMIUM, CHROMIUM_ARGS, Lab, RunFailed, open_and_run
from tests.helpers import code_cell_trees

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

SCREENSHOTS = ROOT / "tests" / "screenshots"
CHAPTERS = chapters()
SELF_CHECK_CHAPTERS = ("ch02_universal_approximation",)  # the button is pressed in these (a grading run each)
CHANGE_SECONDS = 20          # a render after a control moves
BAD_TEXTS = ("interactive(children=", "VBox(children=", "HBox(children=", "Loading widget...",
             "Error displaying widget", "not written yet")


def _unavailable(reason: str):
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail(f"REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(reason)


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
    try:
        open_and_run(page, lab, chapter)
    except RunFailed as failure:
        _fail(page, chapter, str(failure))


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


@pytest.mark.every_chapter  # 13 runs of up to a minute each: make test-browser, which .ci/run runs after make test
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
        # a view that could not be made is an empty error box (ipywidgets 8.1 writes no text in it)
        broken = page.locator(".jp-NotebookPanel .jupyter-widgets-error-widget").count()
        if broken:
            _fail(page, chapter, f"{broken} widget views could not be made (an empty error box instead)")
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
