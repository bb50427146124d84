"""dlcourse/widgets/picture.py: a live figure redraws only what changes, and shows what a whole draw shows."""
import io

import numpy as np
from matplotlib.figure import Figure
from PIL import Image

from dlcourse.widgets import Explorer
from dlcourse.widgets.picture import LiveFigure, figure_png, kept_figure
from tests.helpers import assert_picture_is_current, move


def _curve_figure():
    live = LiveFigure(Figure(figsize=(4, 3)))
    ax = live.figure.subplots()
    live.ax = ax
    live.static, = ax.plot([], [], color="gray")
    live.curve, = live.changes(ax.plot([], [], color="tab:red", lw=2))
    live.title = live.changes(ax.set_title(" "))
    return live


def render_curve(freq=1, scale=1, *, cache=None):
    live = kept_figure(cache, _curve_figure)
    if live.new_background(scale):
        x = np.linspace(0, 1, 50)
        live.static.set_data(x, scale * x)
        live.ax.set_xlim(0, 1)
        live.ax.set_ylim(-scale, scale)
    x = np.linspace(0, 1, 200)
    live.curve.set_data(x, scale * np.sin(2 * np.pi * freq * x))
    live.title.set_text(f"frequency {freq}")
    return live, f"frequency {freq}, scale {scale}"


def _explorer():
    import ipywidgets as widgets
    return Explorer(render_curve, {"freq": widgets.IntSlider(1, min=1, max=5),
                                   "scale": widgets.IntSlider(1, min=1, max=3)})


def test_the_background_is_drawn_once_per_key():
    explorer = _explorer()
    live = explorer.cache.figure
    assert live.full_draws == 1
    move(explorer, freq=3)
    move(explorer, freq=4)
    assert live.full_draws == 1 and explorer.cache.figure is live  # one figure, its background kept
    assert_picture_is_current(explorer)
    move(explorer, scale=2)
    assert live.full_draws >= 2
    assert_picture_is_current(explorer)


def test_a_stale_picture_is_caught():
    explorer = _explorer()
    move(explorer, freq=2)
    explorer.cache.figure.ax.set_ylim(-0.2, 0.2)  # a background change nobody asked a new background for
    try:
        assert_picture_is_current(explorer)
    except AssertionError:
        return
    raise AssertionError("a figure whose limits changed without a new background passed as current")


def test_without_a_cache_every_call_builds_a_figure():
    first, _ = render_curve(2)
    second, _ = render_curve(2)
    assert first is not second
    png = first.png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_layers_show_what_a_whole_draw_shows():
    live, _ = render_curve(3, 2)
    layered = live.png()
    for artist in live.changing:
        artist.set_animated(False)
    whole = figure_png(live.figure)
    layered, whole = (np.asarray(Image.open(io.BytesIO(png))) for png in (layered, whole))
    assert layered.shape == whole.shape  # the same crop
    assert np.any(layered != whole, axis=-1).mean() < 0.002


def test_a_background_drawn_before_is_reused():
    explorer = _explorer()
    live = explorer.cache.figure
    move(explorer, scale=2)
    move(explorer, freq=3)
    draws = live.full_draws
    move(explorer, scale=1)  # drawn before: its pixels are kept
    assert live.full_draws == draws
    assert_picture_is_current(explorer)
    move(explorer, scale=3)
    assert live.full_draws == draws + 1
    assert_picture_is_current(explorer)


def _labels_figure():
    """Figure 2.3 in high: 229.99999999999997 pixels, not a whole number (text is placed from the top)."""
    live = LiveFigure(Figure(figsize=(4, 2.3)))
    live.ax = live.figure.subplots()
    live.image = live.changes(live.ax.imshow(np.zeros((3, 3)), cmap="gray", vmin=0, vmax=1))
    live.changes(list(live.ax.spines.values()))  # the frame, over the image
    live.labels = live.changes([live.ax.text(j, i, "", ha="center", va="center", fontsize=8,
                                             bbox=dict(boxstyle="round", fc="tab:orange") if i == 0 else None)
                                for i in range(3) for j in range(3)])
    live.title = live.changes(live.ax.set_title(" "))
    return live


def render_labels(value=0, *, cache=None):
    live = kept_figure(cache, _labels_figure)
    live.new_background("grid")
    grid = (np.arange(9).reshape(3, 3) + value) % 4 / 3
    live.image.set_data(grid)
    for label, v in zip(live.labels, grid.ravel()):
        label.set_text(f"{v:.2f}")
        label.set_color("white" if v < 0.5 else "black")
    live.title.set_text(f"shift {value % 4}")
    return live, f"value {value}"


def test_a_changing_text_is_drawn_once_then_its_pixels_laid_over():
    import ipywidgets as widgets

    explorer = Explorer(render_labels, {"value": widgets.IntSlider(0, min=0, max=9)})
    live = explorer.cache.figure
    assert len(live._texts) == 10  # 9 labels and the title, each its own (text, colour, place)
    assert_picture_is_current(explorer)
    for value in range(1, 9):
        move(explorer, value=value)
        assert_picture_is_current(explorer)  # kept pixels where a text comes back, the same as drawn
    assert len(live._texts) == 4 * 9 + 4  # 4 values per label (each in its colour), 4 titles: none drawn twice


def test_backgrounds_drawn_ahead_wait_for_the_picture_are_kept_and_drawn_once():
    live, _ = render_curve(1, 1)
    assert live.new_background(1)
    live.ax.set_ylim(-1, 1)
    shown = []

    def set_scale(scale):
        shown.append(scale)
        live.ax.set_ylim(-scale, scale)

    live.draw_ahead([2, 3], set_scale)
    assert live.pending and live.full_draws == 0 and shown == []  # nothing drawn before the picture
    first = live.pixels().copy()
    assert live.full_draws == 1
    live.draw_ahead([4], set_scale)  # only the first request counts
    live.draw_pending()
    assert not live.pending and live.full_draws == 3 and shown == [2, 3, 1]  # then set back to what it showed
    assert live.ax.get_ylim() == (-1, 1) and np.array_equal(live.pixels(), first)
    for scale in (2, 1, 3):
        assert live.new_background(scale)
        set_scale(scale)
        live.pixels()
    assert live.full_draws == 3  # every one of them kept


def test_the_explorer_draws_ahead_after_its_picture_and_not_again():
    import ipywidgets as widgets

    asked = []

    def render(scale, cache=None):
        live = kept_figure(cache, _curve_figure)
        def set_scale(s):
            asked.append(s)
            live.ax.set_ylim(-s, s)
        live.draw_ahead([1, 2, 3], set_scale)
        if live.new_background(scale):
            set_scale(scale)
        live.curve.set_data([0, 1], [0, scale])
        return live, f"scale {scale}"

    explorer = Explorer(render, {"scale": widgets.IntSlider(1, min=1, max=3)})
    live = explorer.cache.figure
    assert asked[0] == 1 and not live.pending and live.full_draws == 3  # no kernel here: at once, after the picture
    for scale in (2, 3, 1):
        move(explorer, scale=scale)
        assert_picture_is_current(explorer)
    assert live.full_draws == 3


def pieces(count):
    """Work done in ``count`` pieces, recording when each ran."""
    done = []

    def work():
        done.append(len(done))
        return len(done) < count
    return work, done


def run_in_a_loop(coroutine):
    """``asyncio.run`` in a thread of its own: this test process may already hold a running loop in its
    main thread (Playwright's, kept by the browser tests' session fixture)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, coroutine).result()


def test_outside_a_kernel_work_left_for_idle_time_is_done_at_once_even_where_a_loop_runs():
    from dlcourse.widgets.explorer import when_idle

    work, done = pieces(3)
    when_idle(work)
    assert done == [0, 1, 2]

    async def in_a_loop():  # as Playwright's sync API leaves one running in the browser tests' process
        work, done = pieces(3)
        when_idle(work, delay=60)
        return done
    assert run_in_a_loop(in_a_loop()) == [0, 1, 2]  # nothing would call back on that loop


def test_in_a_kernel_work_left_for_idle_time_waits_then_runs_one_piece_at_a_time(monkeypatch):
    import asyncio
    import types

    from dlcourse.widgets import explorer

    monkeypatch.setattr(explorer, "get_ipython", lambda: types.SimpleNamespace(kernel=object()))

    async def the_kernels_loop():
        return explorer._kernel_loop() is asyncio.get_running_loop()
    assert run_in_a_loop(the_kernels_loop())

    class Loop:  # records what is left for later; the test calls back, in order (no clock: no flakiness)
        def __init__(self):
            self.later = []

        def call_later(self, delay, callback):
            self.later.append((delay, callback))

    loop = Loop()
    monkeypatch.setattr(explorer, "_kernel_loop", lambda: loop)
    work, done = pieces(3)
    explorer.when_idle(work, delay=0.5)
    waits, seen = [], [list(done)]
    while loop.later:
        delay, callback = loop.later.pop(0)
        waits.append(delay)
        callback()
        seen.append(list(done))
    assert seen == [[], [0], [0, 1], [0, 1, 2]]  # nothing at once, then one piece per call back
    assert waits == [0.5, explorer.BETWEEN_PIECES_SECONDS, explorer.BETWEEN_PIECES_SECONDS]


def test_the_png_is_the_pixels():
    from dlcourse.widgets.picture import _png

    pixels = np.random.default_rng(0).integers(0, 256, size=(7, 11, 4), dtype=np.uint8)
    decoded = np.asarray(Image.open(io.BytesIO(_png(pixels[1:6, 2:9]))).convert("RGBA"))
    assert np.array_equal(decoded, pixels[1:6, 2:9])


def test_a_legend_beyond_the_axes_is_not_cut_off_and_the_finding_is_remembered():
    def legend_outside():
        figure = Figure(figsize=(3, 2))
        ax = figure.subplots()
        figure.subplots_adjust(left=0, right=1, bottom=0, top=1)
        ax.plot([0, 1], [0, 1], label="a long legend label")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))  # right of the axes: beyond the figure
        return figure

    size = lambda png: Image.open(io.BytesIO(png)).size  # noqa: E731
    memo = {}
    wide = size(figure_png(legend_outside(), memo))
    assert memo == {"beyond edges": True} and wide[0] > 3 * 100  # wider than the 300-pixel figure
    assert size(figure_png(legend_outside(), memo)) == wide  # the remembered answer, same picture


def test_lines_in_the_default_colours_differ_in_their_dashes_too():
    def build():
        live = LiveFigure(Figure(figsize=(4, 3)))
        ax = live.figure.subplots()
        live.lines = [ax.plot([0, 1], [i, i])[0] for i in range(4)]           # default colours
        live.lines.append(ax.plot([0, 1], [5, 5], color="k")[0])                # a colour, no style
        live.lines.append(ax.plot([0, 1], [6, 6], color="k", ls="-")[0])        # its own style
        return live
    lines = kept_figure(None, build).lines
    # get_linestyle() names every custom dash "--": compare the dash patterns
    styles = [(line.get_linestyle(), str(line._unscaled_dash_pattern)) for line in lines[:5]]
    assert len(set(styles)) == 5, styles
    assert lines[5].get_linestyle() == "-"
    import matplotlib as mpl
    assert mpl.rcParams["axes.prop_cycle"].keys == {"color"}, "the dashes leaked into Matplotlib's defaults"


def test_a_figure_described_in_words():
    from dlcourse.widgets.picture import describe_figure

    figure = Figure()
    left, right = figure.subplots(1, 2)
    left.set_title("Training loss $L$")
    left.set_xlabel("step")
    left.set_ylabel("loss")
    left.plot([0, 1], [1, 0], label="yours")
    left.plot([0, 1], [1, 0.5], label="reference")
    left.legend()
    right.set_xlabel(r"$\lambda$")
    assert describe_figure(figure) == ("Training loss L (x: step, y: loss), showing yours, reference; "
                                       "a plot (x: lambda)")


def test_the_explorer_picture_carries_its_text_alternative():
    import ipywidgets as widgets
    widget = Explorer(render_curve, controls={"freq": widgets.IntSlider(1, min=1, max=5)}, title="A curve")
    assert widget.picture.tooltip.startswith("A curve. ") and "frequency 1" in widget.picture.tooltip
    move(widget, freq=3)
    assert "frequency 3" in widget.picture.tooltip and "frequency 1" not in widget.picture.tooltip
