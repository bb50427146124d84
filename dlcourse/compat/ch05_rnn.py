"""Superseded helpers of ch05_rnn, kept for notebooks already handed out (see ``dlcourse.compat``).

``train_char_rnn(text, rnn_forward, rnn_backward, clip_grad_norm, ...)``: the course's own complete training loop
of the character RNN (the student now writes ``train_char_rnn`` of the chapter); released notebooks import it
from ``dlcourse.drivers.ch05_rnn`` and ``dlcourse.widgets.ch05``.
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
