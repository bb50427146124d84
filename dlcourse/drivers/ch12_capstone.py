"""Drivers and data of ch12_capstone's checks (see ``dlcourse/drivers/__init__.py``): public helper code that
calls the student's functions where they run and returns plain data; every verdict is reached in the test
cell.

The chapter's task (issue 42): ``pointer_sequences()``, sequences of 7 symbol tokens and a pointer token whose
answer is the symbol at the position the pointer names, so that no function of one token alone (and no sum of
such functions) can give it. ``digit_rows()`` and ``logistic_baseline()``, the digit rows of the releases before,
stay for the notebooks already handed out."""
import functools

import numpy as np

# ------------------------------------------------------------------ the pointer task (the chapter's data)

N_SYMBOLS = 10       # the symbols, and the classes: the label is a symbol
N_SLOTS = 7          # symbol tokens per sequence (positions 0..6); token 7 is the pointer
N_TOKENS = N_SLOTS + 1
N_FEATURES = N_SYMBOLS + N_SLOTS  # a symbol token: its symbol one-hot; the pointer: the position one-hot
POINTER_SIZES = {"train": 1500, "validation": 500, "test": 1000}
POINTER_SEED = 12


def _pointer_draw(n, rng):
    symbols = rng.integers(0, N_SYMBOLS, (n, N_SLOTS))
    pointer = rng.integers(0, N_SLOTS, n)
    X = np.zeros((n, N_TOKENS, N_FEATURES))
    X[np.arange(n)[:, None], np.arange(N_SLOTS)[None, :], symbols] = 1.0
    X[np.arange(n), N_SLOTS, N_SYMBOLS + pointer] = 1.0
    return X, symbols[np.arange(n), pointer]


@functools.cache
def _pointer_split():
    rng = np.random.default_rng(POINTER_SEED)
    arrays = []
    for part in ("train", "validation", "test"):
        arrays += _pointer_draw(POINTER_SIZES[part], rng)
    for a in arrays:
        a.flags.writeable = False
    return tuple(arrays)


def pointer_sequences():
    """The capstone's data: ``(X_train, y_train, X_val, y_val, X_test, y_test)``, 1500 / 500 / 1000 sequences of
    8 tokens of 17 features (float64, shape ``(N, 8, 17)``) and their labels (int, in 0..9).

    Tokens 0..6 each carry a symbol, drawn uniformly from 10, as a one-hot in features 0..9 (features 10..16 zero);
    token 7, the pointer, carries a position ``p`` in 0..6, drawn uniformly, as a one-hot in features 10..16
    (features 0..9 zero). The label is the symbol of token ``p``. Drawn from ``default_rng(12)`` in this order:
    the training, validation and test parts, each ``symbols = rng.integers(0, 10, (n, 7))`` then ``pointers =
    rng.integers(0, 7, n)``. Fresh copies at each call."""
    return tuple(a.copy() for a in _pointer_split())


def symbols_and_pointers(X):
    """The symbols ``(N, 7)`` and pointers ``(N,)`` a batch of ``pointer_sequences()`` encodes."""
    X = np.asarray(X)
    return X[:, :N_SLOTS, :N_SYMBOLS].argmax(axis=-1), X[:, N_SLOTS, N_SYMBOLS:].argmax(axis=-1)


@functools.cache
def _logistic_accuracy(split, **options):
    """The test accuracy of scikit-learn's ``LogisticRegression(**options)`` fitted to the flattened training part of
    ``split()`` (a cached splitter of this module), on one BLAS thread; once per process and split."""
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    X_train, y_train, _, _, X_test, y_test = split()
    with threadpool_limits(1):  # one thread: the same number on every machine, and fast on a busy one
        model = LogisticRegression(**options).fit(X_train.reshape(len(X_train), -1), y_train)
        return float(model.score(X_test.reshape(len(X_test), -1), y_test))


def pointer_logistic_baseline():
    """The baseline of the held-out check: the test accuracy (a float in [0, 1]) of a logistic regression on the
    flattened 8 x 17 = 136 features of ``pointer_sequences()``'s 1500 training sequences (scikit-learn's
    ``LogisticRegression`` with its defaults: multinomial, L2 penalty with C = 1, lbfgs, 100 iterations; BLAS on one
    thread), on the 1000 test sequences. Made once per process."""
    return _logistic_accuracy(_pointer_split)


# ------------------------------------------------------------------ the digit rows (releases before issue 42)

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


PARAMETERS = ("We", "be", "P", "g1", "c1", "Wq", "Wk", "Wv", "Wm", "bm", "g2", "c2", "Wo", "bo")


def logistic_baseline():
    """The baseline of the held-out check: the test accuracy (a float in [0, 1]) of a logistic regression on the
    64 pixels of ``digit_rows()``'s 1047 training digits (scikit-learn's ``LogisticRegression`` with its defaults:
    multinomial, L2 penalty with C = 1, lbfgs; BLAS on one thread), on the 450 test digits. Made once per
    process."""
    return _logistic_accuracy(_split, max_iter=2000)


def _argument(args, kwargs, position, name):
    return kwargs[name] if name in kwargs else args[position]


def _same(a, b) -> bool:
    return np.shape(a) == np.shape(b) and np.array_equal(a, b)


class _Trace:
    """What the backward pieces returned and what ``adam_step`` was given, step by step (see ``train_traced``)."""

    # per piece: the inputs kept (position, name) and the outputs kept (positions): the parameters' gradients
    KEPT = {"linear": (((0, "dY"), (2, "W")), (1, 2)),
            "layernorm": (((1, "X"), (2, "gamma")), (1, 2)),
            "attention": ((), (1, 2, 3))}

    def __init__(self, alter=0.0, keep_steps=False):
        self.alter, self.noise = float(alter), np.random.default_rng(2024)
        self.keep_steps, self.steps = keep_steps, []  # every step's (params, grads) when keep_steps
        self.returned = {}  # slot (position of the call in its step) -> the (param, m, v) adam_step returned
        self.records = []  # backward calls since the last adam_step call: (kind, inputs, outputs)
        self.step = None   # the open step: {"records": [...], "calls": [(param, grad)]}
        self.first = None  # the first step's (params, grads)
        self.out = {key: [] for key in ("ts", "lrs", "shapes", "update_sq", "traced_sq", "diff_sq", "fresh",
                                        "carry_diff", "carry_scale")}

    def backward(self, kind, function):
        inputs_kept, outputs_kept = self.KEPT[kind]

        def recorded(*args, **kwargs):
            value = function(*args, **kwargs)
            if self.alter:
                value = self.altered(value)
            try:
                inputs = [np.array(_argument(args, kwargs, i, name), dtype=np.float64) for i, name in inputs_kept]
                value_tuple = tuple(value)
                outputs = [np.array(value_tuple[i], dtype=np.float64) for i in outputs_kept]
            except Exception:  # noqa: BLE001 - a call the trace cannot read: the updates will not match it
                inputs, outputs = None, None
            if self.step is not None and self.step["calls"]:
                self.close()
            self.records.append((kind, inputs, outputs))
            del self.records[:-1000]  # a run without adam_step (SGD) keeps its last calls only
            return value
        return recorded

    def altered(self, value):
        """The results of a backward piece, each multiplied elementwise by ``1 + alter * u``, ``u`` uniform in
        [-1, 1] (``value`` itself when it is not a tuple of arrays)."""
        try:
            arrays = [np.asarray(v, dtype=np.float64) for v in tuple(value)]
        except Exception:  # noqa: BLE001 - not a tuple of arrays: handed on as it is
            return value
        return tuple(a * (1.0 + self.alter * self.noise.uniform(-1.0, 1.0, a.shape)) for a in arrays)

    def adam(self, adam_step):
        def recorded(param, grad, m, v, t, *args, **kwargs):
            out = self.out
            out["ts"].append(float(t))
            out["lrs"].append(float(kwargs.get("lr", args[0] if args else float("nan"))))
            out["shapes"].append(tuple(np.shape(param)))
            out["fresh"].append(1.0 if self.records else 0.0)
            if self.records or self.step is None:
                if self.step is not None:
                    self.close()
                self.step = {"records": self.records, "calls": []}
                self.records = []
            slot = len(self.step["calls"])
            self.step["calls"].append((np.array(param, dtype=np.float64), np.array(grad, dtype=np.float64)))
            self.carried(slot, param, m, v)
            value = adam_step(param, grad, m, v, t, *args, **kwargs)
            try:
                self.returned[slot] = tuple(np.array(a, dtype=np.float64) for a in value)
            except Exception:  # noqa: BLE001 - not three arrays: nothing to carry
                self.returned[slot] = None
            return value
        return recorded

    def carried(self, slot, param, m, v):
        """How far the (param, m, v) given to this call are from what the call in the same slot of the previous step
        returned (the first step: how far m and v are from zero): the largest absolute difference, and the largest
        absolute value of the returned arrays (inf, nan when they cannot be compared)."""
        try:
            given = [np.asarray(a, dtype=np.float64) for a in (param, m, v)]
        except Exception:  # noqa: BLE001 - not arrays: the check fails on it
            given = None
        first, before = slot not in self.returned, self.returned.get(slot)
        diff, scale = float("inf"), float("nan")
        if given is not None and first:  # the first call in this slot: m and v start at zero
            diff, scale = max(float(np.max(np.abs(a), initial=0.0)) for a in given[1:]), 0.0
        elif given is not None and before and len(before) == 3 and all(
                np.shape(a) == np.shape(b) for a, b in zip(given, before)):
            diff = max(float(np.max(np.abs(a - b), initial=0.0)) for a, b in zip(given, before))
            scale = max(float(np.max(np.abs(b), initial=0.0)) for b in before)
        self.out["carry_diff"].append(diff)
        self.out["carry_scale"].append(scale)

    def close(self):
        """Compare the open step's updates with the sums of its backward outputs, parameter by parameter."""
        step, self.step = self.step, None
        if step is None or not step["calls"]:
            return
        params, grads = [p for p, _ in step["calls"]], [g for _, g in step["calls"]]
        if self.first is None:
            self.first = (params, grads)
        if self.keep_steps:
            self.steps.append((params, grads))
        traced = self.traced(step["records"], params) if len(params) == len(PARAMETERS) else None
        sizes = [g.size for g in grads]
        given = np.concatenate([g.ravel() for g in grads])
        starts = np.cumsum([0] + sizes[:-1])
        self.out["update_sq"].extend(np.add.reduceat(given ** 2, starts).tolist() if given.size else [0.0] * len(sizes))
        if traced is None or any(w is None or np.shape(w) != np.shape(g) for w, g in zip(traced, grads)):
            ok = [traced is not None and w is not None and np.shape(w) == np.shape(g)
                  for w, g in zip(traced or [None] * len(grads), grads)]
            traced = [w if good else np.full(np.shape(g), np.nan) for w, g, good in zip(traced or grads, grads, ok)]
        want = np.concatenate([w.ravel() for w in traced])
        if given.size:
            self.out["traced_sq"].extend(np.add.reduceat(want ** 2, starts).tolist())
            self.out["diff_sq"].extend(np.add.reduceat((given - want) ** 2, starts).tolist())
        else:
            self.out["traced_sq"].extend([0.0] * len(sizes))
            self.out["diff_sq"].extend([0.0] * len(sizes))

    @staticmethod
    def traced(records, params):
        """Per parameter of the contract: the sum of what the backward pieces returned for it in this step (zeros
        for a parameter no piece returned a gradient of; None where the outputs cannot be added up)."""
        sums = [None] * len(params)
        broken = set()

        def add(i, value):
            if np.shape(value) != np.shape(params[i]):
                broken.add(i)
            else:
                sums[i] = value if sums[i] is None else sums[i] + value

        groups = {}  # layer norms: (gamma, X) -> [gamma, dgamma, dbeta], in the order of their first call
        T, d = np.shape(params[2])
        for kind, inputs, outputs in records:
            if inputs is None:
                continue
            if kind == "linear":
                (dY, W), (dW, db) = inputs, outputs
                for i in (0, 8, 12):  # We, Wm, Wo
                    if _same(W, params[i]):
                        add(i, dW)
                        add(i + 1, db)
                        if i == 0:  # P: the gradient at E summed over the examples of the batch
                            add(2, dY.reshape(-1, T, d).sum(axis=0) if dY.size % (T * d) == 0 and dY.shape[-1] == d
                                else dY)
                        break
            elif kind == "layernorm":
                (X, gamma), (dgamma, dbeta) = inputs, outputs
                key = (gamma.tobytes(), X.shape, X.tobytes())
                if key in groups:
                    group = groups[key]
                    group[1] = group[1] + dgamma if dgamma.shape == group[1].shape else np.full(1, np.nan)
                    group[2] = group[2] + dbeta if dbeta.shape == group[2].shape else np.full(1, np.nan)
                else:
                    groups[key] = [gamma, dgamma, dbeta]
            else:
                for i, value in zip((5, 6, 7), outputs):  # Wq, Wk, Wv
                    add(i, value)
        # the second layer norm's backward comes first (the gradient flows from the output down): g2 takes the
        # first group whose gamma is g2, g1 the last other group whose gamma is g1
        ordered = list(groups.values())
        second = next((g for g in ordered if _same(g[0], params[10])), None)
        first = next((g for g in reversed(ordered) if g is not second and _same(g[0], params[3])), None)
        for i, group in ((10, second), (3, first)):
            if group is not None:
                add(i, group[1])
                add(i + 1, group[2])
        return [None if i in broken else np.zeros_like(p) if s is None else s
                for i, (s, p) in enumerate(zip(sums, params))]


def train_traced(train_capstone, linear_forward, linear_backward, layernorm_forward, layernorm_backward,
                 attention_forward, attention_backward, adam_step, X_train, y_train, X_val, y_val, alter=0.0,
                 keep_steps=False, **settings):
    """The student's ``train_capstone(<the seven pieces>, X_train, y_train, X_val, y_val, **settings)``, run
    under ``from_scratch`` (torch called anywhere in the run fails it), with the three backward pieces and
    ``adam_step`` wrapped to record what they return and are given (then calling the given ones). With
    ``alter`` > 0 the wrapped backward pieces return the student's results each multiplied elementwise by
    ``1 + alter * u``, ``u`` uniform in [-1, 1] from ``default_rng(2024)``: then only a loop that hands
    ``adam_step`` what the pieces returned (not gradients computed another way, even right ones) matches them.

    Returns plain data: what ``train_capstone`` returned (``params`` as a list of float arrays; ``losses``,
    ``val_loss``, ``val_accuracy`` as float arrays; ``None`` for a missing key), its ``type``, and per
    ``adam_step`` call in call order: its step number ``ts``, learning rate ``lrs``, the ``shapes`` of the
    parameter, ``fresh`` (1 when a backward piece was called since the previous ``adam_step`` call, else 0),
    ``update_sq`` (the sum of squares of the gradient it was given), ``traced_sq`` and ``diff_sq``: the sum of
    squares of the gradient the backward pieces returned for that parameter in that step, and of its difference
    from the one given (``nan`` when the step did not make 14 calls or the outputs cannot be added up).

    A step is the ``adam_step`` calls after a run of backward calls. In a step of 14 calls (the parameters in the
    order of ``PARAMETERS``) a parameter's traced gradient is the sum, over the step's backward calls, of: for
    ``We``, ``be`` (``Wm``, ``bm``; ``Wo``, ``bo``), ``dW`` and ``db`` of the ``linear_backward`` calls whose ``W``
    was that weight; for ``P``, the ``dY`` of the calls with ``We`` summed over the batch; for ``Wq``, ``Wk``,
    ``Wv``, the outputs of ``attention_backward``; for ``g2``, ``c2`` (``g1``, ``c1``) ``dgamma`` and ``dbeta`` of
    the first (last) ``layernorm_backward`` input ``(X, gamma)`` whose ``gamma`` is that gain; zeros for a
    parameter no piece returned a gradient of. ``first_params`` and ``first_grads``: the 14 parameters and
    gradients given to ``adam_step`` at the first step (``None`` without one); with ``keep_steps``, ``step_params``
    and ``step_grads``: those of every step (a list per step; for small runs).

    Per ``adam_step`` call also ``carry_diff`` and ``carry_scale``: the largest absolute difference between the
    ``(param, m, v)`` it was given and what the call in the same position of the previous step returned, and the
    largest absolute value of what that call returned (at a parameter's first call: the largest ``|m|``, ``|v|``,
    and 0), so that a loop that does not use the parameters and moments ``adam_step`` returns is seen."""
    from dlcourse.testing import from_scratch

    trace = _Trace(alter, keep_steps)
    with from_scratch("train_capstone (and every piece it calls)"):
        result = train_capstone(linear_forward, trace.backward("linear", linear_backward), layernorm_forward,
                                trace.backward("layernorm", layernorm_backward), attention_forward,
                                trace.backward("attention", attention_backward), trace.adam(adam_step),
                                X_train, y_train, X_val, y_val, **settings)
    trace.close()
    out = {"type": type(result).__name__, "shapes": trace.out["shapes"],
           **{key: np.asarray(values, dtype=np.float64) for key, values in trace.out.items() if key != "shapes"}}
    out["first_params"], out["first_grads"] = trace.first or (None, None)
    if keep_steps:
        out["step_params"], out["step_grads"] = [p for p, _ in trace.steps], [g for _, g in trace.steps]
    value = result.get("params") if isinstance(result, dict) else None
    out["params"] = None if value is None else [np.array(p, dtype=np.float64) for p in value]
    for key in ("losses", "val_loss", "val_accuracy"):
        value = result.get(key) if isinstance(result, dict) else None
        out[key] = None if value is None else np.asarray([float(v) for v in value], dtype=np.float64)
    return out
