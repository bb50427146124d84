"""Superseded helpers of ch06_transformers, kept for notebooks already handed out (see ``dlcourse.compat``).

``train_char_transformer(text, causal_mask, transformer_block, sample_token, ...)``: the course's own training of
the character transformer by torch autograd (the student now trains it with ``train_char_model`` and their own
gradients); released notebooks import it from ``dlcourse.drivers.ch06_transformers`` and ``dlcourse.widgets.ch06``.
"""
from __future__ import annotations

import numpy as np


def train_char_transformer(text, causal_mask, transformer_block, sample_token, d=32, n_heads=4, d_ff=64,
                           context=32, steps=150, batch=16, lr=2e-2, seed=0, sample_length=200,
                           temperature=0.6, top_k=None):
    """Train a one-block decoder-only character model in torch, then run it with the student's NumPy pieces.

    Superseded (issue 29): the chapter now trains the model with the student's own gradients and loop
    (``train_char_model``, run by ``char_model_run``); kept so that notebooks already handed out still run.

    Training: torch autograd on a torch copy of the model (embedding + learned positions, one pre-LN
    block with causal multi-head attention, final LayerNorm, linear read-out), Adam, ``steps``
    batches of ``batch`` random windows of ``context`` characters. Evaluation and generation: the
    trained weights in float64 through the student's ``transformer_block`` (which uses their
    multi-head attention) with the student's ``causal_mask``, and ``sample_token`` for sampling.
    A test driver: self-contained, plain data out. Returns a dict: weights (NumPy), chars,
    losses (training, torch), eval_logits (windows, context, K) of the text computed with the
    student's block (window w predicts characters w*context+1 .. (w+1)*context), sample (text).
    """
    import math

    import torch
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([index[c] for c in text])
    K = len(chars)

    def param(*shape, scale=None, value=None):
        w = torch.full(shape, float(value)) if value is not None else torch.randn(*shape) * scale
        return torch.nn.Parameter(w)

    P = {"E": param(K, d, scale=0.3), "pos": param(context, d, scale=0.1),
         "ln1_g": param(d, value=1), "ln1_b": param(d, value=0),
         "W_q": param(d, d, scale=d ** -0.5), "W_k": param(d, d, scale=d ** -0.5),
         "W_v": param(d, d, scale=d ** -0.5), "W_o": param(d, d, scale=0.5 * d ** -0.5),
         "ln2_g": param(d, value=1), "ln2_b": param(d, value=0),
         "W1": param(d_ff, d, scale=d ** -0.5), "b1": param(d_ff, value=0),
         "W2": param(d, d_ff, scale=0.5 * d_ff ** -0.5), "b2": param(d, value=0),
         "lnf_g": param(d, value=1), "lnf_b": param(d, value=0),
         "W_out": param(K, d, scale=d ** -0.5), "b_out": param(K, value=0)}
    blocked = ~torch.tril(torch.ones(context, context, dtype=torch.bool))
    # the student's pieces run first on the initial weights, so that an unfinished one stops the driver at once
    initial = {key: P[key].detach().double().numpy() for key in ("ln1_g", "ln1_b", "W_q", "W_k", "W_v", "W_o",
                                                                "ln2_g", "ln2_b", "W1", "b1", "W2", "b2")}
    transformer_block(np.zeros((1, 2, d)), initial, n_heads, np.asarray(causal_mask(2), dtype=bool))
    sample_token(np.zeros(K), 1.0, np.random.default_rng(0), top_k)

    def forward(tokens):                       # (B, T) -> (B, T, K): the contract's block, in torch
        B, T = tokens.shape
        x = P["E"][tokens] + P["pos"][:T]
        a = torch.nn.functional.layer_norm(x, (d,), P["ln1_g"], P["ln1_b"], eps=1e-5)
        q, k, v = ((a @ P[w].T).view(B, T, n_heads, d // n_heads).transpose(1, 2) for w in ("W_q", "W_k", "W_v"))
        scores = (q @ k.transpose(-1, -2) / (d // n_heads) ** 0.5).masked_fill(blocked[:T, :T], float("-inf"))
        x = x + (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, T, d) @ P["W_o"].T
        f = torch.nn.functional.layer_norm(x, (d,), P["ln2_g"], P["ln2_b"], eps=1e-5)
        x = x + torch.relu(f @ P["W1"].T + P["b1"]) @ P["W2"].T + P["b2"]
        x = torch.nn.functional.layer_norm(x, (d,), P["lnf_g"], P["lnf_b"], eps=1e-5)
        return x @ P["W_out"].T + P["b_out"]

    # Adam written out (torch.optim would import torch's compiler, which the grading sandbox refuses),
    # with a one-cycle schedule: linear warm-up over the first 10% of the steps, then cosine decay
    first = {name: torch.zeros_like(p) for name, p in P.items()}
    second = {name: torch.zeros_like(p) for name, p in P.items()}
    generator = torch.Generator().manual_seed(seed)
    losses = []
    warm = max(1, steps // 10)
    for step in range(1, steps + 1):
        starts = torch.randint(0, len(data) - context - 1, (batch,), generator=generator)
        window = torch.stack([data[s:s + context + 1] for s in starts])
        loss = torch.nn.functional.cross_entropy(forward(window[:, :-1]).reshape(-1, K), window[:, 1:].reshape(-1))
        for p in P.values():
            p.grad = None
        loss.backward()
        progress = max(0.0, (step - warm) / max(1, steps - warm))
        rate = lr * min(1.0, step / warm) * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * progress)))
        with torch.no_grad():
            for name, p in P.items():
                first[name].mul_(0.9).add_(p.grad, alpha=0.1)
                second[name].mul_(0.999).addcmul_(p.grad, p.grad, value=0.001)
                m_hat = first[name] / (1 - 0.9 ** step)
                v_hat = second[name] / (1 - 0.999 ** step)
                p -= rate * m_hat / (v_hat.sqrt() + 1e-8)
        losses.append(float(loss.detach()))
    W = {name: p.detach().double().numpy().copy() for name, p in P.items()}
    block_keys = ("ln1_g", "ln1_b", "W_q", "W_k", "W_v", "W_o", "ln2_g", "ln2_b", "W1", "b1", "W2", "b2")
    block = {key: W[key] for key in block_keys}

    def logits(tokens):                        # (B, T) integers -> (B, T, K), with the student's pieces
        T = tokens.shape[1]
        x = W["E"][tokens] + W["pos"][:T]
        h = np.asarray(transformer_block(x, block, n_heads, np.asarray(causal_mask(T), dtype=bool)), dtype=float)
        h = (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + 1e-5) * W["lnf_g"] + W["lnf_b"]
        return h @ W["W_out"].T + W["b_out"]

    ids = data.numpy()
    n_windows = (len(ids) - 1) // context
    eval_logits = logits(ids[:n_windows * context].reshape(n_windows, context))
    rng = np.random.default_rng(seed)
    out = list(ids[:1])
    for _ in range(sample_length - 1):
        last = logits(np.array(out[-context:])[None])[0, -1]
        out.append(int(sample_token(last, temperature, rng, top_k)))
    return {"weights": W, "n_heads": n_heads, "chars": "".join(chars), "losses": losses,
            "eval_logits": eval_logits, "sample": "".join(chars[i] for i in out)}
