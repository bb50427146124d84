"""Widgets of chapter 13 (what the training loss does not tell you).

- ``degree_explorer(polynomial_features, ridge_fit, effective_dof)``: a polynomial of the chosen degree fitted
  (lam 0) to 20 noisy-sine points; training and held-out error against the degree; the effective dof;
- ``ridge_explorer(polynomial_features, ridge_fit, effective_dof)``: a degree-12 fit with a log10 lam slider;
- ``double_descent_explorer(random_relu_features, ridge_fit)``: the held-out error of min-norm least squares on
  random ReLU features of the double-descent check's data (40 points in 5 dimensions) against the number of
  features (median of ``DRAWS`` = 3 draws), with a slider showing the fitted function along the teacher's direction;
- ``folds_explorer(kfold_indices)``: the K folds of ``kfold_indices`` drawn as coloured index strips.

Each render function is pure and returns ``(figure, readout_text)``.
"""
from __future__ import annotations

import functools

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from ..drivers.ch13_generalization import noisy_sine, one_blas_thread
from .explorer import Explorer, cached, frozen, readout
from .picture import LiveFigure, kept_figure

__all__ = ["degree_explorer", "render_degree", "ridge_explorer", "render_ridge", "double_descent_explorer",
           "render_double_descent", "folds_explorer", "render_folds", "curve_data", "descent_data"]

DEGREES = tuple(range(16))
N_TRAIN = 20
GRID = np.linspace(-1.0, 1.0, 201)
DRAWS = 3


@functools.cache
def curve_data():
    """(x, y, x_test, y_test): 20 noisy-sine training points and 1000 held-out ones (``default_rng(0)``)."""
    rng = np.random.default_rng(0)
    x, y = noisy_sine(N_TRAIN, rng)
    x_test, y_test = noisy_sine(1000, rng)
    return frozen((x, y, x_test, y_test))


def _fit(polynomial_features, ridge_fit, degree, lam):
    x, y, x_test, y_test = curve_data()
    Phi = np.asarray(polynomial_features(x.copy(), degree), dtype=float)
    if Phi.shape != (len(x), degree + 1):
        raise ValueError(f"polynomial_features returned shape {Phi.shape}, expected {(len(x), degree + 1)}")
    w = np.asarray(ridge_fit(Phi, y.copy(), lam), dtype=float)
    train = float(np.mean((Phi @ w - y) ** 2))
    test = float(np.mean((np.asarray(polynomial_features(x_test.copy(), degree), dtype=float) @ w - y_test) ** 2))
    curve = np.asarray(polynomial_features(GRID.copy(), degree), dtype=float) @ w
    return frozen((curve, train, test, Phi))


def _fits_by_degree(polynomial_features, ridge_fit):
    """Every degree's least-squares fit (lam 0), made once: the error curves and each move read them."""
    return [_fit(polynomial_features, ridge_fit, d, 0.0) for d in DEGREES]


def _curve_axes(fig, rect):
    ax = fig.add_axes(rect)
    x, y, _, _ = curve_data()
    ax.plot(GRID, np.sin(np.pi * GRID), color="gray", lw=1.0, label="sin(πx)")
    ax.plot(x, y, "ko", ms=3.5, label="20 training points")
    ax.set_xlim(-1.05, 1.05)
    ax.set_ylim(-2.0, 2.0)
    ax.tick_params(labelsize=7)
    return ax


def _degree_figure() -> LiveFigure:
    live = LiveFigure(Figure(figsize=(8.4, 3.2)))
    fig = live.figure
    a1 = _curve_axes(fig, [0.05, 0.12, 0.42, 0.78])
    live.fit, = live.changes(a1.plot([], [], color="tab:blue", lw=1.5, label="your fit"))
    a1.legend(fontsize=7, loc="lower right")
    a1.set_title("the fit (lam = 0)", fontsize=9)
    a2 = live.a2 = fig.add_axes([0.57, 0.12, 0.41, 0.78])
    live.train, = a2.plot([], [], "o-", color="tab:blue", ms=3, lw=1, label="training error")
    live.test, = a2.plot([], [], "s-", color="tab:red", ms=3, lw=1, label="held-out error")
    live.marker = live.changes(a2.axvline(0, color="k", lw=0.8))
    a2.set_yscale("log")
    a2.set_xlim(-0.5, DEGREES[-1] + 0.5)
    a2.set_ylim(1e-3, 1e3)
    a2.set_xlabel("degree", fontsize=8)
    a2.tick_params(labelsize=7)
    a2.legend(fontsize=7, loc="upper left")
    return live


def render_degree(degree, *, polynomial_features, ridge_fit, effective_dof, cache=None):
    """The degree-``degree`` least-squares fit, both errors against the degree, the effective dof (lam 0)."""
    degree = int(degree)
    fits = cached(cache, ("fits", polynomial_features, ridge_fit),
                  lambda: _fits_by_degree(polynomial_features, ridge_fit))
    train, test = np.array([f[1] for f in fits]), np.array([f[2] for f in fits])
    curve, tr, te, Phi = fits[degree]
    dof = float(effective_dof(np.array(Phi), 0.0))
    live = kept_figure(cache, _degree_figure)
    if live.new_background((polynomial_features, ridge_fit)):
        live.train.set_data(DEGREES, np.clip(train, 1e-4, 1e4))
        live.test.set_data(DEGREES, np.clip(test, 1e-4, 1e4))
    live.fit.set_data(GRID, np.clip(curve, -5, 5))
    live.marker.set_xdata([degree, degree])
    best = int(np.argmin(test))
    text = readout(f"degree {degree}: training error {tr:.4f}, held-out error {te:.4f}, effective dof {dof:.1f} "
                   f"(of {degree + 1} parameters); the best held-out degree is {best}",
                   degree=degree, train_error=tr, heldout_error=te, effective_dof=dof, best_degree=best)
    return live, text


def degree_explorer(*, polynomial_features, ridge_fit, effective_dof):
    controls = {"degree": widgets.IntSlider(3, min=0, max=DEGREES[-1], description="degree", continuous_update=False)}
    return Explorer(render_degree, controls,
                    needs={"polynomial_features": polynomial_features, "ridge_fit": ridge_fit,
                           "effective_dof": effective_dof},
                    height="330px", title="Polynomial curve fitting: the degree")


# ------------------------------------------------------------ ridge on a fixed degree

RIDGE_DEGREE = 12


def _ridge_figure() -> LiveFigure:
    live = LiveFigure(Figure(figsize=(6.0, 3.2)))
    a1 = _curve_axes(live.figure, [0.08, 0.12, 0.9, 0.78])
    live.fit, = live.changes(a1.plot([], [], color="tab:blue", lw=1.5, label="your ridge fit"))
    a1.legend(fontsize=7, loc="lower right")
    a1.set_title(f"degree {RIDGE_DEGREE}, ridge", fontsize=9)
    return live


def render_ridge(log10_lam, *, polynomial_features, ridge_fit, effective_dof, cache=None):
    """The degree-12 ridge fit at lam = 10 ** log10_lam, its errors and effective dof."""
    lam = float(10.0 ** float(log10_lam))
    curve, tr, te, Phi = cached(cache, ("fit", RIDGE_DEGREE, lam, polynomial_features, ridge_fit),
                                lambda: _fit(polynomial_features, ridge_fit, RIDGE_DEGREE, lam))
    dof = float(effective_dof(np.array(Phi), lam))
    live = kept_figure(cache, _ridge_figure)
    live.new_background("axes")
    live.fit.set_data(GRID, np.clip(curve, -5, 5))
    text = readout(f"lam = {lam:.1e}: effective dof {dof:.2f} of {RIDGE_DEGREE + 1}; training error {tr:.4f}, "
                   f"held-out error {te:.4f}", lam=lam, effective_dof=dof, train_error=tr, heldout_error=te)
    return live, text


def ridge_explorer(*, polynomial_features, ridge_fit, effective_dof):
    controls = {"log10_lam": widgets.FloatSlider(-3.0, min=-8.0, max=2.0, step=0.5, description="log₁₀ lam",
                                                 continuous_update=False)}
    return Explorer(render_ridge, controls,
                    needs={"polynomial_features": polynomial_features, "ridge_fit": ridge_fit,
                           "effective_dof": effective_dof},
                    height="330px", title="Ridge on a degree-12 polynomial: lam")


# ------------------------------------------------------------ double descent

DD_N, DD_D = 40, 5
FEATURE_COUNTS = (4, 8, 16, 24, 32, 36, 40, 44, 48, 64, 100, 200, 400)
SLICE = np.linspace(-3.0, 3.0, 121)


@functools.cache
def descent_data():
    """(X, y, X_test, y_test, beta): the integration check's teacher (seed 0): 40 points in 5 dimensions,
    y = tanh(x @ beta) + noise of sd 0.2, and 1000 held-out points."""
    from ..drivers.ch13_generalization import tanh_teacher
    rng = np.random.default_rng(0)
    beta = rng.standard_normal(DD_D) / np.sqrt(DD_D)
    X, y = tanh_teacher(DD_N, DD_D, rng, beta)
    X_test, y_test = tanh_teacher(1000, DD_D, rng, beta)
    return frozen((X, y, X_test, y_test, beta))


def _descent(random_relu_features, ridge_fit):
    """Per feature count the held-out errors of DRAWS min-norm fits, and the fits along the teacher's direction."""
    X, y, X_test, y_test, beta = descent_data()
    line = SLICE[:, None] * (beta / np.linalg.norm(beta))
    errors, curves = [], []
    for p in FEATURE_COUNTS:
        row, row_curves = [], []
        for draw in range(DRAWS):
            F, W, b = random_relu_features(X.copy(), p, np.random.default_rng(1000 * p + draw))
            W, b = np.asarray(W, dtype=float), np.asarray(b, dtype=float)
            w = np.asarray(ridge_fit(np.asarray(F, dtype=float), y.copy(), 0.0), dtype=float)
            row.append(float(np.mean((np.maximum(X_test @ W + b, 0) @ w - y_test) ** 2)))
            row_curves.append(np.maximum(line @ W + b, 0) @ w)
        errors.append(row)
        curves.append(row_curves)
    return frozen((np.array(errors), np.array(curves)))


def _descent_figure() -> LiveFigure:
    live = LiveFigure(Figure(figsize=(8.4, 3.2)))
    fig = live.figure
    a1 = live.a1 = fig.add_axes([0.07, 0.14, 0.42, 0.76])
    live.curve, = a1.plot([], [], "o-", color="tab:red", ms=3, lw=1, label=f"min-norm (median of {DRAWS} draws)")
    a1.axvline(DD_N, color="gray", ls=":", lw=1, label=f"p = n = {DD_N}")
    live.marker = live.changes(a1.axvline(DD_N, color="k", lw=0.8))
    a1.set_xscale("log")
    a1.set_yscale("log")
    a1.set_xlim(3, 500)
    a1.set_ylim(1e-2, 1e3)
    a1.set_xlabel("number of random ReLU features p", fontsize=8)
    a1.set_title("held-out error", fontsize=9)
    a1.tick_params(labelsize=7)
    a1.legend(fontsize=7, loc="upper right")
    a2 = fig.add_axes([0.57, 0.14, 0.41, 0.76])
    _, _, _, _, beta = descent_data()
    a2.plot(SLICE, np.tanh(SLICE * np.linalg.norm(beta)), color="gray", lw=1.0, label="teacher tanh(x·β)")
    live.fit, = live.changes(a2.plot([], [], color="tab:blue", lw=1.2, label="min-norm fit (draw 0)"))
    a2.set_xlim(SLICE[0], SLICE[-1])
    a2.set_ylim(-3, 3)
    a2.set_xlabel("t, along x = t β/|β|", fontsize=8)
    a2.tick_params(labelsize=7)
    a2.legend(fontsize=7, loc="lower right")
    a2.set_title("the fitted function along the teacher's direction", fontsize=9)
    return live


def render_double_descent(n_features, *, random_relu_features, ridge_fit, cache=None):
    """Held-out error against the feature count (median over draws) and the fit at ``n_features``."""
    p = int(n_features)
    def compute():
        with one_blas_thread():
            return _descent(random_relu_features, ridge_fit)

    errors, curves = cached(cache, ("descent", random_relu_features, ridge_fit), compute)
    median = np.median(errors, axis=1)
    i = FEATURE_COUNTS.index(p)
    live = kept_figure(cache, _descent_figure)
    if live.new_background((random_relu_features, ridge_fit)):
        live.curve.set_data(FEATURE_COUNTS, np.clip(median, 1e-3, 1e5))
    live.marker.set_xdata([p, p])
    live.fit.set_data(SLICE, np.clip(curves[i][0], -10, 10))
    peak = FEATURE_COUNTS[int(np.argmax(median))]
    text = readout(f"p = {p} features for n = {DD_N} points: held-out error {median[i]:.3g} (median of {DRAWS} "
                   f"draws); the curve peaks at p = {peak}, and at p = {FEATURE_COUNTS[-1]} it is {median[-1]:.3g}",
                   n_features=p, heldout_error=float(median[i]), peak_features=peak, last_error=float(median[-1]),
                   peak_error=float(median.max()))
    return live, text


def double_descent_explorer(*, random_relu_features, ridge_fit):
    controls = {"n_features": widgets.SelectionSlider(options=list(FEATURE_COUNTS), value=DD_N,
                                                      description="features p", continuous_update=False)}
    return Explorer(render_double_descent, controls,
                    needs={"random_relu_features": random_relu_features, "ridge_fit": ridge_fit},
                    height="330px", title="Double descent: min-norm least squares on random ReLU features")


# ------------------------------------------------------------ the K folds

MAX_N = 40
_TRAINING, _EMPTY = 10, 11  # colour indices after the ten folds' colours: light gray, white


def _folds_figure() -> LiveFigure:
    live = LiveFigure(Figure(figsize=(7.0, 2.8)))
    ax = live.ax = live.figure.add_axes([0.08, 0.16, 0.9, 0.74])
    from matplotlib import colormaps
    from matplotlib.colors import ListedColormap
    colors = ListedColormap(list(colormaps["tab10"].colors) + [(0.93, 0.93, 0.93), (1.0, 1.0, 1.0)])
    live.image = live.changes(ax.pcolormesh(np.arange(MAX_N + 1) - 0.5, np.arange(11) - 0.5,
                                            np.full((10, MAX_N), _EMPTY), cmap=colors, vmin=-0.5, vmax=11.5))
    ax.set_xlim(-1.0, MAX_N)   # a margin: the strips, redrawn at every move, never cover the axes' frame
    ax.set_ylim(10.0, -1.0)
    ax.set_xlabel("data index (gray: training, colour: the fold's validation indices)", fontsize=8)
    ax.set_ylabel("fold", fontsize=8)
    ax.tick_params(labelsize=7)
    return live


def render_folds(n, k, seed, *, kfold_indices, cache=None):
    """One strip per fold: its validation indices in the fold's colour, training indices light gray."""
    n, k, seed = int(n), int(k), int(seed)
    live = kept_figure(cache, _folds_figure)
    live.new_background("axes")
    if k > n:
        live.image.set_array(np.full((10, MAX_N), _EMPTY).ravel())
        return live, readout(f"k = {k} > n = {n}: kfold_indices raises ValueError (at most n folds)", n=n, k=k,
                             fold_sizes=[])
    pairs = kfold_indices(n, k, np.random.default_rng(seed))
    strips = np.full((10, MAX_N), _EMPTY)
    sizes, leaks = [], 0
    for i, (train, val) in enumerate(pairs):
        train, val = np.asarray(train, dtype=int), np.asarray(val, dtype=int)
        strips[i, :n] = _TRAINING
        strips[i, val] = i % 10
        sizes.append(len(val))
        leaks += len(set(train.tolist()) & set(val.tolist()))
    live.image.set_array(strips.ravel())
    text = readout(f"n = {n}, k = {k}: validation folds of sizes {sizes}; "
                   f"{'no index is in its own training set' if leaks == 0 else f'{leaks} indices leak into training'}",
                   n=n, k=k, fold_sizes=sizes, leaks=leaks)
    return live, text


def folds_explorer(*, kfold_indices):
    controls = {"n": widgets.IntSlider(23, min=2, max=MAX_N, description="n", continuous_update=False),
                "k": widgets.IntSlider(5, min=2, max=10, description="k", continuous_update=False),
                "seed": widgets.IntSlider(0, min=0, max=9, description="seed", continuous_update=False)}
    return Explorer(render_folds, controls, needs={"kfold_indices": kfold_indices}, height="300px",
                    title="K-fold cross-validation: the folds as index strips")
