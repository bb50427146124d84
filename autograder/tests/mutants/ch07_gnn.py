"""Plausible mistakes in the graded functions of ch07_gnn: each must make its test cell fail.

Written as edits of the reference solutions (``swap``) or, where an edit cannot say it, as the
whole solution cell; the format and the loader are in autograder/tests/mutants/__init__.py.
"""
from autograder.tests.mutants import swap

MUTANTS = {
    'is_permutation_equivariant': {
        'rows_of_A_only': '''
import numpy as np
def is_permutation_equivariant(f, X, A, rng, trials=5):
    ref = np.asarray(f(X, A))
    for _ in range(trials):
        perm = rng.permutation(len(A))
        if np.max(np.abs(np.asarray(f(X[perm], A[perm])) - ref[perm])) > 1e-8:
            return False
    return True
''',
        'output_not_permuted': '''
import numpy as np
def is_permutation_equivariant(f, X, A, rng, trials=5):
    ref = np.asarray(f(X, A))
    for _ in range(trials):
        perm = rng.permutation(len(A))
        if np.max(np.abs(np.asarray(f(X[perm], A[perm][:, perm])) - ref)) > 1e-8:
            return False
    return True
''',
        'global_random_state': '''
import numpy as np
def is_permutation_equivariant(f, X, A, rng, trials=5):
    ref = np.asarray(f(X, A))
    for _ in range(trials):
        perm = np.random.permutation(len(A))
        if np.max(np.abs(np.asarray(f(X[perm], A[perm][:, perm])) - ref[perm])) > 1e-8:
            return False
    return True
''',
        'one_permutation_for_all_trials': '''
import numpy as np
def is_permutation_equivariant(f, X, A, rng, trials=5):
    ref = np.asarray(f(X, A))
    perm = rng.permutation(len(A))
    for _ in range(trials):
        if np.max(np.abs(np.asarray(f(X[perm], A[perm][:, perm])) - ref[perm])) > 1e-8:
            return False
    return True
''',
        'allclose_relative_tolerance': '''
import numpy as np
def is_permutation_equivariant(f, X, A, rng, trials=5):
    ref = np.asarray(f(X, A))
    for _ in range(trials):
        perm = rng.permutation(len(A))
        if not np.allclose(f(X[perm], A[perm][:, perm]), ref[perm]):
            return False
    return True
''',
        'exact_equality': '''
import numpy as np
def is_permutation_equivariant(f, X, A, rng, trials=5):
    ref = np.asarray(f(X, A))
    for _ in range(trials):
        perm = rng.permutation(len(A))
        if not np.array_equal(f(X[perm], A[perm][:, perm]), ref[perm]):
            return False
    return True
''',
        'inverse_permutation': '''
import numpy as np
def is_permutation_equivariant(f, X, A, rng, trials=5):
    ref = np.asarray(f(X, A))
    for _ in range(trials):
        perm = rng.permutation(len(A))
        if np.max(np.abs(np.asarray(f(X[perm], A[perm][:, perm])) - ref[np.argsort(perm)])) > 1e-8:
            return False
    return True
''',
    },
    'normalized_adjacency': {
        'no_self_loops': '''
import numpy as np
def normalized_adjacency(A):
    d = 1.0 + A.sum(axis=0)
    return A / np.sqrt(np.outer(d, d))
''',
        'degree_without_self_loop': '''
import numpy as np
def normalized_adjacency(A):
    d = A.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (A + np.eye(len(A))) / np.sqrt(np.outer(d, d))
''',
        'random_walk_normalisation': '''
import numpy as np
def normalized_adjacency(A):
    d = 1.0 + A.sum(axis=0)
    return (A + np.eye(len(A))) / d[:, None]
''',
        'mutates_input': '''
import numpy as np
def normalized_adjacency(A):
    A += np.eye(len(A), dtype=A.dtype)
    d = A.sum(axis=0)
    return A / np.sqrt(np.outer(d, d))
''',
        'no_square_root': '''
import numpy as np
def normalized_adjacency(A):
    d = 1.0 + A.sum(axis=0)
    return (A + np.eye(len(A))) / np.outer(d, d)
''',
    },
    'gcn_forward': {
        'no_relu': swap(
            '''H = np.maximum(Ahat @ np.asarray(X, dtype=float) @ W0, 0.0)
    Z = Ahat @ H @ W1
    Z = Z - Z.max(axis=1, keepdims=True)
    E = np.exp(Z''',
            '''Z = Ahat @ (Ahat @ X @ W0) @ W1
    E = np.exp(Z - Z.max(axis=1, keepdims=True)'''),
        'softmax_over_nodes': '''
import numpy as np
def gcn_forward(A, X, W0, W1):
    Ahat = normalized_adjacency(A)
    Z = Ahat @ np.maximum(Ahat @ X @ W0, 0) @ W1
    E = np.exp(Z - Z.max(axis=0, keepdims=True))
    return E / E.sum(axis=0, keepdims=True)
''',
        'unstable_softmax': swap(
            '''H = np.maximum(Ahat @ np.asarray(X, dtype=float) @ W0, 0.0)
    Z = Ahat @ H @ W1
    Z = Z - Z.max(axis=1, keepdims=True)''',
            'Z = Ahat @ np.maximum(Ahat @ X @ W0, 0) @ W1'),
        'raw_adjacency': '''
import numpy as np
def gcn_forward(A, X, W0, W1):
    Z = A @ np.maximum(A @ X @ W0, 0) @ W1
    E = np.exp(Z - Z.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)
''',
        'propagate_once': swap(
            '''H = np.maximum(Ahat @ np.asarray(X, dtype=float) @ W0, 0.0)
    Z = Ahat @ H @ W1
    Z = Z - Z.max(axis=1, keepdims=True)
    E = np.exp(Z''',
            '''Z = np.maximum(Ahat @ X @ W0, 0) @ W1
    E = np.exp(Z - Z.max(axis=1, keepdims=True)'''),
    },
    'laplacian': {
        'sign_flipped': '''
import numpy as np
def laplacian(A, normalized=False):
    d = A.sum(axis=1)
    if normalized:
        return A / np.sqrt(np.outer(d, d)) - np.eye(len(A))
    return A - np.diag(d)
''',
        'normalized_with_self_loops': '''
import numpy as np
def laplacian(A, normalized=False):
    d = A.sum(axis=1)
    if normalized:
        return np.eye(len(A)) - (A + np.eye(len(A))) / np.sqrt(np.outer(d + 1, d + 1))
    return np.diag(d) - A
''',
        'normalized_random_walk': '''
import numpy as np
def laplacian(A, normalized=False):
    d = A.sum(axis=1)
    if normalized:
        return np.eye(len(A)) - A / d[:, None]
    return np.diag(d) - A
''',
        'normalized_ignored': '''
import numpy as np
def laplacian(A, normalized=False):
    return np.diag(A.sum(axis=1)) - A
''',
        'degree_plus_one': '''
import numpy as np
def laplacian(A, normalized=False):
    d = A.sum(axis=1) + 1
    if normalized:
        return np.eye(len(A)) - A / np.sqrt(np.outer(d, d))
    return np.diag(d) - A
''',
    },
    'dirichlet_energy': {
        'no_half': '''
import numpy as np
def dirichlet_energy(X, A):
    diff = X[:, None, :] - X[None, :, :]
    return float(np.sum(A * np.sum(diff ** 2, axis=-1)))
''',
        'norm_not_squared': '''
import numpy as np
def dirichlet_energy(X, A):
    diff = X[:, None, :] - X[None, :, :]
    return float(0.5 * np.sum(A * np.linalg.norm(diff, axis=-1)))
''',
        'first_feature_only': '''
import numpy as np
def dirichlet_energy(X, A):
    x = X[:, 0]
    return float(x @ (np.diag(A.sum(axis=1)) - A) @ x)
''',
        'signless_laplacian': '''
import numpy as np
def dirichlet_energy(X, A):
    return float(np.trace(X.T @ (np.diag(A.sum(axis=1)) + A) @ X))
''',
        'normalized_laplacian': '''
import numpy as np
def dirichlet_energy(X, A):
    d = A.sum(axis=1)
    L = np.eye(len(A)) - A / np.sqrt(np.outer(d, d))
    return float(np.trace(X.T @ L @ X))
''',
        'returns_matrix': '''
import numpy as np
def dirichlet_energy(X, A):
    return X.T @ (np.diag(A.sum(axis=1)) - A) @ X
''',
    },
    'spectral_filter': {
        'eigh': '''
import numpy as np
def spectral_filter(L, x, alphas):
    lam, U = np.linalg.eigh(L)
    g = sum(a * lam ** k for k, a in enumerate(alphas))
    xh = U.T @ x
    return U @ (g[:, None] * xh if xh.ndim == 2 else g * xh)
''',
        'eig': '''
import numpy as np
def spectral_filter(L, x, alphas):
    lam, U = np.linalg.eig(L)
    g = sum(a * lam ** k for k, a in enumerate(alphas))
    xh = np.linalg.solve(U, x)
    return np.real(U @ (g[:, None] * xh if xh.ndim == 2 else g * xh))
''',
        'matrix_power': '''
import numpy as np
def spectral_filter(L, x, alphas):
    return sum(a * np.linalg.matrix_power(L, k) @ x for k, a in enumerate(alphas))
''',
        'matrix_products': '''
import numpy as np
def spectral_filter(L, x, alphas):
    P = np.eye(len(L))
    out = np.zeros(np.shape(x))
    for a in alphas:
        out = out + a * (P @ x)
        P = P @ L
    return out
''',
        'powers_off_by_one': '''
import numpy as np
def spectral_filter(L, x, alphas):
    v = np.array(x, dtype=float)
    out = np.zeros_like(v)
    for a in alphas:
        v = L @ v
        out = out + a * v
    return out
''',
        'horner_reversed': '''
import numpy as np
def spectral_filter(L, x, alphas):
    x = np.asarray(x, dtype=float)
    out = alphas[0] * x
    for a in alphas[1:]:
        out = L @ out + a * x
    return out
''',
        'mutates_x': '''
import numpy as np
def spectral_filter(L, x, alphas):
    v = x
    out = alphas[0] * x
    for a in alphas[1:]:
        v[...] = L @ v
        out = out + a * v
    return out
''',
    },
    'gat_coefficients': {
        'no_self_loops': '''
import numpy as np
def gat_coefficients(X, A, V, u, negative_slope=0.2):
    h = V.shape[0]
    Z = X @ V.T
    E = (Z @ u[:h])[:, None] + (Z @ u[h:])[None, :]
    E = np.where(E > 0, E, negative_slope * E)
    allowed = A != 0
    E = np.where(allowed, E, -np.inf)
    m = np.max(np.where(allowed, E, -1e300), axis=1, keepdims=True)
    W = np.where(allowed, np.exp(E - m), 0.0)
    s = W.sum(axis=1, keepdims=True)
    return W / np.where(s == 0, 1.0, s)
''',
        'no_mask': '''
import numpy as np
def gat_coefficients(X, A, V, u, negative_slope=0.2):
    h = V.shape[0]
    Z = X @ V.T
    E = (Z @ u[:h])[:, None] + (Z @ u[h:])[None, :]
    E = np.where(E > 0, E, negative_slope * E)
    W = np.exp(E - E.max(axis=1, keepdims=True))
    return W / W.sum(axis=1, keepdims=True)
''',
        'halves_swapped': '''
import numpy as np
def gat_coefficients(X, A, V, u, negative_slope=0.2):
    h = V.shape[0]
    Z = X @ V.T
    E = (Z @ u[h:])[:, None] + (Z @ u[:h])[None, :]
    E = np.where(E > 0, E, negative_slope * E)
    allowed = (A != 0) | np.eye(len(A), dtype=bool)
    E = np.where(allowed, E, -np.inf)
    W = np.where(allowed, np.exp(E - E.max(axis=1, keepdims=True)), 0.0)
    return W / W.sum(axis=1, keepdims=True)
''',
        'softmax_over_columns': '''
import numpy as np
def gat_coefficients(X, A, V, u, negative_slope=0.2):
    h = V.shape[0]
    Z = X @ V.T
    E = (Z @ u[:h])[:, None] + (Z @ u[h:])[None, :]
    E = np.where(E > 0, E, negative_slope * E)
    allowed = (A != 0) | np.eye(len(A), dtype=bool)
    E = np.where(allowed, E, -np.inf)
    W = np.where(allowed, np.exp(E - E.max(axis=0, keepdims=True)), 0.0)
    return W / W.sum(axis=0, keepdims=True)
''',
        'unstable_exp': '''
import numpy as np
def gat_coefficients(X, A, V, u, negative_slope=0.2):
    h = V.shape[0]
    Z = X @ V.T
    E = (Z @ u[:h])[:, None] + (Z @ u[h:])[None, :]
    E = np.where(E > 0, E, negative_slope * E)
    allowed = (A != 0) | np.eye(len(A), dtype=bool)
    W = np.where(allowed, np.exp(E), 0.0)
    return W / W.sum(axis=1, keepdims=True)
''',
        'slope_ignored': '''
import numpy as np
def gat_coefficients(X, A, V, u, negative_slope=0.2):
    h = V.shape[0]
    Z = X @ V.T
    E = (Z @ u[:h])[:, None] + (Z @ u[h:])[None, :]
    E = np.where(E > 0, E, 0.2 * E)
    allowed = (A != 0) | np.eye(len(A), dtype=bool)
    E = np.where(allowed, E, -np.inf)
    W = np.where(allowed, np.exp(E - E.max(axis=1, keepdims=True)), 0.0)
    return W / W.sum(axis=1, keepdims=True)
''',
        'mask_after_softmax': '''
import numpy as np
def gat_coefficients(X, A, V, u, negative_slope=0.2):
    h = V.shape[0]
    Z = X @ V.T
    E = (Z @ u[:h])[:, None] + (Z @ u[h:])[None, :]
    E = np.where(E > 0, E, negative_slope * E)
    W = np.exp(E - E.max(axis=1, keepdims=True))
    W = W / W.sum(axis=1, keepdims=True)
    return np.where((A != 0) | np.eye(len(A), dtype=bool), W, 0.0)
''',
    },
    'wl_colors': {
        'updates_colours_in_place': '''
import numpy as np
def wl_colors(A, iterations):
    M = len(A)
    colours = [0] * M
    for _ in range(iterations):
        table = {}
        for i in range(M):
            sig = (colours[i], tuple(sorted(colours[j] for j in np.flatnonzero(A[i]))))
            colours[i] = table.setdefault(sig, len(table))
    return np.array(colours, dtype=int)
''',
        'set_not_multiset': swap(
            ('''A = np.asarray(A)
    M = A.shape[0]
    neighbours = [np.flatnonzero(A[i]) for i in range(M)]''',
             'M = len(A)'),
            ('signatures = [(colours[i], tuple(sorted(colours[j] for j in neighbours[i]',
             'sigs = [(colours[i], tuple(sorted(set(colours[j] for j in np.flatnonzero(A[i]))'),
            ('sig, len(table)) for sig in signatures',
             's, len(table)) for s in sigs'),
        ),
        'sorted_numbering': swap(
            ('''A = np.asarray(A)
    M = A.shape[0]
    neighbours = [np.flatnonzero(A[i]) for i in range(M)]''',
             'M = len(A)'),
            ('''signatures = [(colours[i], tuple(sorted(colours[j] for j in neighbours[i]))) for i in range(M)]
        table = {}
        colours = [table.setdefault(sig, len(table)) for sig in signatures''',
             '''sigs = [(colours[i], tuple(sorted(colours[j] for j in np.flatnonzero(A[i])))) for i in range(M)]
        order = sorted(set(sigs))
        colours = [order.index(s) for s in sigs'''),
        ),
        'one_round_too_many': swap(
            ('''A = np.asarray(A)
    M = A.shape[0]
    neighbours = [np.flatnonzero(A[i]) for i in range(M)]''',
             'M = len(A)'),
            ('''):
        signatures = [(colours[i], tuple(sorted(colours[j] for j in neighbours[i]''',
             ''' + 1):
        sigs = [(colours[i], tuple(sorted(colours[j] for j in np.flatnonzero(A[i])'''),
            ('sig, len(table)) for sig in signatures',
             's, len(table)) for s in sigs'),
        ),
        'neighbour_colour_sum': '''
import numpy as np
def wl_colors(A, iterations):
    M = len(A)
    colours = np.zeros(M, dtype=int)
    for _ in range(iterations):
        sigs = [(int(colours[i]), int(A[i] @ colours)) for i in range(M)]
        table = {}
        colours = np.array([table.setdefault(s, len(table)) for s in sigs])
    return colours
''',
        'degree_only': '''
import numpy as np
def wl_colors(A, iterations):
    if iterations == 0:
        return np.zeros(len(A), dtype=int)
    table = {}
    return np.array([table.setdefault(int(d), len(table)) for d in A.sum(axis=1)])
''',
        'degree_and_colour_sum_signature': '''
import numpy as np
def wl_colors(A, iterations):
    M = len(A)
    colours = np.zeros(M, dtype=int)
    for _ in range(iterations):
        sigs = [(int(colours[i]), int(A[i].sum()), int(A[i] @ colours)) for i in range(M)]
        table = {}
        colours = np.array([table.setdefault(s, len(table)) for s in sigs])
    return colours
''',
        'string_signature_collides': swap(
            ('''A = np.asarray(A)
    M = A.shape[0]
    neighbours = [np.flatnonzero(A[i]) for i in range(M)]''',
             'M = len(A)'),
            ('signatures = [(colours[i], tuple(sorted(colours[j] for j in neighbours[i])))',
             '''sigs = [str(colours[i]) + "".join(str(colours[j])
                                      for j in sorted(np.flatnonzero(A[i]), key=lambda j: colours[j]))
               '''),
            ('sig, len(table)) for sig in signatures',
             's, len(table)) for s in sigs'),
        ),
    },
    'wl_distinguishes': {
        'separate_refinement': '''
import numpy as np
def wl_distinguishes(A1, A2, iterations):
    if len(A1) != len(A2):
        return True
    c1, c2 = wl_colors(A1, iterations), wl_colors(A2, iterations)
    return bool(sorted(c1.tolist()) != sorted(c2.tolist()))
''',
        'sets_of_colours': '''
import numpy as np
def wl_distinguishes(A1, A2, iterations):
    if len(A1) != len(A2):
        return True
    M = len(A1)
    U = np.zeros((2 * M, 2 * M))
    U[:M, :M], U[M:, M:] = A1, A2
    c = wl_colors(U, iterations)
    return set(c[:M].tolist()) != set(c[M:].tolist())
''',
        'sizes_not_checked': '''
import numpy as np
def wl_distinguishes(A1, A2, iterations):
    M1, M2 = len(A1), len(A2)
    U = np.zeros((M1 + M2, M1 + M2))
    U[:M1, :M1], U[M1:, M1:] = A1, A2
    c = wl_colors(U, iterations)
    n = c.max() + 1
    h1 = np.bincount(c[:M1], minlength=n) / M1
    h2 = np.bincount(c[M1:], minlength=n) / M2
    return bool(np.any(h1 != h2))
''',
        'number_of_colours': '''
import numpy as np
def wl_distinguishes(A1, A2, iterations):
    if len(A1) != len(A2):
        return True
    M = len(A1)
    U = np.zeros((2 * M, 2 * M))
    U[:M, :M], U[M:, M:] = A1, A2
    c = wl_colors(U, iterations)
    return len(set(c[:M].tolist())) != len(set(c[M:].tolist()))
''',
        'one_round_fewer': '''
import numpy as np
def wl_distinguishes(A1, A2, iterations):
    if len(A1) != len(A2):
        return True
    M = len(A1)
    U = np.zeros((2 * M, 2 * M))
    U[:M, :M], U[M:, M:] = A1, A2
    c = wl_colors(U, max(iterations - 1, 0))
    n = c.max() + 1
    return bool(np.any(np.bincount(c[:M], minlength=n) != np.bincount(c[M:], minlength=n)))
''',
    },
    'gin_layer': {
        'mean_aggregation': '''
import numpy as np
def gin_layer(A, X, W1, b1, W2, b2, eps=0.0):
    deg = np.maximum(A.sum(axis=1, keepdims=True), 1)
    return np.maximum(((1 + eps) * X + A @ X / deg) @ W1 + b1, 0) @ W2 + b2
''',
        'eps_on_the_neighbours': '''
import numpy as np
def gin_layer(A, X, W1, b1, W2, b2, eps=0.0):
    return np.maximum((X + (1 + eps) * (A @ X)) @ W1 + b1, 0) @ W2 + b2
''',
        'relu_after_the_last_layer': '''
import numpy as np
def gin_layer(A, X, W1, b1, W2, b2, eps=0.0):
    return np.maximum(np.maximum(((1 + eps) * X + A @ X) @ W1 + b1, 0) @ W2 + b2, 0)
''',
        'no_self_term': '''
import numpy as np
def gin_layer(A, X, W1, b1, W2, b2, eps=0.0):
    return np.maximum((eps * X + A @ X) @ W1 + b1, 0) @ W2 + b2
''',
        'default_eps_0_1': '''
import numpy as np
def gin_layer(A, X, W1, b1, W2, b2, eps=0.1):
    return np.maximum(((1 + eps) * X + A @ X) @ W1 + b1, 0) @ W2 + b2
''',
        'forgot_b1': '''
import numpy as np
def gin_layer(A, X, W1, b1, W2, b2, eps=0.0):
    return np.maximum(((1 + eps) * X + A @ X) @ W1, 0) @ W2 + b2
''',
        'adds_eps_to_A_in_place': '''
import numpy as np
def gin_layer(A, X, W1, b1, W2, b2, eps=0.0):
    A += (1 + eps) * np.eye(len(A))
    return np.maximum((A @ X) @ W1 + b1, 0) @ W2 + b2
''',
    },
    'graph_readout': {
        'default_mean': '''
import numpy as np
def graph_readout(H, graph_ids, n_graphs, how="mean"):
    out = np.zeros((n_graphs, H.shape[1]))
    np.add.at(out, graph_ids, H)
    if how == "sum":
        return out
    if how == "mean":
        return out / np.bincount(graph_ids, minlength=n_graphs)[:, None]
    res = np.full((n_graphs, H.shape[1]), -np.inf)
    np.maximum.at(res, graph_ids, H)
    return res
''',
        'max_starts_at_zero': '''
import numpy as np
def graph_readout(H, graph_ids, n_graphs, how="sum"):
    out = np.zeros((n_graphs, H.shape[1]))
    if how == "max":
        np.maximum.at(out, graph_ids, H)
        return out
    np.add.at(out, graph_ids, H)
    if how == "mean":
        out /= np.bincount(graph_ids, minlength=n_graphs)[:, None]
    return out
''',
        'fancy_index_add_drops_repeats': '''
import numpy as np
def graph_readout(H, graph_ids, n_graphs, how="sum"):
    out = np.zeros((n_graphs, H.shape[1]))
    if how == "max":
        return np.array([H[graph_ids == g].max(axis=0) for g in range(n_graphs)])
    out[graph_ids] += H
    if how == "mean":
        out /= np.bincount(graph_ids, minlength=n_graphs)[:, None]
    return out
''',
        'mean_over_all_nodes': '''
import numpy as np
def graph_readout(H, graph_ids, n_graphs, how="sum"):
    out = np.zeros((n_graphs, H.shape[1]))
    if how == "max":
        return np.array([H[graph_ids == g].max(axis=0) for g in range(n_graphs)])
    np.add.at(out, graph_ids, H)
    if how == "mean":
        out /= len(H)
    return out
''',
        'assumes_sorted_ids': '''
import numpy as np
def graph_readout(H, graph_ids, n_graphs, how="sum"):
    counts = np.bincount(graph_ids, minlength=n_graphs)
    parts = np.split(H, np.cumsum(counts)[:-1])
    return np.array([getattr(part, how)(axis=0) for part in parts])
''',
    },
    'edge_message_passing': {
        'source_and_target_swapped': '''
import numpy as np
def edge_message_passing(edge_index, X, n_nodes):
    source, target = edge_index
    out = np.zeros((n_nodes, X.shape[1]))
    np.add.at(out, source, X[target])
    return out
''',
        'fancy_index_add_drops_repeats': '''
import numpy as np
def edge_message_passing(edge_index, X, n_nodes):
    source, target = edge_index
    out = np.zeros((n_nodes, X.shape[1]))
    out[target] += X[source]
    return out
''',
        'dense_adjacency': '''
import numpy as np
def edge_message_passing(edge_index, X, n_nodes):
    A = np.zeros((n_nodes, n_nodes))
    np.add.at(A, (edge_index[1], edge_index[0]), 1.0)
    return A @ X
''',
        'mean_of_messages': '''
import numpy as np
def edge_message_passing(edge_index, X, n_nodes):
    source, target = edge_index
    out = np.zeros((n_nodes, X.shape[1]))
    np.add.at(out, target, X[source])
    return out / np.maximum(np.bincount(target, minlength=n_nodes), 1)[:, None]
''',
        'output_has_len_X_rows_of_targets_seen': '''
import numpy as np
def edge_message_passing(edge_index, X, n_nodes):
    source, target = edge_index
    if len(target) == 0:
        return np.zeros((0, X.shape[1]))
    out = np.zeros((target.max() + 1, X.shape[1]))
    np.add.at(out, target, X[source])
    return out
''',
    },
}

# Mistakes that must also fail the end-to-end ring-counting check (a GIN whose aggregation or
# readout loses the counts cannot count rings).
INTEGRATION = {
    "test_graph_classification": ["gin_layer/mean_aggregation", "graph_readout/fancy_index_add_drops_repeats",
                                  "graph_readout/mean_over_all_nodes"],
}
