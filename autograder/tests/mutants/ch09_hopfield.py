"""Plausible wrong solutions of ch09_hopfield: each must lose points in its test cell.

Every entry is the whole content of a solution cell (the setup cell's imports are there too).
"""

MUTANTS = {
    "hebbian_weights": {
        "keeps_diagonal": '''
import numpy as np
def hebbian_weights(P):
    P = np.asarray(P, dtype=float)
    return P.T @ P / P.shape[1]
''',
        "divides_by_s": '''
import numpy as np
def hebbian_weights(P):
    P = np.asarray(P, dtype=float)
    W = P.T @ P / P.shape[0]
    np.fill_diagonal(W, 0.0)
    return W
''',
        "no_normalisation": '''
import numpy as np
def hebbian_weights(P):
    P = np.asarray(P, dtype=float)
    W = P.T @ P
    np.fill_diagonal(W, 0.0)
    return W
''',
        "subtracts_identity": '''
import numpy as np
def hebbian_weights(P):
    P = np.asarray(P, dtype=float)
    n = P.shape[1]
    return P.T @ P / n - np.eye(n)
''',
        "pattern_gram_matrix": '''
import numpy as np
def hebbian_weights(P):
    P = np.asarray(P, dtype=float)
    W = P @ P.T / P.shape[1]
    np.fill_diagonal(W, 0.0)
    return W
''',
    },
    "energy": {
        "no_half": '''
import numpy as np
def energy(W, x, b=None):
    b = np.zeros(len(x)) if b is None else b
    return float(-x @ W @ x + b @ x)
''',
        "bias_subtracted": '''
import numpy as np
def energy(W, x, b=None):
    b = np.zeros(len(x)) if b is None else b
    return float(-0.5 * x @ W @ x - b @ x)
''',
        "ignores_thresholds": '''
import numpy as np
def energy(W, x, b=None):
    return float(-0.5 * x @ W @ x)
''',
        "positive_quadratic": '''
import numpy as np
def energy(W, x, b=None):
    b = np.zeros(len(x)) if b is None else b
    return float(0.5 * x @ W @ x + b @ x)
''',
    },
    "async_sweep": {
        "synchronous": '''
import numpy as np
def async_sweep(W, x, order, b=None):
    b = np.zeros(len(x)) if b is None else np.asarray(b, dtype=float)
    old = np.array(x, dtype=float)
    new = old.copy()
    for i in order:
        new[i] = 1.0 if W[i] @ old - b[i] >= 0 else -1.0
    return new
''',
        "np_sign_at_zero": '''
import numpy as np
def async_sweep(W, x, order, b=None):
    b = np.zeros(len(x)) if b is None else np.asarray(b, dtype=float)
    x = np.array(x, dtype=float)
    for i in order:
        x[i] = np.sign(W[i] @ x - b[i])
    return x
''',
        "ignores_order": '''
import numpy as np
def async_sweep(W, x, order, b=None):
    b = np.zeros(len(x)) if b is None else np.asarray(b, dtype=float)
    x = np.array(x, dtype=float)
    for i in range(len(x)):
        x[i] = 1.0 if W[i] @ x - b[i] >= 0 else -1.0
    return x
''',
        "threshold_added": '''
import numpy as np
def async_sweep(W, x, order, b=None):
    b = np.zeros(len(x)) if b is None else np.asarray(b, dtype=float)
    x = np.array(x, dtype=float)
    for i in order:
        x[i] = 1.0 if W[i] @ x + b[i] >= 0 else -1.0
    return x
''',
        "updates_input_in_place": '''
import numpy as np
def async_sweep(W, x, order, b=None):
    b = np.zeros(len(x)) if b is None else np.asarray(b, dtype=float)
    for i in order:
        x[i] = 1.0 if W[i] @ x - b[i] >= 0 else -1.0
    return x
''',
    },
    "recall": {
        "last_sweep_not_counted": '''
import numpy as np
def recall(W, x0, rng, max_sweeps=100, b=None):
    x = np.array(x0, dtype=float)
    for sweeps in range(max_sweeps):
        new = async_sweep(W, x, rng.permutation(len(x)), b)
        if np.array_equal(new, x):
            return new, sweeps
        x = new
    return x, max_sweeps
''',
        "one_order_for_all_sweeps": '''
import numpy as np
def recall(W, x0, rng, max_sweeps=100, b=None):
    x = np.array(x0, dtype=float)
    order = rng.permutation(len(x))
    for sweeps in range(1, max_sweeps + 1):
        new = async_sweep(W, x, order, b)
        if np.array_equal(new, x):
            return new, sweeps
        x = new
    return x, max_sweeps
''',
        "fixed_order_no_draws": '''
import numpy as np
def recall(W, x0, rng, max_sweeps=100, b=None):
    x = np.array(x0, dtype=float)
    for sweeps in range(1, max_sweeps + 1):
        new = async_sweep(W, x, range(len(x)), b)
        if np.array_equal(new, x):
            return new, sweeps
        x = new
    return x, max_sweeps
''',
        "forgets_thresholds": '''
import numpy as np
def recall(W, x0, rng, max_sweeps=100, b=None):
    x = np.array(x0, dtype=float)
    for sweeps in range(1, max_sweeps + 1):
        new = async_sweep(W, x, rng.permutation(len(x)))
        if np.array_equal(new, x):
            return new, sweeps
        x = new
    return x, max_sweeps
''',
        "one_sweep_too_many": '''
import numpy as np
def recall(W, x0, rng, max_sweeps=100, b=None):
    x = np.array(x0, dtype=float)
    sweeps = 0
    while sweeps <= max_sweeps:
        sweeps += 1
        new = async_sweep(W, x, rng.permutation(len(x)), b)
        if np.array_equal(new, x):
            return new, sweeps
        x = new
    return x, sweeps
''',
    },
    "crosstalk": {
        "includes_own_pattern": '''
import numpy as np
def crosstalk(P):
    P = np.asarray(P, dtype=float)
    return (P @ P.T / P.shape[1]) @ P
''',
        "field_minus_pattern": '''
import numpy as np
def crosstalk(P):
    P = np.asarray(P, dtype=float)
    n = P.shape[1]
    W = P.T @ P / n
    np.fill_diagonal(W, 0.0)
    return P @ W - P
''',
        "no_division_by_n": '''
import numpy as np
def crosstalk(P):
    P = np.asarray(P, dtype=float)
    G = P @ P.T
    np.fill_diagonal(G, 0.0)
    return G @ P
''',
        "divides_by_s": '''
import numpy as np
def crosstalk(P):
    P = np.asarray(P, dtype=float)
    G = P @ P.T / P.shape[0]
    np.fill_diagonal(G, 0.0)
    return G @ P
''',
    },
    "flip_probability": {
        "missing_factor_two": '''
import math
def flip_probability(s, n):
    return 0.5 * (1.0 - math.erf(math.sqrt(n / s)))
''',
        "inverted_ratio": '''
import math
def flip_probability(s, n):
    return 0.5 * (1.0 - math.erf(math.sqrt(s / (2.0 * n))))
''',
        "no_half": '''
import math
def flip_probability(s, n):
    return 1.0 - math.erf(math.sqrt(n / (2.0 * s)))
''',
        "wrong_tail": '''
import math
def flip_probability(s, n):
    return 0.5 * (1.0 + math.erf(math.sqrt(n / (2.0 * s))))
''',
    },
    "stable_fraction": {
        "fraction_of_bits": '''
import numpy as np
def stable_fraction(P, W):
    P = np.asarray(P, dtype=float)
    return float(np.mean(np.where(P @ W.T >= 0, 1.0, -1.0) == P))
''',
        "np_sign_at_zero": '''
import numpy as np
def stable_fraction(P, W):
    P = np.asarray(P, dtype=float)
    return float(np.mean(np.all(np.sign(P @ W.T) == P, axis=1)))
''',
        "transposed_weights": '''
import numpy as np
def stable_fraction(P, W):
    P = np.asarray(P, dtype=float)
    return float(np.mean(np.all(np.where(P @ W >= 0, 1.0, -1.0) == P, axis=1)))
''',
        "count_not_fraction": '''
import numpy as np
def stable_fraction(P, W):
    P = np.asarray(P, dtype=float)
    return float(np.sum(np.all(np.where(P @ W.T >= 0, 1.0, -1.0) == P, axis=1)))
''',
        "any_bit_instead_of_all": '''
import numpy as np
def stable_fraction(P, W):
    P = np.asarray(P, dtype=float)
    return float(np.mean(np.any(np.where(P @ W.T >= 0, 1.0, -1.0) == P, axis=1)))
''',
    },
    "modern_hopfield_update": {
        "softmax_over_queries": '''
import numpy as np
def modern_hopfield_update(X, xi, beta):
    scores = beta * (xi @ X.T)
    scores = scores - scores.max(axis=0, keepdims=True)
    weights = np.exp(scores)
    return weights / weights.sum(axis=0, keepdims=True) @ X
''',
        "unstable_softmax": '''
import numpy as np
def modern_hopfield_update(X, xi, beta):
    weights = np.exp(beta * (xi @ X.T))
    return weights / weights.sum(axis=-1, keepdims=True) @ X
''',
        "temperature_instead_of_inverse": '''
import numpy as np
def modern_hopfield_update(X, xi, beta):
    scores = (xi @ X.T) / beta
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    return weights / weights.sum(axis=-1, keepdims=True) @ X
''',
        "returns_weights": '''
import numpy as np
def modern_hopfield_update(X, xi, beta):
    scores = beta * (xi @ X.T)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    return weights / weights.sum(axis=-1, keepdims=True)
''',
        "unnormalised_weights": '''
import numpy as np
def modern_hopfield_update(X, xi, beta):
    scores = beta * (xi @ X.T)
    return np.exp(scores - scores.max(axis=-1, keepdims=True)) @ X
''',
    },
}

# Mistakes in the pieces the integration check uses that must make it fail, not only their own cell.
INTEGRATION = {
    "test_integration_digits": ["hebbian_weights/keeps_diagonal", "hebbian_weights/divides_by_s",
                                "hebbian_weights/pattern_gram_matrix"],
}
