"""Superseded helpers of ch08_tricks (issue 39), kept so that notebooks already handed out still run.

``train_digits_mlp`` was the given loop of § 7 (four hidden layers, dropout, batch norm, momentum SGD) that the
earlier ``test_digits_recipe`` ran; the recipe table and explorer over it came with it. The student's own
``train_digits`` replaced them."""
from __future__ import annotations

import functools

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from ..widgets.ch08_tricks import _loss_curves, _one_thread, _plain_ce, digits_split
from ..widgets.explorer import Explorer, cached, readout
from ..widgets.picture import LiveFigure, kept_figure


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


RECIPE_INITS = ("xavier", "he")
RECIPE_SWITCHES = ("use_dropout", "batch_norm", "weight_decay", "label_smoothing")
BARE = {"init": "xavier", "use_dropout": False, "batch_norm": False, "weight_decay": False, "label_smoothing": False}
FULL = {"init": "he", "use_dropout": True, "batch_norm": True, "weight_decay": True, "label_smoothing": True}
RECIPE_PIECES = ("init_weights", "dropout", "batchnorm_forward", "batchnorm_backward", "sgd_momentum_step",
                 "cross_entropy")


def _config_key(config):
    return (config["init"],) + tuple(bool(config[name]) for name in RECIPE_SWITCHES)


def recipe_runs(pieces, *, epochs=20, inits=RECIPE_INITS, data=None):
    """Every combination of the switches (len(inits) * 16 runs), keyed by (init, dropout, bn, wd, ls).

    Runs single-threaded (tiny matrices: BLAS threads only cost time). Each value is the history of
    ``train_digits_mlp`` plus "val_accuracy" and "val_ce" (computed here from the logits)."""
    import itertools

    X_train, y_train, X_val, y_val = data if data is not None else digits_split()
    runs = {}
    with _one_thread():
        for init in inits:
            for flags in itertools.product((False, True), repeat=len(RECIPE_SWITCHES)):
                config = dict(zip(RECIPE_SWITCHES, flags), init=init)
                history = train_digits_mlp(*(pieces[name] for name in RECIPE_PIECES), X_train, y_train, X_val, y_val,
                                           epochs=epochs, **config)
                logits = np.asarray(history["val_logits"], dtype=float)
                history["val_accuracy"] = float(np.mean(logits.argmax(axis=1) == y_val))
                history["val_ce"] = _plain_ce(logits, y_val)
                runs[_config_key(config)] = history
    return runs


RECIPE_TABLE = {"bare (Xavier)": {}, "+ He": {"init": "he"}, "+ He, batch norm": {"init": "he", "batch_norm": True},
                "+ He, dropout": {"init": "he", "use_dropout": True},
                "+ He, weight decay": {"init": "he", "weight_decay": True},
                "+ He, label smoothing": {"init": "he", "label_smoothing": True}, "all the tricks": FULL}


def recipe_table(*, init_weights, dropout, batchnorm_forward, batchnorm_backward, sgd_momentum_step, cross_entropy,
                 recipes=None, epochs=20, data=None):
    """``{name: (last training loss, last validation loss, validation accuracy)}`` of ``train_digits_mlp`` with
    the student's pieces, for each recipe of ``recipes`` (switches over ``BARE``; default ``RECIPE_TABLE``:
    the bare network, He with one trick at a time, all of them). One BLAS thread."""
    X_train, y_train, X_val, y_val = data if data is not None else digits_split()
    pieces = (init_weights, dropout, batchnorm_forward, batchnorm_backward, sgd_momentum_step, cross_entropy)
    rows = {}
    with _one_thread():
        for name, switches in (recipes or RECIPE_TABLE).items():
            history = train_digits_mlp(*pieces, X_train, y_train, X_val, y_val, epochs=epochs, **{**BARE, **switches})
            logits = np.asarray(history["val_logits"], dtype=float)
            rows[name] = (float(history["train_loss"][-1]), float(history["val_loss"][-1]),
                          float(np.mean(logits.argmax(axis=1) == y_val)))
    return rows


def _recipe_figure(epochs, n_layers) -> LiveFigure:
    """The recipe explorer's axes: curves (left), per-layer statistics as bars (middle, right)."""
    live = LiveFigure(Figure(figsize=(9.6, 3.0)))
    a1, a2, a3 = live.figure.subplots(1, 3, gridspec_kw={"width_ratios": [1.4, 1, 1]})
    live.figure.subplots_adjust(left=0.07, right=0.985, bottom=0.16, top=0.88, wspace=0.35)  # tight_layout is slow
    live.a1, live.a2, live.a3 = a1, a2, a3
    _loss_curves(live, a1, epochs, "cross-entropy")
    layers = np.arange(1, n_layers + 1)
    live.bars = {}
    for ax, stat, title in ((a2, "act_std", "activation std per layer"), (a3, "grad_std", "weight-gradient std")):
        first = ax.bar(layers - 0.2, np.ones(n_layers), width=0.4, color="tab:gray", label="first step")
        last = ax.bar(layers + 0.2, np.ones(n_layers), width=0.4, color="tab:green", label="last step")
        live.bars[stat] = (first, last)
        live.changes(list(first) + list(last))
        live.changes(list(ax.spines.values()))  # the frame, over the bars
        ax.set_xticks(layers)
        ax.set_xlabel("hidden layer")
        ax.set_title(title, fontsize=9)
    a3.set_yscale("log")
    a3.minorticks_off()
    live.on_top(a2.legend(fontsize=7, loc="upper left"))  # over the bars
    return live


def _recipe_limits(runs):
    """Axis limits that hold every run (all are computed beforehand): no switch changes the axes."""
    curves = np.concatenate([np.ravel(r[k]) for r in runs.values() for k in ("val_loss", "train_loss")])
    curves = np.maximum(curves[np.isfinite(curves)], 1e-4)
    limits = {"a1": (curves.min() / 1.5, curves.max() * 1.5)}
    for stat, axis, log in (("act_std", "a2", False), ("grad_std", "a3", True)):
        values = np.maximum(np.concatenate([np.ravel(r[stat]) for r in runs.values()]).astype(float), 1e-12)
        values = values[np.isfinite(values)]
        limits[axis] = (values.min() / 3, values.max() * 3) if log else (0, values.max() * 1.15)
    return limits


def render_recipe(init, use_dropout, batch_norm, weight_decay, label_smoothing, *, init_weights, dropout,
                  batchnorm_forward, batchnorm_backward, sgd_momentum_step, cross_entropy, epochs=20,
                  inits=RECIPE_INITS, cache=None):
    """Train / validation curves of the chosen recipe (the bare one in grey) and per-layer statistics.

    All runs are computed on the first render (cached per set of student functions), so moving a switch
    only redraws the curves and bars, on axes that hold every run."""
    pieces = {"init_weights": init_weights, "dropout": dropout, "batchnorm_forward": batchnorm_forward,
              "batchnorm_backward": batchnorm_backward, "sgd_momentum_step": sgd_momentum_step,
              "cross_entropy": cross_entropy}
    key = ("runs", epochs, tuple(inits)) + tuple(pieces[name] for name in RECIPE_PIECES)
    runs = cached(cache, key, lambda: recipe_runs(pieces, epochs=epochs, inits=inits))
    config = {"init": init, "use_dropout": use_dropout, "batch_norm": batch_norm, "weight_decay": weight_decay,
              "label_smoothing": label_smoothing}
    run, bare = runs[_config_key(config)], runs[_config_key(BARE)]
    live = kept_figure(cache, lambda: _recipe_figure(len(run["val_loss"]), len(run["act_std"][0])))
    if live.new_background(key):
        for axis, limits in _recipe_limits(runs).items():
            getattr(live, axis).set_ylim(*limits)
    ep = np.arange(1, len(run["val_loss"]) + 1)
    for line, ys in ((live.bare_val, bare["val_loss"]), (live.bare_train, bare["train_loss"]),
                     (live.val, run["val_loss"]), (live.train, run["train_loss"])):
        line.set_data(ep, np.maximum(ys, 1e-4))
    for stat in ("act_std", "grad_std"):
        for which, bars in enumerate(live.bars[stat]):
            for rect, v in zip(bars, run[stat][which]):
                rect.set_height(max(float(v), 1e-12))
    name = init + "".join(f" + {label}" for label, on in (("dropout", use_dropout), ("batch norm", batch_norm),
                                                         ("weight decay", weight_decay),
                                                         ("label smoothing", label_smoothing)) if on)
    text = readout(f"{name}: final validation loss <b>{run['val_ce']:.3f}</b> (bare {bare['val_ce']:.3f}), "
                   f"validation accuracy {run['val_accuracy']:.1%}, training loss {run['train_loss'][-1]:.3f}; "
                   f"activation std per layer at the last step "
                   f"{', '.join(f'{v:.2f}' for v in run['act_std'][1])}",
                   recipe=name, val_loss=float(run["val_ce"]), bare_val_loss=float(bare["val_ce"]),
                   accuracy=float(run["val_accuracy"]), train_loss=float(run["train_loss"][-1]),
                   act_std=[float(v) for v in run["act_std"][1]])
    return live, text


def recipe_explorer(*, init_weights, dropout, batchnorm_forward, batchnorm_backward, sgd_momentum_step, cross_entropy,
                    epochs=20, inits=RECIPE_INITS):
    """Switches for each trick over a digits MLP trained with the student's pieces (all runs precomputed).

    Superseded (issue 29) by ``loop_recipe_explorer``, which the student's own ``train_digits`` drives; kept
    because notebooks already handed out call it."""
    controls = {
        "init": widgets.Dropdown(options=list(inits), value=inits[0], description="init"),
        "use_dropout": widgets.Checkbox(False, description="dropout"),
        "batch_norm": widgets.Checkbox(False, description="batch norm"),
        "weight_decay": widgets.Checkbox(False, description="weight decay"),
        "label_smoothing": widgets.Checkbox(False, description="label smoothing"),
    }
    needs = {"init_weights": init_weights, "dropout": dropout, "batchnorm_forward": batchnorm_forward,
             "batchnorm_backward": batchnorm_backward, "sgd_momentum_step": sgd_momentum_step,
             "cross_entropy": cross_entropy}
    return Explorer(functools.partial(render_recipe, epochs=epochs, inits=tuple(inits)),
                    controls, needs=needs, height="330px", columns=5,
                    title="The tricks on a digits MLP (4 hidden layers of 64, 300 training images)")


# ------------------------------------------------------------- the student's loop, trick by trick
