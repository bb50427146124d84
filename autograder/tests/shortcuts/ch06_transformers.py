"""Shortcuts of ch06_transformers (issue 39): the character model's loop trained without the student's backward
passes. Both call the pieces they are given (so a count of calls alone would not tell) and then apply gradients
computed another way: by torch autograd (measured scoring 51/51 before the loop's checks traced the pieces'
results into the update), or by the loop's own NumPy copies of the backward passes. The checks hand in backward
pieces whose results are slightly altered and follow them into Adam's update, so both fail every check of
``test_train_char_model`` and ``test_char_transformer``."""
from autograder.course import Chapter, strip_solution_markers

_SOLUTIONS = {cell.metadata["nbgrader"]["grade_id"]: strip_solution_markers(cell.source)
              for cell in Chapter.load("ch06_transformers").cells("solution")}

TORCH_LOOP = '''import numpy as np


def train_char_model(transformer_block, transformer_block_backward, layernorm_backward, causal_mask, train_text,
                     val_text, chars, d=32, n_heads=4, d_ff=64, context=32, steps=300, batch=16, lr=0.02, seed=0):
    import torch
    index = {c: i for i, c in enumerate(chars)}
    tr, va = np.array([index[c] for c in train_text]), np.array([index[c] for c in val_text])
    V = len(chars)
    rng = np.random.default_rng(seed)
    P = {}
    for name, shape, scale in (("E", (V, d), 1.0), ("pos", (context, d), 0.1), ("W_q", (d, d), None),
                               ("W_k", (d, d), None), ("W_v", (d, d), None), ("W_o", (d, d), None),
                               ("W1", (d_ff, d), None), ("W2", (d, d_ff), None), ("W_out", (V, d), None)):
        P[name] = rng.standard_normal(shape) * (scale if scale is not None else 1 / np.sqrt(shape[1]))
    for name, size in (("ln1_g", d), ("ln2_g", d), ("lnf_g", d)):
        P[name] = np.ones(size)
    for name, size in (("ln1_b", d), ("ln2_b", d), ("lnf_b", d), ("b2", d), ("b1", d_ff), ("b_out", V)):
        P[name] = np.zeros(size)
    block_keys = ("ln1_g", "ln1_b", "W_q", "W_k", "W_v", "W_o", "ln2_g", "ln2_b", "W1", "b1", "W2", "b2")
    m = {k: np.zeros_like(v) for k, v in P.items()}
    s = {k: np.zeros_like(v) for k, v in P.items()}
    causal = torch.tril(torch.ones(context, context, dtype=torch.bool))
    mask = np.asarray(causal_mask(context), dtype=bool)

    def loss_of(T, x, y):
        n, c = x.shape
        X = T["E"][torch.from_numpy(x)] + T["pos"]
        a = torch.nn.functional.layer_norm(X, (d,), T["ln1_g"], T["ln1_b"], eps=1e-5)
        q, k, v = ((a @ T[w].T).reshape(n, c, n_heads, d // n_heads).transpose(1, 2) for w in ("W_q", "W_k", "W_v"))
        heads = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=causal)
        H = X + heads.transpose(1, 2).reshape(n, c, d) @ T["W_o"].T
        f = torch.nn.functional.layer_norm(H, (d,), T["ln2_g"], T["ln2_b"], eps=1e-5)
        H2 = H + torch.relu(f @ T["W1"].T + T["b1"]) @ T["W2"].T + T["b2"]
        F = torch.nn.functional.layer_norm(H2, (d,), T["lnf_g"], T["lnf_b"], eps=1e-5)
        logits = F @ T["W_out"].T + T["b_out"]
        return torch.nn.functional.cross_entropy(logits.reshape(-1, V), torch.from_numpy(y).reshape(-1)), X, H2

    losses = []
    for t in range(1, steps + 1):
        starts = rng.integers(0, len(tr) - context, size=batch)
        x, y = tr[starts[:, None] + np.arange(context)], tr[starts[:, None] + 1 + np.arange(context)]
        T = {k: torch.tensor(v, requires_grad=True) for k, v in P.items()}
        loss, X, H = loss_of(T, x, y)
        loss.backward()
        losses.append(float(loss.detach()))
        # the pieces, called for show: their results are dropped
        block = {k: P[k] for k in block_keys}
        dH = layernorm_backward(np.ones((batch, context, d)), H.detach().numpy(), P["lnf_g"])[0]
        transformer_block_backward(X.detach().numpy(), block, n_heads, np.asarray(dH), mask)
        for k in P:
            g = T[k].grad.numpy()
            m[k] = 0.9 * m[k] + 0.1 * g
            s[k] = 0.999 * s[k] + 0.001 * g ** 2
            P[k] = P[k] - lr * (m[k] / (1 - 0.9 ** t)) / (np.sqrt(s[k] / (1 - 0.999 ** t)) + 1e-8)
    n = (len(va) - 1) // context
    with torch.no_grad():
        T = {k: torch.from_numpy(v) for k, v in P.items()}
        val = float(loss_of(T, va[:n * context].reshape(n, context), va[1:n * context + 1].reshape(n, context))[0])
    return {"params": P, "losses": losses, "val_loss": val}
'''


def _own_copies() -> str:
    """The reference loop with its own NumPy copies of the three backward passes; the pieces it is given are
    called with the same arguments, their results dropped."""
    own = "\n\n".join(_SOLUTIONS[name].replace("def ", "def _own_", 1) for name in (
        "scaled_dot_product_attention_backward", "layernorm_backward", "transformer_block_backward"))
    own = own.replace("scaled_dot_product_attention_backward(", "_own_scaled_dot_product_attention_backward(")
    own = own.replace("_own__own_", "_own_").replace(" layernorm_backward(", " _own_layernorm_backward(")
    own = own.replace("= layernorm_backward(", "= _own_layernorm_backward(")
    loop = _SOLUTIONS["train_char_model"]
    for old, new in (
            ('layernorm_backward(dlogits @ P["W_out"], H, P["lnf_g"])',
             '_own_layernorm_backward(dlogits @ P["W_out"], H, P["lnf_g"])\n'
             '        layernorm_backward(dlogits @ P["W_out"], H, P["lnf_g"])'),
            ('transformer_block_backward(X, {k: P[k] for k in block_keys}, n_heads, dH, mask)',
             '_own_transformer_block_backward(X, {k: P[k] for k in block_keys}, n_heads, dH, mask)\n'
             '        transformer_block_backward(X, {k: P[k] for k in block_keys}, n_heads, dH, mask)')):
        assert loop.count(old) == 1, old
        loop = loop.replace(old, new)
    return "import numpy as np\n\n\n" + own + "\n\n\n" + loop


SHORTCUTS = {
    "loop_gradients_by_torch_autograd": {"replace": {"train_char_model": TORCH_LOOP}},
    "loop_gradients_by_its_own_numpy_copies": {"replace": {"train_char_model": _own_copies()}},
}
