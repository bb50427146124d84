"""The one widget pattern of the course: controls, a pure render function, a plot and a readout.

    explorer = Explorer(render, controls={"margin": FloatSlider(...)},
                        needs={"perceptron_train": perceptron_train})

``render(**values, **needs)`` is pure: it returns ``(figure_or_None, readout_text)``.
The figure is shown in a fixed-height output, the text in ``explorer.readout``
(tests assert on it). When one of the student's functions in ``needs`` is not
written yet, the explorer says which one instead of showing a traceback; it
never falls back on a reference implementation.
"""
from __future__ import annotations

import html
import time

import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import display


def missing_function_message(name: str) -> str:
    return (f"✋ <b>{html.escape(name)}</b> is not written yet: complete its exercise above, "
            f"run that cell, then run this one again.")


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


class Explorer(widgets.VBox):
    """Controls on top, a fixed-height plot, a one-line readout below."""

    def __init__(self, render, controls: dict, needs: dict | None = None, *,
                 height: str = "380px", title: str | None = None, columns: int = 3):
        self.render_function = render
        self.controls = dict(controls)
        self.needs = dict(needs or {})
        self.readout = widgets.HTML(layout=widgets.Layout(min_height="1.6em"))
        self.last_render_seconds = None
        self.last_figure = None
        self.render_count = 0
        rows = [widgets.HBox(list(self.controls.values())[i:i + columns])
                for i in range(0, len(self.controls), columns)]
        self.output = widgets.interactive_output(self._update, self.controls)
        self.output.layout = widgets.Layout(height=height, overflow="hidden")
        header = [widgets.HTML(f"<b>{html.escape(title)}</b>")] if title else []
        super().__init__(header + rows + [self.output, self.readout])

    def _update(self, **values):
        start = time.perf_counter()
        self.render_count += 1
        try:
            figure, text = self.render_function(**values, **self.needs)
        except Exception as exc:  # the student's code is allowed to be unfinished or wrong
            name = _culprit(exc, self.needs)
            if isinstance(exc, NotImplementedError) and name:
                self.readout.value = missing_function_message(name)
            else:
                where = f" in <b>{html.escape(name)}</b>" if name else ""
                self.readout.value = (f"⚠ {type(exc).__name__}{where}: "
                                      f"{html.escape(str(exc)[:300])}")
            self.last_figure = None
            return
        finally:
            self.last_render_seconds = time.perf_counter() - start
        self.last_figure = figure
        if figure is not None:
            display(figure)
            plt.close(figure)
        self.readout.value = text
        self.last_render_seconds = time.perf_counter() - start


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


def cached(cache, key, compute):
    """``compute()``, kept in ``cache`` under ``key`` when a cache is given."""
    return compute() if cache is None else cache.get(key, compute)
