"""Plausible mistakes in the graded functions of ch02_universal_approximation: each must make its test cell fail.

Written as edits of the reference solutions (``swap``) or, where an edit cannot say it, as the
whole solution cell; the format and the loader are in autograder/tests/mutants/__init__.py.
"""
from autograder.tests.mutants import swap

MUTANTS = {
    'relu': {
        'abs_instead_of_max': swap('maximum(np.asarray(x, dtype=float), 0.0', 'abs(x'),
        'derivative_mask': swap('np.maximum(np.asarray(x, dtype=float), 0.0', '(np.asarray(x) > 0).astype(float'),
        'in_place': swap(
            'return np.maximum(np.asarray(x, dtype=float), 0.0)',
            '''x[x < 0] = 0.0
    return x'''),
        'clipped_at_one': swap('maximum(np.asarray(x, dtype=float), 0', 'clip(x, 0.0, 1'),
        'leaky': swap('maximum(np.asarray(x, dtype=float), 0.0', 'where(x > 0, x, 0.01 * x'),
        'times_mask_nan_at_minus_inf': swap('np.maximum(np.asarray(x, dtype=float), 0.', 'x * (x > '),
        'returns_x_itself_when_nothing_is_negative': swap(
            'return np.maximum(np.asarray(x, dtype=float)',
            '''x = np.asarray(x, dtype=float)
    if (x >= 0).all():
        return x          # nothing to clip: saves a copy, but aliases the caller's array
    return np.maximum(x'''),
    },
    'mlp_forward': {
        'no_transpose': swap(
            '''H = relu(np.asarray(X, dtype=float) @ np.asarray(W1, dtype=float).T + b1)
    return H @ np.asarray(W2, dtype=float).T''',
            'return np.maximum(X @ W1 + b1, 0) @ W2'),
        'relu_on_output': swap(
            '''H = relu(np.asarray(X, dtype=float) @ np.asarray(W1, dtype=float).T + b1)
    return H @ np.asarray(W2, dtype=float).T + b2''',
            'return np.maximum(np.maximum(X @ W1.T + b1, 0) @ W2.T + b2, 0)'),
        'forgot_b2': swap(
            '''H = relu(np.asarray(X, dtype=float) @ np.asarray(W1, dtype=float).T + b1)
    return H @ np.asarray(W2, dtype=float).T + b2''',
            'return np.maximum(X @ W1.T + b1, 0) @ W2.T'),
        'bias_after_relu': swap(
            '''H = relu(np.asarray(X, dtype=float) @ np.asarray(W1, dtype=float).T + b1)
    return H @ np.asarray(W2, dtype=float)''',
            'return (np.maximum(X @ W1.T, 0) + b1) @ W2'),
        'flattened_output': swap(
            '''H = relu(np.asarray(X, dtype=float) @ np.asarray(W1, dtype=float).T + b1)
    return H @ np.asarray(W2, dtype=float).T + b2''',
            'return (np.maximum(X @ W1.T + b1, 0) @ W2.T + b2).ravel()'),
    },
    'relu_interpolant': {
        'slopes_not_slope_changes': '''
import numpy as np
def relu_interpolant(knots, values):
    s = np.diff(values) / np.diff(knots)
    return np.ones((len(s), 1)), -knots[:-1].copy(), s[None, :], np.array([values[0]])
''',
        'no_division_by_gaps': '''
import numpy as np
def relu_interpolant(knots, values):
    s = np.diff(values)
    c = np.diff(s, prepend=0.0)
    return np.ones((len(c), 1)), -knots[:-1].copy(), c[None, :], np.array([values[0]])
''',
        'forgot_first_value': '''
import numpy as np
def relu_interpolant(knots, values):
    s = np.diff(values) / np.diff(knots)
    c = np.diff(s, prepend=0.0)
    return np.ones((len(c), 1)), -knots[:-1].copy(), c[None, :], np.zeros(1)
''',
        'bias_sign': '''
import numpy as np
def relu_interpolant(knots, values):
    s = np.diff(values) / np.diff(knots)
    c = np.diff(s, prepend=0.0)
    return np.ones((len(c), 1)), knots[:-1].copy(), c[None, :], np.array([values[0]])
''',
        'first_slope_dropped': '''
import numpy as np
def relu_interpolant(knots, values):
    s = np.diff(values) / np.diff(knots)
    c = np.r_[s[0], np.diff(s)][1:]
    return np.ones((len(c), 1)), -knots[1:-1].copy(), c[None, :], np.array([values[0]])
''',
        'flip_units_for_negative_changes': '''
import numpy as np
def relu_interpolant(knots, values):
    s = np.diff(values) / np.diff(knots)
    c = np.diff(s, prepend=0.0)
    sign = np.where(c < 0, -1.0, 1.0)
    return sign[:, None], -sign * knots[:-1], np.abs(c)[None, :], np.array([values[0]])
''',
        'one_dimensional_W1': '''
import numpy as np
def relu_interpolant(knots, values):
    s = np.diff(values) / np.diff(knots)
    c = np.diff(s, prepend=0.0)
    return np.ones(len(c)), -knots[:-1].copy(), c[None, :], np.array([values[0]])
''',
    },
    'count_linear_pieces': {
        'breakpoints_not_pieces': '''
import numpy as np
def count_linear_pieces(W1, b1, W2, b2, a, b):
    w = W1[:, 0]; nz = w != 0
    t = np.unique(-b1[nz] / w[nz])
    return int(np.sum((t > a) & (t < b)))
''',
        'no_merging_of_coinciding_breakpoints': '''
import numpy as np
def count_linear_pieces(W1, b1, W2, b2, a, b):
    w = W1[:, 0]; nz = (w != 0) & (W2[0] != 0)
    t = -b1[nz] / w[nz]
    return 1 + int(np.sum((t > a) & (t < b)))
''',
        'no_cancellation_check': '''
import numpy as np
def count_linear_pieces(W1, b1, W2, b2, a, b):
    w = W1[:, 0]; nz = w != 0
    t = np.unique(-b1[nz] / w[nz])
    return 1 + int(np.sum((t > a) & (t < b)))
''',
        'signed_slope_change': '''
import numpy as np
def count_linear_pieces(W1, b1, W2, b2, a, b):
    w = W1[:, 0]; nz = w != 0
    t = -b1[nz] / w[nz]; d = W2[0, nz] * w[nz]
    pieces = 1
    for u in np.unique(np.round(t, 9)):
        same = np.abs(t - u) <= 1e-9 * max(1.0, abs(u))
        if a < u < b and abs(d[same].sum()) > 1e-9 * np.abs(d[same]).sum():
            pieces += 1
    return pieces
''',
        'closed_interval': '''
import numpy as np
def count_linear_pieces(W1, b1, W2, b2, a, b):
    w = W1[:, 0]; nz = w != 0
    t = -b1[nz] / w[nz]; d = W2[0, nz] * np.abs(w[nz])
    pieces = 1
    for u in np.unique(np.round(t, 9)):
        same = np.abs(t - u) <= 1e-9 * max(1.0, abs(u))
        if a <= u <= b and abs(d[same].sum()) > 1e-9 * np.abs(d[same]).sum():
            pieces += 1
    return pieces
''',
        'exact_equality': '''
import numpy as np
def count_linear_pieces(W1, b1, W2, b2, a, b):
    w = W1[:, 0]; nz = w != 0
    t = -b1[nz] / w[nz]; d = W2[0, nz] * np.abs(w[nz])
    pieces = 1
    for u in np.unique(t):
        if a < u < b and d[t == u].sum() != 0:
            pieces += 1
    return pieces
''',
        'ignores_interval': '''
import numpy as np
def count_linear_pieces(W1, b1, W2, b2, a, b):
    w = W1[:, 0]; nz = w != 0
    t = -b1[nz] / w[nz]; d = W2[0, nz] * np.abs(w[nz])
    pieces = 1
    for u in np.unique(np.round(t, 9)):
        same = np.abs(t - u) <= 1e-9 * max(1.0, abs(u))
        if abs(d[same].sum()) > 1e-9 * np.abs(d[same]).sum():
            pieces += 1
    return pieces
''',
    },
    'activation_patterns': {
        'non_strict_inequality': swap(
            '''active = np.asarray(points, dtype=float) @ np.asarray(W, dtype=float).T + b > 0   # (P, m)
    return int(np.unique(active''',
            'return int(np.unique(points @ W.T + b >= 0'),
        'counts_active_units': swap(
            '''active = np.asarray(points, dtype=float) @ np.asarray(W, dtype=float).T + b > 0   # (P, m)
    return int(np.unique(active, axis=0''',
            'return int(np.unique((points @ W.T + b > 0).sum(axis=1)'),
        'flattened_unique': swap(
            '''active = np.asarray(points, dtype=float) @ np.asarray(W, dtype=float).T + b > 0   # (P, m)
    return int(np.unique(active, axis=0).shape[0]''',
            'return int(len(np.unique(points @ W.T + b > 0))'),
        'all_patterns': swap(
            '''active = np.asarray(points, dtype=float) @ np.asarray(W, dtype=float).T + b > 0   # (P, m)
    return int(np.unique(active, axis=0).shape[0])''',
            'return 2 ** W.shape[0]'),
        'wrong_orientation': swap(
            '''active = np.asarray(points, dtype=float) @ np.asarray(W, dtype=float).T + b > 0   # (P, m)
    return int(np.unique(active''',
            'return int(np.unique((W @ points.T).T + b[0] > 0'),
    },
    'zaslavsky_bound': {
        'upper_limit_excluded': swap(
            'int(sum(math.comb(m, i) for i in range(min(n, m) + 1',
            'sum(math.comb(m, i) for i in range(min(n, m'),
        'all_patterns': swap('int(sum(math.comb(m, i) for i in range(min(n, m) + 1)))', '2 ** m'),
        'float_binomials': swap(
            ('def',
             '''from scipy.special import comb
def'''),
            ('int(sum(math.comb(m, i) for i in range(min(n, m) + 1)',
             'sum(comb(m, i) for i in range(min(n, m) + 1'),
        ),
        'cover_count_instead': swap(
            'int(sum(math.comb(m, i) for i in range(min(n, m) + 1)',
            '2 * sum(math.comb(m - 1, k) for k in range(n'),
        'int_of_float_sum': swap(
            ('def',
             '''from scipy.special import comb
def'''),
            ('math.',
             ''),
        ),
    },
    'deep_forward': {
        'relu_after_the_last_layer_too': '''
import numpy as np
def deep_forward(X, layers):
    H = X
    for W, b in layers:
        H = np.maximum(H @ W.T + b, 0.0)
    return H
''',
        'no_relu_at_all': '''
import numpy as np
def deep_forward(X, layers):
    H = X
    for W, b in layers:
        H = H @ W.T + b
    return H
''',
        'no_transpose': '''
import numpy as np
def deep_forward(X, layers):
    H = X
    for i, (W, b) in enumerate(layers):
        H = H @ W + b
        if i < len(layers) - 1:
            H = np.maximum(H, 0.0)
    return H
''',
        'relu_only_after_the_first_layer': '''
import numpy as np
def deep_forward(X, layers):
    W, b = layers[0]
    H = X @ W.T + b
    if len(layers) > 1:
        H = np.maximum(H, 0.0)
    for W, b in layers[1:]:
        H = H @ W.T + b
    return H
''',
        'pops_the_output_layer_off_the_list': '''
import numpy as np
def deep_forward(X, layers):
    W_out, b_out = layers.pop()
    H = X
    for W, b in layers:
        H = np.maximum(H @ W.T + b, 0.0)
    return H @ W_out.T + b_out
''',
        'bias_after_relu': '''
import numpy as np
def deep_forward(X, layers):
    H = X
    for i, (W, b) in enumerate(layers):
        H = H @ W.T
        if i < len(layers) - 1:
            H = np.maximum(H, 0.0)
        H = H + b
    return H
''',
        'first_row_only': '''
import numpy as np
def deep_forward(X, layers):
    h = np.asarray(X, dtype=float)[0]
    for i, (W, b) in enumerate(layers):
        h = W @ h + b
        if i < len(layers) - 1:
            h = np.maximum(h, 0.0)
    return h[None, :]
''',
    },
    'sawtooth_network': {
        'one_hidden_layer_too_few': '''
import numpy as np
def sawtooth_network(L):
    layers = [(np.array([[1.0], [1.0]]), np.array([0.0, -0.5]))]
    for _ in range(L - 2):
        layers.append((np.array([[2.0, -4.0], [2.0, -4.0]]), np.array([0.0, -0.5])))
    layers.append((np.array([[2.0, -4.0]]), np.zeros(1)))
    return layers
''',
        'tent_without_the_factor_four': '''
import numpy as np
def sawtooth_network(L):
    layers = [(np.array([[1.0], [1.0]]), np.array([0.0, -0.5]))]
    for _ in range(L - 1):
        layers.append((np.array([[2.0, -2.0], [2.0, -2.0]]), np.array([0.0, -0.5])))
    layers.append((np.array([[2.0, -2.0]]), np.zeros(1)))
    return layers
''',
        'breakpoint_bias_with_wrong_sign': '''
import numpy as np
def sawtooth_network(L):
    layers = [(np.array([[1.0], [1.0]]), np.array([0.0, 0.5]))]
    for _ in range(L - 1):
        layers.append((np.array([[2.0, -4.0], [2.0, -4.0]]), np.array([0.0, 0.5])))
    layers.append((np.array([[2.0, -4.0]]), np.zeros(1)))
    return layers
''',
        'hidden_weights_transposed': '''
import numpy as np
def sawtooth_network(L):
    layers = [(np.array([[1.0], [1.0]]), np.array([0.0, -0.5]))]
    for _ in range(L - 1):
        layers.append((np.array([[2.0, 2.0], [-4.0, -4.0]]), np.array([0.0, -0.5])))
    layers.append((np.array([[2.0, -4.0]]), np.zeros(1)))
    return layers
''',
        'no_output_layer': '''
import numpy as np
def sawtooth_network(L):
    layers = [(np.array([[1.0], [1.0]]), np.array([0.0, -0.5]))]
    for _ in range(L - 1):
        layers.append((np.array([[2.0, -4.0], [2.0, -4.0]]), np.array([0.0, -0.5])))
    return layers
''',
        'one_wide_layer_of_2_to_the_L_units': '''
import numpy as np
def sawtooth_network(L):
    knots = np.arange(2 ** L) / 2 ** L
    slopes = np.where(np.arange(2 ** L) % 2 == 0, 2.0 ** L, -2.0 ** L)
    c = np.diff(slopes, prepend=0.0)
    return [(np.ones((2 ** L, 1)), -knots), (c[None, :], np.zeros(1))]
''',
    },
}
