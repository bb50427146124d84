"""Widgets of chapter 10 (why gradient descent works).

- ``momentum_explorer(gradient_descent, heavy_ball, nesterov, pl_rate_bound, polyak_parameters)``:
  the three methods on a 2-D quadratic with condition-number, learning-rate and momentum sliders,
  the measured suboptimality against Lemma 3.4's bound, divergence beyond lr = 2/L;
- ``noise_floor_explorer(minibatch_sgd)``: the excess loss of mini-batch SGD per epoch, its floor
  against batch size and learning rate, the estimate lr tr(Sigma) (N - B) / (4 B (N - 1)) for
  independent batches and lr² tr(A Sigma) (N - B)(N + B) / (12 B² (N - 1)) for reshuffled epochs
  (derived in the chapter's section 8).

Each render function is pure and returns ``(figure, readout_text)``.
"""
from __future__ import annotations

import functools

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .explorer import Explorer, cached, frozen, readout
from .picture import LiveFigure, kept_figure, plain_log_axis

__all__ = ["momentum_explorer", "render_momentum", "noise_floor_explorer", "render_noise_floor",
           "quadratic", "noise_problem", "floor_estimates"]

_COLORS = {"gradient descent": "tab:blue", "heavy ball": "tab:red", "Nesterov": "tab:green"}
_BLOWUP = 1e6  # relative suboptimality beyond which a run counts as diverged


# ------------------------------------------------------------ momentum on a 2-D quadratic

_ANGLE = np.pi / 6
_ROT = np.array([[np.cos(_ANGLE), -np.sin(_ANGLE)], [np.sin(_ANGLE), np.cos(_ANGLE)]])


def quadratic(kappa):
    """(A, theta0) of h(θ) = ½ θᵀAθ with eigenvalues L = 1 and mu = 1/kappa along rotated axes."""
    A = _ROT @ np.diag([1.0, 1.0 / kappa]) @ _ROT.T
    theta0 = _ROT @ np.array([0.6, 1.0]) * 2.0   # equal weight on both eigen-directions, roughly
    return A, theta0


def _relative_gap(path, A):
    path = np.asarray(path, dtype=float)
    with np.errstate(all="ignore"):
        h = 0.5 * np.einsum("ti,ij,tj->t", path, A, path)
        return h / h[0]


def _ellipses(A, levels):
    """Level sets ½ θᵀAθ = level as one polyline (NaN-separated): drawing it is one cheap Line2D."""
    w, V = np.linalg.eigh(A)
    s = np.linspace(0, 2 * np.pi, 73)
    circle = np.stack([np.cos(s), np.sin(s)])
    pieces = []
    for level in levels:
        pts = V @ (np.sqrt(2 * level / w)[:, None] * circle)
        pieces.append(pts.T)
        pieces.append(np.full((1, 2), np.nan))
    return np.vstack(pieces)


def _runs(kappa, lr, beta, steps, polyak, gradient_descent, heavy_ball, nesterov, polyak_parameters):
    A, theta0 = quadratic(kappa)
    L, mu = 1.0, 1.0 / kappa

    def grad(theta):
        return A @ theta

    hb_lr, hb_beta = (polyak_parameters(L, mu) if polyak else (lr, beta))
    with np.errstate(all="ignore"):
        paths = {"gradient descent": np.asarray(gradient_descent(grad, theta0.copy(), lr, steps), dtype=float),
                 "heavy ball": np.asarray(heavy_ball(grad, theta0.copy(), float(hb_lr), float(hb_beta), steps),
                                          dtype=float),
                 "Nesterov": np.asarray(nesterov(grad, theta0.copy(), lr, beta, steps), dtype=float)}
    return frozen(paths), (float(hb_lr), float(hb_beta))


STEP_AXES = (10, 20, 50, 100, 200)  # the step axis ends at the first of these that holds the run: most moves keep it


def _momentum_figure() -> LiveFigure:
    """The figure, built once per explorer: trajectories (left), relative suboptimality (right)."""
    live = LiveFigure(Figure(figsize=(8.4, 3.4)))
    fig = live.figure
    a1 = fig.add_axes([0.04, 0.13, 0.36, 0.77])
    a2 = live.a2 = fig.add_axes([0.49, 0.13, 0.49, 0.77])
    live.levels, = live.changes(a1.plot([], [], color="lightgray", lw=0.7))
    live.paths, live.gaps = {}, {}
    for name, color in _COLORS.items():
        live.paths[name], = live.changes(a1.plot([], [], "-o", color=color, ms=1.8, lw=1.0, label=name))
        live.gaps[name], = live.changes(a2.plot([1], [1], color=color, lw=1.3, label=name))
    a2.set_yscale("log")
    live.bound, = live.changes(a2.plot([1], [1], "k--", lw=1.0, label="pl_rate_bound (lr = 1/L)"))
    _, theta0 = quadratic(1.0)
    live.changes([a1.plot(*theta0, "ks", ms=4)[0], a1.plot(0, 0, "k*", ms=8)[0]])  # over the paths
    r = 1.3 * np.abs(theta0).max()
    a1.set_xlim(-r, r)
    a1.set_ylim(-r, r)
    a1.set_aspect("equal")
    a1.set_xticks([])
    a1.set_yticks([])  # coordinates carry no meaning here, and tick labels are the slow part of a redraw
    a1.set_title("h = ½ θᵀAθ, L = 1, μ = 1/κ", fontsize=9)  # background: κ's value is in the readout
    a2.set_ylim(1e-16, 1e3)
    plain_log_axis(a2.yaxis, [1e-15, 1e-10, 1e-5, 1.0])
    a2.set_xlabel("step t", fontsize=8)
    a2.xaxis.set_major_locator(MaxNLocator(5, integer=True))
    a2.tick_params(labelsize=7)
    a2.set_title("(h(θ_t) − h*) / (h(θ_0) − h*)", fontsize=9)
    live.on_top(a2.legend(fontsize=7, loc="lower left"))  # over the curves, drawn once
    return live


def render_momentum(kappa, lr_times_L, beta, steps, polyak, *, gradient_descent, heavy_ball, nesterov,
                    pl_rate_bound, polyak_parameters, cache=None):
    """Trajectories (left) and relative suboptimality against pl_rate_bound (right).

    The step axis ends at the first of STEP_AXES that holds the run; with a ``RenderCache`` the first
    render asks for the background of each of them (drawn once its picture is out), so no later move
    redraws the axes."""
    kappa, lr, beta, steps = float(kappa), float(lr_times_L), float(beta), int(steps)
    key = ("runs", kappa, lr, beta, steps, bool(polyak), gradient_descent, heavy_ball, nesterov,
           polyak_parameters if polyak else None)
    paths, (hb_lr, hb_beta) = cached(cache, key, lambda: _runs(kappa, lr, beta, steps, polyak, gradient_descent,
                                                               heavy_ball, nesterov, polyak_parameters))
    L, mu = 1.0, 1.0 / kappa
    T = np.arange(steps + 1)
    bound = np.array([float(pl_rate_bound(L, mu, int(t))) for t in T])
    A, theta0 = quadratic(kappa)
    live = kept_figure(cache, _momentum_figure)
    if cache is not None:  # every step axis, drawn once the first picture is out
        live.draw_ahead(STEP_AXES, lambda end: live.a2.set_xlim(0, end))
    x_end = next((end for end in STEP_AXES if end >= steps), steps)
    if live.new_background(x_end):
        live.a2.set_xlim(0, x_end)

    levels = 0.5 * float(theta0 @ A @ theta0) * np.geomspace(1e-3, 1.0, 7)
    live.levels.set_data(*_ellipses(A, levels).T)
    finals = {}
    for name, path in paths.items():
        gap = _relative_gap(path, A)
        ok = np.isfinite(gap) & (gap < _BLOWUP)
        last = int(np.argmin(ok)) if not ok.all() else len(gap)
        live.paths[name].set_data(path[:last, 0], path[:last, 1])
        live.gaps[name].set_data(T[:last], np.maximum(gap[:last], 1e-17))
        finals[name] = None if last < len(gap) else float(gap[-1])
    live.bound.set_data(T, np.maximum(bound, 1e-17))

    def fmt(value):
        return "diverged" if value is None else f"{value:.2e}"

    diverges = lr > 2.0
    hb_text = f"heavy ball{' (Polyak: lr·L = %.3f, β = %.3f)' % (hb_lr, hb_beta) if polyak else ''}"
    text = readout(f"κ = {kappa:.3g}, lr = {lr:.2f}/L{' > 2/L' if diverges else ''}, β = {beta:.2f}, "
                   f"after {steps} steps: "
                   f"gradient descent {fmt(finals['gradient descent'])} (PL bound {bound[-1]:.2e}), "
                   f"{hb_text} {fmt(finals['heavy ball'])}, Nesterov {fmt(finals['Nesterov'])}",
                   kappa=kappa, lr_times_L=lr, beta=beta, steps=steps, beyond_2_over_L=diverges, polyak=bool(polyak),
                   heavy_ball_lr_times_L=hb_lr, heavy_ball_beta=hb_beta,
                   gradient_descent_gap=finals["gradient descent"], pl_bound=float(bound[-1]),
                   heavy_ball_gap=finals["heavy ball"], nesterov_gap=finals["Nesterov"])
    return live, text


def momentum_explorer(*, gradient_descent, heavy_ball, nesterov, pl_rate_bound, polyak_parameters):
    controls = {
        "kappa": widgets.FloatLogSlider(20.0, base=10, min=0, max=3, step=0.1, description="κ = L/μ",
                                        readout_format=".0f", continuous_update=False),
        "lr_times_L": widgets.FloatSlider(1.0, min=0.1, max=2.4, step=0.05, description="lr · L",
                                          continuous_update=False),
        "beta": widgets.FloatSlider(0.6, min=0.0, max=0.99, step=0.01, description="β", continuous_update=False),
        "steps": widgets.IntSlider(60, min=10, max=200, step=10, description="steps", continuous_update=False),
        "polyak": widgets.Checkbox(False, description="Polyak (heavy ball)", indent=False),
    }
    return Explorer(render_momentum, controls,
                    needs={"gradient_descent": gradient_descent, "heavy_ball": heavy_ball, "nesterov": nesterov,
                           "pl_rate_bound": pl_rate_bound, "polyak_parameters": polyak_parameters},
                    height="390px", title="Gradient descent, heavy ball and Nesterov on a 2-D quadratic", columns=5)


# ------------------------------------------------------------ the noise floor of mini-batch SGD

NOISE_N, NOISE_D, NOISE_STEPS = 64, 4, 512
BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64)
LEARNING_RATES = (0.02, 0.025, 0.032, 0.04, 0.05, 0.063, 0.08, 0.1, 0.125, 0.16, 0.2)  # about 10 per decade


@functools.cache
def noise_problem():
    """(X, y, h_star, trace_sigma): a fixed noisy least-squares problem and the gradient noise at θ*."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((NOISE_N, NOISE_D))
    y = X @ (0.3 * rng.standard_normal(NOISE_D)) + 0.5 * rng.standard_normal(NOISE_N)
    theta_star = np.linalg.lstsq(X, y, rcond=None)[0]
    r = X @ theta_star - y
    per_example = X * r[:, None]                  # gradients of the examples' losses at θ* (they average to 0)
    trace_sigma = float(np.mean(np.sum(per_example ** 2, axis=1)))
    frozen((X, y))
    return X, y, float(0.5 * np.mean(r ** 2)), trace_sigma


@functools.cache
def _trace_a_sigma():
    """tr(A Σ) at θ* for the problem of ``noise_problem``, A = X.T X / N: the reshuffled floor's constant."""
    X, y, _, _ = noise_problem()
    r = X @ np.linalg.lstsq(X, y, rcond=None)[0] - y
    per_example = X * r[:, None]
    return float(np.mean(np.sum((per_example @ (X.T @ X / len(y))) * per_example, axis=1)))


def floor_estimates(batch_size, lr):
    """(independent, reshuffled): the noise floors of section 8 for the explorer's problem.

    independent = lr tr(Σ) (N - B) / (4 B (N - 1)), batches drawn afresh at every step (small lr);
    reshuffled = lr² tr(A Σ) (N - B)(N + B) / (12 B² (N - 1)), one permutation per epoch, B dividing N,
    an epoch short against the time the iterates take to forget (lr L N / B up to about 2)."""
    _, _, _, trace_sigma = noise_problem()
    N, B = NOISE_N, int(batch_size)
    independent = lr * trace_sigma * (N - B) / (4 * B * (N - 1))
    reshuffled = lr ** 2 * _trace_a_sigma() * (N - B) * (N + B) / (12 * B ** 2 * (N - 1))
    return independent, reshuffled


def _excess(minibatch_sgd, batch_size, lr, seed):
    """The excess loss after each of the first NOISE_STEPS steps (whole epochs: ceil(steps / per epoch))."""
    X, y, h_star, _ = noise_problem()
    per_epoch = -(-NOISE_N // batch_size)
    epochs = -(-NOISE_STEPS // per_epoch)
    losses = np.asarray(minibatch_sgd(X.copy(), y.copy(), np.zeros(NOISE_D), lr, batch_size, epochs,
                                      np.random.default_rng(seed)), dtype=float)
    if losses.shape != (epochs * per_epoch,):
        raise ValueError(f"minibatch_sgd returned shape {losses.shape}, expected ({epochs * per_epoch},): "
                         "one loss per step")
    excess = losses[:NOISE_STEPS] - h_star
    return frozen(excess)


def _noise_figure() -> LiveFigure:
    live = LiveFigure(Figure(figsize=(6.6, 3.2)))
    ax = live.figure.add_axes([0.11, 0.15, 0.86, 0.75])
    ax.set_yscale("log")
    live.run, = live.changes(ax.plot([1], [1], color="tab:blue", lw=0.8, label="mini-batch"))
    live.full, = live.changes(ax.plot([1], [1], color="gray", lw=1.2, label=f"full batch ({NOISE_N})"))
    live.floor = live.changes(ax.axhline(1.0, color="tab:blue", ls=":", lw=1.2, label="measured floor"))
    live.estimate = live.changes(ax.axhline(1.0, color="tab:orange", ls="--", lw=1.2,
                                            label="independent batches η trΣ (N−B)/(4B(N−1))"))
    live.reshuffled = live.changes(ax.axhline(1.0, color="tab:green", ls="--", lw=1.2,
                                              label="reshuffled η² tr(AΣ)(N²−B²)/(12B²(N−1))"))
    ax.set_xlim(0, NOISE_STEPS)
    ax.set_ylim(1e-9, 10)
    plain_log_axis(ax.yaxis, [1e-8, 1e-6, 1e-4, 1e-2, 1.0])
    ax.set_xlabel("step", fontsize=8)
    ax.set_ylabel("h(θ) − h*", fontsize=8)
    ax.tick_params(labelsize=7)
    live.on_top(ax.legend(fontsize=7, loc="upper right"))  # over the curves, drawn once
    ax.set_title(f"mini-batch SGD, N = {NOISE_N}", fontsize=10)  # background: batch and lr are in the readout
    return live


def _full_batch(cache, minibatch_sgd, lr, seed):
    """The full-batch run at ``lr``. With a cache, the runs at every rate of LEARNING_RATES are made at the
    first render and kept together (one cache entry): moving the learning rate then costs one run, not two."""
    if cache is None or lr not in LEARNING_RATES:
        return cached(cache, ("run", NOISE_N, lr, seed, minibatch_sgd),
                      lambda: _excess(minibatch_sgd, NOISE_N, lr, seed))
    runs = cached(cache, ("full batch", LEARNING_RATES, seed, minibatch_sgd),
                  lambda: {rate: _excess(minibatch_sgd, NOISE_N, rate, seed) for rate in LEARNING_RATES})
    return runs[lr]


def render_noise_floor(batch_size, lr, *, minibatch_sgd, seed=0, cache=None):
    """Excess loss of mini-batch SGD over NOISE_STEPS steps, its floor (mean over the last quarter) and
    the estimate for independent batches."""
    batch_size, lr = int(batch_size), float(lr)
    full = _full_batch(cache, minibatch_sgd, lr, seed)
    run = full if batch_size == NOISE_N else cached(cache, ("run", batch_size, lr, seed, minibatch_sgd),
                                                    lambda: _excess(minibatch_sgd, batch_size, lr, seed))
    live = kept_figure(cache, _noise_figure)
    live.new_background("axes")  # fixed limits: nothing in the background changes
    B = batch_size
    estimate, reshuffled = floor_estimates(B, lr)
    tail = NOISE_STEPS // 4
    with np.errstate(all="ignore"):
        finite = bool(np.all(np.isfinite(run)) and run.max() < 1e6)
        floor = float(np.mean(run[-tail:])) if finite else float("inf")
        full_floor = float(np.mean(full[-tail:]))
        steps = np.arange(1, NOISE_STEPS + 1)
        live.run.set_data(steps, np.clip(run, 1e-12, 1e6))
        live.full.set_data(steps, np.clip(full, 1e-12, 1e6))
    live.floor.set_ydata([floor, floor] if finite else [np.nan, np.nan])
    live.estimate.set_ydata([estimate, estimate] if estimate > 0 else [np.nan, np.nan])
    live.reshuffled.set_ydata([reshuffled, reshuffled] if reshuffled > 0 else [np.nan, np.nan])
    floor_text = f"{floor:.2e}" if finite else "diverged"
    text = readout(f"batch {B}, lr {lr:.3g}: floor (mean excess loss over the last {tail} steps) {floor_text}; "
                   f"estimate for independent batches {estimate:.2e}; for reshuffled epochs {reshuffled:.2e}; "
                   f"full batch {full_floor:.1e}",
                   batch_size=B, lr=lr, tail_steps=tail, floor=floor, diverged=not finite,
                   independent_estimate=float(estimate), reshuffled_estimate=float(reshuffled),
                   full_batch_floor=full_floor)
    return live, text


def noise_floor_explorer(*, minibatch_sgd):
    controls = {
        "batch_size": widgets.SelectionSlider(options=list(BATCH_SIZES), value=4, description="batch",
                                              continuous_update=False),
        "lr": widgets.SelectionSlider(options=list(LEARNING_RATES), value=0.05, description="lr",
                                      continuous_update=False),
    }
    return Explorer(render_noise_floor, controls,
                    needs={"minibatch_sgd": minibatch_sgd}, height="340px",
                    title="The noise floor of mini-batch SGD")
