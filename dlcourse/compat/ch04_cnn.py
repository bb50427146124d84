"""Superseded helpers of ch04_cnn, kept for notebooks already handed out (see ``dlcourse/compat/__init__.py``).

Earlier releases gave the students the training loop of the NumPy CNN (``train_numpy_cnn``) and the course's
chain of their pieces (``numpy_cnn_backprop``, ``numpy_cnn_gradients``), and imported the grader's oracle of
that network (``torch_cnn_gradients``). The chapter's students now write the loop and its backward pass
themselves (``train_cnn``); the old import paths (``dlcourse.drivers.ch04_cnn``, ``dlcourse.widgets.ch04_cnn``)
still find these names through a module ``__getattr__``.
"""
from __future__ import annotations

import numpy as np


def train_numpy_cnn(conv2d, conv2d_backward, max_pool2d, max_pool2d_backward, X, y, channels=(8, 16),
                    epochs=4, batch=32, lr=0.01, seed=0):
    """A CNN made only of the student's functions, trained with Adam on (X (N, 1, 8, 8), y):
    conv 3×3 (1 → c1), ReLU, conv 3×3 (c1 → c2), ReLU, max pool 2×2, linear (4 c2 → 10), softmax
    cross-entropy. Returns the trained weights {W1, b1, W2, b2, W3, b3} and the batch losses.

    Superseded (issue 29): the chapter's students now write this loop themselves (``train_cnn``, run by
    ``train_traced``); kept because notebooks already handed out import it."""
    import numpy as np

    from dlcourse.compat.ch04_cnn import numpy_cnn_backprop
    rng = np.random.default_rng(seed)
    c1, c2 = channels
    P = {"W1": rng.standard_normal((c1, 1, 3, 3)) * np.sqrt(2 / 9), "b1": np.zeros(c1),
         "W2": rng.standard_normal((c2, c1, 3, 3)) * np.sqrt(2 / (9 * c1)), "b2": np.zeros(c2),
         "W3": rng.standard_normal((10, 4 * c2)) * np.sqrt(1 / (4 * c2)), "b3": np.zeros(10)}
    m1 = {k: np.zeros_like(v) for k, v in P.items()}
    m2 = {k: np.zeros_like(v) for k, v in P.items()}
    t, losses = 0, []
    for _ in range(epochs):
        order = rng.permutation(len(X))
        for start in range(0, len(X), batch):
            idx = order[start:start + batch]
            loss, G = numpy_cnn_backprop(conv2d, conv2d_backward, max_pool2d, max_pool2d_backward,
                                         P, X[idx], y[idx], eps=1e-12)
            losses.append(loss)
            t += 1
            for k in P:  # Adam
                g = np.asarray(G[k], dtype=float)
                m1[k] = 0.9 * m1[k] + 0.1 * g
                m2[k] = 0.999 * m2[k] + 0.001 * g * g
                P[k] = P[k] - lr * (m1[k] / (1 - 0.9 ** t)) / (np.sqrt(m2[k] / (1 - 0.999 ** t)) + 1e-8)
    return {"weights": P, "losses": losses}


def numpy_cnn_gradients(conv2d, conv2d_backward, max_pool2d, max_pool2d_backward, weights, X, y):
    """One forward and backward pass of ``train_numpy_cnn``'s network at ``weights`` on the batch (X, y),
    with the student's functions: the loss and the gradients of every weight (plain data)."""
    import numpy as np

    from dlcourse.compat.ch04_cnn import numpy_cnn_backprop
    P = {k: np.asarray(v, dtype=float) for k, v in weights.items()}
    loss, G = numpy_cnn_backprop(conv2d, conv2d_backward, max_pool2d, max_pool2d_backward, P, X, y)
    return {"loss": loss, "grads": {k: np.asarray(v, dtype=float) for k, v in G.items()}}


def numpy_cnn_backprop(conv2d, conv2d_backward, max_pool2d, max_pool2d_backward, P, X, y, eps=0.0):
    """``(loss, gradients)`` of ``train_numpy_cnn``'s network with weights ``P`` on the batch (X, y):
    one forward and one backward pass through the student's functions (the drivers above import it)."""
    n = len(X)
    z1 = np.asarray(conv2d(X, P["W1"], P["b1"]), dtype=float)
    a1 = np.maximum(z1, 0.0)
    z2 = np.asarray(conv2d(a1, P["W2"], P["b2"]), dtype=float)
    a2 = np.maximum(z2, 0.0)
    pooled = np.asarray(max_pool2d(a2, 2), dtype=float)
    features = pooled.reshape(n, -1)
    logits = features @ P["W3"].T + P["b3"]
    logits = logits - logits.max(axis=1, keepdims=True)
    prob = np.exp(logits)
    prob /= prob.sum(axis=1, keepdims=True)
    loss = float(-np.mean(np.log(prob[np.arange(n), y] + eps)))
    dlogits = prob.copy()
    dlogits[np.arange(n), y] -= 1.0
    dlogits /= n
    G = {"W3": dlogits.T @ features, "b3": dlogits.sum(axis=0)}
    dpooled = (dlogits @ P["W3"]).reshape(pooled.shape)
    dz2 = np.asarray(max_pool2d_backward(a2, dpooled, 2), dtype=float) * (z2 > 0)
    da1, G["W2"], G["b2"] = conv2d_backward(a1, P["W2"], dz2)
    dz1 = np.asarray(da1, dtype=float) * (z1 > 0)
    _, G["W1"], G["b1"] = conv2d_backward(X, P["W1"], dz1)
    return loss, G


def torch_cnn_gradients(weights, X, y):
    """The same loss and gradients by torch autograd in float64 (the grader's oracle)."""
    import torch
    import torch.nn.functional as F
    P = {k: torch.tensor(np.asarray(v, dtype=np.float64), requires_grad=True) for k, v in weights.items()}
    a1 = F.relu(F.conv2d(torch.from_numpy(np.asarray(X, dtype=np.float64)), P["W1"], P["b1"]))
    a2 = F.relu(F.conv2d(a1, P["W2"], P["b2"]))
    logits = F.max_pool2d(a2, 2).flatten(1) @ P["W3"].T + P["b3"]
    loss = F.cross_entropy(logits, torch.from_numpy(np.asarray(y, dtype=np.int64)))
    loss.backward()
    return {"loss": float(loss.item()), "grads": {k: v.grad.numpy() for k, v in P.items()}}
