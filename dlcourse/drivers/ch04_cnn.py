"""Drivers of the integration checks of ch04_cnn: public code that runs where the student's code runs.

Each is a top-level function that ``dlcourse.testing.in_student_process`` names (module and function):
under the grader the sandbox imports it from here, so no test cell's text ever enters the student's
process. A driver holds no hidden check, threshold or secret data: it uses the student's pieces it is
given and returns plain data; the verdict is reached in the test cell.
"""
from __future__ import annotations

import numpy as np


def recover_kernel(conv2d, conv2d_backward, X, Y, steps=60, lr=0.2, shape=(1, 1, 3, 3)):
    """Gradient descent on a kernel W of ``shape``, from zeros, for the loss mean((conv2d(X, W) - Y) ** 2),
    with the student's conv2d and conv2d_backward. Returns {"weights": W, "kernel": W[0, 0], "losses": [...]}."""
    import numpy as np
    W = np.zeros(tuple(shape))
    losses = []
    for _ in range(steps):
        R = np.asarray(conv2d(X, W), dtype=float) - Y
        losses.append(float(np.mean(R ** 2)))
        _, dW, _ = conv2d_backward(X, W, 2.0 * R / R.size)
        W = W - lr * np.asarray(dW, dtype=float)
    return {"weights": W, "kernel": W[0, 0], "losses": losses}


CNN_WEIGHTS = ("W1", "b1", "W2", "b2", "W3", "b3")


def train_traced(train_cnn, conv2d, conv2d_backward, max_pool2d, max_pool2d_backward, X_train, y_train, X_val,
                 y_val, **settings):
    """The student's ``train_cnn(conv2d, conv2d_backward, max_pool2d, max_pool2d_backward, X_train, y_train,
    X_val, y_val, **settings)``, with each piece wrapped to count its calls (then calling the given one).

    Returns plain data: what ``train_cnn`` returned (``params`` as a list of float arrays; ``losses``,
    ``val_loss``, ``val_accuracy`` as float arrays; ``None`` for a missing key), its type, the number of
    calls of each piece (``calls``) and whether the training and validation arrays came back unchanged."""
    import numpy as np

    calls = {"conv2d": 0, "conv2d_backward": 0, "max_pool2d": 0, "max_pool2d_backward": 0}

    def counted(name, piece):
        def call(*args, **kwargs):
            calls[name] += 1
            return piece(*args, **kwargs)
        return call

    pieces = [counted(name, piece) for name, piece in zip(calls, (conv2d, conv2d_backward, max_pool2d,
                                                                 max_pool2d_backward))]
    copies = [np.array(a, copy=True) for a in (X_train, y_train, X_val, y_val)]
    result = train_cnn(*pieces, X_train, y_train, X_val, y_val, **settings)
    out = {"type": type(result).__name__, "calls": dict(calls),
           "inputs_unchanged": all(np.array_equal(a, b) for a, b in zip(copies, (X_train, y_train, X_val, y_val)))}
    value = result.get("params") if isinstance(result, dict) else None
    out["params"] = None if value is None else [np.array(p, dtype=np.float64) for p in value]
    for key in ("losses", "val_loss", "val_accuracy"):
        value = result.get(key) if isinstance(result, dict) else None
        out[key] = None if value is None else np.asarray([float(v) for v in value], dtype=np.float64)
    return out


def train_numpy_cnn(conv2d, conv2d_backward, max_pool2d, max_pool2d_backward, X, y, channels=(8, 16),
                    epochs=4, batch=32, lr=0.01, seed=0):
    """A CNN made only of the student's functions, trained with Adam on (X (N, 1, 8, 8), y):
    conv 3×3 (1 → c1), ReLU, conv 3×3 (c1 → c2), ReLU, max pool 2×2, linear (4 c2 → 10), softmax
    cross-entropy. Returns the trained weights {W1, b1, W2, b2, W3, b3} and the batch losses.

    Superseded (issue 29): the chapter's students now write this loop themselves (``train_cnn``, run by
    ``train_traced``); kept because notebooks already handed out import it."""
    import numpy as np

    from dlcourse.drivers.ch04_cnn import numpy_cnn_backprop
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

    from dlcourse.drivers.ch04_cnn import numpy_cnn_backprop
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


def digits_cnn_report(build_digits_cnn):
    """The student's network, untrained: output shapes for batches of 1 and 5, parameter count, and
    whether it holds an nn.Conv2d (plain data)."""
    import torch
    torch.manual_seed(0)
    model = build_digits_cnn()
    with torch.no_grad():
        outputs = [model(torch.rand(n, 1, 8, 8)) for n in (1, 5)]
        shapes = [list(out.shape) for out in outputs]
        varies = bool(outputs[1].dim() == 2 and not torch.allclose(outputs[1][0], outputs[1][1:]))
    return {"shapes": shapes, "n_params": int(sum(p.numel() for p in model.parameters())),
            "has_conv": any(isinstance(m, torch.nn.Conv2d) for m in model.modules()), "varies": varies}


def digits_cnn_logits(build_digits_cnn, X_train, y_train, X_test):
    """``build_digits_cnn()`` trained by the course recipe on (X_train, y_train); returns its logits on
    X_test as a NumPy array. The data come from the caller (``dlcourse.data.digits_split()``: pixels / 16
    as float32 (N, 1, 8, 8), the stratified 75/25 split with random_state 0); the recipe:
    torch.manual_seed(0), Adam lr 3e-3, cross-entropy, batches of 64 shuffled by a generator seeded
    with 0, 30 epochs, one thread (Adam written out, the same update as torch.optim.Adam)."""
    import numpy as np
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(1)
    Xtr = torch.from_numpy(np.asarray(X_train, dtype=np.float32))
    ytr = torch.from_numpy(np.asarray(y_train, dtype=np.int64))
    torch.manual_seed(0)
    model = build_digits_cnn()
    torch.manual_seed(0)
    # Adam (betas 0.9, 0.999, eps 1e-8), written out: torch.optim imports torch._dynamo, which a
    # grading sandbox does not allow (it sets environment variables)
    params = [p for p in model.parameters() if p.requires_grad]
    first = [torch.zeros_like(p) for p in params]
    second = [torch.zeros_like(p) for p in params]
    generator = torch.Generator().manual_seed(0)
    model.train()
    step = 0
    for _ in range(30):
        order = torch.randperm(len(Xtr), generator=generator)
        for start in range(0, len(Xtr), 64):
            batch = order[start:start + 64]
            for p in params:
                p.grad = None
            F.cross_entropy(model(Xtr[batch]), ytr[batch]).backward()
            step += 1
            with torch.no_grad():
                for p, m, v in zip(params, first, second):
                    if p.grad is None:
                        continue
                    m.mul_(0.9).add_(p.grad, alpha=0.1)
                    v.mul_(0.999).addcmul_(p.grad, p.grad, value=0.001)
                    denom = (v / (1 - 0.999 ** step)).sqrt_().add_(1e-8)
                    p.addcdiv_(m, denom, value=-3e-3 / (1 - 0.9 ** step))
    model.eval()
    with torch.no_grad():
        return model(torch.from_numpy(np.asarray(X_test, dtype=np.float32))).double().numpy()
