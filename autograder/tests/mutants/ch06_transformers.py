"""Plausible mistakes in the graded functions of ch06_transformers (format: ``__init__.py`` here)."""
from autograder.tests.mutants import swap

MUTANTS = {
    'softmax': {
        'no_max_shift': swap("z = x - np.max(x, axis=axis, keepdims=True)", "z = x"),
        'global_max_shift': swap(
            '''z = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, ''',
            '''e = np.exp(x - x.max())
    return e / e.sum('''),
        'global_normalisation': swap(
            '''z = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True''',
            '''e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum('''),
        'ignores_axis': swap(
            '''z = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis''',
            '''e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1'''),
    },
    'nadaraya_watson': {
        'gaussian_unstable': swap("weights = softmax(-0.5 * u ** 2, axis=1)", """K = np.exp(-0.5 * u ** 2)
        weights = K / K.sum(axis=1, keepdims=True)"""),
        'boxcar_strict': swap("np.abs(u) <= 1", "np.abs(u) < 1"),
        'triangular_epanechnikov_swapped': swap(
            """K = np.maximum(0.0, 1.0 - np.abs(u))
        elif kernel == "epanechnikov":
            K = np.maximum(0.0, 1.0 - u ** 2)""",
            """K = np.maximum(0.0, 1.0 - u ** 2)
        elif kernel == "epanechnikov":
            K = np.maximum(0.0, 1.0 - np.abs(u))"""),
        'gaussian_without_half': swap("-0.5 * u ** 2", "-u ** 2"),
        'bandwidth_multiplied': swap("keys[None, :]) / bandwidth", "keys[None, :]) * bandwidth"),
        'normalised_over_queries': swap(
            ("u ** 2, axis=1)", "u ** 2, axis=0)"),
            ("K.sum(axis=1,", "K.sum(axis=0,"),
        ),
    },
    'masked_softmax': {
        'off_by_one': swap("np.arange(T_k) < lens", "np.arange(T_k) <= lens"),
        'masked_scores_set_to_zero': swap("np.where(allowed, scores, -np.inf)", "scores * allowed"),
        'weights_zeroed_without_renormalising': swap("softmax(np.where(allowed, scores, -np.inf), axis=-1)",
                                                     "softmax(scores, axis=-1) * allowed"),
        'per_query_lengths_ignored': swap(
            """if lens.ndim == 1:
        lens = np""",
            """if lens.ndim == 2:
        lens = lens[:, 0]
    lens = np"""),
        'mutates_scores': swap("return softmax(np.where(allowed, scores, -np.inf), axis=-1)",
                                """scores[~allowed] = -1e9
    return softmax(scores, axis=-1)"""),
    },
    'scaled_dot_product_attention': {
        'no_scaling': swap(
            '''Q, K, V = (np.asarray(A, dtype=float) for A in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]''',
            'scores = Q @ np.swapaxes(K, -1, -2'),
        'scaled_by_d_v': swap(
            '''Q, K, V = (np.asarray(A, dtype=float) for A in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q''',
            'scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(V'),
        'softmax_over_queries': swap("softmax(scores, axis=-1)", "softmax(scores, axis=-2)"),
        'K_dot_T': swap(
            '''Q, K, V = (np.asarray(A, dtype=float) for A in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2)''',
            'scores = Q @ K.T'),
        'mask_applied_after_softmax': swap(
            ('''Q, K, V = (np.asarray(A, dtype=float) for A in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]''',
             'weights = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), axis=-1'),
            ('''scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)''',
             'weights = weights * mask'),
        ),
        # a different implementation (torch), nothing of the reference's to edit: whole cell
        'calls_torch': '''
import numpy as np
import torch
def scaled_dot_product_attention(Q, K, V, mask=None):
    q, k, v = (torch.from_numpy(np.asarray(a, dtype=float)) for a in (Q, K, V))
    s = q @ k.transpose(-1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        s = s.masked_fill(~torch.from_numpy(np.asarray(mask)), float("-inf"))
    w = torch.softmax(s, dim=-1)
    return (w @ v).numpy(), w.numpy()
''',
        # issue 42: scores of about 1000 overflow a softmax written inline without the maximum subtracted
        'unstable_softmax_inline': swap("weights = softmax(scores, axis=-1)",
                                        "e = np.exp(scores)\n    weights = e / e.sum(axis=-1, keepdims=True)"),
    },
    # issue 42: the softmax's Jacobian-vector product, derived by the student (its two cases, then the contraction)
    'softmax_backward': {
        'missing_sum_term': swap(" - np.sum(dp * p, axis=-1, keepdims=True)", ""),
        'sum_over_first_axis': swap("axis=-1, keepdims", "axis=0, keepdims"),
        'softmax_applied_to_p': swap("    return p * (dp",
                                     "    e = np.exp(p - p.max(axis=-1, keepdims=True))\n"
                                     "    p = e / e.sum(axis=-1, keepdims=True)\n    return p * (dp"),
        'diagonal_only': swap("p * (dp - np.sum(dp * p, axis=-1, keepdims=True))", "p * (1 - p) * dp"),
        'unweighted_sum': swap("np.sum(dp * p,", "np.sum(dp,"),
        'sum_without_keepdims': swap("axis=-1, keepdims=True)", "axis=-1)"),
        'mutates_dp': swap("    return p * (dp - np.sum(dp * p, axis=-1, keepdims=True))",
                           "    dp -= np.sum(dp * p, axis=-1, keepdims=True)\n    return p * dp"),
    },
    'scaled_dot_product_attention_backward': {
        'no_jacobian_subtraction': swap("softmax_backward(A, dA)", "A * dA"),
        'scale_dropped': swap("    dS = dS / np.sqrt(Q.shape[-1])\n", ""),
        'gradient_through_masked_pairs': swap("_, A = scaled_dot_product_attention(Q, K, V, mask)",
                                              "_, A = scaled_dot_product_attention(Q, K, V)"),
        'jacobian_sum_over_queries': swap("softmax_backward(A, dA)",
                                          "A * (dA - np.sum(dA * A, axis=-2, keepdims=True))"),
        'dK_from_K': swap("np.swapaxes(dS, -1, -2) @ Q, dV", "np.swapaxes(dS, -1, -2) @ K, dV"),
        'scale_applied_to_dV_too': swap("dV = np.swapaxes(A, -1, -2) @ d_out",
                                        "dV = np.swapaxes(A, -1, -2) @ d_out / np.sqrt(Q.shape[-1])"),
        'dK_untransposed': swap("np.swapaxes(dS, -1, -2) @ Q, dV", "dS @ Q, dV"),  # issue 42: named as dK
    },
    'causal_mask': {
        'strictly_below_diagonal': swap('))', '), k=-1)'),
        'upper_triangle': swap('tril', 'triu'),
        'float_mask': swap(', dtype=bool', ''),
        'true_means_blocked': swap('tril(np.ones((T, T), dtype=bool)', 'triu(np.ones((T, T), dtype=bool), k=1'),
    },
    'multi_head_attention': {
        'scaled_by_sqrt_d': swap("scaled_dot_product_attention(Q, K, V, mask)",
                                  "scaled_dot_product_attention(Q * np.sqrt(d_head / d), K, V, mask)"),
        'interleaved_heads': swap(
            ("reshape(Y.shape[0], Y.shape[1], n_heads, d_head).transpose(0, 2, 1, 3)",
             "reshape(Y.shape[0], Y.shape[1], d_head, n_heads).transpose(0, 3, 1, 2)"),
            ("out.transpose(0, 2, 1, 3)", "out.transpose(0, 2, 3, 1)"),
        ),
        'reshape_without_transpose': swap(
            ("reshape(Y.shape[0], Y.shape[1], n_heads, d_head).transpose(0, 2, 1, 3)",
             "reshape(Y.shape[0], n_heads, Y.shape[1], d_head)"),
            ("out.transpose(0, 2, 1, 3).reshape", "out.reshape"),
        ),
        'weights_not_transposed': swap(
            ("Y = X @ W.T", "Y = X @ W"),
            ("@ W_o.T", "@ W_o"),
        ),
        'no_output_projection': swap(" @ W_o.T", ""),
        'batch_mask_broadcast_over_heads_axis': swap(
            """
        if mask.ndim == 3:
            mask = mask[:, None]                       # (B, 1, T_q, T_k): shared by the heads""", ""),
    },
    'positional_encoding': {
        'column_index_exponent': swap("np.cos(angles[:, : d // 2])",
                                      "np.cos(positions / 10000.0 ** (np.arange(1, d, 2) / d))"),
        'sin_cos_swapped': swap(
            ("np.sin(angles)", "np.cos(angles)"),
            ("np.cos(angles[:, : d // 2])", "np.sin(angles[:, : d // 2])"),
        ),
        'positions_from_one': swap(
            '''positions = np.arange(T)[:, None]
    two_i = np.arange(0, d, 2)                          # 2i for every sine column
    angles = positions / 10000.0 ** (two_i / d)         # (T, ceil(d / 2)''',
            'angles = np.arange(1, T + 1)[:, None] / 10000.0 ** (np.arange(0, d, 2) / d'),
        'sines_then_cosines': swap(
            ("PE[:, 0::2]", "PE[:, :(d + 1) // 2]"),
            ("PE[:, 1::2]", "PE[:, (d + 1) // 2:]"),
        ),
        'odd_d_unsupported': swap(
            ('''positions = np.arange(T)[:, None]
    two_i = np.arange(0, d, 2)                          # 2i for every sine column
    angles = positions / 10000.0 ** (two_i / d)         # (T, ceil(d / 2)''',
             'angles = np.arange(T)[:, None] / 10000.0 ** (np.arange(0, d, 2) / d'),
            ('[:, : d // 2]',
             ''),
        ),
    },
    'patchify': {
        'plain_reshape': swap("    x = x.transpose(0, 2, 4, 1, 3, 5)                   # (N, H/p, W/p, C, p, p)\n", ""),
        'channels_last_in_patch': swap("transpose(0, 2, 4, 1, 3, 5)", "transpose(0, 2, 4, 3, 5, 1)"),
        'column_major_patches': swap("transpose(0, 2, 4, 1, 3, 5)", "transpose(0, 4, 2, 1, 3, 5)"),
        'casts_to_float': swap("np.asarray(images)", "np.asarray(images, dtype=float)"),
    },
    'transformer_block': {
        'post_ln': swap(
            '''A = layer_norm(X, p["ln1_g"], p["ln1_b"])
    H = X + multi_head_attention(A, A, p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads, mask)
    F = np.maximum(layer_norm(H, p["ln2_g"], p["ln2_b"]) @ p["W1"].T + p["b1"], 0.0)
    return H + F @ p["W2"].T + p["b2"]''',
            '''H = layer_norm(X + multi_head_attention(X, X, p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads, mask),
                   p["ln1_g"], p["ln1_b"])
    F = np.maximum(H @ p["W1"].T + p["b1"], 0.0)
    return layer_norm(H + F @ p["W2"].T + p["b2"], p["ln2_g"], p["ln2_b"])'''),
        'unbiased_variance': swap(
            '''=-1, keepdims=True)
        return''',
            '''=-1, ddof=1, keepdims=True)
        return'''),
        'residual_from_normalised_stream': swap('= X + multi_head_attention', '= A + multi_head_attention'),
        'eps_outside_sqrt': swap('np.sqrt(var', '(np.sqrt(var)'),
        'layer_norm_over_time_axis': swap(
            '''1, keepdims=True)
        var = Z.var(axis=-1''',
            '''2, keepdims=True)
        var = Z.var(axis=-2'''),
        'ffn_reads_unnormalised_stream': swap('layer_norm(H, p["ln2_g"], p["ln2_b"])', 'H'),
        'no_relu': swap(
            'np.maximum(layer_norm(H, p["ln2_g"], p["ln2_b"]) @ p["W1"].T + p["b1"], 0.0)',
            'layer_norm(H, p["ln2_g"], p["ln2_b"]) @ p["W1"].T + p["b1"]'),
        'ln1_used_twice': swap('ln2_g"], p["ln2_b', 'ln1_g"], p["ln1_b'),
        'mask_ignored': swap(', mask)', ')'),
        'no_ffn_residual': swap('H + F ', 'F '),
        # a different implementation (torch), nothing of the reference's to edit: whole cell
        'calls_torch': '''
import numpy as np
import torch
def transformer_block(X, params, n_heads, mask=None):
    t = {k: torch.from_numpy(np.asarray(v, dtype=float)) for k, v in params.items()}
    x = torch.from_numpy(np.asarray(X, dtype=float))
    d = x.shape[-1]
    a = torch.nn.functional.layer_norm(x, (d,), t["ln1_g"], t["ln1_b"], eps=1e-5).numpy()
    H = x + torch.from_numpy(multi_head_attention(a, a, params["W_q"], params["W_k"], params["W_v"],
                                                  params["W_o"], n_heads, mask))
    f = torch.nn.functional.layer_norm(H, (d,), t["ln2_g"], t["ln2_b"], eps=1e-5)
    return (H + torch.relu(f @ t["W1"].T + t["b1"]) @ t["W2"].T + t["b2"]).numpy()
''',
    },
    # issue 42: the standardisation's backward pass, derived by the student (its Jacobian, then the contraction)
    'standardize_backward': {
        'mean_term_missing': swap("dxhat - through_mu - through_sigma", "dxhat - through_sigma"),
        'projection_term_missing': swap(" - through_sigma) / sigma", ") / sigma"),
        'mu_and_sigma_constant': swap("(dxhat - through_mu - through_sigma) / sigma", "dxhat / sigma"),
        'unbiased_variance': swap("x.var(axis=axis, keepdims=True)", "x.var(axis=axis, ddof=1, keepdims=True)"),
        'axis_ignored': swap(("x.var(axis=axis", "x.var(axis=-1"), ("x.mean(axis=axis", "x.mean(axis=-1"),
                             ("dxhat.mean(axis=axis", "dxhat.mean(axis=-1"),
                             ("x_hat).mean(axis=axis", "x_hat).mean(axis=-1")),
        'averages_over_axis_0': swap(("dxhat.mean(axis=axis", "dxhat.mean(axis=0"),
                                     ("x_hat).mean(axis=axis", "x_hat).mean(axis=0")),
        'projection_without_keepdims': swap("(dxhat * x_hat).mean(axis=axis, keepdims=True)", "(dxhat * x_hat).mean()"),
        'divides_by_variance': swap("    return (dxhat - through_mu - through_sigma) / sigma",
                                    "    return (dxhat - through_mu - through_sigma) / sigma ** 2"),
        'eps_ignored': swap("keepdims=True) + eps)", "keepdims=True))"),
        'mutates_dxhat': swap("    return (dxhat - through_mu - through_sigma) / sigma",
                              "    dxhat -= through_mu + through_sigma\n    return dxhat / sigma"),
    },
    'layernorm_backward': {
        # the student's dx computed inline with one path missing, beside standardize_backward
        'mean_treated_as_constant': swap(
            "    dx = standardize_backward(dy * gamma, x, eps)\n",
            "    g = dy * gamma\n    dx = (g - x_hat * (g * x_hat).mean(axis=-1, keepdims=True)) / np.sqrt(\n"
            "        x.var(axis=-1, keepdims=True) + eps)\n"),
        'variance_treated_as_constant': swap(
            "    dx = standardize_backward(dy * gamma, x, eps)\n",
            "    g = dy * gamma\n    dx = (g - g.mean(axis=-1, keepdims=True)) / np.sqrt(\n"
            "        x.var(axis=-1, keepdims=True) + eps)\n"),
        'gamma_forgotten_in_dx': swap("standardize_backward(dy * gamma, x, eps)", "standardize_backward(dy, x, eps)"),
        'eps_not_passed_on': swap("standardize_backward(dy * gamma, x, eps)", "standardize_backward(dy * gamma, x)"),
        'eps_ignored': swap("keepdims=True) + eps)", "keepdims=True))"),
        'dgamma_not_summed': swap("(dy * x_hat).sum(axis=leading)", "(dy * x_hat).reshape(-1, x.shape[-1])[0]"),
        'unbiased_variance': swap("x.var(axis=-1, keepdims=True)", "x.var(axis=-1, ddof=1, keepdims=True)"),
        'parameter_grads_summed_over_axis_0_only': swap("leading = tuple(range(x.ndim - 1))", "leading = 0"),
        'dgamma_from_x_not_xhat': swap("(dy * x_hat).sum(axis=leading)", "(dy * x).sum(axis=leading)"),
    },
    'transformer_block_backward': {
        'relu_mask_forgotten': swap("dZ = (d_out @ p[\"W2\"]) * (Z > 0)", "dZ = d_out @ p[\"W2\"]"),
        'attention_residual_dropped': swap("return dH + dX_through_attention", "return dX_through_attention"),
        'mask_not_passed_to_backward': swap("heads(dH @ p[\"W_o\"]), mask)", "heads(dH @ p[\"W_o\"]))"),
        'ffn_residual_dropped': swap("dH = d_out + dH_through_ffn", "dH = dH_through_ffn"),
        'weight_gradient_transposed': swap(
            'g["W_q"], g["W_k"], g["W_v"] = flat(dQ).T @ flat(A), flat(dK).T @ flat(A), flat(dV).T @ flat(A)',
            'g["W_q"], g["W_k"], g["W_v"] = flat(A).T @ flat(dQ), flat(A).T @ flat(dK), flat(A).T @ flat(dV)'),
        'only_query_path_to_ln1': swap('dA = dQ @ p["W_q"] + dK @ p["W_k"] + dV @ p["W_v"]', 'dA = dQ @ p["W_q"]'),
        # issue 42: the input gradient through K with W_k transposed, named as such (not "dX is wrong")
        'input_gradient_through_K_transposed': swap('dK @ p["W_k"]', 'dK @ p["W_k"].T'),
        'heads_merged_without_transpose': swap("dQ, dK, dV = merge(dQ), merge(dK), merge(dV)",
                                               "dQ, dK, dV = (Y.reshape(B, T, d) for Y in (dQ, dK, dV))"),
        'steps_the_callers_parameters': swap(  # right gradients, then an SGD step on the parameters it was given
            "    return dH + dX_through_attention, {key: g[key] for key in keys}",
            "    for key in keys:\n        p[key] -= 0.01 * g[key]\n"
            "    return dH + dX_through_attention, {key: g[key] for key in keys}"),
    },
    'train_char_model': {
        'targets_not_shifted': swap("y = train_ids[starts[:, None] + 1 + np.arange(context)]",
                                    "y = train_ids[starts[:, None] + np.arange(context)]"),
        'evaluates_on_training_text': swap(
            "    n = (len(val_ids) - 1) // context\n",
            "    val_ids = train_ids[:len(val_ids)]\n    n = (len(val_ids) - 1) // context\n"),
        'adam_without_bias_correction': swap(
            "lr * (m[name] / (1 - 0.9 ** t)) / (np.sqrt(v[name] / (1 - 0.999 ** t)) + 1e-8)",
            "lr * m[name] / (np.sqrt(v[name]) + 1e-8)"),
        'same_windows_every_step': swap(
            ("    for t in range(1, steps + 1):\n        starts = rng", "    starts = rng"),
            ("size=batch)\n", "size=batch)\n    for t in range(1, steps + 1):\n")),
        'gradients_accumulate': swap(
            ("    losses = []\n", "    losses = []\n    E_grad = np.zeros_like(P[\"E\"])\n"),
            ('grads["E"] = np.zeros_like(P["E"])', 'grads["E"] = E_grad')),
        'repeated_characters_counted_once': swap('np.add.at(grads["E"], x.reshape(-1), dX.reshape(-1, d))',
                                                 'grads["E"][x.reshape(-1)] += dX.reshape(-1, d)'),
        'adam_step_counted_per_parameter': swap(
            ("    for t in range(1, steps + 1):\n", "    count = 0\n    for step in range(1, steps + 1):\n"),
            ("        for name in P:\n", "        for name in P:\n            count += 1\n            t = count\n")),
        'loss_summed_not_averaged': swap("dlogits /= batch * context", "dlogits /= batch"),
        # issue 39: gradients that do not come from what the backward pieces returned
        'pos_gradient_of_the_first_window': swap('grads["pos"] = dX.sum(axis=0)', 'grads["pos"] = dX[0]'),
        'final_gain_gradient_written_inline': swap(
            'dH, grads["lnf_g"], grads["lnf_b"] = layernorm_backward(dlogits @ P["W_out"], H, P["lnf_g"])',
            'dH, _, grads["lnf_b"] = layernorm_backward(dlogits @ P["W_out"], H, P["lnf_g"])\n'
            '        grads["lnf_g"] = ((dlogits @ P["W_out"]) * H).sum(axis=(0, 1))'),
        'gradients_clipped_before_adam': swap(
            "        for name in P:\n            m[name]",
            "        norm = np.sqrt(sum((g ** 2).sum() for g in grads.values()))\n"
            "        grads = {k: g * min(1.0, 1.0 / (norm + 1e-6)) for k, g in grads.items()}\n"
            "        for name in P:\n            m[name]"),
    },
    'sample_token': {
        'multiplies_by_temperature': swap(') / temperature', ') * temperature'),
        'ignores_temperature': swap(") / temperature", ")"),
        'keeps_smallest_logits': swap('-z', 'z'),
        'ties_to_higher_index': swap('-z, kind="stable")', 'z, kind="stable")[::-1]'),
        'threshold_keeps_ties': swap(
            '''keep = np.argsort(-z, kind="stable")[:top_k]
        kept = np.full(V, -np.inf)
        kept[keep] = z[keep]
        z = kept''',
            '''threshold = np.sort(z)[-top_k]
        z = np.where(z >= threshold, z, -np.inf)'''),
        'off_by_one_top_k': swap('top_k]', 'top_k + 1]'),
        'greedy': swap("int(rng.choice(V, p=p / p.sum()))", "int(np.argmax(p))"),
        'inverse_cdf_with_integers': swap(
            'rng.choice(V, p=p / p.sum()',
            'np.searchsorted(np.cumsum(p / p.sum()), rng.integers(0, 2 ** 31) / 2 ** 31'),
        'unstable_softmax': swap("np.exp(z - z.max())", "np.exp(z)"),
        'two_draws': swap(
            ''')
    return''',
            ''')
    rng.random()
    return'''),
        'mutates_logits': swap(
            ('np.asarray(logits, dtype=float) /',
             '''logits
    z /='''),
            ('''keep = np.argsort(-z, kind="stable")[:top_k]
        kept = np.full(V, -np.inf)
        kept[keep] = z[keep]
        z = kept''',
             'z[np.argsort(-z, kind="stable")[top_k:]] = -np.inf'),
        ),
    },
    'bert_mask': {
        'every_target_masked': swap(
            ("to_mask = is_target & (action < 0.8)", "to_mask = is_target"),
            ("    corrupted[to_random] = random_tokens[to_random]\n", ""),
        ),
        'independent_draws': swap("to_random = is_target & (action >= 0.8) & (action < 0.9)",
                                   "to_random = is_target & ~to_mask & (rng.random(tokens.shape) < 0.1)"),
        'is_target_only_masked': swap("return corrupted, is_target", "return corrupted, corrupted == mask_id"),
        'p_ignored': swap("rng.random(tokens.shape) < p", "rng.random(tokens.shape) < 0.15"),
        'global_random_state': swap(
            ("is_target = rng.random(", "is_target = np.random.random("),
            ("action = rng.random(", "action = np.random.random("),
            ("rng.integers(0, vocab_size,", "np.random.randint(0, vocab_size,"),
        ),
        'dtype_promoted': swap("return corrupted, is_target",
                               "return np.where(to_random, random_tokens, corrupted), is_target"),
        'mutates_tokens': swap("corrupted = tokens.copy()", "corrupted = tokens"),
        'random_tokens_everywhere': swap("to_random = is_target & (action >= 0.8)", "to_random = (action >= 0.8)"),
    },
}

# Every piece the character model trains or runs with: a mistake in any one fails the integration check
# (the held-out margin, or its hidden checks of the logits, of the gradients at the trained weights against
# torch, and of the sample's exact draws).
INTEGRATION = {
    "test_char_transformer": ["train_char_model/targets_not_shifted",
                              "scaled_dot_product_attention_backward/scale_dropped",
                              "layernorm_backward/variance_treated_as_constant",
                              "transformer_block_backward/mask_not_passed_to_backward",
                              "causal_mask/upper_triangle", "transformer_block/post_ln",
                              "sample_token/ignores_temperature"],
}
