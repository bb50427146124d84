"""Drivers of the integration checks of ch02_universal_approximation: public code run beside the student's.

Each is a top-level function that ``dlcourse.testing.in_student_process`` names (module and function):
under the grader the sandbox imports it from here, so no test cell's text ever enters the student's
process. A driver holds no hidden check, threshold or secret data: it uses the student's pieces it is
given and returns plain data; the verdict is reached in the test cell.
"""
from __future__ import annotations

import numpy as np


def relu_alias_probe(relu, x):
    """Run where your relu runs: call it, note whether the result shares memory with x, write into the
    result as a caller might, and return plain data for the check."""
    out = relu(x)
    shares = bool(isinstance(out, np.ndarray) and np.shares_memory(out, x))
    value = np.array(out, dtype=float, copy=True)
    if isinstance(out, np.ndarray) and out.flags.writeable:
        out[...] = -1.0
    return {"shares": shares, "value": value, "x_after": np.array(x, copy=True)}


def deep_forward_probe(deep_forward, X, layers):
    """Run where your deep_forward runs: call it and return its output and what its inputs look like after."""
    out = deep_forward(X, layers)
    return {"out": np.array(out, dtype=float, copy=True), "n_layers": len(layers), "X_after": np.array(X, copy=True),
            "layers_after": [(np.array(W, copy=True), np.array(b, copy=True)) for W, b in layers]}
