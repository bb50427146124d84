"""The widgets of ch04_cnn: controls change the readout; missing functions are named."""
import numpy as np
import pytest

from dlcourse.widgets import ch04_cnn as ch04
from tests.helpers import (
    assert_each_missing_is_named,
    assert_live_through_every_control,
    assert_names_missing,
    build,
    move,
    stub,
)


def test_kernel_explorer_stride_and_padding_change_the_output_shape(ref):
    explorer = build(ch04.kernel_explorer, ref)
    first = explorer.readout.value
    assert explorer.values["output_shape"] == (6, 6) and explorer.values["predicted_shape"] == (6, 6)
    assert "agrees with conv_output_size" in first and explorer.values["agrees"] is True
    explorer.controls["padding"].value = 1
    assert explorer.values["output_shape"] == (8, 8)
    second = move(explorer, stride=2)
    assert explorer.values["output_shape"] == (4, 4) and "agrees with" in second and explorer.values["agrees"]
    explorer.controls["padding"].value = 3
    explorer.controls["stride"].value = 3
    assert explorer.values["output_shape"] == (4, 4)  # floor((8 + 6 - 3) / 3) + 1
    assert explorer.last_figure is not None
    assert explorer.last_render_seconds < 2.0


def test_kernel_explorer_kernels_and_custom_sliders(ref):
    explorer = build(ch04.kernel_explorer, ref)
    move(explorer, kernel="blur")
    low, high = explorer.values["output_min"], explorer.values["output_max"]
    assert 0 <= low <= high <= 1 + 1e-12  # an average of pixels in [0, 1]
    explorer.controls["kernel"].value = "custom"
    identity = explorer.readout.value  # the sliders start at the identity kernel
    assert explorer.values["output_max"] == pytest.approx(1.0)
    doubled = move(explorer, k11=2.0)
    assert doubled != identity
    assert explorer.values["output_max"] == pytest.approx(2.0)
    assert "custom kernel" in doubled
    explorer.controls["digit"].value = 17
    assert explorer.readout.value != doubled and explorer.values["digit"] == 17


def test_kernel_explorer_flags_a_wrong_output_size(ref):
    explorer = ch04.kernel_explorer(conv2d=ref.conv2d, conv_output_size=lambda n, k, p=0, s=1: n - k)
    assert "DISAGREES with conv_output_size" in explorer.readout.value
    assert explorer.values["predicted_shape"] == (5, 5) and explorer.values["agrees"] is False


def test_kernel_explorer_names_missing_functions(ref):
    assert_each_missing_is_named(ch04.kernel_explorer, ref, controls={"stride": 2})


def test_shift_explorer_is_exact_inside_the_canvas_and_not_across_the_border(ref):
    explorer = build(ch04.shift_explorer, ref)
    assert (explorer.values["dx"], explorer.values["dy"]) == (2, 0)
    assert explorer.values["max_difference"] < 1e-12
    explorer.controls["dy"].value = -1
    assert (explorer.values["dx"], explorer.values["dy"]) == (2, -1)
    assert explorer.values["max_difference"] < 1e-12
    wrapped = move(explorer, dx=7)  # the digit wraps around the right border
    assert explorer.values["max_difference"] > 0.1 and "wrapped" in wrapped
    explorer.controls["kernel"].value = "blur"
    assert "kernel blur" in explorer.readout.value
    assert explorer.last_render_seconds < 2.0


def test_shift_explorer_names_missing_conv2d(ref):
    assert_each_missing_is_named(ch04.shift_explorer, ref)


def test_shift_images_moves_without_wrapping():
    X = np.arange(16.0).reshape(1, 4, 4)
    moved = ch04.shift_images(X, 1, 0)
    assert np.array_equal(moved[0, :, 1:], X[0, :, :3]) and not moved[0, :, 0].any()
    moved = ch04.shift_images(X, -2, 1)
    assert np.array_equal(moved[0, 1:, :2], X[0, :3, 2:]) and not moved[0, 0].any()
    assert not ch04.shift_images(X, 4, 0).any()


def test_feature_map_explorer_trains_once_and_follows_the_controls(ref):
    explorer = build(ch04.feature_map_explorer, ref)
    first = explorer.readout.value
    assert explorer.values["accuracy"] >= 0.95
    assert explorer.values["filter"] == 0 and explorer.values["feature_map_shape"] == (8, 8)
    assert explorer.controls["filter"].max == 7  # the reference's first layer has 8 filters
    assert explorer.values["filters"] == 8
    second = move(explorer, filter=5)
    assert explorer.values["filter"] == 5 and second != first
    move(explorer, digit=11)
    assert explorer.values["digit"] == 11
    assert explorer.last_render_seconds < 2.0  # trained once, cached


def test_feature_map_explorer_names_missing_build_digits_cnn(ref):
    assert_each_missing_is_named(ch04.feature_map_explorer, ref)


def test_train_digits_recipe_is_deterministic(ref):
    import torch
    accuracies = []
    for _ in range(2):
        torch.manual_seed(0)
        accuracies.append(ch04.train_digits_recipe(ref.build_digits_cnn(), epochs=2))
    assert accuracies[0] == accuracies[1]
    assert 0.0 <= accuracies[0] <= 1.0


def test_pooling_shift_explorer_equivariance_only_for_multiples_of_the_stride(ref):
    explorer = build(ch04.pooling_shift_explorer, ref)
    first = explorer.readout.value  # shift 1, conv stride 1, max pool 2×2: total stride 2
    assert explorer.values["total_stride"] == 2 and "NOT equivariant" in first
    assert explorer.values["equivariant"] is False
    two = move(explorer, shift=2)
    assert "equivariant: f(moved x) is f(x) moved by" in two and "NOT" not in two
    assert explorer.values["output_shift"] == 1 and explorer.values["equivariant"] is True
    explorer.controls["pool"].value = "none"
    explorer.controls["shift"].value = 3
    plain = explorer.readout.value  # a stride-1 convolution commutes with every shift
    assert explorer.values["total_stride"] == 1 and explorer.values["output_shift"] == 3 and "NOT" not in plain
    assert explorer.values["equivariant"] is True
    explorer.controls["conv_stride"].value = 2
    explorer.controls["pool"].value = "avg 2×2"
    explorer.controls["shift"].value = 2
    assert explorer.values["total_stride"] == 4 and "NOT equivariant" in explorer.readout.value
    assert explorer.values["equivariant"] is False
    explorer.controls["shift"].value = 4
    assert explorer.values["output_shift"] == 1 and explorer.values["equivariant"] is True
    explorer.controls["shift"].value = 0
    assert "no shift: identical" in explorer.readout.value
    assert explorer.last_render_seconds < 2.0


def test_pooling_shift_explorer_names_missing_functions(ref):
    assert_names_missing(build(ch04.pooling_shift_explorer, ref, conv2d=stub), "conv2d")
    assert_names_missing(build(ch04.pooling_shift_explorer, ref, max_pool2d=stub), "max_pool2d")
    explorer = build(ch04.pooling_shift_explorer, ref, avg_pool2d=stub)
    explorer.controls["pool"].value = "avg 2×2"
    assert_names_missing(explorer, "avg_pool2d")


def test_drivers_return_plain_data(ref):
    """The integration drivers hand back only numbers and arrays (what crosses the sandbox boundary)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4, 1, 8, 8))
    Y = ref.conv2d(X, ch04.KERNELS["vertical edge"][None, None])
    result = ch04.recover_kernel(ref.conv2d, ref.conv2d_backward, X, Y, steps=80, lr=0.2)
    assert set(result) == {"weights", "kernel", "losses"} and isinstance(result["kernel"], np.ndarray)
    assert np.abs(result["kernel"] - ch04.KERNELS["vertical edge"]).max() < 1e-6
    y = rng.integers(0, 10, 6)
    X_val, y_val = rng.random((3, 1, 8, 8)), rng.integers(0, 10, 3)
    run = ch04.train_traced(ref.train_cnn, ref.conv2d, ref.conv2d_backward, ref.max_pool2d, ref.max_pool2d_backward,
                            rng.random((5, 1, 8, 8)), y[:5], X_val, y_val, epochs=2, batch_size=2)
    assert run["calls"] == {"conv2d": 16, "conv2d_backward": 12, "max_pool2d": 8, "max_pool2d_backward": 6}
    assert run["inputs_unchanged"] is True and run["type"] == "dict"
    assert [type(v) for v in run["params"]] == [np.ndarray] * 6
    assert all(run[k].dtype == np.float64 for k in ("losses", "val_loss", "val_accuracy"))
    logits = ch04.numpy_cnn_logits(ch04.cnn_weights(run["params"]), X_val)
    assert run["val_accuracy"][-1] == np.mean(logits.argmax(axis=1) == y_val)
    assert run["update_gaps"].shape == (12,) and np.all(run["update_gaps"] == 0)


def _inline_loop(update):
    """The reference's loop (its solution cell) with the update written as ``update(p, g, lr)``."""
    import nbformat

    from autograder.course import SOLUTIONS
    notebook = nbformat.read(str(SOLUTIONS / "ch04_cnn" / "ch04_cnn.ipynb"), as_version=4)
    source = next(c.source for c in notebook.cells
                  if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "train_cnn")
    assert source.count("params = [p - lr * np.asarray(g, dtype=float) for p, g in zip(params, grads)]") == 1
    source = source.replace("params = [p - lr * np.asarray(g, dtype=float) for p, g in zip(params, grads)]",
                            "params = [UPDATE(p, g, lr) for p, g in zip(params, grads)]")
    namespace = {"np": np, "UPDATE": update}
    exec(source, namespace)
    return namespace["train_cnn"]


def test_train_traced_follows_the_backward_outputs_into_the_update(ref):
    """Exactly 0 for ``p - lr * grad`` written any usual way; not 0 for a gradient that is not the one returned
    (changed by 1e-16, scaled, from the step before) nor when a backward pass is followed by no update."""
    rng = np.random.default_rng(1)
    data = (rng.random((7, 1, 8, 8)), rng.integers(0, 10, 7), rng.random((3, 1, 8, 8)), rng.integers(0, 10, 3))
    pieces = (ref.conv2d, ref.conv2d_backward, ref.max_pool2d, ref.max_pool2d_backward)

    def gaps(update, **settings):
        run = ch04.train_traced(_inline_loop(update), *pieces, *data, epochs=2, batch_size=3, **settings)
        return run["update_gaps"]

    for update in (lambda p, g, lr: p - lr * g, lambda p, g, lr: p + (-lr) * np.asarray(g),
                   lambda p, g, lr: np.subtract(p, g * lr)):
        assert np.array_equal(gaps(update), np.zeros(12)) and np.array_equal(gaps(update, lr=0.05), np.zeros(12))
    assert np.all(gaps(lambda p, g, lr: p - lr * (g + 1e-16 * np.abs(g).max())) > 0)
    assert np.all(gaps(lambda p, g, lr: p - 0.5 * lr * g) > 0)
    assert np.all(gaps(lambda p, g, lr: p) > 0)


def test_the_baseline_and_the_chapters_numbers_agree(ref):
    """The prose of section 11 states the logistic regression's and the reference CNN's test numbers."""
    import nbformat

    from autograder.course import SOLUTIONS
    baseline = ch04.digits_logistic_baseline()
    assert baseline["n_params"] == 650 and 0.9 < baseline["accuracy"] < 1 and 0 < baseline["cross_entropy"] < 0.5
    X_train, y_train, X_val, y_val, X_test, y_test = ch04.digits_holdout()
    run = ref.train_cnn(ref.conv2d, ref.conv2d_backward, ref.max_pool2d, ref.max_pool2d_backward, X_train, y_train,
                        X_val, y_val)
    logits = ch04.numpy_cnn_logits(ch04.cnn_weights(run["params"]), X_test)
    z = logits - logits.max(axis=1, keepdims=True)
    ce = float(np.mean(np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(y_test)), y_test]))
    accuracy = float(np.mean(logits.argmax(axis=1) == y_test))
    notebook = nbformat.read(str(SOLUTIONS / "ch04_cnn" / "ch04_cnn.ipynb"), as_version=4)
    prose = " ".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    for stated in (f"**{baseline['accuracy']:.1%}**".replace("%", " %"), f"**{baseline['cross_entropy']:.3f}**",
                   f"**{accuracy:.1%}**".replace("%", " %"), f"**{ce:.3f}**"):
        assert stated in prose, f"the chapter should state {stated} (its own run)"
    # the check's margins hold for the reference with room: the CNN wins on cross-entropy, ties on accuracy
    assert ce <= baseline["cross_entropy"] - 0.03 and accuracy >= baseline["accuracy"] - 0.01


def test_digits_holdout_splits_the_recipes_training_digits_and_keeps_the_test_digits():
    from dlcourse.data import digits_split
    X_train, y_train, X_val, y_val, X_test, y_test = ch04.digits_holdout()
    X_recipe, X_recipe_test, y_recipe, y_recipe_test = digits_split()
    assert (len(X_train), len(X_val), len(X_test)) == (1047, 300, 450)
    assert X_train.dtype == X_val.dtype == X_test.dtype == np.float64
    assert np.array_equal(np.concatenate([X_train, X_val]), X_recipe) and np.array_equal(X_test, X_recipe_test)
    assert np.array_equal(np.concatenate([y_train, y_val]), y_recipe) and np.array_equal(y_test, y_recipe_test)
    assert set(np.unique(y_val)) == set(range(10))


def test_live_pictures_are_current_after_every_move(ref):
    for factory in (ch04.kernel_explorer, ch04.shift_explorer, ch04.pooling_shift_explorer):
        assert_live_through_every_control(build(factory, ref), max_full_draws=1)  # image panels: one background
