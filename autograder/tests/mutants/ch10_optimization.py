"""Plausible mistakes in the graded functions of ch10_optimization: each must make its test cell fail.

Written as edits of the reference solutions (``swap``) or, where an edit cannot say it, as the
whole solution cell; the format and the loader are in autograder/tests/mutants/__init__.py.
"""
from autograder.tests.mutants import swap

MUTANTS = {
    'smoothness_and_pl': {
        'mu_is_smallest_eigenvalue': '''
import numpy as np
def smoothness_and_pl(A):
    ev = np.linalg.eigvalsh(A)
    return float(ev[-1]), float(ev[0])
''',
        'diagonal_entries': '''
import numpy as np
def smoothness_and_pl(A):
    diag = np.diag(A)
    return float(diag.max()), float(diag[diag > 1e-12 * diag.max()].min())
''',
        'threshold_zero': '''
import numpy as np
def smoothness_and_pl(A):
    ev = np.linalg.eigvalsh(A)
    return float(ev[-1]), float(ev[ev > 0].min())
''',
        'absolute_threshold': '''
import numpy as np
def smoothness_and_pl(A):
    ev = np.linalg.eigvalsh(A)
    return float(ev[-1]), float(ev[ev > 1e-12].min())
''',
        'swapped': '''
import numpy as np
def smoothness_and_pl(A):
    ev = np.linalg.eigvalsh(A)
    L = ev[-1]
    return float(ev[ev > 1e-12 * L].min()), float(L)
''',
        'frobenius_norm_for_L': '''
import numpy as np
def smoothness_and_pl(A):
    ev = np.linalg.eigvalsh(A)
    L = np.linalg.norm(A)
    return float(L), float(ev[ev > 1e-12 * ev[-1]].min())
''',
    },
    'gradient_descent': {
        'in_place_rows_alias': '''
import numpy as np
def gradient_descent(grad, theta0, lr, steps):
    theta = np.array(theta0, dtype=float)
    path = [theta]
    for _ in range(steps):
        theta -= lr * grad(theta)
        path.append(theta)
    return np.array(path)
''',
        'mutates_theta0': '''
import numpy as np
def gradient_descent(grad, theta0, lr, steps):
    theta = theta0
    path = [theta.copy()]
    for _ in range(steps):
        theta -= lr * grad(theta)
        path.append(theta.copy())
    return np.array(path)
''',
        'no_theta0_row': swap(
            ('trajectory = [theta',
             'path = ['),
            ('''trajectory.append(theta)
    return np.array(trajectory''',
             '''path.append(theta)
    return np.array(path'''),
        ),
        'one_step_short': swap(
            ('''trajectory = [theta]
    for _ in range(steps''',
             '''path = [theta]
    for _ in range(steps - 1'''),
            ('''trajectory.append(theta)
    return np.array(trajectory''',
             '''path.append(theta)
    return np.array(path'''),
        ),
        'ascent': '''
import numpy as np
def gradient_descent(grad, theta0, lr, steps):
    theta = np.array(theta0, dtype=float)
    path = [theta]
    for _ in range(steps):
        theta = theta + lr * grad(theta)
        path.append(theta)
    return np.array(path)
''',
        'gradient_at_theta0_only': '''
import numpy as np
def gradient_descent(grad, theta0, lr, steps):
    theta = np.array(theta0, dtype=float)
    g = grad(theta)
    path = [theta]
    for _ in range(steps):
        theta = theta - lr * g
        path.append(theta)
    return np.array(path)
''',
    },
    'steps_to_critical': {
        'no_factor_2': swap('.ceil(2 * L *', '.ceil(L *'),
        'eps_not_squared': '''
import numpy as np
def steps_to_critical(L, gap, eps):
    return int(np.ceil(2 * L * gap / eps))
''',
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
    'heavy_ball': {
        'previous_starts_at_zero': swap(
            ('''theta
    trajectory''',
             '''np.zeros_like(theta)
    path'''),
            ('''trajectory.append(theta)
    return np.array(trajectory''',
             '''path.append(theta)
    return np.array(path'''),
        ),
        'previous_aliases_theta': '''
import numpy as np
def heavy_ball(grad, theta0, lr, beta, steps):
    theta = np.array(theta0, dtype=float)
    previous = theta.copy()
    path = [theta.copy()]
    for _ in range(steps):
        step = -lr * grad(theta) + beta * (theta - previous)
        previous = theta
        theta += step
        path.append(theta.copy())
    return np.array(path)
''',
        'gradient_at_look_ahead': '''
import numpy as np
def heavy_ball(grad, theta0, lr, beta, steps):
    theta = np.array(theta0, dtype=float)
    previous = theta
    path = [theta]
    for _ in range(steps):
        chi = theta + beta * (theta - previous)
        theta, previous = chi - lr * grad(chi), theta
        path.append(theta)
    return np.array(path)
''',
        'momentum_sign_flipped': '''
import numpy as np
def heavy_ball(grad, theta0, lr, beta, steps):
    theta = np.array(theta0, dtype=float)
    previous = theta
    path = [theta]
    for _ in range(steps):
        theta, previous = theta - lr * grad(theta) + beta * (previous - theta), theta
        path.append(theta)
    return np.array(path)
''',
        'momentum_scaled_by_lr': '''
import numpy as np
def heavy_ball(grad, theta0, lr, beta, steps):
    theta = np.array(theta0, dtype=float)
    previous = theta
    path = [theta]
    for _ in range(steps):
        theta, previous = theta - lr * (grad(theta) - beta * (theta - previous)), theta
        path.append(theta)
    return np.array(path)
''',
    },
    'nesterov': {
        'gradient_at_theta': '''
import numpy as np
def nesterov(grad, theta0, lr, beta, steps):
    theta = np.array(theta0, dtype=float)
    previous = theta
    path = [theta]
    for _ in range(steps):
        chi = theta + beta * (theta - previous)
        theta, previous = chi - lr * grad(theta), theta
        path.append(theta)
    return np.array(path)
''',
        'returns_look_ahead_points': '''
import numpy as np
def nesterov(grad, theta0, lr, beta, steps):
    theta = np.array(theta0, dtype=float)
    previous = theta
    path = [theta]
    for _ in range(steps):
        chi = theta + beta * (theta - previous)
        theta, previous = chi - lr * grad(chi), theta
        path.append(theta + beta * (theta - previous))
    return np.array(path)
''',
        'steps_from_theta': '''
import numpy as np
def nesterov(grad, theta0, lr, beta, steps):
    theta = np.array(theta0, dtype=float)
    previous = theta
    path = [theta]
    for _ in range(steps):
        chi = theta + beta * (theta - previous)
        theta, previous = theta - lr * grad(chi), theta
        path.append(theta)
    return np.array(path)
''',
        'previous_starts_at_zero': '''
import numpy as np
def nesterov(grad, theta0, lr, beta, steps):
    theta = np.array(theta0, dtype=float)
    previous = np.zeros_like(theta)
    path = [theta]
    for _ in range(steps):
        chi = theta + beta * (theta - previous)
        theta, previous = chi - lr * grad(chi), theta
        path.append(theta)
    return np.array(path)
''',
    },
    'polyak_parameters': {
        'beta_not_squared': '''
import numpy as np
def polyak_parameters(L, mu):
    return 4 / (np.sqrt(L) + np.sqrt(mu)) ** 2, (np.sqrt(L) - np.sqrt(mu)) / (np.sqrt(L) + np.sqrt(mu))
''',
        'no_square_roots': '''
def polyak_parameters(L, mu):
    return 4 / (L + mu), ((L - mu) / (L + mu)) ** 2
''',
        'swapped': '''
import numpy as np
def polyak_parameters(L, mu):
    sL, sm = np.sqrt(L), np.sqrt(mu)
    return ((sL - sm) / (sL + sm)) ** 2, 4 / (sL + sm) ** 2
''',
        'gd_step_size': '''
import numpy as np
def polyak_parameters(L, mu):
    sL, sm = np.sqrt(L), np.sqrt(mu)
    return 2 / (L + mu), ((sL - sm) / (sL + sm)) ** 2
''',
    },
    'adagrad': {
        'delta_outside_sqrt': '''
import numpy as np
def adagrad(grad, theta0, lr, steps, delta=1e-8):
    theta = np.array(theta0, dtype=float)
    gamma = np.zeros_like(theta)
    path = [theta]
    for _ in range(steps):
        g = grad(theta)
        gamma = gamma + g ** 2
        theta = theta - lr * g / (np.sqrt(gamma) + delta)
        path.append(theta)
    return np.array(path)
''',
        'accumulates_after_step': '''
import numpy as np
def adagrad(grad, theta0, lr, steps, delta=1e-8):
    theta = np.array(theta0, dtype=float)
    gamma = np.zeros_like(theta)
    path = [theta]
    for _ in range(steps):
        g = grad(theta)
        theta = theta - lr * g / np.sqrt(gamma + delta)
        gamma = gamma + g ** 2
        path.append(theta)
    return np.array(path)
''',
        'no_accumulation': swap(
            ('''gamma = np.zeros_like(theta)
    trajectory''',
             'path'),
            ('''gamma = gamma + g ** 2
        theta = theta - lr * g / np.sqrt(gamma + delta)
        trajectory.append(theta)
    return np.array(trajectory''',
             '''theta = theta - lr * g / np.sqrt(g ** 2 + delta)
        path.append(theta)
    return np.array(path'''),
        ),
        'one_accumulator_for_all_coordinates': swap(
            ('''np.zeros_like(theta)
    trajectory''',
             '''0.0
    path'''),
            ('g ** 2',
             'float(g @ g)'),
            ('''trajectory.append(theta)
    return np.array(trajectory''',
             '''path.append(theta)
    return np.array(path'''),
        ),
        'no_square_root': '''
import numpy as np
def adagrad(grad, theta0, lr, steps, delta=1e-8):
    theta = np.array(theta0, dtype=float)
    gamma = np.zeros_like(theta)
    path = [theta]
    for _ in range(steps):
        g = grad(theta)
        gamma = gamma + g ** 2
        theta = theta - lr * g / (gamma + delta)
        path.append(theta)
    return np.array(path)
''',
    },
    'minibatch_sgd': {
        'divides_by_batch_size': '''
import numpy as np
def minibatch_sgd(X, y, theta0, lr, batch_size, epochs, rng):
    theta, losses = np.array(theta0, dtype=float), []
    for _ in range(epochs):
        perm = rng.permutation(len(y))
        for s in range(0, len(y), batch_size):
            b = perm[s:s + batch_size]
            theta = theta - lr * X[b].T @ (X[b] @ theta - y[b]) / batch_size
            losses.append(0.5 * np.mean((X @ theta - y) ** 2))
    return np.array(losses)
''',
        'drops_last_batch': '''
import numpy as np
def minibatch_sgd(X, y, theta0, lr, batch_size, epochs, rng):
    theta, losses = np.array(theta0, dtype=float), []
    for _ in range(epochs):
        perm = rng.permutation(len(y))
        for s in range(0, len(y) - batch_size + 1, batch_size):
            b = perm[s:s + batch_size]
            theta = theta - lr * X[b].T @ (X[b] @ theta - y[b]) / len(b)
            losses.append(0.5 * np.mean((X @ theta - y) ** 2))
    return np.array(losses)
''',
        'one_permutation_for_all_epochs': '''
import numpy as np
def minibatch_sgd(X, y, theta0, lr, batch_size, epochs, rng):
    theta, losses = np.array(theta0, dtype=float), []
    perm = rng.permutation(len(y))
    for _ in range(epochs):
        for s in range(0, len(y), batch_size):
            b = perm[s:s + batch_size]
            theta = theta - lr * X[b].T @ (X[b] @ theta - y[b]) / len(b)
            losses.append(0.5 * np.mean((X @ theta - y) ** 2))
    return np.array(losses)
''',
        'loss_before_step': '''
import numpy as np
def minibatch_sgd(X, y, theta0, lr, batch_size, epochs, rng):
    theta, losses = np.array(theta0, dtype=float), []
    for _ in range(epochs):
        perm = rng.permutation(len(y))
        for s in range(0, len(y), batch_size):
            b = perm[s:s + batch_size]
            losses.append(0.5 * np.mean((X @ theta - y) ** 2))
            theta = theta - lr * X[b].T @ (X[b] @ theta - y[b]) / len(b)
    return np.array(losses)
''',
        'loss_on_the_batch': '''
import numpy as np
def minibatch_sgd(X, y, theta0, lr, batch_size, epochs, rng):
    theta, losses = np.array(theta0, dtype=float), []
    for _ in range(epochs):
        perm = rng.permutation(len(y))
        for s in range(0, len(y), batch_size):
            b = perm[s:s + batch_size]
            theta = theta - lr * X[b].T @ (X[b] @ theta - y[b]) / len(b)
            losses.append(0.5 * np.mean((X[b] @ theta - y[b]) ** 2))
    return np.array(losses)
''',
        'sampling_with_replacement': '''
import numpy as np
def minibatch_sgd(X, y, theta0, lr, batch_size, epochs, rng):
    theta, losses = np.array(theta0, dtype=float), []
    N = len(y)
    for _ in range(epochs):
        for s in range(0, N, batch_size):
            b = rng.integers(0, N, size=min(batch_size, N - s))
            theta = theta - lr * X[b].T @ (X[b] @ theta - y[b]) / len(b)
            losses.append(0.5 * np.mean((X @ theta - y) ** 2))
    return np.array(losses)
''',
        'loss_without_half': '''
import numpy as np
def minibatch_sgd(X, y, theta0, lr, batch_size, epochs, rng):
    theta, losses = np.array(theta0, dtype=float), []
    for _ in range(epochs):
        perm = rng.permutation(len(y))
        for s in range(0, len(y), batch_size):
            b = perm[s:s + batch_size]
            theta = theta - lr * X[b].T @ (X[b] @ theta - y[b]) / len(b)
            losses.append(np.mean((X @ theta - y) ** 2))
    return np.array(losses)
''',
    },
}

# Mistakes in the pieces the integration check uses that must make it fail, not only their own cell.
INTEGRATION = {
    "test_integration_heavy_ball": ["gradient_descent/one_step_short", "gradient_descent/gradient_at_theta0_only",
                                    "heavy_ball/previous_starts_at_zero", "heavy_ball/momentum_scaled_by_lr",
                                    "heavy_ball/gradient_at_look_ahead", "polyak_parameters/no_square_roots"],
}
