"""Widgets of chapter 8 (tricks of the trade).

- ``activation_stats_explorer(activation_stds)``: std of the activations through depth for each
  initialisation scheme and activation (log scale);
- ``optimizer_race(sgd_momentum_step, adam_step)``: SGD, heavy-ball momentum and Adam on an
  ill-conditioned 2-D quadratic;
- ``targets_explorer(cross_entropy, distillation_loss)``: tempered teacher distribution and
  label-smoothed targets;
- ``loop_recipe_explorer(train_digits, init_weights, orthogonal_init, layernorm_forward, layernorm_backward,
  adam_step, cross_entropy, weight_norm)``: the student's own ``train_digits`` with a switch per trick it has
  (He or orthogonal initialisation, layer norm, weight norm): training and validation curves of the 8 runs,
  all precomputed;
- ``digits_baseline()``: the first baseline of the held-out digits, logistic regression on the pixels.

The student's own loop, ``train_digits``, is graded; its data and the forward pass the grader evaluates it with
are here: ``digits_holdout()`` (training, validation and test digits, fixed by seed) and ``digits_logits``. The
given four-layer loop ``train_digits_mlp`` and the recipe table and explorer over it (superseded) live in
``dlcourse.compat.ch08_tricks``; the old names still import from here.

Each render function is pure and returns ``(figure, readout_text)``.
"""
from __future__ import annotations

import contextlib
import functools

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .explorer import Explorer, cached, frozen, readout
from .picture import LiveFigure, decade_limits, kept_figure, plain_log_axis

__all__ = [
    "activation_stats_explorer", "render_activation_stats", "optimizer_race_explorer", "render_optimizer_race",
    "targets_explorer", "render_targets", "loop_recipe_explorer", "render_loop_recipe", "loop_runs", "LOOP_BARE",
    "digits_split", "digits_holdout", "digits_logits", "digits_baseline",
]

# Superseded (issue 39): the given four-layer loop of § 7 and the recipe table and explorer over it, found in
# ``dlcourse.compat.ch08_tricks`` on first use (notebooks already handed out import them from here).
_COMPAT = ("train_digits_mlp", "recipe_runs", "recipe_table", "RECIPE_TABLE", "render_recipe", "recipe_explorer",
           "BARE", "FULL", "RECIPE_INITS", "RECIPE_SWITCHES", "RECIPE_PIECES")


def __getattr__(name):
    """The superseded names, for notebooks already handed out: from ``dlcourse.compat`` on first use (compat builds
    on this module, never the reverse: the layers stay acyclic)."""
    if name in _COMPAT:
        from importlib import import_module
        return getattr(import_module("dlcourse.compat.ch08_tricks"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

SCHEMES = ("lecun", "xavier", "he")
ACTIVATIONS = ("relu", "tanh", "linear")
_COLORS = {"lecun": "tab:blue", "xavier": "tab:orange", "he": "tab:green"}
_STYLES = {"lecun": "--", "xavier": ":", "he": "-."}


# ------------------------------------------------------------ activation statistics

MAX_DEPTH = 50


def _stds(activation_stds, width, activation, n_samples, seed):
    """{scheme: std after each of MAX_DEPTH layers}, from the student's function: a shallower network's
    curve is the start of these (its layers are the first ones of the deeper network, the same draws in
    the order the exercise prescribes), so one call per scheme serves every depth."""
    curves = {}
    for scheme in SCHEMES:
        stds = np.asarray(activation_stds(MAX_DEPTH, width, scheme, activation, np.random.default_rng(seed),
                                          n_samples=n_samples), dtype=float)
        if stds.shape != (MAX_DEPTH,):
            raise ValueError(f"activation_stds returned shape {stds.shape}, expected ({MAX_DEPTH},): "
                             "one std per layer")
        curves[scheme] = stds
    return frozen(curves)


def _activation_stats_figure(width, n_samples) -> LiveFigure:
    """Axes, legend (beside the axes: no curve goes under it) and the three curves."""
    live = LiveFigure(Figure(figsize=(6.4, 3.3)))
    ax = live.ax = live.figure.subplots()
    live.figure.subplots_adjust(left=0.11, right=0.85, bottom=0.14, top=0.91)  # tight_layout is slow
    live.curves = {s: live.changes(ax.plot([], [], color=_COLORS[s], ms=3)[0]) for s in SCHEMES}
    handles = [Line2D([], [], color=_COLORS[s], ls=_STYLES[s], lw=1.3, label=s) for s in SCHEMES]
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
              title="scheme", title_fontsize=8)  # background: the selected curve is the thick one with dots
    ax.axhline(1.0, color="gray", lw=0.8, ls=":")
    ax.set_yscale("log")
    ax.set_xlim(0, MAX_DEPTH + 1)
    ax.set_xlabel("layer")
    ax.set_ylabel("std of activations")
    return live


def _std_key(activation, curves):
    """What the background shows for ``activation``: its name and the std axis, whole decades holding its
    curves at every depth and std 1 (the input's)."""
    low, high = decade_limits(np.concatenate(list(curves.values())))
    return activation, min(low, 1.0), max(high, 1.0)


def _set_std_background(live, key, width, n_samples):
    """Set the std axis and the title of the background ``key`` (a ``_std_key``)."""
    activation, low, high = key
    live.ax.set_ylim(low / 10 ** 0.1, high * 10 ** 0.1)
    decades = np.arange(np.log10(low), np.log10(high) + 0.5, 2 if high / low > 1e5 else 1)
    plain_log_axis(live.ax.yaxis, 10.0 ** decades)
    live.ax.set_title(f"{activation} network, width {width}, {n_samples} inputs (square layers: lecun = xavier)",
                      fontsize=10)


def render_activation_stats(scheme, activation, depth, *, activation_stds, width=64, n_samples=256, seed=0,
                            cache=None):
    """Std of the activations after each of the first ``depth`` layers, for every scheme, the chosen one
    highlighted (thick, with dots).

    The student's function is called for MAX_DEPTH layers, once per (activation, scheme). With a
    ``RenderCache`` the first render computes the curves of every activation and asks for the background
    of each (its std axis holds the activation's curves at every depth; drawn once the first picture is
    out), so moving any control afterwards only redraws the curves."""
    depth = int(np.clip(depth, 1, MAX_DEPTH))
    every = {}
    for act in [activation] + ([a for a in ACTIVATIONS if a != activation] if cache is not None else []):
        args = (activation_stds, width, act, n_samples, seed)
        every[act] = cached(cache, ("stds",) + args, lambda args=args: _stds(*args))
    curves = every[activation]
    live = kept_figure(cache, lambda: _activation_stats_figure(width, n_samples))
    key = _std_key(activation, curves)
    if cache is not None:  # every activation's background, drawn once the first picture is out
        live.draw_ahead([_std_key(other, its) for other, its in every.items() if other != activation],
                        lambda other: _set_std_background(live, other, width, n_samples))
    if live.new_background(key):
        _set_std_background(live, key, width, n_samples)
    layers = np.arange(1, depth + 1)
    for s, stds in curves.items():
        chosen = s == scheme
        shown = stds[:depth]
        line = live.curves[s]
        line.set_data(layers, np.where(shown > 0, shown, np.nan))
        line.set_linestyle("-" if chosen else _STYLES[s])
        line.set_marker("o" if chosen else "None")
        line.set_linewidth(2.5 if chosen else 1.3)
        line.set_alpha(1.0 if chosen else 0.7)
        line.set_zorder(2.1 if chosen else 2.0)  # the selected curve over the others
    last = curves[scheme][depth - 1]
    others = ", ".join(f"{s} {curves[s][depth - 1]:.3g}" for s in SCHEMES if s != scheme)
    text = readout(f"{scheme} + {activation}: std at layer {depth} = <b>{last:.3g}</b> "
                   f"(input std 1; {others})",
                   scheme=scheme, activation=activation, depth=depth, std=float(last),
                   **{f"std_{s}": float(curves[s][depth - 1]) for s in SCHEMES})
    return live, text


def activation_stats_explorer(*, activation_stds):
    controls = {
        "scheme": widgets.Dropdown(options=list(SCHEMES), value="he", description="scheme"),
        "activation": widgets.Dropdown(options=list(ACTIVATIONS), value="relu", description="activation"),
        "depth": widgets.IntSlider(20, min=1, max=MAX_DEPTH, step=1, description="depth", continuous_update=False),
    }
    return Explorer(render_activation_stats, controls,
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


def _race_figure() -> LiveFigure:
    """The optimizer race's axes and contours; the three paths change."""
    live = LiveFigure(Figure(figsize=(6.4, 3.6)))
    ax = live.figure.subplots()
    live.figure.subplots_adjust(left=0.1, right=0.97, bottom=0.08, top=0.91)  # tight_layout is slow
    g = np.linspace(-5, 5, 61)
    X, Y = np.meshgrid(g, np.linspace(-4, 4, 49))
    Z = 0.5 * (RACE_H[0, 0] * X ** 2 + 2 * RACE_H[0, 1] * X * Y + RACE_H[1, 1] * Y ** 2)
    ax.contour(X, Y, np.log10(Z + 1e-3), levels=14, colors="lightgray", linewidths=0.7)
    paths = (("tab:blue", "SGD"), ("tab:red", "momentum"), ("tab:green", "Adam"))
    live.lines = live.changes([ax.plot([], [], "-o", color=c, ms=2, lw=1.2, label=name)[0] for c, name in paths])
    live.changes([ax.plot(*RACE_START, "ks", ms=5)[0], ax.plot(0, 0, "k*", ms=9)[0]])  # over the paths
    ax.set_xlim(-5, 5)
    ax.set_ylim(-4, 4)
    ax.set_aspect("equal")
    live.on_top(ax.legend(fontsize=8, loc="upper right"))  # over the paths; the momentum's value is in the title
    live.title = live.changes(ax.set_title(" ", fontsize=10))
    return live


def render_optimizer_race(lr, momentum, adam_lr, steps, *, sgd_momentum_step, adam_step, cache=None):
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

    live = kept_figure(cache, _race_figure)
    live.new_background("race")
    finals = []
    for (name, path), line in zip(paths.items(), live.lines):
        ok = np.all(np.isfinite(path), axis=1) & (np.abs(path).max(axis=1) < 1e6)
        shown = path[ok]
        line.set_data(shown[:, 0], shown[:, 1])
        diverged = len(path) < steps + 1 or not ok.all() or _race_loss(shown[-1]) > 1e6
        finals.append((name, None if diverged else _race_loss(path[-1])))
    live.title.set_text(f"L = ½ θᵀHθ, eigenvalues 1 and 25, {steps} steps, momentum {momentum:.2f}")
    parts = [f"{name}: {'diverged' if loss is None else f'{loss:.3g}'}" for name, loss in finals]
    (_, sgd_loss), (_, momentum_loss), (_, adam_loss) = finals
    text = readout(f"final loss after {steps} steps — " + ", ".join(parts),  # a loss is None when it diverged
                   steps=steps, momentum=float(momentum), sgd_loss=sgd_loss, momentum_loss=momentum_loss,
                   adam_loss=adam_loss)
    return live, text


def optimizer_race_explorer(*, sgd_momentum_step, adam_step):
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


# ------------------------------------------------------------- a digits MLP with the tricks

def digits_holdout(n_train=300, n_val=500, seed=0):
    """(X_train, y_train, X_val, y_val, X_test, y_test) from sklearn's 8x8 digits (1,797 images), pixels scaled
    to [0, 1], split by ``default_rng(seed).permutation``: the first ``n_train`` images train, the next ``n_val``
    validate, the rest (997 with the defaults) are the test split that only the grader looks at. Made once per
    process (each call gets its own arrays)."""
    return tuple(part.copy() for part in _digits_holdout(n_train, n_val, seed))


@functools.lru_cache(maxsize=4)
def _digits_holdout(n_train, n_val, seed):
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    order = np.random.default_rng(seed).permutation(len(X))
    train, val, test = order[:n_train], order[n_train:n_train + n_val], order[n_train + n_val:]
    return X[train] / 16.0, y[train], X[val] / 16.0, y[val], X[test] / 16.0, y[test]


def digits_split(n_train=300, n_val=500, seed=0):
    """(X_train, y_train, X_val, y_val): the training and validation parts of ``digits_holdout``."""
    return digits_holdout(n_train, n_val, seed)[:4]


BASELINE_CS = (0.3, 1.0, 3.0, 10.0, 30.0, 100.0)


def digits_baseline(n_train=300, n_val=500, seed=0):
    """The first baseline of the held-out digits: multinomial logistic regression on the 64 pixels, trained on the
    training part of ``digits_holdout``, its L2 strength ``C`` chosen among ``BASELINE_CS`` by the validation
    cross-entropy (the validation part is what ``train_digits`` evaluates on too). Returns a dict: ``C`` and the
    ``accuracy`` and cross-entropy ``ce`` on the test part. Computed once per process (scikit-learn, about a second)."""
    return dict(_digits_baseline(n_train, n_val, seed))


@functools.lru_cache(maxsize=4)
def _digits_baseline(n_train, n_val, seed):
    import warnings

    from sklearn.linear_model import LogisticRegression

    X_train, y_train, X_val, y_val, X_test, y_test = _digits_holdout(n_train, n_val, seed)
    best = None
    for C in BASELINE_CS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = LogisticRegression(C=C, max_iter=5000).fit(X_train, y_train)
        val_ce = _plain_ce(model.decision_function(X_val), y_val)
        if best is None or val_ce < best[0]:
            best = (val_ce, C, model)
    _, C, model = best
    logits = model.decision_function(X_test)
    return (("C", C), ("accuracy", float(np.mean(logits.argmax(axis=1) == y_test))),
            ("ce", _plain_ce(logits, y_test)))


def digits_logits(params, X, eps=1e-5):
    """Logits (N, 10) of the network of ``train_digits`` for parameters ``[W1, b1, gamma, beta, W2, b2]``:
    ``relu(layernorm(X @ W1.T + b1)) @ W2.T + b2`` (the forward pass only, in NumPy)."""
    W1, b1, gamma, beta, W2, b2 = (np.asarray(p, dtype=float) for p in params)
    z = np.asarray(X, dtype=float) @ W1.T + b1
    zhat = (z - z.mean(axis=1, keepdims=True)) / np.sqrt(z.var(axis=1, keepdims=True) + eps)
    return np.maximum(gamma * zhat + beta, 0.0) @ W2.T + b2


def _plain_ce(logits, y):
    z = logits - logits.max(axis=1, keepdims=True)
    return float(np.mean(np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(y)), y]))


@contextlib.contextmanager
def _one_thread():
    """BLAS limited to one thread (tiny matrices: threads only cost time); without threadpoolctl, just run."""
    try:
        from threadpoolctl import threadpool_limits
        limiter = threadpool_limits(1)
    except Exception:  # noqa: BLE001 - without threadpoolctl, just run
        limiter = None
    try:
        yield
    finally:
        if limiter is not None:
            limiter.unregister() if hasattr(limiter, "unregister") else limiter.__exit__(None, None, None)


def _loss_curves(live: LiveFigure, ax, epochs: int, title: str):
    """Cross-entropy per epoch on ``ax`` (log scale): this recipe's validation and training curves over the bare
    recipe's, as ``live.val``, ``live.train``, ``live.bare_val``, ``live.bare_train``. Returns (epochs, ones)."""
    ep = np.arange(1, epochs + 1)
    ones = np.ones(epochs)
    live.bare_val, = live.changes(ax.plot(ep, ones, color="0.6", lw=1.2, label="bare: validation"))
    live.bare_train, = live.changes(ax.plot(ep, ones, color="0.6", lw=1.0, ls="--", label="bare: training"))
    live.val, = live.changes(ax.plot(ep, ones, color="tab:red", lw=1.8, label="this recipe: validation"))
    live.train, = live.changes(ax.plot(ep, ones, color="tab:blue", lw=1.4, ls="--", label="this recipe: training"))
    ax.set_yscale("log")
    ax.minorticks_off()
    ax.set_xlim(0.5, epochs + 0.5)
    ax.set_xlabel("epoch")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="lower left")  # background (a legend costs ~14 ms to draw): the losses stay above it
    return ep, ones



LOOP_INITS = ("he", "orthogonal")
LOOP_SWITCHES = ("use_layer_norm", "use_weight_norm")
LOOP_BARE = {"init": "he", "use_layer_norm": False, "use_weight_norm": False}
LOOP_PIECES = ("init_weights", "orthogonal_init", "layernorm_forward", "layernorm_backward", "adam_step",
               "cross_entropy")


def _loop_key(config):
    return (config["init"],) + tuple(bool(config[name]) for name in LOOP_SWITCHES)


def loop_runs(train_digits, pieces, weight_norm, *, data=None, **settings):
    """Every combination of the loop's switches (2 initialisations x layer norm x weight norm: 8 runs of the
    student's ``train_digits`` on ``digits_split()``), keyed by (init, layer norm, weight norm). Each value
    holds the run's per-epoch "train_loss" (the mean of the epoch's recorded step losses), "val_loss" and
    "val_accuracy" as the student's loop returned them."""
    import itertools

    X_train, y_train, X_val, y_val = data if data is not None else digits_split()
    runs = {}
    with _one_thread():
        for init, flags in itertools.product(LOOP_INITS, itertools.product((False, True), repeat=len(LOOP_SWITCHES))):
            config = dict(zip(LOOP_SWITCHES, flags), init=init)
            run = train_digits(*(pieces[name] for name in LOOP_PIECES), X_train, y_train, X_val, y_val, init=init,
                               layer_norm=config["use_layer_norm"],
                               weight_norm=weight_norm if config["use_weight_norm"] else None, **settings)
            val_loss = np.asarray(run["val_loss"], dtype=float)
            losses = np.asarray(run["losses"], dtype=float)
            runs[_loop_key(config)] = {
                "train_loss": np.array([chunk.mean() for chunk in np.array_split(losses, len(val_loss))]),
                "val_loss": val_loss, "val_accuracy": np.asarray(run["val_accuracy"], dtype=float)}
    return runs


def _loop_figure(epochs) -> LiveFigure:
    """The loop explorer's axes: cross-entropy per epoch (left), validation accuracy per epoch (right)."""
    live = LiveFigure(Figure(figsize=(9.0, 3.0)))
    a1, a2 = live.figure.subplots(1, 2, gridspec_kw={"width_ratios": [1.3, 1]})
    live.figure.subplots_adjust(left=0.07, right=0.985, bottom=0.16, top=0.88, wspace=0.25)
    live.a1, live.a2 = a1, a2
    ep, ones = _loss_curves(live, a1, epochs, "cross-entropy (your cross_entropy)")
    live.bare_acc, = live.changes(a2.plot(ep, ones, color="0.6", lw=1.2, label="bare"))
    live.acc, = live.changes(a2.plot(ep, ones, color="tab:red", lw=1.8, label="this recipe"))
    a2.set_xlim(0.5, epochs + 0.5)
    a2.set_xlabel("epoch")
    a2.set_title("validation accuracy", fontsize=9)
    a2.legend(fontsize=7, loc="lower right")
    return live


def _loop_limits(runs):
    """Axis limits that hold every run (all are computed beforehand): no switch changes the axes."""
    curves = np.concatenate([np.ravel(r[k]) for r in runs.values() for k in ("val_loss", "train_loss")])
    curves = np.maximum(curves[np.isfinite(curves)], 1e-4)
    accuracy = np.concatenate([np.ravel(r["val_accuracy"]) for r in runs.values()])
    accuracy = accuracy[np.isfinite(accuracy)]
    return {"a1": (curves.min() / 1.5, curves.max() * 1.5),
            "a2": (max(0.0, accuracy.min() - 0.05), min(1.0, accuracy.max() + 0.02))}


def render_loop_recipe(init, use_layer_norm, use_weight_norm, *, train_digits, init_weights, orthogonal_init,
                       layernorm_forward, layernorm_backward, adam_step, cross_entropy, weight_norm, cache=None):
    """Training and validation curves of the student's ``train_digits`` with the chosen initialisation, layer
    norm and weight norm (the bare loop, He without either, in grey). The 8 runs are computed on the first
    render (cached per set of student functions); moving a switch only redraws."""
    pieces = {"init_weights": init_weights, "orthogonal_init": orthogonal_init,
              "layernorm_forward": layernorm_forward, "layernorm_backward": layernorm_backward,
              "adam_step": adam_step, "cross_entropy": cross_entropy}
    key = ("loop runs", train_digits, weight_norm) + tuple(pieces[name] for name in LOOP_PIECES)
    runs = cached(cache, key, lambda: loop_runs(train_digits, pieces, weight_norm))
    config = {"init": init, "use_layer_norm": use_layer_norm, "use_weight_norm": use_weight_norm}
    run, bare = runs[_loop_key(config)], runs[_loop_key(LOOP_BARE)]
    live = kept_figure(cache, lambda: _loop_figure(len(run["val_loss"])))
    if live.new_background(key):
        for axis, limits in _loop_limits(runs).items():
            getattr(live, axis).set_ylim(*limits)
    ep = np.arange(1, len(run["val_loss"]) + 1)
    for line, ys in ((live.bare_val, bare["val_loss"]), (live.bare_train, bare["train_loss"]),
                     (live.val, run["val_loss"]), (live.train, run["train_loss"])):
        line.set_data(ep, np.maximum(ys, 1e-4))
    live.bare_acc.set_data(ep, bare["val_accuracy"])
    live.acc.set_data(ep, run["val_accuracy"])
    name = init + "".join(f" + {label}" for label, on in (("layer norm", use_layer_norm),
                                                         ("weight norm", use_weight_norm)) if on)
    text = readout(f"{name}: final validation loss <b>{run['val_loss'][-1]:.3f}</b> "
                   f"(bare {bare['val_loss'][-1]:.3f}), "
                   f"validation accuracy {run['val_accuracy'][-1]:.1%} (bare {bare['val_accuracy'][-1]:.1%}), "
                   f"training loss in the last epoch {run['train_loss'][-1]:.3f}",
                   recipe=name, val_loss=float(run["val_loss"][-1]), bare_val_loss=float(bare["val_loss"][-1]),
                   accuracy=float(run["val_accuracy"][-1]), bare_accuracy=float(bare["val_accuracy"][-1]),
                   train_loss=float(run["train_loss"][-1]))
    return live, text


def loop_recipe_explorer(*, train_digits, init_weights, orthogonal_init, layernorm_forward, layernorm_backward,
                         adam_step, cross_entropy, weight_norm):
    """The recipe explorer of the chapter: switches over the student's own ``train_digits`` (He or orthogonal
    initialisation, layer norm, weight norm), all 8 runs precomputed. Supersedes ``recipe_explorer``."""
    controls = {
        "init": widgets.Dropdown(options=list(LOOP_INITS), value=LOOP_INITS[0], description="init"),
        "use_layer_norm": widgets.Checkbox(False, description="layer norm"),
        "use_weight_norm": widgets.Checkbox(False, description="weight norm"),
    }
    needs = {"train_digits": train_digits, "init_weights": init_weights, "orthogonal_init": orthogonal_init,
             "layernorm_forward": layernorm_forward, "layernorm_backward": layernorm_backward,
             "adam_step": adam_step, "cross_entropy": cross_entropy, "weight_norm": weight_norm}
    return Explorer(render_loop_recipe, controls, needs=needs, height="330px", columns=3,
                    title="Your train_digits, trick by trick (one hidden layer of 64, 300 training images)")


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


def _targets_figure(k) -> LiveFigure:
    """The targets explorer's axes: the teacher's softmax (left), the smoothed one-hot target (right)."""
    live = LiveFigure(Figure(figsize=(7.2, 3.0)))
    a1, a2 = live.figure.subplots(1, 2, sharey=True)
    live.figure.subplots_adjust(left=0.09, right=0.98, bottom=0.16, top=0.9, wspace=0.08)  # tight_layout is slow
    classes = np.arange(k)
    live.a1, live.a2 = a1, a2
    live.teacher = a1.bar(classes, np.zeros(k), color="tab:purple", alpha=0.8, label="T (the slider)")
    live.changes(list(live.teacher))
    live.changes(a1.step(classes, _softmax(TEACHER_LOGITS[0]), where="mid", color="k", lw=1, label="T = 1"))
    live.target = a2.bar(classes, np.zeros(k), color="tab:orange", alpha=0.8)
    live.changes(list(live.target))
    for a in (a1, a2):
        a.set_xticks(classes)
        a.set_xlabel("class")
        a.set_ylim(0, 1.05)
        live.changes(list(a.spines.values()))  # the frames, over the bars
    a1.set_ylabel("probability")
    live.on_top(a1.legend(fontsize=8, loc="upper right"))  # over the bars
    live.title1 = live.changes(a1.set_title(" ", fontsize=9))
    live.title2 = live.changes(a2.set_title(" ", fontsize=9))
    return live


def render_targets(temperature, smoothing, *, cross_entropy, distillation_loss, cache=None):
    T, eps = float(temperature), float(smoothing)
    k = TEACHER_LOGITS.shape[1]
    # the entropy of p is the cross-entropy of p with itself: the student's distillation_loss(t, t, T)
    teacher_entropy = float(distillation_loss(TEACHER_LOGITS, TEACHER_LOGITS, T))
    distill = float(distillation_loss(STUDENT_LOGITS, TEACHER_LOGITS, T))
    ce = float(cross_entropy(STUDENT_LOGITS, np.array([TARGET]), label_smoothing=eps))
    p = _softmax(TEACHER_LOGITS[0] / T)
    target = np.full(k, eps / k)
    target[TARGET] += 1 - eps
    target_entropy = _entropy(target)

    live = kept_figure(cache, lambda: _targets_figure(k))
    live.new_background(k)
    for rect, v in zip(live.teacher, p):
        rect.set_height(v)
    for rect, v in zip(live.target, target):
        rect.set_height(v)
    live.title1.set_text(f"teacher softmax(z / T), T = {T:g}, H = {teacher_entropy:.2f} nats")
    live.title2.set_text(f"smoothed one-hot, ε = {eps:g}, H = {target_entropy:.2f} nats")
    text = readout(f"T = {T:g}: teacher entropy {teacher_entropy:.3f} nats (max log {k} = {np.log(k):.3f}), "
                   f"student distillation loss {distill:.3f}; ε = {eps:g}: target entropy {target_entropy:.3f} nats, "
                   f"student cross-entropy {ce:.3f}",
                   temperature=T, smoothing=eps, teacher_entropy=teacher_entropy, max_entropy=float(np.log(k)),
                   distillation_loss=distill, target_entropy=target_entropy, cross_entropy=ce)
    return live, text


def targets_explorer(*, cross_entropy, distillation_loss):
    controls = {
        "temperature": widgets.FloatLogSlider(2.0, base=10, min=-0.7, max=1.3, step=0.05, description="T",
                                              readout_format=".2f", continuous_update=False),
        "smoothing": widgets.FloatSlider(0.1, min=0.0, max=0.9, step=0.05, description="smoothing ε",
                                         continuous_update=False),
    }
    return Explorer(render_targets, controls,
                    needs={"cross_entropy": cross_entropy, "distillation_loss": distillation_loss},
                    height="320px", title="Temperature and label smoothing")
