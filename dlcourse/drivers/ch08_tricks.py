"""Drivers of ch08_tricks' checks (see ``dlcourse/drivers/__init__.py``): public helper code that
calls the student's functions where they run and returns plain data; every verdict is reached in the
test cell."""


def dropout_eval_copy(dropout):
    """Is the evaluation-mode result of ``dropout`` a copy of x, not x itself? Returns the result's values,
    x after writing into the result, and a training-mode result."""
    import numpy as np
    x = np.arange(6.0).reshape(2, 3)
    out = dropout(x, 0.4, np.random.default_rng(0), training=False)
    values = np.array(out, dtype=float, copy=True)
    if isinstance(out, np.ndarray) and out.flags.writeable:
        out[...] = -7.0                      # writing into the result must not change x
    trained = np.array(dropout(np.arange(6.0).reshape(2, 3), 0.4, np.random.default_rng(0)), dtype=float)
    return {"values": values, "x_after": x, "training": trained}


def batchnorm_eval_copies(batchnorm_forward):
    """Are the running statistics ``batchnorm_forward`` returns in evaluation mode copies? Returns its
    outputs' values and the running statistics given after writing into the returned ones."""
    import numpy as np
    x = np.array([[1.0, 2.0], [3.0, 0.0], [0.5, -1.0]])
    rm, rv = np.array([0.5, -0.5]), np.array([2.0, 0.5])
    y, new_rm, new_rv = batchnorm_forward(x, np.ones(2), np.zeros(2), rm, rv, False)
    values = [np.array(a, dtype=float, copy=True) for a in (y, new_rm, new_rv)]
    for a in (new_rm, new_rv):
        if isinstance(a, np.ndarray) and a.flags.writeable:
            a[...] = 99.0                    # writing into the returned statistics must not change the inputs
    return {"values": values, "rm_after": rm, "rv_after": rv}


def train_traced(train_digits, init_weights, orthogonal_init, layernorm_forward, layernorm_backward, adam_step,
                 cross_entropy, X_train, y_train, X_val, y_val, **settings):
    """The student's ``train_digits(init_weights, orthogonal_init, layernorm_forward, layernorm_backward,
    adam_step, cross_entropy, X_train, y_train, X_val, y_val, **settings)``, with ``adam_step`` wrapped to
    record each call (then calling the given one).

    Returns plain data: what ``train_digits`` returned (``params`` as a list of float arrays; ``losses``,
    ``val_loss``, ``val_accuracy`` as float arrays; ``None`` for a missing key) and the trace of
    ``adam_step``: per call its step number ``ts``, learning rate ``lrs`` and the ``shapes`` of the parameter."""
    import numpy as np

    ts, lrs, shapes = [], [], []

    def recorded_adam_step(param, grad, m, v, t, lr=1e-3, **options):
        ts.append(t if isinstance(t, (int, np.integer)) else float(t))
        lrs.append(float(lr))
        shapes.append(tuple(np.shape(param)))
        return adam_step(param, grad, m, v, t, lr=lr, **options)

    result = train_digits(init_weights, orthogonal_init, layernorm_forward, layernorm_backward, recorded_adam_step,
                          cross_entropy, X_train, y_train, X_val, y_val, **settings)
    out = {"type": type(result).__name__, "ts": np.asarray(ts, dtype=np.float64),
           "lrs": np.asarray(lrs, dtype=np.float64), "shapes": shapes}
    value = result.get("params") if isinstance(result, dict) else None
    out["params"] = None if value is None else [np.array(p, dtype=np.float64) for p in value]
    for key in ("losses", "val_loss", "val_accuracy"):
        value = result.get(key) if isinstance(result, dict) else None
        out[key] = None if value is None else np.asarray([float(v) for v in value], dtype=np.float64)
    return out
