"""Plausible mistakes in the graded functions of ch10_optimization (format: ``__init__.py`` here)."""
from autograder.tests.mutants import swap

MUTANTS = {
    'smoothness_and_pl': {
        'mu_is_smallest_eigenvalue': swap('eigenvalues[eigenvalues > 1e-12 * L].min()', 'eigenvalues[0]'),
        'diagonal_entries': swap('np.linalg.eigvalsh(A)', 'np.sort(np.diag(A))'),
        'threshold_zero': swap('eigenvalues > 1e-12 * L', 'eigenvalues > 0'),
        'absolute_threshold': swap('eigenvalues > 1e-12 * L', 'eigenvalues > 1e-12'),
        'swapped': swap('return L, mu', 'return mu, L'),
        'frobenius_norm_for_L': swap('return L, mu', 'return float(np.linalg.norm(A)), mu'),
    },
    'gradient_descent': {
        'in_place_rows_alias': swap('theta = theta - lr * grad(theta)', 'theta -= lr * grad(theta)'),
        'mutates_theta0': swap(
            ('np.array(theta0, dtype=float)', 'theta0'),
            ('theta = theta - lr * grad(theta)', 'theta -= lr * grad(theta)'),
            ('trajectory = [theta]', 'trajectory = [theta.copy()]'),
            ('trajectory.append(theta)', 'trajectory.append(theta.copy())'),
        ),
        'no_theta0_row': swap('trajectory = [theta]', 'trajectory = []'),
        'one_step_short': swap('range(steps)', 'range(steps - 1)'),
        'ascent': swap('theta - lr * grad(theta)', 'theta + lr * grad(theta)'),
        'gradient_at_theta0_only': swap(
            ('trajectory = [theta]', 'g = grad(theta)\n    trajectory = [theta]'),
            ('lr * grad(theta)', 'lr * g'),
        ),
    },
    'steps_to_critical': {
        'no_factor_2': swap('.ceil(2 * L *', '.ceil(L *'),
        'eps_not_squared': swap('eps ** 2', 'eps'),
        'truncates': swap('np.ceil(2 * L * gap / eps ** 2)', '2 * L * gap / eps ** 2'),
        'rounds': swap('int(np.ceil(2 * L * gap / eps ** 2)', 'round(2 * L * gap / eps ** 2'),
        'plus_one': swap('np.ceil(2 * L * gap / eps ** 2))', '2 * L * gap / eps ** 2) + 1'),
    },
    'pl_rate_bound': {
        'exponent_T_plus_1': swap('.0 - mu / L) ** T', ' - mu / L) ** (T + 1)'),
        'exponential_form': swap('(1.0 - mu / L) ** T', 'np.exp(-mu * T / L)'),
        'square_root_rate': swap('.0 - mu / L', ' - np.sqrt(mu / L)'),
        'squared_rate': swap('.0 - mu / L) ** T', ' - mu / L) ** (2 * T)'),
    },
    'empirical_rate': {
        'average_rate': swap('return float(np.max(gaps[1:][kept] / gaps[:-1][kept]))',
                             'return float((gaps[-1] / gaps[0]) ** (1 / (len(gaps) - 1)))'),
        'inverted_ratio': swap('gaps[1:][kept] / gaps[:-1][kept]', 'gaps[:-1][kept] / gaps[1:][kept]'),
        'forgets_h_star': swap('dtype=float) - h_star', 'dtype=float)'),
        'no_threshold': swap('kept = gaps[:-1] > 1e-10 * gaps[0]', 'kept = slice(None)'),
        'absolute_threshold': swap('1e-10 * gaps[0]', '1e-10'),
        'smallest_ratio': swap('np.max(', 'np.min('),
        'first_step_only': swap('return float(np.max(gaps[1:][kept] / gaps[:-1][kept]))',
                                'return float(gaps[1] / gaps[0])'),
    },
    'heavy_ball': {
        'previous_starts_at_zero': swap('    previous = theta\n', '    previous = np.zeros_like(theta)\n'),
        'previous_aliases_theta': swap(
            ('    previous = theta\n', '    previous = theta.copy()\n'),
            ('trajectory = [theta]', 'trajectory = [theta.copy()]'),
            ('''theta, previous = theta - lr * grad(theta) + beta * (theta - previous), theta
        trajectory.append(theta)''',
             '''step = -lr * grad(theta) + beta * (theta - previous)
        previous = theta
        theta += step
        trajectory.append(theta.copy())'''),
        ),
        'gradient_at_look_ahead': swap(
            'theta - lr * grad(theta) + beta * (theta - previous)',
            'theta + beta * (theta - previous) - lr * grad(theta + beta * (theta - previous))'),
        'momentum_sign_flipped': swap('beta * (theta - previous)', 'beta * (previous - theta)'),
        'momentum_scaled_by_lr': swap('- lr * grad(theta) + beta * (theta - previous)',
                                      '- lr * (grad(theta) - beta * (theta - previous))'),
    },
    'nesterov': {
        'gradient_at_theta': swap('lr * grad(look_ahead)', 'lr * grad(theta)'),
        'returns_look_ahead_points': swap('trajectory.append(theta)',
                                          'trajectory.append(theta + beta * (theta - previous))'),
        'steps_from_theta': swap('look_ahead - lr', 'theta - lr'),
        'previous_starts_at_zero': swap('    previous = theta\n', '    previous = np.zeros_like(theta)\n'),
    },
    'polyak_parameters': {
        'beta_not_squared': swap('((sqrt_L - sqrt_mu) / (sqrt_L + sqrt_mu)) ** 2',
                                 '(sqrt_L - sqrt_mu) / (sqrt_L + sqrt_mu)'),
        'no_square_roots': swap(('np.sqrt(L), np.sqrt(mu)', 'L, mu'),
                                ('4.0 / (sqrt_L + sqrt_mu) ** 2', '4.0 / (sqrt_L + sqrt_mu)')),
        'swapped': swap('return float(lr), float(beta)', 'return float(beta), float(lr)'),
        'gd_step_size': swap('4.0 / (sqrt_L + sqrt_mu) ** 2', '2.0 / (L + mu)'),
    },
    'adagrad': {
        'delta_outside_sqrt': swap('np.sqrt(gamma + delta)', '(np.sqrt(gamma) + delta)'),
        'accumulates_after_step': swap(
            '''gamma = gamma + g ** 2
        theta = theta - lr * g / np.sqrt(gamma + delta)''',
            '''theta = theta - lr * g / np.sqrt(gamma + delta)
        gamma = gamma + g ** 2'''),
        'no_accumulation': swap('gamma = gamma + g ** 2', 'gamma = g ** 2'),
        'one_accumulator_for_all_coordinates': swap(('np.zeros_like(theta)', '0.0'), ('g ** 2', 'float(g @ g)')),
        'no_square_root': swap('np.sqrt(gamma + delta)', '(gamma + delta)'),
    },
    'minibatch_sgd': {
        'divides_by_batch_size': swap('/ len(batch)', '/ batch_size'),
        'drops_last_batch': swap('range(0, N, batch_size)', 'range(0, N - batch_size + 1, batch_size)'),
        'one_permutation_for_all_epochs': swap(
            '''    for _ in range(epochs):
        perm = rng.permutation(N)
''',
            '''    perm = rng.permutation(N)
    for _ in range(epochs):
'''),
        'loss_before_step': swap(
            '''            theta = theta - lr * Xb.T @ (Xb @ theta - yb) / len(batch)
            residual = X @ theta - y
            losses.append(0.5 * np.mean(residual ** 2))''',
            '''            residual = X @ theta - y
            losses.append(0.5 * np.mean(residual ** 2))
            theta = theta - lr * Xb.T @ (Xb @ theta - yb) / len(batch)'''),
        'loss_on_the_batch': swap('residual = X @ theta - y', 'residual = Xb @ theta - yb'),
        'sampling_with_replacement': swap('perm[start:start + batch_size]',
                                          'rng.integers(0, N, size=min(batch_size, N - start))'),
        'loss_without_half': swap('0.5 * np.mean', 'np.mean'),
    },
}

# Mistakes in the pieces the integration check uses that must make it fail, not only their own cell.
INTEGRATION = {
    "test_integration_heavy_ball": ["gradient_descent/one_step_short", "gradient_descent/gradient_at_theta0_only",
                                    "heavy_ball/previous_starts_at_zero", "heavy_ball/momentum_scaled_by_lr",
                                    "heavy_ball/gradient_at_look_ahead", "polyak_parameters/no_square_roots"],
    "test_integration_pl_rate": ["empirical_rate/inverted_ratio", "pl_rate_bound/square_root_rate",
                                 "gradient_descent/ascent"],
}
