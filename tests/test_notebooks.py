"""The release's widgets say what is missing instead of failing; every chapter shows at least two widgets.

That each solution runs top to bottom is proven once, in the browser (tests/test_browser.py: Run All in
JupyterLab, any error or traceback fails), and again by the grader (the reference earns full marks)."""
import os
import time

import pytest
from nbclient import NotebookClient

from autograder.course import chapters, read, release_path, role, source_path

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def execute(nb, cwd, allow_errors=False):
    client = NotebookClient(nb, timeout=180, kernel_name="python3", allow_errors=allow_errors,
                            resources={"metadata": {"path": str(cwd)}})
    start = time.monotonic()
    client.execute(env={**os.environ, "MPLBACKEND": "module://matplotlib_inline.backend_inline"})
    return time.monotonic() - start


@pytest.mark.parametrize("chapter", chapters())
def test_every_chapter_shows_two_widgets(chapter):
    from tests.test_browser import widget_cells
    assert widget_cells(read(source_path(chapter))) >= 2, f"{chapter} shows fewer than two widgets"


@pytest.mark.parametrize("chapter", chapters())
def test_release_widgets_name_what_is_missing(chapter):
    nb = read(release_path(chapter))
    execute(nb, release_path(chapter).parent, allow_errors=True)
    widget_cells = sum(any(WIDGET_MIME in o.get("data", {}) for o in c.get("outputs", [])) for c in nb.cells
                       if "check_button" not in c.source)  # the self-check button needs no function
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    messages = [m for m in state.values() if "is not written yet" in str(m.get("state", {}).get("value", ""))]
    assert widget_cells >= 2 and len(messages) >= widget_cells, \
        f"{len(messages)} of {widget_cells} widgets say which function is missing"
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        errors = [o for o in cell.outputs if o.output_type == "error"]
        shows_widget = any(WIDGET_MIME in o.get("data", {}) for o in cell.outputs)
        if role(cell) == "given":
            assert not errors, f"given cell fails in the release: {errors[0]['ename']}: {errors[0]['evalue']}"
        if shows_widget:
            assert not errors, f"a widget cell raises in the release: {errors[0]['ename']}"
        if role(cell) == "demo":
            for error in errors:
                assert error["ename"] in ("NotImplementedError", "CheckFailed", "NameError"), \
                    f"a demo cell of the release fails with {error['ename']}: {error['evalue'][:200]}"
