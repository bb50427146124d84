"""Widgets of chapter 3 (computational graphs and automatic differentiation).

* ``backprop_graph_explorer(Value, topological_order)``: the worked example of the notes,
  ``L = log(1 / (exp(-(x w + b)) + 1))``, built with the student's ``Value`` and drawn node by
  node (forward values, and the adjoints as a step slider walks the backward pass).
* ``mode_cost_explorer(jvp, Value)``: the cost of the full gradient of ``f: R^n -> R`` by forward
  mode (n calls of the student's ``jvp``) and by reverse mode (one forward and one backward pass
  of the student's ``Value``) as n grows.

Helpers of section 5 (the student's engine trains a network, in the student's own loop
``train_mlp``): ``moons_split()`` (training, validation and test points, fixed by seed),
``moons_logistic_baseline()`` (logistic regression on the same training points, judged on the same test
points: the baseline beside the network), ``mlp_numpy(weights, n_in, sizes, X)`` (the MLP of the contract
evaluated in NumPy from its parameters in creation order) and ``plot_moons``. Superseded, kept for notebooks
released before the student wrote the loop: ``moons_data()`` (100 points, no held-out data); the given loop
``train_moons`` lives in ``dlcourse.compat.ch03_backprop`` (its old name still imports from here).

Render functions are pure: ``render_*(**controls, **student_functions) -> (figure, readout)``.
"""
from __future__ import annotations

import math
import time

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from .explorer import Explorer, readout
from .picture import LiveFigure, decade_limits, kept_figure

__all__ = ["build_worked_example", "render_backprop_graph", "backprop_graph_explorer",
           "cost_function", "render_mode_cost", "mode_cost_explorer", "N_NAMED",
           "moons_split", "moons_logistic_baseline", "mlp_numpy", "plot_moons", "moons_data"]

# Superseded (issue 39): the loop earlier releases gave (the students now write it), now in dlcourse.compat
_MOVED = ("train_moons",)


def __getattr__(name):
    """The superseded helpers, for notebooks already handed out: imported from ``dlcourse.compat`` on first use."""
    if name in _MOVED:
        from importlib import import_module
        return getattr(import_module("dlcourse.compat.ch03_backprop"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# ------------------------------------------------------------------ the worked example

_NAMES = ["x", "w", "b", "a = x·w", "z = a + b", "n = −z", "e = exp(n)", "d = e + 1", "r = 1/d", "L = log r"]
_SHORT = ["x", "w", "b", "a", "z", "n", "e", "d", "r", "L"]
N_NAMED = len(_NAMES)


def build_worked_example(Value, x, w, b):
    """(L, named): the notes' example built with ``Value``; ``named`` lists (node, label, short name)."""
    X, W, B = Value(x), Value(w), Value(b)
    a = X * W
    z = a + B
    n = -z
    e = n.exp()
    d = e + 1
    r = 1 / d
    L = r.log()
    nodes = [X, W, B, a, z, n, e, d, r, L]
    return L, list(zip(nodes, _NAMES, _SHORT))


def _layout(order):
    """Positions {id: (column, row)}: column = longest path from the inputs, leaves just left of their first use."""
    depth = {}
    for v in order:
        depth[id(v)] = 1 + max((depth[id(p)] for p in v._prev), default=-1)
    consumers = {}
    for v in order:
        for p in v._prev:
            consumers.setdefault(id(p), []).append(depth[id(v)])
    for v in order:
        if not v._prev and id(v) in consumers:
            depth[id(v)] = max(0, min(consumers[id(v)]) - 1)
    columns = {}
    for v in order:  # non-leaves first in each column, so the main chain sits on row 0
        columns.setdefault(depth[id(v)], []).append(v)
    slots = [0.0, -1.0, 1.0, -2.0, 2.0, -3.0, 3.0]
    pos = {}
    for col, nodes in columns.items():
        nodes = sorted(nodes, key=lambda v: 0 if v._prev else 1)
        if all(not v._prev for v in nodes):
            rows = [0.5 - k for k in range(len(nodes))]
        else:
            rows = [slots[k % len(slots)] + 6 * (k // len(slots)) for k in range(len(nodes))]
        for v, row in zip(nodes, rows):
            pos[id(v)] = (col, row)
    return pos


def _fmt(value):
    value = value + 0.0  # no "-0"
    return f"{value:.4g}" if abs(value) < 1e4 else f"{value:.2e}"


def _walk_backward(L, backward_order, current):
    """Run the student's backward pass up to ``current``: grads reset, L seeded with 1, then the
    ``_backward`` closures of every node before ``current`` in reverse topological order."""
    for v in backward_order:
        v.grad = 0.0
    if current is None:
        return
    L.grad = 1.0
    for v in backward_order:
        if v is current:
            return
        v._backward()


def _graph_figure(order, pos, names, named_ids) -> LiveFigure:
    """The graph's edges and arrows (background) and one text box per node (changing)."""
    from matplotlib.collections import LineCollection

    live = LiveFigure(Figure(figsize=(10.5, 3.0)))
    ax = live.figure.subplots()
    live.figure.subplots_adjust(left=0.005, right=0.995, bottom=0.01, top=0.9)  # tight_layout is slow
    ax.set_axis_off()
    segments = []
    for v in order:  # edges first
        cx, cy = pos[id(v)]
        for p in v._prev:
            px, py = pos[id(p)]
            segments.append(((px + 0.36, py), (cx - 0.36, cy)))
    ax.add_collection(LineCollection(segments, colors="0.6", linewidths=0.9))
    ax.plot([s[1][0] for s in segments], [s[1][1] for s in segments], ">", color="0.55", ms=4)
    live.boxes = live.changes([ax.text(*pos[id(v)], " ", ha="center", va="center",
                                       fontsize=8 if id(v) in named_ids else 7,
                                       bbox=dict(boxstyle="round,pad=0.3", fc="white", ec="0.6", lw=0.8))
                               for v in order])
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    ax.set_xlim(min(xs) - 0.6, max(xs) + 0.6)
    ax.set_ylim(min(ys) - 0.6, max(ys) + 0.6)
    ax.set_title("forward values (middle line) and adjoints ∂L/∂node (bottom line, ? = not reached yet); "
                 "orange: current node of the backward pass", fontsize=8.5)
    return live


def render_backprop_graph(x=2.0, w=-3.0, b=6.0, step=N_NAMED, *, Value, topological_order, cache=None):
    """Draw the worked example's graph after ``step`` named nodes of the backward pass.

    Step 0 is the forward pass only; at step k the backward pass has run up to the k-th named node in
    reverse topological order, whose adjoint is then complete. Adjoints the sweep has not reached yet are
    shown as "?" (in the graph and in the readout), never their final values."""
    L, named = build_worked_example(Value, x, w, b)
    order = topological_order(L)
    label = {id(v): (name, short) for v, name, short in named}
    backward_order = list(reversed(order))
    rank = {id(v): k for k, v in enumerate(backward_order)}
    missing = [name for v, name, _ in named if id(v) not in rank]
    if missing:
        raise ValueError(f"topological_order(L) misses the node(s) {', '.join(missing)}")
    named_backward = [v for v in backward_order if id(v) in label]
    step = int(max(0, min(step, len(named_backward))))
    current = named_backward[step - 1] if step > 0 else None
    done_rank = rank[id(current)] if current is not None else -1
    if all(callable(getattr(v, "_backward", None)) for v in order):
        _walk_backward(L, backward_order, current)   # the student's closures, one node at a time
    else:  # an engine without _backward closures: run it all, show only what the sweep has reached
        L.backward()
    reached = {id(v) for v in backward_order[:done_rank + 1]}
    pos = _layout(order)

    names = [label.get(id(v), ("const" if not v._prev else "(temp)", None))[0] for v in order]
    layout = tuple(pos[id(v)] for v in order)
    live = kept_figure(cache, lambda: _graph_figure(order, pos, names, set(label)),
                       key=(Value, topological_order, layout, tuple(names)))
    for v, name, box in zip(order, names, live.boxes):
        processed = id(v) in reached
        grad_text = f"∂L = {_fmt(v.grad)}" if processed else "∂L = ?"
        if v is current:
            face = "#ffb74d"
        elif id(v) not in label:
            face = "#e6e6e6"
        elif processed:
            face = "#a5d6a7"
        else:
            face = "#bbdefb"
        box.set_text(f"{name}\n{_fmt(v.data)}\n{grad_text}")
        patch = box.get_bbox_patch()
        patch.set_facecolor(face)
        patch.set_edgecolor("0.3" if v is current else "0.6")
        patch.set_linewidth(1.6 if v is current else 0.8)

    leaves = [named[0][0], named[1][0], named[2][0]]
    grads = [_fmt(v.grad) if id(v) in reached else "?" for v in leaves]
    z = x * w + b
    one_minus_sigma = 1.0 / (1.0 + math.exp(z)) if z > -700 else 1.0
    closed = [one_minus_sigma * w, one_minus_sigma * x, one_minus_sigma]
    # the adjoints of x, w and b the sweep has reached (None: not reached yet, "?")
    shown = dict(step=step, steps=len(named_backward),
                 grads=[float(v.grad) if id(v) in reached else None for v in leaves])
    if current is None:
        head = f"step 0/{len(named_backward)}: forward pass only, L = {_fmt(L.data)}, no adjoint computed yet"
        shown.update(loss=float(L.data))
    else:
        name, short = label[id(current)]
        head = (f"step {step}/{len(named_backward)}: node {name} = {_fmt(current.data)}, "
                f"dL/d{short} = {_fmt(current.grad)}")
        shown.update(node=name, node_value=float(current.data), node_grad=float(current.grad))
    if "?" in grads:
        compare = "(compared with the closed form once the sweep reaches x, w and b)"
    else:
        compare = f"(closed form (1 − σ(z))·[w, x, 1] = [{', '.join(_fmt(g) for g in closed)}])"
        shown.update(closed_form=[float(g) for g in closed])
    text = readout(f"{head} | [dL/dx, dL/dw, dL/db] = [{', '.join(grads)}] {compare}", **shown)
    return live, text


def backprop_graph_explorer(*, Value, topological_order):
    """Sliders for x, w, b and the backward-pass step over the notes' worked example."""
    slider = dict(continuous_update=False, readout_format=".1f")
    controls = {
        "x": widgets.FloatSlider(2.0, min=-4.0, max=4.0, step=0.5, description="x", **slider),
        "w": widgets.FloatSlider(-3.0, min=-4.0, max=4.0, step=0.5, description="w", **slider),
        "b": widgets.FloatSlider(6.0, min=-8.0, max=8.0, step=0.5, description="b", **slider),
        "step": widgets.IntSlider(0, min=0, max=N_NAMED, step=1, description="backward step",
                                  continuous_update=False),
    }
    return Explorer(render_backprop_graph, controls,
                    needs={"Value": Value, "topological_order": topological_order},
                    height="340px", columns=4,
                    title="The worked example L = log(1 / (exp(−(x w + b)) + 1)), node by node")


# ------------------------------------------------------------------ forward vs reverse mode

class _Counter:
    """A scalar that counts the elementary operations applied to it (shared counter)."""

    def __init__(self, value, box):
        self.value, self.box = value, box

    def _op(self, value):
        self.box[0] += 1
        return _Counter(value, self.box)

    @staticmethod
    def _v(other):
        return other.value if isinstance(other, _Counter) else other

    def __add__(self, other):
        return self._op(self.value + self._v(other))

    __radd__ = __add__

    def __mul__(self, other):
        return self._op(self.value * self._v(other))

    __rmul__ = __mul__

    def exp(self):
        return self._op(math.exp(self.value))


def cost_function(x):
    """f(x) = sum_i exp(0.1 x_i x_{i+1}) x_i (indices mod n), written with x[i], +, * and .exp()."""
    n = len(x)
    total = None
    for i in range(n):
        term = (x[i] * x[(i + 1) % n] * 0.1).exp() * x[i]
        total = term if total is None else total + term
    return total


def _ops_per_evaluation(n):
    box = [0]
    cost_function([_Counter(0.1, box) for _ in range(n)])
    return box[0]


def _graph_size(root):
    seen, todo, inner = set(), [root], 0
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        inner += bool(v._prev)
        todo.extend(v._prev)
    return inner


def _sizes(n):
    sizes = [m for m in (1, 2, 4, 8, 16, 32, 64, 128) if m < n]
    return sizes + [n]


def _mode_cost_point(m, jvp, Value):
    """Operations and times of the full gradient at one size m: (fwd_ops, rev_ops, fwd_ms, rev_ms, diff)."""
    x = 0.5 * np.random.default_rng(0).standard_normal(m)
    per_pass = _ops_per_evaluation(m)
    best = float("inf")
    for _ in range(3):  # reverse mode is cheap: keep the best of three timings
        start = time.perf_counter()
        xs = [Value(float(v)) for v in x]
        out = cost_function(xs)
        out.backward()
        g_rev = np.array([v.grad for v in xs])
        best = min(best, time.perf_counter() - start)
    rev_ops = per_pass + _graph_size(out)
    start = time.perf_counter()
    eye = np.eye(m)
    g_fwd = np.array([jvp(cost_function, x, eye[i]) for i in range(m)], dtype=float)
    fwd_ms = 1e3 * (time.perf_counter() - start)
    diff = float(np.max(np.abs(g_fwd - g_rev)))
    return m * per_pass, rev_ops, fwd_ms, 1e3 * best, diff


MAX_N = 96


def _mode_cost_figure() -> LiveFigure:
    live = LiveFigure(Figure(figsize=(9, 3.0)))
    ax1, ax2 = live.ax1, live.ax2 = live.figure.subplots(1, 2)
    live.figure.subplots_adjust(left=0.08, right=0.985, bottom=0.16, top=0.88, wspace=0.3)  # tight_layout is slow
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(0.8, MAX_N * 1.25 + 0.5)
        ax.minorticks_off()
    live.fwd_ops, = live.changes(ax1.plot([1], [1], "o-", color="C3", label="forward mode: n passes"))
    live.rev_ops, = live.changes(ax1.plot([1], [1], "s-", color="C0", label="reverse mode: 1 + 1 passes"))
    ax1.set_xlabel("n (inputs)"), ax1.set_ylabel("elementary operations")
    ax1.legend(fontsize=8, loc="upper left"), ax1.grid(alpha=0.3)
    live.fwd_ms, = live.changes(ax2.plot([1], [1], "o-", color="C3", label="your jvp, n calls"))
    live.rev_ms, = live.changes(ax2.plot([1], [1], "s-", color="C0", label="your Value.backward()"))
    ax2.set_xlabel("n (inputs)"), ax2.set_ylabel("time (ms)")
    ax2.legend(fontsize=8, loc="upper left"), ax2.grid(alpha=0.3)
    live.figure.suptitle("cost of the full gradient of f(x) = Σ exp(0.1 x_i x_(i+1)) x_i", fontsize=9)
    return live


def render_mode_cost(n=16, *, jvp, Value, cache=None):
    """Full gradient of cost_function at a fixed point by n jvp calls and by one Value backward pass,
    for n and the powers of two below it. With a ``RenderCache`` each size is measured once (per
    ``jvp`` and ``Value``): moving n measures only the sizes not seen yet."""
    sizes = _sizes(int(n))
    points = [_mode_cost_point(m, jvp, Value) if cache is None
              else cache.get(("mode cost", m, jvp, Value), lambda m=m: _mode_cost_point(m, jvp, Value))
              for m in sizes]
    fwd_ops, rev_ops, fwd_ms, rev_ms, diffs = (list(column) for column in zip(*points))
    diff = diffs[-1]

    live = kept_figure(cache, _mode_cost_figure)
    seen = getattr(live, "limits", ((np.inf, 0.0), (np.inf, 0.0)))  # the axes only ever grow (whole decades)
    limits = tuple((min(a[0], b[0]), max(a[1], b[1])) for a, b in zip(
        seen, (decade_limits(np.maximum(fwd_ops + rev_ops, 1e-3)), decade_limits(np.maximum(fwd_ms + rev_ms, 1e-3)))))
    live.limits = limits
    if live.new_background(limits):
        for ax, (low, high) in zip((live.ax1, live.ax2), limits):
            ax.set_ylim(low / 1.2, high * 1.2)
    for line, ys in ((live.fwd_ops, fwd_ops), (live.rev_ops, rev_ops), (live.fwd_ms, fwd_ms), (live.rev_ms, rev_ms)):
        line.set_data(sizes, ys)
    text = readout(f"n = {sizes[-1]}: forward mode {sizes[-1]} pass{'es' if sizes[-1] != 1 else ''}, "
                   f"{fwd_ops[-1]} operations, {fwd_ms[-1]:.1f} ms; "
                   f"reverse mode 2 passes (1 forward + 1 backward), {rev_ops[-1]} operations, {rev_ms[-1]:.1f} ms; "
                   f"operation ratio {fwd_ops[-1] / rev_ops[-1]:.1f}; max |forward − reverse gradient| = {diff:.1e}",
                   n=sizes[-1], forward_passes=sizes[-1], forward_ops=fwd_ops[-1], forward_ms=fwd_ms[-1],
                   reverse_passes=2, reverse_ops=rev_ops[-1], reverse_ms=rev_ms[-1],
                   operation_ratio=fwd_ops[-1] / rev_ops[-1], max_gradient_difference=diff)
    return live, text


def mode_cost_explorer(*, jvp, Value):
    """A slider for n; plots operation counts and times of forward- and reverse-mode gradients."""
    controls = {"n": widgets.IntSlider(16, min=1, max=MAX_N, step=1, description="n",
                                       continuous_update=False)}
    return Explorer(render_mode_cost, controls,
                    needs={"Value": Value, "jvp": jvp}, height="300px",
                    title="Forward against reverse mode for f: Rⁿ → R")


# ------------------------------------------------------------------ section 5: training on two moons

def moons_split(n_train=100, n_val=50, n_test=50, noise=0.1, seed=0):
    """``(X_train, y_train, X_val, y_val, X_test, y_test)``: ``make_moons(n_train + n_val + n_test, noise,
    random_state=seed)`` with labels in {-1.0, +1.0}, split in that order along
    ``np.random.default_rng(seed).permutation`` of the points."""
    X, y = moons_data(n_train + n_val + n_test, noise, seed)
    order = np.random.default_rng(seed).permutation(len(X))
    cuts = np.split(order, [n_train, n_train + n_val])
    return tuple(a for part in cuts for a in (X[part], y[part]))


def moons_data(n=100, noise=0.1, seed=0):
    """``(X, y)``: ``make_moons(n, noise, random_state=seed)`` with labels in {-1.0, +1.0}.

    Superseded by ``moons_split`` (held-out data), kept for notebooks released before it."""
    from sklearn.datasets import make_moons
    X, y = make_moons(n_samples=n, noise=noise, random_state=seed)
    return X.astype(np.float64), 2.0 * y.astype(np.float64) - 1.0


def moons_logistic_baseline(C=1.0):
    """Logistic regression on the two coordinates (and a bias), fitted by Newton's method to the training
    points of ``moons_split()`` (summed log-loss plus ``|w|^2 / (2 C)`` on the weights, scikit-learn's default
    ``C = 1``) and judged on its test points: ``{"accuracy", "cross_entropy", "weights"}``. The baseline a
    practitioner tries first; a few milliseconds."""
    X_train, y_train, _, _, X_test, y_test = moons_split()
    A, t = np.c_[X_train, np.ones(len(X_train))], (y_train > 0).astype(np.float64)
    R = np.diag([1.0, 1.0, 0.0]) / C
    w = np.zeros(3)
    for _ in range(100):
        p = 0.5 * (1.0 + np.tanh(0.5 * (A @ w)))
        step = np.linalg.solve((A.T * (p * (1.0 - p))) @ A + R, A.T @ (p - t) + R @ w)
        w = w - step
        if np.abs(step).max() < 1e-12:
            break
    scores = np.c_[X_test, np.ones(len(X_test))] @ w
    margins = np.where(y_test > 0, scores, -scores)
    return {"accuracy": float(np.mean(np.sign(scores) == y_test)),
            "cross_entropy": float(np.mean(np.logaddexp(0.0, -margins))), "weights": w}


def mlp_numpy(weights, n_in, sizes, X):
    """The MLP of the contract, from its parameters in creation order (per neuron: weights, then bias),
    evaluated on the rows of X (N, n_in): ReLU on every layer but the last. Returns (N, sizes[-1])."""
    weights = np.asarray(weights, dtype=np.float64)
    out = np.asarray(X, dtype=np.float64)
    k, fan_in = 0, int(n_in)
    for layer, size in enumerate(sizes):
        block = weights[k:k + size * (fan_in + 1)].reshape(size, fan_in + 1)
        k += size * (fan_in + 1)
        out = out @ block[:, :fan_in].T + block[:, fan_in]
        if layer < len(sizes) - 1:
            out = np.maximum(out, 0.0)
        fan_in = size
    if k != weights.size:
        raise ValueError(f"{weights.size} parameters given, the architecture has {k}")
    return out


def plot_moons(weights, X, y, sizes=(8, 8, 1), title=""):
    """The points and the decision regions of the MLP with these parameters."""
    xx, yy = np.meshgrid(np.linspace(-1.6, 2.6, 120), np.linspace(-1.1, 1.6, 80))
    scores = mlp_numpy(weights, 2, sizes, np.c_[xx.ravel(), yy.ravel()])[:, 0].reshape(xx.shape)
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.contourf(xx, yy, scores > 0, levels=[-0.5, 0.5, 1.5], colors=["#f4c7c3", "#c6dbef"], alpha=0.8)
    ax.contour(xx, yy, scores, levels=[0.0], colors="0.3", linewidths=1)
    ax.scatter(X[:, 0], X[:, 1], c=np.where(y > 0, "C0", "C3"), s=14, edgecolors="k", linewidths=0.3)
    ax.set_title(title, fontsize=9)
    ax.set_xticks([]), ax.set_yticks([])
    return fig
