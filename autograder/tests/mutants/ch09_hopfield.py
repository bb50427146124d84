"""Plausible mistakes in the graded functions of ch09_hopfield (format: ``__init__.py`` here)."""
from autograder.tests.mutants import swap

MUTANTS = {
    'hebbian_weights': {
        'keeps_diagonal': swap("""
    np.fill_diagonal(W, 0.0)""", ""),
        'divides_by_s': swap(
            '''n = P.shape[1]
    W = P.T @ P / n''',
            'W = P.T @ P / P.shape[0]'),
        'no_normalisation': swap(
            '''n = P.shape[1]
    W = P.T @ P / n''',
            'W = P.T @ P'),
        'subtracts_identity': swap(
            '''W = P.T @ P / n
    np.fill_diagonal(W, 0.0)
    return W''',
            'return P.T @ P / n - np.eye(n)'),
        'pattern_gram_matrix': swap(
            '''n = P.shape[1]
    W = P.T @ P / n''',
            'W = P @ P.T / P.shape[1]'),
    },
    'energy': {
        'no_half': swap("value = -0.5 * x", "value = -x"),
        'bias_subtracted': swap("value += np", "value -= np"),
        'ignores_thresholds': swap("""
    if b is not None:
        value += np.asarray(b, dtype=float) @ x""", ""),
        'positive_quadratic': swap("value = -0.5 * x", "value = 0.5 * x"),
    },
    'async_sweep': {
        'synchronous': swap(
            ("x = np.array(x, dtype=float)", """old = np.array(x, dtype=float)
    x = old.copy()"""),
            ("if W[i] @ x", "if W[i] @ old"),
        ),
        'np_sign_at_zero': swap("1.0 if W[i] @ x - b[i] >= 0 else -1.0", "np.sign(W[i] @ x - b[i])"),
        'ignores_order': swap("for i in order", "for i in range(len(x))"),
        'threshold_added': swap("if W[i] @ x - b[i]", "if W[i] @ x + b[i]"),
        'updates_input_in_place': swap("x = np.array(x, dtype=float)", "x = np.asarray(x, dtype=float)"),
    },
    'recall': {
        'last_sweep_not_counted': swap("range(1, max_sweeps + 1)", "range(max_sweeps)"),
        'one_order_for_all_sweeps': swap(
            ('n = len(x',
             'order = rng.permutation(len(x)'),
            ('rng.permutation(n),',
             'order,'),
        ),
        'fixed_order_no_draws': swap("rng.permutation(n), b)", "range(n), b)"),
        'forgets_thresholds': swap("rng.permutation(n), b)", "rng.permutation(n))"),
        'one_sweep_too_many': swap(
            ("range(1, max_sweeps + 1)", "range(1, max_sweeps + 2)"),
            ("return x, max_sweeps", "return x, sweeps"),
        ),
    },
    'crosstalk': {
        'includes_own_pattern': swap(
            '''G = P @ P.T / P.shape[1]
    np.fill_diagonal(G, 0.0)
    return G''',
            'return (P @ P.T / P.shape[1])'),
        'field_minus_pattern': swap(
            '''G = P @ P.T / P.shape[1]
    np.fill_diagonal(G, 0.0)
    return G @''',
            '''n = P.shape[1]
    W = P.T @ P / n
    np.fill_diagonal(W, 0.0)
    return P @ W -'''),
        'no_division_by_n': swap(" / P.shape[1]", ""),
        'divides_by_s': swap('1]', '0]'),
    },
    'flip_probability': {
        'missing_factor_two': swap('(2.0 * s)', 's'),
        'inverted_ratio': swap('n / (2.0 * s', 's / (2.0 * n'),
        'no_half': swap('0.5 * (1.0 - math.erf(math.sqrt(n / (2.0 * s)', '1.0 - math.erf(math.sqrt(n / (2.0 * s'),
        'wrong_tail': swap('- math', '+ math'),
    },
    'stable_fraction': {
        'fraction_of_bits': swap(
            "np.all(np.where(fields >= 0, 1.0, -1.0) == P, axis=1)", "np.where(fields >= 0, 1.0, -1.0) == P"),
        'np_sign_at_zero': swap("np.where(fields >= 0, 1.0, -1.0)", "np.sign(fields)"),
        'transposed_weights': swap("P @ W.T", "P @ W"),
        'count_not_fraction': swap("np.mean(", "np.sum("),
        'any_bit_instead_of_all': swap("np.all(", "np.any("),
    },
    'modern_hopfield_update': {
        'softmax_over_queries': swap(
            ("scores.max(axis=-1", "scores.max(axis=0"),
            ("weights.sum(axis=-1", "weights.sum(axis=0"),
        ),
        'unstable_softmax': swap("""
    scores = scores - scores.max(axis=-1, keepdims=True)""", ""),
        'temperature_instead_of_inverse': swap("beta * (xi @ X.T)", "(xi @ X.T) / beta"),
        'returns_weights': swap("return weights @ X", "return weights"),
        'unnormalised_weights': swap("""
    weights /= weights.sum(axis=-1, keepdims=True)""", ""),
    },
}

# Mistakes in the pieces the integration check uses that must make it fail, not only their own cell.
INTEGRATION = {
    "test_integration_digits": ["hebbian_weights/keeps_diagonal", "hebbian_weights/divides_by_s",
                                "hebbian_weights/pattern_gram_matrix"],
}
