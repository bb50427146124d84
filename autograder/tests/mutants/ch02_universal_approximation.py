"""Plausible mistakes in the graded functions of ch02_universal_approximation (format: ``__init__.py`` here)."""
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
            ("dtype=float).T + b1", "dtype=float) + b1"),
            ("dtype=float).T + b2", "dtype=float) + b2"),
        ),
        'relu_on_output': swap(
            "return H @ np.asarray(W2, dtype=float).T + b2", "return relu(H @ np.asarray(W2, dtype=float).T + b2)"),
        'forgot_b2': swap("dtype=float).T + b2", "dtype=float).T"),
        'bias_after_relu': swap("dtype=float).T + b1)", "dtype=float).T) + b1"),
        'flattened_output': swap(
            "return H @ np.asarray(W2, dtype=float).T + b2", "return (H @ np.asarray(W2, dtype=float).T + b2).ravel()"),
    },
    'relu_interpolant': {
        'slopes_not_slope_changes': swap("c = np.diff(slopes, prepend=0.0)", "c = slopes"),
        'no_division_by_gaps': swap("np.diff(values) / np.diff(knots)", "np.diff(values)"),
        'forgot_first_value': swap("np.array([values[0]])", "np.zeros(1)"),
        'bias_sign': swap("b1 = -knots", "b1 = knots"),
        'first_slope_dropped': swap(("prepend=0.0)", ")"), ("-knots[:-1]", "-knots[1:-1]")),
        'flip_units_for_negative_changes': swap(
            ("W1 = np.ones((len(c), 1))", """sign = np.where(c < 0, -1.0, 1.0)
    W1 = sign[:, None]"""),
            ("b1 = -knots[:-1]", "b1 = -sign * knots[:-1]"),
            ("W2 = c[None, :]", "W2 = np.abs(c)[None, :]"),
        ),
        'one_dimensional_W1': swap("np.ones((len(c), 1))", "np.ones(len(c))"),
    },
    'count_linear_pieces': {
        'breakpoints_not_pieces': swap("pieces, i = 1, 0", "pieces, i = 0, 0"),
        'no_merging_of_coinciding_breakpoints': swap("""
        while j < len(t) and t[j] - t[i] <= 1e-9 * max(1.0, abs(t[i]), abs(t[j])):
            j += 1""", ""),
        'no_cancellation_check': swap(" and abs(total) > 1e-9 * size", ""),
        'signed_slope_change': swap("v[has] * np.abs(w[has])", "v[has] * w[has]"),
        'closed_interval': swap("a + tol_ab < t[i] < b - tol_ab", "a <= t[i] <= b"),
        'exact_equality': swap(
            ("t[j] - t[i] <= 1e-9 * max(1.0, abs(t[i]), abs(t[j]))", "t[j] == t[i]"),
            ("a + tol_ab < t[i] < b - tol_ab", "a < t[i] < b"),
            ("abs(total) > 1e-9 * size", "total != 0"),
        ),
        'ignores_interval': swap("a + tol_ab < t[i] < b - tol_ab and ", ""),
    },
    'activation_patterns': {
        'non_strict_inequality': swap(".T + b > 0", ".T + b >= 0"),
        'counts_active_units': swap("np.unique(active, axis=0)", "np.unique(active.sum(axis=1))"),
        'flattened_unique': swap("np.unique(active, axis=0).shape[0]", "len(np.unique(active))"),
        'all_patterns': swap("int(np.unique(active, axis=0).shape[0])", "2 ** W.shape[0]"),
        'wrong_orientation': swap(".T + b > 0", ".T + b[0] > 0"),
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
        'relu_after_the_last_layer_too': swap("last = len(layers) - 1", "last = len(layers)"),
        'no_relu_at_all': swap("""
        if index < last:
            H = np.maximum(H, 0.0)""", ""),
        'no_transpose': swap("np.asarray(W, dtype=float).T", "np.asarray(W, dtype=float)"),
        'relu_only_after_the_first_layer': swap("if index < last:", "if index == 0 and index < last:"),
        'pops_the_output_layer_off_the_list': swap(
            ("last = len(layers) - 1", """W_out, b_out = layers.pop()
    last = len(layers)"""),
            ("return H", "return H @ np.asarray(W_out, dtype=float).T + b_out"),
        ),
        'bias_after_relu': swap(
            (" + np.asarray(b, dtype=float)", ""),
            ("H = np.maximum(H, 0.0)", """H = np.maximum(H, 0.0)
        H = H + np.asarray(b, dtype=float)"""),
        ),
        'first_row_only': swap("H = np.asarray(X, dtype=float)", "H = np.asarray(X, dtype=float)[:1]"),
    },
    'sawtooth_network': {
        'one_hidden_layer_too_few': swap("range(int(L) - 1)", "range(int(L) - 2)"),
        'tent_without_the_factor_four': swap("np.array([[2.0, -4.0]])", "np.array([[2.0, -2.0]])"),
        'breakpoint_bias_with_wrong_sign': swap("np.array([0.0, -0.5])", "np.array([0.0, 0.5])"),
        'hidden_weights_transposed': swap("np.array([[1.0], [1.0]]) @ tent,", "(np.array([[1.0], [1.0]]) @ tent).T,"),
        'no_output_layer': swap("""
    layers.append((tent.copy(), np.zeros(1)))""", ""),
        # a different construction (one wide layer), not an edit of the reference's deep one: whole cell
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
