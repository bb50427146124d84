"""Plausible mistakes in the graded functions of ch08_tricks (format: ``__init__.py`` here)."""
from autograder.tests.mutants import swap
from autograder.tests.mutants.ch06_transformers import MUTANTS as CH06

MUTANTS = {
    'init_weights': {
        'transposed_shape': swap('0.0, std, size=(fan_out, fan_in)', '0.0, std, size=(fan_in, fan_out)'),
        'xavier_without_2': swap('np.sqrt(2.0 / (fan_in + fan_out))', 'np.sqrt(1.0 / (fan_in + fan_out))'),
        'he_uses_fan_out': swap('np.sqrt(2.0 / fan_in)', 'np.sqrt(2.0 / fan_out)'),
        'variance_as_std': swap('rng.normal(0.0, std, size', 'rng.normal(0.0, std ** 2, size'),
        'unknown_scheme_falls_back_to_lecun': swap('raise ValueError(f"unknown initialisation scheme {scheme!r}")',
                                                   'std = 1.0 / np.sqrt(fan_in)'),
        'uniform_with_the_right_std': swap('return rng.normal(0.0, std, size=(fan_out, fan_in))',
                                           '''a = np.sqrt(3) * std
    return rng.uniform(-a, a, size=(fan_out, fan_in))'''),
    },
    'orthogonal_init': {
        'no_sign_fix': swap(' * np.sign(np.diag(R))', ''),
        'rows_scaled': swap('np.sign(np.diag(R))', 'np.sign(np.diag(R))[:, None]'),
        'svd_instead_of_qr': swap('''Q, R = np.linalg.qr(A)
    return Q * np.sign(np.diag(R))''', '''U, s, Vt = np.linalg.svd(A)
    return U'''),
        'transposed': swap('return Q * np.sign(np.diag(R))', 'return (Q * np.sign(np.diag(R))).T'),
        'gram_matrix_not_orthogonal': swap(
            '''Q, R = np.linalg.qr(A)
    return Q * np.sign(np.diag(R)''',
            'return A / np.linalg.norm(A, axis=0'),
    },
    'activation_stds': {
        'std_before_activation': swap('''h = act(h @ W.T)
        stds[layer] = h.std()''', '''z = h @ W.T
        stds[layer] = z.std()
        h = act(z)'''),
        'h_at_W_not_transposed': swap('        h = act(h @ W.T)\n', '        h = act(h @ W)\n'),
        'weights_drawn_before_input': swap(
            ('    h = rng.standard_normal((n_samples, width))\n',
             '    Ws = [init_weights(width, width, scheme, rng) for _ in range(depth)]\n'
             '    h = rng.standard_normal((n_samples, width))\n'),
            ('        W = init_weights(width, width, scheme, rng)\n', '        W = Ws[layer]\n'),
        ),
        'std_per_unit_averaged': swap('stds[layer] = h.std()', 'stds[layer] = h.std(axis=0).mean()'),
        'includes_input_std': swap(('stds = np.empty(depth)', 'stds = np.empty(depth + 1)\n    stds[0] = h.std()'),
                                   ('stds[layer] = h.std()', 'stds[layer + 1] = h.std()')),
        'ignores_n_samples': swap('rng.standard_normal((n_samples, width))\n', 'rng.standard_normal((1000, width))\n'),
    },
    'dropout': {
        'no_rescaling': swap('x / (1.0 - p)', 'x'),
        'keeps_with_probability_p': swap('rng.random(x.shape) >= p\n', 'rng.random(x.shape) < p\n'),
        'scales_by_1_minus_p': swap('x / (1.0 - p)', 'x * (1.0 - p)'),
        'binomial_mask': swap('''    keep = rng.random(x.shape) >= p
    return np.where(keep, x / (1.0 - p), 0.0)''', '    return x * rng.binomial(1, 1 - p, size=x.shape) / (1.0 - p)'),
        'draws_in_eval_mode': swap(
            ('    if not training:\n', '    keep = rng.random(x.shape) >= p\n    if not training:\n'),
            ('    keep = rng.random(x.shape) >= p\n    return', '    return'),
        ),
        'mask_in_place': swap('''    keep = rng.random(x.shape) >= p
    return np.where(keep, x / (1.0 - p), 0.0)''', '''    x[rng.random(x.shape) < p] = 0.0
    x /= (1.0 - p)
    return x'''),
        'rescales_in_eval_mode': swap('np.array(x, dtype=float, copy=True)', 'x * (1.0 - p)'),
        'returns_x_itself_in_eval': swap('np.array(x, dtype=float, copy=True)', 'x'),
    },
    'batchnorm_forward': {
        'biased_running_var': swap(' * n / (n - 1)', ''),
        'normalises_with_unbiased_var': swap(('x.var(axis=0)', 'x.var(axis=0, ddof=1)'), (' * n / (n - 1)', '')),
        'momentum_reversed': swap(
            ('(1 - momentum) * running_mean + momentum * mean', 'momentum * running_mean + (1 - momentum) * mean'),
            ('(1 - momentum) * running_var + momentum * var', 'momentum * running_var + (1 - momentum) * var'),
        ),
        'batch_stats_in_eval': swap('mean, var = running_mean, running_var',
                                    'mean, var = x.mean(axis=0), x.var(axis=0)'),
        'eps_outside_sqrt': swap('np.sqrt(var + eps)', '(np.sqrt(var) + eps)'),
        'running_stats_updated_in_place': swap(
            ('''        new_mean = (1 - momentum) * running_mean + momentum * mean
        new_var = (1 - momentum) * running_var + momentum * var * n / (n - 1)''',
             '''        running_mean *= 1 - momentum
        running_mean += momentum * mean
        running_var *= 1 - momentum
        running_var += momentum * var * n / (n - 1)
        new_mean, new_var = running_mean, running_var'''),
            ('running_mean.copy(), running_var.copy()', 'running_mean, running_var'),
        ),
        # a different implementation (torch), nothing of the reference's to edit: whole cell
        'uses_torch': '''
import numpy as np
import torch
def batchnorm_forward(x, gamma, beta, running_mean, running_var, training, momentum=0.1, eps=1e-5):
    rm, rv = torch.tensor(running_mean), torch.tensor(running_var)
    y = torch.nn.functional.batch_norm(torch.tensor(x), rm, rv, torch.tensor(gamma), torch.tensor(beta),
                                       training=training, momentum=momentum, eps=eps)
    return y.numpy(), rm.numpy(), rv.numpy()
''',
        'eval_returns_the_running_arrays': swap(
            '''.copy(), running_var.copy()
    y = gamma * (x - mean) / np.sqrt(var + eps) + beta
    return y''',
            ''', running_var
    return gamma * (x - mean) / np.sqrt(var + eps) + beta'''),
    },
    'layernorm_forward': {
        'unbiased_var': swap('x.var(axis=-1, keepdims=True)', 'x.var(axis=-1, ddof=1, keepdims=True)'),
        'eps_outside_sqrt': swap('np.sqrt(var + eps)', '(np.sqrt(var) + eps)'),
        'axis_1_only_for_2d': swap(
            '''mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta''',
            '''x2 = np.atleast_2d(x)
    mean, var = x2.mean(1, keepdims=True), x2.var(1, keepdims=True)
    return (gamma * (x2 - mean) / np.sqrt(var + eps) + beta).reshape(x.shape)'''),
        'normalises_over_batch_axis': swap(('x.mean(axis=-1', 'x.mean(axis=0'), ('x.var(axis=-1', 'x.var(axis=0')),
        # a different implementation (torch), nothing of the reference's to edit: whole cell
        'uses_torch': '''
import numpy as np
import torch
def layernorm_forward(x, gamma, beta, eps=1e-5):
    return torch.nn.functional.layer_norm(torch.tensor(x), (x.shape[-1],), torch.tensor(gamma),
                                          torch.tensor(beta), eps).numpy()
''',
    },
    'weight_norm': {
        'column_norms': swap('1', '0'),
        'frobenius_norm': swap(', axis=1, keepdims=True', ''),
        'squared_norm': swap('np.linalg.norm(v, ', '(v ** 2).sum('),
        'abs_g': swap('return g[:', 'return np.abs(g)[:'),
        'uses_torch': swap(
            ('def',
             '''import torch
def'''),
            ('g[:, None] * v / np.linalg.norm(v, axis=1, keepdims=True',
             'torch._weight_norm(torch.tensor(v), torch.tensor(g[:, None]), 0).numpy('),
        ),
    },
    'sgd_momentum_step': {
        'weight_decay_after_momentum': swap(
            ('    g = grad + weight_decay * param\n', '    g = grad\n'),
            ('return param - lr * g, None', 'return param - lr * (g + weight_decay * param), None'),
            ('return param - lr * direction, buf', 'return param - lr * (direction + weight_decay * param), buf'),
        ),
        'dampened_buffer': swap('buf = g.copy() if buf is None else momentum * buf + g',
                                'buf = (1 - momentum) * g if buf is None else momentum * buf + (1 - momentum) * g'),
        'nesterov_ignored': swap('direction = g + momentum * buf if nesterov else buf', 'direction = buf'),
        'nesterov_with_old_buffer': swap(
            ('    buf = g.copy() if buf is None',
             '    old = np.zeros_like(g) if buf is None else buf\n    buf = g.copy() if buf is None'),
            ('g + momentum * buf if nesterov', 'g + momentum * old if nesterov'),
        ),
        'in_place_update': swap(
            ('return param - lr * g, None', 'param -= lr * g\n        return param, None'),
            ('    buf = g.copy() if buf is None else momentum * buf + g\n',
             '    if buf is None:\n        buf = g.copy()\n    else:\n        buf *= momentum\n        buf += g\n'),
            ('return param - lr * direction, buf', 'param -= lr * direction\n    return param, buf'),
        ),
        'zero_buffer_without_momentum': swap('    if momentum == 0:\n        return param - lr * g, None\n', ''),
    },
    'adam_step': {
        'no_bias_correction': swap('lr * m_hat / (np.sqrt(v_hat)', 'lr * m / (np.sqrt(v)'),
        'eps_inside_sqrt': swap('(np.sqrt(v_hat) + eps)', 'np.sqrt(v_hat + eps)'),
        'decoupled_ignored': swap('''    if decoupled:
        param = param * (1 - lr * weight_decay)
    else:
        grad''', '''    grad'''),
        'decay_without_lr': swap('param * (1 - lr * weight_decay)', 'param * (1 - weight_decay)'),
        'bias_correction_off_by_one': swap(('beta1 ** t', 'beta1 ** (t + 1)'), ('beta2 ** t', 'beta2 ** (t + 1)')),
        'moments_in_place': swap('''    m = beta1 * m + (1 - beta1) * grad
    v = beta2 * v + (1 - beta2) * grad ** 2''', '''    m *= beta1
    m += (1 - beta1) * grad
    v *= beta2
    v += (1 - beta2) * grad ** 2'''),
        'decoupled_decay_after_step': swap(
            ('''    if decoupled:
        param = param * (1 - lr * weight_decay)
    else:
        grad''', '''    if not decoupled:
        grad'''),
            ('    return param - lr * m_hat / (np.sqrt(v_hat) + eps), m, v',
             '''    new = param - lr * m_hat / (np.sqrt(v_hat) + eps)
    if decoupled:
        new = new * (1 - lr * weight_decay)
    return new, m, v'''),
        ),
        'default_lr_1e-2': swap('lr=1e-3', 'lr=1e-2'),
    },
    'cross_entropy': {
        'naive_softmax_overflows': swap('''z = logits - logits.max(axis=1, keepdims=True)
    log_q = z - np.log(np.exp(z).sum(axis=1, keepdims=True))''',
                                        'log_q = np.log(np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True))'),
        'smoothing_over_other_classes': swap(
            '''    uniform = -log_q.mean(axis=1)
    return float(np.mean((1 - label_smoothing) * nll + label_smoothing * uniform))''',
            '''    others = (-log_q.sum(axis=1) - nll) / (logits.shape[1] - 1)
    return float(np.mean((1 - label_smoothing) * nll + label_smoothing * others))'''),
        'sum_over_batch': swap('float(np.mean(', 'float(np.sum('),
        'smoothing_ignored': swap('(1 - label_smoothing) * nll + label_smoothing * uniform', 'nll'),
        'log_of_clipped_softmax': swap(
            'log_q = z - np.log(np.exp(z).sum(axis=1, keepdims=True))',
            'log_q = np.log(np.clip(np.exp(z) / np.exp(z).sum(axis=1, keepdims=True), 1e-12, 1.0))'),
        # a different implementation (torch), nothing of the reference's to edit: whole cell
        'uses_torch': '''
import numpy as np
import torch
def cross_entropy(logits, targets, label_smoothing=0.0):
    return torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor(targets),
                                             label_smoothing=label_smoothing).item()
''',
    },
    'distillation_loss': {
        't_squared_factor': swap('.sum(axis=1).mean())', '.sum(axis=1).mean() * T ** 2)'),
        'student_not_tempered': swap('zs = student_logits / T', 'zs = student_logits'),
        'kl_instead_of_cross_entropy': swap('return float(-(p * log_q).sum(axis=1).mean())',
                                            '''log_p = zt - zt.max(axis=1, keepdims=True)
    log_p = log_p - np.log(np.exp(log_p).sum(axis=1, keepdims=True))
    return float((p * (log_p - log_q)).sum(axis=1).mean())'''),
        'naive_softmax_overflows': swap(('    zs = zs - zs.max(axis=1, keepdims=True)\n', ''),
                                        ('np.exp(zt - zt.max(axis=1, keepdims=True))', 'np.exp(zt)')),
        'roles_swapped': swap('return float(-(p * log_q).sum(axis=1).mean())',
                              '''log_p = zt - zt.max(axis=1, keepdims=True)
    log_p = log_p - np.log(np.exp(log_p).sum(axis=1, keepdims=True))
    return float(-(np.exp(log_q) * log_p).sum(axis=1).mean())'''),
    },
    'distillation_grad': {
        'missing_one_over_T': swap(' / T / n', ' / n'),
        'missing_one_over_N': swap(' / T / n', ' / T'),
        'sign_flipped': swap('(softmax(student_logits / T) - softmax(teacher_logits / T))',
                             '(softmax(teacher_logits / T) - softmax(student_logits / T))'),
        'times_T_not_over_T': swap(' / T / n', ' * T / n'),
        'naive_softmax_overflows': swap('np.exp(z - z.max(axis=1, keepdims=True))', 'np.exp(z)'),
        # a different implementation (torch autograd), nothing of the reference's to edit: whole cell
        'uses_autograd': '''
import numpy as np
import torch
def distillation_grad(student_logits, teacher_logits, T):
    s = torch.tensor(student_logits, requires_grad=True)
    p = torch.softmax(torch.tensor(teacher_logits) / T, dim=1)
    (-(p * torch.log_softmax(s / T, dim=1)).sum(1).mean()).backward()
    return s.grad.numpy()
''',
    },
    'early_stopping': {
        'ties_improve': swap('if loss < best', 'if loss <= best'),
        'patience_off_by_one': swap('failures >= patience', 'failures > patience'),
        'compares_with_previous_epoch': swap(('best, failures = loss, 0', 'failures = 0'),
                                             ('        if failures >= patience:',
                                              '        best = loss\n        if failures >= patience:')),
        'best_over_all_epochs': swap('np.argmin(losses[:stop + 1])', 'np.argmin(losses)'),
        'never_stops_returns_length': swap('0, len(losses) - 1', '0, len(losses)'),
        'failure_count_never_reset': swap('best, failures = loss, 0', 'best = loss'),
        'stops_the_epoch_after': swap('stop = epoch\n', 'stop = min(epoch + 1, len(losses) - 1)\n'),
    },
    'ridge_solution': {
        'missing_H_on_the_right': swap('H @ theta_star)', 'theta_star)'),
        'diagonal_only': swap('np.linalg.solve(H + mu * np.eye(d), H @ theta_star)',
                              'np.diag(H) / (np.diag(H) + mu) * theta_star'),
        'mu_added_to_every_entry': swap('H + mu * np.eye(d)', 'H + mu'),
        'uniform_shrinkage': swap('np.linalg.solve(H + mu * np.eye(d), H @ theta_star)', 'theta_star / (1 + mu)'),
        'inverts_H': swap('np.linalg.solve(H + mu * np.eye(d), H @ theta_star)',
                          'np.linalg.solve(np.eye(d) + mu * np.linalg.inv(H), theta_star)'),
    },
    # issue 42: the standardisation's backward pass, written in ch06 and pasted here (batch norm's is axis=0): the
    # same cell and the same checks as ch06's (tests/test_one_layernorm_backward.py), so the same mistakes
    'standardize_backward': CH06['standardize_backward'],
    'batchnorm_backward': {
        # the student's dx computed inline with one path missing, beside standardize_backward
        'mean_treated_as_constant': swap(
            "    dx = standardize_backward(dy * gamma, x, eps, axis=0)\n",
            "    g = dy * gamma\n    dx = (g - xhat * (g * xhat).mean(axis=0)) / np.sqrt(x.var(axis=0) + eps)\n"),
        'variance_treated_as_constant': swap(
            "    dx = standardize_backward(dy * gamma, x, eps, axis=0)\n",
            "    g = dy * gamma\n    dx = (g - g.mean(axis=0)) / np.sqrt(x.var(axis=0) + eps)\n"),
        'gamma_forgotten_in_dx': swap("standardize_backward(dy * gamma,", "standardize_backward(dy,"),
        'axis_not_passed': swap("x, eps, axis=0)", "x, eps)"),
        'unbiased_variance': swap('x.var(axis=0)', 'x.var(axis=0, ddof=1)'),
        'statistics_over_features': swap(
            ('x.var(axis=0)', 'x.var(axis=1, keepdims=True)'),
            ('x.mean(axis=0)', 'x.mean(axis=1, keepdims=True)'),
            ('x, eps, axis=0)', 'x, eps, axis=1)'),
        ),
        'dgamma_not_summed': swap('(dy * xhat).sum(axis=0)', 'dy * xhat'),
        'default_eps_1e-3': swap('eps=1e-5', 'eps=1e-3'),
        'eps_not_passed_on': swap("(dy * gamma, x, eps, axis=0)", "(dy * gamma, x, axis=0)"),
    },
    'layernorm_backward': {
        'statistics_over_axis_0': swap(
            ('x.var(axis=-1, keepdims=True)', 'x.var(axis=0, keepdims=True)'),
            ('x.mean(axis=-1, keepdims=True)', 'x.mean(axis=0, keepdims=True)'),
            ('standardize_backward(dy * gamma, x, eps)', 'standardize_backward(dy * gamma, x, eps, axis=0)'),
        ),
        'variance_treated_as_constant': swap(
            "    dx = standardize_backward(dy * gamma, x, eps)\n",
            "    g = dy * gamma\n    dx = (g - g.mean(axis=-1, keepdims=True)) / np.sqrt(\n"
            "        x.var(axis=-1, keepdims=True) + eps)\n"),
        'parameter_grads_summed_over_axis_0_only': swap('leading = tuple(range(x.ndim - 1))', 'leading = 0'),
        'mean_treated_as_constant': swap(
            "    dx = standardize_backward(dy * gamma, x, eps)\n",
            "    g = dy * gamma\n    dx = (g - x_hat * (g * x_hat).mean(axis=-1, keepdims=True)) / np.sqrt(\n"
            "        x.var(axis=-1, keepdims=True) + eps)\n"),
        'dx_without_gamma': swap("standardize_backward(dy * gamma, x, eps)", "standardize_backward(dy, x, eps)"),
        'eps_not_passed_on': swap("standardize_backward(dy * gamma, x, eps)", "standardize_backward(dy * gamma, x)"),
    },
    "train_digits": {
        "adam_t_reset_each_epoch": swap(
            "        order = rng.permutation(len(X_train))\n",
            "        order = rng.permutation(len(X_train))\n        t = 0\n"),
        "evaluates_on_training_data": swap(
            ("logits = forward(X_val)[2]", "logits = forward(X_train)[2]"),
            ("cross_entropy(logits, y_val)", "cross_entropy(logits, y_train)"),
            ("argmax(axis=1) == y_val", "argmax(axis=1) == y_train")),
        "shuffles_once": swap(
            ("    for epoch in range(epochs):\n        order = rng.permutation(len(X_train))\n",
             "    order = rng.permutation(len(X_train))\n    for epoch in range(epochs):\n")),
        "adam_t_always_one": swap("            t += 1\n", "            t = 1\n"),
        "adam_t_counts_parameters": swap(
            "            t += 1\n            for i in range(len(params)):\n",
            "            for i in range(len(params)):\n                t += 1\n"),
        "adam_state_not_kept": swap("params[i], ms[i], vs[i] = adam_step(", "params[i], _, _ = adam_step("),
        "forgets_the_one_hot": swap("            dlogits[np.arange(len(y)), y] -= 1.0\n", ""),
        "relu_mask_forgotten": swap("dh = (dlogits @ params[-2]) * (h > 0)", "dh = dlogits @ params[-2]"),
        "drops_the_last_short_batch": swap(
            "range(0, len(X_train), batch_size)", "range(0, len(X_train) - batch_size + 1, batch_size)"),
        "weight_norm_gradient_not_projected": swap("(g1 / n)[:, None] * (dW1 - (dg1 / n)[:, None] * V1)",
                                                   "(g1 / n)[:, None] * dW1"),
        "weight_norm_g_starts_at_one": swap("np.linalg.norm(W1, axis=1)]", "np.ones(hidden)]"),
        "returns_V1_for_W1": swap("[first_layer()] + params[-5:]]", "[params[0]] + params[-5:]]"),
        "layer_norm_switch_ignored_in_the_forward_pass": swap(
            "layernorm_forward(z, gamma, beta) if layer_norm else z", "layernorm_forward(z, gamma, beta)"),
        "shuffles_before_the_weights": swap(
            ("    rng = np.random.default_rng(seed)\n",
             "    rng = np.random.default_rng(seed)\n    first = rng.permutation(len(X_train))\n"),
            ("        order = rng.permutation(len(X_train))\n",
             "        order = first if epoch == 0 else rng.permutation(len(X_train))\n")),
        # right gradients, but not layernorm_backward's: the layer norm's backward written again in the loop
        "computes_the_layer_norm_gradient_itself": swap(
            "                dz, dgamma, dbeta = layernorm_backward(dh, z, params[-4])\n",
            "                mu, s = z.mean(axis=1, keepdims=True), np.sqrt(z.var(axis=1, keepdims=True) + 1e-5)\n"
            "                zh, gg = (z - mu) / s, dh * params[-4]\n"
            "                dz = (gg - gg.mean(axis=1, keepdims=True)\n"
            "                      - zh * (gg * zh).mean(axis=1, keepdims=True)) / s\n"
            "                dgamma, dbeta = (dh * zh).sum(axis=0), dh.sum(axis=0)\n"),
    },
}

# Mistakes that must also fail the digits-network checks. test_digits_recipe compares the gradient the student's
# train_digits hands adam_step with finite differences of the loss (the grader's own forward pass): a wrong
# layer norm, forward or backward, or a wrong step of the loop's chain rule fails it, as does a gradient that is
# right but not taken from layernorm_backward's (scaled) results.
INTEGRATION = {
    "test_digits_recipe": ["layernorm_backward/variance_treated_as_constant",
                           "layernorm_backward/mean_treated_as_constant", "layernorm_backward/dx_without_gamma",
                           "layernorm_forward/unbiased_var", "train_digits/relu_mask_forgotten",
                           "train_digits/weight_norm_gradient_not_projected",
                           "train_digits/computes_the_layer_norm_gradient_itself"],
    # the digits are easy: a subtly wrong piece still trains (test_train_digits catches those step by step);
    # a loss gradient without the target, or transposed weights, cannot learn them; a loop whose gradients are
    # not its pieces' results fails the trace
    "test_digits_heldout": ["train_digits/forgets_the_one_hot", "init_weights/transposed_shape",
                            "train_digits/computes_the_layer_norm_gradient_itself"],
}
