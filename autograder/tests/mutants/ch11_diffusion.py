"""Plausible mistakes in the graded functions of ch11_diffusion (format: ``__init__.py`` here)."""
from autograder.tests.mutants import swap

MUTANTS = {
    'linear_betas': {
        'one_extra_point_dropped': swap('np.linspace(beta_1, beta_T, T, dtype=float)',
                                        'np.linspace(beta_1, beta_T, T + 1, dtype=float)[1:]'),
        'arange_steps': swap('np.linspace(beta_1, beta_T, T, dtype=float)',
                             'np.arange(T) * (beta_T - beta_1) / T + beta_1'),
        'defaults_ignored': swap('np.linspace(beta_1, beta_T, T, dtype=float)', 'np.linspace(1e-4, 0.02, T)'),
        'float32': swap('dtype=float', 'dtype=np.float32'),
    },
    'alpha_bars': {
        'shifted_by_one_step': swap('return np.cumprod(1.0 - np.asarray(betas, dtype=float))',
                                    'alphas = 1.0 - np.asarray(betas, dtype=float)\n'
                                    '    return np.concatenate([[1.0], np.cumprod(alphas)[:-1]])'),
        'product_of_betas': swap('np.cumprod(1.0 - np.asarray(betas, dtype=float))',
                                 '1.0 - np.cumprod(np.asarray(betas, dtype=float))'),
        'sum_not_product': swap('np.cumprod(1.0 - np.asarray(betas, dtype=float))',
                                '1.0 - np.cumsum(np.asarray(betas, dtype=float))'),
        'total_product_only': swap('np.cumprod(1.0 - np.asarray(betas, dtype=float))',
                                   'np.full(len(betas), np.prod(1.0 - np.asarray(betas, dtype=float)))'),
    },
    'q_sample': {
        'missing_square_roots': swap('np.sqrt(a) * x0 + np.sqrt(1.0 - a) * eps', 'a * x0 + (1.0 - a) * eps'),
        'no_broadcast_over_rows': swap(
            '    a = a.reshape(a.shape + (1,) * (x0.ndim - a.ndim))  # (B, 1, ..., 1) for a per-example t\n', ''),
        'previous_step': swap('np.asarray(abar, dtype=float)[np.asarray(t)]',
                              'np.concatenate([[1.0], np.asarray(abar, dtype=float)])[np.asarray(t)]'),
        'one_noise_for_the_batch': swap('    eps = rng.standard_normal(x0.shape)\n',
                                        '    eps = rng.standard_normal(x0.shape[1:])\n'),
        'missing_noise_root_only': swap('np.sqrt(1.0 - a) * eps', '(1.0 - a) * eps'),
        # issue 42: an in-place update of the caller's x0 (the values returned are right)
        'modifies_x0_in_place': swap('    return np.sqrt(a) * x0 + np.sqrt(1.0 - a) * eps, eps\n',
                                     '    x0 *= np.sqrt(a)\n    x0 += np.sqrt(1.0 - a) * eps\n    return x0, eps\n'),
    },
    'cosine_alpha_bars': {
        'not_clipped': swap('np.minimum(1.0 - abar / previous, 0.999)', '1.0 - abar / previous'),
        'abar_not_recomputed': swap('return betas, np.cumprod(1.0 - betas)', 'return betas, abar'),
        'time_t_not_t_plus_1': swap('abar = f[1:] / f[0]', 'abar = f[:-1] / f[0]'),
        'offset_ignored': swap('(np.arange(T + 1) / T + s) / (1 + s)', 'np.arange(T + 1) / T'),
        'not_normalised_by_f0': swap('abar = f[1:] / f[0]', 'abar = f[1:]'),
    },
    'gaussian_product': {
        'variances_added': swap('var = v1 * v2 / total', 'var = v1 + v2'),
        'mean_not_weighted_by_precision': swap('mean = (m1 * v2 + m2 * v1) / total', 'mean = (m1 + m2) / 2'),
        'weighted_by_variances': swap('mean = (m1 * v2 + m2 * v1) / total', 'mean = (m1 * v1 + m2 * v2) / total'),
        'precision_returned_as_variance': swap('var = v1 * v2 / total', 'var = 1 / v1 + 1 / v2'),
        # the precision form, right for positive variances: a point mass (variance 0) gives nan
        'divides_by_a_zero_variance': swap(
            ('    mean = (m1 * v2 + m2 * v1) / total\n    var = v1 * v2 / total\n',
             '    with np.errstate(divide="ignore", invalid="ignore"):\n'
             '        var = 1 / (1 / v1 + 1 / v2)\n'
             '        mean = var * (m1 / v1 + m2 / v2)\n')),
        'var_not_broadcast': swap('np.broadcast_to(var, shape).copy()', 'var'),
    },
    'q_posterior': {
        'abar_prev_wraps_at_t0': swap('abar_prev = np.concatenate([[1.0], abar[:-1]])', 'abar_prev = np.roll(abar, 1)'),
        'likelihood_mean_not_rescaled': swap('gaussian_product(xt / np.sqrt(alpha),', 'gaussian_product(xt,'),
        'likelihood_variance_beta': swap('beta / alpha, np.sqrt(a_prev)', 'beta, np.sqrt(a_prev)'),
        'likelihood_mean_times_sqrt_alpha': swap('gaussian_product(xt / np.sqrt(alpha),',
                                                 'gaussian_product(np.sqrt(alpha) * xt,'),
        'prior_at_step_t': swap(('beta, a_prev = (v[np.asarray(t)].reshape(shape) for v in (betas, abar_prev))',
                                 'beta, a_prev = (v[np.asarray(t)].reshape(shape) for v in (betas, abar))')),
        'prior_mean_not_scaled': swap('np.sqrt(a_prev) * x0, 1.0 - a_prev)', 'x0, 1.0 - a_prev)'),
        # issue 42: an int t only (a per-example t is not spread over the rows, or meets a Python `if`)
        'no_broadcast_over_rows': swap('.reshape(shape) for v in', ' for v in'),
        'python_if_at_t0': swap('    abar = np.cumprod(1.0 - betas)\n',
                                '    abar = np.cumprod(1.0 - betas)\n'
                                '    if t == 0:\n'
                                '        return x0.copy(), np.zeros_like(x0)\n'),
    },
    'predict_x0': {
        'missing_square_root': swap('np.sqrt(1.0 - a) * eps_hat) / np.sqrt(a)', '(1.0 - a) * eps_hat) / np.sqrt(a)'),
        'not_divided': swap('(xt - np.sqrt(1.0 - a) * eps_hat) / np.sqrt(a)', 'xt - np.sqrt(1.0 - a) * eps_hat'),
        'noise_added': swap('(xt - np.sqrt(1.0 - a) * eps_hat)', '(xt + np.sqrt(1.0 - a) * eps_hat)'),
        'divided_by_abar': swap('/ np.sqrt(a)', '/ a'),
    },
    'eps_loss': {
        'sum_not_mean': swap('np.mean(', 'np.sum('),
        'per_row_mean': swap(('float(np.mean(', 'np.mean('), (' ** 2))', ' ** 2, axis=-1)')),
        'absolute_error': swap('(np.asarray(eps_hat, dtype=float) - np.asarray(eps, dtype=float)) ** 2',
                               'np.abs(np.asarray(eps_hat, dtype=float) - np.asarray(eps, dtype=float))'),
        'root_mean_square': swap(('float(np.mean(', 'float(np.sqrt(np.mean('), (' ** 2))', ' ** 2)))')),
    },
    'ddpm_step': {
        'noise_at_t0': swap('    if t > 0:\n', '    if t >= 0:\n'),
        'missing_square_root': swap('beta / np.sqrt(1.0 - abar) * eps_hat', 'beta / (1.0 - abar) * eps_hat'),
        'abar_of_previous_step': swap('np.prod(1.0 - betas[:t + 1])', 'np.prod(1.0 - betas[:t])'),
        'noise_std_beta': swap('mean + np.sqrt(beta) * rng', 'mean + beta * rng'),
        'not_divided_by_sqrt_alpha': swap(') / np.sqrt(1.0 - beta)', ')'),
    },
    'ddpm_sample': {
        'forward_order': swap('range(len(betas) - 1, -1, -1)', 'range(len(betas))'),
        'skips_t0': swap('range(len(betas) - 1, -1, -1)', 'range(len(betas) - 1, 0, -1)'),
        'model_sees_t_plus_1': swap('eps_model(x, t), betas', 'eps_model(x, t + 1), betas'),
        'starts_at_zero': swap('    x = rng.standard_normal(shape)\n', '    x = np.zeros(shape)\n'),
    },
    'ddim_step': {
        'prev_minus_one_wraps': swap('np.append(np.asarray(abar, dtype=float), 1.0)[np.asarray(t_prev)]',
                                     'np.asarray(abar, dtype=float)[np.asarray(t_prev)]'),
        'reuses_abar_t': swap(
            ('a_prev = np.append(np.asarray(abar, dtype=float), 1.0)[np.asarray(t_prev)]',
             'a_prev = np.append(np.asarray(abar, dtype=float), 1.0)[np.asarray(t)]'),
        ),
        'missing_square_roots': swap('np.sqrt(a_prev) * x0_hat + np.sqrt(1.0 - a_prev) * eps_hat',
                                     'a_prev * x0_hat + (1.0 - a_prev) * eps_hat'),
        'returns_x0_hat': swap('return np.sqrt(a_prev) * x0_hat + np.sqrt(1.0 - a_prev) * eps_hat', 'return x0_hat'),
        # issue 42: an int t_prev only
        'python_if_for_minus_one': swap('np.append(np.asarray(abar, dtype=float), 1.0)[np.asarray(t_prev)]',
                                        'np.asarray(1.0 if t_prev == -1 else np.asarray(abar, dtype=float)[t_prev])'),
        'prev_not_broadcast': swap(
            '    a_prev = a_prev.reshape(a_prev.shape + (1,) * (x0_hat.ndim - a_prev.ndim))\n', ''),
    },
    'gaussian_score': {
        'sign_flipped': swap('return -(x - mean) / var', 'return (x - mean) / var'),
        'divided_by_std': swap('return -(x - mean) / var', 'return -(x - mean) / np.sqrt(var)'),
        'not_divided_by_var': swap('return -(x - mean) / var', 'return -(x - mean)'),
        'var_squared': swap('return -(x - mean) / var', 'return -(x - mean) / var ** 2'),
        'halved': swap('return -(x - mean) / var', 'return -(x - mean) / (2 * var)'),
    },
    'score_from_eps': {
        'sign_flipped': swap('return -eps_hat / np.sqrt(1.0 - a)', 'return eps_hat / np.sqrt(1.0 - a)'),
        'missing_square_root': swap('np.sqrt(1.0 - a)', '(1.0 - a)'),
        'sqrt_abar': swap('np.sqrt(1.0 - a)', 'np.sqrt(a)'),
        'not_divided': swap('return -eps_hat / np.sqrt(1.0 - a)', 'return -eps_hat'),
        'no_broadcast_over_rows': swap('    a = a.reshape(a.shape + (1,) * (eps_hat.ndim - a.ndim))\n', ''),
    },
    'gaussian_mixture_score': {
        'not_stabilised': swap('    logits = logits - logits.max(axis=1, keepdims=True)\n', ''),
        'sigma_not_squared': swap('return (w @ means - x) / sigma ** 2', 'return (w @ means - x) / sigma'),
        'weights_over_points': swap('w = w / w.sum(axis=1, keepdims=True)', 'w = w / w.sum(axis=0, keepdims=True)'),
        'nearest_mean_only': swap('w = w / w.sum(axis=1, keepdims=True)',
                                  'w = (logits == logits.max(axis=1, keepdims=True)).astype(float)'),
        'sign_flipped': swap('(w @ means - x)', '(x - w @ means)'),
        # issue 42: the softmax shifted by the smallest logit overflows far from the means
        'shifted_by_smallest_logit': swap('logits - logits.max(axis=1, keepdims=True)',
                                          'logits - logits.min(axis=1, keepdims=True)'),
    },
    'langevin_step': {
        'noise_without_factor_2': swap('np.sqrt(2.0 * step)', 'np.sqrt(step)'),
        'noise_not_square_root': swap('np.sqrt(2.0 * step)', '2.0 * step'),
        'half_step_drift': swap('x + step * np.asarray', 'x + 0.5 * step * np.asarray'),
        'no_noise': swap(' + np.sqrt(2.0 * step) * rng.standard_normal(x.shape)', ''),
    },
}

# Each must also make the integration check lose points (the first through `make grade`).
INTEGRATION = {
    "test_integration_ring": ["ddpm_step/noise_at_t0", "q_sample/missing_square_roots",
                              "alpha_bars/shifted_by_one_step"],
    # the digits check catches gross mistakes only: a schedule shifted by one step (65 % confident) or a
    # q_sample missing only the noise's square root (58 %) pass it; the ring check above catches them
    "test_integration_digits": ["q_sample/missing_square_roots", "ddpm_sample/forward_order"],
}
