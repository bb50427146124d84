"""Plausible mistakes in the graded functions of ch03_backprop (format: ``__init__.py`` here)."""
from autograder.tests.mutants import swap

MUTANTS = {
    "Value": {
        "assigns_instead_of_accumulating": swap(
            ("self.grad += out.grad\n            other.grad += out.grad",
             "self.grad = out.grad\n            other.grad = out.grad"),
            ("self.grad += other.data * out.grad\n            other.grad += self.data * out.grad",
             "self.grad = other.data * out.grad\n            other.grad = self.data * out.grad")),
        "relu_derivative_one_at_zero": swap(
            ("(1.0 if self.data > 0 else 0.0) * out.grad", "(1.0 if self.data >= 0 else 0.0) * out.grad")),
        "naive_sigmoid_overflows": swap(
            ("""        if x >= 0:
            s = 1.0 / (1.0 + math.exp(-x))
        else:
            e = math.exp(x)
            s = e / (1.0 + e)""", "        s = 1.0 / (1.0 + math.exp(-x))")),
        "rsub_wrong_order": swap(
            ("return Value._lift(other) - self", "return self - other")),
        "rtruediv_wrong_order": swap(
            ("return Value._lift(other) * self ** -1", "return self / other")),
        "recursive_backward_without_topological_order": swap(
            """        for node in reversed(topological_order(self)):
            node._backward()""",
            """
        def go(v):
            v._backward()
            for child in v._prev:
                go(child)
        go(self)"""),
        "log_derivative_of_output": swap(
            ("self.grad += out.grad / self.data", "self.grad += out.grad / out.data")),
        "tanh_derivative_wrong_sign": swap(
            ("(1.0 - t * t) * out.grad", "(1.0 + t * t) * out.grad")),
        "pow_forgets_exponent": swap(
            ("self.grad += p * self.data ** (p - 1) * out.grad", "self.grad += self.data ** (p - 1) * out.grad")),
        "prev_is_a_list": swap(
            ("self._prev = tuple(_prev)", "self._prev = list(_prev)")),
        "mul_backward_swapped": swap(
            "self.grad += other.data * out.grad\n            other.grad += self.data * out.grad",
            "self.grad += self.data * out.grad\n            other.grad += other.data * out.grad"),
        "relu_passes_every_gradient": swap(
            "(1.0 if self.data > 0 else 0.0) * out.grad", "out.grad"),
        "add_backward_assigns": swap(
            "self.grad += out.grad\n            other.grad += out.grad",
            "self.grad = out.grad\n            other.grad = out.grad"),
    },
    "topological_order": {
        "root_first": swap(
            ("order.append(node)\n        elif", "pass\n        elif"),
            ("seen.add(id(node))", "seen.add(id(node))\n            order.append(node)"),
        ),
        "no_visited_set": swap("elif id(node) not in seen:", "else:"),
        # a different traversal (breadth first, then reversed), not an edit of the depth-first one: whole cell
        "reversed_breadth_first": '''
def topological_order(root):
    order, seen, queue = [], {id(root)}, [root]
    while queue:
        v = queue.pop(0)
        order.append(v)
        for p in v._prev:
            if id(p) not in seen:
                seen.add(id(p))
                queue.append(p)
    return order[::-1]
''',
        "forgets_the_root": swap("return order", "return order[:-1]"),
        "leaves_only": swap("if expanded:", "if expanded and (not node._prev or node is root):"),
    },
    "numerical_gradient": {
        "default_eps_differs_from_the_contract": swap("eps=1e-6", "eps=1e-5"),
        "forward_difference": swap("(f(x + step) - f(x - step)) / (2 * eps)", "(f(x + step) - f(x)) / eps"),
        "divides_by_eps": swap("/ (2 * eps)", "/ eps"),
        "in_place_then_restore": swap(
            ("x = np.array(x, dtype=np.float64)  # a float64 copy\n    grad = np.zeros_like(x)",
             "grad = np.zeros(x.shape)"),
            ("""step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (f(x + step) - f(x - step)) / (2 * eps)""",
             """old = x[i]
        x[i] = old + eps
        fp = f(x)
        x[i] = old - eps
        fm = f(x)
        x[i] = old
        grad[i] = (fp - fm) / (2 * eps)"""),
        ),
        "keeps_input_dtype": swap("np.array(x, dtype=np.float64)  # a float64 copy", "np.array(x)  # a copy"),
        "ignores_eps_argument": swap(("step[i] = eps", "step[i] = 1e-5"), ("/ (2 * eps)", "/ (2 * 1e-5)")),
    },
    "two_layer_grads": {
        "forgets_factor_two": swap("2.0 * (y_pred - y)", "(y_pred - y)"),
        "sigmoid_derivative_is_h": swap("grad_h * h * (1.0 - h)", "grad_h * h"),
        "mean_instead_of_sum": swap(
            ("np.sum((y_pred - y) ** 2)", "np.mean((y_pred - y) ** 2)"),
            ("2.0 * (y_pred - y)", "2.0 * (y_pred - y) / y.size"),
        ),
        # a different implementation (torch autograd), nothing of the reference's to edit: whole cell
        "uses_torch_autograd": '''
import numpy as np
import torch
def two_layer_grads(x, y, w1, w2):
    tw1 = torch.tensor(w1, requires_grad=True)
    tw2 = torch.tensor(w2, requires_grad=True)
    loss = ((torch.sigmoid(torch.tensor(x) @ tw1) @ tw2 - torch.tensor(y)) ** 2).sum()
    loss.backward()
    return loss.item(), tw1.grad.numpy(), tw2.grad.numpy()
''',
        "grad_w1_uses_pre_activation_sigmoid_wrongly": swap("grad_h * h * (1.0 - h)", "grad_h * u * (1.0 - u)"),
        "loss_as_array": swap("float(np.sum((y_pred - y) ** 2))", "np.sum((y_pred - y) ** 2, keepdims=True)"),
    },
    "Dual": {
        "sin_tangent_minus_cos": swap(
            ("math.cos(self.value) * self.tangent", "-math.cos(self.value) * self.tangent")),
        "product_rule_missing_term": swap(
            ("self.tangent * other.value + self.value * other.tangent", "self.tangent * other.value")),
        "rsub_wrong_order": swap(
            ("return Dual._lift(other) - self", "return self - other")),
        "exp_ignores_incoming_tangent": swap(
            ("return Dual(e, e * self.tangent)", "return Dual(e, e)")),
        "no_reflected_add": swap(
            ("    def __radd__(self, other):\n        return self + other\n", "")),
        "neg_keeps_tangent": swap(
            ("return Dual(-self.value, -self.tangent)", "return Dual(-self.value, self.tangent)")),
    },
    "jvp": {
        "seeds_ones_not_v": swap("Dual(float(a), float(t))", "Dual(float(a), 1.0)"),
        "returns_value": swap("f(duals).tangent", "f(duals).value"),
        "returns_the_dual": swap("return float(f(duals).tangent)", "return f(duals)"),
        "only_first_direction": swap(
            ("Dual(float(a), float(t)) for a, t in zip(np.asarray(x, dtype=float), np.asarray(v, dtype=float))",
             "Dual(float(a), 1.0 if i == 0 else 0.0) for i, a in enumerate(np.asarray(x, dtype=float))"),
            ("float(f(duals).tangent)", "float(v[0] * f(duals).tangent)"),
        ),
        # a different implementation (torch.func.jvp), nothing of the reference's to edit: whole cell
        "uses_torch_func_jvp": '''
import numpy as np
import torch
def jvp(f, x, v):
    _, t = torch.func.jvp(f, (torch.as_tensor(x, dtype=torch.float64),), (torch.as_tensor(v, dtype=torch.float64),))
    return float(t)
''',
    },
    "MLP": {
        "relu_on_the_last_layer": swap(
            ("outputs.append(act if k == last else act.relu())", "outputs.append(act.relu())")),
        "no_relu_at_all": swap(
            ("outputs.append(act if k == last else act.relu())", "outputs.append(act)")),
        "bias_drawn_from_rng": swap(
            ("layer.append((weights, Value(0.0)))", "layer.append((weights, Value(rng.uniform(-1, 1))))")),
        "biases_listed_first": swap(
            ("for p in (*weights, bias)]", "for p in (bias, *weights)]")),
        "weights_drawn_input_major": swap(
            ("""            layer = []
            for _ in range(size):
                weights = [Value(rng.uniform(-1, 1)) for _ in range(fan_in)]
                layer.append((weights, Value(0.0)))""",
             """            columns = [[Value(rng.uniform(-1, 1)) for _ in range(size)] for _ in range(fan_in)]
            layer = [([columns[i][j] for i in range(fan_in)], Value(0.0)) for j in range(size)]""")),
        "always_returns_a_list": swap(
            ("return x[0] if len(x) == 1 else x", "return x")),
        "parameters_are_copies": swap(
            ("for p in (*weights, bias)]", "for p in (*(Value(w.data) for w in weights), Value(bias.data))]")),
    },
    "zero_grad": {
        "does_nothing": swap("    for p in params:\n        p.grad = 0.0", "    pass"),
        "returns_after_the_first": swap("\n        p.grad = 0.0", "\n        p.grad = 0.0\n        return"),
        "zeroes_the_data": swap("\n        p.grad = 0.0", "\n        p.data = 0.0"),
        "sets_none": swap("\n        p.grad = 0.0", "\n        p.grad = None"),
        "integer_zero": swap("\n        p.grad = 0.0", "\n        p.grad = 0"),
    },
    "sgd_step": {
        "adds_the_gradient": swap("\n        p.data -= lr * p.grad", "\n        p.data += lr * p.grad"),
        "forgets_the_learning_rate": swap("\n        p.data -= lr * p.grad", "\n        p.data -= p.grad"),
        "also_zeroes_the_gradient": swap(
            "\n        p.data -= lr * p.grad", "\n        p.data -= lr * p.grad\n        p.grad = 0.0"),
        "returns_after_the_first": swap(
            "\n        p.data -= lr * p.grad", "\n        p.data -= lr * p.grad\n        return"),
        "steps_on_the_data": swap("\n        p.data -= lr * p.grad", "\n        p.data -= lr * p.data"),
    },
    "train_mlp": {
        "no_zero_grad": swap("            zero_grad(params)\n", ""),
        "evaluates_on_training_data": swap(
            ("for x in X_val])", "for x in X_train])"), ("np.sign(scores) == y_val", "np.sign(scores) == y_train")),
        "shuffles_once": swap(
            ("    for epoch in range(epochs):\n        order = rng.permutation(len(X_train))\n",
             "    order = rng.permutation(len(X_train))\n    for epoch in range(epochs):\n")),
        "updates_before_backward": swap(
            "            loss.backward()\n            sgd_step(params, lr)\n",
            "            sgd_step(params, lr)\n            loss.backward()\n"),
        "drops_the_last_short_batch": swap(
            "range(0, len(X_train), batch_size)", "range(0, len(X_train) - batch_size + 1, batch_size)"),
        "sums_instead_of_mean": swap("            loss = loss * (1.0 / len(batch))\n", ""),
        "fresh_generator_per_epoch": swap("        order = rng.permutation(len(X_train))",
                                          "        order = np.random.default_rng(seed).permutation(len(X_train))"),
        # gradient clipping out of habit, between backward() and the step: the step no longer gets what the
        # backward pass computed (issue 39's tracing)
        "clips_the_gradients": swap(
            "            loss.backward()\n            sgd_step(params, lr)\n",
            "            loss.backward()\n            for p in params:\n"
            "                p.grad = max(-1.0, min(1.0, p.grad))\n            sgd_step(params, lr)\n"),
        "shuffles_before_building_the_model": swap(
            ("    model = MLP(X_train.shape[1], list(sizes), rng)\n", ""),
            ("    for epoch in range(epochs):\n        order = rng.permutation(len(X_train))\n",
             "    first = rng.permutation(len(X_train))\n    model = MLP(X_train.shape[1], list(sizes), rng)\n"
             "    params = model.parameters()\n    for epoch in range(epochs):\n"
             "        order = first if epoch == 0 else rng.permutation(len(X_train))\n"),
            ("    params = model.parameters()\n    losses", "    losses")),
    },
}

# Integration checks: each listed mistake (function/mistake of MUTANTS) must also make the end-to-end
# check fail: the student's own pieces then fail to train.
INTEGRATION = {
    "test_train_moons": ["train_mlp/no_zero_grad", "train_mlp/updates_before_backward", "zero_grad/does_nothing",
                         "sgd_step/adds_the_gradient", "Value/mul_backward_swapped", "MLP/relu_on_the_last_layer",
                         "train_mlp/clips_the_gradients"],
}
