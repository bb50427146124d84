"""The widgets of ch08_tricks: controls change the readout; unwritten functions are named."""
import numpy as np

from dlcourse.widgets import ch08_tricks as ch08
from tests.helpers import (
    assert_each_missing_is_named,
    assert_live_through_every_control,
    assert_only_in_hints,
    build,
    counting,
    missing_function_test,
    move,
    public_checks_missed,
)


def test_activation_stats_explorer(ref):
    ex = build(ch08.activation_stats_explorer, ref)
    first = ex.readout.value
    assert "std at layer 20" in first and "he + relu" in first
    ex.controls["depth"].value = 5
    assert "std at layer 5" in ex.readout.value
    before = ex.readout.value
    ex.controls["scheme"].value = "lecun"
    assert ex.readout.value != before and "lecun + relu" in ex.readout.value
    before = ex.readout.value
    ex.controls["activation"].value = "tanh"
    assert ex.readout.value != before and "lecun + tanh" in ex.readout.value
    assert ex.last_figure is not None


def test_activation_stats_relu_decays_without_he(ref):
    fig, text = ch08.render_activation_stats("lecun", "relu", 30, activation_stds=ref.activation_stds)
    last = text.values["std"]
    assert last < 1e-3  # a factor sqrt(2) lost per layer


def test_activation_stats_names_missing_function(ref):
    assert_each_missing_is_named(ch08.activation_stats_explorer, ref)


def test_optimizer_race(ref):
    ex = build(ch08.optimizer_race_explorer, ref)
    first = ex.readout.value
    assert "final loss after 50 steps" in first and "SGD" in first and "Adam" in first
    ex.controls["momentum"].value = 0.5
    assert ex.readout.value != first and "momentum 0.50" in ex.readout.value
    before = ex.readout.value
    ex.controls["lr"].value = 0.1  # above 2 / 25: plain SGD diverges
    assert ex.readout.value != before and "SGD: diverged" in ex.readout.value
    before = ex.readout.value
    ex.controls["adam_lr"].value = 0.05
    assert ex.readout.value != before
    ex.controls["steps"].value = 100
    assert "after 100 steps" in ex.readout.value


def test_optimizer_race_momentum_beats_sgd(ref):
    _, text = ch08.render_optimizer_race(0.03, 0.8, 0.3, 50, sgd_momentum_step=ref.sgd_momentum_step,
                                         adam_step=ref.adam_step)
    assert "momentum 0.80: " in text and "SGD: " in text
    assert text.values["momentum_loss"] < text.values["sgd_loss"]


test_optimizer_race_names_missing_function = missing_function_test(ch08.optimizer_race_explorer)


def test_targets_explorer(ref):
    ex = build(ch08.targets_explorer, ref)
    first = ex.readout.value
    assert "teacher entropy" in first and "target entropy" in first
    hot = move(ex, temperature=10.0)
    assert hot != first
    hot_entropy = ex.values["teacher_entropy"]
    move(ex, temperature=0.5)
    assert hot_entropy > ex.values["teacher_entropy"]  # a higher temperature flattens p
    before = ex.readout.value
    ex.controls["smoothing"].value = 0.5
    assert ex.readout.value != before and "ε = 0.5" in ex.readout.value


test_targets_names_missing_function = missing_function_test(ch08.targets_explorer)


def test_activation_stats_scheme_change_is_served_from_cache(ref):
    activation_stds = counting(ref.activation_stds)
    ex = ch08.activation_stats_explorer(activation_stds=activation_stds)
    assert len(activation_stds.calls) == 9  # one curve per scheme and activation, for MAX_DEPTH layers
    assert {call[0] for call in activation_stds.calls} == {ch08.MAX_DEPTH}
    first = ex.readout.value
    ex.controls["scheme"].value = "xavier"  # the curves do not depend on the selected scheme
    assert ex.readout.value != first and "xavier + relu" in ex.readout.value
    ex.controls["depth"].value = 7  # a depth shows the first layers of the curves
    assert "std at layer 7" in ex.readout.value
    direct = ref.activation_stds(7, 64, "xavier", "relu", np.random.default_rng(0), n_samples=256)[-1]
    assert np.isclose(ex.values["std"], direct, rtol=1e-12)  # what the student's function gives for 7 layers
    ex.controls["activation"].value = "tanh"
    ex.controls["activation"].value = "relu"
    ex.controls["depth"].value = 20
    ex.controls["scheme"].value = "he"
    assert len(activation_stds.calls) == 9 and ex.readout.value == first
    # a re-run exercise cell (a new function object) is computed afresh, never served stale
    halved = counting(lambda *args, **kwargs: 0.5 * ref.activation_stds(*args, **kwargs))
    _, text = ch08.render_activation_stats("he", "relu", 20, activation_stds=halved,
                                           cache=ex.cache)
    assert len(halved.calls) == 9 and text != first


def test_activation_stats_wrong_shape_is_reported(ref):
    ex = ch08.activation_stats_explorer(activation_stds=lambda *a, **k: ref.activation_stds(*a, **k)[:-1])
    assert "one std per layer" in ex.readout.value


RECIPE = ("init_weights", "dropout", "batchnorm_forward", "batchnorm_backward", "sgd_momentum_step", "cross_entropy")


def test_recipe_explorer(ref):
    ex = build(ch08.recipe_explorer, ref)
    first = ex.readout.value
    assert first.startswith("xavier: final validation loss")
    bare = ex.values["val_loss"]
    ex.controls["init"].value = "he"
    for switch in ("batch_norm", "use_dropout", "weight_decay", "label_smoothing"):
        before = ex.readout.value
        ex.controls[switch].value = True
        assert ex.readout.value != before
    text = ex.readout.value
    assert text.startswith("he + dropout + batch norm + weight decay + label smoothing")
    full = ex.values["val_loss"]
    assert full < 0.8 * bare  # the full recipe beats the bare one
    assert ex.values["bare_val_loss"] == bare
    assert ex.last_figure is not None
    # every combination was computed on the first render: switching is a redraw, served from the cache
    cache = ex.cache
    assert cache.misses == 1 and cache.hits >= 5  # the runs, computed once
    assert cache.figure.full_draws == 1  # the axes hold every run: no switch redraws them
    assert_live_through_every_control(ex, max_full_draws=1)


test_recipe_explorer_names_missing_function = missing_function_test(ch08.recipe_explorer, epochs=1, inits=("he",))


def test_loop_recipe_explorer_runs_the_students_loop_once_and_switches_by_redrawing(ref):
    calls = []

    def train_digits(*args, **kwargs):
        calls.append(kwargs)
        return ref.train_digits(*args, **kwargs)

    ex = build(ch08.loop_recipe_explorer, ref, train_digits=train_digits)
    first = ex.readout.value
    assert first.startswith("he: final validation loss")
    bare = ex.values["val_loss"]
    assert ex.values["bare_val_loss"] == bare
    assert len(calls) == 8 and {c["init"] for c in calls} == {"he", "orthogonal"}
    assert sum(c["weight_norm"] is ref.weight_norm for c in calls) == 4 and sum(c["layer_norm"] for c in calls) == 4
    seen = {first}
    for name, value in (("use_layer_norm", True), ("use_weight_norm", True), ("init", "orthogonal")):
        seen.add(move(ex, **{name: value}))
    assert len(seen) == 4 and ex.readout.value.startswith("orthogonal + layer norm + weight norm")
    move(ex, init="he", use_weight_norm=False)
    assert ex.values["recipe"] == "he + layer norm"
    with_ln = ex.values["val_loss"]
    assert with_ln < bare  # the reference's layer norm lowers the validation loss (the chapter says so)
    assert len(calls) == 8 and ex.cache.misses == 1  # every run computed on the first render
    assert ex.cache.figure.full_draws == 1
    assert_live_through_every_control(ex, max_full_draws=1)


test_loop_recipe_explorer_names_missing_function = missing_function_test(ch08.loop_recipe_explorer)


def test_recipe_table_trains_each_recipe_with_the_students_pieces(ref):
    rows = ch08.recipe_table(**{name: getattr(ref, name) for name in RECIPE}, epochs=2,
                             recipes={"bare": {}, "full": ch08.FULL})
    assert list(rows) == ["bare", "full"]
    assert all(len(row) == 3 and 0 < row[1] < 3 and 0 <= row[2] <= 1 for row in rows.values())
    assert rows["bare"] != rows["full"]


def test_recipe_gradient_check(ref):
    pieces = [getattr(ref, name) for name in RECIPE]
    out = ch08.train_digits_mlp(*pieces, *ch08.digits_split(), gradient_check=2, init="he", batch_norm=True)
    np.testing.assert_allclose(out["analytic"], out["numeric"], rtol=1e-4, atol=1e-7)


def test_optimizer_race_and_targets_pictures_are_current_after_every_move(ref):
    assert_live_through_every_control(build(ch08.optimizer_race_explorer, ref), max_full_draws=1)
    assert_live_through_every_control(build(ch08.targets_explorer, ref), max_full_draws=1)


def test_activation_stats_picture_is_current_after_every_move(ref):
    assert_live_through_every_control(build(ch08.activation_stats_explorer, ref))


def test_digits_holdout_extends_the_split_with_a_disjoint_test_part():
    X_train, y_train, X_val, y_val, X_test, y_test = ch08.digits_holdout()
    assert (len(X_train), len(X_val), len(X_test)) == (300, 500, 997)
    for given, held in zip(ch08.digits_split(), (X_train, y_train, X_val, y_val)):
        np.testing.assert_array_equal(given, held)  # the released notebooks' split is unchanged
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(X))  # the test part: the images after the first 800
    np.testing.assert_array_equal(X_test * 16, X[order[800:]])
    np.testing.assert_array_equal(y_test, y[order[800:]])


def test_digits_logits_is_the_forward_pass_of_the_loop(ref):
    rng = np.random.default_rng(0)
    X = rng.random((7, 64))
    W1, b1, gamma, beta = rng.standard_normal((5, 64)), rng.standard_normal(5), rng.random(5) + 0.5, \
        rng.standard_normal(5)
    W2, b2 = rng.standard_normal((10, 5)), rng.standard_normal(10)
    want = np.maximum(ref.layernorm_forward(X @ W1.T + b1, gamma, beta), 0.0) @ W2.T + b2
    np.testing.assert_allclose(ch08.digits_logits([W1, b1, gamma, beta, W2, b2], X), want, rtol=1e-12)


def test_the_reference_loop_learns_the_held_out_digits(ref):
    """The margins of test_digits_heldout hold for the reference with room to spare."""
    X_train, y_train, X_val, y_val, X_test, y_test = ch08.digits_holdout()
    pieces = [getattr(ref, name) for name in ("init_weights", "orthogonal_init", "layernorm_forward",
                                                "layernorm_backward", "adam_step", "cross_entropy")]
    run = ref.train_digits(*pieces, X_train, y_train, X_val, y_val)
    logits = ch08.digits_logits(run["params"], X_test)
    assert np.mean(logits.argmax(axis=1) == y_test) > np.bincount(y_test).max() / len(y_test) + 0.75
    assert run["val_accuracy"][-1] > 0.9 and run["val_loss"][-1] < run["val_loss"][0]


def test_the_held_out_numbers_and_the_first_baseline_are_the_chapters(ref):
    """The reference's test accuracy and cross-entropy and logistic regression's (digits_baseline) are the numbers
    the chapter states beside the held-out check, and the reference stays within the check's margins of it."""
    import nbformat
    X_train, y_train, X_val, y_val, X_test, y_test = ch08.digits_holdout()
    pieces = [getattr(ref, name) for name in ("init_weights", "orthogonal_init", "layernorm_forward",
                                                "layernorm_backward", "adam_step", "cross_entropy")]
    run = ref.train_digits(*pieces, X_train, y_train, X_val, y_val)
    logits = ch08.digits_logits(run["params"], X_test)
    accuracy = float(np.mean(logits.argmax(axis=1) == y_test))
    z = logits - logits.max(axis=1, keepdims=True)
    ce = float(np.mean(np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(y_test)), y_test]))
    first = ch08.digits_baseline()
    nb = nbformat.read("solutions/ch08_tricks/ch08_tricks.ipynb", as_version=4)
    prose = " ".join(" ".join(c.source.split()) for c in nb.cells if c.cell_type == "markdown").replace("# ", "")
    assert f"(the reference: {accuracy * 100:.1f} % and {ce:.3f})" in prose
    assert f"$C = {first['C']:.0f}$), gets {first['accuracy'] * 100:.1f} % and {first['ce']:.3f}" in prose
    assert f"{(accuracy - first['accuracy']) * 100:.1f} points of accuracy and {first['ce'] - ce:.3f} nats" in prose
    assert accuracy >= first["accuracy"] - 0.02 + 0.02 and ce <= first["ce"] + 0.05 - 0.03


# ------------------------------------------------------------ issue 42: the normalisation layers' backward passes,
# derived (ch06 § 6.3, referred to here), formulas in hints, checks that name the wrong term

# (function, mistake) -> words the first failing public check's message must contain (None: any failure)
PUBLIC_CATCHES = {
    ("standardize_backward", "mean_term_missing"): "is missing the term through the mean mu",
    ("standardize_backward", "projection_term_missing"):
        "is missing the term through sigma: the error of dx lies along xhat",
    ("standardize_backward", "mu_and_sigma_constant"): "mu and sigma were treated as constants",
    ("standardize_backward", "unbiased_variance"): "divides by the unbiased variance's sigma (ddof=1)",
    ("standardize_backward", "axis_ignored"): "(dxhat, x, axis=0) for (6, 4) standardised along axis 1",
    ("standardize_backward", "averages_over_axis_0"): None,
    ("batchnorm_backward", "mean_treated_as_constant"): "the path through the mean or through the variance",
    ("batchnorm_backward", "variance_treated_as_constant"): "the path through the mean or through the variance",
    ("batchnorm_backward", "axis_not_passed"): "standardise along the wrong axis",
    ("batchnorm_backward", "gamma_forgotten_in_dx"): "did you forget gamma",
    ("layernorm_backward", "parameter_grads_summed_over_axis_0_only"): "for x of shape (2, 3, 4)",
    ("layernorm_backward", "mean_treated_as_constant"): "your standardize_backward",
    ("layernorm_backward", "dx_without_gamma"): "your standardize_backward",
}


def test_public_checks_of_the_normalisation_backward_passes_name_the_wrong_term():
    """Issue 42: the public checks the student sees pass for the reference and fail, naming the term, for the
    standardisation's missing mean or sigma path, the unbiased variance, the wrong axis; batch norm's dx without
    gamma or along the wrong axis; a 2-D-only layernorm_backward (the public (2, 3, 4) check)."""
    assert not public_checks_missed("ch08_tricks", PUBLIC_CATCHES)


# the results of the normalisation's derivation, as the release may print them only inside <details>
NORM_RESULTS = ("\\overline{g\\hat x}", "\\frac1n - \\frac{\\hat x_m \\hat x_n}{n}", "= \\hat x_n / n")
# the forms the chapter used to print in its prose and its checks' hints: gone everywhere
OLD_PRINTED = ("\\boxed", "mean(g * xhat)", "(g - mean(g)", "xhat * mean(", "The same formula as batch norm")


def test_the_normalisation_backward_formulas_are_only_in_a_collapsed_hint():
    """Issue 42: § 3.3 gives the route (the affine part, the standardisation's Jacobian through mu and s, the
    contraction) and refers to chapter 6's derivation; the Jacobian and dx sit in a collapsed <details> hint, nowhere
    else the student reads (prose, test cells' messages). standardize_backward and layernorm_backward say they are
    chapter 6's functions, to be pasted."""
    release = assert_only_in_hints("ch08_tricks", NORM_RESULTS, OLD_PRINTED)
    prose = " ".join(" ".join(c.source.replace("#", " ").split()) for c in release.cells if c.cell_type == "markdown")
    assert "`standardize_backward`).** This is the function you wrote in chapter 6: paste your answer" in prose
    assert ("`layernorm_backward` is the function you wrote in chapter 6 (the same arguments and defaults): "
            "paste") in prose
