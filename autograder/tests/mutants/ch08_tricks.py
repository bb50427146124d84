"""Plausible mistakes in the graded functions of ch08_tricks: each must make its test cell fail.

Written as edits of the reference solutions (``swap``) or, where an edit cannot say it, as the
whole solution cell; the format and the loader are in autograder/tests/mutants/__init__.py.
"""
from autograder.tests.mutants import swap

MUTANTS = {
    'init_weights': {
        'transposed_shape': '''
import numpy as np
def init_weights(fan_in, fan_out, scheme, rng):
    std = {"lecun": 1 / np.sqrt(fan_in), "xavier": np.sqrt(2 / (fan_in + fan_out)), "he": np.sqrt(2 / fan_in)}[scheme]
    return rng.normal(0.0, std, size=(fan_in, fan_out))
''',
        'xavier_without_2': '''
import numpy as np
def init_weights(fan_in, fan_out, scheme, rng):
    if scheme == "lecun":
        std = 1 / np.sqrt(fan_in)
    elif scheme == "xavier":
        std = np.sqrt(1 / (fan_in + fan_out))
    elif scheme == "he":
        std = np.sqrt(2 / fan_in)
    else:
        raise ValueError(scheme)
    return rng.normal(0.0, std, size=(fan_out, fan_in))
''',
        'he_uses_fan_out': '''
import numpy as np
def init_weights(fan_in, fan_out, scheme, rng):
    if scheme == "lecun":
        std = 1 / np.sqrt(fan_in)
    elif scheme == "xavier":
        std = np.sqrt(2 / (fan_in + fan_out))
    elif scheme == "he":
        std = np.sqrt(2 / fan_out)
    else:
        raise ValueError(scheme)
    return rng.normal(0.0, std, size=(fan_out, fan_in))
''',
        'variance_as_std': swap(
            ('std = 1.0 / np.sqrt(fan_in)',
             'var = 1 / fan_in'),
            ('std = np.sqrt(2.0 / (fan_in + fan_out)',
             'var = 2 / (fan_in + fan_out'),
            ('std = np.sqrt(2.0 / fan_in)',
             'var = 2 / fan_in'),
            ('''f"unknown initialisation scheme {scheme!r}")
    return rng.normal(0.0, std''',
             '''scheme)
    return rng.normal(0.0, var'''),
        ),
        'unknown_scheme_falls_back_to_lecun': swap(
            ('''lecun":
        std = 1.0 / np.sqrt(fan_in)
    elif scheme == "xavier":
        std = np.sqrt(2.0''',
             '''xavier":
        std = np.sqrt(2'''),
            ('sqrt(2.0 / fan_in',
             'sqrt(2 / fan_in'),
            ('raise ValueError(f"unknown initialisation scheme {scheme!r}"',
             'std = 1 / np.sqrt(fan_in'),
        ),
        'uniform_with_the_right_std': '''
import numpy as np
def init_weights(fan_in, fan_out, scheme, rng):
    std = {"lecun": 1 / np.sqrt(fan_in), "xavier": np.sqrt(2 / (fan_in + fan_out)), "he": np.sqrt(2 / fan_in)}[scheme]
    a = np.sqrt(3) * std
    return rng.uniform(-a, a, size=(fan_out, fan_in))
''',
    },
    'orthogonal_init': {
        'no_sign_fix': swap(
            '''A = rng.standard_normal((n, n))
    Q, R = np.linalg.qr(A)
    return Q * np.sign(np.diag(R))''',
            '''Q, R = np.linalg.qr(rng.standard_normal((n, n)))
    return Q'''),
        'rows_scaled': swap(
            '''A = rng.standard_normal((n, n))
    Q, R = np.linalg.qr(A)
    return Q * np.sign(np.diag(R))''',
            '''Q, R = np.linalg.qr(rng.standard_normal((n, n)))
    return Q * np.sign(np.diag(R))[:, None]'''),
        'svd_instead_of_qr': swap(
            '''A = rng.standard_normal((n, n))
    Q, R = np.linalg.qr(A)
    return Q * np.sign(np.diag(R))''',
            '''U, s, Vt = np.linalg.svd(rng.standard_normal((n, n)))
    return U'''),
        'transposed': swap(
            '''A = rng.standard_normal((n, n))
    Q, R = np.linalg.qr(A)
    return Q * np.sign(np.diag(R))''',
            '''Q, R = np.linalg.qr(rng.standard_normal((n, n)))
    return (Q * np.sign(np.diag(R))).T'''),
        'gram_matrix_not_orthogonal': swap(
            '''Q, R = np.linalg.qr(A)
    return Q * np.sign(np.diag(R)''',
            'return A / np.linalg.norm(A, axis=0'),
    },
    'activation_stds': {
        'std_before_activation': '''
import numpy as np
def activation_stds(depth, width, scheme, activation, rng, n_samples=1000):
    act = {"relu": lambda z: np.maximum(z, 0), "tanh": np.tanh, "linear": lambda z: z}[activation]
    h = rng.standard_normal((n_samples, width))
    out = []
    for _ in range(depth):
        z = h @ init_weights(width, width, scheme, rng).T
        out.append(z.std())
        h = act(z)
    return np.array(out)
''',
        'h_at_W_not_transposed': '''
import numpy as np
def activation_stds(depth, width, scheme, activation, rng, n_samples=1000):
    act = {"relu": lambda z: np.maximum(z, 0), "tanh": np.tanh, "linear": lambda z: z}[activation]
    h = rng.standard_normal((n_samples, width))
    out = []
    for _ in range(depth):
        h = act(h @ init_weights(width, width, scheme, rng))
        out.append(h.std())
    return np.array(out)
''',
        'weights_drawn_before_input': '''
import numpy as np
def activation_stds(depth, width, scheme, activation, rng, n_samples=1000):
    act = {"relu": lambda z: np.maximum(z, 0), "tanh": np.tanh, "linear": lambda z: z}[activation]
    Ws = [init_weights(width, width, scheme, rng) for _ in range(depth)]
    h = rng.standard_normal((n_samples, width))
    out = []
    for W in Ws:
        h = act(h @ W.T)
        out.append(h.std())
    return np.array(out)
''',
        'std_per_unit_averaged': '''
import numpy as np
def activation_stds(depth, width, scheme, activation, rng, n_samples=1000):
    act = {"relu": lambda z: np.maximum(z, 0), "tanh": np.tanh, "linear": lambda z: z}[activation]
    h = rng.standard_normal((n_samples, width))
    out = []
    for _ in range(depth):
        h = act(h @ init_weights(width, width, scheme, rng).T)
        out.append(h.std(axis=0).mean())
    return np.array(out)
''',
        'includes_input_std': '''
import numpy as np
def activation_stds(depth, width, scheme, activation, rng, n_samples=1000):
    act = {"relu": lambda z: np.maximum(z, 0), "tanh": np.tanh, "linear": lambda z: z}[activation]
    h = rng.standard_normal((n_samples, width))
    out = [h.std()]
    for _ in range(depth):
        h = act(h @ init_weights(width, width, scheme, rng).T)
        out.append(h.std())
    return np.array(out)
''',
        'ignores_n_samples': '''
import numpy as np
def activation_stds(depth, width, scheme, activation, rng, n_samples=1000):
    act = {"relu": lambda z: np.maximum(z, 0), "tanh": np.tanh, "linear": lambda z: z}[activation]
    h = rng.standard_normal((1000, width))
    out = []
    for _ in range(depth):
        h = act(h @ init_weights(width, width, scheme, rng).T)
        out.append(h.std())
    return np.array(out)
''',
    },
    'dropout': {
        'no_rescaling': swap(
            '''np.array(x, dtype=float, copy=True)
    keep = rng.random(x.shape) >= p
    return np.where(keep, x / (1.0 - p)''',
            '''x.copy()
    return np.where(rng.random(x.shape) >= p, x'''),
        'keeps_with_probability_p': swap(
            '''np.array(x, dtype=float, copy=True)
    keep = rng.random(x.shape) >= p
    return np.where(keep, x / (1.0''',
            '''x.copy()
    return np.where(rng.random(x.shape) < p, x / (1'''),
        'scales_by_1_minus_p': swap(
            '''np.array(x, dtype=float, copy=True)
    keep = rng.random(x.shape) >= p
    return np.where(keep, x / (1.0''',
            '''x.copy()
    return np.where(rng.random(x.shape) >= p, x * (1'''),
        'binomial_mask': swap(
            '''np.array(x, dtype=float, copy=True)
    keep = rng.random(x.shape) >= p
    return np.where(keep, x / (1.0 - p), 0.0''',
            '''x.copy()
    return x * rng.binomial(1, 1 - p, size=x.shape) / (1 - p'''),
        'draws_in_eval_mode': '''
import numpy as np
def dropout(x, p, rng, training=True):
    keep = rng.random(x.shape) >= p
    if not training:
        return x.copy()
    return np.where(keep, x / (1 - p), 0.0)
''',
        'mask_in_place': swap(
            '''np.array(x, dtype=float, copy=True)
    keep = rng.random(x.shape) >= p
    return np.where(keep, x / (1.0 - p), 0.0)''',
            '''x.copy()
    x[rng.random(x.shape) < p] = 0.0
    x /= (1 - p)
    return x'''),
        'rescales_in_eval_mode': swap(
            '''np.array(x, dtype=float, copy=True)
    keep = rng.random(x.shape) >= p
    return np.where(keep, x / (1.0''',
            '''x * (1 - p)
    return np.where(rng.random(x.shape) >= p, x / (1'''),
        'returns_x_itself_in_eval': swap(
            ('np.array(x, dtype=float, copy=True)',
             'x'),
            ('.0 ',
             ' '),
        ),
    },
    'batchnorm_forward': {
        'biased_running_var': '''
import numpy as np
def batchnorm_forward(x, gamma, beta, running_mean, running_var, training, momentum=0.1, eps=1e-5):
    if training:
        mean, var = x.mean(0), x.var(0)
        rm = (1 - momentum) * running_mean + momentum * mean
        rv = (1 - momentum) * running_var + momentum * var
    else:
        mean, var, rm, rv = running_mean, running_var, running_mean.copy(), running_var.copy()
    return gamma * (x - mean) / np.sqrt(var + eps) + beta, rm, rv
''',
        'normalises_with_unbiased_var': '''
import numpy as np
def batchnorm_forward(x, gamma, beta, running_mean, running_var, training, momentum=0.1, eps=1e-5):
    if training:
        mean, var = x.mean(0), x.var(0, ddof=1)
        rm = (1 - momentum) * running_mean + momentum * mean
        rv = (1 - momentum) * running_var + momentum * var
    else:
        mean, var, rm, rv = running_mean, running_var, running_mean.copy(), running_var.copy()
    return gamma * (x - mean) / np.sqrt(var + eps) + beta, rm, rv
''',
        'momentum_reversed': '''
import numpy as np
def batchnorm_forward(x, gamma, beta, running_mean, running_var, training, momentum=0.1, eps=1e-5):
    if training:
        n = x.shape[0]
        mean, var = x.mean(0), x.var(0)
        rm = momentum * running_mean + (1 - momentum) * mean
        rv = momentum * running_var + (1 - momentum) * var * n / (n - 1)
    else:
        mean, var, rm, rv = running_mean, running_var, running_mean.copy(), running_var.copy()
    return gamma * (x - mean) / np.sqrt(var + eps) + beta, rm, rv
''',
        'batch_stats_in_eval': '''
import numpy as np
def batchnorm_forward(x, gamma, beta, running_mean, running_var, training, momentum=0.1, eps=1e-5):
    n = x.shape[0]
    mean, var = x.mean(0), x.var(0)
    if training:
        rm = (1 - momentum) * running_mean + momentum * mean
        rv = (1 - momentum) * running_var + momentum * var * n / (n - 1)
    else:
        rm, rv = running_mean.copy(), running_var.copy()
    return gamma * (x - mean) / np.sqrt(var + eps) + beta, rm, rv
''',
        'eps_outside_sqrt': '''
import numpy as np
def batchnorm_forward(x, gamma, beta, running_mean, running_var, training, momentum=0.1, eps=1e-5):
    if training:
        n = x.shape[0]
        mean, var = x.mean(0), x.var(0)
        rm = (1 - momentum) * running_mean + momentum * mean
        rv = (1 - momentum) * running_var + momentum * var * n / (n - 1)
    else:
        mean, var, rm, rv = running_mean, running_var, running_mean.copy(), running_var.copy()
    return gamma * (x - mean) / (np.sqrt(var) + eps) + beta, rm, rv
''',
        'running_stats_updated_in_place': '''
import numpy as np
def batchnorm_forward(x, gamma, beta, running_mean, running_var, training, momentum=0.1, eps=1e-5):
    if training:
        n = x.shape[0]
        mean, var = x.mean(0), x.var(0)
        running_mean *= 1 - momentum
        running_mean += momentum * mean
        running_var *= 1 - momentum
        running_var += momentum * var * n / (n - 1)
    else:
        mean, var = running_mean, running_var
    return gamma * (x - mean) / np.sqrt(var + eps) + beta, running_mean, running_var
''',
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
        'unbiased_var': '''
import numpy as np
def layernorm_forward(x, gamma, beta, eps=1e-5):
    mean, var = x.mean(-1, keepdims=True), x.var(-1, ddof=1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta
''',
        'eps_outside_sqrt': '''
import numpy as np
def layernorm_forward(x, gamma, beta, eps=1e-5):
    mean, std = x.mean(-1, keepdims=True), x.std(-1, keepdims=True)
    return gamma * (x - mean) / (std + eps) + beta
''',
        'axis_1_only_for_2d': swap(
            '''mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta''',
            '''x2 = np.atleast_2d(x)
    mean, var = x2.mean(1, keepdims=True), x2.var(1, keepdims=True)
    return (gamma * (x2 - mean) / np.sqrt(var + eps) + beta).reshape(x.shape)'''),
        'normalises_over_batch_axis': '''
import numpy as np
def layernorm_forward(x, gamma, beta, eps=1e-5):
    mean, var = x.mean(0, keepdims=True), x.var(0, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta
''',
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
        'weight_decay_after_momentum': '''
import numpy as np
def sgd_momentum_step(param, grad, buf, lr, momentum=0.0, weight_decay=0.0, nesterov=False):
    if momentum == 0:
        return param - lr * (grad + weight_decay * param), None
    buf = grad.copy() if buf is None else momentum * buf + grad
    d = grad + momentum * buf if nesterov else buf
    return param - lr * (d + weight_decay * param), buf
''',
        'dampened_buffer': '''
import numpy as np
def sgd_momentum_step(param, grad, buf, lr, momentum=0.0, weight_decay=0.0, nesterov=False):
    g = grad + weight_decay * param
    if momentum == 0:
        return param - lr * g, None
    buf = (1 - momentum) * g if buf is None else momentum * buf + (1 - momentum) * g
    d = g + momentum * buf if nesterov else buf
    return param - lr * d, buf
''',
        'nesterov_ignored': '''
import numpy as np
def sgd_momentum_step(param, grad, buf, lr, momentum=0.0, weight_decay=0.0, nesterov=False):
    g = grad + weight_decay * param
    if momentum == 0:
        return param - lr * g, None
    buf = g.copy() if buf is None else momentum * buf + g
    return param - lr * buf, buf
''',
        'nesterov_with_old_buffer': '''
import numpy as np
def sgd_momentum_step(param, grad, buf, lr, momentum=0.0, weight_decay=0.0, nesterov=False):
    g = grad + weight_decay * param
    if momentum == 0:
        return param - lr * g, None
    old = np.zeros_like(g) if buf is None else buf
    buf = g.copy() if buf is None else momentum * buf + g
    d = g + momentum * old if nesterov else buf
    return param - lr * d, buf
''',
        'in_place_update': '''
import numpy as np
def sgd_momentum_step(param, grad, buf, lr, momentum=0.0, weight_decay=0.0, nesterov=False):
    g = grad + weight_decay * param
    if momentum == 0:
        param -= lr * g
        return param, None
    if buf is None:
        buf = g.copy()
    else:
        buf *= momentum
        buf += g
    d = g + momentum * buf if nesterov else buf
    param -= lr * d
    return param, buf
''',
        'zero_buffer_without_momentum': '''
import numpy as np
def sgd_momentum_step(param, grad, buf, lr, momentum=0.0, weight_decay=0.0, nesterov=False):
    g = grad + weight_decay * param
    buf = g.copy() if buf is None else momentum * buf + g
    d = g + momentum * buf if nesterov else buf
    return param - lr * d, buf
''',
    },
    'adam_step': {
        'no_bias_correction': swap(
            ('beta1, beta2',
             'b1, b2'),
            ('''beta1 * m + (1 - beta1) * grad
    v = beta2 * v + (1 - beta2) * grad ** 2
    m_hat = m / (1 - beta1 ** t)
    v_hat = v / (1 - beta2 ** t)
    return param - lr * m_hat / (np.sqrt(v_hat''',
             '''b1 * m + (1 - b1) * grad
    v = b2 * v + (1 - b2) * grad ** 2
    return param - lr * m / (np.sqrt(v'''),
        ),
        'eps_inside_sqrt': swap(
            ('beta1, beta2',
             'b1, b2'),
            ('''beta1 * m + (1 - beta1) * grad
    v = beta2 * v + (1 - beta2) * grad ** 2
    m_hat = m / (1 - beta1 ** t)
    v_hat = v / (1 - beta2 ** t)
    return param - lr * m_hat / (np.sqrt(v_hat''',
             '''b1 * m + (1 - b1) * grad
    v = b2 * v + (1 - b2) * grad ** 2
    return param - lr * (m / (1 - b1 ** t)) / np.sqrt(v / (1 - b2 ** t'''),
        ),
        'decoupled_ignored': '''
import numpy as np
def adam_step(param, grad, m, v, t, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled=False):
    b1, b2 = betas
    grad = grad + weight_decay * param
    m = b1 * m + (1 - b1) * grad
    v = b2 * v + (1 - b2) * grad ** 2
    return param - lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps), m, v
''',
        'decay_without_lr': '''
import numpy as np
def adam_step(param, grad, m, v, t, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled=False):
    b1, b2 = betas
    if decoupled:
        param = param * (1 - weight_decay)
    else:
        grad = grad + weight_decay * param
    m = b1 * m + (1 - b1) * grad
    v = b2 * v + (1 - b2) * grad ** 2
    return param - lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps), m, v
''',
        'bias_correction_off_by_one': swap(
            ('beta1, beta2',
             'b1, b2'),
            ('''beta1 * m + (1 - beta1) * grad
    v = beta2 * v + (1 - beta2) * grad ** 2
    m_hat = m / (1 - beta1 ** t)
    v_hat = v / (1 - beta2 ** t)
    return param - lr * m_hat / (np.sqrt(v_hat''',
             '''b1 * m + (1 - b1) * grad
    v = b2 * v + (1 - b2) * grad ** 2
    return param - lr * (m / (1 - b1 ** (t + 1))) / (np.sqrt(v / (1 - b2 ** (t + 1))'''),
        ),
        'moments_in_place': swap(
            ('beta1, beta2',
             'b1, b2'),
            ('''= beta1 * m + (1 - beta1) * grad
    v = beta2 * v + (1 - beta2) * grad ** 2
    m_hat = m / (1 - beta1 ** t)
    v_hat = v / (1 - beta2 ** t)
    return param - lr * m_hat / (np.sqrt(v_hat''',
             '''*= b1
    m += (1 - b1) * grad
    v *= b2
    v += (1 - b2) * grad ** 2
    return param - lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)'''),
        ),
        'decoupled_decay_after_step': '''
import numpy as np
def adam_step(param, grad, m, v, t, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled=False):
    b1, b2 = betas
    if not decoupled:
        grad = grad + weight_decay * param
    m = b1 * m + (1 - b1) * grad
    v = b2 * v + (1 - b2) * grad ** 2
    new = param - lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)
    if decoupled:
        new = new * (1 - lr * weight_decay)
    return new, m, v
''',
        'default_lr_1e-2': swap(
            ('3',
             '2'),
            ('''m_hat = m / (1 - beta1 ** t)
    v_hat = v / (1 - beta2 ** t)
    return param - lr * m_hat / (np.sqrt(v_hat''',
             'return param - lr * (m / (1 - beta1 ** t)) / (np.sqrt(v / (1 - beta2 ** t)'),
        ),
    },
    'cross_entropy': {
        'naive_softmax_overflows': '''
import numpy as np
def cross_entropy(logits, targets, label_smoothing=0.0):
    q = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    log_q = np.log(q)
    n, k = logits.shape
    nll = -log_q[np.arange(n), targets]
    return float(np.mean((1 - label_smoothing) * nll - label_smoothing * log_q.mean(axis=1)))
''',
        'smoothing_over_other_classes': '''
import numpy as np
def cross_entropy(logits, targets, label_smoothing=0.0):
    z = logits - logits.max(axis=1, keepdims=True)
    log_q = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    n, k = logits.shape
    t = np.full((n, k), label_smoothing / (k - 1))
    t[np.arange(n), targets] = 1 - label_smoothing
    return float(-(t * log_q).sum(axis=1).mean())
''',
        'sum_over_batch': '''
import numpy as np
def cross_entropy(logits, targets, label_smoothing=0.0):
    z = logits - logits.max(axis=1, keepdims=True)
    log_q = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    n, k = logits.shape
    nll = -log_q[np.arange(n), targets]
    return float(np.sum((1 - label_smoothing) * nll - label_smoothing * log_q.mean(axis=1)))
''',
        'smoothing_ignored': swap(
            '''n = logits.shape[0]
    nll = -log_q[np.arange(n), np.asarray(targets, dtype=int)]
    uniform = -log_q.mean(axis=1)
    return float(np.mean((1 - label_smoothing) * nll + label_smoothing * uniform''',
            'return float(-log_q[np.arange(logits.shape[0]), targets].mean('),
        'log_of_clipped_softmax': '''
import numpy as np
def cross_entropy(logits, targets, label_smoothing=0.0):
    z = logits - logits.max(axis=1, keepdims=True)
    q = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    log_q = np.log(np.clip(q, 1e-12, 1.0))
    n, k = logits.shape
    nll = -log_q[np.arange(n), targets]
    return float(np.mean((1 - label_smoothing) * nll - label_smoothing * log_q.mean(axis=1)))
''',
        'uses_torch': '''
import numpy as np
import torch
def cross_entropy(logits, targets, label_smoothing=0.0):
    return torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor(targets),
                                             label_smoothing=label_smoothing).item()
''',
    },
    'distillation_loss': {
        't_squared_factor': '''
import numpy as np
def distillation_loss(student_logits, teacher_logits, T):
    def log_softmax(z):
        z = z - z.max(axis=1, keepdims=True)
        return z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    p = np.exp(log_softmax(teacher_logits / T))
    return float(-(p * log_softmax(student_logits / T)).sum(axis=1).mean() * T ** 2)
''',
        'student_not_tempered': '''
import numpy as np
def distillation_loss(student_logits, teacher_logits, T):
    def log_softmax(z):
        z = z - z.max(axis=1, keepdims=True)
        return z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    p = np.exp(log_softmax(teacher_logits / T))
    return float(-(p * log_softmax(student_logits)).sum(axis=1).mean())
''',
        'kl_instead_of_cross_entropy': '''
import numpy as np
def distillation_loss(student_logits, teacher_logits, T):
    def log_softmax(z):
        z = z - z.max(axis=1, keepdims=True)
        return z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    log_p = log_softmax(teacher_logits / T)
    return float((np.exp(log_p) * (log_p - log_softmax(student_logits / T))).sum(axis=1).mean())
''',
        'naive_softmax_overflows': '''
import numpy as np
def distillation_loss(student_logits, teacher_logits, T):
    p = np.exp(teacher_logits / T) / np.exp(teacher_logits / T).sum(axis=1, keepdims=True)
    q = np.exp(student_logits / T) / np.exp(student_logits / T).sum(axis=1, keepdims=True)
    return float(-(p * np.log(q)).sum(axis=1).mean())
''',
        'roles_swapped': '''
import numpy as np
def distillation_loss(student_logits, teacher_logits, T):
    def log_softmax(z):
        z = z - z.max(axis=1, keepdims=True)
        return z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    q = np.exp(log_softmax(student_logits / T))
    return float(-(q * log_softmax(teacher_logits / T)).sum(axis=1).mean())
''',
    },
    'distillation_grad': {
        'missing_one_over_T': swap(
            '''n = student_logits.shape[0]
    return (softmax(student_logits / T) - softmax(teacher_logits / T)) / T / n''',
            'return (softmax(student_logits / T) - softmax(teacher_logits / T)) / student_logits.shape[0]'),
        'missing_one_over_N': swap(
            '''n = student_logits.shape[0]
    return (softmax(student_logits / T) - softmax(teacher_logits / T)) / T / n''',
            'return (softmax(student_logits / T) - softmax(teacher_logits / T)) / T'),
        'sign_flipped': swap(
            '''n = student_logits.shape[0]
    return (softmax(student_logits / T) - softmax(teacher_logits / T)) / T / n''',
            'return (softmax(teacher_logits / T) - softmax(student_logits / T)) / T / student_logits.shape[0]'),
        'times_T_not_over_T': swap(
            '''n = student_logits.shape[0]
    return (softmax(student_logits / T) - softmax(teacher_logits / T)) / T / n''',
            'return (softmax(student_logits / T) - softmax(teacher_logits / T)) * T / student_logits.shape[0]'),
        'naive_softmax_overflows': '''
import numpy as np
def distillation_grad(student_logits, teacher_logits, T):
    def softmax(z):
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)
    return (softmax(student_logits / T) - softmax(teacher_logits / T)) / T / student_logits.shape[0]
''',
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
        'ties_improve': '''
import numpy as np
def early_stopping(val_losses, patience):
    best, fails, stop = np.inf, 0, len(val_losses) - 1
    for e, loss in enumerate(val_losses):
        if loss <= best:
            best, fails = loss, 0
        else:
            fails += 1
        if fails >= patience:
            stop = e
            break
    return stop, int(np.argmin(val_losses[:stop + 1]))
''',
        'patience_off_by_one': '''
import numpy as np
def early_stopping(val_losses, patience):
    best, fails, stop = np.inf, 0, len(val_losses) - 1
    for e, loss in enumerate(val_losses):
        if loss < best:
            best, fails = loss, 0
        else:
            fails += 1
        if fails > patience:
            stop = e
            break
    return stop, int(np.argmin(val_losses[:stop + 1]))
''',
        'compares_with_previous_epoch': '''
import numpy as np
def early_stopping(val_losses, patience):
    prev, fails, stop = np.inf, 0, len(val_losses) - 1
    for e, loss in enumerate(val_losses):
        if loss < prev:
            fails = 0
        else:
            fails += 1
        prev = loss
        if fails >= patience:
            stop = e
            break
    return stop, int(np.argmin(val_losses[:stop + 1]))
''',
        'best_over_all_epochs': '''
import numpy as np
def early_stopping(val_losses, patience):
    best, fails, stop = np.inf, 0, len(val_losses) - 1
    for e, loss in enumerate(val_losses):
        if loss < best:
            best, fails = loss, 0
        else:
            fails += 1
        if fails >= patience:
            stop = e
            break
    return stop, int(np.argmin(val_losses))
''',
        'never_stops_returns_length': '''
import numpy as np
def early_stopping(val_losses, patience):
    best, fails, stop = np.inf, 0, len(val_losses)
    for e, loss in enumerate(val_losses):
        if loss < best:
            best, fails = loss, 0
        else:
            fails += 1
        if fails >= patience:
            stop = e
            break
    return stop, int(np.argmin(val_losses[:stop + 1]))
''',
        'failure_count_never_reset': '''
import numpy as np
def early_stopping(val_losses, patience):
    best, fails, stop = np.inf, 0, len(val_losses) - 1
    for e, loss in enumerate(val_losses):
        if loss < best:
            best = loss
        else:
            fails += 1
        if fails >= patience:
            stop = e
            break
    return stop, int(np.argmin(val_losses[:stop + 1]))
''',
        'stops_the_epoch_after': '''
import numpy as np
def early_stopping(val_losses, patience):
    best, fails, stop = np.inf, 0, len(val_losses) - 1
    for e, loss in enumerate(val_losses):
        if loss < best:
            best, fails = loss, 0
        else:
            fails += 1
        if fails >= patience:
            stop = min(e + 1, len(val_losses) - 1)
            break
    return stop, int(np.argmin(val_losses[:stop + 1]))
''',
    },
    'ridge_solution': {
        'missing_H_on_the_right': swap(
            '''d = H.shape[0]
    return np.linalg.solve(H + mu * np.eye(d), H @''',
            'return np.linalg.solve(H + mu * np.eye(len(H)),'),
        'diagonal_only': swap(
            '''d = H.shape[0]
    return np.linalg.solve(H + mu * np.eye(d), H @ theta_star)''',
            '''lam = np.diag(H)
    return lam / (lam + mu) * theta_star'''),
        'mu_added_to_every_entry': swap(
            '''d = H.shape[0]
    return np.linalg.solve(H + mu * np.eye(d)''',
            'return np.linalg.solve(H + mu'),
        'uniform_shrinkage': swap(
            '''d = H.shape[0]
    return np.linalg.solve(H + mu * np.eye(d), H @ theta_star''',
            'return theta_star / (1 + mu'),
        'inverts_H': swap(
            '''d = H.shape[0]
    return np.linalg.solve(H + mu * np.eye(d), H @''',
            '''Hinv = np.linalg.inv(H)
    return np.linalg.solve(np.eye(len(H)) + mu * Hinv,'''),
    },
    'batchnorm_backward': {
        'mean_treated_as_constant': '''
import numpy as np
def batchnorm_backward(dy, x, gamma, eps=1e-5):
    s = np.sqrt(x.var(axis=0) + eps)
    xhat = (x - x.mean(axis=0)) / s
    g = dy * gamma
    return (g - xhat * (g * xhat).mean(axis=0)) / s, (dy * xhat).sum(axis=0), dy.sum(axis=0)
''',
        'variance_treated_as_constant': '''
import numpy as np
def batchnorm_backward(dy, x, gamma, eps=1e-5):
    s = np.sqrt(x.var(axis=0) + eps)
    xhat = (x - x.mean(axis=0)) / s
    g = dy * gamma
    return (g - g.mean(axis=0)) / s, (dy * xhat).sum(axis=0), dy.sum(axis=0)
''',
        'gamma_forgotten_in_dx': '''
import numpy as np
def batchnorm_backward(dy, x, gamma, eps=1e-5):
    s = np.sqrt(x.var(axis=0) + eps)
    xhat = (x - x.mean(axis=0)) / s
    g = dy
    return (g - g.mean(axis=0) - xhat * (g * xhat).mean(axis=0)) / s, (dy * xhat).sum(axis=0), dy.sum(axis=0)
''',
        'unbiased_variance': '''
import numpy as np
def batchnorm_backward(dy, x, gamma, eps=1e-5):
    s = np.sqrt(x.var(axis=0, ddof=1) + eps)
    xhat = (x - x.mean(axis=0)) / s
    g = dy * gamma
    return (g - g.mean(axis=0) - xhat * (g * xhat).mean(axis=0)) / s, (dy * xhat).sum(axis=0), dy.sum(axis=0)
''',
        'statistics_over_features': '''
import numpy as np
def batchnorm_backward(dy, x, gamma, eps=1e-5):
    s = np.sqrt(x.var(axis=1, keepdims=True) + eps)
    xhat = (x - x.mean(axis=1, keepdims=True)) / s
    g = dy * gamma
    dx = (g - g.mean(axis=1, keepdims=True) - xhat * (g * xhat).mean(axis=1, keepdims=True)) / s
    return dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)
''',
        'dgamma_not_summed': '''
import numpy as np
def batchnorm_backward(dy, x, gamma, eps=1e-5):
    s = np.sqrt(x.var(axis=0) + eps)
    xhat = (x - x.mean(axis=0)) / s
    g = dy * gamma
    return (g - g.mean(axis=0) - xhat * (g * xhat).mean(axis=0)) / s, dy * xhat, dy.sum(axis=0)
''',
        'default_eps_1e-3': '''
import numpy as np
def batchnorm_backward(dy, x, gamma, eps=1e-3):
    s = np.sqrt(x.var(axis=0) + eps)
    xhat = (x - x.mean(axis=0)) / s
    g = dy * gamma
    return (g - g.mean(axis=0) - xhat * (g * xhat).mean(axis=0)) / s, (dy * xhat).sum(axis=0), dy.sum(axis=0)
''',
    },
    'layernorm_backward': {
        'statistics_over_axis_0': swap(
            ('''x = np.asarray(x, dtype=float)
    dy = np.asarray(dy, dtype=float)
    s = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    xhat = (x - x.mean(axis=-1''',
             '''s = np.sqrt(x.var(axis=0, keepdims=True) + eps)
    xhat = (x - x.mean(axis=0'''),
            ('-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1',
             '0, keepdims=True) - xhat * (g * xhat).mean(axis=0'),
        ),
        'variance_treated_as_constant': '''
import numpy as np
def layernorm_backward(dy, x, gamma, eps=1e-5):
    s = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    xhat = (x - x.mean(axis=-1, keepdims=True)) / s
    g = dy * gamma
    dx = (g - g.mean(axis=-1, keepdims=True)) / s
    lead = tuple(range(x.ndim - 1))
    return dx, (dy * xhat).sum(axis=lead), dy.sum(axis=lead)
''',
        'parameter_grads_summed_over_axis_0_only': '''
import numpy as np
def layernorm_backward(dy, x, gamma, eps=1e-5):
    s = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    xhat = (x - x.mean(axis=-1, keepdims=True)) / s
    g = dy * gamma
    dx = (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / s
    return dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)
''',
        'mean_treated_as_constant': '''
import numpy as np
def layernorm_backward(dy, x, gamma, eps=1e-5):
    s = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    xhat = (x - x.mean(axis=-1, keepdims=True)) / s
    g = dy * gamma
    dx = (g - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / s
    lead = tuple(range(x.ndim - 1))
    return dx, (dy * xhat).sum(axis=lead), dy.sum(axis=lead)
''',
        'dx_without_gamma': '''
import numpy as np
def layernorm_backward(dy, x, gamma, eps=1e-5):
    s = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    xhat = (x - x.mean(axis=-1, keepdims=True)) / s
    g = dy
    dx = (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / s
    lead = tuple(range(x.ndim - 1))
    return dx, (dy * xhat).sum(axis=lead), dy.sum(axis=lead)
''',
    },
}

# Mistakes that must also fail the digits-network check: a wrong backward through batch norm fails
# the network's gradient check; broken dropout, momentum or initialisation spoil the recipe.
INTEGRATION = {
    "test_digits_recipe": ["batchnorm_backward/variance_treated_as_constant",
                           "batchnorm_backward/mean_treated_as_constant", "batchnorm_backward/gamma_forgotten_in_dx",
                           "batchnorm_backward/default_eps_1e-3",
                           "batchnorm_forward/normalises_with_unbiased_var", "dropout/no_rescaling",
                           "sgd_momentum_step/dampened_buffer", "init_weights/transposed_shape"],
}
