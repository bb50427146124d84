"""The widgets of ch03_backprop: controls change the readout; unfinished exercises are named."""
import numpy as np
import pytest

from dlcourse.widgets import ch03_backprop as ch03
from tests.helpers import assert_live_through_every_control, assert_names_missing, build, counting, move, stub


class _StubValue:
    """What the release gives: a constructor, and operations that raise."""

    def __init__(self, data, _prev=()):
        self.data, self.grad, self._prev = float(data), 0.0, tuple(_prev)

    def __mul__(self, other):
        raise NotImplementedError()


def test_backprop_graph_readout_walks_the_backward_pass(ref):
    explorer = build(ch03.backprop_graph_explorer, ref)
    first = explorer.readout.value
    assert explorer.values["step"] == 0 and explorer.values["steps"] == 10
    assert explorer.values["grads"] == [None, None, None] and "closed_form" not in explorer.values
    # unreached adjoints are shown as "?", and no adjoint (nor its closed form) appears before the sweep
    assert "[dL/dx, dL/dw, dL/db] = [?, ?, ?]" in first
    assert "-1.5" not in first and "0.5" not in first
    explorer.controls["step"].value = 1
    assert explorer.values["node"] == "L = log r" and explorer.values["node_grad"] == 1.0
    third = move(explorer, step=3)
    assert third != first and explorer.values["step"] == 3 and explorer.values["steps"] == 10
    assert explorer.values["grads"] == [None, None, None] and "[?, ?, ?]" in third
    last = move(explorer, step=ch03.N_NAMED)
    assert explorer.values["node"] == "x" and explorer.values["node_grad"] == pytest.approx(-1.5)
    assert explorer.values["grads"] == pytest.approx([-1.5, 1, 0.5])
    changed = move(explorer, w=1.0)
    assert changed != last and not np.allclose(explorer.values["grads"], [-1.5, 1, 0.5])
    assert explorer.last_render_seconds < 2.0


def test_backprop_graph_shows_partial_adjoints_only_once_reached(ref):
    """Midway, the leaves the sweep has reached show their adjoints, the others '?'."""
    texts = [ch03.render_backprop_graph(2.0, -3.0, 6.0, k, Value=ref.Value,
                                        topological_order=ref.topological_order)[1] for k in range(11)]
    reached = [t.values["grads"] for t in texts]
    counts = [sum(g is not None for g in r) for r in reached]
    assert counts[:7] == [0] * 7 and counts[-1] == 3 and counts == sorted(counts)
    assert all(g is None or g == pytest.approx(final) for r in reached for g, final in zip(r, [-1.5, 1, 0.5]))
    assert all(t.count("?") == r.count(None) for t, r in zip(texts, reached))  # an adjoint not reached: "?"


def test_backprop_graph_gradient_matches_closed_form(ref):
    _, text = ch03.render_backprop_graph(1.5, 0.5, -1.0, 10, Value=ref.Value,
                                         topological_order=ref.topological_order)
    grads, closed = text.values["grads"], text.values["closed_form"]
    assert None not in grads and grads == pytest.approx(closed)


def test_backprop_graph_names_missing_functions(ref):
    assert_names_missing(build(ch03.backprop_graph_explorer, ref, topological_order=stub), "topological_order")
    assert_names_missing(build(ch03.backprop_graph_explorer, ref, Value=_StubValue), "Value")


def test_mode_cost_readout_counts_passes(ref):
    explorer = build(ch03.mode_cost_explorer, ref)
    first = explorer.readout.value
    assert explorer.values["n"] == 16 and explorer.values["forward_passes"] == 16
    assert explorer.values["reverse_passes"] == 2
    second = move(explorer, n=40)
    assert second != first and explorer.values["n"] == 40 and explorer.values["forward_passes"] == 40
    assert explorer.values["operation_ratio"] == pytest.approx(20.0)
    assert explorer.values["max_gradient_difference"] < 1e-12


def test_mode_cost_names_missing_functions(ref):
    assert_names_missing(build(ch03.mode_cost_explorer, ref, jvp=stub), "jvp")
    assert_names_missing(build(ch03.mode_cost_explorer, ref, Value=_StubValue), "Value")


def test_mode_cost_measures_each_size_once(ref):
    jvp = counting(ref.jvp)
    explorer = ch03.mode_cost_explorer(jvp=jvp, Value=ref.Value)
    first = explorer.readout.value
    assert len(jvp.calls) == 1 + 2 + 4 + 8 + 16  # n = 16 and the powers of two below
    explorer.controls["n"].value = 40
    assert len(jvp.calls) == 31 + 32 + 40  # only the sizes not measured yet
    explorer.controls["n"].value = 16
    assert len(jvp.calls) == 31 + 32 + 40 and explorer.readout.value == first
    # a re-run exercise cell (a new function object) is measured afresh, never served stale
    other = counting(ref.jvp)
    _, text = ch03.render_mode_cost(16, jvp=other, Value=ref.Value, cache=explorer.cache)
    assert len(other.calls) == 31 and text.values["forward_passes"] == 16


def test_live_pictures_are_current_after_every_move(ref):
    graph = build(ch03.backprop_graph_explorer, ref)
    assert_live_through_every_control(graph, max_full_draws=1)  # the graph's shape never changes
    assert_live_through_every_control(build(ch03.mode_cost_explorer, ref))


def test_train_traced_follows_the_backward_into_the_step(ref):
    """grad_gaps is exactly 0 when each sgd_step gets what backward() left; not when the gradients are changed
    in between or when no backward() ran; the student's Value gets its own backward back after the run."""
    from dlcourse.drivers.ch03_backprop import train_traced
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((6, 2)), np.array([1.0, -1.0, 1.0, 1.0, -1.0, -1.0])
    settings = dict(sizes=(3, 1), epochs=2, batch_size=3)
    run = train_traced(ref.train_mlp, ref.MLP, ref.zero_grad, ref.sgd_step, X, y, X, y, **settings)
    assert np.array_equal(run["grad_gaps"], np.zeros(4)) and run["calls"].count("sgd_step") == 4
    assert ref.Value.backward is ref.Value.__dict__["backward"] and "traced" not in repr(ref.Value.backward)

    def nudging_loop(MLP, zero_grad, sgd_step, *data, **kwargs):     # changes .grad between backward and step
        def nudged_step(params, lr):
            for p in params:
                p.grad += 1e-12
            sgd_step(params, lr)
        return ref.train_mlp(MLP, zero_grad, nudged_step, *data, **kwargs)
    run = train_traced(nudging_loop, ref.MLP, ref.zero_grad, ref.sgd_step, X, y, X, y, **settings)
    assert np.all(run["grad_gaps"] > 0) and np.all(np.isfinite(run["grad_gaps"]))

    def no_backward_loop(MLP, zero_grad, sgd_step, X_train, y_train, X_val, y_val, **kwargs):
        params = MLP(2, [3, 1], np.random.default_rng(0)).parameters()
        for _ in range(3):
            zero_grad(params)
            sgd_step(params, 0.1)
        return {"params": [p.data for p in params], "losses": [0.0] * 3, "val_accuracy": [0.5]}
    run = train_traced(no_backward_loop, ref.MLP, ref.zero_grad, ref.sgd_step, X, y, X, y)
    assert np.all(np.isinf(run["grad_gaps"])) and len(run["grad_gaps"]) == 3


def test_the_baseline_and_the_chapters_numbers_agree(ref):
    """The prose of section 5 states the majority label's, the logistic regression's and the reference's test
    accuracies on the moons; the check's margin holds for the reference."""
    import nbformat

    from autograder.course import SOLUTIONS
    X_train, y_train, X_val, y_val, X_test, y_test = ch03.moons_split()
    logistic = ch03.moons_logistic_baseline()["accuracy"]
    majority = max(np.mean(y_test == 1), np.mean(y_test == -1))
    run = ref.train_mlp(ref.MLP, ref.zero_grad, ref.sgd_step, X_train, y_train, X_val, y_val)
    accuracy = float(np.mean(np.sign(ch03.mlp_numpy(run["params"], 2, [8, 8, 1], X_test)[:, 0]) == y_test))
    notebook = nbformat.read(str(SOLUTIONS / "ch03_backprop" / "ch03_backprop.ipynb"), as_version=4)
    cell = next(c.source for c in notebook.cells
                if c.cell_type == "markdown" and "Integration check: your engine" in c.source)
    for stated in (f"({majority:.0%})", f"({logistic:.0%})", f"gets {accuracy:.0%}"):
        assert stated.replace("%", " %") in cell, f"the integration check's prose should state {stated}"
    assert accuracy >= max(logistic + 0.04, majority + 0.3)
