"""The one widget pattern of the course: controls, a pure render function, a picture and a readout.

    explorer = Explorer(render, controls={"margin": FloatSlider(...)},
                        needs={"perceptron_train": perceptron_train})

``render(**values, **needs)`` is pure: it returns ``(picture, readout_text)``, the text made with
``readout(markup, **numbers)`` so that it carries the numbers it shows (``explorer.values``, what
tests read, never the markup), the picture being
a Matplotlib figure, a ``picture.LiveFigure`` (kept between updates, only its changing artists
redrawn: the fast way, see ``picture.py``) or ``None``. A render
with a ``cache`` parameter is given the explorer's own ``RenderCache`` (``explorer.cache``), so
re-running a widget's cell starts afresh. Widget modules follow one convention: factories
``<thing>_explorer(*, student_function, ...)`` (student functions keyword-only) build an
``Explorer`` over ``render_<thing>``, and every module lists its public names in ``__all__``.
The picture is drawn with Agg, cropped to what it shows and sent as a fast PNG
(``compress_level=1``) to an ``ipywidgets.Image``: binary over the comm, no base64,
no output area rebuilt, so the picture is replaced in place. The explorer closes a
figure made with pyplot after drawing it and never one it does not own. The text goes to
``explorer.readout`` and its numbers to ``explorer.values``. When one of the student's functions in
``needs`` is not written yet, the explorer says which one instead of showing a
traceback; it never falls back on a reference implementation. A widget's cell run before the cell that
defines one of its functions stops with a ``NameError`` before any widget exists: importing
``dlcourse.widgets`` in a kernel (``show_missing_names``) makes IPython show that as one line naming the
function (``missing_name_line``) instead of a traceback.

A slider moved in the browser whose update took longer than ``SLOW_UPDATE_SECONDS`` (a slow
machine, a heavy render) is switched to ``continuous_update=False``: dragging it then costs one
update on release instead of a queue of them. Backgrounds a render asks to have drawn ahead
(``LiveFigure.draw_ahead``) are drawn once the picture is sent and the kernel idle (``when_idle``).

Timings, for the tests and ``benchmarks/``: ``last_render_seconds`` (the render
function), ``last_picture_seconds`` (drawing and encoding the picture), ``last_figure`` (the
Matplotlib figure shown),
``last_update_seconds`` (both, and the readout), ``render_count``.
"""
from __future__ import annotations

import asyncio
import functools
import html
import inspect
import re
import time

import ipywidgets as widgets
import numpy as np
import traitlets
from IPython import get_ipython

from .picture import LiveFigure, describe_figure, figure_of, picture_png

SLOW_UPDATE_SECONDS = 0.15  # a control moved in the browser whose update took longer stops continuous updates
IDLE_SECONDS = 0.5  # work ahead (backgrounds drawn before a move needs them) waits this long after a picture,
BETWEEN_PIECES_SECONDS = 0.05  # and this long between its pieces


NOTICE_CLASS = "explorer-notice"
NOTICE_STYLE = "border-left:4px solid #bf8700;padding:2px 8px;background:#fff8c5"  # a box, not a glyph: no emoji


class Readout(str):
    """A readout's markup that also carries the numbers it shows, by name (``.values``)."""

    values: dict


def readout(markup: str, **values) -> Readout:
    """``markup`` (what the student reads) with ``values`` (what it shows, as numbers, for tests and tools)."""
    text = Readout(markup)
    text.values = values
    return text


def notice(markup: str) -> str:
    """A message in the readout's place, boxed so that it is seen (the picture is hidden meanwhile)."""
    return f"<div class='{NOTICE_CLASS}' style='{NOTICE_STYLE}'>{markup}</div>"


def is_notice(markup) -> bool:
    """True when a readout holds a message (a function missing, an error) instead of a readout."""
    return f"class='{NOTICE_CLASS}'" in str(markup)


def missing_function_message(name: str) -> str:
    return notice(f"<b>{html.escape(name)}</b> is not written yet: complete its exercise above, "
                  f"run that cell, then run this one again.")


def missing_name_line(name: str) -> str:
    """What a widget's cell run before the cell that defines ``name`` shows, instead of a traceback."""
    return f"`{name}` is not defined yet: run the cell that defines `{name}` first, then run this cell again."


def _widget_names() -> set[str]:
    """The names the widget factories of the chapters imported so far are given (their keyword-only
    parameters: the student's functions, and what earlier cells made)."""
    import sys
    names = set()
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith(f"{__package__}.ch"):
            continue
        for attr in getattr(module, "__all__", ()):
            factory = getattr(module, attr, None)
            if not callable(factory):
                continue
            try:
                parameters = inspect.signature(factory).parameters.values()
            except (TypeError, ValueError):
                continue
            names.update(p.name for p in parameters if p.kind is p.KEYWORD_ONLY)
    return names


def _missing_name(shell, value, tb) -> str | None:
    """The name a widget's cell is missing: ``value`` is a NameError raised by the cell's own top-level
    code (not in a function it calls), for a name a widget is given or in a cell that uses the widgets."""
    name = getattr(value, "name", None)
    if not isinstance(name, str) or not name.isidentifier() or tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    frame = tb.tb_frame
    if frame.f_code.co_name != "<module>" or frame.f_globals is not getattr(shell, "user_global_ns", None):
        return None
    if name in _widget_names():
        return name
    import linecache
    source = "".join(linecache.getlines(frame.f_code.co_filename))
    return name if "dlcourse.widgets" in source else None


def _one_line_for_missing_names(shell, etype, value, tb, tb_offset=None):
    """IPython's custom handler of NameError (``show_missing_names``), which shows the error itself: one
    line for a widget's missing function, IPython's own traceback for any other NameError (``%debug`` and
    ``%pdb`` work as before)."""
    try:
        name = _missing_name(shell, value, tb)
    except Exception:  # noqa: BLE001 - never lose the student's error for a fault of this handler
        name = None
    if name is None:
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset, running_compiled_code=True)
        return None
    shell._get_exc_info((etype, value, tb))  # sys.last_value and co., for %debug
    stb = [f"\x1b[31m\x1b[1m{missing_name_line(name)}\x1b[0m"]
    shell._showtraceback(etype, value, stb)  # in a kernel: the cell's error output, these lines its traceback
    if shell.call_pdb:
        shell.debugger(force=True)
    return stb


def show_missing_names(shell=None) -> bool:
    """In an IPython kernel, show a widget's cell's ``NameError`` for a function not defined yet as one line
    (``missing_name_line``), every other error as before. Not where another custom handler is set (it
    stays). True when the handler is in place."""
    shell = shell if shell is not None else get_ipython()
    if shell is None or not hasattr(shell, "set_custom_exc"):
        return False
    if getattr(shell, "_dlcourse_missing_names", False) and tuple(shell.custom_exceptions) == (NameError,):
        return True
    if tuple(getattr(shell, "custom_exceptions", ()) or ()):
        return False  # somebody else's handler: theirs to keep
    shell.set_custom_exc((NameError,), _one_line_for_missing_names)
    shell._dlcourse_missing_names = True
    return True


def plain_text(markup: str) -> str:
    """The words of an HTML readout, for a text alternative."""
    return " ".join(html.unescape(re.sub(r"<[^>]*>", " ", str(markup))).split())


def _culprit(exc: BaseException, needs: dict) -> str | None:
    """The name of the student's function in whose code ``exc`` was raised, if any."""
    codes = {getattr(fn, "__code__", None): name for name, fn in needs.items()}
    names = []
    tb = exc.__traceback__
    while tb is not None:
        name = codes.get(tb.tb_frame.f_code)
        if name:
            names.append(name)
        tb = tb.tb_next
    if names:
        return names[-1]
    return next(iter(needs), None) if isinstance(exc, NotImplementedError) else None


def _close_if_pyplot(figure) -> None:
    """Close a figure made with pyplot (it would leak otherwise); figures kept by a widget stay."""
    import sys
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None and getattr(figure, "number", None) is not None and plt.fignum_exists(figure.number):
        manager = plt._pylab_helpers.Gcf.figs.get(figure.number)
        if manager is not None and manager.canvas.figure is figure:
            plt.close(figure)


def _kernel_loop():
    """The event loop of the IPython kernel this code runs in, or None outside a kernel: a loop that
    merely runs in this thread is not one (Playwright's sync API keeps its own loop running in the
    browser tests' process, and nothing would ever call back on it while the tests run)."""
    if getattr(get_ipython(), "kernel", None) is None:
        return None
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def when_idle(work, delay: float = IDLE_SECONDS) -> None:
    """Call ``work()`` ``delay`` seconds after the kernel has finished the message it is handling (the
    picture is sent, and the browser has had time to show it), then again while it returns True: one
    piece at a time, so that a message arriving meanwhile waits for one piece only. Outside a kernel
    (tests, scripts), at once until done."""
    loop = _kernel_loop()
    if loop is None:
        while work():
            pass
        return

    def step():
        if work():
            loop.call_later(BETWEEN_PIECES_SECONDS, step)  # not call_soon: a message's handler awaits several times

    loop.call_later(delay, step)


class Picture(widgets.Image):
    """The explorer's picture: an ``Image`` whose ``tooltip`` (its text alternative, the ``<img>``'s title)
    renders. ipywidgets 8.1's ``DOMWidgetView.updateTooltip`` reads the model's ``description``, which an
    ``Image`` lacks, and throws: the whole view fails to show ("Could not create a view for model id ...",
    jupyter-widgets/ipywidgets#3860). An empty description lets the title through to the ``<img>``."""
    description = traitlets.Unicode("").tag(sync=True)


class Explorer(widgets.VBox):
    """Controls on top, a fixed-height picture, a one-line readout below."""

    def __init__(self, render, controls: dict, needs: dict | None = None, *,
                 height: str = "380px", title: str | None = None, columns: int = 3,
                 cache: RenderCache | None = None):
        if "cache" in inspect.signature(render).parameters:  # a cache given is one filled beforehand
            self.cache = cache if cache is not None else RenderCache()
        else:
            self.cache = None
        self.render_function = render if self.cache is None else functools.partial(render, cache=self.cache)
        self.controls = dict(controls)
        self.title = title or ""
        self.needs = dict(needs or {})
        self.readout = widgets.HTML(layout=widgets.Layout(min_height="1.6em"))
        self.values: dict = {}  # the numbers the readout shows (``readout``); empty while it shows a message
        self.last_render_seconds = None
        self.last_picture_seconds = None
        self.last_update_seconds = None
        self.last_figure = None
        self.render_count = 0
        self._picture_memo = {}  # what picture_png found out about this widget's figures
        rows = [widgets.HBox(list(self.controls.values())[i:i + columns])
                for i in range(0, len(self.controls), columns)]
        self.picture = Picture(format="png", layout=widgets.Layout(
            max_width="100%", max_height=height, object_fit="contain", object_position="left top",
            display="none"))
        self.picture.add_class("explorer-picture")
        self.output = widgets.Box([self.picture], layout=widgets.Layout(height=height, overflow="hidden"))
        self.output.add_class("explorer-plot")
        header = [widgets.HTML(f"<b>{html.escape(title)}</b>")] if title else []
        super().__init__(header + rows + [self.output, self.readout])
        self.add_class("explorer")
        for control in self.controls.values():
            control.observe(self._changed, names="value")
        self._changed()

    def _changed(self, change=None):
        self._update(**{name: control.value for name, control in self.controls.items()})
        control = getattr(change, "owner", None) if change is not None else None
        if (control is not None and "value" in getattr(control, "_property_lock", {})  # moved in the browser
                and getattr(control, "continuous_update", False)
                and (self.last_update_seconds or 0.0) > SLOW_UPDATE_SECONDS):
            # a drag would queue one slow update per pixel: this control now updates on release
            control.continuous_update = False

    def _show(self, png: bytes | None, words: str = "") -> None:
        """The picture and its text alternative (the image's title: what it shows and the readout); no
        picture: its box is folded away, so that the readout's message comes right under the controls."""
        if png is None:
            self.picture.layout.display = "none"
            self.output.layout.display = "none"
            return
        with self.picture.hold_sync():  # one message: the picture and its words
            self.picture.value = png
            self.picture.tooltip = words
        self.picture.layout.display = None
        self.output.layout.display = None

    def text_alternative(self, text: str) -> str:
        """The picture in words: the widget's title, what its figure shows (``describe_figure``), the readout."""
        parts = [self.title, describe_figure(self.last_figure), plain_text(text)]
        return ". ".join(part.rstrip(". ") for part in parts if part)

    def _update(self, **values):
        start = time.perf_counter()
        self.render_count += 1
        self.last_picture_seconds = 0.0
        self.values = {}
        try:
            figure, text = self.render_function(**values, **self.needs)
        except Exception as exc:  # noqa: BLE001 - the student's code is allowed to be unfinished or wrong
            self.last_render_seconds = time.perf_counter() - start
            name = _culprit(exc, self.needs)
            if isinstance(exc, NotImplementedError) and name:
                self.readout.value = missing_function_message(name)
            else:
                where = f" in <b>{html.escape(name)}</b>" if name else ""
                self.readout.value = notice(f"Error{where}: {html.escape(type(exc).__name__)}: "
                                            f"{html.escape(str(exc)[:300])}")
            self.last_figure = None
            self._show(None)
            self.last_update_seconds = time.perf_counter() - start
            return
        self.last_render_seconds = time.perf_counter() - start
        self.last_figure = figure_of(figure)
        if figure is None:
            self._show(None)
        else:
            drawn = time.perf_counter()
            try:
                self._show(picture_png(figure, self._picture_memo), self.text_alternative(text))
            finally:
                _close_if_pyplot(self.last_figure)
                self.last_picture_seconds = time.perf_counter() - drawn
        self.readout.value = str(text)
        self.values = dict(getattr(text, "values", {}))
        self.last_update_seconds = time.perf_counter() - start
        if isinstance(figure, LiveFigure) and figure.pending:
            when_idle(functools.partial(figure.draw_pending, limit=1))


class RenderCache:
    """What a widget computed with the student's functions, kept between its renders.

    ``cache.get(key, compute)`` returns ``compute()`` and keeps it under ``key``. Keys name the
    control values a result depends on *and the student's function objects*: a student who re-runs
    an exercise cell gets a new function object, hence a new key, never a stale result. Each
    explorer gets its own cache (the factory passes one to the render function), so re-running a
    widget's cell starts afresh. Errors are not cached. ``hits`` / ``misses`` are for the tests.
    """

    def __init__(self, maxsize: int = 64):
        self.maxsize, self.store, self.hits, self.misses = maxsize, {}, 0, 0
        self.figure, self.figure_key = None, None  # the explorer's live figure (picture.kept_figure)

    def get(self, key, compute):
        try:
            hash(key)
        except TypeError:  # an unhashable callable: nothing to key on, compute every time
            return compute()
        if key in self.store:
            self.hits += 1
            return self.store[key]
        self.misses += 1
        value = compute()
        if len(self.store) >= self.maxsize:
            self.store.pop(next(iter(self.store)))
        self.store[key] = value
        return value


def frozen(value):
    """``value`` with its NumPy arrays made read-only (an array, or the arrays in a tuple, list or dict's
    values): what a cache keeps is shared by every later render, which must not change it."""
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif isinstance(value, (tuple, list)):
        for item in value:
            frozen(item)
    elif isinstance(value, dict):
        frozen(list(value.values()))
    return value


def cached(cache, key, compute):
    """``compute()``, kept in ``cache`` under ``key`` when a cache is given."""
    return compute() if cache is None else cache.get(key, compute)
