"""Drivers of the integration checks of ch10_optimization: public code that runs where the student's code runs.

Each is a top-level function that ``dlcourse.testing.in_student_process`` names (module and function):
under the grader the sandbox imports it from here, so no test cell's text ever enters the student's
process. A driver holds no hidden check, threshold or secret data: it uses the student's pieces it is
given and returns plain data; the verdict is reached in the test cell.
"""
from __future__ import annotations

import numpy as np


def race(gradient_descent, heavy_ball, polyak_parameters, X, y, theta0, L, mu, steps):
    """Gradient descent (lr 1/L) and heavy ball (Polyak's parameters) on 0.5 * mean((X θ - y)**2)."""
    A, c = X.T @ X / len(y), X.T @ y / len(y)

    def grad(theta):
        return A @ theta - c

    lr, beta = polyak_parameters(L, mu)
    return {"gd": np.asarray(gradient_descent(grad, theta0, 1.0 / L, steps), dtype=float),
            "hb": np.asarray(heavy_ball(grad, theta0, float(lr), float(beta), steps), dtype=float),
            "lr": float(lr), "beta": float(beta)}
