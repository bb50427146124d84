"""Plausible mistakes in the graded functions of ch01_perceptron (format: ``__init__.py`` here)."""
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
        'functional_margin': swap(" / np.linalg.norm(w)", ""),
        'unsigned_distance': swap("np.min(np.asarray(y) * ", "np.min(np.abs"),
        'norm_includes_bias': swap("np.linalg.norm(w)", "np.linalg.norm(np.r_[w, b])"),
        'divides_by_squared_norm': swap("np.linalg.norm(w)", "(w @ w)"),
        'mean_instead_of_min': swap("np.min(", "np.mean("),
        'per_point_margins': swap(
            "float(np.min(np.asarray(y) * (X @ w + b)) / np.linalg.norm(w))",
            "np.asarray(y) * (X @ w + b) / np.linalg.norm(w)"),
    },
    'perceptron_train': {
        'strict_mistake_test': swap("<= 0:", "< 0:"),
        'bias_never_updated': swap("""
                b = b + y_i""", ""),
        'counts_sweeps_not_updates': swap("updates += mistakes", "updates += mistakes > 0"),
        'restarts_sweep_after_each_mistake': swap("mistakes += 1", """mistakes += 1
                break"""),
        'batch_updates': swap(
            """for x_i, y_i in zip(X, y):
            if y_i * (w @ x_i + b) <= 0:
                w = w + y_i * x_i
                b = b + y_i
                mistakes += 1""",
            """wrong = y * (X @ w + b) <= 0
        w = w + y[wrong] @ X[wrong]
        b = b + y[wrong].sum()
        mistakes += int(wrong.sum())"""),
        'one_sweep_too_many': swap("range(max_epochs)", "range(max_epochs + 1)"),
        'shuffles_the_order': swap(
            ("updates = 0", """updates = 0
    rng = np.random.default_rng(0)"""),
            ("for x_i, y_i in zip(X, y):", """for i in rng.permutation(len(y)):
            x_i, y_i = X[i], y[i]"""),
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
            ("updates = 0", """updates = 0
    X *= y[:, None]          # z_i = y_i x_i: a mistake is w.z_i + b y_i <= 0"""),
            ("""for x_i, y_i in zip(X, y):
            if y_i * (w @ x_i + b) <= 0:
                w = w + y_i * x_i""",
             """for z_i, y_i in zip(X, y):
            if w @ z_i + b * y_i <= 0:
                w = w + z_i"""),
        ),
        'default_max_epochs_100': swap("max_epochs=1000", "max_epochs=100"),
    },
    'perceptron_criterion': {
        'strict_mistake_test': swap("scores <= 0", "scores < 0"),
        'sums_over_all_points': swap("mistakes = scores <= 0", "mistakes = np.ones(len(scores), dtype=bool)"),
        'gradient_sign_flipped': swap(
            ("grad_w = -(y[mistakes] @ X[mistakes])", "grad_w = y[mistakes] @ X[mistakes]"),
            ("float(-np.sum(y[mistakes]))", "float(np.sum(y[mistakes]))"),
        ),
        'bias_left_out_of_the_score': swap("X @ w + float(b)", "X @ w"),
        'sums_over_features_not_points': swap(
            "-(y[mistakes] @ X[mistakes])", "-(y[mistakes][:, None] * X[mistakes]).sum(axis=1)"),
        'mean_over_mistakes': swap("return loss, grad_w, grad_b", """k = max(int(mistakes.sum()), 1)
    return loss / k, grad_w / k, grad_b / k"""),
        'loss_counts_mistakes': swap("float(np.sum(-scores[mistakes]))", "float(np.sum(mistakes))"),
        'folds_labels_into_X_in_place': swap(
            ("scores = y * (X @ w + float(b))", """X *= y[:, None]
    scores = X @ w + float(b) * y"""),
            ("-(y[mistakes] @ X[mistakes])", "-X[mistakes].sum(axis=0)"),
        ),
    },
    'novikoff_bound': {
        'not_squared': swap("(R / gamma) ** 2", "R / gamma"),
        'no_inf_for_non_separating_w': swap("""if gamma <= 0:
        return float("inf")
    """, ""),
        'gamma_not_normalised': swap(" / np.linalg.norm(w)", ""),
        'R_is_largest_coordinate': swap("np.linalg.norm(X, axis=1)", "np.abs(X)"),
        'R_is_mean_norm': swap("R = np.max", "R = np.mean"),
        'R_is_frobenius_norm': swap("np.max(np.linalg.norm(X, axis=1))", "np.linalg.norm(X)"),
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
        'alpha_without_one_half': swap("0.5 * math.log", "math.log"),
        'not_renormalised': swap("new / new.sum()", "new"),
        'wrong_sign_in_exponent': swap("np.exp(-alpha", "np.exp(alpha"),
        'unweighted_error': swap("float(np.sum(weights[h_pred != y]))", "float(np.mean(h_pred != y))"),
        'updates_weights_in_place': swap(
            """new = weights * np.exp(-alpha * y * h_pred)
    return alpha, new / new.sum()""",
            """weights *= np.exp(-alpha * y * h_pred)
    weights /= weights.sum()
    return alpha, weights"""),
        'inverted_odds': swap(("(1.0 - eps) / eps", "eps / (1.0 - eps)"), ("np.exp(-alpha", "np.exp(alpha")),
    },
}
