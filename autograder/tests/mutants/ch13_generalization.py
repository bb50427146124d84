"""Plausible mistakes in the graded functions of ch13_generalization (format: ``__init__.py`` here)."""
from autograder.tests.mutants import swap

MUTANTS = {
    'polynomial_features': {
        'degree_off_by_one': swap('np.arange(degree + 1)', 'np.arange(degree)'),
        'no_constant_column': swap('np.arange(degree + 1)', 'np.arange(1, degree + 1)'),
        'one_column_too_many': swap('np.arange(degree + 1)', 'np.arange(degree + 2)'),
        'integer_powers': swap('x = np.asarray(x, dtype=float)', 'x = np.asarray(x)'),
        'decreasing_powers': swap('np.arange(degree + 1)', 'np.arange(degree, -1, -1)'),
    },
    'ridge_fit': {
        'tiny_ridge_instead_of_pinv': swap('return np.linalg.pinv(X) @ y', 'lam = 1e-10'),
        'lstsq_normal_equations_at_zero': swap('return np.linalg.pinv(X) @ y',
                                               'return np.linalg.solve(X.T @ X + 1e-8 * np.eye(X.shape[1]), X.T @ y)'),
        'lam_on_X_not_gram': swap('X.T @ X + lam * np.eye(X.shape[1])', 'X.T @ X + lam'),
        'no_value_error': swap('if lam < 0:', 'if False:'),
        'lam_squared': swap('lam * np.eye', 'lam ** 2 * np.eye'),
        'forgets_X_transpose_y': swap('X.T @ X + lam * np.eye(X.shape[1]), X.T @ y)',
                                      'X.T @ X + lam * np.eye(X.shape[1]), y[:X.shape[1]])'),
    },
    'effective_dof': {
        'singular_values_not_squared': swap('np.sum(s ** 2 / (s ** 2 + lam))', 'np.sum(s / (s + lam))'),
        'zero_counts_columns': swap('return float(np.sum(s > s.max() * max(X.shape) * np.finfo(float).eps))',
                                    'return float(X.shape[1])'),
        'threshold_zero': swap('s > s.max() * max(X.shape) * np.finfo(float).eps', 's > 0'),
        'absolute_threshold': swap('s > s.max() * max(X.shape) * np.finfo(float).eps', 's > 1e-3'),
        'no_value_error': swap('if lam < 0:', 'if False:'),
        'lam_over': swap('s ** 2 / (s ** 2 + lam)', 'lam / (s ** 2 + lam)'),
    },
    'kfold_indices': {
        'fold_leaks_into_training': swap('[folds[j] for j in range(k) if j != i]', '[folds[j] for j in range(k)]'),
        'no_shuffle': swap('    perm = rng.permutation(n)\n', '    perm = np.arange(n)\n'),
        'k_equal_n_rejected': swap('if k < 2 or k > n:', 'if k < 2 or k >= n:'),
        'draws_before_checking': swap(
            ('''    if k < 2 or k > n:
        raise ValueError(f"need 2 <= k <= n, got k = {k}, n = {n}")
    perm = rng.permutation(n)''', '''    perm = rng.permutation(n)
    if k < 2 or k > n:
        raise ValueError(f"need 2 <= k <= n, got k = {k}, n = {n}")'''),),
        'equal_slices_drop_rest': swap('    folds = np.array_split(perm, k)\n',
                                       '    folds = np.split(perm[:(n // k) * k], k)\n'),
        'pairs_swapped': swap('(np.concatenate([folds[j] for j in range(k) if j != i]), folds[i])',
                              '(folds[i], np.concatenate([folds[j] for j in range(k) if j != i]))'),
    },
    'cross_validate': {
        'fits_on_all_data': swap('        model = fit(X[train], y[train])', '        model = fit(X, y)'),
        'weighted_by_fold_size': swap('return float(errors.mean()), errors',
                                      'sizes = np.array([len(v) for _, v in '
                                      'kfold_indices(len(y), k, np.random.default_rng(0))])\n'
                                      '    return float(np.sum(errors * sizes) / sizes.sum()), errors'),
        'error_on_training_fold': swap('errors.append(np.mean((np.ravel(predict(model, X[val])) - y[val]) ** 2))',
                                       'errors.append(np.mean((np.ravel(predict(model, X[train])) - y[train]) ** 2))'),
        'no_ravel': swap('errors.append(np.mean((np.ravel(predict(model, X[val]))',
                         'errors.append(np.mean((np.asarray(predict(model, X[val]))'),
        'root_mean_squared': swap('errors.append(np.mean((np.ravel(predict(model, X[val])) - y[val]) ** 2))',
                                  'errors.append(np.sqrt(np.mean((np.ravel(predict(model, X[val])) - y[val]) ** 2)))'),
    },
    'bias_variance': {
        'ddof_1_variance': swap('P.var(axis=0)', 'P.var(axis=0, ddof=1)'),
        'squares_before_mean': swap('np.mean((P.mean(axis=0) - np.asarray(f_true, dtype=float)) ** 2)',
                                    'np.mean((P - np.asarray(f_true, dtype=float)) ** 2)'),
        'wrong_axis': swap(('P.mean(axis=0)', 'P.mean(axis=1)'), ('P.var(axis=0)', 'P.var(axis=1)'),
                           ('np.asarray(f_true, dtype=float)) ** 2', 'np.mean(f_true)) ** 2')),
        'bias_not_squared': swap('(P.mean(axis=0) - np.asarray(f_true, dtype=float)) ** 2',
                                 'np.abs(P.mean(axis=0) - np.asarray(f_true, dtype=float))'),
        'swapped': swap('return bias2, variance', 'return variance, bias2'),
        'std_for_variance': swap('P.var(axis=0)', 'P.std(axis=0)'),
    },
    'random_relu_features': {
        'no_sqrt_d_scaling': swap('n_features)) / np.sqrt(d)\n', 'n_features))\n'),
        'bias_drawn_first': swap(
            ('''    W = rng.standard_normal((d, n_features)) / np.sqrt(d)
    b = rng.uniform(-1.0, 1.0, n_features)''', '''    b = rng.uniform(-1.0, 1.0, n_features)
    W = rng.standard_normal((d, n_features)) / np.sqrt(d)'''),),
        'bias_in_zero_one': swap('rng.uniform(-1.0, 1.0, n_features)', 'rng.uniform(0.0, 1.0, n_features)'),
        'no_relu': swap('return np.maximum(X @ W + b, 0), W, b', 'return X @ W + b, W, b'),
        'divides_by_d': swap('n_features)) / np.sqrt(d)\n', 'n_features)) / d\n'),
    },
    'log_uniform_search': {
        'uniform_not_log': swap('float(np.exp(rng.uniform(np.log(space[name][0]), np.log(space[name][1]))))',
                                'float(rng.uniform(space[name][0], space[name][1]))'),
        'insertion_order': swap('for name in sorted(space)}', 'for name in space}'),
        'ties_keep_latest': swap('value < best_value', 'value <= best_value'),
        'keeps_the_worst': swap('value < best_value', 'value > best_value'),
        'no_value_error': swap('if not 0 < low < high:', 'if False:'),
        'log10_draws': swap('float(np.exp(rng.uniform(np.log(space[name][0]), np.log(space[name][1]))))',
                            'float(10 ** rng.uniform(np.log(space[name][0]), np.log(space[name][1])))'),
    },
    'grid_search': {
        'insertion_order': swap('names = sorted(grid)', 'names = list(grid)'),
        'ties_keep_latest': swap('value < best_value', 'value <= best_value'),
        'first_name_fastest': swap('itertools.product(*(grid[name] for name in names))',
                                   '(tuple(reversed(v)) for v in '
                                   'itertools.product(*(grid[name] for name in reversed(names))))'),
        'no_value_error': swap('if not grid or any(len(values) == 0 for values in grid.values()):', 'if False:'),
        'converts_to_float': swap('params = dict(zip(names, values))',
                                  'params = {n: float(v) if not isinstance(v, str) else v '
                                  'for n, v in zip(names, values)}'),
    },
}

# Mistakes in the pieces the integration checks use that must make them fail, not only their own cell.
INTEGRATION = {
    "test_integration_curve_fitting": ["kfold_indices/fold_leaks_into_training",
                                       "polynomial_features/degree_off_by_one", "cross_validate/fits_on_all_data"],
    "test_integration_bias_variance": ["bias_variance/ddof_1_variance", "bias_variance/squares_before_mean"],
    "test_integration_double_descent": ["ridge_fit/tiny_ridge_instead_of_pinv",
                                        "random_relu_features/bias_drawn_first"],
    "test_integration_memorisation": ["random_relu_features/no_sqrt_d_scaling"],
    "test_integration_search": ["log_uniform_search/uniform_not_log", "grid_search/insertion_order"],
}
