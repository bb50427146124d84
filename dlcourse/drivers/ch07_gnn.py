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


def train_traced(train_gin, gin_backward, logistic_loss, edge_message_passing, graph_readout, train, validation,
                 **settings):
    """The student's ``train_gin(gin_backward, logistic_loss, edge_message_passing, graph_readout, train,
    validation, **settings)`` with ``gin_backward`` and ``logistic_loss`` wrapped to record each call (then
    calling the given ones).

    Returns plain data: what ``train_gin`` returned (``params`` a list of float arrays, ``losses``,
    ``val_loss``, ``val_accuracy`` float arrays; ``None`` for a missing key) and the trace: ``calls``, the
    names "loss" / "backward" in call order, and ``loss_sizes``, the number of scores of each
    ``logistic_loss`` call."""
    calls, loss_sizes = [], []

    def recorded_backward(*args, **kwargs):
        calls.append("backward")
        return gin_backward(*args, **kwargs)

    def recorded_loss(scores, y):
        calls.append("loss")
        loss_sizes.append(int(np.size(scores)))
        return logistic_loss(scores, y)

    result = train_gin(recorded_backward, recorded_loss, edge_message_passing, graph_readout, train, validation,
                       **settings)
    out = {"type": type(result).__name__, "calls": calls, "loss_sizes": loss_sizes}
    params = result.get("params") if isinstance(result, dict) else None
    out["params"] = None if params is None else [np.array(p, dtype=np.float64) for p in params]
    for key in ("losses", "val_loss", "val_accuracy"):
        value = result.get(key) if isinstance(result, dict) else None
        out[key] = None if value is None else np.asarray([float(v) for v in value], dtype=np.float64)
    return out
