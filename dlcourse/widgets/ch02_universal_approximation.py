"""Widgets of chapter 2 (universal approximation): ReLU interpolants, activation regions, sawtooth.

Each widget is a pure ``render_*`` function returning ``(figure, readout)`` and a factory that
wires it to ipywidgets controls through ``Explorer`` with the student's functions.
"""
from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.colors import hsv_to_rgb
from matplotlib.figure import Figure

from .explorer import Explorer, cached, frozen, readout
from .picture import LiveFigure, kept_figure

__all__ = [
    "TARGETS", "render_interpolant", "interpolant_explorer",
    "random_relu_layers", "stacked_layer", "render_regions", "regions_explorer",
    "tent", "sawtooth", "grid_piece_count", "telgarsky_l1_bound", "best_shallow_fit",
    "render_sawtooth", "sawtooth_explorer",
]


# ------------------------------------------------------------------ the interpolant of a target

def _bump(x):
    x = np.asarray(x, dtype=float)
    out = np.zeros_like(x)
    inside = np.abs(x) < 1
    out[inside] = np.exp(1.0 - 1.0 / (1.0 - x[inside] ** 2))
    return out


TARGETS = {
    "sin(x)": (np.sin, -np.pi, np.pi),
    "|x|": (np.abs, -1.0, 1.0),
    "bump exp(1 - 1/(1-x²))": (_bump, -1.5, 1.5),
    "tanh(8x) (steep)": (lambda x: np.tanh(8 * np.asarray(x, dtype=float)), -1.0, 1.0),
    "sqrt|x| (not Lipschitz)": (lambda x: np.sqrt(np.abs(x)), -1.0, 1.0),
}
MAX_WIDTH = 40
GRID_POINTS = 801  # where the network and the target are compared (the sup error) and drawn


def _grid(target):
    _, a, b = TARGETS[target]
    return np.linspace(a, b, GRID_POINTS)


def _interpolant_error(target, width, relu_interpolant, mlp_forward, grid):
    f, a, b = TARGETS[target]
    knots = np.linspace(a, b, width + 1)
    weights = relu_interpolant(knots, f(knots))
    y = np.asarray(mlp_forward(grid[:, None], *weights), dtype=float).reshape(len(grid))
    return weights, y, float(np.max(np.abs(y - f(grid))))


def _sup_error_curve(target, relu_interpolant, mlp_forward, grid):
    """Sup error of the interpolant for every width 1..MAX_WIDTH (independent of the width slider)."""
    return frozen(np.array([_interpolant_error(target, int(w), relu_interpolant, mlp_forward, grid)[2]
                            for w in range(1, MAX_WIDTH + 1)], dtype=float))


def _hinge_polyline(W1, b1, W2, a, b):
    """The hinge units c_j relu(w_j x + b_j) on [a, b] as one NaN-separated polyline: each unit is
    affine on either side of its hinge -b_j / w_j, so its end points and hinge draw it exactly."""
    xs, ys = [], []
    for w, c, v in zip(W1[:, 0], b1, W2[0]):
        pts = [a, b]
        if w != 0 and a < -c / w < b:
            pts.insert(1, -c / w)
        pts = np.array(pts)
        xs.append(np.append(pts, np.nan))
        ys.append(np.append(v * np.maximum(w * pts + c, 0.0), np.nan))
    if not xs:
        return np.array([]), np.array([])
    return np.concatenate(xs), np.concatenate(ys)


def _interpolant_figure() -> LiveFigure:
    """The interpolant's axes (left) and the sup error against width (right), without data."""
    live = LiveFigure(Figure(figsize=(9, 3.3)))
    ax, ax_err = live.figure.subplots(1, 2, gridspec_kw={"width_ratios": [1.6, 1]})
    live.figure.subplots_adjust(left=0.045, right=0.985, bottom=0.14, top=0.92, wspace=0.13)
    live.ax, live.ax_err = ax, ax_err
    live.units, = live.changes(ax.plot([], [], color="tab:gray", lw=0.7, ls="--", alpha=0.6,
                                       label="hinge units cᵢ(x − xᵢ)₊"))
    live.target, = ax.plot([], [], color="black", lw=2, alpha=0.35, label="target")
    live.network, = live.changes(ax.plot([], [], color="tab:blue", lw=1.5, label="network"))
    live.knots, = live.changes(ax.plot([], [], "o", color="tab:blue", ms=3))
    live.title = live.changes(ax.set_title(" ", fontsize=9))
    ax.legend(fontsize=7, loc="lower right")
    ax.tick_params(labelsize=7)
    ax_err.set_xscale("log")
    ax_err.set_yscale("log")
    live.errors, = ax_err.plot([], [], ".-", color="tab:blue", lw=1, ms=3)
    live.square, = ax_err.plot([], [], ":", color="gray", lw=1, label="∝ 1/m²")
    live.root, = ax_err.plot([], [], "--", color="gray", lw=0.8, label="∝ 1/√m")
    live.marker, = live.changes(ax_err.plot([], [], "o", color="tab:red", ms=6))
    ax_err.set_xlabel("width m (knots - 1)", fontsize=8)
    ax_err.set_title("sup error vs width", fontsize=9)
    ax_err.legend(fontsize=7)
    ax_err.tick_params(labelsize=7)
    ax_err.minorticks_off()
    return live


def _interpolant_background(live, target, errors, grid) -> None:
    """The target's curve and limits, and its sup error curve with the 1/m² and 1/√m guides."""
    f, a, b = TARGETS[target]
    fy = f(grid)
    lo, hi = fy.min(), fy.max()
    pad = 0.25 * (hi - lo + 1e-12)
    live.target.set_data(grid, fy)
    live.ax.set_ylim(lo - pad, hi + pad)
    live.ax.set_xlim(a, b)
    widths = np.arange(1, MAX_WIDTH + 1)
    positive = errors > 1e-14
    live.errors.set_data(widths[positive], errors[positive])
    m_last = widths[positive][-1] if positive.any() else MAX_WIDTH
    anchor = errors[positive][-1] if positive.any() else 1e-12
    live.square.set_data(widths, anchor * (m_last / widths) ** 2)
    live.root.set_data(widths, anchor * np.sqrt(m_last / widths))
    live.ax_err.set_xlim(0.8, MAX_WIDTH * 1.25)
    live.ax_err.set_ylim(max(errors[positive].min() if positive.any() else 1e-6, 1e-8) / 3,
                         errors.max() * 3 + 1e-12)


def render_interpolant(target="sin(x)", width=6, show_units=True, *, relu_interpolant, mlp_forward,
                       cache=None):
    """The ReLU interpolant of ``target`` on ``width + 1`` equally spaced knots, its hinge units and
    the sup error against width (right). The error curve depends on the target and the student's
    functions only: with a ``RenderCache`` it is computed once per target, and drawn once with the
    figure's background; a width or a checkbox redraws only the network and its markers. The other
    targets' backgrounds are drawn ahead, once the first picture is out."""
    f, a, b = TARGETS[target]
    grid = _grid(target)
    weights, y, err = _interpolant_error(target, width, relu_interpolant, mlp_forward, grid)
    W1, b1, W2, b2 = (np.asarray(w, dtype=float) for w in weights)
    m = W1.shape[0]

    def set_background(key):  # key: ("sup error curve", target, the student's two functions)
        name, grid_of = key[1], _grid(key[1])
        errors = cached(cache, key, lambda: _sup_error_curve(name, relu_interpolant, mlp_forward, grid_of))
        _interpolant_background(live, name, errors, grid_of)

    keys = {name: ("sup error curve", name, relu_interpolant, mlp_forward) for name in TARGETS}
    live = kept_figure(cache, _interpolant_figure)
    if cache is not None:  # the other targets' backgrounds: drawn once the first picture is out
        live.draw_ahead([keys[name] for name in TARGETS if name != target], set_background)
    if live.new_background(keys[target]):
        set_background(keys[target])

    live.units.set_visible(bool(show_units and m))
    if show_units and m:
        live.units.set_data(*_hinge_polyline(W1, b1, W2, a, b))
    live.network.set_data(grid, y)
    knots = np.linspace(a, b, width + 1)
    live.knots.set_data(knots, f(knots))
    live.title.set_text(f"{target}: interpolant on {width + 1} knots, {m} units")
    live.marker.set_visible(err > 1e-14)
    live.marker.set_data([width], [err])
    text = readout(f"<b>{target}</b> on [{a:.3g}, {b:.3g}], width {width}: the network has m = {m} hidden units; "
                   f"sup error = {err:.3g}",
                   target=target, start=float(a), end=float(b), width=int(width), units=int(m), sup_error=err)
    return live, text


def interpolant_explorer(*, relu_interpolant, mlp_forward):
    controls = {
        "target": widgets.Dropdown(options=list(TARGETS), value="sin(x)", description="target"),
        "width": widgets.IntSlider(6, min=1, max=MAX_WIDTH, step=1, description="width m",
                                   continuous_update=False),
        "show_units": widgets.Checkbox(True, description="show hinge units"),
    }
    return Explorer(render_interpolant, controls,
                    needs={"relu_interpolant": relu_interpolant, "mlp_forward": mlp_forward},
                    title="A ReLU network interpolating a target", height="360px")


# ------------------------------------------------------------------ regions of a ReLU network in the plane

def random_relu_layers(units, depth, seed, d_in=2):
    """``depth`` random layers ``(W, b)`` of ``units`` ReLU units each, input dimension ``d_in``."""
    rng = np.random.default_rng(seed)
    # first layer: unit normals, lines at distance <= 2 from the origin (most crossings in view)
    W = rng.standard_normal((units, d_in))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    layers = [(W, rng.uniform(-2.0, 2.0, units))]
    for _ in range(depth - 1):
        layers.append((rng.standard_normal((units, units)) / np.sqrt(units), rng.standard_normal(units) * 0.5))
    return layers


def stacked_layer(layers, points):
    """One block-diagonal "layer" whose activation pattern on the stacked layer inputs is the
    concatenated pattern of all layers: ``(W_block, b_block, stacked_inputs, pre_activations)``."""
    inputs, pres, h = [], [], np.asarray(points, dtype=float)
    for W, b in layers:
        inputs.append(h)
        pre = h @ W.T + b
        pres.append(pre)
        h = np.maximum(pre, 0.0)
    rows = sum(W.shape[0] for W, _ in layers)
    cols = sum(W.shape[1] for W, _ in layers)
    W_block = np.zeros((rows, cols))
    r = c = 0
    for W, _ in layers:
        W_block[r:r + W.shape[0], c:c + W.shape[1]] = W
        r, c = r + W.shape[0], c + W.shape[1]
    b_block = np.concatenate([b for _, b in layers])
    return W_block, b_block, np.hstack(inputs), np.hstack(pres)


# grid points per side: the student's activation_patterns sees 51² points. Its np.unique(rows, axis=0) costs
# 90-170 ms on 121² points for 2-4 layers of 8-12 units, 19-26 ms on 61², 13-16 ms on 51², which sees
# 80-95 % of the regions the finer grid sees (one layer of 5 units: the same count, or 1 fewer)
REGIONS_RESOLUTION = 51


def _pattern_ids(bits):
    """An integer id per row of the boolean matrix ``bits`` (P, m), equal ids for equal rows."""
    packed = np.packbits(bits, axis=1)
    if packed.shape[1] <= 8:  # up to 64 units: one uint64 per row, a fast 1-D unique
        keys = np.zeros((len(packed), 8), dtype=np.uint8)
        keys[:, :packed.shape[1]] = packed
        _, ids = np.unique(keys.view(np.uint64)[:, 0], return_inverse=True)
    else:
        _, ids = np.unique(packed, axis=0, return_inverse=True)
    return ids.ravel()


def _regions_picture(layers, units, depth, seed, activation_patterns, resolution, box):
    """(count, image): the student's pattern count on the grid and the grid coloured by pattern."""
    g = np.linspace(-box, box, resolution)
    xx, yy = np.meshgrid(g, g)
    points = np.column_stack([xx.ravel(), yy.ravel()])
    W_block, b_block, stacked, pre = stacked_layer(layers, points)
    count = int(activation_patterns(W_block, b_block, stacked))
    # colours: one per pattern (computed here only for the picture)
    ids = _pattern_ids(pre > 0)
    n_ids = ids.max() + 1
    hues = (np.arange(n_ids) * 0.61803398875) % 1.0
    rng = np.random.default_rng(1000 + seed)
    sat = rng.uniform(0.35, 0.75, n_ids)
    palette = hsv_to_rgb(np.column_stack([hues, sat, np.full(n_ids, 0.95)]))
    image = np.round(255 * palette[ids]).astype(np.uint8).reshape(resolution, resolution, 3)  # small to keep
    return count, frozen(image)


def _regions_figure(box) -> LiveFigure:
    live = LiveFigure(Figure(figsize=(4.2, 3.6)))
    ax = live.figure.add_axes([0.08, 0.07, 0.89, 0.86])
    live.image = live.changes(ax.imshow(np.zeros((2, 2, 3), dtype=np.uint8), origin="lower",
                                        extent=(-box, box, -box, box), interpolation="nearest"))
    live.lines, = live.changes(ax.plot([], [], color="black", lw=0.6))
    live.changes(list(ax.spines.values()))  # the frame, over the picture
    ax.set_xlim(-box, box)
    ax.set_ylim(-box, box)
    ax.set_aspect("equal")
    ax.tick_params(labelsize=7)
    live.title = live.changes(ax.set_title(" ", fontsize=8))
    return live


def render_regions(units=5, depth=1, seed=0, *, activation_patterns, zaslavsky_bound,
                   resolution=REGIONS_RESOLUTION, box=3.0, cache=None):
    """The square [-box, box]^2 coloured by the activation pattern of a random ReLU network.

    With a ``RenderCache``, the count and picture of a (units, depth, seed) already shown are reused
    and the figure is built once, then updated in place."""
    layers = random_relu_layers(units, depth, seed)
    count, image = cached(
        cache, ("regions", units, depth, seed, resolution, box, activation_patterns),
        lambda: _regions_picture(layers, units, depth, seed, activation_patterns, resolution, box))
    one_layer = int(zaslavsky_bound(units, 2))
    all_units = int(zaslavsky_bound(units * depth, 2))

    live = kept_figure(cache, lambda: _regions_figure(box), key=box)
    live.new_background(box)
    live.image.set_data(image)
    W, b = layers[0]
    lx, ly = [], []
    g = np.array([-box, box])
    for j in range(units):  # the first layer's lines w . x + b = 0, as one polyline
        w1, w2 = W[j]
        if abs(w2) > abs(w1):
            lx += [g, [np.nan]]
            ly += [-(b[j] + w1 * g) / w2, [np.nan]]
        else:
            lx += [-(b[j] + w2 * g) / w1, [np.nan]]
            ly += [g, [np.nan]]
    live.lines.set_data(np.concatenate(lx), np.concatenate(ly))
    live.title.set_text(f"{depth} layer(s) × {units} units: {count} regions seen (black: layer-1 lines)")

    markup = (f"{count} activation regions seen in [-{box:g}, {box:g}]² "
              f"(depth {depth} × {units} units, seed {seed}). "
              f"Zaslavsky's bound for ONE layer of {units} units in R²: {one_layer}")
    shown = dict(regions=count, box=box, depth=depth, units=units, seed=seed, one_layer_bound=one_layer)
    if depth > 1:
        above = "above it (it bounds one layer only)" if count > one_layer else "not above it here"
        within = ("within" if count <= all_units else "above")
        markup += (f", {above}; for one layer holding all {units * depth} units: {all_units}, "
                   f"and the count is {within} that, as the expected-count result for random "
                   f"networks (Hanin & Rolnick 2019) predicts")
        shown.update(all_units=units * depth, all_units_bound=all_units)
    else:
        markup += " (a depth-1 count can never exceed it; the window or grid may miss a few)"
    return live, readout(markup, **shown)


def regions_explorer(*, activation_patterns, zaslavsky_bound):
    controls = {
        "units": widgets.IntSlider(5, min=1, max=12, step=1, description="units", continuous_update=False),
        "depth": widgets.IntSlider(1, min=1, max=4, step=1, description="depth", continuous_update=False),
        "seed": widgets.IntSlider(0, min=0, max=20, step=1, description="seed", continuous_update=False),
    }
    return Explorer(render_regions, controls,
                    needs={"activation_patterns": activation_patterns, "zaslavsky_bound": zaslavsky_bound},
                    title="Linear regions of a random ReLU network in the plane", height="390px")


# ------------------------------------------------------------------ Telgarsky's sawtooth

MAX_SAWTOOTH_DEPTH = 6
MAX_SHALLOW_WIDTH = 80


def tent(x):
    """The tent map 2 relu(x) - 4 relu(x - 1/2): [0, 1] onto [0, 1] twice."""
    return 2.0 * np.maximum(x, 0.0) - 4.0 * np.maximum(x - 0.5, 0.0)


def sawtooth(x, depth):
    for _ in range(depth):
        x = tent(x)
    return x


def grid_piece_count(y, x):
    """Pieces of a piecewise-linear function sampled on a grid that contains all its breakpoints."""
    s = np.diff(y) / np.diff(x)
    return 1 + int(np.sum(np.abs(np.diff(s)) > 1e-6 * (1.0 + np.abs(s).max())))


def telgarsky_l1_bound(depth, width):
    """Lower bound on int_0^1 |f - tau^depth| for every one-hidden-layer network f of ``width`` units
    (at most width + 1 pieces): (2^L - p - 2) / 2^(L+3) with p = width + 1, and 0 when that is negative."""
    return max(0.0, (2.0 ** depth - (width + 1) - 2) / 2.0 ** (depth + 3))


def _fit_grid(depth):
    return np.linspace(0.0, 1.0, 2 ** (depth + 3) + 1)


def _hinge_fit(x, y, hinges):
    """Least-squares fit to ``y`` on the grid ``x`` (in [0, 1]) of ``b + a x + sum_j c_j relu(x - t_j)``,
    sorted hinges t_j in (0, 1). Those are the continuous piecewise-linear functions with knots
    0, t_j, 1, solved for in their hat-function basis: each grid point meets two hats, so the normal
    equations are tridiagonal and cheap (about 0.1 ms; a dense ``lstsq`` of the ReLU basis takes up to 3 ms).
    When some knot interval holds fewer than two grid points the hats may be dependent on the grid:
    then ``lstsq`` of the hat basis gives the least-squares fit."""
    knots = np.concatenate([[0.0], hinges, [1.0]])
    n = len(knots)
    i = np.minimum(np.searchsorted(knots, x, side="right") - 1, n - 2)  # x in [knot i, knot i+1)
    w = (x - knots[i]) / (knots[i + 1] - knots[i])
    v = 1.0 - w                                                          # hat i is v there, hat i+1 is w
    if np.bincount(i, minlength=n - 1).min() >= 2:  # two points in each interval: the hats are independent
        gram = np.diag(np.bincount(i, v * v, n) + np.bincount(i + 1, w * w, n))
        off = np.bincount(i, v * w, n - 1)
        gram[np.arange(n - 1), np.arange(1, n)] = off
        gram[np.arange(1, n), np.arange(n - 1)] = off
        coef = np.linalg.solve(gram, np.bincount(i, v * y, n) + np.bincount(i + 1, w * y, n))
    else:
        basis = np.zeros((len(x), n))
        basis[np.arange(len(x)), i] = v
        basis[np.arange(len(x)), i + 1] += w
        coef = np.linalg.lstsq(basis, y, rcond=None)[0]
    return v * coef[i] + w * coef[i + 1]


def best_shallow_fit(depth, width, target=None):
    """Least-squares fits of one-hidden-layer networks with ``width`` units to ``target`` (tau^depth
    sampled on ``_fit_grid(depth)`` by default): ``b + a x + sum_j c_j relu(x - t_j)`` with
    ``width - 1`` hinges t_j (the linear term is one more unit, e.g. relu(x + 1) on [0, 1]), hinges on a
    uniform grid or on an evenly spread subset of the sawtooth's kinks, whichever has the smaller L1
    error (each fit by ``_hinge_fit``). Returns ``(fit values on the grid, L1 error)``; the L1 error is
    a grid average."""
    x = _fit_grid(depth)
    y = sawtooth(x, depth) if target is None else np.asarray(target, dtype=float)
    kinks = np.arange(1, 2 ** depth) / 2 ** depth
    k = int(width) - 1
    candidates = [np.arange(1, k + 1) / (k + 1)]
    if k > 0:
        candidates.append(kinks[np.unique(np.round(np.linspace(0, len(kinks) - 1, min(k, len(kinks)))).astype(int))])
    best = None
    for hinges in candidates:
        fit = _hinge_fit(x, y, hinges[:k])
        err = float(np.mean(np.abs(fit - y)))
        if best is None or err < best[1]:
            best = (fit, err)
    return best


FIT_WIDTHS = np.array([1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 15, 16, 20, 24, 28, 31, 32, 40, 48, 56, 63, 64, 72, 80])


def _sawtooth_data(depth, sawtooth_network, deep_forward, relu_interpolant, count_linear_pieces):
    """What the widget shows for one depth, all computed with the student's functions (fits aside)."""
    layers = sawtooth_network(int(depth))
    units = int(sum(np.shape(W)[0] for W, _ in layers[:-1]))
    x = _fit_grid(depth)
    deep = np.asarray(deep_forward(x[:, None], layers), dtype=float).reshape(len(x))
    coarse = np.linspace(0.0, 1.0, 2 ** (depth + 1) + 1)          # contains every breakpoint of tau^L
    values = deep[::(len(x) - 1) // (len(coarse) - 1)]
    pieces = int(count_linear_pieces(*relu_interpolant(coarse, values), 0.0, 1.0))
    widths = FIT_WIDTHS
    errors = np.array([best_shallow_fit(depth, m, deep)[1] for m in widths])
    out = dict(layers=len(layers), units=units, x=x, deep=deep, pieces=pieces, widths=widths, errors=errors,
               bounds=np.array([telgarsky_l1_bound(depth, m) for m in widths]))
    return frozen(out)


def _sawtooth_figure() -> LiveFigure:
    live = LiveFigure(Figure(figsize=(9.0, 3.0)))
    fig = live.figure
    ax = fig.add_axes([0.045, 0.15, 0.5, 0.74])
    ax_err = fig.add_axes([0.63, 0.15, 0.355, 0.74])
    live.deep, = live.changes(ax.plot([], [], color="tab:blue", lw=1.3, label="deep: your sawtooth_network"))
    live.fit, = live.changes(ax.plot([], [], color="tab:orange", lw=1.2, ls="--", label="best shallow fit found"))
    ax.set(xlim=(0, 1), ylim=(-0.1, 1.35))
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7, loc="upper center", ncol=2)  # background: above the curves (they stay below 1)
    live.title = live.changes(ax.set_title(" ", fontsize=9))
    ax_err.set_xscale("log")
    ax_err.set_yscale("log")
    live.curve, = live.changes(ax_err.plot([], [], ".-", color="tab:orange", lw=1, ms=4,
                                           label="best fit found (L¹ error)"))
    live.bound, = live.changes(ax_err.plot([], [], color="k", lw=1, label="lower bound, every width-m net"))
    live.marker, = live.changes(ax_err.plot([], [], "o", color="tab:red", ms=6))
    live.pieces_line = live.changes(ax_err.axvline(8, color="tab:blue", ls=":", lw=1, label="m = 2^L"))
    ax_err.set_xlim(0.8, MAX_SHALLOW_WIDTH * 1.25)
    ax_err.set_ylim(1e-3, 0.4)
    ax_err.minorticks_off()
    ax_err.set_xlabel("shallow width m (units)", fontsize=8)
    ax_err.tick_params(labelsize=7)
    ax_err.set_title("∫|f − τ^L| of one hidden layer vs m", fontsize=9)
    live.on_top(ax_err.legend(fontsize=6.5, loc="lower left"))  # over the curves
    return live


def render_sawtooth(depth=3, width=4, *, sawtooth_network, deep_forward, relu_interpolant, count_linear_pieces,
                    cache=None):
    """tau^depth from the student's ``sawtooth_network`` and ``deep_forward``, its pieces counted with
    ``relu_interpolant`` and ``count_linear_pieces``, and the best one-hidden-layer fit of ``width`` units
    we find, with its L1 error against width and the lower bound that holds for every such network."""
    depth, width = int(depth), int(width)
    needs = (sawtooth_network, deep_forward, relu_interpolant, count_linear_pieces)
    d = cached(cache, ("sawtooth", depth) + needs,
               lambda: _sawtooth_data(depth, sawtooth_network, deep_forward, relu_interpolant, count_linear_pieces))
    fit, err = cached(cache, ("fit", depth, width) + needs, lambda: best_shallow_fit(depth, width, d["deep"]))
    lower = telgarsky_l1_bound(depth, width)
    live = kept_figure(cache, _sawtooth_figure)
    live.new_background("axes")  # fixed limits: nothing in the background changes

    live.deep.set_data(d["x"], d["deep"])
    live.fit.set_data(d["x"], fit)
    live.title.set_text(f"τ composed {depth}× = {d['layers'] - 1} hidden layers, {d['units']} units: "
                        f"{d['pieces']} pieces; shallow fit, {width} units")
    positive = d["errors"] > 1e-12
    live.curve.set_data(d["widths"][positive], d["errors"][positive])
    shown = d["bounds"] > 0
    live.bound.set_data(d["widths"][shown], d["bounds"][shown])
    live.marker.set_data([width], [max(err, 1.1e-3)])
    live.pieces_line.set_xdata([2 ** depth, 2 ** depth])

    shown = dict(depth=depth, hidden_layers=d["layers"] - 1, units=d["units"], pieces=d["pieces"],
                 exact_width=2 ** depth, width=width, l1_error=err, lower_bound=lower)
    if err < 1e-9:
        verdict = f"exact (m ≥ 2^{depth} units represent it)"
        shown.update(outcome="exact")
    elif lower > 0:
        verdict = f"fails: L¹ error {err:.3f} ≥ {lower:.3f}, the lower bound for every {width}-unit network"
        shown.update(outcome="fails")
    else:
        verdict = (f"not exact, L¹ error {err:.3f} (exact needs m ≥ 2^{depth} = {2 ** depth}; "
                   f"the lower bound is 0 from m = {max(1, 2 ** depth - 3)} on)")
        shown.update(outcome="not exact", bound_zero_from=max(1, 2 ** depth - 3))
    text = readout(f"depth {depth}: your deep network has {d['layers'] - 1} hidden layers, {d['units']} units and "
                   f"{d['pieces']} pieces (count_linear_pieces; 2^{depth} = {2 ** depth}) · "
                   f"best one-hidden-layer fit with m = {width} units: {verdict}", **shown)
    return live, text


def sawtooth_explorer(*, sawtooth_network, deep_forward, relu_interpolant, count_linear_pieces):
    controls = {
        "depth": widgets.IntSlider(3, min=1, max=MAX_SAWTOOTH_DEPTH, step=1, description="depth L",
                                   continuous_update=False),
        "width": widgets.IntSlider(4, min=1, max=MAX_SHALLOW_WIDTH, step=1, description="shallow m",
                                   continuous_update=False),
    }
    return Explorer(render_sawtooth, controls,
                    needs={"sawtooth_network": sawtooth_network, "deep_forward": deep_forward,
                           "relu_interpolant": relu_interpolant, "count_linear_pieces": count_linear_pieces},
                    title="Depth doubles the pieces; one hidden layer cannot keep up", height="330px")
