"""Widgets of chapter 11 (denoising diffusion): every number they show comes from the student's functions.

* ``forward_explorer``: a 2-D ring of Gaussian blobs and a digit noised by the student's ``q_sample``
  under the student's linear or cosine schedule, with ``abar_t`` on the schedule;
* ``RingRun`` (made in the cell before the next two): an eps-MLP trained on the ring with the student's
  ``q_sample`` and ``eps_loss`` (``dlcourse.drivers.ch11_diffusion.train_eps_model``), and one run of the
  student's ``ddpm_sample`` with it, recorded step by step;
* ``reverse_explorer``: that run, step by step, with the student's ``predict_x0`` of every point;
* ``score_explorer``: the exact score of the noised ring mixture (the student's ``gaussian_mixture_score``)
  against the model's (the student's ``score_from_eps``), as arrows on a grid, with a noise-level slider.

Each widget is a pure ``render_*`` function (controls and student functions in, ``(figure, readout)``
out) wrapped in an ``Explorer``. None of them contains a solution of a graded function.
"""
from __future__ import annotations

import functools

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from dlcourse.drivers.ch11_diffusion import RING_SIGMA, eps_function, ring_centres, ring_data, train_eps_model

from .explorer import Explorer, RenderCache, cached, frozen, readout
from .picture import LiveFigure, kept_figure

__all__ = ["T", "SCHEDULES", "forward_schedule", "render_forward", "forward_explorer",
           "RingRun", "render_reverse", "reverse_explorer", "model_eps_on_grid", "render_score", "score_explorer"]

T = 1000
SCHEDULES = ("linear", "cosine")
N_POINTS = 400
LIMIT = 3.2


@functools.cache
def _cloud():
    return frozen(ring_data(N_POINTS, 0))


# The first of scikit-learn's 8x8 digits (a 0), pixels 0..16: written here, since importing scikit-learn
# would cost the widget's first picture 2-3 s.
FIRST_DIGIT = ((0, 0, 5, 13, 9, 1, 0, 0), (0, 0, 13, 15, 10, 15, 5, 0), (0, 3, 15, 2, 0, 11, 8, 0),
               (0, 4, 12, 0, 0, 8, 8, 0), (0, 5, 8, 0, 0, 9, 8, 0), (0, 4, 11, 0, 1, 12, 7, 0),
               (0, 2, 14, 5, 10, 12, 0, 0), (0, 0, 6, 13, 10, 0, 0, 0))


@functools.cache
def _digit():
    return frozen(np.array(FIRST_DIGIT, dtype=float) / 16.0 * 2 - 1)  # pixels in [-1, 1]


def forward_schedule(schedule, *, linear_betas, cosine_alpha_bars, alpha_bars):
    """``abar`` (T,) of the student's linear (``alpha_bars(linear_betas(T))``) or cosine schedule."""
    if schedule == "linear":
        abar = alpha_bars(linear_betas(T))
    else:
        abar = cosine_alpha_bars(T)[1]
    abar = np.asarray(abar, dtype=float)
    if abar.shape != (T,):
        raise ValueError(f"the {schedule} schedule gave abar of shape {abar.shape}, expected ({T},).")
    return abar


def _forward_figure() -> LiveFigure:
    live = LiveFigure(Figure(figsize=(9.0, 3.0)))
    fig = live.figure
    ax_cloud = fig.add_axes([0.02, 0.1, 0.26, 0.78])
    ax_digit = fig.add_axes([0.31, 0.1, 0.24, 0.78])
    ax_curve = live.ax_curve = fig.add_axes([0.63, 0.17, 0.35, 0.7])
    ax_cloud.set(xlim=(-LIMIT, LIMIT), ylim=(-LIMIT, LIMIT), xticks=[], yticks=[], aspect="equal")
    ax_cloud.set_title("2-D ring, x_t", fontsize=9)
    live.cloud = live.changes(ax_cloud.scatter(np.zeros(N_POINTS), np.zeros(N_POINTS), s=3, color="tab:blue"))
    live.digit = live.changes(ax_digit.imshow(np.zeros((8, 8)), cmap="gray_r", vmin=-2, vmax=2,
                                              interpolation="nearest"))
    live.changes(list(ax_digit.spines.values()))
    ax_digit.set(xticks=[], yticks=[])
    ax_digit.set_title("a digit, x_t", fontsize=9)
    live.curve, = ax_curve.plot([], [], color="k", lw=1.2)
    live.marker, = live.changes(ax_curve.plot([], [], "o", color="tab:red", ms=6))
    live.level = live.changes(ax_curve.axvline(0, color="tab:red", lw=0.6, ls=":"))
    ax_curve.set(xlim=(0, T), ylim=(-0.02, 1.02))
    ax_curve.set_xlabel("t", fontsize=8)
    ax_curve.tick_params(labelsize=7)
    live.curve_title = ax_curve.set_title(" ", fontsize=9)
    return live


def render_forward(schedule="linear", t=100, *, linear_betas, cosine_alpha_bars, alpha_bars, q_sample, cache=None):
    """The ring and a digit at step t of the forward process (the same noise at every t: one seed)."""
    t = int(t)
    abar = cached(cache, ("abar", schedule, linear_betas, cosine_alpha_bars, alpha_bars),
                  lambda: frozen(forward_schedule(schedule, linear_betas=linear_betas,
                                                  cosine_alpha_bars=cosine_alpha_bars, alpha_bars=alpha_bars)))
    cloud, digit = _cloud(), _digit()
    xt, _ = q_sample(cloud.copy(), t, abar.copy(), np.random.default_rng(0))
    dt, _ = q_sample(digit.reshape(1, 64).copy(), t, abar.copy(), np.random.default_rng(1))
    xt, dt = np.asarray(xt, dtype=float), np.asarray(dt, dtype=float).reshape(8, 8)

    live = kept_figure(cache, _forward_figure)
    if live.new_background(("schedule", schedule, linear_betas, cosine_alpha_bars, alpha_bars)):
        live.curve.set_data(np.arange(T), abar)
        live.curve_title.set_text(f"ᾱ_t of the {schedule} schedule")
    live.cloud.set_offsets(xt)
    live.digit.set_data(dt)
    live.marker.set_data([t], [abar[t]])
    live.level.set_xdata([t, t])
    correlation = float(np.corrcoef(dt.ravel(), digit.ravel())[0, 1])
    radius = float(np.sqrt((xt ** 2).sum(1)).mean())
    return live, readout(f"{schedule} schedule, t = {t}: ᾱ_t = {abar[t]:.4f}, signal √ᾱ_t = {np.sqrt(abar[t]):.3f}, "
                         f"noise √(1 − ᾱ_t) = {np.sqrt(1 - abar[t]):.3f} · ring: mean radius {radius:.2f} "
                         f"(data 1.5) · digit: correlation with the clean digit {correlation:.2f}",
                         schedule=schedule, t=t, alpha_bar=float(abar[t]), signal=float(np.sqrt(abar[t])),
                         noise=float(np.sqrt(1 - abar[t])), mean_radius=radius, correlation=correlation)


def forward_explorer(*, linear_betas, cosine_alpha_bars, alpha_bars, q_sample):
    """The forward process on a 2-D ring and a digit, step t of the student's schedules."""
    controls = {"schedule": widgets.Dropdown(options=list(SCHEDULES), value="linear", description="schedule"),
                "t": widgets.IntSlider(value=100, min=0, max=T - 1, description="t")}
    return Explorer(render_forward, controls,
                    needs={"linear_betas": linear_betas, "cosine_alpha_bars": cosine_alpha_bars,
                           "alpha_bars": alpha_bars, "q_sample": q_sample},
                    height="320px", title="The forward process q(x_t | x_0)")


# ------------------------------------------------------------------ the trained ring model, and one run

class RingRun:
    """An eps-MLP trained on the ring with the student's pieces, and one ``ddpm_sample`` run recorded.

    ``RingRun(linear_betas=..., alpha_bars=..., q_sample=..., eps_loss=..., ddpm_sample=...)`` trains
    (``train_eps_model``, a few seconds) and samples ``N_POINTS`` points, keeping the input ``x`` and the
    model's ``eps_hat`` of every call ``eps_model(x, t)`` the sampler makes. A student's function that
    raises (not written yet) is kept, not raised: the widgets given this run raise it again when they draw,
    so that they name the function. ``functions`` are the student's functions it used.
    """

    def __init__(self, *, linear_betas, alpha_bars, q_sample, eps_loss, ddpm_sample, steps=2500, hidden=64):
        import torch
        self.functions = {"linear_betas": linear_betas, "alpha_bars": alpha_bars, "q_sample": q_sample,
                          "eps_loss": eps_loss, "ddpm_sample": ddpm_sample}
        self.error = None
        self.eps_model = None
        self.states, self.eps_hats, self.steps, self.samples = [], [], [], None
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            self.betas = np.asarray(linear_betas(T), dtype=float)
            self.abar = np.asarray(alpha_bars(self.betas), dtype=float)
            model, self.losses = train_eps_model(ring_data(2000, 0), self.abar, q_sample, eps_loss,
                                                 steps=steps, hidden=hidden)
            self.eps_model = eps_function(model)
            self._sample(ddpm_sample)
        except Exception as exc:  # noqa: BLE001 - the student's code: the widgets show it
            self.error = exc
        finally:
            torch.set_num_threads(threads)

    def _sample(self, ddpm_sample):
        def recording(x, t):
            eps_hat = self.eps_model(x, t)
            self.states.append(np.array(x, dtype=float))
            self.eps_hats.append(eps_hat)
            self.steps.append(int(t))
            return eps_hat
        self.samples = np.asarray(ddpm_sample(recording, (N_POINTS, 2), self.betas, np.random.default_rng(2)),
                                  dtype=float)
        if self.steps != list(range(T - 1, -1, -1)):
            raise ValueError(f"ddpm_sample called eps_model with t = {self.steps[:3]} ... {self.steps[-3:]}, "
                             f"expected {T - 1}, {T - 2}, ..., 0.")

    def check(self):
        """Raise the error the training or sampling met (from the student's code), if any."""
        if self.error is not None:
            raise self.error

    def __repr__(self):
        if self.error is not None:
            return f"RingRun: not trained ({type(self.error).__name__}: {str(self.error)[:200]})"
        return (f"RingRun: eps_loss {self.losses[:100].mean():.3f} over the first 100 steps, "
                f"{self.losses[-100:].mean():.3f} over the last 100; {N_POINTS} samples recorded over {T} steps")


def _reverse_figure() -> LiveFigure:
    live = LiveFigure(Figure(figsize=(8.0, 3.6)))
    axes = live.figure.subplots(1, 2)
    live.figure.subplots_adjust(left=0.03, right=0.97, bottom=0.04, top=0.9, wspace=0.08)
    data = ring_data(N_POINTS, 1)
    live.points = []
    for ax, title in zip(axes, ("x_t: the samples at step t", "predict_x0(x_t, t, ε̂): where they are heading")):
        ax.scatter(data[:, 0], data[:, 1], s=2, color="0.8")
        ax.set(xlim=(-LIMIT, LIMIT), ylim=(-LIMIT, LIMIT), xticks=[], yticks=[], aspect="equal")
        ax.set_title(title, fontsize=9)
        live.points.append(live.changes(ax.scatter(np.zeros(N_POINTS), np.zeros(N_POINTS), s=3, color="tab:blue")))
    return live


def render_reverse(t=T - 1, *, run, predict_x0, cache=None, **trained_with):
    """The recorded run at step t: the points the model sees (left) and the student's predicted x0 (right);
    t = -1 shows what ddpm_sample returned. (``trained_with``: the student's functions the run used, named
    when one of them is not written yet.)"""
    run.check()
    t = int(t)
    if t < 0:
        x = x0 = run.samples
    else:
        k = T - 1 - t
        x = run.states[k]
        x0 = np.asarray(predict_x0(x.copy(), t, run.eps_hats[k].copy(), run.abar.copy()), dtype=float)
    live = kept_figure(cache, _reverse_figure)
    live.new_background("axes")
    live.points[0].set_offsets(x)
    live.points[1].set_offsets(np.clip(x0, -2 * LIMIT, 2 * LIMIT))
    nearest = np.sqrt(((x0[:, None, :] - ring_centres()[None]) ** 2).sum(-1)).min(1)
    step = "the output of ddpm_sample" if t < 0 else f"t = {t} (ᾱ_t = {run.abar[t]:.4f})"
    spread, near = float(x.std()), float(np.mean(nearest < 0.5))
    return live, readout(f"{step}: spread of x_t {spread:.2f}; predicted x0 within 0.5 of a blob centre: "
                         f"{near:.0%} (data: 99 %, blobs of std {RING_SIGMA})",
                         t=t, alpha_bar=None if t < 0 else float(run.abar[t]), spread=spread, near_centre=near)


def reverse_explorer(*, run, predict_x0):
    """The student's ddpm_sample with the trained ring model (a ``RingRun``), step by step, and the student's
    predict_x0 at each step."""
    controls = {"t": widgets.IntSlider(value=T - 1, min=-1, max=T - 1, description="t")}
    return Explorer(render_reverse, controls, needs={**run.functions, "run": run, "predict_x0": predict_x0},
                    height="360px", title="The reverse process of your trained model, step by step")


# ------------------------------------------------------------------ the score field

GRID = np.stack(np.meshgrid(np.linspace(-2.7, 2.7, 11), np.linspace(-2.7, 2.7, 11)), -1).reshape(-1, 2)
SCORE_STEPS = tuple(range(0, T, 10)) + (T - 1,)


def model_eps_on_grid(run):
    """{t: the trained model's eps_hat on GRID} for every t of the score slider, in one batched call."""
    run.check()
    steps = np.repeat(np.array(SCORE_STEPS), len(GRID))
    eps = run.eps_model(np.tile(GRID, (len(SCORE_STEPS), 1)), steps).reshape(len(SCORE_STEPS), len(GRID), 2)
    return {t: frozen(e) for t, e in zip(SCORE_STEPS, eps)}


def _score_figure() -> LiveFigure:
    live = LiveFigure(Figure(figsize=(5.2, 4.6)))
    ax = live.figure.add_axes([0.03, 0.03, 0.94, 0.88])
    ax.set(xlim=(-LIMIT, LIMIT), ylim=(-LIMIT, LIMIT), xticks=[], yticks=[], aspect="equal")
    zeros = np.zeros(len(GRID))
    live.exact = live.changes(ax.quiver(GRID[:, 0], GRID[:, 1], zeros, zeros, color="k", angles="xy",
                                        scale_units="xy", scale=1, width=0.004))
    live.model = live.changes(ax.quiver(GRID[:, 0], GRID[:, 1], zeros, zeros, color="tab:orange", angles="xy",
                                        scale_units="xy", scale=1, width=0.004, alpha=0.8))
    live.means = live.changes(ax.scatter(np.zeros(8), np.zeros(8), marker="x", color="tab:red", s=30))
    ax.set_title("score of the noised ring: exact (black), your model's (orange)", fontsize=9)
    return live


def render_score(t=300, *, run, gaussian_mixture_score, score_from_eps, cache=None, **trained_with):
    """Arrows of the exact score of the ring mixture noised to step t, and of score_from_eps(eps_model(., t))."""
    run.check()
    t = int(t)
    a = run.abar[t]
    means = np.sqrt(a) * ring_centres()
    sigma_t = float(np.sqrt(a * RING_SIGMA ** 2 + 1 - a))
    exact = np.asarray(gaussian_mixture_score(GRID.copy(), means.copy(), sigma_t), dtype=float)
    eps = cached(cache, ("model eps", run), lambda: model_eps_on_grid(run)).get(t)
    if eps is None:
        eps = run.eps_model(GRID, t)
    model = np.asarray(score_from_eps(eps.copy(), t, run.abar.copy()), dtype=float)
    scale = 0.3 / max(float(np.median(np.sqrt((exact ** 2).sum(1)))), 1e-12)  # median arrow 0.3 long
    live = kept_figure(cache, _score_figure)
    live.new_background("axes")
    live.exact.set_UVC(scale * exact[:, 0], scale * exact[:, 1])
    live.model.set_UVC(scale * model[:, 0], scale * model[:, 1])
    live.means.set_offsets(means)
    error = np.sqrt(((model - exact) ** 2).sum(1)) / np.maximum(np.sqrt((exact ** 2).sum(1)), 1e-12)
    near = np.sqrt(((GRID[:, None, :] - means[None]) ** 2).sum(-1)).min(1) < max(2 * sigma_t, 0.5)
    median_error = float(np.median(error))
    median_error_near = float(np.median(error[near])) if near.any() else float("nan")
    return live, readout(f"t = {t}: ᾱ_t = {a:.4f}, noised blobs of std {sigma_t:.3f} · relative difference of the "
                         f"model's score: median {median_error:.2f} on the grid, "
                         f"{median_error_near:.2f} near the blobs",
                         t=t, alpha_bar=float(a), blob_std=sigma_t, median_error=median_error,
                         median_error_near=median_error_near)


def score_explorer(*, run, gaussian_mixture_score, score_from_eps):
    """The exact score of the noised ring mixture against the trained model's, with a noise-level slider."""
    cache = RenderCache()
    try:  # the model's noise predictions for every position of the slider: a move then only draws
        cache.get(("model eps", run), lambda: model_eps_on_grid(run))
    except Exception:  # noqa: BLE001 - a run that met an error in the student's code: the explorer names it
        pass
    controls = {"t": widgets.IntSlider(value=300, min=0, max=T - 1, step=10, description="t")}
    return Explorer(render_score, controls, cache=cache,
                    needs={**run.functions, "run": run, "gaussian_mixture_score": gaussian_mixture_score,
                           "score_from_eps": score_from_eps},
                    height="420px", title="The score field of the noised mixture")
