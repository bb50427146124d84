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
    with ``zero_grad`` and ``sgd_step`` wrapped to record each call (then calling the given ones), and the
    ``backward`` method of the student's ``Value`` class (the type of the model's parameters) wrapped, for
    the run, to note the parameters' gradients it leaves.

    Returns plain data: what ``train_mlp`` returned (``params``, ``losses``, ``val_accuracy`` as float
    arrays, ``None`` for a missing key) and the trace: ``calls`` (the names "zero_grad" / "sgd_step" in
    call order), and per ``sgd_step`` call its ``lrs``, ``grad_norms`` (the 2-norm of the parameters'
    gradients when the step was asked for) and ``grad_gaps``: the largest ``|p.grad - g|`` over the
    parameters, ``g`` the gradient the last ``backward()`` left on ``p``, or ``inf`` when no ``backward()``
    ran since the previous step (0 exactly when the step is handed what the backward pass computed)."""
    import math

    import numpy as np

    calls, lrs, grad_norms, grad_gaps = [], [], [], []
    model_params, noted = [], []                 # the model's parameters; their gradients after backward()
    patched = []                                 # (class, its own backward or None)

    def recorded_zero_grad(params):
        calls.append("zero_grad")
        return zero_grad(params)

    def recorded_sgd_step(params, lr):
        calls.append("sgd_step")
        lrs.append(float(lr))
        grads = [float(p.grad) for p in params]
        grad_norms.append(math.sqrt(sum(g ** 2 for g in grads)))
        if noted and len(noted[0]) == len(grads):
            grad_gaps.append(max((abs(g - n) for g, n in zip(grads, noted[0])), default=0.0))
        else:
            grad_gaps.append(float("inf"))
        noted.clear()
        return sgd_step(params, lr)

    def traced_MLP(*args, **kwargs):
        model = MLP(*args, **kwargs)
        params = model.parameters()
        model_params[:] = list(params)
        cls = type(params[0]) if len(params) else None
        if cls is not None and not patched and callable(getattr(cls, "backward", None)):
            original = cls.backward

            def backward(self, *a, **k):
                result = original(self, *a, **k)
                noted[:] = [[float(p.grad) for p in model_params]]
                return result
            patched.append((cls, cls.__dict__.get("backward")))
            cls.backward = backward
        return model

    try:
        result = train_mlp(traced_MLP, recorded_zero_grad, recorded_sgd_step, X_train, y_train, X_val, y_val,
                           **settings)
    finally:
        for cls, own in patched:
            if own is None:
                del cls.backward
            else:
                cls.backward = own
    out = {"type": type(result).__name__, "calls": calls, "lrs": np.asarray(lrs, dtype=np.float64),
           "grad_norms": np.asarray(grad_norms, dtype=np.float64),
           "grad_gaps": np.asarray(grad_gaps, dtype=np.float64)}
    for key in ("params", "losses", "val_accuracy"):
        value = result.get(key) if isinstance(result, dict) else None
        out[key] = None if value is None else np.asarray([float(v) for v in value], dtype=np.float64)
    return out
