"""The integration check of ch11_diffusion: data, a small epsilon-prediction network, and the driver.

The driver ``diffusion_2d`` runs where the student's code runs (``dlcourse.testing.in_student_process``):
it trains a small torch MLP whose inputs and targets come from the student's ``q_sample`` (the loss value
tracked is the student's ``eps_loss``; torch differentiates the same mean square error) and samples with
the student's samplers. It returns plain data only; every verdict (energy distances, spreads, timings) is
computed by the test cell. Nothing here is a threshold or a check.

The same helpers serve the chapter's demos and widgets (``train_eps_model``, ``eps_function``).
"""
from __future__ import annotations

import functools

import numpy as np

RING_RADIUS, RING_SIGMA, RING_COMPONENTS = 1.5, 0.1, 8


def ring_centres(k: int = RING_COMPONENTS, radius: float = RING_RADIUS) -> np.ndarray:
    """(k, 2) centres evenly spaced on a circle."""
    angle = 2 * np.pi * np.arange(k) / k
    return radius * np.stack([np.cos(angle), np.sin(angle)], axis=1)


def ring_data(n: int, seed: int, sigma: float = RING_SIGMA) -> np.ndarray:
    """(n, 2) points of the equal-weight mixture of N(centre, sigma^2 I) over ``ring_centres()``."""
    rng = np.random.default_rng(seed)
    component = rng.integers(0, RING_COMPONENTS, n)
    return ring_centres()[component] + sigma * rng.standard_normal((n, 2))


def energy_distance(a, b) -> float:
    """``2 E|X - Y| - E|X - X'| - E|Y - Y'|`` between the rows of a and b (V-statistics; 0 when equal)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)

    def mean_distance(p, q):
        return float(np.sqrt(np.maximum(((p[:, None, :] - q[None, :, :]) ** 2).sum(-1), 0.0)).mean())
    return 2 * mean_distance(a, b) - mean_distance(a, a) - mean_distance(b, b)


def _eps_mlp(d: int, hidden: int, T: int, depth: int = 3, n_freq: int = 16):
    """eps_theta(x, t): sinusoidal features of t, an MLP of ``depth`` layers with residual SiLU blocks,
    the time features added to every block."""
    import torch
    from torch import nn

    class EpsMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("periods", torch.exp(torch.linspace(0.0, float(np.log(T)), n_freq)))
            self.inp = nn.Linear(d + 2 * n_freq, hidden)
            self.blocks = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(depth - 1))
            self.times = nn.ModuleList(nn.Linear(2 * n_freq, hidden) for _ in range(depth - 1))
            self.out = nn.Linear(hidden, d)

        def forward(self, x, t):
            angle = t[:, None].float() / self.periods[None]
            e = torch.cat([torch.sin(angle), torch.cos(angle)], 1)
            h = nn.functional.silu(self.inp(torch.cat([x, e], 1)))
            for block, time in zip(self.blocks, self.times):
                h = h + nn.functional.silu(block(h) + time(e))
            return self.out(h)

    return EpsMLP()


_eps_models: dict = {}  # the last training of train_eps_model in this process, by its arguments (see below)


def train_eps_model(X, abar, q_sample, eps_loss, *, steps, hidden, batch=128, lr=3e-3, seed=0, ema=0.99):
    """Train eps_theta on the rows of X: each step draws rows and steps ``t`` (uniform in 0..T-1), gets
    ``(x_t, eps) = q_sample(x0, t, abar, rng)`` and minimises the mean square error of eps_theta(x_t, t)
    against eps (Adam, one-cycle learning rate, an exponential moving average of the weights, which is
    returned). Returns ``(model, losses)``, ``losses`` the student's ``eps_loss`` of each step.

    The chapter's ring model (``RingRun``, for the explorers) and the integration check's (``diffusion_2d``)
    are the same training in the same process: the second call gets the first's model and a copy of its
    losses (the key holds the very function objects and the data, so a function redefined in between
    trains anew)."""
    X, abar = np.asarray(X, dtype=float), np.asarray(abar, dtype=float)
    key = (X.shape, X.tobytes(), abar.tobytes(), q_sample, eps_loss, steps, hidden, batch, lr, seed, ema)
    if key not in _eps_models:
        _eps_models.clear()
        _eps_models[key] = _train_eps_model(X, abar, q_sample, eps_loss, steps=steps, hidden=hidden, batch=batch,
                                            lr=lr, seed=seed, ema=ema)
    model, losses = _eps_models[key]
    return model, np.array(losses)


def _train_eps_model(X, abar, q_sample, eps_loss, *, steps, hidden, batch, lr, seed, ema):
    import copy

    import torch
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    X = np.asarray(X, dtype=float)
    T = len(abar)
    model = _eps_mlp(X.shape[1], hidden, T)
    average = copy.deepcopy(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, lr, total_steps=steps, pct_start=0.1)
    losses = []
    for _ in range(steps):
        x0 = X[rng.integers(0, len(X), batch)]
        t = rng.integers(0, T, batch)
        xt, eps = q_sample(x0, t, abar, rng)
        prediction = model(torch.as_tensor(np.asarray(xt, dtype=np.float32)), torch.from_numpy(t))
        target = torch.as_tensor(np.asarray(eps, dtype=np.float32))
        loss = ((prediction - target) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        with torch.no_grad():
            for kept, live in zip(average.parameters(), model.parameters()):
                kept.mul_(ema).add_(live, alpha=1 - ema)
        losses.append(float(eps_loss(prediction.detach().double().numpy(), np.asarray(eps, dtype=float))))
    average.eval()
    return average, np.array(losses)


def eps_function(model):
    """``eps_model(x, t)`` on NumPy arrays: x (B, d), t an int or (B,) ints; returns float64 (B, d)."""
    import torch

    def eps_model(x, t):
        x = np.asarray(x, dtype=np.float32)
        steps = torch.as_tensor(np.broadcast_to(np.asarray(t, dtype=np.int64), (len(x),)).copy())
        with torch.no_grad():
            return model(torch.from_numpy(x), steps).double().numpy()
    return eps_model


def langevin_ring(langevin_step, gaussian_mixture_score, sigma, *, n=2000, steps=300, step=2e-3, start_std=0.5,
                  seed=0):
    """Langevin dynamics with the student's ``langevin_step`` and ``gaussian_mixture_score`` on the ring mixture
    of components of std ``sigma``: ``n`` particles started from N(ring_centres()[0], start_std^2 I), i.e. next
    to one component, then ``steps`` steps of size ``step * sigma**2 / 0.01`` (the same in units of the
    components' variance). Returns the particles (n, 2)."""
    means = ring_centres()
    rng = np.random.default_rng(seed)
    x = means[0] + start_std * rng.standard_normal((n, 2))
    for _ in range(steps):
        x = np.asarray(langevin_step(x, gaussian_mixture_score(x, means, sigma), step * sigma ** 2 / 0.01, rng),
                       dtype=float)
    return x


def nearest_centre_counts(points) -> np.ndarray:
    """How many of the rows of ``points`` lie nearest to each of the ring's centres, (8,) ints."""
    points = np.asarray(points, dtype=float)
    nearest = ((points[:, None, :] - ring_centres()[None]) ** 2).sum(-1).argmin(1)
    return np.bincount(nearest, minlength=RING_COMPONENTS)


def ddim_schedule(T: int, n_steps: int) -> list[tuple[int, int]]:
    """``n_steps`` evenly spaced steps from T-1 down to 0 as (t, t_prev) pairs, the last t_prev = -1."""
    ts = [int(t) for t in np.linspace(T - 1, 0, n_steps).round()]
    return list(zip(ts, ts[1:] + [-1]))


def ddim_sample(ddim_step, eps_model, shape, abar, n_steps, rng):
    """Deterministic DDIM from ``x = rng.standard_normal(shape)`` with the student's ``ddim_step``."""
    x = rng.standard_normal(shape)
    for t, t_prev in ddim_schedule(len(abar), n_steps):
        x = ddim_step(x, t, eps_model(x, t), abar, t_prev)
    return np.asarray(x, dtype=float)


def mixture_eps_model(gaussian_mixture_score, means, sigma, abar):
    """The exact noise predictor of data ~ mixture of N(means_k, sigma^2 I): under q(x_t | x_0), x_t is the
    mixture of N(sqrt(abar_t) means_k, (abar_t sigma^2 + 1 - abar_t) I), and eps = -sqrt(1 - abar_t) score."""
    means, abar = np.asarray(means, dtype=float), np.asarray(abar, dtype=float)

    def eps_model(x, t):
        a = abar[t]
        score = gaussian_mixture_score(np.asarray(x, dtype=float), np.sqrt(a) * means,
                                       float(np.sqrt(a * sigma ** 2 + 1 - a)))
        return -np.sqrt(1 - a) * np.asarray(score, dtype=float)
    return eps_model


def diffusion_2d(linear_betas, alpha_bars, q_sample, eps_loss, ddpm_sample, ddim_step, gaussian_mixture_score,
                 *, T, n_train, n_samples, train_steps, hidden, ddim_steps, exact_sigma, seed):
    """The 2-D integration run, with the student's pieces: (1) ``ddpm_sample`` with the exact noise
    predictor of a sharp ring mixture (components of std ``exact_sigma``); (2) an eps-MLP trained on
    ``ring_data(n_train, seed)`` with ``q_sample`` and ``eps_loss``, sampled by ``ddpm_sample`` (T steps)
    and by DDIM (``ddim_steps`` steps of ``ddim_step``), each timed."""
    import time

    import numpy as np
    import torch

    from dlcourse.drivers import ch11_diffusion as here
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small matrices: one thread is faster, and kinder to a shared machine
    try:
        betas = np.asarray(linear_betas(T), dtype=float)
        abar = np.asarray(alpha_bars(betas), dtype=float)
        exact = here.mixture_eps_model(gaussian_mixture_score, here.ring_centres(), exact_sigma, abar)
        exact_samples = ddpm_sample(exact, (n_samples, 2), betas, np.random.default_rng(seed + 1))
        model, losses = here.train_eps_model(here.ring_data(n_train, seed), abar, q_sample, eps_loss,
                                             steps=train_steps, hidden=hidden, seed=seed)
        eps_model = here.eps_function(model)
        start = time.perf_counter()
        samples = ddpm_sample(eps_model, (n_samples, 2), betas, np.random.default_rng(seed + 2))
        ddpm_seconds = time.perf_counter() - start
        start = time.perf_counter()
        fast = here.ddim_sample(ddim_step, eps_model, (n_samples, 2), abar, ddim_steps, np.random.default_rng(seed + 3))
        ddim_seconds = time.perf_counter() - start
        return {"exact_samples": np.asarray(exact_samples, dtype=float), "samples": np.asarray(samples, dtype=float),
                "ddim_samples": fast, "ddpm_seconds": ddpm_seconds, "ddim_seconds": ddim_seconds,
                "losses": losses, "betas": betas, "abar": abar}
    finally:
        torch.set_num_threads(threads)



DIGITS_LATENT = 16  # principal components kept: about 85 % of the training digits' variance


def digits_latent(k: int = DIGITS_LATENT):
    """A linear autoencoder of the training digits (``dlcourse.data.digits_split``): their first ``k`` principal
    components, whitened. Returns ``(encode, decode)``: ``encode`` maps images (n, 8, 8) or (n, 64), pixels in
    [0, 1], to coordinates (n, k) of mean 0 and variance 1 on the training digits; ``decode`` maps coordinates
    back to images (n, 8, 8), clipped to [0, 1]. A standard normal in these coordinates is the Gaussian fitted
    to the digits (their mean and covariance, restricted to the k components)."""
    from dlcourse.data import digits_split

    X = digits_split()[0].reshape(-1, 64).astype(float)
    mean = X.mean(0)
    _, s, vt = np.linalg.svd(X - mean, full_matrices=False)
    basis, scale = vt[:k], s[:k] / np.sqrt(len(X))

    def encode(images):
        return (np.asarray(images, dtype=float).reshape(len(images), 64) - mean) @ basis.T / scale

    def decode(z):
        return np.clip(mean + (np.asarray(z, dtype=float) * scale) @ basis, 0.0, 1.0).reshape(-1, 8, 8)
    return encode, decode


_digits_runs: dict = {}  # the last run of diffusion_digits in this process, by its arguments (see below)


def diffusion_digits(linear_betas, alpha_bars, q_sample, eps_loss, ddpm_sample, *, T, n_samples, train_steps,
                     hidden, seed):
    """Digits generated as the ring is, in the coordinates of ``digits_latent()`` (a latent diffusion model,
    Rombach et al. 2022, with PCA as its autoencoder): an eps-MLP trained on the training digits' coordinates
    with the student's ``q_sample`` and ``eps_loss``, on the student's ``linear_betas(T, 1e-4 * 1000 / T,
    0.02 * 1000 / T)`` (the defaults' total noise in T steps), then ``n_samples`` coordinates from the student's
    ``ddpm_sample``, decoded. Returns ``{"samples": (n, 8, 8) in [0, 1], "losses": (train_steps,)}``.

    The chapter's demo and its test cell make the same call in the same process: the second gets copies of
    the first's arrays instead of training again (the key holds the very function objects, so a function
    redefined in between trains anew)."""
    key = (linear_betas, alpha_bars, q_sample, eps_loss, ddpm_sample, T, n_samples, train_steps, hidden, seed)
    if key not in _digits_runs:
        _digits_runs.clear()
        _digits_runs[key] = _diffusion_digits(linear_betas, alpha_bars, q_sample, eps_loss, ddpm_sample, T=T,
                                              n_samples=n_samples, train_steps=train_steps, hidden=hidden, seed=seed)
    return {name: np.array(value) for name, value in _digits_runs[key].items()}


def _diffusion_digits(linear_betas, alpha_bars, q_sample, eps_loss, ddpm_sample, *, T, n_samples, train_steps,
                      hidden, seed):
    import numpy as np
    import torch

    from dlcourse.data import digits_split
    from dlcourse.drivers import ch11_diffusion as here
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        betas = np.asarray(linear_betas(T, 1e-4 * 1000 / T, 0.02 * 1000 / T), dtype=float)
        abar = np.asarray(alpha_bars(betas), dtype=float)
        encode, decode = here.digits_latent()
        model, losses = here.train_eps_model(encode(digits_split()[0]), abar, q_sample, eps_loss, steps=train_steps,
                                             hidden=hidden, batch=256, seed=seed)
        z = ddpm_sample(here.eps_function(model), (n_samples, here.DIGITS_LATENT), betas,
                        np.random.default_rng(seed + 1))
        return {"samples": decode(z), "losses": losses}
    finally:
        torch.set_num_threads(threads)


@functools.lru_cache(maxsize=1)  # fitted once per process: the grader judges every student's samples with it
def digit_classifier():
    """Logistic regression (scikit-learn, ``max_iter=3000``) fitted on the training digits of
    ``dlcourse.data.digits_split``; returns ``labels_and_confidence(images) -> (labels, confidence)``, the
    most probable class of each (n, 8, 8) image in [0, 1] and its probability."""
    from sklearn.linear_model import LogisticRegression

    from dlcourse.data import digits_split
    X, _, y, _ = digits_split()
    model = LogisticRegression(max_iter=3000).fit(X.reshape(len(X), 64), y)

    def labels_and_confidence(images):
        p = model.predict_proba(np.asarray(images, dtype=float).reshape(len(images), 64))
        return p.argmax(1), p.max(1)
    return labels_and_confidence
