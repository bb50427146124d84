"""Plausible mistakes in the graded functions of ch07_gnn (format: ``__init__.py`` here)."""
from autograder.tests.mutants import swap

MUTANTS = {
    'is_permutation_equivariant': {
        'rows_of_A_only': swap('A[perm][:, perm]))', 'A[perm]))'),
        'output_not_permuted': swap('reference[perm]', 'reference'),
        'global_random_state': swap('        perm = rng.permutation(M)', '        perm = np.random.permutation(M)'),
        'one_permutation_for_all_trials': swap(
            '''    for _ in range(trials):
        perm = rng.permutation(M)
''',
            '''    perm = rng.permutation(M)
    for _ in range(trials):
'''),
        'allclose_relative_tolerance': swap('np.max(np.abs(permuted - reference[perm])) > 1e-8',
                                            'not np.allclose(permuted, reference[perm])'),
        'exact_equality': swap('np.max(np.abs(permuted - reference[perm])) > 1e-8',
                               'not np.array_equal(permuted, reference[perm])'),
        'inverse_permutation': swap('reference[perm]', 'reference[np.argsort(perm)]'),
    },
    'normalized_adjacency': {
        'no_self_loops': swap('(A + np.eye(M))', 'A'),
        'degree_without_self_loop': swap(
            ('1.0 + A.sum(axis=0)', 'A.sum(axis=0)'),
            ('''    s = 1.0 / np.sqrt(d)
    return s[:, None] * (A + np.eye(M)) * s[None, :]''',
             '''    with np.errstate(divide="ignore", invalid="ignore"):
        s = 1.0 / np.sqrt(d)
        return s[:, None] * (A + np.eye(M)) * s[None, :]'''),
        ),
        'random_walk_normalisation': swap('s[:, None] * (A + np.eye(M)) * s[None, :]', '(A + np.eye(M)) / d[:, None]'),
        'mutates_input': swap(
            ('A = np.asarray(A, dtype=float)', 'A += np.eye(len(A), dtype=A.dtype)'),
            ('1.0 + A.sum(axis=0)', 'A.sum(axis=0)'),
            ('(A + np.eye(M))', 'A'),
        ),
        'no_square_root': swap('1.0 / np.sqrt(d)', '1.0 / d'),
    },
    'gcn_forward': {
        'no_relu': swap('np.maximum(Ahat @ np.asarray(X, dtype=float) @ W0, 0.0)',
                        'Ahat @ np.asarray(X, dtype=float) @ W0'),
        'softmax_over_nodes': swap(('Z.max(axis=1', 'Z.max(axis=0'), ('E.sum(axis=1', 'E.sum(axis=0')),
        'unstable_softmax': swap('    Z = Z - Z.max(axis=1, keepdims=True)\n', ''),
        'raw_adjacency': swap('Ahat = normalized_adjacency(A)', 'Ahat = A'),
        'propagate_once': swap('Z = Ahat @ H @ W1', 'Z = H @ W1'),
    },
    'laplacian': {
        'sign_flipped': swap(
            ('np.diag(deg) - A', 'A - np.diag(deg)'),
            ('np.eye(len(A)) - s[:, None] * A * s[None, :]', 's[:, None] * A * s[None, :] - np.eye(len(A))'),
        ),
        'normalized_with_self_loops': swap(('np.sqrt(deg)', 'np.sqrt(deg + 1)'),
                                           ('* A * s[None', '* (A + np.eye(len(A))) * s[None')),
        'normalized_random_walk': swap('s[:, None] * A * s[None, :]', 'A / deg[:, None]'),
        'normalized_ignored': swap('    if not normalized:\n        return', '    return'),
        'degree_plus_one': swap('deg = A.sum(axis=1)', 'deg = A.sum(axis=1) + 1'),
    },
    'dirichlet_energy': {
        'no_half': swap('float(np.sum(', 'float(2 * np.sum('),
        'norm_not_squared': swap(
            '''L = np.diag(A.sum(axis=1)) - A
    return float(np.sum(X * (L @ X)))''',
            '''diff = X[:, None, :] - X[None, :, :]
    return float(0.5 * np.sum(A * np.linalg.norm(diff, axis=-1)))'''),
        'first_feature_only': swap('np.sum(X * (L @ X))', 'X[:, 0] @ L @ X[:, 0]'),
        'signless_laplacian': swap('np.diag(A.sum(axis=1)) - A', 'np.diag(A.sum(axis=1)) + A'),
        'normalized_laplacian': swap('L = np.diag(A.sum(axis=1)) - A',
                                     'd = A.sum(axis=1)\n    L = np.eye(len(A)) - A / np.sqrt(np.outer(d, d))'),
        'returns_matrix': swap(('    if X.ndim == 1:\n        X = X[:, None]\n', ''),
                               ('float(np.sum(X * (L @ X)))', 'X.T @ L @ X')),
    },
    'spectral_filter': {
        # a different algorithm (eigendecomposition of L), not an edit of the matrix-vector loop: whole cell
        'eigh': '''
import numpy as np
def spectral_filter(L, x, alphas):
    lam, U = np.linalg.eigh(L)
    g = sum(a * lam ** k for k, a in enumerate(alphas))
    xh = U.T @ x
    return U @ (g[:, None] * xh if xh.ndim == 2 else g * xh)
''',
        # a different algorithm (eigendecomposition of L), not an edit of the matrix-vector loop: whole cell
        'eig': '''
import numpy as np
def spectral_filter(L, x, alphas):
    lam, U = np.linalg.eig(L)
    g = sum(a * lam ** k for k, a in enumerate(alphas))
    xh = np.linalg.solve(U, x)
    return np.real(U @ (g[:, None] * xh if xh.ndim == 2 else g * xh))
''',
        'matrix_power': swap(
            '''for alpha in alphas[1:]:
        v = L @ v
        out = out + alpha * v''',
            '''for k, alpha in enumerate(alphas[1:], 1):
        out = out + alpha * np.linalg.matrix_power(L, k) @ v'''),
        'matrix_products': swap(
            ('out = alphas[0] * v', 'P = np.eye(len(L))\n    out = alphas[0] * v'),
            ('v = L @ v', 'P = P @ L'),
            ('alpha * v', 'alpha * (P @ v)'),
        ),
        'powers_off_by_one': swap(('alphas[0] * v', 'np.zeros_like(v)'), ('alphas[1:]', 'alphas')),
        'horner_reversed': swap('v = L @ v\n        out = out + alpha * v', 'out = L @ out + alpha * v'),
        'mutates_x': swap(('np.array(x, dtype=float)', 'x'), ('v = L @ v', 'v[...] = L @ v')),
    },
    'gat_coefficients': {
        'no_self_loops': swap(
            ('(A != 0) | np.eye(len(A), dtype=bool)', 'A != 0'),
            ('E - E.max(axis=1, keepdims=True)', 'E - np.max(np.where(allowed, E, -1e300), axis=1, keepdims=True)'),
            ('return W / W.sum(axis=1, keepdims=True)',
             'total = W.sum(axis=1, keepdims=True)\n    return W / np.where(total == 0, 1.0, total)'),
        ),
        'no_mask': swap(
            ('''    allowed = (A != 0) | np.eye(len(A), dtype=bool)
    E = np.where(allowed, E, -np.inf)
''', ''),
            ('np.where(allowed, np.exp(E), 0.0)', 'np.exp(E)'),
        ),
        'halves_swapped': swap('E = s[:, None] + t[None, :]', 'E = t[:, None] + s[None, :]'),
        'softmax_over_columns': swap(('E.max(axis=1', 'E.max(axis=0'), ('W.sum(axis=1', 'W.sum(axis=0')),
        'unstable_exp': swap('    E = E - E.max(axis=1, keepdims=True)\n', ''),
        'slope_ignored': swap('negative_slope * E', '0.2 * E'),
        'mask_after_softmax': swap(
            ('    E = np.where(allowed, E, -np.inf)\n', ''),
            ('''    W = np.where(allowed, np.exp(E), 0.0)
    return W / W.sum(axis=1, keepdims=True)''',
             '''    W = np.exp(E)
    return np.where(allowed, W / W.sum(axis=1, keepdims=True), 0.0)'''),
        ),
    },
    'wl_colors': {
        'updates_colours_in_place': swap(
            '''signatures = [(colours[i], tuple(sorted(colours[j] for j in neighbours[i]))) for i in range(M)]
        table = {}
        colours = [table.setdefault(sig, len(table)) for sig in signatures]''',
            '''table = {}
        for i in range(M):
            sig = (colours[i], tuple(sorted(colours[j] for j in neighbours[i])))
            colours[i] = table.setdefault(sig, len(table))'''),
        'set_not_multiset': swap('tuple(sorted(colours[j] for j in neighbours[i]))',
                                 'tuple(sorted(set(colours[j] for j in neighbours[i])))'),
        'sorted_numbering': swap('''        table = {}
        colours = [table.setdefault(sig, len(table)) for sig in signatures]''',
                                 '''        order = sorted(set(signatures))
        colours = [order.index(sig) for sig in signatures]'''),
        'one_round_too_many': swap('range(iterations)', 'range(iterations + 1)'),
        'neighbour_colour_sum': swap('tuple(sorted(colours[j] for j in neighbours[i]))', 'int(A[i] @ colours)'),
        'degree_only': swap('range(iterations)', 'range(min(iterations, 1))'),
        'degree_and_colour_sum_signature': swap('tuple(sorted(colours[j] for j in neighbours[i]))',
                                                'int(A[i].sum()), int(A[i] @ colours)'),
        'string_signature_collides': swap(
            'signatures = [(colours[i], tuple(sorted(colours[j] for j in neighbours[i]))) for i in range(M)]',
            '''signatures = [str(colours[i])
                      + "".join(str(colours[j]) for j in sorted(neighbours[i], key=lambda j: colours[j]))
                      for i in range(M)]'''),
    },
    'wl_distinguishes': {
        'separate_refinement': swap('wl_colors(union, iterations)',
                                    'np.concatenate([wl_colors(A1, iterations), wl_colors(A2, iterations)])'),
        'sets_of_colours': swap(
            'np.any(np.bincount(colours[:M1], minlength=n) != np.bincount(colours[M1:], minlength=n))',
            'set(colours[:M1].tolist()) != set(colours[M1:].tolist())'),
        'sizes_not_checked': swap(
            ('    if M1 != M2:\n        return True\n', ''),
            ('minlength=n) !=', 'minlength=n) / M1 !='),
            ('minlength=n)))', 'minlength=n) / M2))'),
        ),
        'number_of_colours': swap(
            'np.any(np.bincount(colours[:M1], minlength=n) != np.bincount(colours[M1:], minlength=n))',
            'len(set(colours[:M1].tolist())) != len(set(colours[M1:].tolist()))'),
        'one_round_fewer': swap('wl_colors(union, iterations)', 'wl_colors(union, max(iterations - 1, 0))'),
    },
    'gin_layer': {
        'mean_aggregation': swap('A @ X', 'A @ X / np.maximum(A.sum(axis=1, keepdims=True), 1)'),
        'eps_on_the_neighbours': swap('(1.0 + eps) * X + A @ X', 'X + (1.0 + eps) * (A @ X)'),
        'relu_after_the_last_layer': swap('np.maximum(Z @ W1 + b1, 0.0) @ W2 + b2',
                                          'np.maximum(np.maximum(Z @ W1 + b1, 0.0) @ W2 + b2, 0.0)'),
        'no_self_term': swap('(1.0 + eps) * X', 'eps * X'),
        'default_eps_0_1': swap('eps=0.0', 'eps=0.1'),
        'forgot_b1': swap('Z @ W1 + b1', 'Z @ W1'),
        'adds_eps_to_A_in_place': swap(('A = np.asarray(A, dtype=float)', 'A += (1 + eps) * np.eye(len(A))'),
                                       ('(1.0 + eps) * X + A @ X', 'A @ X')),
    },
    'graph_readout': {
        'default_mean': swap('how="sum"', 'how="mean"'),
        'max_starts_at_zero': swap('np.full((n_graphs, H.shape[1]), -np.inf)', 'np.zeros((n_graphs, H.shape[1]))'),
        'fancy_index_add_drops_repeats': swap('np.add.at(sums, ids, H)', 'sums[ids] += H'),
        'mean_over_all_nodes': swap('np.bincount(ids, minlength=n_graphs)[:, None]', 'len(H)'),
        'assumes_sorted_ids': swap('ids = np.asarray(graph_ids, dtype=int)',
                                   'ids = np.sort(np.asarray(graph_ids, dtype=int))'),
    },
    'edge_message_passing': {
        'source_and_target_swapped': swap('source, target = edge_index', 'target, source = edge_index'),
        'fancy_index_add_drops_repeats': swap('np.add.at(out, target, X[source])', 'out[target] += X[source]'),
        'dense_adjacency': swap(
            '''out = np.zeros((n_nodes,) + X.shape[1:])
    np.add.at(out, target, X[source])''',
            '''A = np.zeros((n_nodes, n_nodes))
    np.add.at(A, (target, source), 1.0)
    out = A @ X'''),
        'mean_of_messages': swap('return out',
                                 'return out / np.maximum(np.bincount(target, minlength=n_nodes), 1)[:, None]'),
        'output_has_len_X_rows_of_targets_seen': swap(
            'np.zeros((n_nodes,)', 'np.zeros((target.max() + 1 if len(target) else 0,)'),
    },
    'gin_backward': {
        'messages_along_the_same_edges': swap('np.asarray(edge_index, dtype=int).reshape(2, -1)[::-1]',
                                              'np.asarray(edge_index, dtype=int).reshape(2, -1)'),
        'weight_gradient_of_X_not_Z': swap('dW1 = Z.T @ dU', 'dW1 = X.T @ dU'),
        'no_relu_mask': swap('dU = (dY @ W2.T) * (U > 0)', 'dU = dY @ W2.T'),
        'dX_forgets_the_node_itself': swap('dX = (1.0 + eps) * dZ + edge_message_passing', 'dX = edge_message_passing'),
        'eps_ignored_in_dX': swap('dX = (1.0 + eps) * dZ', 'dX = dZ'),
        'dW2_before_the_relu': swap('dW2 = R.T @ dY', 'dW2 = U.T @ dY'),
        'relu_mask_at_zero_is_one': swap('(U > 0)', '(U >= 0)'),
    },
    'logistic_loss': {
        'gradient_not_divided_by_N': swap('(p - y) / len(s)', 'p - y'),
        'naive_log_sigmoid': swap(
            ('loss = float(np.mean(np.maximum(s, 0.0) - s * y + np.log1p(np.exp(-np.abs(s)))))',
             'p = 1.0 / (1.0 + np.exp(-s))\n    loss = float(np.mean(-y * np.log(p) - (1 - y) * np.log(1 - p)))'),
            ('    e = np.exp(-np.abs(s))\n    p = np.where(s >= 0, 1.0 / (1.0 + e), e / (1.0 + e))\n', ''),
        ),
        'gradient_sign_flipped': swap('(p - y) / len(s)', '(y - p) / len(s)'),
        'sum_not_mean': swap(('float(np.mean(', 'float(np.sum('), ('(p - y) / len(s)', 'p - y')),
        'stable_formula_without_its_max_term': swap('np.maximum(s, 0.0) - s * y', '-s * y'),
    },
    'train_gin': {
        'evaluates_on_training_graphs': swap(
            ('batch_graphs(val_graphs, range(len(val_graphs)))', 'batch_graphs(graphs, range(len(graphs)))'),
            ('forward(edge_index, graph_ids, X, len(val_graphs))', 'forward(edge_index, graph_ids, X, len(graphs))'),
            ('logistic_loss(scores, val_labels)', 'logistic_loss(scores, labels)'),
            ('(scores > 0) == val_labels', '(scores > 0) == labels'),
        ),
        'shuffles_once': swap(
            '    for epoch in range(epochs):\n        order = rng.permutation(len(graphs))\n',
            '    order = rng.permutation(len(graphs))\n    for epoch in range(epochs):\n'),
        'updates_before_backward': swap(
            '            dH2 = readout_scale * np.outer(dscores, w)[graph_ids]\n',
            '            params[8] = w = w - lr * dw  # the score layer steps first\n'
            '            params[9] = c - lr * dc\n'
            '            dw, dc = np.zeros_like(dw), np.zeros_like(dc)\n'
            '            dH2 = readout_scale * np.outer(dscores, w)[graph_ids]\n'),
        'readout_gradient_not_scaled': swap('dH2 = readout_scale * np.outer', 'dH2 = np.outer'),
        'drops_the_last_short_batch': swap('range(0, len(graphs), batch_size)',
                                           'range(0, len(graphs) - batch_size + 1, batch_size)'),
        'fresh_generator_per_epoch': swap('order = rng.permutation(len(graphs))',
                                          'order = np.random.default_rng(seed).permutation(len(graphs))'),
        'layer_2_backward_from_X': swap('gin_backward(edge_index, H1, W1b', 'gin_backward(edge_index, H0, W1b'),
        'weights_drawn_in_another_order': swap(
            'W1a, W2a, W1b, W2b, w = [rng.standard_normal(s) / np.sqrt(s[0]) for s in shapes]',
            'w, W1a, W2a, W1b, W2b = [rng.standard_normal(s) / np.sqrt(s[0]) for s in shapes[-1:] + shapes[:-1]]'),
    },
}

# Mistakes that must also fail the end-to-end checks. Ring counting with fixed random GIN weights (a GIN whose
# aggregation or readout loses the counts cannot count rings):
INTEGRATION = {
    "test_graph_classification": ["gin_layer/mean_aggregation", "graph_readout/fancy_index_add_drops_repeats",
                                  "graph_readout/mean_over_all_nodes"],
    # the trained GIN judged on held-out graphs: a wrong gradient, loss or loop step either fails to learn or
    # leaves the contract's trajectory (the hidden comparison of the first epoch with the grader's own run).
    # One or two per piece (each costs a training run in the kernel suite). Mistakes with no effect on this data
    # cannot fail it: edges reversed or not (the graphs are undirected),
    # eps (0 in the loop), the ReLU's derivative at exactly 0, overflow at scores of 1000.
    "test_gin_heldout": ["train_gin/updates_before_backward", "gin_backward/weight_gradient_of_X_not_Z",
                         "gin_backward/no_relu_mask", "logistic_loss/gradient_not_divided_by_N",
                         "train_gin/shuffles_once", "edge_message_passing/fancy_index_add_drops_repeats",
                         "graph_readout/fancy_index_add_drops_repeats"],
}
