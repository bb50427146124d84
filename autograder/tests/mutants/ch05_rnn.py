"""Plausible mistakes in the graded functions of ch05_rnn (format: ``__init__.py`` here)."""
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
        'ignores_z0': swap('np.zeros(m) if z0 is None else np.asarray(z0, dtype=float)', 'np.zeros(m)'),
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
        'derivative_at_earlier_state': swap('Z[k + 1] ** 2', 'Z[k] ** 2'),
        'frobenius_norm': swap(
            ('np.linalg.norm(J, 2)',
             'np.linalg.norm(J)'),
            ('return norms',
             '''norms[-1] = np.linalg.norm(np.eye(m))
    return norms'''),
        ),
        'product_in_wrong_order': swap(
            'J = J @ ((1.0 - Z[k + 1] ** 2)[:, None] * U)',
            'J = ((1.0 - Z[k + 1] ** 2)[:, None] * U) @ J'),
        'diag_on_wrong_side': swap('(1.0 - Z[k + 1] ** 2)[:, None] * U', 'U * (1.0 - Z[k + 1] ** 2)[None, :]'),
        'product_of_norms': swap(
            ('J = J @ ((1.0 - Z[k + 1] ** 2)[:, None] * U)',
             'J = (1.0 - Z[k + 1] ** 2)[:, None] * U'),
            ('norms[k] = np.linalg.norm(J, 2)',
             'norms[k] = norms[k + 1] * np.linalg.norm(J, 2)'),
        ),
        'reversed_order_of_lags': swap('return norms', 'return norms[::-1]'),
        'no_tanh_derivative': swap('(1.0 - Z[k + 1] ** 2)[:, None] * U', 'U'),
    },
    'rnn_backward': {
        'no_gradient_from_the_future': swap('(g_out[t] + dz)', 'g_out[t]'),
        'recurrent_gradient_without_transpose': swap('dz = U.T @ da', 'dz = U @ da'),
        'du_paired_with_current_state': swap('np.outer(da, Z_prev[t])', 'np.outer(da, Z[t])'),
        'no_tanh_derivative': swap('(g_out[t] + dz) * (1.0 - Z[t] ** 2)', 'g_out[t] + dz'),
        'derivative_at_previous_state': swap('(1.0 - Z[t] ** 2)', '(1.0 - Z_prev[t] ** 2)'),
        'dw_transposed_shape_fixed_wrong': swap('dW = dY.T @ Z', 'dW = (Z.T @ dY).reshape(W.shape)'),
        'ignores_z0': swap('np.zeros(m) if z0 is None else np.asarray(z0, dtype=float)', 'np.zeros(m)'),
        'dz0_is_last_gradient_before_weights': swap(
            ('dz = U.T @ da',
             '''dz_last = dz
        dz = U.T @ da'''),
            ('return dU, dV, dW, dz',
             'return dU, dV, dW, dz_last'),
        ),
        'mutates_z0': swap(
            ('z = z_start',
             '''z = z_start.copy() if z0 is None else z0      # the caller's array, updated in place below
    z_start = z.copy()'''),
            ('z = np.tanh',
             'z[:] = np.tanh'),
        ),
        'calls_torch': swap(
            ('def',
             '''import torch
def'''),
            ('dz = U.T @ da',
             'dz = (torch.from_numpy(U).T @ torch.from_numpy(da)).numpy()'),
        ),
    },
    'clip_grad_norm': {
        'clips_each_array_separately': swap(
            'return [np.asarray(g, dtype=float) * scale for g in grads]',
            'return [g * min(1.0, max_norm / (np.linalg.norm(g) + 1e-6)) for g in grads]'),
        'sum_of_norms': swap('float(np.sqrt(sum(np.sum(np.asarray(g, dtype=float) ** 2) for g in grads)))',
                             'float(sum(np.linalg.norm(g) for g in grads))'),
        'always_rescales': swap('min(1.0, max_norm / (total_norm + 1e-6))', 'max_norm / (total_norm + 1e-6)'),
        'returns_norm_after_clipping': swap(
            '    return [np.asarray(g, dtype=float) * scale for g in grads], total_norm',
            '''    clipped = [np.asarray(g, dtype=float) * scale for g in grads]
    return clipped, float(np.sqrt(sum(np.sum(c ** 2) for c in clipped)))'''),
        'clips_in_place': swap('    return [np.asarray(g, dtype=float) * scale for g in grads], total_norm',
                               '    for g in grads:\n        g *= scale\n    return grads, total_norm'),
        'returns_unclipped': swap('return [np.asarray(g, dtype=float) * scale for g in grads]',
                                  'return [np.array(g, dtype=float) for g in grads]'),
    },
    'adam_step': {
        'no_bias_correction': swap(("m / (1 - b1 ** t)", "m"), ("v / (1 - b2 ** t)", "v")),
        'eps_inside_sqrt': swap("(np.sqrt(v_hat) + eps)", "np.sqrt(v_hat + eps)"),
        'average_weights_swapped': swap("m = b1 * m + (1 - b1) * grad", "m = (1 - b1) * m + b1 * grad"),
        'updates_moments_in_place': swap(
            "    m = b1 * m + (1 - b1) * grad\n    v = b2 * v + (1 - b2) * grad ** 2\n",
            "    m *= b1\n    m += (1 - b1) * grad\n    v *= b2\n    v += (1 - b2) * grad ** 2\n"),
        'second_moment_not_squared': swap("(1 - b2) * grad ** 2", "(1 - b2) * np.abs(grad)"),
    },
    'train_char_rnn': {
        'gradients_never_reset': swap(
            ("    for step in range(1, steps + 1):\n",
             "    grads = [np.zeros_like(p) for p in params]\n    for step in range(1, steps + 1):\n"),
            ("        grads = [np.zeros_like(p) for p in params]\n", ""),
        ),
        'evaluates_on_training_text': swap(
            ("onehot[val[:-1]]", "onehot[data[:-1]]"),
            ("np.arange(len(val) - 1), val[1:]", "np.arange(len(data) - 1), data[1:]"),
        ),
        'windows_drawn_once': swap(
            "    for step in range(1, steps + 1):\n"
            "        starts = rng.integers(0, len(data) - seq_len, size=batch_size)\n",
            "    starts = rng.integers(0, len(data) - seq_len, size=batch_size)\n"
            "    for step in range(1, steps + 1):\n"),
        'updates_before_backward': swap(
            ("        starts = rng.integers",
             "        grads, _ = clip_grad_norm(grads, max_norm)\n        for i in range(len(params)):\n"
             "            params[i], ms[i], vs[i] = adam_step(params[i], grads[i], ms[i], vs[i], step, lr=lr)\n"
             "        starts = rng.integers"),
            ("        losses.append(float(loss))\n        grads, _ = clip_grad_norm(grads, max_norm)\n"
             "        for i in range(len(params)):\n"
             "            params[i], ms[i], vs[i] = adam_step(params[i], grads[i], ms[i], vs[i], step, lr=lr)\n",
             "        losses.append(float(loss))\n"),
            ("    for step in range(1, steps + 1):\n",
             "    grads = [np.zeros_like(p) for p in params]\n    for step in range(1, steps + 1):\n"),
        ),
        'clipped_gradients_ignored': swap(  # torch's clip_grad_norm_ clips in place; this one returns
            "grads, _ = clip_grad_norm(grads, max_norm)", "clip_grad_norm(grads, max_norm)"),
        'targets_not_shifted': swap("data[s + 1:s + seq_len + 1]", "data[s:s + seq_len]"),
        'adam_t_always_one': swap("vs[i], step, lr=lr)", "vs[i], 1, lr=lr)"),
    },
    'lstm_cell': {
        'gate_order_ifog': swap('a_g, a_o', 'a_o, a_g'),
        'no_tanh_on_cell_output': swap('sigmoid(a_o) * np.tanh(c_new)', 'sigmoid(a_o) * c_new'),
        'sigmoid_candidate': swap('np.tanh(a_g)', 'sigmoid(a_g)'),
        'one_bias_only': swap('b_ih + h @ W_hh.T + b_hh', 'b_ih + h @ W_hh.T'),
        'no_batch_support': swap(
            ('x @ W_ih.T + b_ih + h @ W_hh.T + b_hh',
             'W_ih @ x + b_ih + W_hh @ h + b_hh'),
            ('np.split(a, 4, axis=-1)',
             'np.split(a, 4)'),
        ),
        'calls_torch': swap(
            ('def',
             '''import torch
def'''),
            ('sigmoid(a_f) * c',
             'torch.sigmoid(torch.from_numpy(a_f)).numpy() * c'),
        ),
        'mutates_c': swap(
            '''c_new = sigmoid(a_f) * c + sigmoid(a_i) * np.tanh(a_g)
    h_new = sigmoid(a_o) * np.tanh(c_new)
    return h_new, c_new''',
            '''c *= sigmoid(a_f)
    c += sigmoid(a_i) * np.tanh(a_g)
    return sigmoid(a_o) * np.tanh(c), c.copy()'''),
    },
    'gru_cell': {
        'reset_outside_bias': swap(
            'n = np.tanh(xn + r * hn)',
            '''bn = b_hh[2 * h.shape[-1]:]
    n = np.tanh(xn + r * (hn - bn) + bn)'''),
        'update_gate_swapped': swap('(1.0 - z) * n + z * h', 'z * n + (1.0 - z) * h'),
        'gate_order_zrn': swap(
            ('xr, xz, xn',
             'xz, xr, xn'),
            ('hr, hz, hn',
             'hz, hr, hn'),
        ),
        'reset_applied_to_state': swap(
            'n = np.tanh(xn + r * hn)',
            '''m = h.shape[-1]
    n = np.tanh(xn + (r * h) @ W_hh[2 * m:].T + b_hh[2 * m:])'''),
        'no_batch_support': swap(
            ('x @ W_ih.T + b_ih, 3, axis=-1',
             'W_ih @ x + b_ih, 3'),
            ('h @ W_hh.T + b_hh, 3, axis=-1',
             'W_hh @ h + b_hh, 3'),
        ),
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
        'python_loop_over_t': swap(
            '''d = 1
    while d < len(A):
        # (A[t-d], B[t-d]) then (A[t], B[t]) = (A[t-d] A[t], A[t] B[t-d] + B[t])
        B = np.concatenate([B[:d], A[d:] * B[:-d] + B[d:]])
        A = np.concatenate([A[:d], A[d:] * A[:-d]])
        d *= 2''',
            '''for t in range(1, len(A)):
        B[t] = A[t] * B[t - 1] + B[t]'''),
        'combine_in_wrong_order': swap('A[d:] * B[:-d] + B[d:]', 'A[:-d] * B[d:] + B[:-d]'),
        'ignores_z0': swap(
            (' if z0 is None else np.result_type(a, b, z0, 1.0)',
             ''),
            ('''    if z0 is not None:
        B[0] = A[0] * z0 + B[0]
''',
             ''),
        ),
        'z0_added_without_a1': swap('B[0] = A[0] * z0 + B[0]', 'B[0] = z0 + B[0]'),
        'casts_to_real': swap(
            ('np.result_type(a, b, 1.0) if z0 is None else np.result_type(a, b, z0, 1.0)',
             'float'),
            ('np.array(a,',
             'np.array(np.real(a),'),
            ('np.array(b,',
             'np.array(np.real(b),'),
            ('A[0] * z0',
             'A[0] * np.real(z0)'),
        ),
        'updates_a_before_b': swap(
            '''        B = np.concatenate([B[:d], A[d:] * B[:-d] + B[d:]])
        A = np.concatenate([A[:d], A[d:] * A[:-d]])''',
            '''        A = np.concatenate([A[:d], A[d:] * A[:-d]])
        B = np.concatenate([B[:d], A[d:] * B[:-d] + B[d:]])'''),
        'stops_one_round_early': swap('while d < len(A)', 'while 2 * d < len(A)'),
        'mutates_b': swap(
            ('A = np.array(a',
             'A = np.asarray(a'),
            ('B = np.array(b',
             'B = np.asarray(b'),
        ),
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

# Mistakes in the pieces the integration check uses that must make it fail, not only their own cell. A
# backward without the gradient from the future still trains below the bigram line (2.42 nats against the
# reference's 2.39 on the test text): the check's first-step gradient against the grader's BPTT catches it.
# Clipping barely moves Adam's result; the check of the gradients handed to adam_step catches its mistakes.
INTEGRATION = {
    "test_char_rnn": ["rnn_backward/no_gradient_from_the_future", "rnn_forward/transposed_recurrent_weights",
                      "rnn_backward/recurrent_gradient_without_transpose", "clip_grad_norm/returns_unclipped"],
}
