"""Drivers of ch03_backprop's checks (see ``dlcourse/drivers/__init__.py``): public helper code that
calls the student's functions and returns plain data; every verdict is reached in the test cell."""


def order_of(topological_order, graph, root):
    """Builds bare nodes from graph = [(name, [names of its ._prev]), ...] and returns
    topological_order(node root) as names (None for anything that is not one of the nodes)."""
    class Node:
        def __init__(self, name):
            self.name, self._prev = name, ()

    nodes = {}
    for name, parents in graph:
        nodes[name] = Node(name)
        nodes[name]._prev = tuple(nodes[p] for p in parents)
    order = topological_order(nodes[root])
    by_id = {id(v): k for k, v in nodes.items()}
    return {"type": type(order).__name__, "names": [by_id.get(id(v)) for v in order]}


def train_traced(train_mlp, MLP, zero_grad, sgd_step, X_train, y_train, X_val, y_val, **settings):
    """The student's ``train_mlp(MLP, zero_grad, sgd_step, X_train, y_train, X_val, y_val, **settings)``,
    with ``zero_grad`` and ``sgd_step`` wrapped to record each call (then calling the given ones).

    Returns plain data: what ``train_mlp`` returned (``params``, ``losses``, ``val_accuracy`` as float
    arrays, ``None`` for a missing key) and the trace: ``calls`` (the names "zero_grad" / "sgd_step" in
    call order), and per ``sgd_step`` call its ``lrs`` and ``grad_norms`` (the 2-norm of the parameters'
    gradients when the step was asked for)."""
    import math

    import numpy as np

    calls, lrs, grad_norms = [], [], []

    def recorded_zero_grad(params):
        calls.append("zero_grad")
        return zero_grad(params)

    def recorded_sgd_step(params, lr):
        calls.append("sgd_step")
        lrs.append(float(lr))
        grad_norms.append(math.sqrt(sum(float(p.grad) ** 2 for p in params)))
        return sgd_step(params, lr)

    result = train_mlp(MLP, recorded_zero_grad, recorded_sgd_step, X_train, y_train, X_val, y_val, **settings)
    out = {"type": type(result).__name__, "calls": calls, "lrs": np.asarray(lrs, dtype=np.float64),
           "grad_norms": np.asarray(grad_norms, dtype=np.float64)}
    for key in ("params", "losses", "val_accuracy"):
        value = result.get(key) if isinstance(result, dict) else None
        out[key] = None if value is None else np.asarray([float(v) for v in value], dtype=np.float64)
    return out
