"""Widgets of chapter 8 (tricks of the trade).

- ``activation_stats_explorer(activation_stds)``: std of the activations through depth for each
  initialisation scheme and activation (log scale);
- ``optimizer_race(sgd_momentum_step, adam_step)``: SGD, heavy-ball momentum and Adam on an
  ill-conditioned 2-D quadratic;
- ``targets_explorer(cross_entropy, distillation_loss)``: tempered teacher distribution and
  label-smoothed targets.

Each render function is pure and returns ``(figure, readout_text)``.
"""
from __future__ import annotations

import functools

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np

from .explorer import Explorer, RenderCache, cached

SCHEMES = ("lecun", "xavier", "he")
ACTIVATIONS = ("relu", "tanh", "linear")
_COLORS = {"lecun": "tab:blue", "xavier": "tab:orange", "he": "tab:green"}
_STYLES = {"lecun": "--", "xavier": ":", "he": "-."}


# ------------------------------------------------------------ activation statistics

def _stds(activation_stds, depth, width, scheme, activation, n_samples, seed):
    stds = np.array(activation_stds(depth, width, scheme, activation, np.random.default_rng(seed),
                                    n_samples=n_samples), dtype=float)
    stds.flags.writeable = False
    return stds


def render_activation_stats(scheme, activation, depth, *, activation_stds, width=64, n_samples=256, seed=0,
                            cache=None):
    """Std of the activations after each layer, for every scheme, the chosen one highlighted.

    The curves do not depend on which scheme is selected: with a ``RenderCache`` each (scheme,
    activation, depth) curve is computed once, so changing the scheme only redraws."""
    depth = int(depth)
    curves = {}
    for s in SCHEMES:
        args = (activation_stds, depth, width, s, activation, n_samples, seed)
        curves[s] = _stds(*args) if cache is None else cache.get(("stds",) + args, lambda args=args: _stds(*args))
    fig, ax = plt.subplots(figsize=(6.4, 3.3))
    fig.subplots_adjust(left=0.11, right=0.975, bottom=0.14, top=0.91)  # tight_layout is slow
    layers = np.arange(1, depth + 1)
    for s, stds in curves.items():
        chosen = s == scheme
        shown = np.where(stds > 0, stds, np.nan)
        ax.plot(layers, shown, "-o" if chosen else _STYLES[s], color=_COLORS[s], lw=2.5 if chosen else 1.3,
                ms=3, alpha=1.0 if chosen else 0.7, label=s + (" (selected)" if chosen else ""))
    ax.axhline(1.0, color="gray", lw=0.8, ls=":")
    ax.set_yscale("log")
    ax.set_xlabel("layer")
    ax.set_ylabel("std of activations")
    ax.set_title(f"{activation} network, width {width}, {n_samples} inputs "
                 "(square layers: lecun = xavier)", fontsize=10)
    ax.legend(fontsize=8, loc="best")
    last = curves[scheme][-1]
    others = ", ".join(f"{s} {curves[s][-1]:.3g}" for s in SCHEMES if s != scheme)
    text = (f"{scheme} + {activation}: std at layer {depth} = <b>{last:.3g}</b> "
            f"(input std 1; {others})")
    return fig, text


def activation_stats_explorer(activation_stds):
    controls = {
        "scheme": widgets.Dropdown(options=list(SCHEMES), value="he", description="scheme"),
        "activation": widgets.Dropdown(options=list(ACTIVATIONS), value="relu", description="activation"),
        "depth": widgets.IntSlider(20, min=1, max=50, step=1, description="depth", continuous_update=False),
    }
    return Explorer(functools.partial(render_activation_stats, cache=RenderCache()), controls,
                    needs={"activation_stds": activation_stds},
                    height="350px", title="Activation statistics through depth")


# ------------------------------------------------------------------ optimizer race

_ANGLE = np.pi / 6
_ROT = np.array([[np.cos(_ANGLE), -np.sin(_ANGLE)], [np.sin(_ANGLE), np.cos(_ANGLE)]])
RACE_H = _ROT @ np.diag([1.0, 25.0]) @ _ROT.T   # eigenvalues 1 and 25 along rotated axes
RACE_START = np.array([-4.0, 2.5])


def _race_loss(theta):
    return 0.5 * float(theta @ RACE_H @ theta)


def _trajectory(step, steps):
    path = [RACE_START.copy()]
    theta = RACE_START.copy()
    with np.errstate(all="ignore"):
        for t in range(1, steps + 1):
            theta = step(theta, RACE_H @ theta, t)
            path.append(np.asarray(theta, dtype=float).copy())
            if not np.all(np.isfinite(theta)) or np.abs(theta).max() > 1e6:
                break
    return np.array(path)


def render_optimizer_race(lr, momentum, adam_lr, steps, *, sgd_momentum_step, adam_step):
    steps = int(steps)

    def sgd(buf_holder, mom):
        def step(theta, grad, t):
            new, buf_holder[0] = sgd_momentum_step(theta, grad, buf_holder[0], lr, momentum=mom)
            return new
        return step

    state = {"m": np.zeros(2), "v": np.zeros(2)}

    def adam(theta, grad, t):
        new, state["m"], state["v"] = adam_step(theta, grad, state["m"], state["v"], t, lr=adam_lr)
        return new

    paths = {"SGD": _trajectory(sgd([None], 0.0), steps),
             f"momentum {momentum:.2f}": _trajectory(sgd([None], momentum), steps),
             "Adam": _trajectory(adam, steps)}

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    g = np.linspace(-5, 5, 61)
    X, Y = np.meshgrid(g, np.linspace(-4, 4, 49))
    Z = 0.5 * (RACE_H[0, 0] * X ** 2 + 2 * RACE_H[0, 1] * X * Y + RACE_H[1, 1] * Y ** 2)
    ax.contour(X, Y, np.log10(Z + 1e-3), levels=14, colors="lightgray", linewidths=0.7)
    colors = ["tab:blue", "tab:red", "tab:green"]
    finals = []
    for (name, path), color in zip(paths.items(), colors):
        ok = np.all(np.isfinite(path), axis=1) & (np.abs(path).max(axis=1) < 1e6)
        shown = path[ok]
        ax.plot(shown[:, 0], shown[:, 1], "-o", color=color, ms=2, lw=1.2, label=name)
        diverged = len(path) < steps + 1 or not ok.all() or _race_loss(shown[-1]) > 1e6
        finals.append((name, None if diverged else _race_loss(path[-1])))
    ax.plot(*RACE_START, "ks", ms=5)
    ax.plot(0, 0, "k*", ms=9)
    ax.set_xlim(-5, 5)
    ax.set_ylim(-4, 4)
    ax.set_aspect("equal")
    ax.set_title(f"L = ½ θᵀHθ, eigenvalues 1 and 25, {steps} steps", fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    parts = [f"{name}: {'diverged' if loss is None else f'{loss:.3g}'}" for name, loss in finals]
    text = f"final loss after {steps} steps — " + ", ".join(parts)
    return fig, text


def optimizer_race(sgd_momentum_step, adam_step):
    controls = {
        "lr": widgets.FloatLogSlider(0.03, base=10, min=-3, max=-0.9, step=0.05, description="SGD lr",
                                     readout_format=".3f", continuous_update=False),
        "momentum": widgets.FloatSlider(0.8, min=0.0, max=0.99, step=0.01, description="momentum",
                                        continuous_update=False),
        "adam_lr": widgets.FloatLogSlider(0.3, base=10, min=-2, max=0.3, step=0.05, description="Adam lr",
                                          readout_format=".3f", continuous_update=False),
        "steps": widgets.IntSlider(50, min=5, max=200, step=5, description="steps", continuous_update=False),
    }
    return Explorer(render_optimizer_race, controls,
                    needs={"sgd_momentum_step": sgd_momentum_step, "adam_step": adam_step},
                    height="380px", title="Optimizer race on an ill-conditioned quadratic", columns=4)


# ------------------------------------------------------------- target distributions

TEACHER_LOGITS = np.array([[4.0, 2.5, 1.5, 0.5, -0.5, -2.0]])
STUDENT_LOGITS = np.array([[2.0, 2.2, 0.5, 0.0, -0.5, -1.0]])
TARGET = 0


def _softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


def _entropy(p):
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def render_targets(temperature, smoothing, *, cross_entropy, distillation_loss):
    T, eps = float(temperature), float(smoothing)
    k = TEACHER_LOGITS.shape[1]
    # the entropy of p is the cross-entropy of p with itself: the student's distillation_loss(t, t, T)
    teacher_entropy = float(distillation_loss(TEACHER_LOGITS, TEACHER_LOGITS, T))
    distill = float(distillation_loss(STUDENT_LOGITS, TEACHER_LOGITS, T))
    ce = float(cross_entropy(STUDENT_LOGITS, np.array([TARGET]), label_smoothing=eps))
    p = _softmax(TEACHER_LOGITS[0] / T)
    p1 = _softmax(TEACHER_LOGITS[0])
    target = np.full(k, eps / k)
    target[TARGET] += 1 - eps
    target_entropy = _entropy(target)

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(7.2, 3.0), sharey=True)
    classes = np.arange(k)
    a1.bar(classes, p, color="tab:purple", alpha=0.8, label=f"T = {T:g}")
    a1.step(classes, p1, where="mid", color="k", lw=1, label="T = 1")
    a1.set_title(f"teacher softmax(z / T), H = {teacher_entropy:.2f} nats", fontsize=9)
    a1.legend(fontsize=8)
    a2.bar(classes, target, color="tab:orange", alpha=0.8)
    a2.set_title(f"smoothed one-hot, ε = {eps:g}, H = {target_entropy:.2f} nats", fontsize=9)
    for a in (a1, a2):
        a.set_xticks(classes)
        a.set_xlabel("class")
        a.set_ylim(0, 1.05)
    a1.set_ylabel("probability")
    fig.tight_layout()
    text = (f"T = {T:g}: teacher entropy {teacher_entropy:.3f} nats (max log {k} = {np.log(k):.3f}), "
            f"student distillation loss {distill:.3f}; ε = {eps:g}: target entropy {target_entropy:.3f} nats, "
            f"student cross-entropy {ce:.3f}")
    return fig, text


def targets_explorer(cross_entropy, distillation_loss):
    controls = {
        "temperature": widgets.FloatLogSlider(2.0, base=10, min=-0.7, max=1.3, step=0.05, description="T",
                                              readout_format=".2f", continuous_update=False),
        "smoothing": widgets.FloatSlider(0.1, min=0.0, max=0.9, step=0.05, description="smoothing ε",
                                         continuous_update=False),
    }
    return Explorer(render_targets, controls,
                    needs={"cross_entropy": cross_entropy, "distillation_loss": distillation_loss},
                    height="320px", title="Temperature and label smoothing")
