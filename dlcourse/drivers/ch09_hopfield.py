"""Drivers of the integration checks of ch09_hopfield: public code that runs where the student's code runs.

Each is a top-level function that ``dlcourse.testing.in_student_process`` names (module and function):
under the grader the sandbox imports it from here, so no test cell's text ever enters the student's
process. A driver holds no hidden check, threshold or secret data: it uses the student's pieces it is
given and returns plain data; the verdict is reached in the test cell.
"""
from __future__ import annotations

import numpy as np


def store_and_recall(hebbian_weights, recall, patterns, starts, seed):
    """Runs where your code runs: the Hebbian network of `patterns`, recalled from each start."""
    W = np.asarray(hebbian_weights(patterns.copy()), dtype=float)
    rng = np.random.default_rng(seed)
    finals, sweeps = [], []
    for x0 in starts:
        x, k = recall(W, x0.copy(), rng)
        finals.append(np.asarray(x, dtype=float))
        sweeps.append(int(k))
    return {"W": W, "finals": np.array(finals), "sweeps": np.array(sweeps)}
