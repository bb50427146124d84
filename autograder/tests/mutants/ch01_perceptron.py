"""Plausible mistakes in the graded functions of ch01_perceptron: each must make its test cell fail.

Written as edits of the reference solutions (``swap``) or, where an edit cannot say it, as the
whole solution cell; the format and the loader are in autograder/tests/mutants/__init__.py.
"""
from autograder.tests.mutants import swap

MUTANTS = {
    'perceptron_predict': {
        'no_zero_on_hyperplane': swap(
            'sign(np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) + float(b)',
            'where(X @ w + b >= 0, 1.0, -1.0'),
        'strict_threshold_minus_one_on_hyperplane': swap(
            'sign(np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) + float(b)',
            'where(X @ w + b > 0, 1.0, -1.0'),
        'forgot_bias': swap('np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) + float(b)', 'X @ w'),
        'bias_subtracted': swap('np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) + float(b)', 'X @ w - b'),
        'integer_labels': swap(
            'np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) + float(b)',
            'X @ w + b).astype(int'),
        'dtype_follows_inputs': swap('np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) + float(b)', 'X @ w + b'),
    },
    'margin': {
        'functional_margin': swap(
            '''X = np.asarray(X, dtype=float)
    w = np.asarray(w, dtype=float)
    return float(np.min(np.asarray(y) * (X @ w + b)) / np.linalg.norm(w''',
            'return float(np.min(y * (X @ w + b)'),
        'unsigned_distance': swap(
            '''X = np.asarray(X, dtype=float)
    w = np.asarray(w, dtype=float)
    return float(np.min(np.asarray(y) * ''',
            'return float(np.min(np.abs'),
        'norm_includes_bias': swap(
            '''X = np.asarray(X, dtype=float)
    w = np.asarray(w, dtype=float)
    return float(np.min(np.asarray(y) * (X @ w + b)) / np.linalg.norm(w''',
            'return float(np.min(y * (X @ w + b)) / np.linalg.norm(np.r_[w, b]'),
        'divides_by_squared_norm': swap(
            '''X = np.asarray(X, dtype=float)
    w = np.asarray(w, dtype=float)
    return float(np.min(np.asarray(y) * (X @ w + b)) / np.linalg.norm(''',
            'return float(np.min(y * (X @ w + b)) / (w @ '),
        'mean_instead_of_min': swap(
            '''X = np.asarray(X, dtype=float)
    w = np.asarray(w, dtype=float)
    return float(np.min(np.asarray(y)''',
            'return float(np.mean(y'),
        'per_point_margins': swap(
            '''X = np.asarray(X, dtype=float)
    w = np.asarray(w, dtype=float)
    return float(np.min(np.asarray(y) * (X @ w + b)) / np.linalg.norm(w)''',
            'return y * (X @ w + b) / np.linalg.norm(w'),
    },
    'perceptron_train': {
        'strict_mistake_test': swap(
            ('''X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.zeros(X.shape[1])
    b = 0.0
    updates =''',
             'w, b, updates = np.zeros(X.shape[1]), 0.0,'),
            ('<= 0:',
             '< 0:'),
            ('= b +',
             '+='),
            ('int(updates)',
             'updates'),
        ),
        'bias_never_updated': '''
import numpy as np
def perceptron_train(X, y, max_epochs=1000):
    w, b, updates = np.zeros(X.shape[1]), 0.0, 0
    for _ in range(max_epochs):
        mistakes = 0
        for x_i, y_i in zip(X, y):
            if y_i * (w @ x_i + b) <= 0:
                w = w + y_i * x_i
                mistakes += 1
        updates += mistakes
        if mistakes == 0:
            break
    return w, float(b), updates
''',
        'counts_sweeps_not_updates': '''
import numpy as np
def perceptron_train(X, y, max_epochs=1000):
    w, b, epochs = np.zeros(X.shape[1]), 0.0, 0
    for _ in range(max_epochs):
        mistakes = 0
        for x_i, y_i in zip(X, y):
            if y_i * (w @ x_i + b) <= 0:
                w = w + y_i * x_i
                b += y_i
                mistakes += 1
        if mistakes == 0:
            break
        epochs += 1
    return w, float(b), epochs
''',
        'restarts_sweep_after_each_mistake': '''
import numpy as np
def perceptron_train(X, y, max_epochs=1000):
    w, b, updates = np.zeros(X.shape[1]), 0.0, 0
    for _ in range(max_epochs):
        for x_i, y_i in zip(X, y):
            if y_i * (w @ x_i + b) <= 0:
                w = w + y_i * x_i
                b += y_i
                updates += 1
                break
        else:
            break
    return w, float(b), updates
''',
        'batch_updates': '''
import numpy as np
def perceptron_train(X, y, max_epochs=1000):
    w, b, updates = np.zeros(X.shape[1]), 0.0, 0
    for _ in range(max_epochs):
        wrong = y * (X @ w + b) <= 0
        if not wrong.any():
            break
        w = w + (y[wrong, None] * X[wrong]).sum(axis=0)
        b += y[wrong].sum()
        updates += int(wrong.sum())
    return w, float(b), updates
''',
        'one_sweep_too_many': swap(
            ('''X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.zeros(X.shape[1])
    b = 0.0
    updates = 0
    for _ in range(max_epochs''',
             '''w, b, updates = np.zeros(X.shape[1]), 0.0, 0
    for _ in range(max_epochs + 1'''),
            ('= b +',
             '+='),
            ('int(updates)',
             'updates'),
        ),
        'shuffles_the_order': swap(
            ('''X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.zeros(X.shape[1])
    b = 0.0
    updates =''',
             '''rng = np.random.default_rng(0)
    w, b, updates = np.zeros(X.shape[1]), 0.0,'''),
            ('''x_i, y_i in zip(X, y):
            if y_i * (w @ x_i + b) <= 0:
                w = w + y_i * x_i
                b = b + y_i''',
             '''i in rng.permutation(len(y)):
            if y[i] * (w @ X[i] + b) <= 0:
                w = w + y[i] * X[i]
                b += y[i]'''),
            ('int(updates)',
             'updates'),
        ),
        'zeros_like_keeps_integer_dtype': swap(
            ('''X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.zeros(X.shape[1])
    b = 0.0
    updates =''',
             'w, b, updates = np.zeros_like(X[0]), 0,'),
            ('float(b), int(updates)',
             'b, updates'),
        ),
        'folds_labels_into_X_in_place': swap(
            ('''= np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.zeros(X.shape[1])
    b = 0.0
    updates =''',
             '''*= y[:, None]          # z_i = y_i x_i: a mistake is w.z_i + b y_i <= 0
    w, b, updates = np.zeros(X.shape[1]), 0.0,'''),
            ('''x_i, y_i in zip(X, y):
            if y_i * (w @ x_i + b) <= 0:
                w = w + y_i * x_i
                b = b +''',
             '''z_i, y_i in zip(X, y):
            if w @ z_i + b * y_i <= 0:
                w = w + z_i
                b +='''),
            ('int(updates)',
             'updates'),
        ),
        'default_max_epochs_100': '''
import numpy as np
def perceptron_train(X, y, max_epochs=100):
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    w, b, updates = np.zeros(X.shape[1]), 0.0, 0
    for _ in range(max_epochs):
        mistakes = 0
        for x_i, y_i in zip(X, y):
            if y_i * (w @ x_i + b) <= 0:
                w = w + y_i * x_i
                b += y_i
                mistakes += 1
        updates += mistakes
        if mistakes == 0:
            break
    return w, float(b), int(updates)
''',
    },
    'perceptron_criterion': {
        'strict_mistake_test': '''
import numpy as np
def perceptron_criterion(X, y, w, b):
    scores = y * (X @ w + b)
    m = scores < 0
    return float(-scores[m].sum()), -(y[m] @ X[m]), float(-y[m].sum())
''',
        'sums_over_all_points': '''
import numpy as np
def perceptron_criterion(X, y, w, b):
    scores = y * (X @ w + b)
    return float(-scores.sum()), -(y @ X), float(-y.sum())
''',
        'gradient_sign_flipped': '''
import numpy as np
def perceptron_criterion(X, y, w, b):
    scores = y * (X @ w + b)
    m = scores <= 0
    return float(-scores[m].sum()), y[m] @ X[m], float(y[m].sum())
''',
        'bias_left_out_of_the_score': '''
import numpy as np
def perceptron_criterion(X, y, w, b):
    scores = y * (X @ w)
    m = scores <= 0
    return float(-scores[m].sum()), -(y[m] @ X[m]), float(-y[m].sum())
''',
        'sums_over_features_not_points': '''
import numpy as np
def perceptron_criterion(X, y, w, b):
    scores = y * (X @ w + b)
    m = scores <= 0
    return float(-scores[m].sum()), -(y[m][:, None] * X[m]).sum(axis=1), float(-y[m].sum())
''',
        'mean_over_mistakes': '''
import numpy as np
def perceptron_criterion(X, y, w, b):
    scores = y * (X @ w + b)
    m = scores <= 0
    k = max(int(m.sum()), 1)
    return float(-scores[m].sum()) / k, -(y[m] @ X[m]) / k, float(-y[m].sum()) / k
''',
        'loss_counts_mistakes': '''
import numpy as np
def perceptron_criterion(X, y, w, b):
    scores = y * (X @ w + b)
    m = scores <= 0
    return float(m.sum()), -(y[m] @ X[m]), float(-y[m].sum())
''',
        'folds_labels_into_X_in_place': '''
import numpy as np
def perceptron_criterion(X, y, w, b):
    X = np.asarray(X, dtype=float)
    X *= y[:, None]
    scores = X @ w + b * y
    m = scores <= 0
    return float(-scores[m].sum()), -X[m].sum(axis=0), float(-y[m].sum())
''',
    },
    'novikoff_bound': {
        'not_squared': '''
import numpy as np
def novikoff_bound(X, y, w):
    R = np.max(np.linalg.norm(X, axis=1))
    gamma = np.min(y * (X @ w)) / np.linalg.norm(w)
    return float("inf") if gamma <= 0 else float(R / gamma)
''',
        'no_inf_for_non_separating_w': '''
import numpy as np
def novikoff_bound(X, y, w):
    R = np.max(np.linalg.norm(X, axis=1))
    gamma = np.min(y * (X @ w)) / np.linalg.norm(w)
    return float((R / gamma) ** 2)
''',
        'gamma_not_normalised': '''
import numpy as np
def novikoff_bound(X, y, w):
    R = np.max(np.linalg.norm(X, axis=1))
    gamma = np.min(y * (X @ w))
    return float("inf") if gamma <= 0 else float((R / gamma) ** 2)
''',
        'R_is_largest_coordinate': '''
import numpy as np
def novikoff_bound(X, y, w):
    R = np.max(np.abs(X))
    gamma = np.min(y * (X @ w)) / np.linalg.norm(w)
    return float("inf") if gamma <= 0 else float((R / gamma) ** 2)
''',
        'R_is_mean_norm': '''
import numpy as np
def novikoff_bound(X, y, w):
    R = np.mean(np.linalg.norm(X, axis=1))
    gamma = np.min(y * (X @ w)) / np.linalg.norm(w)
    return float("inf") if gamma <= 0 else float((R / gamma) ** 2)
''',
        'R_is_frobenius_norm': '''
import numpy as np
def novikoff_bound(X, y, w):
    R = np.linalg.norm(X)
    gamma = np.min(y * (X @ w)) / np.linalg.norm(w)
    return float("inf") if gamma <= 0 else float((R / gamma) ** 2)
''',
    },
    'cover_count': {
        'float_binomials': swap(
            ('def',
             '''from scipy.special import comb
def'''),
            ('''s, n = int(s), int(n)
    return 2 * sum(math.''',
             'return 2 * sum('),
        ),
        'float_binomials_cast_to_int': swap(
            ('def',
             '''from scipy.special import comb
def'''),
            ('''s, n = int(s), int(n)
    return 2 * sum(math.comb(s - 1, k) for k in range(n''',
             'return int(2 * sum(comb(s - 1, k) for k in range(n)'),
        ),
        'one_term_too_many': swap(
            '''s, n = int(s), int(n)
    return 2 * sum(math.comb(s - 1, k) for k in range(n''',
            'return 2 * sum(math.comb(s - 1, k) for k in range(n + 1'),
        'binom_of_s_not_s_minus_1': swap(
            '''s, n = int(s), int(n)
    return 2 * sum(math.comb(s - 1''',
            'return 2 * sum(math.comb(s'),
        'forgot_factor_two': swap(
            '''s, n = int(s), int(n)
    return 2 *''',
            'return'),
        'stops_the_sum_too_early_when_s_small': swap(
            '''s, n = int(s), int(n)
    return 2 * sum(math.comb(s - 1, k) for k in range(n''',
            'return 2 * sum(math.comb(s - 1, k) for k in range(min(n, s - 1)'),
        'factorials_with_true_division': swap(
            '''s, n = int(s), int(n)
    return 2 * sum(math.comb(s - 1, k) for k in range(n)''',
            '''total = 0
    for k in range(min(n, s)):
        total += math.factorial(s - 1) / (math.factorial(k) * math.factorial(s - 1 - k))
    return int(2 * total'''),
    },
    'adaboost_step': {
        'alpha_without_one_half': '''
import numpy as np
def adaboost_step(weights, y, h_pred):
    eps = weights[h_pred != y].sum()
    alpha = np.log((1 - eps) / eps)
    new = weights * np.exp(-alpha * y * h_pred)
    return float(alpha), new / new.sum()
''',
        'not_renormalised': '''
import numpy as np
def adaboost_step(weights, y, h_pred):
    eps = weights[h_pred != y].sum()
    alpha = 0.5 * np.log((1 - eps) / eps)
    return float(alpha), weights * np.exp(-alpha * y * h_pred)
''',
        'wrong_sign_in_exponent': '''
import numpy as np
def adaboost_step(weights, y, h_pred):
    eps = weights[h_pred != y].sum()
    alpha = 0.5 * np.log((1 - eps) / eps)
    new = weights * np.exp(alpha * y * h_pred)
    return float(alpha), new / new.sum()
''',
        'unweighted_error': '''
import numpy as np
def adaboost_step(weights, y, h_pred):
    eps = np.mean(h_pred != y)
    alpha = 0.5 * np.log((1 - eps) / eps)
    new = weights * np.exp(-alpha * y * h_pred)
    return float(alpha), new / new.sum()
''',
        'updates_weights_in_place': '''
import numpy as np
def adaboost_step(weights, y, h_pred):
    eps = weights[h_pred != y].sum()
    alpha = 0.5 * np.log((1 - eps) / eps)
    weights *= np.exp(-alpha * y * h_pred)
    weights /= weights.sum()
    return float(alpha), weights
''',
        'inverted_odds': '''
import numpy as np
def adaboost_step(weights, y, h_pred):
    eps = weights[h_pred != y].sum()
    alpha = 0.5 * np.log(eps / (1 - eps))
    new = weights * np.exp(alpha * y * h_pred)
    return float(alpha), new / new.sum()
''',
    },
}
