"""Widgets of chapter 5 (recurrent networks).

Pure render functions ``render_*(**controls, **student_functions) -> (figure, readout)``
and factories returning an :class:`Explorer`:

- ``gradient_norm_explorer(jacobian_norms)``: ``||d z_T / d z_t||`` against the lag for
  ``U = sigma Q`` (Q orthogonal, so every singular value of U is sigma), on a log scale, with
  the bound ``sigma^(T-t)``; readout: the ratio of the first norm to the last;
- ``lru_explorer(lru_init, lru_eigenvalues, linear_scan)``: the LRU's eigenvalues on the
  unit disc for ``r_min``/``r_max``/``max_phase`` sliders and their impulse responses;
- ``lstm_gate_explorer(lstm_cell, model=None)``: the i, f, o gates, as heat maps, of the LSTM the
  notebook trained on the first-token task (``model``), or of random weights over a pulse sequence
  (gates read off the student's cell by probing, see :func:`lstm_gates`);
- ``heldout_baselines``, ``char_rnn_cross_entropy``, ``sample_char_rnn``: the unigram and bigram
  baselines of held-out text, and the cross-entropy and samples of a character RNN trained by the
  student's ``train_char_rnn`` on ``dlcourse.data.language_reference()``;
- ``heldout_trigram``: the interpolated trigram count model on held-out text (weights chosen on validation
  text), the baseline the small models of ch05 and ch06 do not beat in their budget;
- ``zen_of_python``, ``unigram_bigram_entropy``: superseded by the corpus (issue 29), kept for notebooks already
  handed out; ``train_char_rnn`` (a complete loop) lives in ``dlcourse.compat.ch05_rnn`` and is found here only
  by the module's ``__getattr__``.
"""
from __future__ import annotations

import functools

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from ..drivers.ch05_rnn import sample_text
from .explorer import Explorer, cached, readout
from .picture import LiveFigure, kept_figure


def __getattr__(name):
    """Names of earlier releases that are complete answers, from ``dlcourse.compat`` (on first use only)."""
    if name == "train_char_rnn":
        from dlcourse.compat import ch05_rnn
        return getattr(ch05_rnn, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "gradient_setup", "render_gradient_norm", "gradient_norm_explorer",
    "impulse_responses", "render_lru", "lru_explorer",
    "lstm_gates", "pulse_sequence", "render_lstm_gate", "lstm_gate_explorer",
    "first_token_sequence", "render_trained_lstm_gate", "trained_lstm_gate_explorer",
    "zen_of_python", "sample_char_rnn", "char_rnn_cross_entropy", "unigram_bigram_entropy",
    "heldout_baselines", "heldout_trigram",
]


def _slider(value, lo, hi, step, description, integer=False):
    cls = widgets.IntSlider if integer else widgets.FloatSlider
    return cls(value=value, min=lo, max=hi, step=step, description=description,
               continuous_update=False, style={"description_width": "initial"})


# ------------------------------------------------------------ vanishing / exploding gradients

def gradient_setup(sigma: float, T: int, input_scale: float, seed: int = 0, m: int = 16, n: int = 4):
    """(X, U, V) of an Elman RNN with U = sigma Q (Q a seeded random orthogonal matrix)."""
    rng = np.random.default_rng(seed)
    Q, R = np.linalg.qr(rng.standard_normal((m, m)))
    Q = Q * np.sign(np.diag(R))
    V = rng.standard_normal((m, n)) / np.sqrt(n)
    X = input_scale * rng.standard_normal((int(T), n))
    return X, sigma * Q, V


DECADES = 5  # the norm axis spans whole blocks of 5 decades: most moves keep its limits
T_MAX = 100  # the lag axis spans the longest sequence the slider allows: moving T keeps the axes


def _gradient_norm_figure() -> LiveFigure:
    live = LiveFigure(Figure(figsize=(6.2, 3.2), dpi=80))
    ax = live.ax = live.figure.subplots()
    ax.set_yscale("log")
    live.norms, = live.changes(ax.plot([], [], "o-", ms=3, label=r"$\|\partial z_T/\partial z_t\|_2$ (yours)"))
    live.bound, = live.changes(ax.plot([], [], "--", color="gray", label=r"bound $\sigma^{T-t}$"))
    ax.set(xlabel="lag T - t", ylabel="spectral norm")
    live.title = live.changes(ax.set_title(" "))
    ax.grid(True, which="major", alpha=0.3)
    ax.minorticks_off()
    live.on_top(ax.legend(loc="lower left", fontsize=8))  # over the curves
    live.figure.subplots_adjust(left=0.12, right=0.97, bottom=0.16, top=0.9)
    return live


def render_gradient_norm(sigma, T, input_scale, seed, *, jacobian_norms, cache=None):
    X, U, V = gradient_setup(sigma, T, input_scale, seed)
    norms = np.asarray(jacobian_norms(X, U, V), dtype=float)
    T = len(X)
    lags = np.arange(T - 1, -1, -1)  # entry t belongs to z_{t+1}: lag T - 1 - t
    shown = np.maximum(norms, 1e-300)
    bound = sigma ** lags.astype(float)
    values = np.log10(np.concatenate([shown[np.isfinite(shown)], bound]))
    low = DECADES * np.floor(values.min() / DECADES)
    high = DECADES * np.ceil(max(values.max(), low + 1) / DECADES)
    live = kept_figure(cache, _gradient_norm_figure)
    longest = max(T, T_MAX)
    if live.new_background((longest, low, high)):
        live.ax.set_xlim(-0.02 * longest, 1.02 * (longest - 1))
        live.ax.set_ylim(10.0 ** (low - 0.2), 10.0 ** (high + 0.2))
    live.norms.set_data(lags, shown)
    live.bound.set_data(lags, bound)
    live.title.set_text(f"U = {sigma:.2f} Q, input scale {input_scale:.1f}")
    ratio = norms[0] / norms[-1] if norms[-1] != 0 else np.inf
    regime = "vanishing" if ratio < 0.1 else "exploding" if ratio > 10 else "roughly preserved"
    text = readout(f"σ₁(U) = {sigma:.2f}, T = {T}: first/last norm ‖∂z_T/∂z_1‖ / ‖∂z_T/∂z_T‖ = {ratio:.3g} "
                   f"({regime}); bound σ^(T-1) = {sigma ** (T - 1):.3g}",
                   sigma=sigma, T=T, ratio=float(ratio), regime=regime, bound=sigma ** (T - 1))
    return live, text


def gradient_norm_explorer(*, jacobian_norms):
    controls = {
        "sigma": _slider(0.9, 0.5, 1.5, 0.05, "σ₁(U)"),
        "T": _slider(50, 5, T_MAX, 5, "T", integer=True),
        "input_scale": _slider(0.0, 0.0, 2.0, 0.1, "input scale"),
        "seed": _slider(0, 0, 9, 1, "seed", integer=True),
    }
    return Explorer(render_gradient_norm, controls, needs={"jacobian_norms": jacobian_norms},
                    height="300px", columns=4, title="Vanishing and exploding gradients in an Elman RNN")


# ------------------------------------------------------------------------------ the LRU

def impulse_responses(lam, T, linear_scan):
    """z_t (T, m) of z_t = lam * z_{t-1} + b_t with b_1 = 1, b_t = 0 after (so z_t = lam^(t-1))."""
    lam = np.asarray(lam)
    a = np.broadcast_to(lam, (T, lam.shape[0])).copy()
    b = np.zeros((T, lam.shape[0]), dtype=complex)
    b[0] = 1.0
    return np.asarray(linear_scan(a, b))


MAX_MODES = 64


def _lru_figure(T) -> LiveFigure:
    """The unit circle and the three panels' axes; the eigenvalues and responses change with the controls."""
    live = LiveFigure(Figure(figsize=(10, 3.3), dpi=72))
    fig = live.figure
    grid = fig.add_gridspec(1, 3, width_ratios=[1, 1.3, 1.1], left=0.05, right=0.98, bottom=0.15, top=0.9,
                            wspace=0.3)
    ax0, ax1, ax2 = (fig.add_subplot(grid[i]) for i in range(3))
    live.theta = np.linspace(0, 2 * np.pi, 200)
    live.ring, = live.changes(ax0.fill(np.zeros(3), np.zeros(3), color="tab:blue", alpha=0.12, lw=0))
    live.changes([ax0.plot(np.cos(live.theta), np.sin(live.theta), color="black", lw=1)[0],  # over the ring
                  ax0.axhline(0, color="gray", lw=0.5), ax0.axvline(0, color="gray", lw=0.5)])
    live.points = live.changes(ax0.scatter(np.zeros(1), np.zeros(1), s=16, zorder=3))
    ax0.set(aspect="equal", xlim=(-1.1, 1.1), ylim=(-1.1, 1.1), title="λ = exp(-exp ν + iφ)")
    t = np.arange(1, T + 1)
    live.curves = live.changes([ax1.plot(t, np.ones(T), lw=1)[0] for _ in range(MAX_MODES)])
    ax1.set_yscale("log")
    ax1.set(xlabel="t (steps after the impulse)", ylabel="|z_t| from linear_scan", ylim=(1e-8, 2),
            xlim=(1, T), title="impulse responses |λ|^(t-1)")
    ax1.minorticks_off()
    ax1.grid(True, alpha=0.3)
    live.slow, = live.changes(ax2.plot(t, np.zeros(T), lw=1.2))
    live.fast, = live.changes(ax2.plot(t, np.zeros(T), lw=1.2, ls="--"))
    ax2.set(xlabel="t", ylabel="Re z_t", ylim=(-1.05, 1.05), xlim=(1, T), title="oscillation: phase φ per step")
    ax2.grid(True, alpha=0.3)
    live.legend = live.changes(ax2.legend([live.slow, live.fast], ["slowest", "fastest"], fontsize=7,
                                          loc="lower right"))
    return live


def render_lru(r_min, r_max, max_phase, m, *, lru_init, lru_eigenvalues, linear_scan, T=200, seed=0, cache=None):
    swapped = r_min > r_max
    if swapped:
        r_min, r_max = r_max, r_min
    nu, phi = lru_init(int(m), r_min, r_max, max_phase, np.random.default_rng(seed))
    lam = np.asarray(lru_eigenvalues(nu, phi))
    z = impulse_responses(lam, T, linear_scan)
    r = np.abs(lam)
    order = np.argsort(r)

    live = kept_figure(cache, lambda: _lru_figure(T))
    live.new_background(T)  # the axes depend on T only
    lo, hi = (r_min - 1e-3, r_max + 1e-3) if r_max - r_min < 2e-3 else (r_min, r_max)
    shade = plt.cm.viridis(np.clip((r - lo) / (hi - lo), 0, 1))
    theta = live.theta
    ring = np.concatenate([r_max * np.exp(1j * theta), r_min * np.exp(-1j * theta)])
    live.ring.set_xy(np.column_stack([ring.real, ring.imag]))
    live.points.set_offsets(np.column_stack([lam.real, lam.imag]))
    live.points.set_facecolors(shade)
    magnitude = np.maximum(np.abs(z), 1e-300)
    for k, curve in enumerate(live.curves):
        if k < len(order):
            j = order[k]
            curve.set_ydata(magnitude[:, j])
            curve.set_color(shade[j])
            curve.set_visible(True)
        else:
            curve.set_visible(False)
    slow, fast = order[-1], order[0]
    live.slow.set_ydata(z[:, slow].real)
    live.slow.set_color(shade[slow])
    live.fast.set_ydata(z[:, fast].real)
    live.fast.set_color(shade[fast])
    texts = live.legend.get_texts()
    texts[0].set_text(f"slowest, |λ| = {r[slow]:.3f}")
    texts[1].set_text(f"fastest, |λ| = {r[fast]:.3f}")
    for handle, j in zip(live.legend.legend_handles, (slow, fast)):
        handle.set_color(shade[j])

    r_top = r[slow]
    half_life = np.log(2) / -np.log(r_top) if r_top < 1 else np.inf
    inside = bool(np.all(r < 1))
    text = (f"{int(m)} eigenvalues, |λ| from {r.min():.3f} to {r.max():.3f}; all inside the unit circle: "
            f"{'yes' if inside else 'NO'}; slowest mode: half-life {half_life:.1f} steps, "
            f"|z_{T}| = {np.abs(z[-1, slow]):.2e}")
    if swapped:
        text += " (r_min > r_max: swapped)"
    text = readout(text, m=int(m), modulus_min=float(r.min()), modulus_max=float(r.max()), inside=inside,
                   half_life=float(half_life), T=T, last_response=float(np.abs(z[-1, slow])), swapped=swapped)
    return live, text


def lru_explorer(*, lru_init, lru_eigenvalues, linear_scan):
    controls = {
        "r_min": _slider(0.8, 0.0, 0.999, 0.005, "r_min"),
        "r_max": _slider(0.99, 0.0, 0.999, 0.001, "r_max"),
        "max_phase": _slider(0.5, 0.0, float(np.round(2 * np.pi, 2)), 0.05, "max phase"),
        "m": _slider(16, 1, 64, 1, "m", integer=True),
    }
    return Explorer(render_lru, controls, height="300px", columns=4,
                    needs={"lru_init": lru_init, "lru_eigenvalues": lru_eigenvalues, "linear_scan": linear_scan},
                    title="LRU eigenvalues and impulse responses")


# ------------------------------------------------------------------------------ LSTM gates

PULSES = (5, 30)


def pulse_sequence(input_gain, T=60, seed=0):
    """Inputs (T, 2): channel 0 holds pulses of height input_gain at PULSES, channel 1 weak noise."""
    rng = np.random.default_rng(1000 + seed)
    X = np.zeros((T, 2))
    X[[p for p in PULSES if p < T], 0] = input_gain
    X[:, 1] = 0.1 * rng.standard_normal(T)
    return X


def lstm_weights(m, n, forget_bias, seed=0):
    rng = np.random.default_rng(seed)
    W_ih = rng.standard_normal((4 * m, n))
    W_hh = rng.standard_normal((4 * m, m)) / np.sqrt(m)
    b_ih = 0.1 * rng.standard_normal(4 * m)
    b_hh = np.zeros(4 * m)
    b_hh[m:2 * m] = forget_bias
    return W_ih, W_hh, b_ih, b_hh


def lstm_gates(lstm_cell, X, W_ih, W_hh, b_ih, b_hh):
    """Run lstm_cell over X (T, n) from zero states; return dict of (T, m) arrays i, f, o, c, h.

    The gates at step t depend on (x_t, h_{t-1}) only, so they are read off the cell by two
    probes with the g-rows of the weights replaced: with g = 0 and c = 1 the cell returns
    c_new = f; with g = 1/2 and c = 0 it returns c_new = i/2 and h_new = o tanh(i/2).
    """
    m = W_hh.shape[1]
    g_rows = slice(2 * m, 3 * m)
    W_ih0, W_hh0, b_hh0 = W_ih.copy(), W_hh.copy(), b_hh.copy()
    W_ih0[g_rows] = 0.0
    W_hh0[g_rows] = 0.0
    b_hh0[g_rows] = 0.0
    b_zero, b_half = b_ih.copy(), b_ih.copy()
    b_zero[g_rows] = 0.0
    b_half[g_rows] = np.arctanh(0.5)
    h, c = np.zeros(m), np.zeros(m)
    out = {key: [] for key in ("i", "f", "o", "c", "h")}
    for x in X:
        _, f = lstm_cell(x, h, np.ones(m), W_ih0, W_hh0, b_zero, b_hh0)
        h2, c2 = lstm_cell(x, h, np.zeros(m), W_ih0, W_hh0, b_half, b_hh0)
        c2, h2 = np.asarray(c2, dtype=float), np.asarray(h2, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            o = np.where(np.abs(c2) > 1e-12, h2 / np.tanh(c2), np.nan)
        h, c = lstm_cell(x, h, c, W_ih, W_hh, b_ih, b_hh)
        for key, value in zip(("i", "f", "o", "c", "h"), (2 * c2, f, o, c, h)):
            out[key].append(np.asarray(value, dtype=float))
    return {key: np.array(value) for key, value in out.items()}


MAX_GAIN = 6.0


def _lstm_gate_figure(m, T) -> LiveFigure:
    """Axes for the input, the three gates (units x time) and the carried product of forget gates."""
    live = LiveFigure(Figure(figsize=(7.2, 5.6), dpi=80))
    axes = live.figure.subplots(5, 1, sharex=True, gridspec_kw={
        "height_ratios": [0.6, 1, 1, 1, 0.8], "left": 0.1, "right": 0.9, "top": 0.98, "bottom": 0.08, "hspace": 0.12})
    live.pulses, = live.changes(axes[0].plot(np.zeros(T), color="black", lw=1, label="pulses"))
    live.noise, = live.changes(axes[0].plot(np.zeros(T), color="gray", lw=0.6, label="noise"))
    axes[0].set_ylim(-1.0, 1.1 * MAX_GAIN)
    axes[0].set_ylabel("x_t", fontsize=8)
    live.images = []
    for ax, name in zip(axes[1:4], ("input i", "forget f", "output o")):
        live.images.append(live.changes(ax.imshow(np.zeros((m, T)), aspect="auto", vmin=0, vmax=1, cmap="viridis",
                                                  interpolation="nearest", extent=(-0.5, T - 0.5, m - 0.5, -0.5))))
        live.changes(list(ax.spines.values()))  # the frame, over the image
        ax.set_ylabel(f"{name}\nunit", fontsize=8)
    top, bottom = axes[1].get_position(), axes[3].get_position()
    live.figure.colorbar(live.images[0], cax=live.figure.add_axes([0.915, bottom.y0, 0.015, top.y1 - bottom.y0]))
    axes[4].set_yscale("log")
    live.carry, = live.changes(axes[4].plot(np.arange(T), np.ones(T), color="tab:red", lw=1.2))
    axes[4].set_ylim(1e-6, 2)
    axes[4].minorticks_off()
    axes[4].set_ylabel(f"∏ f since t={PULSES[0]}", fontsize=8)
    axes[4].set_xlabel("t")
    axes[4].grid(True, alpha=0.3)
    for q in PULSES:
        axes[0].axvline(q, color="gray", lw=0.6, ls=":")
    for ax in axes:
        ax.tick_params(labelsize=7)
    return live


def render_lstm_gate(forget_bias, input_gain, seed, *, lstm_cell, m=8, T=60, cache=None):
    X = pulse_sequence(input_gain, T, seed)
    gates = lstm_gates(lstm_cell, X, *lstm_weights(m, X.shape[1], forget_bias, seed))
    live = kept_figure(cache, lambda: _lstm_gate_figure(m, T))
    live.new_background((m, T))
    live.pulses.set_ydata(X[:, 0])
    live.noise.set_ydata(X[:, 1])
    for image, key in zip(live.images, "ifo"):
        image.set_data(gates[key].T)
    p = PULSES[0]
    carry = np.full(T, np.nan)  # mean over units of prod_{s=p+1}^{t} f_s = d c_t / d c_p along the cell path
    carry[p:] = np.cumprod(np.vstack([np.ones(m), gates["f"][p + 1:]]), axis=0).mean(axis=1)
    live.carry.set_ydata(carry)
    mean_i, mean_f, mean_o = (float(np.nanmean(gates[key])) for key in "ifo")
    text = readout(f"mean gates: i = {mean_i:.2f}, f = {mean_f:.2f}, "
                   f"o = {mean_o:.2f}; cell-path memory ∂c_{p + 10}/∂c_{p} = ∏ f over 10 steps "
                   f"(mean over units) = {carry[p + 10]:.3g}",
                   mean_i=mean_i, mean_f=mean_f, mean_o=mean_o, memory=float(carry[p + 10]), memory_steps=10)
    return live, text


def lstm_gate_explorer(*, lstm_cell, model=None):
    """Gate activations of an LSTM run by the student's cell: of ``model`` (the weights of the LSTM trained
    on the first-token task, see :func:`render_trained_lstm_gate`) when given, else of random weights."""
    if model is not None:
        return trained_lstm_gate_explorer(lstm_cell=lstm_cell, model=model)
    controls = {
        "forget_bias": _slider(0.0, -4.0, 6.0, 0.5, "forget-gate bias"),
        "input_gain": _slider(3.0, 0.0, MAX_GAIN, 0.5, "pulse height"),
        "seed": _slider(0, 0, 9, 1, "seed", integer=True),
    }
    return Explorer(render_lstm_gate, controls, needs={"lstm_cell": lstm_cell}, height="470px",
                    title="LSTM gate activations over a sequence")


# ------------------------------------------------------------- a character-level RNN (BPTT)

def zen_of_python() -> str:
    """The Zen of Python (``import this``), decoded from the rot13 text that ships with Python."""
    import codecs
    import contextlib
    import io
    with contextlib.redirect_stdout(io.StringIO()):  # the first import prints the poem
        import this
    return codecs.decode(this.s, "rot13")


def char_rnn_cross_entropy(text, U, V, W, chars):
    """Mean cross-entropy (nats) of the next character of ``text`` under the Elman RNN (U, V, W), from z = 0."""
    index = {c: i for i, c in enumerate(chars)}
    data = np.array([index[c] for c in text])
    U, V, W = (np.asarray(a, dtype=float) for a in (U, V, W))
    inputs = V[:, data[:-1]].T                     # V x_t for one-hot x_t: a column of V per step
    Z = np.empty((len(inputs), U.shape[0]))
    z = np.zeros(U.shape[0])
    for t, vx in enumerate(inputs):
        z = np.tanh(U @ z + vx)
        Z[t] = z
    Y = Z @ W.T
    top = Y.max(axis=1, keepdims=True)
    log_norm = top[:, 0] + np.log(np.exp(Y - top).sum(axis=1))
    return float(np.mean(log_norm - Y[np.arange(len(Y)), data[1:]]))


def unigram_bigram_entropy(text):
    """(unigram, bigram) cross-entropies in nats of the text under its own character statistics."""
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    data = np.array([index[c] for c in text])
    p = np.bincount(data, minlength=len(chars)) / len(data)
    unigram = float(-(p[p > 0] * np.log(p[p > 0])).sum())
    counts = np.zeros((len(chars), len(chars)))
    np.add.at(counts, (data[:-1], data[1:]), 1)
    cond = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    bigram = float(-np.log(cond[data[:-1], data[1:]]).mean())
    return unigram, bigram


@functools.lru_cache(maxsize=8)  # the same texts for every notebook graded in a process
def heldout_baselines(train_text, held_text):
    """(unigram, bigram) cross-entropies in nats of ``held_text``'s characters (after the first) under the
    character and next-character frequencies of ``train_text``, both with add-one smoothing over the
    characters of ``train_text`` (``held_text`` may use no other)."""
    chars = sorted(set(train_text))
    index = {c: i for i, c in enumerate(chars)}
    train = np.array([index[c] for c in train_text])
    held = np.array([index[c] for c in held_text])
    K = len(chars)
    p = (np.bincount(train, minlength=K) + 1.0) / (len(train) + K)
    counts = np.ones((K, K))
    np.add.at(counts, (train[:-1], train[1:]), 1.0)
    cond = counts / counts.sum(axis=1, keepdims=True)
    return float(-np.log(p[held[1:]]).mean()), float(-np.log(cond[held[:-1], held[1:]]).mean())


def heldout_trigram(train_text, val_text, held_text):
    """The interpolated trigram count model of ``train_text`` on ``held_text``: ``{"cross_entropy": nats per
    character of held_text[2:], "weights": (l3, l2, l1)}``.

    p(c | a b) = l3 n(a b c) / n(a b .) + l2 n(b c) / n(b .) + l1 (n(c) + 1) / (N + K), the counts n of the
    training text (a ratio with an empty history counts 0), the weights (on a grid of step 0.05, l1 > 0) those
    of the smallest cross-entropy on ``val_text``. A model without parameters to learn: counting 290,000
    characters takes a fraction of a second. Made once per process and texts (each call gets its own dict)."""
    entropy, weights = _heldout_trigram(train_text, val_text, held_text)
    return {"cross_entropy": entropy, "weights": weights}


@functools.lru_cache(maxsize=8)  # the same texts for every notebook graded in a process
def _heldout_trigram(train_text, val_text, held_text):
    chars = sorted(set(train_text) | set(val_text) | set(held_text))
    index = {c: i for i, c in enumerate(chars)}
    K = len(chars)
    train, val, held = (np.array([index[c] for c in text]) for text in (train_text, val_text, held_text))
    unigram = (np.bincount(train, minlength=K) + 1.0) / (len(train) + K)
    pairs = np.zeros((K, K))
    np.add.at(pairs, (train[:-1], train[1:]), 1.0)
    triples = np.zeros((K, K, K))
    np.add.at(triples, (train[:-2], train[1:-1], train[2:]), 1.0)

    def estimates(ids):                       # (3, n): the trigram, bigram and unigram estimates of ids[2:]
        a, b, c = ids[:-2], ids[1:-1], ids[2:]
        n2, n3 = pairs[b].sum(axis=1), triples[a, b].sum(axis=1)
        return np.stack([triples[a, b, c] / np.maximum(n3, 1), pairs[b, c] / np.maximum(n2, 1), unigram[c]])

    on_val = estimates(val)
    grid = [(l3 / 20, l2 / 20, (20 - l3 - l2) / 20) for l3 in range(20) for l2 in range(20 - l3)]
    weights = min(grid, key=lambda w: float(-np.log(np.dot(w, on_val)).mean()))
    return float(-np.log(np.dot(weights, estimates(held))).mean()), weights


def sample_char_rnn(model, rnn_forward, length=250, temperature=0.8, seed=0, start=None):
    """Text generated by a trained character RNN (a dict with U, V, W and chars), one step at a time
    (``dlcourse.drivers.ch05_rnn.sample_text``)."""
    return sample_text(rnn_forward, model["U"], model["V"], model["W"], model["chars"], length=length,
                       temperature=temperature, seed=seed, start=start)


# ------------------------------------------------------ the gates of the TRAINED LSTM (first-token task)

def first_token_sequence(first_token, sequence, K=4, D=4, T=50):
    """One-hot (T, K + D) input of the first-token task: the class token, then T - 1 seeded distractors."""
    rng = np.random.default_rng(10_000 + int(sequence))
    tokens = np.concatenate([[int(first_token)], rng.integers(K, K + D, T - 1)])
    return np.eye(K + D)[tokens], tokens


def _trained_gate_figure(m, T) -> LiveFigure:
    """Axes for the tokens, the three gates (units x time) and the carried product of forget gates."""
    live = LiveFigure(Figure(figsize=(7.2, 5.0), dpi=72))
    fig = live.figure
    grid = fig.add_gridspec(5, 1, height_ratios=[0.45, 1, 1, 1, 0.8], left=0.1, right=0.9, top=0.95,
                            bottom=0.08, hspace=0.15)
    axes = [fig.add_subplot(grid[0])]
    axes += [fig.add_subplot(grid[i], sharex=axes[0]) for i in range(1, 5)]
    live.tokens = live.changes(axes[0].imshow(np.zeros((1, T)), aspect="auto", cmap="tab10", vmin=0, vmax=9,
                                              interpolation="nearest", extent=(-0.5, T - 0.5, 0.5, -0.5)))
    axes[0].set_yticks([])
    axes[0].set_ylabel("token", fontsize=8)
    live.title = live.changes(axes[0].set_title(" ", fontsize=9))
    live.images = []
    for ax, name in zip(axes[1:4], ("input i", "forget f", "output o")):
        live.images.append(live.changes(ax.imshow(np.zeros((m, T)), aspect="auto", vmin=0, vmax=1, cmap="viridis",
                                                  interpolation="nearest", extent=(-0.5, T - 0.5, m - 0.5, -0.5))))
        ax.set_ylabel(f"{name}\nunit", fontsize=8)
    for ax in axes[:4]:
        live.changes(list(ax.spines.values()))  # the frames, over the images
    top, bottom = axes[1].get_position(), axes[3].get_position()
    fig.colorbar(live.images[0], cax=fig.add_axes([0.915, bottom.y0, 0.015, top.y1 - bottom.y0]))
    axes[4].set_yscale("log")
    live.mean, = live.changes(axes[4].plot(np.arange(T), np.ones(T), color="tab:red", lw=1.2, label="mean over units"))
    live.best, = live.changes(axes[4].plot(np.arange(T), np.ones(T), color="tab:green", lw=1.2, label="best unit"))
    axes[4].set_ylim(1e-8, 2)
    axes[4].minorticks_off()
    axes[4].set_ylabel("∏ f since t=0", fontsize=8)
    axes[4].set_xlabel("t")
    live.on_top(axes[4].legend(fontsize=7, loc="lower left"))  # over the curves
    axes[4].grid(True, alpha=0.3)
    for ax in axes:
        ax.tick_params(labelsize=7)
    for ax in axes[:4]:
        ax.tick_params(labelbottom=False)
    return live


def render_trained_lstm_gate(first_token, sequence, forget_shift, *, lstm_cell, model, cache=None):
    """The gates of the LSTM trained on the first-token task (``model``: its weights as float64 arrays)."""
    X, tokens = first_token_sequence(first_token, sequence, model["K"], model["D"], model["T"])
    m = model["W_hh"].shape[1]
    b_hh = np.array(model["b_hh"], dtype=float)
    b_hh[m:2 * m] += forget_shift
    gates = cached(cache, ("gates", int(first_token), int(sequence), float(forget_shift), lstm_cell),
                   lambda: lstm_gates(lstm_cell, X, model["W_ih"], model["W_hh"], model["b_ih"], b_hh))
    T = len(X)
    live = kept_figure(cache, lambda: _trained_gate_figure(m, T))
    live.new_background((m, T))
    live.tokens.set_data(tokens[None].astype(float))
    for image, key in zip(live.images, "ifo"):
        image.set_data(gates[key].T)
    carry = np.cumprod(np.vstack([np.ones(m), gates["f"][1:]]), axis=0)  # prod_{s=1}^{t} f_s = d c_t / d c_0
    live.mean.set_ydata(np.maximum(carry.mean(axis=1), 1e-300))
    live.best.set_ydata(np.maximum(carry.max(axis=1), 1e-300))
    logits = model["head_W"] @ gates["h"][-1] + model["head_b"]
    p = np.exp(logits - logits.max())
    p /= p.sum()
    guess = int(np.argmax(p))
    live.title.set_text(f"first token {int(first_token)} (then {T - 1} distractors): "
                            f"the LSTM answers {guess} with probability {p[guess]:.2f}")
    text = readout(f"trained LSTM, forget-bias shift {forget_shift:+.1f}: mean gates i = {gates['i'].mean():.2f}, "
                   f"f = {gates['f'].mean():.2f}, o = {gates['o'].mean():.2f}; ∏ f over the {T - 1} steps after "
                   f"the first token: mean over units {carry[-1].mean():.3g}, best unit {carry[-1].max():.3g}; "
                   f"answer {guess} (p = {p[guess]:.2f}), true {int(first_token)}",
                   forget_shift=forget_shift, mean_i=float(gates["i"].mean()), mean_f=float(gates["f"].mean()),
                   mean_o=float(gates["o"].mean()), steps=T - 1, memory_mean=float(carry[-1].mean()),
                   memory_best=float(carry[-1].max()), answer=guess, probability=float(p[guess]),
                   true_answer=int(first_token))
    return live, text


def trained_lstm_gate_explorer(*, lstm_cell, model):
    controls = {
        "first_token": _slider(0, 0, model["K"] - 1, 1, "first token", integer=True),
        "sequence": _slider(0, 0, 9, 1, "distractors (seed)", integer=True),
        "forget_shift": _slider(0.0, -6.0, 2.0, 0.5, "forget-bias shift"),
    }
    render = functools.partial(render_trained_lstm_gate, model=model)
    return Explorer(render, controls, needs={"lstm_cell": lstm_cell}, height="380px",
                    title="Gates of the trained LSTM on the first-token task")
