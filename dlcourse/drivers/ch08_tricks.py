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


def train_digits_mlp(init_weights, dropout, batchnorm_forward, batchnorm_backward, sgd_momentum_step, cross_entropy,
                     X_train, y_train, X_val, y_val, *, gradient_check=0, init="he", use_dropout=False,
                     batch_norm=False, weight_decay=False, label_smoothing=False, hidden=(64, 64, 64, 64), epochs=20,
                     batch_size=50, lr=0.08, momentum=0.9, p=0.1, decay=3e-3, smoothing=0.05, seed=0):
    """A ReLU MLP trained on the digits with the student's pieces only; returns plain data.

    Weights from ``init_weights(fan_in, fan_out, init, rng)``; optional inverted ``dropout`` after each
    hidden ReLU (mask = dropout(ones)), optional batch norm before each hidden ReLU
    (``batchnorm_forward`` / ``batchnorm_backward``, running statistics for evaluation), SGD with
    momentum 0.9 (``sgd_momentum_step``, L2 weight decay on the weight matrices when switched on),
    cross-entropy gradients against the (optionally label-smoothed) targets, ``cross_entropy`` for
    the recorded losses. Runs where the student's code runs (it imports what it needs itself).

    With ``gradient_check=n`` (dropout off), nothing is trained: the function returns, for n random
    entries of every weight matrix and batch-norm scale (scales and shifts set to random values first),
    the gradient from the backward pass next to a central finite difference of the loss.

    Otherwise returns {"train_loss", "val_loss"} per epoch (plain cross-entropy, evaluation mode),
    {"dropout_zero_fraction", "dropout_mask_mean"} over all the masks drawn,
    {"act_std", "grad_std"}: [first step, last step] lists of the std of each hidden layer's
    activations and weight gradient, and "val_logits" after the last epoch (a verdict is computed
    from those, outside this function).
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    X_train, X_val = np.asarray(X_train, dtype=float), np.asarray(X_val, dtype=float)
    y_train, y_val = np.asarray(y_train, dtype=int), np.asarray(y_val, dtype=int)
    k = int(max(y_train.max(), y_val.max())) + 1
    sizes = [X_train.shape[1], *hidden, k]
    layers = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        layer = {"W": np.asarray(init_weights(fan_in, fan_out, init, rng), dtype=float), "b": np.zeros(fan_out)}
        if batch_norm and len(layers) < len(hidden):
            layer.update(gamma=np.ones(fan_out), beta=np.zeros(fan_out), mean=np.zeros(fan_out), var=np.ones(fan_out))
        layers.append(layer)
    names = [[n for n in ("W", "b", "gamma", "beta") if n in layer] for layer in layers]
    buffers = {(i, n): None for i in range(len(layers)) for n in names[i]}
    eps = smoothing if label_smoothing else 0.0

    def forward(X, training):
        h, cache = X, []
        for i, layer in enumerate(layers[:-1]):
            z = h @ layer["W"].T + layer["b"]
            entry = {"h": h, "z": z}
            if "gamma" in layer:
                zn, mean, var = batchnorm_forward(z, layer["gamma"], layer["beta"], layer["mean"], layer["var"],
                                                  training)
                if training:
                    layer["mean"], layer["var"] = np.asarray(mean, dtype=float), np.asarray(var, dtype=float)
            else:
                zn = z
            zn = np.asarray(zn, dtype=float)
            a = np.maximum(zn, 0.0)
            if use_dropout and training:
                mask = np.asarray(dropout(np.ones_like(a), p, rng), dtype=float)
                masks[0] += float(np.sum(mask == 0))
                masks[1] += float(np.sum(mask))
                masks[2] += mask.size
                a = a * mask
                entry["mask"] = mask
            entry.update(zn=zn, a=a)
            cache.append(entry)
            h = a
        return h @ layers[-1]["W"].T + layers[-1]["b"], h, cache

    def backward(logits, h_last, cache, y):
        n = len(y)
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        q = e / e.sum(axis=1, keepdims=True)
        target = np.full_like(q, eps / k)
        target[np.arange(n), y] += 1.0 - eps
        d = (q - target) / n
        grads = [dict() for _ in layers]
        grads[-1]["W"], grads[-1]["b"] = d.T @ h_last, d.sum(axis=0)
        dh = d @ layers[-1]["W"]
        for i in range(len(layers) - 2, -1, -1):
            entry, layer = cache[i], layers[i]
            da = dh * entry["mask"] if "mask" in entry else dh
            dzn = da * (entry["zn"] > 0)
            if "gamma" in layer:
                dz, dgamma, dbeta = batchnorm_backward(dzn, entry["z"], layer["gamma"])
                grads[i]["gamma"], grads[i]["beta"] = np.asarray(dgamma, dtype=float), np.asarray(dbeta, dtype=float)
                dz = np.asarray(dz, dtype=float)
            else:
                dz = dzn
            grads[i]["W"], grads[i]["b"] = dz.T @ entry["h"], dz.sum(axis=0)
            dh = dz @ layer["W"]
        return grads

    def stats(cache, grads):
        return ([float(entry["a"].std()) for entry in cache], [float(grads[i]["W"].std()) for i in range(len(cache))])

    def _gradient_check(layers, names, forward, backward, X, y, k, eps, n_entries, rng, h=1e-6):
        """Backward-pass gradients next to central finite differences of the (smoothed) cross-entropy."""
        import numpy as np

        for layer in layers:
            if "gamma" in layer:
                layer["gamma"] = 1.0 + 0.5 * rng.standard_normal(layer["gamma"].shape)
                layer["beta"] = 0.3 * rng.standard_normal(layer["beta"].shape)
        target = np.full((len(y), k), eps / k)
        target[np.arange(len(y)), y] += 1.0 - eps

        def loss():
            logits = forward(X, True)[0]
            z = logits - logits.max(axis=1, keepdims=True)
            return float(-np.mean(np.sum(target * (z - np.log(np.exp(z).sum(axis=1, keepdims=True))), axis=1)))

        logits, h_last, cache = forward(X, True)
        grads = backward(logits, h_last, cache, y)
        analytic, numeric, where = [], [], []
        for i, layer in enumerate(layers):
            for name in names[i]:
                if name not in ("W", "gamma"):
                    continue
                for _ in range(n_entries):
                    idx = tuple(int(rng.integers(n)) for n in layer[name].shape)
                    original = layer[name][idx]
                    layer[name][idx] = original + h
                    up = loss()
                    layer[name][idx] = original - h
                    down = loss()
                    layer[name][idx] = original
                    analytic.append(float(np.asarray(grads[i][name])[idx]))
                    numeric.append((up - down) / (2 * h))
                    where.append(f"layer {i + 1} {name}{list(idx)}")
        return {"analytic": analytic, "numeric": numeric, "where": where}

    if gradient_check:
        return _gradient_check(layers, names, forward, backward, X_train[:batch_size], y_train[:batch_size], k, eps,
                               gradient_check, rng)

    history = {"train_loss": [], "val_loss": [], "act_std": [], "grad_std": []}
    masks = [0.0, 0.0, 0]                    # zeros, sum and number of entries of the dropout masks
    t = 0
    n_train = len(X_train)
    for epoch in range(epochs):
        order = rng.permutation(n_train)
        for start in range(0, n_train - batch_size + 1, batch_size):
            batch = order[start:start + batch_size]
            logits, h_last, cache = forward(X_train[batch], True)
            grads = backward(logits, h_last, cache, y_train[batch])
            t += 1
            if t == 1:
                first = stats(cache, grads)
            for i, layer in enumerate(layers):
                for n in names[i]:
                    wd = decay if (weight_decay and n == "W") else 0.0
                    new, buf = sgd_momentum_step(layer[n], grads[i][n], buffers[(i, n)], lr, momentum=momentum,
                                                 weight_decay=wd)
                    layer[n] = np.asarray(new, dtype=float)
                    buffers[(i, n)] = None if buf is None else np.asarray(buf, dtype=float)
        history["train_loss"].append(float(cross_entropy(forward(X_train, False)[0], y_train)))
        val_logits = forward(X_val, False)[0]
        history["val_loss"].append(float(cross_entropy(val_logits, y_val)))
    last = stats(cache, grads)
    history["act_std"] = [first[0], last[0]]
    history["grad_std"] = [first[1], last[1]]
    history["val_logits"] = val_logits
    history["dropout_zero_fraction"] = masks[0] / max(masks[2], 1)
    history["dropout_mask_mean"] = masks[1] / masks[2] if masks[2] else 1.0
    return history
