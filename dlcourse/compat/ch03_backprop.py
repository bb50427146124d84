"""Superseded helpers of ch03_backprop, kept for notebooks already handed out (see ``dlcourse/compat/__init__.py``).

Earlier releases gave the students the loop that trains their MLP on the moons (``train_moons``); the chapter's
students now write it themselves (``train_mlp``). The old import path (``dlcourse.widgets.ch03_backprop``) still
finds it through a module ``__getattr__``.
"""
from __future__ import annotations


def train_moons(MLP, zero_grad, sgd_step, X, y, sizes=(8, 8, 1), steps=60, batch=16, seed=0):
    """Superseded: the student writes this loop (``train_mlp``); kept, unchanged, for notebooks released
    before, which call it.

    Train ``MLP(2, sizes, default_rng(seed))`` on (X, y), labels +-1, with the mean hinge loss
    ``relu(1 - y s(x))`` over batches of ``batch`` points (drawn by ``default_rng(seed + 1)``), ``steps``
    steps of ``zero_grad``, ``backward``, ``sgd_step`` with a learning rate decaying from 1 to 0.1.

    Self-contained (it is the integration check's driver, run in the student's process): returns plain
    data, ``{"weights": [p.data in creation order], "losses": [...], "grad_norms": [...]}``.
    """
    import math

    import numpy as np

    model = MLP(2, list(sizes), np.random.default_rng(seed))
    params = model.parameters()
    draw = np.random.default_rng(seed + 1)
    losses, grad_norms = [], []
    for step in range(steps):
        loss = 0.0
        for i in draw.choice(len(X), size=batch, replace=False):
            score = model([float(X[i, 0]), float(X[i, 1])])
            loss = loss + (1.0 - float(y[i]) * score).relu()
        loss = loss * (1.0 / batch)
        zero_grad(params)
        loss.backward()
        grad_norms.append(math.sqrt(sum(float(p.grad) ** 2 for p in params)))
        sgd_step(params, 1.0 - 0.9 * step / steps)
        losses.append(float(loss.data))
    return {"weights": [float(p.data) for p in params], "losses": losses, "grad_norms": grad_norms}
