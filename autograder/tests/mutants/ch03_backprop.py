"""Plausible mistakes in the graded functions of ch03_backprop: each must make its test cell fail.

Written as edits of the reference solutions (``swap``) or, where an edit cannot say it, as the
whole solution cell; the format and the loader are in autograder/tests/mutants/__init__.py.
"""
from autograder.tests.mutants import swap

_VALUE = '''
import math


class Value:
    def __init__(self, data, _prev=()):
        self.data = float(data)
        self.grad = 0.0
        self._prev = tuple(_prev)
        self._backward = lambda: None

    @staticmethod
    def _lift(other):
        return other if isinstance(other, Value) else Value(other)

    def __add__(self, other):
        other = Value._lift(other)
        out = Value(self.data + other.data, (self, other))

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = Value._lift(other)
        out = Value(self.data * other.data, (self, other))

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __pow__(self, p):
        out = Value(self.data ** p, (self,))

        def _backward():
            self.grad += p * self.data ** (p - 1) * out.grad
        out._backward = _backward
        return out

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-Value._lift(other))

    def __truediv__(self, other):
        return self * Value._lift(other) ** -1

    def __radd__(self, other):
        return self + other

    def __rsub__(self, other):
        return Value._lift(other) - self

    def __rmul__(self, other):
        return self * other

    def __rtruediv__(self, other):
        return Value._lift(other) * self ** -1

    def exp(self):
        out = Value(math.exp(self.data), (self,))

        def _backward():
            self.grad += out.data * out.grad
        out._backward = _backward
        return out

    def log(self):
        out = Value(math.log(self.data), (self,))

        def _backward():
            self.grad += out.grad / self.data
        out._backward = _backward
        return out

    def relu(self):
        out = Value(self.data if self.data > 0 else 0.0, (self,))

        def _backward():
            self.grad += (1.0 if self.data > 0 else 0.0) * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,))

        def _backward():
            self.grad += (1.0 - t * t) * out.grad
        out._backward = _backward
        return out

    def sigmoid(self):
        x = self.data
        if x >= 0:
            s = 1.0 / (1.0 + math.exp(-x))
        else:
            e = math.exp(x)
            s = e / (1.0 + e)
        out = Value(s, (self,))

        def _backward():
            self.grad += s * (1.0 - s) * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()
'''


def _value_mutant(*pairs):
    src = _VALUE
    for old, new in pairs:
        assert old in src, old
        src = src.replace(old, new)
    return src


_DUAL = '''
import math


class Dual:
    def __init__(self, value, tangent=0.0):
        self.value = float(value)
        self.tangent = float(tangent)

    @staticmethod
    def _lift(other):
        return other if isinstance(other, Dual) else Dual(other, 0.0)

    def __add__(self, other):
        other = Dual._lift(other)
        return Dual(self.value + other.value, self.tangent + other.tangent)

    def __radd__(self, other):
        return self + other

    def __neg__(self):
        return Dual(-self.value, -self.tangent)

    def __sub__(self, other):
        return self + (-Dual._lift(other))

    def __rsub__(self, other):
        return Dual._lift(other) - self

    def __mul__(self, other):
        other = Dual._lift(other)
        return Dual(self.value * other.value, self.tangent * other.value + self.value * other.tangent)

    def __rmul__(self, other):
        return self * other

    def sin(self):
        return Dual(math.sin(self.value), math.cos(self.value) * self.tangent)

    def exp(self):
        e = math.exp(self.value)
        return Dual(e, e * self.tangent)
'''


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
        "recursive_backward_without_topological_order": _value_mutant(
            ("""        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()""", """        self.grad = 1.0

        def go(v):
            v._backward()
            for child in v._prev:
                go(child)
        go(self)""")),
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
        "root_first": '''
def topological_order(root):
    order, seen = [], set()

    def visit(v):
        if v not in seen:
            seen.add(v)
            order.append(v)
            for p in v._prev:
                visit(p)
    visit(root)
    return order
''',
        "no_visited_set": '''
def topological_order(root):
    order = []

    def visit(v):
        for p in v._prev:
            visit(p)
        order.append(v)
    visit(root)
    return order
''',
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
        "forgets_the_root": '''
def topological_order(root):
    order, seen = [], set()

    def visit(v):
        for p in v._prev:
            if p not in seen:
                seen.add(p)
                visit(p)
                order.append(p)
    visit(root)
    return order
''',
        "leaves_only": '''
def topological_order(root):
    order, seen, todo = [], set(), [root]
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        if not v._prev:
            order.append(v)
        todo.extend(v._prev)
    return order + [root]
''',
    },
    "numerical_gradient": {
        "default_eps_differs_from_the_contract": '''
import numpy as np
def numerical_gradient(f, x, eps=1e-5):
    x = np.array(x, dtype=np.float64)
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g
''',
        "forward_difference": '''
import numpy as np
def numerical_gradient(f, x, eps=1e-6):
    x = np.array(x, dtype=np.float64)
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x)) / eps
    return g
''',
        "divides_by_eps": '''
import numpy as np
def numerical_gradient(f, x, eps=1e-6):
    x = np.array(x, dtype=np.float64)
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / eps
    return g
''',
        "in_place_then_restore": '''
import numpy as np
def numerical_gradient(f, x, eps=1e-6):
    g = np.zeros(x.shape)
    for i in range(x.size):
        old = x[i]
        x[i] = old + eps
        fp = f(x)
        x[i] = old - eps
        fm = f(x)
        x[i] = old
        g[i] = (fp - fm) / (2 * eps)
    return g
''',
        "keeps_input_dtype": '''
import numpy as np
def numerical_gradient(f, x, eps=1e-6):
    g = np.zeros(x.shape)
    for i in range(x.size):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g
''',
        "ignores_eps_argument": '''
import numpy as np
def numerical_gradient(f, x, eps=1e-6):
    x = np.array(x, dtype=np.float64)
    h = 1e-5
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g
''',
    },
    "two_layer_grads": {
        "forgets_factor_two": '''
import numpy as np
def two_layer_grads(x, y, w1, w2):
    h = 1 / (1 + np.exp(-x @ w1))
    y_pred = h @ w2
    loss = float(np.sum((y_pred - y) ** 2))
    g = y_pred - y
    grad_w2 = h.T @ g
    grad_w1 = x.T @ ((g @ w2.T) * h * (1 - h))
    return loss, grad_w1, grad_w2
''',
        "sigmoid_derivative_is_h": '''
import numpy as np
def two_layer_grads(x, y, w1, w2):
    h = 1 / (1 + np.exp(-x @ w1))
    y_pred = h @ w2
    loss = float(np.sum((y_pred - y) ** 2))
    g = 2 * (y_pred - y)
    grad_w2 = h.T @ g
    grad_w1 = x.T @ ((g @ w2.T) * h)
    return loss, grad_w1, grad_w2
''',
        "mean_instead_of_sum": '''
import numpy as np
def two_layer_grads(x, y, w1, w2):
    n = y.size
    h = 1 / (1 + np.exp(-x @ w1))
    y_pred = h @ w2
    loss = float(np.mean((y_pred - y) ** 2))
    g = 2 * (y_pred - y) / n
    grad_w2 = h.T @ g
    grad_w1 = x.T @ ((g @ w2.T) * h * (1 - h))
    return loss, grad_w1, grad_w2
''',
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
        "grad_w1_uses_pre_activation_sigmoid_wrongly": '''
import numpy as np
def two_layer_grads(x, y, w1, w2):
    u = x @ w1
    h = 1 / (1 + np.exp(-u))
    y_pred = h @ w2
    loss = float(np.sum((y_pred - y) ** 2))
    g = 2 * (y_pred - y)
    grad_w2 = h.T @ g
    grad_w1 = x.T @ ((g @ w2.T) * u * (1 - u))
    return loss, grad_w1, grad_w2
''',
        "loss_as_array": '''
import numpy as np
def two_layer_grads(x, y, w1, w2):
    h = 1 / (1 + np.exp(-x @ w1))
    y_pred = h @ w2
    loss = np.sum((y_pred - y) ** 2, keepdims=True)
    g = 2 * (y_pred - y)
    grad_w2 = h.T @ g
    grad_w1 = x.T @ ((g @ w2.T) * h * (1 - h))
    return loss, grad_w1, grad_w2
''',
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
        "seeds_ones_not_v": _DUAL + '''
import numpy as np
def jvp(f, x, v):
    return float(f([Dual(a, 1.0) for a in x]).tangent)
''',
        "returns_value": _DUAL + '''
import numpy as np
def jvp(f, x, v):
    return float(f([Dual(a, t) for a, t in zip(x, v)]).value)
''',
        "returns_the_dual": _DUAL + '''
import numpy as np
def jvp(f, x, v):
    return f([Dual(a, t) for a, t in zip(x, v)])
''',
        "only_first_direction": _DUAL + '''
import numpy as np
def jvp(f, x, v):
    duals = [Dual(a, 1.0 if i == 0 else 0.0) for i, a in enumerate(x)]
    return float(v[0] * f(duals).tangent)
''',
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
        "does_nothing": '''
def zero_grad(params):
    pass
''',
        "returns_after_the_first": '''
def zero_grad(params):
    for p in params:
        p.grad = 0.0
        return
''',
        "zeroes_the_data": '''
def zero_grad(params):
    for p in params:
        p.data = 0.0
''',
        "sets_none": '''
def zero_grad(params):
    for p in params:
        p.grad = None
''',
        "integer_zero": '''
def zero_grad(params):
    for p in params:
        p.grad = 0
''',
    },
    "sgd_step": {
        "adds_the_gradient": '''
def sgd_step(params, lr):
    for p in params:
        p.data += lr * p.grad
''',
        "forgets_the_learning_rate": '''
def sgd_step(params, lr):
    for p in params:
        p.data -= p.grad
''',
        "also_zeroes_the_gradient": '''
def sgd_step(params, lr):
    for p in params:
        p.data -= lr * p.grad
        p.grad = 0.0
''',
        "returns_after_the_first": '''
def sgd_step(params, lr):
    for p in params:
        p.data -= lr * p.grad
        return
''',
        "steps_on_the_data": '''
def sgd_step(params, lr):
    for p in params:
        p.data -= lr * p.data
''',
    },
}

# Integration checks: each listed mistake (function/mistake of MUTANTS) must also make the end-to-end
# check fail: the student's own pieces then fail to train.
INTEGRATION = {
    "test_train_moons": ["zero_grad/does_nothing", "sgd_step/adds_the_gradient", "Value/mul_backward_swapped",
                         "Value/add_backward_assigns", "MLP/relu_on_the_last_layer"],
}
