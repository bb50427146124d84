"""Widgets of chapter 1 (the perceptron): every number they show comes from the student's functions.

* ``perceptron_steps_explorer``: walk through the updates of the student's ``perceptron_train`` on data
  whose margin a slider sets, with the two lemmas of Novikoff's proof and the bound.
* ``cover_explorer``: Cover's fraction ``C(s, n) / 2**s`` against ``s / n``.
* ``adaboost_explorer``: AdaBoost with decision stumps on a line, rounds computed by the
  student's ``adaboost_step``.

Each widget is a pure ``render_*`` function (controls and student functions in, ``(figure,
readout)`` out) wrapped in an ``Explorer``. None of them contains a solution of a graded function.
"""
from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from dlcourse.data import linearly_separable

from .explorer import Explorer, cached, frozen, readout
from .picture import LiveFigure, decade_limits, kept_figure

__all__ = [
    "stepper_data", "perceptron_history", "render_perceptron_steps", "perceptron_steps_explorer",
    "render_cover", "cover_explorer",
    "boosting_data", "best_stump", "boosting_run", "render_adaboost", "adaboost_explorer",
]

_POS, _NEG = "tab:blue", "tab:orange"

# ------------------------------------------------------------------ perceptron stepper

STEPPER_POINTS = 40
STEPPER_SHIFT = np.array([1.0, 0.5])  # off the origin, so that the bias has work to do
MAX_STEP = 80                         # the update slider's range; later steps show the last update
_XLIM, _YLIM = (-0.25, 2.25), (-0.75, 1.75)


def stepper_data(data_margin: float, seed: int):
    """The stepper's data: ``(X, y, v_star)``, points keeping ``data_margin`` from a planted line.

    ``linearly_separable`` plants a line through the origin; the points are then shifted by
    ``STEPPER_SHIFT``, and ``v_star = (w_true, b_true)`` is the planted separator (unit ``w_true``).
    """
    X, y, w_true = linearly_separable(STEPPER_POINTS, float(data_margin), np.random.default_rng(int(seed)))
    return X + STEPPER_SHIFT, y, np.r_[w_true, -w_true @ STEPPER_SHIFT]


def perceptron_history(perceptron_train, X, y, max_sweeps: int = 256):
    """Every update of the student's ``perceptron_train`` on ``(X, y)``, using nothing but that function.

    ``perceptron_train`` only returns its final state, and re-implementing Algorithm 1 here would
    put a reference solution into the widget. Instead we use that the algorithm is *online*:
    E sweeps over the data perform exactly the updates of a single sweep over the stream of E
    copies of the data (after a clean sweep nothing changes any more, so the stream's extra copies
    make no update). Hence ``perceptron_train(stream[:k], stream_y[:k], max_epochs=1)`` is the
    state after the first k steps, and bisection on k over the (monotone) update count locates
    every update in O(updates * log(stream length)) calls.

    Returns ``(states, corrected, total)``: ``states[t] = (w_t, b_t)`` after t updates
    (``states[0]`` is zero), ``corrected[t - 1]`` the stream position of the t-th update (the
    data index is ``position % s``, the sweep ``position // s + 1``) and ``total`` the update count
    that ``perceptron_train(X, y)`` reports.
    """
    s, d = X.shape
    total = int(perceptron_train(X, y)[2])
    # the smallest number of sweeps that already makes all the updates: doubling, then bisection
    lo, hi = 0, 1
    while int(perceptron_train(X, y, max_epochs=hi)[2]) < total:
        lo, hi = hi, 2 * hi
        if hi > max_sweeps:
            raise ValueError(f"perceptron_train has not made all its {total} updates after "
                             f"{lo} sweeps: is this data separable for it?")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if int(perceptron_train(X, y, max_epochs=mid)[2]) >= total else (mid, hi)
    sweeps = hi
    stream_X, stream_y = np.tile(X, (sweeps, 1)), np.tile(y, sweeps)

    def after(k):
        w, b, count = perceptron_train(stream_X[:k], stream_y[:k], max_epochs=1)
        return (np.asarray(w, dtype=float), float(b)), int(count)

    end_state, end_count = after(len(stream_y))
    if end_count != total:
        raise ValueError(f"perceptron_train counts {end_count} updates on {sweeps} copies of the data "
                         f"in one sweep but {total} in {sweeps} sweeps: the two should agree")
    found = {}

    def bisect(lo, count_lo, hi, count_hi, state_hi):
        if count_hi == count_lo:
            return
        if count_hi < count_lo or count_hi - count_lo > hi - lo:
            raise ValueError("perceptron_train's update count is not consistent along the data "
                             "(at most one update per point, never fewer with more points)")
        if hi - lo == 1:
            found[count_hi] = (hi - 1, state_hi)
            return
        mid = (lo + hi) // 2
        state_mid, count_mid = after(mid)
        bisect(lo, count_lo, mid, count_mid, state_mid)
        bisect(mid, count_mid, hi, count_hi, state_hi)

    bisect(0, 0, len(stream_y), end_count, end_state)
    states = [(np.zeros(d), 0.0)] + [found[t][1] for t in range(1, total + 1)]
    corrected = [found[t][0] for t in range(1, total + 1)]
    return states, corrected, total


def _line_through(w, b):
    """(ends (2, 2), foot) of the line w.x + b = 0, foot its point nearest the data centre; None if w = 0."""
    if not np.any(w):
        return None
    centre = STEPPER_SHIFT
    foot = centre - (w @ centre + b) / (w @ w) * w
    direction = np.array([-w[1], w[0]]) / np.linalg.norm(w)
    return foot + np.outer([-5.0, 5.0], direction), foot


def _set_line(artist, w, b):
    """Show the line w.x + b = 0 on ``artist`` (hidden when w = 0); its point nearest the data, or None."""
    line = _line_through(w, b)
    artist.set_visible(line is not None)
    if line is None:
        return None
    artist.set_data(line[0][:, 0], line[0][:, 1])
    return line[1]


def _perceptron_steps_figure() -> LiveFigure:
    live = LiveFigure(Figure(figsize=(9.2, 3.9)))
    ax, ax2 = live.ax, live.ax2 = live.figure.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.15]})
    # the data and Novikoff's curves change with the data set; the axes keep their limits (whole decades)
    live.positive = live.changes(ax.scatter(np.zeros(0), np.zeros(0), s=22, c=_POS, marker="o", label="+1"))
    live.negative = live.changes(ax.scatter(np.zeros(0), np.zeros(0), s=22, c=_NEG, marker="s", label="−1"))
    live.planted, = live.changes(ax.plot([], [], color="grey", lw=0.8, ls=":"))
    live.before, = live.changes(ax.plot([], [], color="k", lw=1, ls="--", alpha=0.5))
    live.after, = live.changes(ax.plot([], [], color="k", lw=1.8))
    live.arrow = live.changes(ax.annotate("", xy=(0, 0), xytext=(0, 0),
                                          arrowprops=dict(arrowstyle="->", color="k", lw=1.2)))
    live.corrected = live.changes(ax.scatter(np.zeros(0), np.zeros(0), s=160, facecolors="none",
                                             edgecolors="tab:red", linewidths=2, label="corrected"))
    ax.set(xlim=_XLIM, ylim=_YLIM, aspect="equal")
    live.title = live.changes(ax.set_title(" ", fontsize=10))
    ax.tick_params(labelsize=8)
    live.on_top(ax.legend(loc="upper left", fontsize=7, framealpha=0.8))  # over the lines
    live.lemma1, = live.changes(ax2.plot([], [], color="tab:green", lw=1, label="k γ  (Lemma 1)"))
    live.lemma2, = live.changes(ax2.plot([], [], color="tab:purple", lw=1, label="√k R  (Lemma 2)"))
    live.along, = live.changes(ax2.plot([], [], "o", ms=3, color="tab:green", label="w_k · w*"))
    live.length, = live.changes(ax2.plot([], [], "s", ms=3, color="tab:purple", label="‖w_k‖"))
    live.bound = live.changes(ax2.axvline(1, color="tab:red", ls="--", lw=1, label="bound (R/γ)²"))
    live.now = live.changes(ax2.axvline(1, color="k", lw=0.6, alpha=0.5))
    ax2.set(xscale="log", yscale="log", xlabel="updates k")
    for axis in (ax2.xaxis, ax2.yaxis):
        axis.set_minor_locator(NullLocator())  # minor log ticks are slow to lay out and add nothing here
    ax2.set_title("Novikoff on the augmented data (x, 1)", fontsize=10)
    ax2.tick_params(labelsize=8)
    live.on_top(ax2.legend(loc="upper left", fontsize=7, framealpha=0.8))  # over the curves
    live.figure.subplots_adjust(left=0.06, right=0.98, bottom=0.13, top=0.92, wspace=0.18)  # tight_layout: slow
    return live


def _novikoff_path(states, v_star):
    """(w_k . w*, ||w_k||) for k = 1..len(states) - 1, in augmented coordinates, w* the unit planted separator."""
    unit = v_star / np.linalg.norm(v_star)
    augmented = np.array([np.r_[w, b] for w, b in states[1:]]).reshape(-1, len(v_star))
    return frozen(augmented @ unit), frozen(np.linalg.norm(augmented, axis=1))


def _perceptron_data(live, X, y, v_star, path, total, R, gamma, bound):
    """The data, the planted separator and Novikoff's curves for one data set; new axis limits when they leave them."""
    live.positive.set_offsets(X[y > 0])
    live.negative.set_offsets(X[y < 0])
    _set_line(live.planted, v_star[:2], v_star[2])
    # Novikoff's lemmas in augmented coordinates: k gamma <= w_k . w* <= ||w_k|| <= sqrt(k) R
    ks = np.arange(1, total + 1)
    along, length = path
    k_max = max(2.0 * total, 1.5 * bound if np.isfinite(bound) else 2.0 * total, 10.0)
    grid = np.geomspace(1, k_max, 100)
    live.lemma1.set_visible(gamma > 0)
    live.lemma1.set_data(grid, grid * max(gamma, 1e-12))
    live.lemma2.set_data(grid, np.sqrt(grid) * R)
    live.along.set_data(ks, np.maximum(along, 1e-3))
    live.length.set_data(ks, length)
    live.bound.set_visible(bool(np.isfinite(bound)))
    live.bound.set_xdata([bound, bound] if np.isfinite(bound) else [1, 1])
    values = np.concatenate([np.sqrt(grid) * R, np.maximum(along, 1e-3), length,
                             grid * gamma if gamma > 0 else []])
    limits = decade_limits([1.0, k_max]) + decade_limits(values)
    if live.new_background(limits):  # whole decades: most data sets keep them
        live.ax2.set_xlim(0.8, limits[1])
        live.ax2.set_ylim(limits[2] / 1.2, limits[3] * 1.2)


def render_perceptron_steps(data_margin, update, seed, *, perceptron_train, margin, novikoff_bound, cache=None):
    """Left: the data, the hyperplane before/after update ``update`` and the corrected point.
    Right: Novikoff's two lemmas on the augmented data (log-log), with the bound."""
    X, y, v_star = stepper_data(data_margin, seed)
    key = ("history", perceptron_train, float(data_margin), int(seed))
    states, corrected, total = cached(cache, key, lambda: perceptron_history(perceptron_train, X, y))
    Xa = np.c_[X, np.ones(len(X))]
    R = float(np.max(np.linalg.norm(Xa, axis=1)))
    gamma = float(margin(Xa, y, v_star, 0.0))
    bound = float(novikoff_bound(Xa, y, v_star))

    t = min(int(update), total)
    live = kept_figure(cache, _perceptron_steps_figure)
    path = cached(cache, key + ("novikoff path",), lambda: _novikoff_path(states, v_star))
    _perceptron_data(live, X, y, v_star, path, total, R, gamma, bound)
    for artist in (live.before, live.after, live.arrow, live.corrected, live.now):
        artist.set_visible(t >= 1)
    if t >= 1:
        w_before, b_before = states[t - 1]
        w_after, b_after = states[t]
        position = corrected[t - 1]
        i, sweep = position % len(y), position // len(y) + 1
        _set_line(live.before, w_before, b_before)
        foot = _set_line(live.after, w_after, b_after)
        live.arrow.set_visible(foot is not None)
        if foot is not None:
            live.arrow.xy = tuple(foot + 0.35 * w_after / np.linalg.norm(w_after))
            live.arrow.set_position(tuple(foot))
        live.corrected.set_offsets(X[i][None])
        live.now.set_xdata([t, t])
        live.title.set_text(f"update {t}: point {i}, sweep {sweep}")
    else:
        live.title.set_text("start: w = 0, b = 0")

    step = f"update {t} of {total}" if t >= 1 else f"before the first of {total} updates"
    if t >= 1:
        step += f" (point {i}, label {y[i]:+.0f}, sweep {sweep})"
    shown = dict(point=int(i), label=float(y[i]), sweep=int(sweep)) if t >= 1 else {}
    text = readout(f"{step} · total updates {total} ≤ Novikoff bound {bound:.1f} "
                   f"(R = {R:.3f}, γ = {gamma:.4f} for the planted separator on the augmented data)",
                   update=t, total=total, bound=bound, radius=R, gamma=gamma, **shown)
    return live, text


def perceptron_steps_explorer(*, perceptron_train, margin, novikoff_bound):
    """The perceptron stepper, driven by the student's three functions."""
    controls = {
        "data_margin": widgets.FloatSlider(value=0.1, min=0.02, max=0.4, step=0.02, description="margin",
                                           continuous_update=False, readout_format=".2f"),
        "update": widgets.IntSlider(value=1, min=0, max=MAX_STEP, description="update",
                                    continuous_update=True),
        "seed": widgets.IntSlider(value=0, min=0, max=9, description="data seed", continuous_update=False),
    }
    return Explorer(render_perceptron_steps, controls,
                    needs={"perceptron_train": perceptron_train, "margin": margin,
                           "novikoff_bound": novikoff_bound},
                    height="400px", title="The perceptron, update by update")


# ------------------------------------------------------------------ Cover's counting theorem

COVER_DIMENSIONS = (1, 2, 5, 20)
COVER_RATIO = 4  # s runs up to COVER_RATIO * n


def _fractions(cover_count, n):
    s = np.arange(1, COVER_RATIO * n + 1)
    frac = np.array([int(cover_count(int(k), int(n))) / 2 ** int(k) for k in s])
    ratio = s / n
    return frozen((ratio, frac))


def _cover_figure() -> LiveFigure:
    live = LiveFigure(Figure(figsize=(6.4, 3.5)))
    ax = live.figure.subplots()
    live.figure.subplots_adjust(left=0.11, right=0.98, bottom=0.14, top=0.92)  # fixed: tight_layout is slow
    live.others = live.changes([ax.plot([], [], lw=1, alpha=0.6, color=f"C{k}", marker="." if m <= 2 else "None",
                                        label=f"n = {m}")[0] for k, m in enumerate(COVER_DIMENSIONS)])
    live.chosen, = live.changes(ax.plot([], [], color="k", lw=2.2, label="n of the slider"))
    live.changes([ax.axvline(2, color="tab:red", ls="--", lw=1), ax.axhline(0.5, color="grey", lw=0.6)])  # over
    ax.set(xlim=(0, COVER_RATIO), ylim=(-0.03, 1.03))
    ax.set_xlabel("s / n  (points per dimension)", fontsize=8)
    ax.set_ylabel("fraction separable  C(s, n) / 2^s", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.set_title("Cover: the capacity of a linear unit is 2n points", fontsize=10)
    ax.legend(loc="lower left", fontsize=8)  # background: the curves fall to 0 only right of s = 2n
    return live


def render_cover(n, *, cover_count, cache=None):
    """C(s, n) / 2**s against s / n for a few dimensions and for ``n``; the transition at s = 2n.

    With a ``RenderCache`` each dimension's curve is computed once per ``cover_count``."""
    n = int(n)
    curve = lambda m: cached(cache, ("cover", int(m), cover_count), lambda: _fractions(cover_count, m))  # noqa: E731
    live = kept_figure(cache, _cover_figure)
    live.new_background("axes")  # fixed limits: nothing in the background changes
    for m, line in zip(COVER_DIMENSIONS, live.others):
        line.set_visible(m != n)
        if m != n:
            line.set_data(*curve(m))
    ratio, frac = curve(n)
    live.chosen.set_data(ratio, frac)
    live.chosen.set_marker("." if n <= 2 else "None")

    at_n, at_2n, at_4n = (frac[k * n - 1] for k in (1, 2, 4))
    text = readout(f"n = {n}: fraction C(s, n) / 2^s = {at_n:.4f} at s = n, {at_2n:.4f} at s = 2n, "
                   f"{at_4n:.4g} at s = 4n",
                   n=n, fraction_at_n=float(at_n), fraction_at_2n=float(at_2n), fraction_at_4n=float(at_4n))
    return live, text


def cover_explorer(*, cover_count):
    controls = {"n": widgets.IntSlider(value=10, min=1, max=50, description="dimension n",
                                       continuous_update=False)}
    return Explorer(render_cover, controls,
                    needs={"cover_count": cover_count}, height="360px",
                    title="Cover's counting theorem")


# ------------------------------------------------------------------ AdaBoost with stumps

BOOST_POINTS = 24
MAX_ROUNDS = 30


def boosting_data():
    """24 points of [0, 1] labelled +1 on (0.25, 0.6), -1 elsewhere, with two labels flipped."""
    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(0, 1, BOOST_POINTS))
    y = np.where((x > 0.25) & (x < 0.6), 1.0, -1.0)
    y[[3, 20]] *= -1
    return x, y


def best_stump(x, y, weights):
    """The weak learner: the stump ``h(x) = sign * (+1 if x > threshold else -1)`` of least weighted error.

    Returns ``(threshold, sign, predictions)``. Thresholds run between consecutive points (and
    below all of them), so the stumps include the constant classifiers.
    """
    order = np.sort(x)
    thresholds = np.r_[order[0] - 0.05, (order[:-1] + order[1:]) / 2]
    above = x[None, :] > thresholds[:, None]                       # (thresholds, points)
    predictions = np.where(above, 1.0, -1.0)
    error_plus = ((predictions != y) * weights).sum(axis=1)       # sign +1
    error_minus = ((-predictions != y) * weights).sum(axis=1)     # sign -1
    j_plus, j_minus = int(np.argmin(error_plus)), int(np.argmin(error_minus))
    if error_plus[j_plus] <= error_minus[j_minus]:
        return float(thresholds[j_plus]), 1.0, predictions[j_plus]
    return float(thresholds[j_minus]), -1.0, -predictions[j_minus]


def boosting_run(adaboost_step, rounds: int = MAX_ROUNDS):
    """``rounds`` rounds of AdaBoost on ``boosting_data()``, every reweighting by ``adaboost_step``.

    Returns ``(stumps, weights_after)``: ``stumps[t] = (threshold, sign, alpha, eps, Z)`` with
    ``Z = sum_i D_t(i) exp(-alpha y_i h(x_i))`` the normaliser of round t (computed here from the
    student's alpha), and ``weights_after[t]`` the weights the student's function returned.
    """
    x, y = boosting_data()
    weights = np.full(len(x), 1.0 / len(x))
    stumps, history = [], []
    for _ in range(int(rounds)):
        threshold, sign, h = best_stump(x, y, weights)
        eps = float(weights[h != y].sum())
        alpha, new_weights = adaboost_step(weights.copy(), y.copy(), h.copy())
        alpha = float(alpha)
        Z = float(np.sum(weights * np.exp(-alpha * y * h)))
        weights = np.asarray(new_weights, dtype=float)
        stumps.append((threshold, sign, alpha, eps, Z))
        history.append(weights)
    return stumps, history


_BOOST_GRID = np.linspace(-0.02, 1.02, 400)


def _boosting_curves(adaboost_step):
    """Everything the widget shows that does not depend on the round slider, for all MAX_ROUNDS."""
    x, y = boosting_data()
    stumps, history = boosting_run(adaboost_step, MAX_ROUNDS)
    alphas = np.array([a for _, _, a, _, _ in stumps])
    signs = np.array([s for _, s, _, _, _ in stumps])
    thresholds = np.array([t for t, *_ in stumps])
    votes_x = np.cumsum(alphas[:, None] * signs[:, None] * np.where(x[None, :] > thresholds[:, None], 1.0, -1.0),
                        axis=0)                                   # (rounds, points): F_t(x_i)
    votes_grid = np.cumsum(alphas[:, None] * signs[:, None]
                           * np.where(_BOOST_GRID[None, :] > thresholds[:, None], 1.0, -1.0), axis=0)
    errors = np.sum(np.sign(votes_x) != y, axis=1)                # ensemble training errors after t rounds
    prod_Z = np.cumprod([Z for *_, Z in stumps])
    eps = np.array([e for _, _, _, e, _ in stumps])
    exp_bound = np.exp(-2.0 * np.cumsum((0.5 - eps) ** 2))
    single = int(np.sum(best_stump(x, y, np.full(len(x), 1.0 / len(x)))[2] != y))
    out = dict(stumps=stumps, history=history, votes_grid=votes_grid, errors=errors, prod_Z=prod_Z,
               exp_bound=exp_bound, abs_alpha=np.cumsum(np.abs(alphas)), single=single)
    return frozen(out)


def _adaboost_figure(c) -> LiveFigure:
    """The AdaBoost figure, built once per student function; renders update its changing artists."""
    from matplotlib.colors import ListedColormap

    x, y = boosting_data()
    n = len(x)
    live = LiveFigure(Figure(figsize=(9.6, 3.2)))
    fig = live.figure
    ax = fig.add_axes([0.04, 0.3, 0.54, 0.6])
    ax2 = fig.add_axes([0.66, 0.3, 0.325, 0.6])
    shade = ax.imshow(np.zeros((1, len(_BOOST_GRID))), extent=(_BOOST_GRID[0], _BOOST_GRID[-1], -1.25, 1.25),
                      aspect="auto", cmap=ListedColormap(["white", "#dce9f5"]), vmin=0, vmax=1,
                      interpolation="nearest", origin="lower")
    vote, = ax.plot(_BOOST_GRID, np.zeros(len(_BOOST_GRID)), drawstyle="steps-mid", color="k", lw=1.2,
                    label="F(x) / Σ|α|  (shaded: predicted +1)")
    pos = ax.scatter(x[y > 0], y[y > 0], s=30, c=_POS, marker="o", alpha=0.8, label="label +1")
    neg = ax.scatter(x[y < 0], y[y < 0], s=30, c=_NEG, marker="s", alpha=0.8, label="label −1")
    stump = ax.axvline(0.5, color="tab:red", ls="--", lw=1, label="stump of this round")
    live.shade, live.vote, live.pos, live.neg, live.stump = live.changes([shade, vote, pos, neg, stump])
    live.changes([ax.axhline(0, color="grey", lw=0.5)] + list(ax.spines.values()))  # over the shade
    live.title = live.changes(ax.set_title(" ", fontsize=9))
    ax.set(xlim=(-0.02, 1.02), ylim=(-1.25, 1.25))
    ax.set_xlabel("x", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=4, fontsize=7, frameon=False)

    ts = np.arange(1, MAX_ROUNDS + 1)
    floor = 0.5 / n  # zero training error drawn at half a point, on the log axis
    ax2.semilogy(ts, np.maximum(c["errors"] / n, floor), "o-", ms=2.5, lw=1, color="k", label="training error")
    ax2.semilogy(ts, c["prod_Z"], color="tab:red", lw=1.2, label="∏ Z_t")
    ax2.semilogy(ts, c["exp_bound"], color="tab:red", ls=":", lw=1, label="exp(−2 Σ (½ − ε_t)²)")
    live.now = live.changes(ax2.axvline(1, color="grey", lw=0.6))
    ax2.set_ylim(floor / 1.5, 1.2)
    ax2.set_xlabel("round t  (error 0 drawn at the bottom)", fontsize=8)
    ax2.tick_params(labelsize=7)
    ax2.yaxis.set_minor_locator(NullLocator())
    ax2.set_title("training error ≤ ∏ Z_t ≤ exp bound", fontsize=9)
    ax2.legend(loc="lower left", fontsize=7, frameon=False)
    return live


def render_adaboost(rounds, *, adaboost_step, cache=None):
    """AdaBoost for ``rounds`` rounds on ``boosting_data()``, every round computed by ``adaboost_step``.

    Left: the data (sizes: weights after round ``rounds``), the normalised vote and the stump of that
    round. Right: the ensemble's training error after t rounds against the bound prod_t Z_t (and
    exp(-2 sum (1/2 - eps_t)^2)). With a ``RenderCache`` all rounds are computed once per function
    and the figure is built once, then updated in place."""
    x, y = boosting_data()
    c = cached(cache, ("boosting", adaboost_step), lambda: _boosting_curves(adaboost_step))
    live = kept_figure(cache, lambda: _adaboost_figure(c), key=adaboost_step)  # its curves are the function's
    t = int(rounds)
    threshold, sign, alpha, eps, Z = c["stumps"][t - 1]
    weights = c["history"][t - 1]
    F_grid = c["votes_grid"][t - 1] / (c["abs_alpha"][t - 1] or 1.0)
    errors = int(c["errors"][t - 1])
    single = c["single"]
    n = len(x)

    live.new_background(adaboost_step)
    live.shade.set_data((F_grid > 0).astype(float)[None, :])
    live.vote.set_ydata(F_grid)
    sizes = 30 + 1500 * weights
    live.pos.set_sizes(sizes[y > 0])
    live.neg.set_sizes(sizes[y < 0])
    live.stump.set_xdata([threshold, threshold])
    live.now.set_xdata([t, t])
    live.title.set_text(f"AdaBoost after {t} rounds: {errors}/{n} training errors")

    side = ">" if sign > 0 else "≤"
    prod_z, exp_bound = float(c["prod_Z"][t - 1]), float(c["exp_bound"][t - 1])
    text = readout(f"round {t}: stump +1 where x {side} {threshold:.3f}, weighted error ε = {eps:.3f}, "
                   f"α = {alpha:.3f}, Z = {Z:.3f} · ensemble training errors {errors}/{n} "
                   f"= {errors / n:.3f} ≤ ∏Z_t = {prod_z:.3f} "
                   f"≤ exp(−2Σ(½−ε_t)²) = {exp_bound:.3f} "
                   f"(best single stump: {single}/{n})",
                   round=t, threshold=threshold, sign=sign, eps=eps, alpha=alpha, z=Z, errors=errors, points=n,
                   training_error=errors / n, prod_z=prod_z, exp_bound=exp_bound, single_stump_errors=int(single))
    return live, text


def adaboost_explorer(*, adaboost_step):
    controls = {"rounds": widgets.IntSlider(value=1, min=1, max=MAX_ROUNDS, description="rounds",
                                            continuous_update=True)}
    return Explorer(render_adaboost, controls,
                    needs={"adaboost_step": adaboost_step}, height="340px",
                    title="AdaBoost with decision stumps")
