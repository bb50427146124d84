"""Plausible mistakes in the graded functions of ch05_rnn: each must make its test cell fail.

Written as edits of the reference solutions (``swap``) or, where an edit cannot say it, as the
whole solution cell; the format and the loader are in autograder/tests/mutants/__init__.py.
"""
from autograder.tests.mutants import swap

MUTANTS = {
    'rnn_forward': {
        'includes_z0_row': swap(
            ('''np.asarray(z0, dtype=float)
    Z = np.empty((T, m))
    for t in range(T''',
             '''z0
    Z = [z]
    for t in range(T - 1'''),
            ('[t] = z',
             '''.append(z)
    Z = np.array(Z)'''),
        ),
        'tanh_on_output': swap(
            ('np.asarray(z0, dtype=float)',
             'z0'),
            ('Z @ W.T',
             'np.tanh(Z @ W.T)'),
        ),
        'ignores_z0': '''
import numpy as np
def rnn_forward(X, U, V, W, z0=None):
    T, m = X.shape[0], U.shape[0]
    z = np.zeros(m)
    Z = np.empty((T, m))
    for t in range(T):
        z = np.tanh(U @ z + V @ X[t])
        Z[t] = z
    return Z, Z @ W.T
''',
        'transposed_recurrent_weights': swap(
            ('np.asarray(z0, dtype=float)',
             'z0'),
            ('U @ z',
             'z @ U'),
        ),
        'output_from_previous_state': swap(
            ('''np.asarray(z0, dtype=float)
    Z = np.empty((T, m))''',
             '''z0
    Z, Y = np.empty((T, m)), []'''),
            (''':
        ''',
             ''':
        Y.append(W @ z)
        '''),
            ('Z @ W.T',
             'np.array(Y)'),
        ),
        'mutates_z0': swap(
            ('np.asarray(z0, dtype=float)',
             'z0'),
            ('z = np.tanh',
             'z[:] = np.tanh'),
        ),
    },
    'jacobian_norms': {
        'derivative_at_earlier_state': '''
import numpy as np
def jacobian_norms(X, U, V, z0=None):
    T, m = X.shape[0], U.shape[0]
    z = np.zeros(m) if z0 is None else z0
    Z = np.empty((T, m))
    for t in range(T):
        z = np.tanh(U @ z + V @ X[t])
        Z[t] = z
    norms, J = np.ones(T), np.eye(m)
    for k in range(T - 2, -1, -1):
        J = J @ ((1 - Z[k] ** 2)[:, None] * U)
        norms[k] = np.linalg.norm(J, 2)
    return norms
''',
        'frobenius_norm': '''
import numpy as np
def jacobian_norms(X, U, V, z0=None):
    T, m = X.shape[0], U.shape[0]
    z = np.zeros(m) if z0 is None else z0
    Z = np.empty((T, m))
    for t in range(T):
        z = np.tanh(U @ z + V @ X[t])
        Z[t] = z
    norms, J = np.ones(T), np.eye(m)
    for k in range(T - 2, -1, -1):
        J = J @ ((1 - Z[k + 1] ** 2)[:, None] * U)
        norms[k] = np.linalg.norm(J)
    norms[-1] = np.linalg.norm(np.eye(m))
    return norms
''',
        'product_in_wrong_order': '''
import numpy as np
def jacobian_norms(X, U, V, z0=None):
    T, m = X.shape[0], U.shape[0]
    z = np.zeros(m) if z0 is None else z0
    Z = np.empty((T, m))
    for t in range(T):
        z = np.tanh(U @ z + V @ X[t])
        Z[t] = z
    norms, J = np.ones(T), np.eye(m)
    for k in range(T - 2, -1, -1):
        J = ((1 - Z[k + 1] ** 2)[:, None] * U) @ J
        norms[k] = np.linalg.norm(J, 2)
    return norms
''',
        'diag_on_wrong_side': '''
import numpy as np
def jacobian_norms(X, U, V, z0=None):
    T, m = X.shape[0], U.shape[0]
    z = np.zeros(m) if z0 is None else z0
    Z = np.empty((T, m))
    for t in range(T):
        z = np.tanh(U @ z + V @ X[t])
        Z[t] = z
    norms, J = np.ones(T), np.eye(m)
    for k in range(T - 2, -1, -1):
        J = J @ (U * (1 - Z[k + 1] ** 2)[None, :])
        norms[k] = np.linalg.norm(J, 2)
    return norms
''',
        'product_of_norms': '''
import numpy as np
def jacobian_norms(X, U, V, z0=None):
    T, m = X.shape[0], U.shape[0]
    z = np.zeros(m) if z0 is None else z0
    Z = np.empty((T, m))
    for t in range(T):
        z = np.tanh(U @ z + V @ X[t])
        Z[t] = z
    norms = np.ones(T)
    for k in range(T - 2, -1, -1):
        norms[k] = norms[k + 1] * np.linalg.norm((1 - Z[k + 1] ** 2)[:, None] * U, 2)
    return norms
''',
        'reversed_order_of_lags': '''
import numpy as np
def jacobian_norms(X, U, V, z0=None):
    T, m = X.shape[0], U.shape[0]
    z = np.zeros(m) if z0 is None else z0
    Z = np.empty((T, m))
    for t in range(T):
        z = np.tanh(U @ z + V @ X[t])
        Z[t] = z
    norms, J = np.ones(T), np.eye(m)
    for k in range(T - 2, -1, -1):
        J = J @ ((1 - Z[k + 1] ** 2)[:, None] * U)
        norms[k] = np.linalg.norm(J, 2)
    return norms[::-1]
''',
        'no_tanh_derivative': '''
import numpy as np
def jacobian_norms(X, U, V, z0=None):
    T, m = X.shape[0], U.shape[0]
    norms, J = np.ones(T), np.eye(m)
    for k in range(T - 2, -1, -1):
        J = J @ U
        norms[k] = np.linalg.norm(J, 2)
    return norms
''',
    },
    'rnn_backward': {
        'no_gradient_from_the_future': '''
import numpy as np
def rnn_backward(X, U, V, W, dY, z0=None):
    T, m = X.shape[0], U.shape[0]
    z_start = np.zeros(m) if z0 is None else np.asarray(z0, dtype=float)
    Z = np.empty((T, m))
    z = z_start
    for t in range(T):
        z = np.tanh(U @ z + V @ X[t])
        Z[t] = z
    Z_prev = np.vstack([z_start[None], Z[:-1]])
    dW = dY.T @ Z
    g_out = dY @ W
    dU, dV = np.zeros(U.shape), np.zeros(V.shape)
    dz = np.zeros(m)
    for t in range(T - 1, -1, -1):
        da = g_out[t] * (1.0 - Z[t] ** 2)
        dU += np.outer(da, Z_prev[t])
        dV += np.outer(da, X[t])
        dz = U.T @ da
    return dU, dV, dW, dz
''',
        'recurrent_gradient_without_transpose': '''
import numpy as np
def rnn_backward(X, U, V, W, dY, z0=None):
    T, m = X.shape[0], U.shape[0]
    z_start = np.zeros(m) if z0 is None else np.asarray(z0, dtype=float)
    Z = np.empty((T, m))
    z = z_start
    for t in range(T):
        z = np.tanh(U @ z + V @ X[t])
        Z[t] = z
    Z_prev = np.vstack([z_start[None], Z[:-1]])
    dW = dY.T @ Z
    g_out = dY @ W
    dU, dV = np.zeros(U.shape), np.zeros(V.shape)
    dz = np.zeros(m)
    for t in range(T - 1, -1, -1):
        da = (g_out[t] + dz) * (1.0 - Z[t] ** 2)
        dU += np.outer(da, Z_prev[t])
        dV += np.outer(da, X[t])
        dz = U @ da
    return dU, dV, dW, dz
''',
        'du_paired_with_current_state': '''
import numpy as np
def rnn_backward(X, U, V, W, dY, z0=None):
    T, m = X.shape[0], U.shape[0]
    z_start = np.zeros(m) if z0 is None else np.asarray(z0, dtype=float)
    Z = np.empty((T, m))
    z = z_start
    for t in range(T):
        z = np.tanh(U @ z + V @ X[t])
        Z[t] = z
    Z_prev = np.vstack([z_start[None], Z[:-1]])
    dW = dY.T @ Z
    g_out = dY @ W
    dU, dV = np.zeros(U.shape), np.zeros(V.shape)
    dz = np.zeros(m)
    for t in range(T - 1, -1, -1):
        da = (g_out[t] + dz) * (1.0 - Z[t] ** 2)
        dU += np.outer(da, Z[t])
        dV += np.outer(da, X[t])
        dz = U.T @ da
    return dU, dV, dW, dz
''',
        'no_tanh_derivative': '''
import numpy as np
def rnn_backward(X, U, V, W, dY, z0=None):
    T, m = X.shape[0], U.shape[0]
    z_start = np.zeros(m) if z0 is None else np.asarray(z0, dtype=float)
    Z = np.empty((T, m))
    z = z_start
    for t in range(T):
        z = np.tanh(U @ z + V @ X[t])
        Z[t] = z
    Z_prev = np.vstack([z_start[None], Z[:-1]])
    dW = dY.T @ Z
    g_out = dY @ W
    dU, dV = np.zeros(U.shape), np.zeros(V.shape)
    dz = np.zeros(m)
    for t in range(T - 1, -1, -1):
        da = g_out[t] + dz
        dU += np.outer(da, Z_prev[t])
        dV += np.outer(da, X[t])
        dz = U.T @ da
    return dU, dV, dW, dz
''',
        'derivative_at_previous_state': '''
import numpy as np
def rnn_backward(X, U, V, W, dY, z0=None):
    T, m = X.shape[0], U.shape[0]
    z_start = np.zeros(m) if z0 is None else np.asarray(z0, dtype=float)
    Z = np.empty((T, m))
    z = z_start
    for t in range(T):
        z = np.tanh(U @ z + V @ X[t])
        Z[t] = z
    Z_prev = np.vstack([z_start[None], Z[:-1]])
    dW = dY.T @ Z
    g_out = dY @ W
    dU, dV = np.zeros(U.shape), np.zeros(V.shape)
    dz = np.zeros(m)
    for t in range(T - 1, -1, -1):
        da = (g_out[t] + dz) * (1.0 - Z_prev[t] ** 2)
        dU += np.outer(da, Z_prev[t])
        dV += np.outer(da, X[t])
        dz = U.T @ da
    return dU, dV, dW, dz
''',
        'dw_transposed_shape_fixed_wrong': '''
import numpy as np
def rnn_backward(X, U, V, W, dY, z0=None):
    T, m = X.shape[0], U.shape[0]
    z_start = np.zeros(m) if z0 is None else np.asarray(z0, dtype=float)
    Z = np.empty((T, m))
    z = z_start
    for t in range(T):
        z = np.tanh(U @ z + V @ X[t])
        Z[t] = z
    Z_prev = np.vstack([z_start[None], Z[:-1]])
    dW = (Z.T @ dY).reshape(W.shape)
    g_out = dY @ W
    dU, dV = np.zeros(U.shape), np.zeros(V.shape)
    dz = np.zeros(m)
    for t in range(T - 1, -1, -1):
        da = (g_out[t] + dz) * (1.0 - Z[t] ** 2)
        dU += np.outer(da, Z_prev[t])
        dV += np.outer(da, X[t])
        dz = U.T @ da
    return dU, dV, dW, dz
''',
        'ignores_z0': '''
import numpy as np
def rnn_backward(X, U, V, W, dY, z0=None):
    T, m = X.shape[0], U.shape[0]
    z_start = np.zeros(m)
    Z = np.empty((T, m))
    z = z_start
    for t in range(T):
        z = np.tanh(U @ z + V @ X[t])
        Z[t] = z
    Z_prev = np.vstack([z_start[None], Z[:-1]])
    dW = dY.T @ Z
    g_out = dY @ W
    dU, dV = np.zeros(U.shape), np.zeros(V.shape)
    dz = np.zeros(m)
    for t in range(T - 1, -1, -1):
        da = (g_out[t] + dz) * (1.0 - Z[t] ** 2)
        dU += np.outer(da, Z_prev[t])
        dV += np.outer(da, X[t])
        dz = U.T @ da
    return dU, dV, dW, dz
''',
        'dz0_is_last_gradient_before_weights': '''
import numpy as np
def rnn_backward(X, U, V, W, dY, z0=None):
    T, m = X.shape[0], U.shape[0]
    z_start = np.zeros(m) if z0 is None else np.asarray(z0, dtype=float)
    Z = np.empty((T, m))
    z = z_start
    for t in range(T):
        z = np.tanh(U @ z + V @ X[t])
        Z[t] = z
    Z_prev = np.vstack([z_start[None], Z[:-1]])
    dW = dY.T @ Z
    g_out = dY @ W
    dU, dV = np.zeros(U.shape), np.zeros(V.shape)
    dz = np.zeros(m)
    for t in range(T - 1, -1, -1):
        da = (g_out[t] + dz) * (1.0 - Z[t] ** 2)
        dU += np.outer(da, Z_prev[t])
        dV += np.outer(da, X[t])
        dz_last = dz
        dz = U.T @ da
    return dU, dV, dW, dz_last
''',
        'mutates_z0': '''
import numpy as np
def rnn_backward(X, U, V, W, dY, z0=None):
    T, m = X.shape[0], U.shape[0]
    z = np.zeros(m) if z0 is None else z0
    Z = np.empty((T, m))
    Z_prev = np.empty((T, m))
    for t in range(T):
        Z_prev[t] = z
        z[:] = np.tanh(U @ z + V @ X[t])
        Z[t] = z
    dW = dY.T @ Z
    g_out = dY @ W
    dU, dV = np.zeros(U.shape), np.zeros(V.shape)
    dz = np.zeros(m)
    for t in range(T - 1, -1, -1):
        da = (g_out[t] + dz) * (1.0 - Z[t] ** 2)
        dU += np.outer(da, Z_prev[t])
        dV += np.outer(da, X[t])
        dz = U.T @ da
    return dU, dV, dW, dz
''',
        'calls_torch': '''
import numpy as np
import torch
def rnn_backward(X, U, V, W, dY, z0=None):
    Ut, Vt, Wt = (torch.tensor(a, requires_grad=True) for a in (U, V, W))
    s = torch.zeros(U.shape[0], dtype=torch.float64) if z0 is None else torch.tensor(z0)
    s.requires_grad_(True)
    z, ys = s, []
    for x in torch.tensor(X):
        z = torch.tanh(Ut @ z + Vt @ x)
        ys.append(Wt @ z)
    (torch.stack(ys) * torch.tensor(dY)).sum().backward()
    return Ut.grad.numpy(), Vt.grad.numpy(), Wt.grad.numpy(), s.grad.numpy()
''',
    },
    'clip_grad_norm': {
        'clips_each_array_separately': swap(
            '''total_norm = float(np.sqrt(sum(np.sum(np.asarray(g, dtype=float) ** 2) for g in grads)))
    scale = min(1.0, max_norm / (total_norm + 1e-6))
    return [np.asarray(g, dtype=float) * scale for g in grads], total_norm''',
            '''total = float(np.sqrt(sum(np.sum(g ** 2) for g in grads)))
    return [g * min(1.0, max_norm / (np.linalg.norm(g) + 1e-6)) for g in grads], total'''),
        'sum_of_norms': swap(
            '''total_norm = float(np.sqrt(sum(np.sum(np.asarray(g, dtype=float) ** 2) for g in grads)))
    scale = min(1.0, max_norm / (total_norm + 1e-6))
    return [np.asarray(g, dtype=float) * scale for g in grads], total_norm''',
            '''total = float(sum(np.linalg.norm(g) for g in grads))
    scale = min(1.0, max_norm / (total + 1e-6))
    return [g * scale for g in grads], total'''),
        'always_rescales': swap(
            '''total_norm = float(np.sqrt(sum(np.sum(np.asarray(g, dtype=float) ** 2) for g in grads)))
    scale = min(1.0, max_norm / (total_norm + 1e-6))
    return [np.asarray(g, dtype=float) * scale for g in grads], total_norm''',
            '''total = float(np.sqrt(sum(np.sum(g ** 2) for g in grads)))
    return [g * max_norm / (total + 1e-6) for g in grads], total'''),
        'returns_norm_after_clipping': swap(
            '''total_norm = float(np.sqrt(sum(np.sum(np.asarray(g, dtype=float) ** 2) for g in grads)))
    scale = min(1.0, max_norm / (total_norm + 1e-6))
    return [np.asarray(g, dtype=float) * scale for g in grads], total_norm''',
            '''total = float(np.sqrt(sum(np.sum(g ** 2) for g in grads)))
    scale = min(1.0, max_norm / (total + 1e-6))
    clipped = [g * scale for g in grads]
    return clipped, float(np.sqrt(sum(np.sum(c ** 2) for c in clipped)))'''),
        'clips_in_place': swap(
            '''total_norm = float(np.sqrt(sum(np.sum(np.asarray(g, dtype=float) ** 2) for g in grads)))
    scale = min(1.0, max_norm / (total_norm + 1e-6))
    return [np.asarray(g, dtype=float) * scale for g in grads], total_norm''',
            '''total = float(np.sqrt(sum(np.sum(g ** 2) for g in grads)))
    scale = min(1.0, max_norm / (total + 1e-6))
    for g in grads:
        g *= scale
    return grads, total'''),
        'returns_unclipped': swap(
            '''total_norm = float(np.sqrt(sum(np.sum(np.asarray(g, dtype=float) ** 2) for g in grads)))
    scale = min(1.0, max_norm / (total_norm + 1e-6))
    return [np.asarray(g, dtype=float) * scale for g in grads], total_norm''',
            '''total = float(np.sqrt(sum(np.sum(g ** 2) for g in grads)))
    return [g.copy() for g in grads], total'''),
    },
    'lstm_cell': {
        'gate_order_ifog': swap(
            ('a_g, a_o',
             'a_o, a_g'),
            ('''h_new = sigmoid(a_o) * np.tanh(c_new)
    return h_new''',
             'return sigmoid(a_o) * np.tanh(c_new)'),
        ),
        'no_tanh_on_cell_output': swap(
            '''h_new = sigmoid(a_o) * np.tanh(c_new)
    return h_new''',
            'return sigmoid(a_o) * c_new'),
        'sigmoid_candidate': swap(
            '''np.tanh(a_g)
    h_new = sigmoid(a_o) * np.tanh(c_new)
    return h_new''',
            '''sigmoid(a_g)
    return sigmoid(a_o) * np.tanh(c_new)'''),
        'one_bias_only': swap(
            ('b_ih + h @ W_hh.T + b_hh',
             'h @ W_hh.T + b_ih'),
            ('''h_new = sigmoid(a_o) * np.tanh(c_new)
    return h_new''',
             'return sigmoid(a_o) * np.tanh(c_new)'),
        ),
        'no_batch_support': '''
import numpy as np
def lstm_cell(x, h, c, W_ih, W_hh, b_ih, b_hh):
    a = W_ih @ x + b_ih + W_hh @ h + b_hh
    a_i, a_f, a_g, a_o = np.split(a, 4)
    c_new = sigmoid(a_f) * c + sigmoid(a_i) * np.tanh(a_g)
    return sigmoid(a_o) * np.tanh(c_new), c_new
''',
        'calls_torch': '''
import numpy as np
import torch
def lstm_cell(x, h, c, W_ih, W_hh, b_ih, b_hh):
    a = torch.from_numpy(x @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
    a_i, a_f, a_g, a_o = torch.chunk(a, 4, dim=-1)
    c_new = torch.sigmoid(a_f) * torch.from_numpy(c) + torch.sigmoid(a_i) * torch.tanh(a_g)
    return (torch.sigmoid(a_o) * torch.tanh(c_new)).numpy(), c_new.numpy()
''',
        'mutates_c': swap(
            '''c_new = sigmoid(a_f) * c + sigmoid(a_i) * np.tanh(a_g)
    h_new = sigmoid(a_o) * np.tanh(c_new)
    return h_new, c_new''',
            '''c *= sigmoid(a_f)
    c += sigmoid(a_i) * np.tanh(a_g)
    return sigmoid(a_o) * np.tanh(c), c.copy()'''),
    },
    'gru_cell': {
        'reset_outside_bias': '''
import numpy as np
def gru_cell(x, h, W_ih, W_hh, b_ih, b_hh):
    xr, xz, xn = np.split(x @ W_ih.T + b_ih, 3, axis=-1)
    hr, hz, hn = np.split(h @ W_hh.T, 3, axis=-1)
    br, bz, bn = np.split(b_hh, 3)
    r, z = sigmoid(xr + hr + br), sigmoid(xz + hz + bz)
    n = np.tanh(xn + r * hn + bn)
    return (1 - z) * n + z * h
''',
        'update_gate_swapped': '''
import numpy as np
def gru_cell(x, h, W_ih, W_hh, b_ih, b_hh):
    xr, xz, xn = np.split(x @ W_ih.T + b_ih, 3, axis=-1)
    hr, hz, hn = np.split(h @ W_hh.T + b_hh, 3, axis=-1)
    r, z = sigmoid(xr + hr), sigmoid(xz + hz)
    n = np.tanh(xn + r * hn)
    return z * n + (1 - z) * h
''',
        'gate_order_zrn': '''
import numpy as np
def gru_cell(x, h, W_ih, W_hh, b_ih, b_hh):
    xz, xr, xn = np.split(x @ W_ih.T + b_ih, 3, axis=-1)
    hz, hr, hn = np.split(h @ W_hh.T + b_hh, 3, axis=-1)
    r, z = sigmoid(xr + hr), sigmoid(xz + hz)
    n = np.tanh(xn + r * hn)
    return (1 - z) * n + z * h
''',
        'reset_applied_to_state': '''
import numpy as np
def gru_cell(x, h, W_ih, W_hh, b_ih, b_hh):
    m = h.shape[-1]
    xr, xz, xn = np.split(x @ W_ih.T + b_ih, 3, axis=-1)
    hr, hz, _ = np.split(h @ W_hh.T + b_hh, 3, axis=-1)
    r, z = sigmoid(xr + hr), sigmoid(xz + hz)
    n = np.tanh(xn + (r * h) @ W_hh[2 * m:].T + b_hh[2 * m:])
    return (1 - z) * n + z * h
''',
        'no_batch_support': '''
import numpy as np
def gru_cell(x, h, W_ih, W_hh, b_ih, b_hh):
    xr, xz, xn = np.split(W_ih @ x + b_ih, 3)
    hr, hz, hn = np.split(W_hh @ h + b_hh, 3)
    r, z = sigmoid(xr + hr), sigmoid(xz + hz)
    n = np.tanh(xn + r * hn)
    return (1 - z) * n + z * h
''',
        'calls_torch': swap(
            ('def',
             '''import torch
def'''),
            ('''sigmoid(xr + hr)
    z = sigmoid(xz + hz''',
             '''torch.sigmoid(torch.from_numpy(xr + hr)).numpy()
    z = torch.sigmoid(torch.from_numpy(xz + hz)).numpy('''),
            ('.0',
             ''),
        ),
    },
    'linear_scan': {
        'python_loop_over_t': '''
import numpy as np
def linear_scan(a, b, z0=None):
    dtype = np.result_type(a, b, 1.0) if z0 is None else np.result_type(a, b, z0, 1.0)
    z = np.zeros(a.shape[1], dtype) if z0 is None else z0
    out = np.empty(a.shape, dtype)
    for t in range(len(a)):
        z = a[t] * z + b[t]
        out[t] = z
    return out
''',
        'combine_in_wrong_order': '''
import numpy as np
def linear_scan(a, b, z0=None):
    dtype = np.result_type(a, b, 1.0) if z0 is None else np.result_type(a, b, z0, 1.0)
    A, B = np.array(a, dtype=dtype), np.array(b, dtype=dtype)
    if z0 is not None:
        B[0] = A[0] * z0 + B[0]
    d = 1
    while d < len(A):
        B = np.concatenate([B[:d], A[:-d] * B[d:] + B[:-d]])
        A = np.concatenate([A[:d], A[d:] * A[:-d]])
        d *= 2
    return B
''',
        'ignores_z0': '''
import numpy as np
def linear_scan(a, b, z0=None):
    dtype = np.result_type(a, b, 1.0)
    A, B = np.array(a, dtype=dtype), np.array(b, dtype=dtype)
    d = 1
    while d < len(A):
        B = np.concatenate([B[:d], A[d:] * B[:-d] + B[d:]])
        A = np.concatenate([A[:d], A[d:] * A[:-d]])
        d *= 2
    return B
''',
        'z0_added_without_a1': '''
import numpy as np
def linear_scan(a, b, z0=None):
    dtype = np.result_type(a, b, 1.0) if z0 is None else np.result_type(a, b, z0, 1.0)
    A, B = np.array(a, dtype=dtype), np.array(b, dtype=dtype)
    if z0 is not None:
        B[0] = z0 + B[0]
    d = 1
    while d < len(A):
        B = np.concatenate([B[:d], A[d:] * B[:-d] + B[d:]])
        A = np.concatenate([A[:d], A[d:] * A[:-d]])
        d *= 2
    return B
''',
        'casts_to_real': '''
import numpy as np
import warnings
def linear_scan(a, b, z0=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        A, B = np.array(a, dtype=float), np.array(b, dtype=float)
        if z0 is not None:
            B[0] = A[0] * np.real(z0) + B[0]
    d = 1
    while d < len(A):
        B = np.concatenate([B[:d], A[d:] * B[:-d] + B[d:]])
        A = np.concatenate([A[:d], A[d:] * A[:-d]])
        d *= 2
    return B
''',
        'updates_a_before_b': '''
import numpy as np
def linear_scan(a, b, z0=None):
    dtype = np.result_type(a, b, 1.0) if z0 is None else np.result_type(a, b, z0, 1.0)
    A, B = np.array(a, dtype=dtype), np.array(b, dtype=dtype)
    if z0 is not None:
        B[0] = A[0] * z0 + B[0]
    d = 1
    while d < len(A):
        A = np.concatenate([A[:d], A[d:] * A[:-d]])
        B = np.concatenate([B[:d], A[d:] * B[:-d] + B[d:]])
        d *= 2
    return B
''',
        'stops_one_round_early': '''
import numpy as np
def linear_scan(a, b, z0=None):
    dtype = np.result_type(a, b, 1.0) if z0 is None else np.result_type(a, b, z0, 1.0)
    A, B = np.array(a, dtype=dtype), np.array(b, dtype=dtype)
    if z0 is not None:
        B[0] = A[0] * z0 + B[0]
    d = 1
    while 2 * d < len(A):
        B = np.concatenate([B[:d], A[d:] * B[:-d] + B[d:]])
        A = np.concatenate([A[:d], A[d:] * A[:-d]])
        d *= 2
    return B
''',
        'mutates_b': '''
import numpy as np
def linear_scan(a, b, z0=None):
    dtype = np.result_type(a, b, 1.0) if z0 is None else np.result_type(a, b, z0, 1.0)
    A, B = np.asarray(a, dtype=dtype), np.asarray(b, dtype=dtype)
    if z0 is not None:
        B[0] = A[0] * z0 + B[0]
    d = 1
    while d < len(A):
        B = np.concatenate([B[:d], A[d:] * B[:-d] + B[d:]])
        A = np.concatenate([A[:d], A[d:] * A[:-d]])
        d *= 2
    return B
''',
    },
    'lru_eigenvalues': {
        'single_exponential': swap(
            '-np.exp(np.asarray(nu, dtype=float)) + 1j * np.asarray(phi, dtype=float)',
            'nu + 1j * phi'),
        'modulus_exp_minus_nu': swap(
            'np.exp(np.asarray(nu, dtype=float)) + 1j * np.asarray(phi, dtype=float)',
            'nu + 1j * phi'),
        'conjugate_phase': swap('np.asarray(nu, dtype=float)) + 1j * np.asarray(phi, dtype=float)', 'nu) - 1j * phi'),
        'real_only': swap('np.asarray(nu, dtype=float)) + 1j * np.asarray(phi, dtype=float)', 'nu)) * np.cos(phi'),
        'phase_inside_exp_of_nu': swap(
            'np.asarray(nu, dtype=float)) + 1j * np.asarray(phi, dtype=float',
            'nu + 1j * phi'),
    },
    'lru_init': {
        'r_squared_uniform_like_the_paper': swap(
            '''rng.uniform(r_min, r_max, size=m)
    phi = rng.uniform(0.''',
            '''np.sqrt(rng.uniform(r_min ** 2, r_max ** 2, size=m))
    phi = rng.uniform('''),
        'global_numpy_random': swap(
            '''rng.uniform(r_min, r_max, size=m)
    phi = rng.uniform(0.''',
            '''np.random.uniform(r_min, r_max, size=m)
    phi = np.random.uniform('''),
        'nu_uniform_instead_of_r': swap(
            '''r = rng.uniform(r_min, r_max, size=m)
    phi = rng.uniform(0.0, max_phase, size=m)
    return np.log(-np.log(r))''',
            '''nu = rng.uniform(np.log(-np.log(r_max)), np.log(-np.log(r_min)), size=m)
    phi = rng.uniform(0, max_phase, size=m)
    return nu'''),
        'same_uniform_for_r_and_phi': swap(
            '''r = rng.uniform(r_min, r_max, size=m)
    phi = rng.uniform(0.0, max_phase, size=m)
    return np.log(-np.log(r)), phi''',
            '''u = rng.uniform(size=m)
    r = r_min + (r_max - r_min) * u
    return np.log(-np.log(r)), max_phase * u'''),
        'nu_is_log_r': swap(
            '''.0, max_phase, size=m)
    return np.log(-np.log(r)''',
            ''', max_phase, size=m)
    return -np.log(r'''),
        'phase_on_full_circle': swap('.0, max_phase', ', 2 * np.pi'),
        'fresh_generator_each_call': swap(
            ('''"
    ''',
             '''"
    rng = np.random.default_rng(0)
    '''),
            ('.0',
             ''),
        ),
    },
}

# Mistakes in the pieces the integration check uses that must make it fail, not only their own cell.
INTEGRATION = {
    "test_char_rnn": ["rnn_forward/tanh_on_output", "rnn_forward/transposed_recurrent_weights",
                      "rnn_backward/no_gradient_from_the_future", "rnn_backward/recurrent_gradient_without_transpose",
                      "rnn_backward/no_tanh_derivative", "rnn_backward/derivative_at_previous_state",
                      "clip_grad_norm/sum_of_norms", "clip_grad_norm/returns_unclipped"],
}
