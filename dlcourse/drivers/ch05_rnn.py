"""Drivers of the integration checks of ch05_rnn: public code that runs where the student's code runs.

Each is a top-level function that ``dlcourse.testing.in_student_process`` names (module and function):
under the grader the sandbox imports it from here, so no test cell's text ever enters the student's
process. A driver holds no hidden check, threshold or secret data: it uses the student's pieces it is
given and returns plain data; the verdict is reached in the test cell.
"""
from __future__ import annotations

import numpy as np


def train_char_rnn(text, rnn_forward, rnn_backward, clip_grad_norm, hidden=64, steps=1000, seq_len=25,
                   lr=0.01, max_norm=5.0, seed=0, sample_length=300, temperature=0.7):
    """Superseded (issue 29): the student now writes this loop (``train_char_rnn`` of the chapter, on
    ``dlcourse.data.language_reference()``, judged on held-out text); kept so that notebooks already
    handed out, which import it, keep working.

    Train an Elman RNN (no biases) to predict the next character of ``text``; generate a sample.

    Truncated BPTT: the text is read in chunks of ``seq_len`` characters; each chunk starts from the
    last state of the previous one (``z0``), and the gradient stops there. One-hot inputs (n = K
    characters), logits ``y_t = W z_t`` (q = K), softmax cross-entropy, so ``dY = (softmax(Y) -
    onehot(targets)) / seq_len``. Gradients from the student's ``rnn_backward``, clipped by the
    student's ``clip_grad_norm``, applied with Adam. A test driver: self-contained, plain data out.
    Returns a dict: U, V, W (trained), chars, losses (per step), norms (before clipping), sample.
    """
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    data = np.array([index[c] for c in text])
    K = len(chars)
    onehot = np.eye(K)
    rng = np.random.default_rng(seed)
    params = [rng.standard_normal((hidden, hidden)) * 0.5 / np.sqrt(hidden),   # U
              rng.standard_normal((hidden, K)) * 0.5,                          # V
              rng.standard_normal((K, hidden)) / np.sqrt(hidden)]              # W
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    z, pos, losses, norms = np.zeros(hidden), 0, [], []
    for step in range(1, steps + 1):
        if pos + seq_len + 1 > len(data):                 # back to the start of the text
            pos, z = 0, np.zeros(hidden)
        X = onehot[data[pos:pos + seq_len]]
        targets = data[pos + 1:pos + seq_len + 1]
        Z, Y = rnn_forward(X, *params, z)
        Z, Y = np.asarray(Z, dtype=float), np.asarray(Y, dtype=float)
        P = np.exp(Y - Y.max(axis=1, keepdims=True))
        P /= P.sum(axis=1, keepdims=True)
        losses.append(float(-np.log(P[np.arange(seq_len), targets] + 1e-300).mean()))
        dY = (P - onehot[targets]) / seq_len
        grads = list(rnn_backward(X, *params, dY, z))[:3]      # dU, dV, dW (dz0 is dropped: truncation)
        grads, total = clip_grad_norm(grads, max_norm)
        norms.append(float(total))
        for p, g, m1, m2 in zip(params, grads, first, second):  # Adam
            m1 *= 0.9
            m1 += 0.1 * g
            m2 *= 0.999
            m2 += 0.001 * g * g
            p -= lr * (m1 / (1 - 0.9 ** step)) / (np.sqrt(m2 / (1 - 0.999 ** step)) + 1e-8)
        z, pos = Z[-1], pos + seq_len
    # generate: one rnn_forward step at a time, carrying the state
    token, z, out = data[0], np.zeros(hidden), [chars[data[0]]]
    for _ in range(sample_length - 1):
        Z, Y = rnn_forward(onehot[token][None], *params, z)
        z = np.asarray(Z, dtype=float)[-1]
        logits = np.asarray(Y, dtype=float)[-1] / temperature
        p = np.exp(logits - logits.max())
        token = int(rng.choice(K, p=p / p.sum()))
        out.append(chars[token])
    U, V, W = params
    return {"U": U, "V": V, "W": W, "chars": "".join(chars), "losses": losses, "norms": norms,
            "sample": "".join(out)}


def train_traced(train_char_rnn, rnn_forward, rnn_backward, clip_grad_norm, adam_step, train_text, val_text,
                 **settings):
    """The student's ``train_char_rnn(rnn_forward, rnn_backward, clip_grad_norm, adam_step, train_text,
    val_text, **settings)``, with ``rnn_backward`` and ``adam_step`` wrapped to record what they see
    (then calling the given ones).

    Returns plain data: what the loop returned (``params`` as a list of float arrays, ``losses`` and
    ``val_loss`` as float arrays, ``None`` for a missing key) and, per ``adam_step`` call in call order:
    ``ts`` (its step number), ``lrs``, ``shapes`` (of the parameter), ``update_sq`` (the sum of squares
    of the gradient it was given) and ``fresh_sq``: the sum of squares of the sum of the ``(dU, dV, dW)``
    that ``rnn_backward`` returned since the previous ``adam_step`` call, or -1 when it was not called
    in between."""
    import numpy as np

    ts, lrs, shapes, update_sq, fresh_sq = [], [], [], [], []
    pending = []                                  # the (dU, dV, dW) summed since the last update

    def recorded_backward(*args, **kwargs):
        out = rnn_backward(*args, **kwargs)
        grads = [np.array(g, dtype=np.float64) for g in tuple(out)[:3]]
        if pending:
            pending[:] = [a + b for a, b in zip(pending, grads)]
        else:
            pending.extend(grads)
        return out

    def recorded_adam(param, grad, m, v, t, *args, **kwargs):
        ts.append(float(t))
        lrs.append(float(kwargs.get("lr", args[0] if args else float("nan"))))
        shapes.append(tuple(np.shape(param)))
        update_sq.append(float(np.sum(np.asarray(grad, dtype=np.float64) ** 2)))
        fresh_sq.append(float(sum(np.sum(g ** 2) for g in pending)) if pending else -1.0)
        pending.clear()
        return adam_step(param, grad, m, v, t, *args, **kwargs)

    result = train_char_rnn(rnn_forward, recorded_backward, clip_grad_norm, recorded_adam, train_text, val_text,
                            **settings)
    out = {"type": type(result).__name__, "ts": np.asarray(ts), "lrs": np.asarray(lrs), "shapes": shapes,
           "update_sq": np.asarray(update_sq), "fresh_sq": np.asarray(fresh_sq), "params": None}
    if isinstance(result, dict) and isinstance(result.get("params"), (list, tuple)):
        out["params"] = [np.array(p, dtype=np.float64) for p in result["params"]]
    for key in ("losses", "val_loss"):
        value = result.get(key) if isinstance(result, dict) else None
        out[key] = None if value is None else np.asarray([float(v) for v in value], dtype=np.float64)
    return out


def sample_text(rnn_forward, U, V, W, chars, length=300, temperature=0.8, seed=0, start=None):
    """Text generated by the Elman character model (U, V, W) over the alphabet ``chars``, one call of the
    student's ``rnn_forward`` per character, carrying the state: each next character is drawn from
    ``softmax(y / temperature)`` with ``np.random.default_rng(seed)``; the first is ``start`` (or a draw)."""
    import numpy as np

    U, V, W = (np.asarray(a, dtype=float) for a in (U, V, W))
    onehot = np.eye(len(chars))
    rng = np.random.default_rng(seed)
    token = chars.index(start) if start else int(rng.integers(len(chars)))
    z, out = np.zeros(U.shape[0]), [chars[token]]
    for _ in range(length - 1):
        Z, Y = rnn_forward(onehot[token][None], U, V, W, z)
        z = np.asarray(Z, dtype=float)[-1]
        logits = np.asarray(Y, dtype=float)[-1] / temperature
        p = np.exp(logits - logits.max())
        token = int(rng.choice(len(chars), p=p / p.sum()))
        out.append(chars[token])
    return "".join(out)


def defaults_of(function):
    """The default values of ``function``'s parameters that are numbers or strings, by name (plain data)."""
    import inspect

    return {name: p.default for name, p in inspect.signature(function).parameters.items()
            if isinstance(p.default, (int, float, str))}
