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
                 cross_entropy, X_train, y_train, X_val, y_val, *, marked=False, **settings):
    """The student's ``train_digits(init_weights, orthogonal_init, layernorm_forward, layernorm_backward,
    adam_step, cross_entropy, X_train, y_train, X_val, y_val, **settings)``, with ``layernorm_forward``,
    ``layernorm_backward``, ``cross_entropy`` and ``adam_step`` wrapped to record what they see and return
    (then calling the given ones).

    With ``marked=True`` the wrapped ``layernorm_backward`` returns its results scaled by powers of two
    (``dx`` times 2, ``dgamma`` times 4, ``dbeta`` times 1/2): Adam's step does not change (up to its eps) when
    a parameter's gradient is scaled, but a loop that hands ``adam_step`` gradients it did not take from
    ``layernorm_backward``'s results hands the unscaled ones.

    Returns plain data: what ``train_digits`` returned (``params`` as a list of float arrays; ``losses``,
    ``val_loss``, ``val_accuracy`` as float arrays; ``None`` for a missing key), the trace of ``adam_step``:
    per call its step number ``ts``, learning rate ``lrs`` and the ``shapes`` of the parameter, and per step
    (the ``adam_step`` calls with the same ``t``): ``backward_calls``, the number of ``layernorm_backward``
    calls since the previous step, and ``trace``, one row per step of the relative differences between the
    gradients given to ``adam_step`` and those that follow from what the step's pieces returned, for
    ``[W1, b1, gamma, beta, W2, b2]`` (``nan`` where they cannot be told: no ``layernorm_backward`` call, no
    layer norm; with ``weight_norm`` the ``dW1`` that ``dV1`` and ``dg1`` come from): ``gamma``, ``beta`` are
    its ``dgamma``, ``dbeta``; ``b1`` the column sums of its ``dx``; ``W1`` the ``dW1`` with ``dW1 @ W1.T ==
    dx.T @ (x - b1)`` (``x`` the input it was given); ``W2`` and ``b2`` the ``dlogits.T @ h`` and column sums of
    ``dlogits = (softmax(logits) - onehot(y)) / N`` for the step's ``cross_entropy(logits, y)`` call, ``h``
    the ReLU of the step's ``layernorm_forward`` result. ``dy_error`` (per step) compares the ``dy`` given to
    ``layernorm_backward`` with ``(dlogits @ W2) * (h > 0)``. ``first_step``, ``last_step``: the ``(param, grad)``
    pairs of the first and of the last step's ``adam_step`` calls.

    The loop runs watched as ``from_scratch`` watches (a run driver is not watched by the grader's calls):
    ``scratch`` is the failure message when it called into torch (or ran threads, or changed the trace
    hooks), else None."""
    import numpy as np

    ts, lrs, shapes = [], [], []
    seen = {"backward": None, "forward": None, "ce": None, "backward_calls": 0}
    steps = []                                          # per step: [(param, grad), ...] and what the pieces gave
    scales = (2.0, 4.0, 0.5) if marked else (1.0, 1.0, 1.0)

    def recorded_forward(x, gamma, beta, *args, **kwargs):
        out = layernorm_forward(x, gamma, beta, *args, **kwargs)
        seen["forward"] = np.array(out, dtype=np.float64)
        return out

    def recorded_backward(dy, x, gamma, *args, **kwargs):
        out = tuple(layernorm_backward(dy, x, gamma, *args, **kwargs))
        given = [np.array(a, dtype=np.float64) * c for a, c in zip(out[:3], scales)]
        seen["backward"] = {"dy": np.array(dy, dtype=np.float64), "x": np.array(x, dtype=np.float64),
                            "dx": given[0], "dgamma": given[1], "dbeta": given[2]}
        seen["backward_calls"] += 1
        return tuple(given) + out[3:] if marked else out

    def recorded_ce(logits, y, *args, **kwargs):
        seen["ce"] = (np.array(logits, dtype=np.float64), np.array(y))
        return cross_entropy(logits, y, *args, **kwargs)

    def recorded_adam_step(param, grad, m, v, t, lr=1e-3, **options):
        t_value = t if isinstance(t, (int, np.integer)) else float(t)
        if not ts or ts[-1] != t_value:
            steps.append({"calls": [], "backward": seen["backward"], "forward": seen["forward"], "ce": seen["ce"],
                          "backward_calls": seen["backward_calls"]})
            seen["backward"], seen["backward_calls"] = None, 0
        ts.append(t_value)
        lrs.append(float(lr))
        shapes.append(tuple(np.shape(param)))
        steps[-1]["calls"].append((np.array(param, dtype=np.float64), np.array(grad, dtype=np.float64)))
        return adam_step(param, grad, m, v, t, lr=lr, **options)

    from dlcourse.testing import FROM_SCRATCH, Watch, judge

    monitors = [(FROM_SCRATCH, "train_digits (its gradients included)")]
    watch = Watch.for_monitors(monitors)
    with watch:                                       # from_scratch, here where the loop runs (grader or kernel)
        result = train_digits(init_weights, orthogonal_init, recorded_forward, recorded_backward, recorded_adam_step,
                              recorded_ce, X_train, y_train, X_val, y_val, **settings)
    out = {"type": type(result).__name__, "ts": np.asarray(ts, dtype=np.float64),
           "lrs": np.asarray(lrs, dtype=np.float64), "shapes": shapes,
           "scratch": judge(monitors, watch.observations())}
    value = result.get("params") if isinstance(result, dict) else None
    out["params"] = None if value is None else [np.array(p, dtype=np.float64) for p in value]
    for key in ("losses", "val_loss", "val_accuracy"):
        value = result.get(key) if isinstance(result, dict) else None
        out[key] = None if value is None else np.asarray([float(v) for v in value], dtype=np.float64)
    weight_norm = settings.get("weight_norm") is not None
    trace = [_step_trace(step, weight_norm, settings.get("layer_norm", True)) for step in steps]
    out["trace"] = np.array([row for row, _ in trace], dtype=np.float64).reshape(len(steps), 6)
    out["dy_error"] = np.array([dy for _, dy in trace], dtype=np.float64)
    out["backward_calls"] = np.array([step["backward_calls"] for step in steps], dtype=np.float64)
    out["first_step"] = [[p, g] for p, g in steps[0]["calls"]] if steps else []
    out["last_step"] = [[p, g] for p, g in steps[-1]["calls"]] if steps else []
    return out


def _relative(got, want):
    import numpy as np

    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return float("inf")
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300))


def _step_trace(step, weight_norm, layer_norm):
    """([relative difference for W1, b1, gamma, beta, W2, b2], dy's relative difference) of one step (see
    ``train_traced``)."""
    import numpy as np

    nan = float("nan")
    calls = step["calls"]
    if len(calls) != (7 if weight_norm else 6):
        return [nan] * 6, nan
    if weight_norm:
        (V1, dV1), (g1, dg1) = calls[0], calls[1]
        n = np.linalg.norm(V1, axis=1)
        W1 = (g1 / n)[:, None] * V1
        dW1 = dV1 * (n / np.where(g1 == 0, 1e-300, g1))[:, None] + (dg1 / n)[:, None] * V1
        rest = calls[2:]
    else:
        (W1, dW1), rest = calls[0], calls[1:]
    (b1, db1), (gamma, dgamma), (beta, dbeta), (W2, dW2), (b2, db2) = rest
    row, dy_error = [nan] * 6, nan
    if step["ce"] is not None:
        logits, y = step["ce"]
        if logits.ndim == 2 and len(y) == len(logits) and logits.shape[1] == len(b2):
            q = np.exp(logits - logits.max(axis=1, keepdims=True))
            q /= q.sum(axis=1, keepdims=True)
            q[np.arange(len(y)), y.astype(int)] -= 1.0
            dlogits = q / len(y)
            row[5] = _relative(db2, dlogits.sum(axis=0))
            back, forward = step["backward"], step["forward"]
            if layer_norm and back is not None and forward is not None and forward.shape == (len(y), len(b1)):
                h = np.maximum(forward, 0.0)
                row[4] = _relative(dW2, dlogits.T @ h)
                dy_error = _relative(back["dy"], (dlogits @ W2) * (h > 0))
    back = step["backward"]
    if layer_norm and back is not None and back["dx"].shape == back["x"].shape == (back["x"].shape[0], len(b1)):
        row[0] = _relative(dW1 @ W1.T, back["dx"].T @ (back["x"] - b1))
        row[1] = _relative(db1, back["dx"].sum(axis=0))
        row[2] = _relative(dgamma, back["dgamma"])
        row[3] = _relative(dbeta, back["dbeta"])
    return row, dy_error


def __getattr__(name):
    """Superseded helpers (issue 39), found in ``dlcourse.compat.ch08_tricks`` on first use."""
    if name in ("train_digits_mlp",):
        from ..compat import ch08_tricks
        return getattr(ch08_tricks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
