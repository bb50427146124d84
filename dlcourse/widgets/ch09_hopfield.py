"""Widgets of chapter 9 (Hopfield networks): every number they show comes from the student's functions.

* ``recall_explorer``: a corrupted digit recalled by the student's ``async_sweep``, sweep by sweep,
  with the energy (the student's ``energy``) after every single-unit update;
* ``capacity_explorer``: the fraction of stored random patterns that are fixed points against the
  load ``s / n`` (the student's ``hebbian_weights`` and ``stable_fraction``), the unstable bits
  (the student's ``crosstalk``), the erf estimate (``flip_probability``), the fraction of wrong bits
  after the student's ``recall`` from a stored pattern (the quantity that jumps at the capacity)
  and the 0.138 capacity;
* ``modern_hopfield_explorer``: one step of the student's ``modern_hopfield_update`` on damaged
  digits, with an inverse-temperature slider.

``nearest_stored`` is the integration check's baseline (the nearest stored digit in Hamming distance), not a widget.

Each widget is a pure ``render_*`` function (controls and student functions in, ``(figure,
readout)`` out) wrapped in an ``Explorer``. None of them contains a solution of a graded function.
"""
from __future__ import annotations

import functools

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

from .explorer import Explorer, RenderCache, cached, frozen, readout, when_idle
from .picture import LiveFigure, kept_figure, round_limits

__all__ = [
    "binarised_digits", "distinct_digits", "recall_bank", "corrupt", "nearest_stored",
    "recall_trajectory", "render_recall", "recall_explorer",
    "N_VALUES", "capacity_table", "recall_loads", "recall_error", "render_capacity", "capacity_explorer",
    "damaged_query", "render_modern_hopfield", "modern_hopfield_explorer",
]

SIDE = 8
N_BITS = SIDE * SIDE
CAPACITY = 0.138


# ------------------------------------------------------------------ data: binarised 8x8 digits

@functools.cache
def _digits():
    from sklearn.datasets import load_digits
    digits = load_digits()
    B = np.where(digits.data > digits.data.mean(axis=0), 1.0, -1.0)
    return frozen((B, digits.target.copy()))


def binarised_digits():
    """The 1797 scikit-learn digits as ±1 patterns (1797, 64): +1 where a pixel is brighter than the
    average digit at that pixel, -1 elsewhere; and their labels (1797,)."""
    B, labels = _digits()
    return B.copy(), labels.copy()


def distinct_digits(count: int, max_overlap: int = 16):
    """Indices of ``count`` digits that differ a lot: scanning the data set in order, a digit is kept
    when its overlap ``p @ q`` with every digit kept so far is at most ``max_overlap`` in absolute
    value (16 of 64 bits: overlap 0.25)."""
    B, _ = _digits()
    kept: list[int] = []
    for i in range(len(B)):
        if all(abs(B[i] @ B[j]) <= max_overlap for j in kept):
            kept.append(i)
            if len(kept) == count:
                break
    return kept


MAX_STORED = 20


@functools.cache
def recall_bank():
    """The digits the recall widget stores, in order: the 8 most distinct ones first, then the first
    digits of the data set (two per class) up to ``MAX_STORED``."""
    first = distinct_digits(8)
    rest = [i for i in range(60) if i not in first]
    return tuple(first + rest[:MAX_STORED - len(first)])


def corrupt(pattern, flipped: int, seed: int):
    """``pattern`` with ``flipped`` distinct bits flipped (drawn with ``default_rng(seed)``)."""
    x = np.array(pattern, dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(x), size=int(flipped), replace=False)
    x[idx] = -x[idx]
    return x


def nearest_stored(P, X):
    """The baseline of recall (Section 5): for each row of ``X``, the stored pattern (row of ``P``) nearest in
    Hamming distance, the number of bits that differ; ties go to the first. A table lookup, no network."""
    P = np.asarray(P, dtype=float)
    X = np.atleast_2d(np.asarray(X, dtype=float))
    distances = np.sum(X[:, None, :] != P[None, :, :], axis=2)
    return P[np.argmin(distances, axis=1)]


# ------------------------------------------------------------------ widget 1: recall, sweep by sweep

MAX_SWEEPS = 12


def recall_trajectory(W, x0, seed, *, energy, async_sweep, max_sweeps=MAX_SWEEPS):
    """Asynchronous recall from ``x0``, recorded unit by unit, with the student's functions only.

    Each sweep draws its order with ``rng.permutation(n)`` (as ``recall`` does) and is run one unit
    at a time as ``async_sweep(W, x, [i])``; the state at the end of the sweep is checked against
    ``async_sweep(W, x_start, order)`` (the whole sweep at once). Stops after a sweep that changes
    nothing. Returns ``(states, energies, boundaries)``: ``states[k]`` after k sweeps, ``energies``
    after every single-unit update (starting with the energy of ``x0``), ``boundaries[k]`` the index
    in ``energies`` where sweep k ends.
    """
    rng = np.random.default_rng(seed)
    x = np.asarray(x0, dtype=float)
    states, energies, boundaries = [x], [float(energy(W, x))], [0]
    n = len(x)
    for _ in range(max_sweeps):
        order = rng.permutation(n)
        start = x
        for i in order:
            x = np.asarray(async_sweep(W, x, [int(i)]), dtype=float)
            energies.append(float(energy(W, x)))
        whole = np.asarray(async_sweep(W, start, order), dtype=float)
        if not np.array_equal(whole, x):
            raise ValueError("async_sweep over a whole order differs from the same updates made one unit "
                             "at a time: does each update use the current state, in the given order?")
        states.append(x)
        boundaries.append(len(energies) - 1)
        if np.array_equal(x, start):
            break
    return states, np.array(energies), boundaries


def _image(ax, pattern, title):
    image = ax.imshow(np.asarray(pattern, dtype=float).reshape(SIDE, SIDE), cmap="gray_r", vmin=-1, vmax=1,
                      interpolation="nearest")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title, fontsize=9)
    return image


def _figure(size) -> LiveFigure:
    """A live figure: a widget keeps it and redraws only what changes (see ``picture.py``)."""
    return LiveFigure(Figure(figsize=size))


def _changing_images(live, images):
    """Mark digit images as changing, with their titles and frames (the frames are drawn over them)."""
    for image in images:
        live.changes([image, image.axes.title] + list(image.axes.spines.values()))
    return images


def _recall_figure() -> LiveFigure:
    live = _figure((9.0, 2.9))
    fig = live.figure
    blank = np.zeros(N_BITS)
    live.images = _changing_images(live, [_image(fig.add_axes([0.01 + 0.135 * j, 0.12, 0.12, 0.68]), blank, " ")
                                          for j in range(3)])
    ax = live.ax = fig.add_axes([0.49, 0.17, 0.49, 0.68])
    live.curve, = live.changes(ax.plot([], [], color="k", lw=1.2))
    live.ends, = live.changes(ax.plot([], [], color="grey", lw=0.5, ls=":", transform=ax.get_xaxis_transform()))
    live.marker, = live.changes(ax.plot([], [], "o", color="tab:red", ms=6))
    live.stored_level = live.changes(ax.axhline(0.0, color="tab:green", lw=0.8, ls="--",  # over the curve
                                                label="energy of the stored digit"))
    live.title = live.changes(ax.set_title(" ", fontsize=9))
    ax.set_xlabel("single-unit updates (dotted: end of a sweep)", fontsize=8)
    ax.set_ylabel("energy E(x)", fontsize=8)
    ax.tick_params(labelsize=7)
    live.on_top(ax.legend(fontsize=7, loc="upper right"))  # over the energy curve
    return live


def render_recall(stored, digit, flipped, sweep, seed, *, hebbian_weights, energy, async_sweep, cache=None):
    """Stored digit, corrupted start, the state after ``sweep`` sweeps, and the energy of every update."""
    B, labels = _digits()
    bank = recall_bank()
    stored, flipped, seed = int(stored), int(flipped), int(seed)
    t = min(int(digit), stored - 1)
    P = B[list(bank[:stored])]
    W = cached(cache, ("W", stored, hebbian_weights),
               lambda: np.asarray(hebbian_weights(P.copy()), dtype=float))
    target = P[t]
    x0 = corrupt(target, flipped, seed)
    states, energies, boundaries = cached(
        cache, ("trajectory", stored, t, flipped, seed, hebbian_weights, energy, async_sweep),
        lambda: recall_trajectory(W, x0, seed + 1, energy=energy, async_sweep=async_sweep))
    stored_energy = cached(cache, ("stored energy", stored, t, hebbian_weights, energy),
                           lambda: float(energy(W, target.copy())))
    sweeps = len(states) - 1
    k = min(int(sweep), sweeps)
    state = states[k]
    wrong = int(np.sum(state != target))
    final = states[-1]
    final_wrong = int(np.sum(final != target))
    rises = int(np.sum(np.diff(energies) > 1e-12))

    live = kept_figure(cache, _recall_figure)
    titles = (f"stored: a {labels[bank[t]]}", f"start: {flipped} flipped", f"after sweep {k}: {wrong} off")
    for image, pattern, title in zip(live.images, (target, x0, state), titles):
        image.set_data(pattern.reshape(SIDE, SIDE))
        image.axes.set_title(title, fontsize=9)
    low, high = min(energies.min(), stored_energy), max(energies.max(), stored_energy)
    pad = 0.05 * (high - low) + 0.5
    limits = round_limits(low - pad, high + pad) + (N_BITS * max(sweeps, 1),)  # round: most moves keep them
    if live.new_background(limits):
        live.ax.set_ylim(*limits[:2])
        live.ax.set_xlim(0, limits[2])
    live.title.set_text(f"{stored} digits stored, load s/n = {stored / N_BITS:.3f}")
    live.stored_level.set_ydata([stored_energy, stored_energy])
    live.curve.set_data(np.arange(len(energies)), energies)
    ends = np.array(boundaries[1:], dtype=float)
    live.ends.set_data(np.repeat(ends, 3), np.tile([0.0, 1.0, np.nan], len(ends)))
    live.marker.set_data([boundaries[k]], [energies[boundaries[k]]])

    if final_wrong == 0:
        outcome, ending = "recalled the stored digit", "recalled"
    elif np.array_equal(final, -target):
        outcome, ending = "ended in the negative of the stored digit", "negative"
    else:
        outcome, ending = f"ended in a spurious state {final_wrong} bits away from the stored digit", "spurious"
    text = readout(f"{stored} digits stored (load {stored / N_BITS:.3f}); digit {t} (a {labels[bank[t]]}) with "
                   f"{flipped} bits flipped; sweep {k} of {sweeps}: energy {energies[boundaries[k]]:.3f} "
                   f"(start {energies[0]:.3f}), {wrong} bits off · {outcome} after {sweeps} sweeps; "
                   f"energy rose {rises} times",
                   stored=stored, load=stored / N_BITS, digit=t, label=int(labels[bank[t]]), flipped=flipped,
                   sweep=k, sweeps=sweeps, energy=float(energies[boundaries[k]]), start_energy=float(energies[0]),
                   stored_energy=stored_energy, bits_off=wrong, outcome=ending, final_bits_off=final_wrong,
                   energy_rises=rises)
    return live, text


def recall_explorer(*, hebbian_weights, energy, async_sweep):
    """Store binarised digits, corrupt one, and watch asynchronous recall sweep by sweep."""
    controls = {
        "stored": widgets.IntSlider(value=4, min=1, max=MAX_STORED, description="stored",
                                    continuous_update=False),
        "digit": widgets.IntSlider(value=0, min=0, max=MAX_STORED - 1, description="digit",
                                   continuous_update=False),
        "flipped": widgets.IntSlider(value=14, min=0, max=32, description="flipped",
                                     continuous_update=False),
        "sweep": widgets.IntSlider(value=1, min=0, max=MAX_SWEEPS, description="sweep"),
        "seed": widgets.IntSlider(value=0, min=0, max=9, description="seed", continuous_update=False),
    }
    return Explorer(render_recall, controls,
                    needs={"hebbian_weights": hebbian_weights, "energy": energy, "async_sweep": async_sweep},
                    height="330px", title="Recall of a corrupted digit, sweep by sweep")


# ------------------------------------------------------------------ widget 2: capacity

N_VALUES = (100, 120, 140, 160, 180, 200)
TRIALS = 8
MAX_LOAD = 0.3


RECALL_PATTERNS = 6     # recall from the first 6 stored patterns at each load
RECALL_MAX_SWEEPS = 12
RETRIEVAL_ERROR = 0.016  # n -> infinity: the fraction of wrong bits of the retrieval state at 0.138 (Amit et al.)


def _loads(n):
    return np.unique(np.round(np.linspace(1, MAX_LOAD * n, 24)).astype(int))


@functools.lru_cache(maxsize=len(N_VALUES))
def _bank(n, seed):
    """The random patterns of every draw: (TRIALS, largest s, n), read-only; smaller loads use the first rows."""
    s_max = int(_loads(n)[-1])
    return frozen(np.where(np.random.default_rng(seed + n).random((TRIALS, s_max, n)) < 0.5, 1.0, -1.0))


def recall_loads(n):
    """The numbers of stored patterns of the recall-error curve: 11 loads from 0.05 to MAX_LOAD."""
    return np.unique(np.round(np.linspace(0.05, MAX_LOAD, 11) * int(n)).astype(int))


def recall_error(n, s, *, hebbian_weights, recall, seed=0):
    """The mean fraction of wrong bits after the student's ``recall`` (at most RECALL_MAX_SWEEPS sweeps,
    rng ``default_rng(seed + 1000 * n + s)``) started *at* each of the first min(s, RECALL_PATTERNS) of
    the s stored patterns (the first draw of ``capacity_table``), in the student's Hebbian network."""
    n, s = int(n), int(s)
    P = _bank(n, seed)[0, :s]
    W = np.asarray(hebbian_weights(P.copy()), dtype=float)
    rng = np.random.default_rng(seed + 1000 * n + s)
    wrong = [np.mean(np.asarray(recall(W, p.copy(), rng, max_sweeps=RECALL_MAX_SWEEPS)[0], dtype=float) != p)
             for p in P[:RECALL_PATTERNS]]
    return float(np.mean(wrong))


def _recall_errors(cache, n, hebbian_weights, recall):
    """The cached {s: recall_error} of one n, filled one load at a time (by a render or while idle)."""
    return cached(cache, ("recall", int(n), hebbian_weights, recall), dict)


def _recall_curve(cache, n, hebbian_weights, recall):
    errors = _recall_errors(cache, n, hebbian_weights, recall)
    svals = recall_loads(n)
    for s in svals:
        if int(s) not in errors:
            errors[int(s)] = recall_error(n, s, hebbian_weights=hebbian_weights, recall=recall)
    return svals / n, np.array([errors[int(s)] for s in svals])


def _one_missing_recall_error(cache, hebbian_weights, recall):
    """Compute one missing point of the recall-error curves (for ``when_idle``); False when none is left."""
    for n in N_VALUES:
        errors = _recall_errors(cache, n, hebbian_weights, recall)
        for s in recall_loads(n):
            if int(s) not in errors:
                try:
                    errors[int(s)] = recall_error(n, s, hebbian_weights=hebbian_weights, recall=recall)
                except Exception:  # noqa: BLE001 - an unfinished exercise: the render names it
                    return False
                return True
    return False


def capacity_table(n, *, hebbian_weights, stable_fraction, crosstalk, seed=0):
    """For random patterns of n bits and the loads of ``_loads(n)``: ``(s, stable, unstable_bits)``.

    ``stable[k]`` is the mean over ``TRIALS`` draws of ``stable_fraction(P, hebbian_weights(P))``
    with s[k] patterns; ``unstable_bits[k]`` the fraction of bits with ``P * C < -(1 - s / n)``
    for ``C = crosstalk(P)`` (ties ``P * C == -(1 - s/n)``, a zero field, count as unstable for
    ``p = -1`` only). The patterns of the smaller loads are the first rows of the larger ones.
    """
    from threadpoolctl import threadpool_limits

    n = int(n)
    svals = _loads(n)
    bank = _bank(n, seed)
    stable = np.zeros(len(svals))
    unstable = np.zeros(len(svals))
    with threadpool_limits(1):  # small matrices: one thread is faster, and kinder to a shared machine
        for k, s in enumerate(svals):
            s = int(s)
            for trial in range(TRIALS):
                P = bank[trial, :s]
                W = np.asarray(hebbian_weights(P.copy()), dtype=float)
                stable[k] += float(stable_fraction(P.copy(), W)) / TRIALS
                margin = P * np.asarray(crosstalk(P.copy()), dtype=float) + (1.0 - s / n)
                unstable[k] += float(np.mean((margin < 0) | ((margin == 0) & (P < 0)))) / TRIALS
    return svals, stable, unstable


def _capacity_figure() -> LiveFigure:
    live = _figure((11.0, 3.2))
    fig = live.figure
    ax1, ax2, ax3 = fig.add_subplot(1, 3, 1), fig.add_subplot(1, 3, 2), fig.add_subplot(1, 3, 3)
    fig.subplots_adjust(left=0.05, right=0.99, bottom=0.16, top=0.89, wspace=0.22)
    measured1, = ax1.plot([], [], "o", ms=4, color="tab:blue", label=f"measured ({TRIALS} draws)")
    estimate1, = ax1.plot([], [], color="k", lw=1.2, label="erf estimate (1 − p)ⁿ")
    ax1.axvline(CAPACITY, color="tab:red", ls="--", lw=1, label="0.138")
    ax1.set(xlim=(0, MAX_LOAD), ylim=(-0.03, 1.03))
    ax1.set_xlabel("load s / n", fontsize=8)
    ax2.set_yscale("log")
    measured2, = ax2.plot([], [], "o", ms=4, color="tab:blue", label="measured: P·C < −(1 − s/n)")
    estimate2, = ax2.plot([], [], color="k", lw=1.2, label="flip_probability(s, n)")
    ax2.axvline(CAPACITY, color="tab:red", ls="--", lw=1)
    ax2.set(xlim=(0, MAX_LOAD), ylim=(1e-5, 0.1))
    ax2.yaxis.set_minor_locator(NullLocator())  # minor log ticks are slow to lay out and add nothing here
    ax2.yaxis.set_major_locator(FixedLocator([1e-5, 1e-4, 1e-3, 1e-2, 1e-1]))
    ax2.yaxis.set_major_formatter(FixedFormatter(["0.001 %", "0.01 %", "0.1 %", "1 %", "10 %"]))  # no mathtext
    ax2.set_xlabel("load s / n", fontsize=8)
    ax2.set_title("fraction of unstable bits", fontsize=9)
    measured3, = ax3.plot([], [], "o-", ms=4, lw=1, color="tab:purple",
                          label=f"your recall from a stored pattern ({RECALL_PATTERNS} patterns)")
    ax3.plot([CAPACITY], [RETRIEVAL_ERROR], "kx", ms=7, label="n → ∞: 1.6 % at 0.138")
    ax3.axvline(CAPACITY, color="tab:red", ls="--", lw=1)
    ax3.set(xlim=(0, MAX_LOAD), ylim=(-0.01, 0.35))
    ax3.set_xlabel("load s / n", fontsize=8)
    ax3.set_title("fraction of wrong bits after recall", fontsize=9)
    for ax in (ax1, ax2, ax3):
        ax.tick_params(labelsize=7)
    live.lines = live.changes([measured1, estimate1, measured2, estimate2])
    live.recall_line = live.changes(measured3)
    ax3.legend(fontsize=7, loc="upper left")
    ax1.legend(fontsize=7, loc="lower left")  # background: a legend costs ~14 ms to draw, and the curves avoid it
    ax2.legend(fontsize=7, loc="lower right")
    live.title = live.changes(ax1.set_title(" ", fontsize=9))
    return live


def render_capacity(n, *, hebbian_weights, stable_fraction, crosstalk, flip_probability, recall=None, cache=None):
    """Left: fraction of exactly stable patterns against s/n, measured and the erf estimate (1 - p)^n.
    Middle: fraction of unstable bits, measured with the cross-talk, against p = flip_probability.
    Right (with ``recall``): fraction of wrong bits after recall from a stored pattern (``recall_error``)."""
    n = int(n)
    svals, stable, unstable = cached(
        cache, ("table", n, hebbian_weights, stable_fraction, crosstalk),
        lambda: capacity_table(n, hebbian_weights=hebbian_weights, stable_fraction=stable_fraction,
                               crosstalk=crosstalk))
    s_all = np.arange(1, int(MAX_LOAD * n) + 1)
    p = cached(cache, ("p", n, flip_probability),
               lambda: np.array([float(flip_probability(int(s), n)) for s in s_all]))
    estimate = (1.0 - p) ** n
    loads = svals / n

    live = kept_figure(cache, _capacity_figure)
    live.new_background("axes")  # fixed limits: nothing in the background changes
    measured1, estimate1, measured2, estimate2 = live.lines
    measured1.set_data(loads, stable)
    estimate1.set_data(s_all / n, estimate)
    measured2.set_data(loads, np.where(unstable > 0, unstable, np.nan))
    estimate2.set_data(s_all / n, p)
    live.title.set_text(f"fraction of stored patterns that are fixed points, n = {n}")
    recall_text, recall_values = "", {}
    if recall is not None:
        recall_x, recall_y = _recall_curve(cache, n, hebbian_weights, recall)
        live.recall_line.set_data(recall_x, recall_y)
        below, above = recall_y[recall_x < 0.12], recall_y[recall_x > 0.16]
        recall_text = (f" · wrong bits after recall: at most {below.max():.1%} below load 0.12, "
                       f"{above.mean():.1%} on average above 0.16")
        recall_values = {"recall_wrong_below": float(below.max()), "recall_wrong_above": float(above.mean())}

    s_c = int(round(CAPACITY * n))
    k = int(np.argmin(np.abs(svals - s_c)))
    p_c = float(flip_probability(s_c, n))
    stable_1000 = (1 - float(flip_probability(138, 1000))) ** 1000
    text = readout(f"n = {n}: at s = {s_c} (load {s_c / n:.3f}) the erf estimate gives p = {p_c:.2%} unstable bits "
                   f"and (1 − p)^n = {(1 - p_c) ** n:.2f} stable patterns; measured at s = {svals[k]}: "
                   f"{stable[k]:.2f} stable, {unstable[k]:.2%} unstable bits · the same load at n = 1000 "
                   f"would leave (1 − p)^1000 = {stable_1000:.3f}" + recall_text,
                   n=n, s=s_c, load=s_c / n, flip_probability=p_c, stable_estimate=(1 - p_c) ** n,
                   measured_s=int(svals[k]), stable=float(stable[k]), unstable_bits=float(unstable[k]),
                   stable_estimate_1000=stable_1000, **recall_values)
    return live, text


def capacity_explorer(*, hebbian_weights, stable_fraction, crosstalk, flip_probability, recall=None):
    """Stable patterns, unstable bits and (with ``recall``) wrong bits after recall against the load, for
    n from 100 to 200: the tables precomputed, the recall curves of the other n computed while idle."""
    cache = RenderCache()
    try:  # precompute every n, so that moving the slider only redraws
        for n in N_VALUES:
            cache.get(("table", n, hebbian_weights, stable_fraction, crosstalk),
                      lambda n=n: capacity_table(n, hebbian_weights=hebbian_weights,
                                                 stable_fraction=stable_fraction, crosstalk=crosstalk))
    except Exception:  # noqa: BLE001 - unfinished exercises: the explorer names them on render
        pass
    controls = {"n": widgets.SelectionSlider(options=list(N_VALUES), value=120, description="neurons n",
                                             continuous_update=False)}
    needs = {"hebbian_weights": hebbian_weights, "stable_fraction": stable_fraction,
             "crosstalk": crosstalk, "flip_probability": flip_probability}
    if recall is not None:  # the notebooks of earlier releases call the explorer without it
        needs["recall"] = recall
    explorer = Explorer(render_capacity, controls, cache=cache, needs=needs,
                        height="350px", title="Capacity: stable patterns and recall against the load")
    if recall is not None:  # the first render computed its own n; the others one load at a time, while idle
        when_idle(functools.partial(_one_missing_recall_error, cache, hebbian_weights, recall))
    return explorer


# ------------------------------------------------------------------ widget 3: modern Hopfield

MODERN_STORED = 20
DAMAGES = ("hide the bottom half", "flip 16 bits", "hide the left half")


def damaged_query(pattern, damage):
    """A damaged copy of a ±1 pattern: unknown pixels set to 0, or 16 bits flipped (seed 0)."""
    x = np.array(pattern, dtype=float).reshape(SIDE, SIDE)
    if damage == "hide the bottom half":
        x[SIDE // 2:] = 0.0
    elif damage == "hide the left half":
        x[:, :SIDE // 2] = 0.0
    elif damage == "flip 16 bits":
        return corrupt(pattern, 16, 0)
    else:
        raise ValueError(f"unknown damage {damage!r}")
    return x.ravel()


def _modern_figure() -> LiveFigure:
    _, labels = _digits()
    live = _figure((9.0, 2.9))
    fig = live.figure
    blank = np.zeros(N_BITS)
    live.images = _changing_images(live, [_image(fig.add_axes([0.01 + 0.16 * j, 0.12, 0.14, 0.68]), blank, " ")
                                          for j in range(3)])
    ax = fig.add_axes([0.53, 0.2, 0.45, 0.62])
    live.bars = live.changes(list(ax.bar(range(MODERN_STORED), np.zeros(MODERN_STORED), color="tab:blue")))
    live.changes(list(ax.spines.values()))  # the frame, over the bars
    ax.set_xticks(range(MODERN_STORED), [str(lab) for lab in labels[:MODERN_STORED]], fontsize=7)
    ax.set_ylim(0, 1)
    ax.set_xlabel("stored pattern (its class; red: the damaged one)", fontsize=8)
    ax.tick_params(labelsize=7)
    live.title = live.changes(ax.set_title(" ", fontsize=9))
    return live


def render_modern_hopfield(beta, digit, damage, *, modern_hopfield_update, cache=None):
    """The damaged query, one update of the student's ``modern_hopfield_update`` and its softmax weights.

    The weights come from the same function: with the stored patterns augmented by an identity block,
    ``[X, I]``, and the query by zeros, ``[xi, 0]``, the scores are unchanged and the last s outputs
    are the softmax weights themselves.
    """
    B, labels = _digits()
    X = B[:MODERN_STORED]
    s = len(X)
    t = int(digit)
    xi = damaged_query(X[t], damage)
    X_aug = np.hstack([X, np.eye(s)])
    xi_aug = np.r_[xi, np.zeros(s)]
    out_aug = np.asarray(modern_hopfield_update(X_aug, xi_aug, float(beta)), dtype=float)
    if out_aug.shape != (N_BITS + s,):
        raise ValueError(f"modern_hopfield_update returned shape {out_aug.shape} for a query of shape "
                         f"{xi_aug.shape}: the output should have the query's shape")
    out, weights = out_aug[:N_BITS], out_aug[N_BITS:]
    top = int(np.argmax(weights))
    n_eff = 1.0 / float(np.sum(weights ** 2))
    rms = float(np.sqrt(np.mean((out - X[t]) ** 2)))

    live = kept_figure(cache, _modern_figure)
    live.new_background("axes")  # fixed limits: nothing in the background changes
    for image, pattern, title in zip(live.images, (xi, np.clip(out, -1, 1), X[t]),
                                     ("query (grey: unknown)", "one update", f"stored digit {t}")):
        image.set_data(pattern.reshape(SIDE, SIDE))
        image.axes.set_title(title, fontsize=9)
    for j, bar in enumerate(live.bars):
        bar.set_height(weights[j])
        bar.set_color("tab:red" if j == t else "tab:blue")
    live.title.set_text(f"softmax weights, β = {beta:.3g}")
    text = readout(f"β = {beta:.3g}: largest weight {weights[top]:.3f} on stored pattern {top} (a {labels[top]}); "
                   f"the query came from pattern {t} (a {labels[t]}); effective number of patterns averaged "
                   f"1/Σp² = {n_eff:.2f}; RMS distance of the output to pattern {t}: {rms:.3f}",
                   beta=float(beta), largest_weight=float(weights[top]), top=top, top_label=int(labels[top]),
                   digit=t, label=int(labels[t]), damage=damage, effective_patterns=n_eff, rms=rms)
    return live, text


def modern_hopfield_explorer(*, modern_hopfield_update):
    """One retrieval step of a modern Hopfield network on 20 stored digits, with an inverse temperature."""
    controls = {
        "beta": widgets.FloatLogSlider(value=0.05, base=10, min=-3, max=1, step=0.1, description="β",
                                       continuous_update=False, readout_format=".3g"),
        "digit": widgets.IntSlider(value=3, min=0, max=MODERN_STORED - 1, description="digit",
                                   continuous_update=False),
        "damage": widgets.Dropdown(options=list(DAMAGES), value=DAMAGES[0], description="damage"),
    }
    return Explorer(render_modern_hopfield, controls, needs={"modern_hopfield_update": modern_hopfield_update},
                    height="330px", title="Modern Hopfield retrieval: one softmax step")
