"""Check your work from inside the notebook, hidden tests included.

    from dlcourse.selfcheck import check_my_work, check_button
    check_my_work()          # grades the notebook as saved on disk and shows a table
    check_button()           # the same behind a button

This module holds no tests and no solutions: it runs the course's grader,
``python -m autograder check --json NOTEBOOK``, in a separate process (the grader
sandboxes your code exactly as for a real submission) and shows what it
reports: the score of each exercise and, for every failing check, its
description and message. Hidden checks show those too, never their code.

The grader reads the file on disk: save the notebook (Ctrl+S) first.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from markupsafe import Markup

from . import vocabulary

__all__ = ["check_my_work", "check_button", "notebook_path", "render_html"]

TIMEOUT_SECONDS = 600
NO_GRADER = ("The self-check needs the course's grader (the <code>autograder</code> package and the "
             "<code>solutions/</code> folder of the course repository), and this Python cannot import it. "
             "If you only downloaded the notebooks of <code>course/</code>, clone the whole course "
             "repository and run <code>make lab</code> there; the public checks in the notebook's test "
             "cells still work without it.")


def _ipython_user_ns() -> dict:
    try:
        from IPython import get_ipython
        shell = get_ipython()
    except ImportError:
        return {}
    return getattr(shell, "user_ns", None) or {}


def notebook_path() -> Path | None:
    """The notebook this kernel runs: ``__session__`` (set by ipykernel), ``JPY_SESSION_NAME``,
    or the only ``.ipynb`` of the working directory; None when it cannot be told."""
    ns = _ipython_user_ns()
    cwd = Path.cwd()
    for candidate in (ns.get("__session__"), os.environ.get("JPY_SESSION_NAME"), ns.get("__vsc_ipynb_file__")):
        if not isinstance(candidate, str) or not candidate.endswith(".ipynb"):
            continue
        path = Path(candidate).expanduser()
        # an absolute path, or one relative to the server's root: try it, then its name beside us
        for option in (path, cwd / path, cwd / path.name):
            if option.is_file():
                return option.resolve()
    notebooks = [p for p in cwd.glob("*.ipynb") if p.is_file()]
    if len(notebooks) == 1:
        return notebooks[0].resolve()
    return None


_TEMPLATE = []


def _render(**context) -> str:
    """``templates/selfcheck.html.j2``, autoescaping: every text is escaped unless marked as markup."""
    if not _TEMPLATE:
        import jinja2
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                                 autoescape=True, trim_blocks=True, lstrip_blocks=True)
        _TEMPLATE.append(env.get_template("selfcheck.html.j2"))
    return _TEMPLATE[0].render(**context)


def _notice(text, warning: bool = False) -> str:
    """A message in a box: ``text`` is escaped, unless it is our own markup (``markupsafe.Markup``)."""
    return _render(notice=text, warning=warning)


def render_html(result: dict, path=None) -> str:
    """The grader's result (the JSON of ``python -m autograder check --json``) as an HTML table, every
    text escaped: the rows and words of ``vocabulary`` (the command line's table has the same), totals
    and notes the grader's (``totals``, ``notes``), not computed here again."""
    if "error" in result:
        return _notice(str(result["error"]), warning=True)
    name = saved = None
    if path is not None:
        name = Path(path).name
        saved = time.strftime("%H:%M:%S", time.localtime(Path(path).stat().st_mtime)) \
            if Path(path).is_file() else "?"
    return _render(result=result, rows=vocabulary.rows(result), totals=vocabulary.totals(result), name=name,
                   saved=saved, warning=False)


class _Display:
    """Where the messages go: one display, replaced by the next message (nothing when not shown).

    In an ``ipywidgets.Output`` the output is cleared and written again (JupyterLab does not
    apply display updates inside an Output widget); elsewhere a display handle is updated.
    """

    def __init__(self, show: bool, output=None):
        self.show, self.output, self.handle = show, output, None

    def __call__(self, markup: str) -> None:
        if not self.show:
            return
        from IPython.display import HTML, display
        if self.output is not None:
            self.output.clear_output(wait=True)
            with self.output:
                display(HTML(markup))
        elif self.handle is None:
            self.handle = display(HTML(markup), display_id=True)
            if self.handle is None:  # outside IPython: display printed it
                self.show = False
        else:
            self.handle.update(HTML(markup))


def check_my_work(path=None, *, show: bool = True, timeout: float = TIMEOUT_SECONDS, output=None) -> dict:
    """Grade the saved notebook at ``path`` (default: this notebook); show a table and return the result.

    The result is the grader's dict (``cells`` with their ``checks``, ``problems``, ...) or
    ``{"error": message}`` when the check could not run. ``output``: an ``ipywidgets.Output``
    to show the messages in (the button's).
    """
    _show = _Display(show, output)
    if path is None:
        path = notebook_path()
        if path is None:
            result = {"error": "Could not tell which notebook this is: call check_my_work(\"<name>.ipynb\") "
                               "with its path."}
            _show(render_html(result))
            return result
    path = Path(path).expanduser().resolve()
    if importlib.util.find_spec("autograder") is None:
        result = {"error": "no grader", "html": NO_GRADER}
        _show(_notice(Markup(NO_GRADER), warning=True))
        return result
    _show(_notice(Markup("Checking <code>{}</code> as last saved (save with Ctrl+S first); "
                         "this takes a few seconds to a minute…").format(path.name)))
    env = {**os.environ, "MPLBACKEND": "Agg"}
    try:
        done = subprocess.run([sys.executable, "-m", "autograder", "check", "--json", str(path)],
                              capture_output=True, text=True, timeout=timeout, env=env, cwd=str(path.parent))
    except subprocess.TimeoutExpired:
        result = {"error": f"the check took longer than {timeout:g} s and was stopped"}
        _show(render_html(result))
        return result
    result = _parse(done.stdout)
    if result is None:
        if "No module named autograder" in done.stderr:
            result = {"error": "no grader", "html": NO_GRADER}
            _show(_notice(Markup(NO_GRADER), warning=True))
            return result
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        result = {"error": f"the grader failed (exit code {done.returncode}): " + " | ".join(tail)}
    _show(render_html(result, path if "error" not in result else None))
    return result


def _parse(stdout: str) -> dict | None:
    text = stdout.strip()
    try:
        value = json.loads(text)
    except ValueError:
        start = text.find("\n{")  # anything printed before the JSON
        try:
            value = json.loads(text[start + 1:]) if start >= 0 else None
        except ValueError:
            value = None
    return value if isinstance(value, dict) else None


def check_button(path=None, description: str = "Check my work"):
    """A button that runs ``check_my_work(path)`` and an output below it where the table appears."""
    import ipywidgets as widgets

    button = widgets.Button(description=description, icon="check", button_style="primary",
                            tooltip="Grade the saved notebook, hidden tests included")
    output = widgets.Output()

    def on_click(_):
        button.disabled = True
        output.clear_output()
        try:
            box.result = check_my_work(path, output=output)
        except Exception as exc:  # noqa: BLE001 - a callback's error would otherwise go unseen
            _Display(True, output)(_notice(f"the self-check failed: {exc!r}", warning=True))
        finally:
            button.disabled = False

    button.on_click(on_click)
    box = widgets.VBox([button, output])
    box.button, box.output, box.result = button, output, None
    return box
