"""Routes to the points of ch03_backprop without building the exercise (issue 39): each must score 0 on every
test cell that names the replaced function, and leave the others at the reference's score (format: the preamble
of issue 39; the proof suite grades each entry as one notebook)."""

SHORTCUTS = {
    # the loop earlier releases gave (superseded by train_mlp), called with the contract's step count and
    # learning rate; it now lives in dlcourse.compat, which the sandbox does not have
    "train_mlp_via_the_superseded_train_moons": {
        "replace": {"train_mlp": '''import numpy as np


def train_mlp(MLP, zero_grad, sgd_step, X_train, y_train, X_val, y_val, sizes=(8, 8, 1), epochs=10,
              batch_size=10, lr=0.3, seed=0):
    from dlcourse.widgets.ch03_backprop import mlp_numpy, train_moons
    steps = epochs * -(-len(X_train) // batch_size)
    run = train_moons(MLP, zero_grad, lambda params, _: sgd_step(params, lr), X_train, y_train, sizes=sizes,
                      steps=steps, batch=min(batch_size, len(X_train)), seed=seed)
    accuracy = float(np.mean(np.sign(mlp_numpy(run["weights"], X_train.shape[1], list(sizes), X_val)[:, 0]) == y_val))
    return {"params": run["weights"], "losses": run["losses"], "val_accuracy": [accuracy] * epochs}
'''},
    },
}
