"""Drivers of the integration checks of ch07_gnn: public code that runs where the student's code runs.

Each is a top-level function that ``dlcourse.testing.in_student_process`` names (module and function):
under the grader the sandbox imports it from here, so no test cell's text ever enters the student's
process. A driver holds no hidden check, threshold or secret data: it uses the student's pieces it is
given and returns plain data; the verdict is reached in the test cell.
"""
from __future__ import annotations

import numpy as np


def gin_graph_vectors(gin_layer, graph_readout, graphs, weights, how):
    """Runs where the student's code runs: two GIN layers on every graph (constant input features),
    then the readout of both layers' node states over the batch; returns (n_graphs, 2 * hidden)."""
    H1, H2, ids = [], [], []
    for g, A in enumerate(graphs):
        X = np.ones((len(A), 1))
        h1 = np.asarray(gin_layer(A, X, *weights[0]), dtype=float)
        h2 = np.asarray(gin_layer(A, h1, *weights[1]), dtype=float)
        H1.append(h1)
        H2.append(h2)
        ids.append(np.full(len(A), g))
    ids = np.concatenate(ids)
    return np.hstack([np.asarray(graph_readout(np.vstack(H1), ids, len(graphs), how=how), dtype=float),
                      np.asarray(graph_readout(np.vstack(H2), ids, len(graphs), how=how), dtype=float)])
