"""Widgets of chapter 2 (universal approximation): ReLU interpolants, activation regions, sawtooth.

Each widget is a pure ``render_*`` function returning ``(figure, readout)`` and a factory that
wires it to ipywidgets controls through ``Explorer`` with the student's functions.
"""
from __future__ import annotations

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import hsv_to_rgb

from .explorer import Explorer


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


def render_interpolant(target="sin(x)", width=6, show_units=True, *, relu_interpolant, mlp_forward):
    """The ReLU interpolant of ``target`` on ``width + 1`` equally spaced knots, its hinge units and
    the sup error against width (right)."""
    f, a, b = TARGETS[target]
    grid = np.linspace(a, b, 801)
    weights, y, err = _interpolant_error(target, width, relu_interpolant, mlp_forward, grid)
    W1, b1, W2, b2 = (np.asarray(w, dtype=float) for w in weights)
    m = W1.shape[0]
    widths = np.arange(1, MAX_WIDTH + 1)
    errors = np.array([_interpolant_error(target, int(w), relu_interpolant, mlp_forward, grid)[2]
                       for w in widths])

    fig, (ax, ax_err) = plt.subplots(1, 2, figsize=(9, 3.3), gridspec_kw={"width_ratios": [1.6, 1]})
    fy = f(grid)
    lo, hi = fy.min(), fy.max()
    pad = 0.25 * (hi - lo + 1e-12)
    if show_units:
        for j in range(m):
            unit = W2[0, j] * np.maximum(W1[j, 0] * grid + b1[j], 0.0)
            ax.plot(grid, unit, color="tab:gray", lw=0.7, ls="--", alpha=0.6,
                    label="hinge units $c_i(x-x_i)_+$" if j == 0 else None)
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
    ax_err.loglog(widths, anchor * (m_last / widths) ** 2, ":", color="gray", lw=1, label="$\\propto 1/m^2$")
    ax_err.loglog(widths, anchor * np.sqrt(m_last / widths), "--", color="gray", lw=0.8,
                  label="$\\propto 1/\\sqrt{m}$")
    if err > 1e-14:
        ax_err.loglog([width], [err], "o", color="tab:red", ms=6)
    ax_err.set_xlabel("width m (knots - 1)", fontsize=8)
    ax_err.set_title("sup error vs width", fontsize=9)
    ax_err.set_ylim(max(errors[positive].min() if positive.any() else 1e-6, 1e-8) / 3, errors.max() * 3 + 1e-12)
    ax_err.legend(fontsize=7)
    ax_err.tick_params(labelsize=7)
    fig.tight_layout()
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


def render_regions(units=5, depth=1, seed=0, *, activation_patterns, zaslavsky_bound, resolution=181, box=3.0):
    """The square [-box, box]^2 coloured by the activation pattern of a random ReLU network."""
    layers = random_relu_layers(units, depth, seed)
    g = np.linspace(-box, box, resolution)
    xx, yy = np.meshgrid(g, g)
    points = np.column_stack([xx.ravel(), yy.ravel()])
    W_block, b_block, stacked, pre = stacked_layer(layers, points)
    count = int(activation_patterns(W_block, b_block, stacked))
    one_layer = int(zaslavsky_bound(units, 2))
    all_units = int(zaslavsky_bound(units * depth, 2))

    # colours: one per pattern (computed here only for the picture)
    bits = pre > 0
    _, ids = np.unique(np.packbits(bits, axis=1), axis=0, return_inverse=True)
    ids = ids.ravel()
    n_ids = ids.max() + 1
    hues = (np.arange(n_ids) * 0.61803398875) % 1.0
    rng = np.random.default_rng(1000 + seed)
    sat = rng.uniform(0.35, 0.75, n_ids)
    palette = hsv_to_rgb(np.column_stack([hues, sat, np.full(n_ids, 0.95)]))
    image = palette[ids].reshape(resolution, resolution, 3)

    fig, ax = plt.subplots(figsize=(4.2, 3.6))
    ax.imshow(image, origin="lower", extent=(-box, box, -box, box), interpolation="nearest")
    W, b = layers[0]
    for j in range(units):  # the first layer's lines w . x + b = 0
        w1, w2 = W[j]
        if abs(w2) > abs(w1):
            ax.plot(g, -(b[j] + w1 * g) / w2, color="black", lw=0.6)
        else:
            ax.plot(-(b[j] + w2 * g) / w1, g, color="black", lw=0.6)
    ax.set_xlim(-box, box)
    ax.set_ylim(-box, box)
    ax.set_aspect("equal")
    ax.tick_params(labelsize=7)
    ax.set_title(f"{depth} layer(s) × {units} units: {count} regions seen (black: layer-1 lines)", fontsize=8)
    fig.tight_layout()

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
    return Explorer(render_regions, controls,
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


def render_sawtooth(depth=3, *, relu_interpolant, count_linear_pieces):
    """tau^depth computed by composition (2 units per layer) and its one-hidden-layer twin."""
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

    fig, (ax, ax_units) = plt.subplots(1, 2, figsize=(8.5, 2.9), gridspec_kw={"width_ratios": [1.6, 1]})
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
    fig.tight_layout()
    readout = (f"depth {depth}: the deep network ({2 * depth} units in {depth} layers) has {deep_pieces} pieces; "
               f"its one-hidden-layer twin from relu_interpolant has {m} units and count_linear_pieces finds "
               f"{shallow_pieces} pieces (2^{depth} = {2 ** depth})")
    return fig, readout


def sawtooth_explorer(relu_interpolant, count_linear_pieces):
    controls = {"depth": widgets.IntSlider(3, min=1, max=10, step=1, description="depth L",
                                           continuous_update=False)}
    return Explorer(render_sawtooth, controls,
                    needs={"relu_interpolant": relu_interpolant, "count_linear_pieces": count_linear_pieces},
                    title="Depth doubles the pieces: the sawtooth", height="320px")
