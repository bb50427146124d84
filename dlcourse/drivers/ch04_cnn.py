"""Drivers of the integration checks of ch04_cnn: public code that runs where the student's code runs.

Each is a top-level function that ``dlcourse.testing.in_student_process`` names (module and function):
under the grader the sandbox imports it from here, so no test cell's text ever enters the student's
process. A driver holds no hidden check, threshold or secret data: it uses the student's pieces it is
given and returns plain data; the verdict is reached in the test cell.
"""
from __future__ import annotations

import numpy as np

# Superseded (issue 39): complete answers that earlier releases imported from here, now in dlcourse.compat
_MOVED = ("train_numpy_cnn", "numpy_cnn_gradients", "numpy_cnn_backprop")


def __getattr__(name):
    """The superseded helpers, for notebooks already handed out: imported from ``dlcourse.compat`` on first use."""
    if name in _MOVED:
        from importlib import import_module
        return getattr(import_module("dlcourse.compat.ch04_cnn"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def recover_kernel(conv2d, conv2d_backward, X, Y, steps=60, lr=0.2, shape=(1, 1, 3, 3)):
    """Gradient descent on a kernel W of ``shape``, from zeros, for the loss mean((conv2d(X, W) - Y) ** 2),
    with the student's conv2d and conv2d_backward. Returns {"weights": W, "kernel": W[0, 0], "losses": [...]}."""
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
    X_val, y_val, **settings)``, with each piece wrapped to count its calls (then calling the given one) and the
    gradients of the convolutions followed into the update.

    Returns plain data: what ``train_cnn`` returned (``params`` as a list of float arrays; ``losses``,
    ``val_loss``, ``val_accuracy`` as float arrays; ``None`` for a missing key), its type, the number of
    calls of each piece (``calls``), whether the training and validation arrays came back unchanged, and
    ``update_gaps``: one number per update of a convolution, the largest of ``|W_new - (W - lr dW)|`` and
    ``|b_new - (b - lr db)|``, where ``dW, db`` are what ``conv2d_backward`` returned for weights ``W`` (the
    bias ``b`` is the one of that layer's last forward call), ``lr`` the run's learning rate and ``W_new,
    b_new`` the weights of the layer's next ``conv2d`` call (or, after the last step, the returned parameters
    of that shape). It is exactly 0 when the update is ``p - lr * grad`` with the arrays ``conv2d_backward``
    returned; ``inf`` for a backward pass that no update followed."""
    import inspect


    calls = {"conv2d": 0, "conv2d_backward": 0, "max_pool2d": 0, "max_pool2d_backward": 0}
    lr = settings.get("lr")
    if lr is None:
        default = inspect.signature(train_cnn).parameters.get("lr")
        lr = default.default if default is not None else float("nan")
    lr = float(lr)
    bias = {}        # the shape of a layer's weights -> the bias of its last forward call
    pending = {}     # the shape of a layer's weights -> (W, b, dW, db) of a backward pass not yet applied
    gaps = []

    def gap(W_new, b_new):
        W, b, dW, db = pending.pop(np.shape(W_new))
        expected_W = W - lr * np.asarray(dW)
        if b_new is None or b is None:
            return float(np.max(np.abs(np.asarray(W_new, dtype=np.float64) - expected_W)))
        expected_b = b - lr * np.asarray(db)
        return max(float(np.max(np.abs(np.asarray(W_new, dtype=np.float64) - expected_W))),
                   float(np.max(np.abs(np.asarray(b_new, dtype=np.float64) - expected_b))))

    def traced_conv2d(X, W, b=None, *args, **kwargs):
        calls["conv2d"] += 1
        shape = np.shape(W)
        if shape in pending:
            try:
                gaps.append(gap(W, b))
            except (ValueError, TypeError):           # shapes that do not fit: not the update of that layer
                pending.pop(shape, None)
                gaps.append(float("inf"))
        bias[shape] = None if b is None else np.array(b, dtype=np.float64)
        return conv2d(X, W, b, *args, **kwargs)

    def traced_conv2d_backward(X, W, dY, *args, **kwargs):
        calls["conv2d_backward"] += 1
        out = conv2d_backward(X, W, dY, *args, **kwargs)
        shape = np.shape(W)
        if shape in pending:                           # a backward pass of that layer that no update followed
            pending.pop(shape)
            gaps.append(float("inf"))
        try:
            _, dW, db = out
            pending[shape] = (np.array(W, dtype=np.float64), bias.get(shape), np.array(dW), np.array(db))
        except (ValueError, TypeError):
            pass
        return out

    def counted(name, piece):
        def call(*args, **kwargs):
            calls[name] += 1
            return piece(*args, **kwargs)
        return call

    copies = [np.array(a, copy=True) for a in (X_train, y_train, X_val, y_val)]
    result = train_cnn(traced_conv2d, traced_conv2d_backward, counted("max_pool2d", max_pool2d),
                       counted("max_pool2d_backward", max_pool2d_backward), X_train, y_train, X_val, y_val, **settings)
    out = {"type": type(result).__name__, "calls": dict(calls),
           "inputs_unchanged": all(np.array_equal(a, b) for a, b in zip(copies, (X_train, y_train, X_val, y_val)))}
    value = result.get("params") if isinstance(result, dict) else None
    out["params"] = None if value is None else [np.array(p, dtype=np.float64) for p in value]
    for shape in list(pending):                        # the last step's update: the returned parameters
        found = [i for i, p in enumerate(out["params"] or []) if p.shape == shape]
        if found and found[0] + 1 < len(out["params"]):
            try:
                gaps.append(gap(out["params"][found[0]], out["params"][found[0] + 1]))
                continue
            except (ValueError, TypeError):
                pass
        pending.pop(shape, None)
        gaps.append(float("inf"))
    out["update_gaps"] = np.asarray(gaps, dtype=np.float64)
    for key in ("losses", "val_loss", "val_accuracy"):
        value = result.get(key) if isinstance(result, dict) else None
        out[key] = None if value is None else np.asarray([float(v) for v in value], dtype=np.float64)
    return out


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
