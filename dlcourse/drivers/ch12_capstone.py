"""Drivers and data of ch12_capstone's checks (see ``dlcourse/drivers/__init__.py``): public helper code that
calls the student's functions where they run and returns plain data; every verdict is reached in the test
cell."""
import functools

import numpy as np

N_VALIDATION = 300


@functools.cache
def _split():
    from dlcourse.data import digits_split

    X_train, X_test, y_train, y_test = digits_split()
    X_train, X_test = (np.asarray(X[:, 0], dtype=np.float64) for X in (X_train, X_test))
    order = np.random.default_rng(0).permutation(len(X_train))
    val, train = order[:N_VALIDATION], order[N_VALIDATION:]
    arrays = (X_train[train], y_train[train], X_train[val], y_train[val], X_test, y_test)
    for a in arrays:
        a.flags.writeable = False
    return arrays


def digit_rows():
    """scikit-learn's digits as sequences of 8 row tokens of 8 pixels in [0, 1], float64:
    ``(X_train, y_train, X_val, y_val, X_test, y_test)``, 1047 / 300 / 450 images of shape (8, 8).

    The test part is ``digits_split()``'s test split; its training split is cut by
    ``default_rng(0).permutation``: the first 300 indices are the validation part. Fresh copies at each call."""
    return tuple(a.copy() for a in _split())


def train_traced(train_capstone, linear_forward, linear_backward, layernorm_forward, layernorm_backward,
                 attention_forward, attention_backward, adam_step, X_train, y_train, X_val, y_val, **settings):
    """The student's ``train_capstone(<the seven pieces>, X_train, y_train, X_val, y_val, **settings)``, with
    ``adam_step`` wrapped to record each call (then calling the given one).

    Returns plain data: what ``train_capstone`` returned (``params`` as a list of float arrays; ``losses``,
    ``val_loss``, ``val_accuracy`` as float arrays; ``None`` for a missing key), its ``type``, and the trace of
    ``adam_step``: per call its step number ``ts``, learning rate ``lrs`` and the ``shapes`` of the parameter."""
    import numpy as np

    ts, lrs, shapes = [], [], []

    def recorded_adam_step(param, grad, m, v, t, lr=1e-3, **options):
        ts.append(t if isinstance(t, (int, np.integer)) else float(t))
        lrs.append(float(lr))
        shapes.append(tuple(np.shape(param)))
        return adam_step(param, grad, m, v, t, lr=lr, **options)

    result = train_capstone(linear_forward, linear_backward, layernorm_forward, layernorm_backward,
                            attention_forward, attention_backward, recorded_adam_step,
                            X_train, y_train, X_val, y_val, **settings)
    out = {"type": type(result).__name__, "ts": np.asarray(ts, dtype=np.float64),
           "lrs": np.asarray(lrs, dtype=np.float64), "shapes": shapes}
    value = result.get("params") if isinstance(result, dict) else None
    out["params"] = None if value is None else [np.array(p, dtype=np.float64) for p in value]
    for key in ("losses", "val_loss", "val_accuracy"):
        value = result.get(key) if isinstance(result, dict) else None
        out[key] = None if value is None else np.asarray([float(v) for v in value], dtype=np.float64)
    return out
