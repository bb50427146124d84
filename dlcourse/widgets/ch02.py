"""Widgets of chapter 2 (universal approximation): ReLU interpolants, activation regions, sawtooth.

Each widget is a pure ``render_*`` function returning ``(figure, readout)`` and a factory that
wires it to ipywidgets controls through ``Explorer`` with the student's functions.
"""
from __future__ import annotations

import functools

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import hsv_to_rgb

from .explorer import Explorer, RenderCache, cached


def _frozen(array):
    array = np.asarray(array, dtype=float)
    array.flags.writeable = False
    return array


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


def _interpolant_error(target, width, relu_interpolant, mlp_forward, grid):
    f, a, b = TARGETS[target]
    knots = np.linspace(a, b, width + 1)
    weights = relu_interpolant(knots, f(knots))
    y = np.asarray(mlp_forward(grid[:, None], *weights), dtype=float).reshape(len(grid))
    return weights, y, float(np.max(np.abs(y - f(grid))))


def _sup_error_curve(target, relu_interpolant, mlp_forward, grid):
    """Sup error of the interpolant for every width 1..MAX_WIDTH (independent of the width slider)."""
    return _frozen([_interpolant_error(target, int(w), relu_interpolant, mlp_forward, grid)[2]
                    for w in range(1, MAX_WIDTH + 1)])


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


def render_interpolant(target="sin(x)", width=6, show_units=True, *, relu_interpolant, mlp_forward,
                       cache=None):
    """The ReLU interpolant of ``target`` on ``width + 1`` equally spaced knots, its hinge units and
    the sup error against width (right). The error curve depends on the target and the student's
    functions only: with a ``RenderCache`` it is computed once per target."""
    f, a, b = TARGETS[target]
    grid = np.linspace(a, b, 801)
    weights, y, err = _interpolant_error(target, width, relu_interpolant, mlp_forward, grid)
    W1, b1, W2, b2 = (np.asarray(w, dtype=float) for w in weights)
    m = W1.shape[0]
    widths = np.arange(1, MAX_WIDTH + 1)
    errors = cached(cache, ("sup error curve", target, len(grid), relu_interpolant, mlp_forward),
                     lambda: _sup_error_curve(target, relu_interpolant, mlp_forward, grid))

    fig, (ax, ax_err) = plt.subplots(1, 2, figsize=(9, 3.3), gridspec_kw={"width_ratios": [1.6, 1]})
    fig.subplots_adjust(left=0.045, right=0.985, bottom=0.14, top=0.92, wspace=0.13)  # tight_layout is slow
    fy = f(grid)
    lo, hi = fy.min(), fy.max()
    pad = 0.25 * (hi - lo + 1e-12)
    if show_units and m:
        ux, uy = _hinge_polyline(W1, b1, W2, a, b)
        ax.plot(ux, uy, color="tab:gray", lw=0.7, ls="--", alpha=0.6, label="hinge units cᵢ(x − xᵢ)₊")
    ax.plot(grid, fy, color="black", lw=2, alpha=0.35, label="target")
    ax.plot(grid, y, color="tab:blue", lw=1.5, label=f"network, {m} units")
    knots = np.linspace(a, b, width + 1)
    ax.plot(knots, f(knots), "o", color="tab:blue", ms=3)
    ax.set_ylim(lo - pad, hi + pad)
    ax.set_xlim(a, b)
    ax.set_title(f"{target}: interpolant on {width + 1} knots", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    ax.tick_params(labelsize=7)

    positive = errors > 1e-14
    ax_err.loglog(widths[positive], errors[positive], ".-", color="tab:blue", lw=1, ms=3)
    m_last = widths[positive][-1] if positive.any() else MAX_WIDTH
    anchor = errors[positive][-1] if positive.any() else 1e-12
    ax_err.loglog(widths, anchor * (m_last / widths) ** 2, ":", color="gray", lw=1, label="∝ 1/m²")
    ax_err.loglog(widths, anchor * np.sqrt(m_last / widths), "--", color="gray", lw=0.8,
                  label="∝ 1/√m")
    if err > 1e-14:
        ax_err.loglog([width], [err], "o", color="tab:red", ms=6)
    ax_err.set_xlabel("width m (knots - 1)", fontsize=8)
    ax_err.set_title("sup error vs width", fontsize=9)
    ax_err.set_ylim(max(errors[positive].min() if positive.any() else 1e-6, 1e-8) / 3, errors.max() * 3 + 1e-12)
    ax_err.legend(fontsize=7)
    ax_err.tick_params(labelsize=7)
    readout = (f"<b>{target}</b> on [{a:.3g}, {b:.3g}], width {width}: the network has m = {m} hidden units; "
               f"sup error = {err:.3g}")
    return fig, readout


def interpolant_explorer(relu_interpolant, mlp_forward):
    controls = {
        "target": widgets.Dropdown(options=list(TARGETS), value="sin(x)", description="target"),
        "width": widgets.IntSlider(6, min=1, max=MAX_WIDTH, step=1, description="width m",
                                   continuous_update=False),
        "show_units": widgets.Checkbox(True, description="show hinge units"),
    }
    return Explorer(functools.partial(render_interpolant, cache=RenderCache()), controls,
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


REGIONS_RESOLUTION = 121  # grid points per side: the student's activation_patterns sees 121² points


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
    image.flags.writeable = False
    return count, image


def render_regions(units=5, depth=1, seed=0, *, activation_patterns, zaslavsky_bound,
                   resolution=REGIONS_RESOLUTION, box=3.0, cache=None):
    """The square [-box, box]^2 coloured by the activation pattern of a random ReLU network.

    With a ``RenderCache``, the count and picture of a (units, depth, seed) already shown are reused."""
    layers = random_relu_layers(units, depth, seed)
    count, image = cached(
        cache, ("regions", units, depth, seed, resolution, box, activation_patterns),
        lambda: _regions_picture(layers, units, depth, seed, activation_patterns, resolution, box))
    one_layer = int(zaslavsky_bound(units, 2))
    all_units = int(zaslavsky_bound(units * depth, 2))

    fig, ax = plt.subplots(figsize=(4.2, 3.6))
    fig.subplots_adjust(left=0.08, right=0.97, bottom=0.07, top=0.93)  # tight_layout is slow
    ax.imshow(image, origin="lower", extent=(-box, box, -box, box), interpolation="nearest")
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
    ax.plot(np.concatenate(lx), np.concatenate(ly), color="black", lw=0.6)
    ax.set_xlim(-box, box)
    ax.set_ylim(-box, box)
    ax.set_aspect("equal")
    ax.tick_params(labelsize=7)
    ax.set_title(f"{depth} layer(s) × {units} units: {count} regions seen (black: layer-1 lines)", fontsize=8)

    readout = (f"{count} activation regions seen in [-{box:g}, {box:g}]² "
               f"(depth {depth} × {units} units, seed {seed}). "
               f"Zaslavsky's bound for ONE layer of {units} units in R²: {one_layer}")
    if depth > 1:
        verdict = "exceeded: the bound is for one layer only" if count > one_layer else "not exceeded here"
        readout += f" ({verdict}); one layer of all {units * depth} units: ≤ {all_units}"
    else:
        readout += " (a depth-1 count can never exceed it; the window or grid may miss a few)"
    return fig, readout


def regions_explorer(activation_patterns, zaslavsky_bound):
    controls = {
        "units": widgets.IntSlider(5, min=1, max=12, step=1, description="units", continuous_update=False),
        "depth": widgets.IntSlider(1, min=1, max=4, step=1, description="depth", continuous_update=False),
        "seed": widgets.IntSlider(0, min=0, max=20, step=1, description="seed", continuous_update=False),
    }
    return Explorer(functools.partial(render_regions, cache=RenderCache()), controls,
                    needs={"activation_patterns": activation_patterns, "zaslavsky_bound": zaslavsky_bound},
                    title="Linear regions of a random ReLU network in the plane", height="390px")


# ------------------------------------------------------------------ Telgarsky's sawtooth

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


def _sawtooth_data(depth, relu_interpolant, count_linear_pieces):
    x = np.linspace(0.0, 1.0, 2 ** (depth + 2) + 1)       # contains every dyadic breakpoint
    deep = sawtooth(x, depth)
    deep_pieces = grid_piece_count(deep, x)
    knots = np.linspace(0.0, 1.0, 2 ** depth + 1)
    values = (np.arange(2 ** depth + 1) % 2).astype(float)
    W1, b1, W2, b2 = (np.asarray(w, dtype=float) for w in relu_interpolant(knots, values))
    m = W1.shape[0]
    shallow_pieces = int(count_linear_pieces(W1, b1, W2, b2, 0.0, 1.0))
    fine = np.linspace(0.0, 1.0, 1201)
    shallow = (np.maximum(fine[:, None] * W1[:, 0] + b1, 0.0) @ W2[0]) + b2[0]
    for array in (x, deep, fine, shallow):
        array.flags.writeable = False
    return x, deep, deep_pieces, m, shallow_pieces, fine, shallow


def render_sawtooth(depth=3, *, relu_interpolant, count_linear_pieces, cache=None):
    """tau^depth computed by composition (2 units per layer) and its one-hidden-layer twin
    (with a ``RenderCache``, computed once per depth)."""
    x, deep, deep_pieces, m, shallow_pieces, fine, shallow = cached(
        cache, ("sawtooth", depth, relu_interpolant, count_linear_pieces),
        lambda: _sawtooth_data(depth, relu_interpolant, count_linear_pieces))

    fig, (ax, ax_units) = plt.subplots(1, 2, figsize=(8.5, 2.9), gridspec_kw={"width_ratios": [1.6, 1]})
    fig.subplots_adjust(left=0.045, right=0.985, bottom=0.15, top=0.91, wspace=0.13)  # tight_layout is slow
    ax.plot(x, deep, color="tab:blue", lw=1.5, label=f"deep: τ composed {depth}×")
    ax.plot(fine, shallow, color="tab:orange", lw=1, ls="--", label=f"shallow twin, {m} units")
    ax.set_title(f"Telgarsky's sawtooth, depth {depth}: {deep_pieces} pieces", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", ncol=2)
    ax.set_ylim(-0.05, 1.35)
    ax.tick_params(labelsize=7)
    depths = np.arange(1, 11)
    ax_units.semilogy(depths, 2 * depths, "o-", ms=3, label="deep: 2 units × L layers")
    ax_units.semilogy(depths, 2.0 ** depths - 1, "s-", ms=3, label="one hidden layer: ≥ 2^L - 1")
    ax_units.axvline(depth, color="gray", lw=0.8, ls=":")
    ax_units.set_xlabel("depth L", fontsize=8)
    ax_units.set_title("units needed for 2^L pieces", fontsize=9)
    ax_units.legend(fontsize=7)
    ax_units.tick_params(labelsize=7)
    readout = (f"depth {depth}: the deep network ({2 * depth} units in {depth} layers) has {deep_pieces} pieces; "
               f"its one-hidden-layer twin from relu_interpolant has {m} units and count_linear_pieces finds "
               f"{shallow_pieces} pieces (2^{depth} = {2 ** depth})")
    return fig, readout


def sawtooth_explorer(relu_interpolant, count_linear_pieces):
    controls = {"depth": widgets.IntSlider(3, min=1, max=10, step=1, description="depth L",
                                           continuous_update=False)}
    return Explorer(functools.partial(render_sawtooth, cache=RenderCache()), controls,
                    needs={"relu_interpolant": relu_interpolant, "count_linear_pieces": count_linear_pieces},
                    title="Depth doubles the pieces: the sawtooth", height="320px")
