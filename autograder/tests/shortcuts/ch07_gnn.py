"""Shortcuts of ch07_gnn (issue 39): the GIN's training loop with its gradients from torch autograd instead of the
student's gin_backward and logistic_loss (the same draws, batches and steps as the contract, so without the
grader's source check it would match the contract's losses). Every test cell that names train_gin must score 0."""

TORCH_LOOP = '''import numpy as np


def train_gin(gin_backward, logistic_loss, edge_message_passing, graph_readout, train, validation, hidden=16,
              epochs=40, batch_size=20, lr=0.1, readout_scale=1 / 30, seed=0):
    import torch
    from dlcourse.widgets.ch07_gnn import batch_graphs
    rng = np.random.default_rng(seed)
    shapes = [(2, hidden), (hidden, hidden), (hidden, hidden), (hidden, hidden), (hidden,)]
    W = [rng.standard_normal(s) / np.sqrt(s[0]) for s in shapes]
    params = [torch.tensor(a, requires_grad=True) for a in
              (W[0], np.zeros(hidden), W[1], np.zeros(hidden), W[2], np.zeros(hidden), W[3], np.zeros(hidden), W[4],
               np.zeros(1))]

    def scores(graphs, index):
        ei, ids, X = batch_graphs(graphs, index)
        ei, ids, H = torch.from_numpy(ei), torch.from_numpy(ids), torch.from_numpy(X)
        for k in (0, 4):
            Z = H.index_add(0, ei[1], H[ei[0]])
            H = torch.relu(Z @ params[k] + params[k + 1]) @ params[k + 2] + params[k + 3]
        G = torch.zeros(len(index), hidden, dtype=H.dtype).index_add(0, ids, H) * readout_scale
        return G @ params[8] + params[9]

    graphs, y = train
    losses, val_loss, val_accuracy = [], [], []
    for _ in range(epochs):
        order = rng.permutation(len(graphs))
        for k in range(0, len(graphs), batch_size):
            b = order[k:k + batch_size]
            s = scores(graphs, b)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(s, torch.tensor(y[b], dtype=s.dtype))
            losses.append(float(loss))
            for p in params:
                p.grad = None
            loss.backward()
            with torch.no_grad():
                for p in params:
                    p -= lr * p.grad
        with torch.no_grad():
            s = scores(validation[0], range(len(validation[0])))
            yv = torch.tensor(validation[1], dtype=s.dtype)
            val_loss.append(float(torch.nn.functional.binary_cross_entropy_with_logits(s, yv)))
            val_accuracy.append(float(((s > 0).double() == yv).double().mean()))
    return {"params": [p.detach().numpy().copy() for p in params], "losses": losses, "val_loss": val_loss,
            "val_accuracy": val_accuracy}
'''

SHORTCUTS = {
    "train_gin_by_torch_autograd": {"replace": {"train_gin": TORCH_LOOP}},
}
