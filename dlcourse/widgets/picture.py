"""From a widget's figure to the PNG its explorer sends: drawn with Agg, cropped, fast to encode.

Two kinds of figure:

* a plain Matplotlib ``Figure``, drawn whole at every update (``figure_png``);
* a ``LiveFigure``: a figure kept between a widget's updates and drawn in two layers. The
  background (axes, ticks, labels, legends, curves that do not depend on the moved control) is
  drawn once and kept as pixels; only the artists marked with ``live.changes(...)`` are redrawn
  on it, then the artists marked with ``live.on_top(...)`` (a legend over changing curves), kept
  as a transparent layer, are laid over them. A figure with two axes and a legend costs 40-80 ms
  to draw whole and a few ms this way, which is what a student dragging a slider waits for.
  Changing texts (titles, the labels of values) are kept as pixels too, one layer per what they
  show and where: a text costs about 1 ms to draw and often comes back (a title that stays, the
  few values of a kernel's labels), laid over it costs a few hundredths of that.

A render keeps its live figure in the explorer's cache, one per explorer:

    live = kept_figure(cache, _new_figure)     # axes and artists: made once per explorer
    if live.new_background(key):               # True when what the background shows must change
        ...                                    # set the background's data, limits and labels for key
    live.curve.set_data(x, y)                  # the changing artists, at every update
    return live, readout

Without a cache (a test calling the render directly) every call makes a new figure. Keeping one
figure matters twice: its ticks and labels are made once (a new figure costs about twice as much
to draw the first time as the same figure redrawn whole), and its background is kept as pixels,
so an update that changes no background costs a few ms. ``round_limits`` and ``decade_limits``
give axes limits that move in whole steps, so that most moves of the data keep the background.
"""
from __future__ import annotations

import io
import struct
import zlib

import numpy as np

PAD_PIXELS = 8          # white border kept around what a figure shows (bbox "tight" keeps 0.1 in)
COMPRESS_LEVEL = 1      # zlib level of the PNG: level 1 is several times faster than 6, a little larger
KEPT_BACKGROUNDS = 8    # backgrounds a live figure keeps as pixels, by key (about 1 MB each)
KEPT_TEXTS = 256        # changing texts a live figure keeps as pixels, by what they show and where (a few kB each)

__all__ = ["LiveFigure", "kept_figure", "figure_png", "picture_png", "figure_of", "round_limits", "decade_limits",
           "plain_log_axis", "describe_figure"]


def _agg_canvas(figure):
    """The figure's canvas when it can be drawn into a pixel buffer, else a new Agg canvas for it."""
    canvas = figure.canvas
    if not hasattr(canvas, "buffer_rgba") or not hasattr(canvas, "get_renderer"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        canvas = FigureCanvasAgg(figure)
    return canvas


def _content_box(rgba: np.ndarray) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) of what differs from the corner's colour, padded by PAD_PIXELS."""
    height, width = rgba.shape[:2]
    content = np.any(rgba != rgba[0, 0], axis=2)
    rows, cols = np.flatnonzero(content.any(axis=1)), np.flatnonzero(content.any(axis=0))
    if rows.size == 0:
        return 0, height, 0, width
    return (max(rows[0] - PAD_PIXELS, 0), min(rows[-1] + 1 + PAD_PIXELS, height),
            max(cols[0] - PAD_PIXELS, 0), min(cols[-1] + 1 + PAD_PIXELS, width))


def _drawn_beyond_edges(figure, canvas) -> bool:
    """Whether something is drawn outside the figure (a legend placed beyond the axes)."""
    box = figure.get_tightbbox(canvas.get_renderer())
    size = figure.get_size_inches()
    return box is not None and (box.x0 < -0.01 or box.y0 < -0.01 or box.x1 > size[0] + 0.01
                                or box.y1 > size[1] + 0.01)


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def _png(pixels: np.ndarray) -> bytes:
    """RGBA pixels as a PNG: no row filter and zlib level COMPRESS_LEVEL, written here because it is
    three times faster than Pillow's encoder (about 4 ms for 900 x 330 pixels) for plots' flat colours."""
    height, width, channels = pixels.shape
    rows = np.empty((height, 1 + width * channels), np.uint8)
    rows[:, 0] = 0  # filter type "none" for every row
    rows[:, 1:] = pixels.reshape(height, width * channels)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA, deflate, no interlace
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(rows.tobytes(), COMPRESS_LEVEL)) + _chunk(b"IEND", b""))


def figure_png(figure, memo: dict | None = None) -> bytes:
    """``figure`` as PNG bytes: drawn once with Agg at the figure's dpi, cropped to its content.

    Like the inline backend's ``bbox_inches="tight"`` but without its second draw: the margins
    are found in the pixels. When something is drawn outside the figure (a legend placed beyond
    the axes), ``savefig(bbox_inches="tight")`` is used instead, so nothing is cut off. Finding
    that out costs about 50 ms; ``memo``, a dict kept between the pictures of one widget (whose
    figures share their layout), remembers the answer.
    """
    canvas = _agg_canvas(figure)
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba())
    top, bottom, left, right = _content_box(rgba)
    height, width = rgba.shape[:2]
    touches_edge = top == 0 or left == 0 or bottom == height or right == width
    if touches_edge and memo is not None and "beyond edges" in memo:
        beyond = memo["beyond edges"]
    elif touches_edge:
        beyond = _drawn_beyond_edges(figure, canvas)
        if memo is not None:
            memo["beyond edges"] = beyond
    if touches_edge and beyond:
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", bbox_inches="tight", pil_kwargs={"compress_level": COMPRESS_LEVEL})
        return buffer.getvalue()
    return _png(rgba[top:bottom, left:right])


def _keep(store: dict, key, value, limit: int) -> None:
    """Keep ``value`` under ``key`` as the most recently used entry of ``store``, the oldest dropped beyond
    ``limit`` entries; nothing is kept under an unhashable key."""
    try:
        store.pop(key, None)
    except TypeError:
        return
    store[key] = value
    while len(store) > limit:
        store.pop(next(iter(store)))


def _layer(rgba: np.ndarray, within=None):
    """What is drawn on a transparent canvas, ready to lay over pictures: (box, colour times alpha,
    1 - alpha), or None when nothing is drawn. ``within``: (rows, cols) slices where it is drawn, if known."""
    rows_within, cols_within = within or (slice(None), slice(None))
    drawn = rgba[rows_within, cols_within, 3] > 0
    rows, cols = np.flatnonzero(drawn.any(axis=1)), np.flatnonzero(drawn.any(axis=0))
    if rows.size == 0:
        return None
    top, left = rows_within.start or 0, cols_within.start or 0
    box = (slice(top + rows[0], top + rows[-1] + 1), slice(left + cols[0], left + cols[-1] + 1))
    alpha = rgba[box][:, :, 3:] / np.float32(255)
    return box, rgba[box][:, :, :3] * alpha, 1 - alpha


def _lay(layer, pixels: np.ndarray) -> None:
    """Lay a ``_layer`` over ``pixels`` (in place)."""
    if layer is not None:
        box, colour, under = layer
        region = pixels[box][:, :, :3]
        region[...] = np.rint(colour + region * under).astype(np.uint8)


# what a Text's pixels depend on besides its place, colour, font, clip and box (its own attributes:
# Matplotlib has no public getter for several of them)
_TEXT_STATE = ("_text", "_rotation", "_rotation_mode", "_transform_rotates_text", "_horizontalalignment",
               "_verticalalignment", "_multialignment", "_linespacing", "_wrap", "_usetex", "_parse_math",
               "_antialiased", "_agg_filter", "_sketch", "_snap", "_rasterized")


def _text_key(artist):
    """All a changing text's pixels depend on; None for an artist whose pixels are not kept (not a plain
    ``Text``: an annotation's arrow; path effects; a clip path); () for an empty text (nothing drawn)."""
    from matplotlib.colors import to_rgba
    from matplotlib.text import Text

    if type(artist) is not Text or artist.get_path_effects() or artist.get_clip_path() is not None:
        return None
    if not artist.get_text():
        return ()
    clip = artist.get_clip_box() if artist.get_clip_on() else None
    patch = artist.get_bbox_patch()
    box = None if patch is None else (
        tuple(patch.get_facecolor()), tuple(patch.get_edgecolor()), patch.get_linewidth(), patch.get_linestyle(),
        type(patch.get_boxstyle()).__name__, tuple(sorted(vars(patch.get_boxstyle()).items())))
    return (tuple(getattr(artist, name, None) for name in _TEXT_STATE),
            tuple(artist.get_transform().transform(artist.get_unitless_position())),
            to_rgba(artist.get_color(), artist.get_alpha()), hash(artist.get_fontproperties()),
            None if clip is None else tuple(clip.extents), box)


class LiveFigure:
    """A figure drawn in two layers: a background drawn once, and the artists that change redrawn on it.

        live = LiveFigure(Figure(figsize=(6, 3)))
        ax = live.figure.subplots()
        ax.set_xlim(0, 1)                                  # background: drawn once
        live.curve, = live.changes(ax.plot([], []))        # changes: redrawn at every update
        ...
        live.curve.set_data(x, y)                          # in the render
        png = live.png()

    The changing artists are Matplotlib's ``animated`` artists: a full draw skips them, and they
    are drawn over the kept background by zorder (in the order they were marked when equal). A
    changing image or patch that reaches its axes' frame would hide it: mark the frame as changing
    too (``live.changes(list(ax.spines.values()))``). Whatever an update changes
    must be marked (a title that names the slider's value, a marker, an image); axis limits and
    ticks belong to the background, so a render that changes them asks for a ``new_background``.
    The crop box is found once, on the first picture, with the changing artists drawn.
    """

    def __init__(self, figure):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        self.figure = figure
        self.canvas = FigureCanvasAgg(figure)
        self.changing: list = []
        self.on_top_artists: list = []
        self._background = None
        self._backgrounds = {}  # key -> (background, top layer) drawn for it, most recent last
        self._top = None
        self._box = None
        self._texts = {}       # _text_key -> the text's pixels as a _layer, most recently used last
        self._scratch = None   # a transparent canvas to draw one text on
        self.background_key = None
        self.full_draws = 0
        self._ahead = None     # (keys, set_background) asked for by draw_ahead, not drawn yet
        self._ahead_asked = False

    @staticmethod
    def _mark(artists, layer: list):
        """Take ``artists`` (one, or a list of them: what ``ax.plot`` returns) out of the background into ``layer``."""
        for artist in artists if isinstance(artists, (list, tuple)) else [artists]:
            artist.set_animated(True)
            layer.append(artist)
        return artists

    def changes(self, artists):
        """Mark an artist, or a list of them (what ``ax.plot`` returns), as redrawn at every update."""
        return self._mark(artists, self.changing)

    def on_top(self, artists):
        """Mark a static artist, or a list of them, drawn over the changing ones (a legend over the curves):
        drawn with the background into a transparent layer kept as pixels, laid over every picture. A
        legend costs 10-15 ms to draw, laying its pixels over a picture a fraction of a ms. Its position
        must not depend on the changing artists (not ``loc="best"``); a render that changes it asks for a
        ``new_background``."""
        return self._mark(artists, self.on_top_artists)

    def new_background(self, key) -> bool:
        """Whether the background must change to show ``key`` (what it depends on: a control's value,
        the student's functions that computed it); if so the caller sets the background's artists,
        limits and labels for ``key``. The next picture draws the whole figure, unless a background
        drawn for ``key`` is kept (the last KEPT_BACKGROUNDS are): then its pixels are reused."""
        if self._background is not None and self.background_key == key:
            return False
        self.background_key = key
        try:
            self._background, self._top = self._backgrounds.get(key, (None, None))
        except TypeError:  # an unhashable key: never kept
            self._background = None
        if self._background is not None:
            _keep(self._backgrounds, key, (self._background, self._top), KEPT_BACKGROUNDS)
        return True

    def draw_ahead(self, keys, set_background) -> None:
        """Ask for the background of each of ``keys`` to be drawn and kept before a move shows it
        (``set_background(key)`` sets the figure for one: limits, labels, curves; ``keys`` in the render's
        own ``new_background`` keys). Nothing is drawn now: the explorer calls ``draw_pending`` once its
        picture is sent, when the kernel is idle, so the first picture does not wait for them and a later
        move to any of them draws nothing whole. For a render whose few backgrounds are known in advance
        (fewer than KEPT_BACKGROUNDS); the first call per figure counts."""
        if not self._ahead_asked:
            self._ahead_asked = True
            self._ahead = (list(keys), set_background)

    @property
    def pending(self) -> bool:
        """Whether backgrounds asked for by ``draw_ahead`` wait to be drawn."""
        return self._ahead is not None

    def draw_pending(self, limit: int | None = None) -> bool:
        """Draw and keep up to ``limit`` (all by default) of the backgrounds asked for by ``draw_ahead``,
        then set the figure back to the background it had; whether more wait. A ``set_background`` that
        raises (the student's function it calls) ends the drawing: a move to that key shows the error."""
        if self._ahead is None:
            return False
        keys, set_background = self._ahead
        shown, drawn = self.background_key, 0
        try:
            while keys and (limit is None or drawn < limit):
                key = keys.pop(0)
                if self.new_background(key) and self._background is None:
                    set_background(key)
                    self._draw_background()
                    drawn += 1
        except Exception:  # noqa: BLE001 - the student's code: its error is shown by the move that needs it
            keys.clear()
        finally:
            if shown is not None and self.background_key != shown and self.new_background(shown):
                set_background(shown)
                if self._background is None:
                    self._draw_background()
        if not keys:
            self._ahead = None
        return self._ahead is not None

    def _transparent(self):
        """A transparent canvas of the figure's size (one, cleared for each use)."""
        from matplotlib.backends.backend_agg import RendererAgg

        size = tuple(self.canvas.get_renderer().get_canvas_width_height())  # as the canvas has it: not rounded
        if self._scratch is None or tuple(self._scratch.get_canvas_width_height()) != size:
            self._scratch = RendererAgg(*size, self.figure.dpi)  # text is placed from the top: the same height
        self._scratch.clear()
        return self._scratch

    def _top_layer(self):
        """The on-top artists drawn alone on a transparent canvas, as a ``_layer``."""
        if not self.on_top_artists:
            return None
        renderer = self._transparent()
        for artist in self.on_top_artists:
            if artist.get_visible():
                artist.draw(renderer)
        return _layer(np.asarray(renderer.buffer_rgba()))

    def _draw_text(self, artist, key, pixels) -> None:
        """A changing text laid over the picture: drawn alone on a transparent canvas the first time it
        is shown (what it shows, where, how), its pixels kept and laid over at every later update.
        Drawing a text costs about 1 ms (a figure's titles and labels add up to 5-10 ms), laying it
        over a few hundredths of that."""
        layer = self._texts[key] if key in self._texts else self._text_layer(artist)
        _keep(self._texts, key, layer, KEPT_TEXTS)
        _lay(layer, pixels)

    def _text_layer(self, artist):
        """A text drawn alone on the transparent canvas, as a ``_layer``. Its pixels are searched within
        its extent and a margin of one em (a box around it), and in the whole canvas when something is
        drawn on the margin's edge (asking a box's path for its extent costs 2 ms)."""
        scratch = self._transparent()
        artist.draw(scratch)
        rgba = np.asarray(scratch.buffer_rgba())
        extent, margin = artist.get_window_extent(scratch), 3 + artist.get_fontsize() * self.figure.dpi / 72
        height, width = rgba.shape[:2]
        top, bottom = max(int(height - extent.y1 - margin), 0), min(int(height - extent.y0 + margin), height)
        left, right = max(int(extent.x0 - margin), 0), min(int(extent.x1 + margin), width)
        layer = _layer(rgba, (slice(top, bottom), slice(left, right)))
        if layer is not None:
            rows, cols = layer[0]
            if ((rows.start == top > 0) or (rows.stop == bottom < height)
                    or (cols.start == left > 0) or (cols.stop == right < width)):
                return _layer(rgba)
        return layer

    def _draw_background(self) -> None:
        """Draw the figure without its changing artists and keep its pixels (and the top layer's) for
        ``background_key``; the canvas then holds the background."""
        self.canvas.draw()
        self._background = self.canvas.copy_from_bbox(self.figure.bbox)
        self._top = self._top_layer()
        self.full_draws += 1
        _keep(self._backgrounds, self.background_key, (self._background, self._top), KEPT_BACKGROUNDS)

    def pixels(self) -> np.ndarray:
        """The figure's RGBA pixels: the background (drawn now if not kept), the changing artists, the top layer."""
        if self._background is None:
            self._draw_background()
        else:
            self.canvas.restore_region(self._background)
        renderer = self.canvas.get_renderer()
        pixels = np.asarray(self.canvas.buffer_rgba())  # the renderer's own memory: Agg draws over what is laid here
        for axes in {id(a.axes): a.axes for a in self.changing if getattr(a, "axes", None) is not None}.values():
            axes.apply_aspect()  # as a whole draw would: an image of another shape resizes an "equal" box
        for artist in sorted(self.changing, key=lambda a: a.get_zorder()):  # stable: ties keep their order
            if artist.get_visible() and artist.figure is not None:
                key = _text_key(artist)
                if key is None:
                    artist.draw(renderer)
                elif key:
                    self._draw_text(artist, key, pixels)
        _lay(self._top, pixels)
        return pixels

    def png(self) -> bytes:
        rgba = self.pixels()
        if self._box is None:  # what is drawn beyond the figure's edges is not shown: keep within them
            self._box = _content_box(rgba)
        top, bottom, left, right = self._box
        return _png(rgba[top:bottom, left:right])


def kept_figure(cache, build, key=None) -> LiveFigure:
    """The explorer's live figure: ``build()`` the first time (every time when ``cache`` is ``None``),
    and again when ``key`` changes (for figures whose very artists depend on it, e.g. one text per
    node of a graph the student's code built)."""
    if cache is None:
        return _built(build)
    if cache.figure is None or cache.figure_key != key:
        cache.figure, cache.figure_key = _built(build), key
    return cache.figure


# Matplotlib's line dashes, one per colour of its default cycle: with them, the lines a widget draws in
# the default colours differ in their dashes too, so that no line is told apart by its colour alone.
DASHES = ("-", "--", "-.", ":", (0, (6, 2, 1, 2, 1, 2)), (0, (1, 3)), (0, (8, 3)), (0, (3, 1, 1, 1)),
          (0, (10, 2, 2, 2)), (0, (2, 2)))


def _built(build):
    """``build()`` with every axes it makes cycling through colours *and* dashes (``DASHES``): a line
    given a colour but no style takes the next dash. Lines with a style of their own keep it."""
    import matplotlib as mpl
    from cycler import cycler

    colors = mpl.rcParams["axes.prop_cycle"].by_key().get("color") or ["C0"]
    styles = [DASHES[i % len(DASHES)] for i in range(len(colors))]
    with mpl.rc_context({"axes.prop_cycle": cycler(color=colors) + cycler(linestyle=styles)}):
        return build()


def figure_of(picture):
    """The Matplotlib figure of what a render returned (a ``Figure``, a ``LiveFigure`` or ``None``)."""
    return picture.figure if isinstance(picture, LiveFigure) else picture


def _plain(text: str) -> str:
    """A Matplotlib text as words: mathtext's $...$ and backslashes dropped, whitespace made one space."""
    return " ".join(str(text).replace("$", "").replace("\\", "").split())


def describe_figure(figure) -> str:
    """What a figure shows, in words, for a picture's text alternative: each plot's title, its axes'
    labels and the names in its legend (how the marks are told apart, whatever their colour)."""
    parts = []
    for ax in getattr(figure, "axes", []):
        if not ax.get_visible():
            continue
        title = next((_plain(ax.get_title(loc)) for loc in ("center", "left", "right") if ax.get_title(loc)), "")
        axes = [f"{name} {_plain(label)}" for name, label in (("x:", ax.get_xlabel()), ("y:", ax.get_ylabel()))
                if label.strip()]
        legend = ax.get_legend()
        names = [_plain(t.get_text()) for t in legend.get_texts()] if legend is not None else []
        text = title or "a plot"
        if axes:
            text += f" ({', '.join(axes)})"
        if names:
            text += f", showing {', '.join(n for n in names if n)}"
        parts.append(text)
    suptitle = getattr(figure, "_suptitle", None)
    head = [_plain(suptitle.get_text())] if suptitle is not None and suptitle.get_text() else []
    return "; ".join(head + parts)


def picture_png(picture, memo: dict | None = None) -> bytes:
    """The PNG of what a render returned: a ``LiveFigure`` in layers, a plain figure whole (``memo``:
    see ``figure_png``)."""
    return picture.png() if isinstance(picture, LiveFigure) else figure_png(picture, memo)


def round_limits(low: float, high: float, steps: int = 4) -> tuple[float, float]:
    """Limits holding [low, high], snapped outward to a round step (1, 2 or 5 times a power of ten, about
    ``steps`` of them across): an axis that keeps its limits, hence the background, while its data move a little."""
    raw = max(float(high) - float(low), 1e-12) / steps
    power = 10.0 ** np.floor(np.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw * (1 - 1e-9))
    return float(np.floor(low / step) * step), float(np.ceil(high / step) * step)


def decade_limits(values, block: int = 1) -> tuple[float, float]:
    """Limits of a log axis holding the positive ``values``: whole blocks of ``block`` decades."""
    values = np.asarray(values, dtype=float)
    logs = np.log10(values[np.isfinite(values) & (values > 0)])
    if logs.size == 0:
        return 1.0, 10.0 ** block
    low, high = block * np.floor(logs.min() / block), block * np.ceil((logs.max() + 1e-9) / block)
    return float(10.0 ** low), float(10.0 ** high)


def plain_log_axis(axis, ticks) -> None:
    """A log axis with fixed ``ticks`` labelled as plain text (1e-4, 1, 1e2) and no minor ticks:
    laying out mathtext labels is the slow part of drawing a log axis."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    def label(value, _=None) -> str:
        return "1" if value == 1 else f"{value:.0e}".replace("e-0", "e-").replace("e+0", "e").replace("e+", "e")

    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FuncFormatter(label))
    axis.set_minor_locator(NullLocator())
