"""Shortcuts of ch12_capstone (issue 39): the three backward passes as four-line torch autograd calls, and a
training loop whose forward pass is torch's and whose every gradient comes from autograd (handed to the student's
own adam_step, so that the loop's updates and losses are the contract's). Both scored 20/20 before the checks ran
the pieces and the loop under ``from_scratch`` and traced the backward pieces' outputs into the updates."""

LINEAR = '''import numpy as np


def linear_backward(dY, X, W):
    import torch
    Xt, Wt = torch.tensor(X, requires_grad=True), torch.tensor(W, requires_grad=True)
    bt = torch.zeros(W.shape[1], dtype=torch.float64, requires_grad=True)
    ((Xt @ Wt + bt) * torch.tensor(dY)).sum().backward()
    return Xt.grad.numpy(), Wt.grad.numpy(), bt.grad.numpy()
'''

LAYERNORM = '''def layernorm_backward(dY, X, gamma, eps=1e-5):
    import torch
    Xt, gt = torch.tensor(X, requires_grad=True), torch.tensor(gamma, requires_grad=True)
    bt = torch.zeros_like(gt, requires_grad=True)
    (torch.nn.functional.layer_norm(Xt, (X.shape[-1],), gt, bt, eps=eps) * torch.tensor(dY)).sum().backward()
    return Xt.grad.numpy(), gt.grad.numpy(), bt.grad.numpy()
'''

ATTENTION = '''import numpy as np


def attention_backward(dY, X, Wq, Wk, Wv):
    import torch
    Xt, Qt, Kt, Vt = (torch.tensor(a, requires_grad=True) for a in (X, Wq, Wk, Wv))
    A = torch.softmax((Xt @ Qt) @ (Xt @ Kt).transpose(-1, -2) / np.sqrt(Wk.shape[1]), dim=-1)
    ((A @ (Xt @ Vt)) * torch.tensor(dY)).sum().backward()
    return Xt.grad.numpy(), Qt.grad.numpy(), Kt.grad.numpy(), Vt.grad.numpy()
'''

TRAIN = '''import numpy as np


def train_capstone(linear_forward, linear_backward, layernorm_forward, layernorm_backward, attention_forward,
                   attention_backward, adam_step, X_train, y_train, X_val, y_val, d_model=16, epochs=10,
                   batch_size=32, lr=0.01, optimizer="adam", layernorm=True, attention=True, seed=0):
    import torch
    if optimizer not in ("adam", "sgd"):
        raise ValueError(optimizer)
    rng = np.random.default_rng(seed)
    T, F, d = X_train.shape[1], X_train.shape[2], d_model
    We, P, Wq, Wk, Wv, Wm, Wo = [rng.standard_normal(s) / np.sqrt(s[0])
                                 for s in [(F, d), (T, d), (d, d), (d, d), (d, d), (d, d), (d, 10)]]
    params = [We, np.zeros(d), P, np.ones(d), np.zeros(d), Wq, Wk, Wv, Wm, np.zeros(d), np.ones(d), np.zeros(d), Wo,
              np.zeros(10)]
    moments = [(np.zeros_like(p), np.zeros_like(p)) for p in params]

    def loss_and_logits(X, y, leaves):
        We, be, P, g1, c1, Wq, Wk, Wv, Wm, bm, g2, c2, Wo, bo = leaves
        E = torch.tensor(X) @ We + be + P
        U = torch.nn.functional.layer_norm(E, (d,), g1, c1) if layernorm else E
        if attention:
            R = torch.softmax((U @ Wq) @ (U @ Wk).transpose(-1, -2) / np.sqrt(d), dim=-1) @ (U @ Wv)
        else:
            R = torch.relu(U @ Wm + bm)
        H = torch.nn.functional.layer_norm(E + R, (d,), g2, c2) if layernorm else E + R
        logits = H.mean(dim=1) @ Wo + bo
        return torch.nn.functional.cross_entropy(logits, torch.tensor(y)), logits

    losses, val_loss, val_accuracy, t = [], [], [], 0
    for _ in range(epochs):
        order = rng.permutation(len(X_train))
        for k in range(0, len(X_train), batch_size):
            batch = order[k:k + batch_size]
            leaves = [torch.tensor(p, requires_grad=True) for p in params]
            loss, _ = loss_and_logits(X_train[batch], y_train[batch], leaves)
            grads = torch.autograd.grad(loss, leaves, allow_unused=True)
            grads = [np.zeros_like(p) if g is None else g.numpy() for p, g in zip(params, grads)]
            losses.append(loss.item())
            t += 1
            for i, g in enumerate(grads):
                if optimizer == "adam":
                    params[i], m, v = adam_step(params[i], g, *moments[i], t, lr=lr)
                    moments[i] = (m, v)
                else:
                    params[i] = params[i] - lr * g
        with torch.no_grad():
            loss, logits = loss_and_logits(X_val, y_val, [torch.tensor(p) for p in params])
        val_loss.append(loss.item())
        val_accuracy.append(float(np.mean(logits.numpy().argmax(axis=1) == y_val)))
    return {"params": params, "losses": losses, "val_loss": val_loss, "val_accuracy": val_accuracy}
'''

SHORTCUTS = {
    "backward_passes_by_autograd": {
        "replace": {"linear_backward": LINEAR, "layernorm_backward": LAYERNORM, "attention_backward": ATTENTION},
    },
    "train_capstone_by_autograd": {
        "replace": {"train_capstone": TRAIN},
    },
}
