"""Plausible mistakes in the graded functions of ch06_transformers: each must make its test cell fail.

Written as edits of the reference solutions (``swap``) or, where an edit cannot say it, as the
whole solution cell; the format and the loader are in autograder/tests/mutants/__init__.py.
"""
from autograder.tests.mutants import swap

MUTANTS = {
    'softmax': {
        'no_max_shift': '''
import numpy as np
def softmax(x, axis=-1):
    e = np.exp(np.asarray(x, dtype=float))
    return e / e.sum(axis=axis, keepdims=True)
''',
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
        'gaussian_unstable': '''
import numpy as np
def nadaraya_watson(queries, keys, values, bandwidth=1.0, kernel="gaussian"):
    u = (queries[:, None] - keys[None, :]) / bandwidth
    K = {"gaussian": np.exp(-u ** 2 / 2), "boxcar": (np.abs(u) <= 1) * 1.0,
         "triangular": np.maximum(0, 1 - np.abs(u)), "epanechnikov": np.maximum(0, 1 - u ** 2)}[kernel]
    return (K / K.sum(axis=1, keepdims=True)) @ values
''',
        'boxcar_strict': '''
import numpy as np
def nadaraya_watson(queries, keys, values, bandwidth=1.0, kernel="gaussian"):
    u = (queries[:, None] - keys[None, :]) / bandwidth
    if kernel == "gaussian":
        return softmax(-u ** 2 / 2, axis=1) @ values
    K = {"boxcar": (np.abs(u) < 1) * 1.0,
         "triangular": np.maximum(0, 1 - np.abs(u)), "epanechnikov": np.maximum(0, 1 - u ** 2)}[kernel]
    return (K / K.sum(axis=1, keepdims=True)) @ values
''',
        'triangular_epanechnikov_swapped': '''
import numpy as np
def nadaraya_watson(queries, keys, values, bandwidth=1.0, kernel="gaussian"):
    u = (queries[:, None] - keys[None, :]) / bandwidth
    if kernel == "gaussian":
        return softmax(-u ** 2 / 2, axis=1) @ values
    K = {"boxcar": (np.abs(u) <= 1) * 1.0,
         "triangular": np.maximum(0, 1 - u ** 2), "epanechnikov": np.maximum(0, 1 - np.abs(u))}[kernel]
    return (K / K.sum(axis=1, keepdims=True)) @ values
''',
        'gaussian_without_half': '''
import numpy as np
def nadaraya_watson(queries, keys, values, bandwidth=1.0, kernel="gaussian"):
    u = (queries[:, None] - keys[None, :]) / bandwidth
    if kernel == "gaussian":
        return softmax(-u ** 2, axis=1) @ values
    K = {"boxcar": (np.abs(u) <= 1) * 1.0,
         "triangular": np.maximum(0, 1 - np.abs(u)), "epanechnikov": np.maximum(0, 1 - u ** 2)}[kernel]
    return (K / K.sum(axis=1, keepdims=True)) @ values
''',
        'bandwidth_multiplied': '''
import numpy as np
def nadaraya_watson(queries, keys, values, bandwidth=1.0, kernel="gaussian"):
    u = (queries[:, None] - keys[None, :]) * bandwidth
    if kernel == "gaussian":
        return softmax(-u ** 2 / 2, axis=1) @ values
    K = {"boxcar": (np.abs(u) <= 1) * 1.0,
         "triangular": np.maximum(0, 1 - np.abs(u)), "epanechnikov": np.maximum(0, 1 - u ** 2)}[kernel]
    return (K / K.sum(axis=1, keepdims=True)) @ values
''',
        'normalised_over_queries': '''
import numpy as np
def nadaraya_watson(queries, keys, values, bandwidth=1.0, kernel="gaussian"):
    u = (queries[:, None] - keys[None, :]) / bandwidth
    if kernel == "gaussian":
        return softmax(-u ** 2 / 2, axis=0) @ values
    K = {"boxcar": (np.abs(u) <= 1) * 1.0,
         "triangular": np.maximum(0, 1 - np.abs(u)), "epanechnikov": np.maximum(0, 1 - u ** 2)}[kernel]
    return (K / K.sum(axis=0, keepdims=True)) @ values
''',
    },
    'masked_softmax': {
        'off_by_one': '''
import numpy as np
def masked_softmax(scores, valid_lens):
    B, T_q, T_k = scores.shape
    lens = np.asarray(valid_lens)
    if lens.ndim == 1:
        lens = np.broadcast_to(lens[:, None], (B, T_q))
    allowed = np.arange(T_k) <= lens[..., None]
    return softmax(np.where(allowed, scores, -np.inf), axis=-1)
''',
        'masked_scores_set_to_zero': '''
import numpy as np
def masked_softmax(scores, valid_lens):
    B, T_q, T_k = scores.shape
    lens = np.asarray(valid_lens)
    if lens.ndim == 1:
        lens = np.broadcast_to(lens[:, None], (B, T_q))
    allowed = np.arange(T_k) < lens[..., None]
    return softmax(scores * allowed, axis=-1)
''',
        'weights_zeroed_without_renormalising': '''
import numpy as np
def masked_softmax(scores, valid_lens):
    B, T_q, T_k = scores.shape
    lens = np.asarray(valid_lens)
    if lens.ndim == 1:
        lens = np.broadcast_to(lens[:, None], (B, T_q))
    allowed = np.arange(T_k) < lens[..., None]
    return softmax(scores, axis=-1) * allowed
''',
        'per_query_lengths_ignored': '''
import numpy as np
def masked_softmax(scores, valid_lens):
    B, T_q, T_k = scores.shape
    lens = np.asarray(valid_lens)
    if lens.ndim == 2:
        lens = lens[:, 0]
    allowed = np.arange(T_k)[None, None, :] < lens[:, None, None]
    return softmax(np.where(allowed, scores, -np.inf), axis=-1)
''',
        'mutates_scores': '''
import numpy as np
def masked_softmax(scores, valid_lens):
    B, T_q, T_k = scores.shape
    lens = np.asarray(valid_lens)
    if lens.ndim == 1:
        lens = np.broadcast_to(lens[:, None], (B, T_q))
    allowed = np.arange(T_k) < lens[..., None]
    scores[~allowed] = -1e9
    return softmax(scores, axis=-1)
''',
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
        'softmax_over_queries': '''
import numpy as np
def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-2)
    return weights @ V, weights
''',
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
    },
    'causal_mask': {
        'strictly_below_diagonal': swap('))', '), k=-1)'),
        'upper_triangle': swap('tril', 'triu'),
        'float_mask': swap(', dtype=bool', ''),
        'true_means_blocked': swap('tril(np.ones((T, T), dtype=bool)', 'triu(np.ones((T, T), dtype=bool), k=1'),
    },
    'multi_head_attention': {
        'scaled_by_sqrt_d': '''
import numpy as np
def multi_head_attention(Xq, Xkv, W_q, W_k, W_v, W_o, n_heads, mask=None):
    B, T_q, d = Xq.shape
    dh = d // n_heads
    def heads(X, W):
        Y = X @ W.T
        return Y.reshape(Y.shape[0], Y.shape[1], n_heads, dh).transpose(0, 2, 1, 3)
    Q, K, V = heads(Xq, W_q), heads(Xkv, W_k), heads(Xkv, W_v)
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d)
    if mask is not None:
        mask = np.asarray(mask)
        S = np.where(mask[:, None] if mask.ndim == 3 else mask, S, -np.inf)
    out = softmax(S, axis=-1) @ V
    return out.transpose(0, 2, 1, 3).reshape(B, T_q, d) @ W_o.T
''',
        'interleaved_heads': '''
import numpy as np
def multi_head_attention(Xq, Xkv, W_q, W_k, W_v, W_o, n_heads, mask=None):
    B, T_q, d = Xq.shape
    dh = d // n_heads
    def heads(X, W):
        Y = X @ W.T
        return Y.reshape(Y.shape[0], Y.shape[1], dh, n_heads).transpose(0, 3, 1, 2)
    Q, K, V = heads(Xq, W_q), heads(Xkv, W_k), heads(Xkv, W_v)
    if mask is not None:
        mask = np.asarray(mask)
        mask = mask[:, None] if mask.ndim == 3 else mask
    out, _ = scaled_dot_product_attention(Q, K, V, mask)
    return out.transpose(0, 2, 3, 1).reshape(B, T_q, d) @ W_o.T
''',
        'reshape_without_transpose': '''
import numpy as np
def multi_head_attention(Xq, Xkv, W_q, W_k, W_v, W_o, n_heads, mask=None):
    B, T_q, d = Xq.shape
    dh = d // n_heads
    def heads(X, W):
        Y = X @ W.T
        return Y.reshape(Y.shape[0], n_heads, Y.shape[1], dh)
    Q, K, V = heads(Xq, W_q), heads(Xkv, W_k), heads(Xkv, W_v)
    if mask is not None:
        mask = np.asarray(mask)
        mask = mask[:, None] if mask.ndim == 3 else mask
    out, _ = scaled_dot_product_attention(Q, K, V, mask)
    return out.reshape(B, T_q, d) @ W_o.T
''',
        'weights_not_transposed': '''
import numpy as np
def multi_head_attention(Xq, Xkv, W_q, W_k, W_v, W_o, n_heads, mask=None):
    B, T_q, d = Xq.shape
    dh = d // n_heads
    def heads(X, W):
        Y = X @ W
        return Y.reshape(Y.shape[0], Y.shape[1], n_heads, dh).transpose(0, 2, 1, 3)
    Q, K, V = heads(Xq, W_q), heads(Xkv, W_k), heads(Xkv, W_v)
    if mask is not None:
        mask = np.asarray(mask)
        mask = mask[:, None] if mask.ndim == 3 else mask
    out, _ = scaled_dot_product_attention(Q, K, V, mask)
    return out.transpose(0, 2, 1, 3).reshape(B, T_q, d) @ W_o
''',
        'no_output_projection': '''
import numpy as np
def multi_head_attention(Xq, Xkv, W_q, W_k, W_v, W_o, n_heads, mask=None):
    B, T_q, d = Xq.shape
    dh = d // n_heads
    def heads(X, W):
        Y = X @ W.T
        return Y.reshape(Y.shape[0], Y.shape[1], n_heads, dh).transpose(0, 2, 1, 3)
    Q, K, V = heads(Xq, W_q), heads(Xkv, W_k), heads(Xkv, W_v)
    if mask is not None:
        mask = np.asarray(mask)
        mask = mask[:, None] if mask.ndim == 3 else mask
    out, _ = scaled_dot_product_attention(Q, K, V, mask)
    return out.transpose(0, 2, 1, 3).reshape(B, T_q, d)
''',
        'batch_mask_broadcast_over_heads_axis': '''
import numpy as np
def multi_head_attention(Xq, Xkv, W_q, W_k, W_v, W_o, n_heads, mask=None):
    B, T_q, d = Xq.shape
    dh = d // n_heads
    def heads(X, W):
        Y = X @ W.T
        return Y.reshape(Y.shape[0], Y.shape[1], n_heads, dh).transpose(0, 2, 1, 3)
    Q, K, V = heads(Xq, W_q), heads(Xkv, W_k), heads(Xkv, W_v)
    if mask is not None and np.asarray(mask).ndim == 2:
        out, _ = scaled_dot_product_attention(Q, K, V, mask)
    else:
        out, _ = scaled_dot_product_attention(Q, K, V)
    return out.transpose(0, 2, 1, 3).reshape(B, T_q, d) @ W_o.T
''',
    },
    'positional_encoding': {
        'column_index_exponent': '''
import numpy as np
def positional_encoding(T, d):
    j = np.arange(d)
    angles = np.arange(T)[:, None] / 10000.0 ** (j / d)
    return np.where(j % 2 == 0, np.sin(angles), np.cos(angles))
''',
        'sin_cos_swapped': '''
import numpy as np
def positional_encoding(T, d):
    angles = np.arange(T)[:, None] / 10000.0 ** (np.arange(0, d, 2) / d)
    PE = np.zeros((T, d))
    PE[:, 0::2] = np.cos(angles)
    PE[:, 1::2] = np.sin(angles[:, : d // 2])
    return PE
''',
        'positions_from_one': swap(
            '''positions = np.arange(T)[:, None]
    two_i = np.arange(0, d, 2)                          # 2i for every sine column
    angles = positions / 10000.0 ** (two_i / d)         # (T, ceil(d / 2)''',
            'angles = np.arange(1, T + 1)[:, None] / 10000.0 ** (np.arange(0, d, 2) / d'),
        'sines_then_cosines': '''
import numpy as np
def positional_encoding(T, d):
    angles = np.arange(T)[:, None] / 10000.0 ** (np.arange(0, d, 2) / d)
    return np.concatenate([np.sin(angles), np.cos(angles[:, : d // 2])], axis=1)
''',
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
        'plain_reshape': '''
import numpy as np
def patchify(images, p):
    N, C, H, W = images.shape
    return images.reshape(N, (H // p) * (W // p), C * p * p)
''',
        'channels_last_in_patch': '''
import numpy as np
def patchify(images, p):
    N, C, H, W = images.shape
    x = images.reshape(N, C, H // p, p, W // p, p).transpose(0, 2, 4, 3, 5, 1)
    return x.reshape(N, (H // p) * (W // p), C * p * p)
''',
        'column_major_patches': '''
import numpy as np
def patchify(images, p):
    N, C, H, W = images.shape
    x = images.reshape(N, C, H // p, p, W // p, p).transpose(0, 4, 2, 1, 3, 5)
    return x.reshape(N, (H // p) * (W // p), C * p * p)
''',
        'casts_to_float': '''
import numpy as np
def patchify(images, p):
    N, C, H, W = images.shape
    x = images.astype(float).reshape(N, C, H // p, p, W // p, p).transpose(0, 2, 4, 1, 3, 5)
    return x.reshape(N, (H // p) * (W // p), C * p * p)
''',
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
    'sample_token': {
        'multiplies_by_temperature': swap(') / temperature', ') * temperature'),
        'ignores_temperature': '''
import numpy as np
def sample_token(logits, temperature, rng, top_k=None):
    z = np.asarray(logits, dtype=float)
    V = z.shape[0]
    if top_k is not None and top_k < V:
        keep = np.argsort(-z, kind="stable")[:top_k]
        kept = np.full(V, -np.inf)
        kept[keep] = z[keep]
        z = kept
    p = np.exp(z - z.max())
    return int(rng.choice(V, p=p / p.sum()))
''',
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
        'greedy': '''
import numpy as np
def sample_token(logits, temperature, rng, top_k=None):
    return int(np.argmax(logits))
''',
        'inverse_cdf_with_integers': swap(
            'rng.choice(V, p=p / p.sum()',
            'np.searchsorted(np.cumsum(p / p.sum()), rng.integers(0, 2 ** 31) / 2 ** 31'),
        'unstable_softmax': '''
import numpy as np
def sample_token(logits, temperature, rng, top_k=None):
    z = np.asarray(logits, dtype=float) / temperature
    V = z.shape[0]
    if top_k is not None and top_k < V:
        keep = np.argsort(-z, kind="stable")[:top_k]
        kept = np.full(V, -np.inf)
        kept[keep] = z[keep]
        z = kept
    p = np.exp(z)
    return int(rng.choice(V, p=p / p.sum()))
''',
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
        'every_target_masked': '''
import numpy as np
def bert_mask(tokens, mask_id, vocab_size, rng, p=0.15):
    is_target = rng.random(tokens.shape) < p
    corrupted = tokens.copy()
    corrupted[is_target] = mask_id
    return corrupted, is_target
''',
        'independent_draws': '''
import numpy as np
def bert_mask(tokens, mask_id, vocab_size, rng, p=0.15):
    is_target = rng.random(tokens.shape) < p
    to_mask = is_target & (rng.random(tokens.shape) < 0.8)
    to_random = is_target & ~to_mask & (rng.random(tokens.shape) < 0.1)
    corrupted = tokens.copy()
    corrupted[to_mask] = mask_id
    corrupted[to_random] = rng.integers(0, vocab_size, size=int(to_random.sum()))
    return corrupted, is_target
''',
        'is_target_only_masked': '''
import numpy as np
def bert_mask(tokens, mask_id, vocab_size, rng, p=0.15):
    chosen = rng.random(tokens.shape) < p
    r = rng.random(tokens.shape)
    corrupted = tokens.copy()
    to_random = chosen & (r >= 0.8) & (r < 0.9)
    corrupted[chosen & (r < 0.8)] = mask_id
    corrupted[to_random] = rng.integers(0, vocab_size, size=int(to_random.sum()))
    return corrupted, corrupted == mask_id
''',
        'p_ignored': '''
import numpy as np
def bert_mask(tokens, mask_id, vocab_size, rng, p=0.15):
    is_target = rng.random(tokens.shape) < 0.15
    r = rng.random(tokens.shape)
    corrupted = tokens.copy()
    to_random = is_target & (r >= 0.8) & (r < 0.9)
    corrupted[is_target & (r < 0.8)] = mask_id
    corrupted[to_random] = rng.integers(0, vocab_size, size=int(to_random.sum()))
    return corrupted, is_target
''',
        'global_random_state': '''
import numpy as np
def bert_mask(tokens, mask_id, vocab_size, rng, p=0.15):
    is_target = np.random.random(tokens.shape) < p
    r = np.random.random(tokens.shape)
    corrupted = tokens.copy()
    to_random = is_target & (r >= 0.8) & (r < 0.9)
    corrupted[is_target & (r < 0.8)] = mask_id
    corrupted[to_random] = np.random.randint(0, vocab_size, size=int(to_random.sum()))
    return corrupted, is_target
''',
        'dtype_promoted': '''
import numpy as np
def bert_mask(tokens, mask_id, vocab_size, rng, p=0.15):
    is_target = rng.random(tokens.shape) < p
    r = rng.random(tokens.shape)
    random_tokens = rng.integers(0, vocab_size, size=tokens.shape)
    corrupted = np.where(is_target & (r < 0.8), mask_id,
                         np.where(is_target & (r < 0.9), random_tokens, tokens))
    return corrupted, is_target
''',
        'mutates_tokens': '''
import numpy as np
def bert_mask(tokens, mask_id, vocab_size, rng, p=0.15):
    is_target = rng.random(tokens.shape) < p
    r = rng.random(tokens.shape)
    corrupted = tokens
    to_random = is_target & (r >= 0.8) & (r < 0.9)
    corrupted[is_target & (r < 0.8)] = mask_id
    corrupted[to_random] = rng.integers(0, vocab_size, size=int(to_random.sum()))
    return corrupted, is_target
''',
        'random_tokens_everywhere': '''
import numpy as np
def bert_mask(tokens, mask_id, vocab_size, rng, p=0.15):
    is_target = rng.random(tokens.shape) < p
    r = rng.random(tokens.shape)
    corrupted = tokens.copy()
    to_random = (r >= 0.8) & (r < 0.9)
    corrupted[is_target & (r < 0.8)] = mask_id
    corrupted[to_random] = rng.integers(0, vocab_size, size=int(to_random.sum()))
    return corrupted, is_target
''',
    },
}

# Mistakes in the pieces the integration check uses that must make it fail, not only their own cell.
INTEGRATION = {
    "test_char_transformer": ["causal_mask/upper_triangle", "multi_head_attention/scaled_by_sqrt_d",
                              "multi_head_attention/no_output_projection", "transformer_block/post_ln",
                              "transformer_block/residual_from_normalised_stream", "transformer_block/mask_ignored",
                              "sample_token/ignores_temperature", "sample_token/keeps_smallest_logits"],
}
