"""Drivers of the integration checks of ch13_generalization: public code that runs where the student's code runs.

Each is a top-level function that ``dlcourse.testing.in_student_process`` names (module and function):
under the grader the sandbox imports it from here, so no test cell's text ever enters the student's
process. A driver holds no hidden check, threshold or secret data: it uses the student's pieces it is
given and returns plain data; the verdict is reached in the test cell. The data makers are public too.
"""
from __future__ import annotations

import contextlib
import os

import numpy as np


def one_blas_thread():
    """A context in which NumPy's BLAS uses one thread: these drivers make thousands of small solves, for which
    a second thread only adds contention (on a busy 2-core machine it made the double-descent sweep 8 times
    slower). Under the grader the process has one thread already."""
    if os.environ.get("OMP_NUM_THREADS") == "1":  # the grader's processes (and the sandbox forbids threadpoolctl's
        return contextlib.nullcontext()           # reading of /proc/<pid>/maps)
    try:
        from threadpoolctl import threadpool_limits
        return threadpool_limits(limits=1, user_api="blas")
    except Exception:  # noqa: BLE001 - no threadpoolctl, or it cannot inspect the process: the default threads
        return contextlib.nullcontext()


def noisy_sine(n, rng, noise=0.3):
    """(x, y): x uniform on [-1, 1] (n,), y = sin(pi x) + noise * standard normal (two draws, in that order)."""
    x = rng.uniform(-1.0, 1.0, n)
    return x, np.sin(np.pi * x) + noise * rng.standard_normal(n)


def tanh_teacher(n, d, rng, beta, noise=0.2):
    """(X, y): X standard normal (n, d), y = tanh(X @ beta) + noise * standard normal."""
    X = rng.standard_normal((n, d))
    return X, np.tanh(X @ beta) + noise * rng.standard_normal(n)


def curve_fitting(polynomial_features, ridge_fit, cross_validate, x, y, x_test, degrees, k, cv_seed):
    """Least squares (lam 0) on polynomial features of each degree: the weights, the training-set design's
    predictions on x_test, and the cross-validated error (k folds, rng ``default_rng(cv_seed + degree)``)."""
    out = {"weights": [], "cv": []}
    for degree in degrees:
        Phi = np.asarray(polynomial_features(x, degree), dtype=float)
        out["weights"].append(np.asarray(ridge_fit(Phi, y, 0.0), dtype=float))
        mean, _ = cross_validate(lambda X, t: ridge_fit(X, t, 0.0), lambda w, X: X @ w, Phi, y, k,
                                 np.random.default_rng(cv_seed + degree))
        out["cv"].append(float(mean))
    return out


def bias_variance_runs(polynomial_features, ridge_fit, bias_variance, degrees, R, n, x_test, seed, noise=0.3):
    """R training sets of n noisy-sine points (``noisy_sine`` with ``default_rng(seed)``, drawn in order); for
    each degree the R least-squares fits' predictions at x_test (R, M), and the student's bias_variance of them."""
    rng = np.random.default_rng(seed)
    sets = [noisy_sine(n, rng, noise) for _ in range(R)]
    f_true = np.sin(np.pi * np.asarray(x_test, dtype=float))
    predictions, student = [], []
    with one_blas_thread():
        for degree in degrees:
            _bias_variance_degree(polynomial_features, ridge_fit, bias_variance, degree, sets, x_test, f_true,
                                  predictions, student)
    return {"predictions": np.array(predictions), "bias_variance": student}


def _bias_variance_degree(polynomial_features, ridge_fit, bias_variance, degree, sets, x_test, f_true, predictions,
                          student):
    """One degree: the R fits' predictions at x_test appended to ``predictions``, their bias_variance to ``student``."""
    Phi_test = np.asarray(polynomial_features(x_test, degree), dtype=float)
    P = np.array([Phi_test @ np.asarray(ridge_fit(np.asarray(polynomial_features(x, degree), dtype=float), y, 0.0))
                  for x, y in sets])
    predictions.append(P)
    student.append(tuple(float(v) for v in bias_variance(P.copy(), f_true.copy())))


def double_descent(random_relu_features, ridge_fit, cross_validate, X, y, n_features, reps, seed, lams, k=5):
    """For each feature count, ``reps`` draws of random_relu_features (one rng ``default_rng(seed)`` for all, in
    order): the features' W and b, the min-norm weights (lam 0), and the weights of ridge with the lam of ``lams``
    that the student's cross_validate (k folds, rng ``default_rng(seed + 1000 * rep + p)``) prefers."""
    with one_blas_thread():
        return _double_descent(random_relu_features, ridge_fit, cross_validate, X, y, n_features, reps, seed, lams, k)


def _double_descent(random_relu_features, ridge_fit, cross_validate, X, y, n_features, reps, seed, lams, k):
    rng = np.random.default_rng(seed)
    runs = []
    for p in n_features:
        for rep in range(reps):
            F, W, b = random_relu_features(X, p, rng)
            F = np.asarray(F, dtype=float)
            cv = [float(cross_validate(lambda A, t, lam=lam: ridge_fit(A, t, lam), lambda w, A: A @ w, F, y, k,
                                       np.random.default_rng(seed + 1000 * rep + p))[0]) for lam in lams]
            lam = lams[int(np.argmin(cv))]
            runs.append({"p": int(p), "W": np.asarray(W, dtype=float), "b": np.asarray(b, dtype=float),
                         "w_min_norm": np.asarray(ridge_fit(F, y, 0.0), dtype=float),
                         "lam": float(lam), "w_ridge": np.asarray(ridge_fit(F, y, lam), dtype=float)})
    return runs


def memorise(random_relu_features, ridge_fit, X, labels, n_features, seed):
    """One-against-the-rest min-norm regression (lam 0) of the one-hot labels on random ReLU features
    (``default_rng(seed)``): the features' W and b and the weights (n_features, 10), one ridge_fit call per class."""
    rng = np.random.default_rng(seed)
    with one_blas_thread():
        F, W, b = random_relu_features(X, n_features, rng)
        F = np.asarray(F, dtype=float)
        weights = np.stack([np.asarray(ridge_fit(F, (labels == c).astype(float), 0.0), dtype=float)
                            for c in range(10)], axis=1)
    return {"W": np.asarray(W, dtype=float), "b": np.asarray(b, dtype=float), "weights": weights}


def search_problem(seed):
    """The optimum (log10 lam*, ln n*) of search problem ``seed``: drawn from ``default_rng(1000 + seed)``,
    log10 lam* uniform on [-3, 3], ln n* uniform on [ln 10, ln 1000]."""
    r = np.random.default_rng(1000 + seed)
    return float(r.uniform(-3.0, 3.0)), float(r.uniform(np.log(10.0), np.log(1000.0)))


def search_objective(lam, n_features, optimum):
    """A validation loss in which lam matters a hundred times more than n_features (Bergstra & Bengio's
    low effective dimension): (log10 lam - log10 lam*)^2 + 0.01 (ln n_features - ln n*)^2."""
    c1, c2 = optimum
    return float((np.log10(lam) - c1) ** 2 + 0.01 * (np.log(n_features) - c2) ** 2)


def search_race(log_uniform_search, grid_search, space, grid, n_trials, seeds):
    """For each seed, the problem ``search_problem(seed)``: the student's random search (``default_rng(seed)``)
    and grid search on it; returns their (best_params, history) per seed."""
    out = []
    for seed in seeds:
        optimum = search_problem(seed)

        def objective(lam, n_features, optimum=optimum):
            return search_objective(lam, n_features, optimum)

        out.append({"random": log_uniform_search(objective, dict(space), n_trials, np.random.default_rng(seed)),
                    "grid": grid_search(objective, {name: list(v) for name, v in grid.items()})})
    return out
