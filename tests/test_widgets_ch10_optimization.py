"""The widgets of ch10_optimization: controls change the readout; unwritten functions are named; renders are fast."""

import pytest

from dlcourse.widgets import ch10_optimization as ch10
from tests.helpers import (
    assert_each_missing_is_named,
    assert_live_through_every_control,
    assert_names_missing,
    build,
    counting,
    median_update_ms,
    missing_function_test,
    needs,
    stub,
)

MOMENTUM_NEEDS = ("gradient_descent", "heavy_ball", "nesterov", "pl_rate_bound", "polyak_parameters")


def test_momentum_explorer(ref):
    ex = build(ch10.momentum_explorer, ref)
    first = ex.readout.value
    assert ex.values["kappa"] == pytest.approx(20.0) and ex.values["steps"] == 60, ex.values
    assert "PL bound" in first and "diverged" not in first
    assert ex.last_figure is not None
    ex.controls["kappa"].value = 100.0
    assert ex.readout.value != first and ex.values["kappa"] == pytest.approx(100.0)
    before = ex.readout.value
    ex.controls["beta"].value = 0.9
    assert ex.readout.value != before and ex.values["beta"] == pytest.approx(0.9)
    before = ex.readout.value
    ex.controls["steps"].value = 150
    assert ex.readout.value != before and ex.values["steps"] == 150
    ex.controls["polyak"].value = True
    assert "Polyak: lr·L = " in ex.readout.value


def test_gradient_descent_diverges_beyond_2_over_L(ref):
    ex = build(ch10.momentum_explorer, ref)
    ex.controls["lr_times_L"].value = 1.9
    assert "gradient descent diverged" not in ex.readout.value and "> 2/L" not in ex.readout.value
    ex.controls["lr_times_L"].value = 2.2
    assert "gradient descent diverged" in ex.readout.value and "> 2/L" in ex.readout.value


def test_gradient_descent_within_pl_bound(ref):
    """At lr = 1/L the measured suboptimality of gradient descent is below Lemma 3.4's bound."""
    for kappa in (5.0, 50.0, 500.0):
        _, text = ch10.render_momentum(kappa, 1.0, 0.5, 100, False,
                                       **needs(ch10.momentum_explorer, ref))
        measured, bound = text.values["gradient_descent_gap"], text.values["pl_bound"]
        assert measured is not None and measured <= bound, text.values


def test_polyak_heavy_ball_beats_gradient_descent(ref):
    _, text = ch10.render_momentum(100.0, 1.0, 0.5, 200, True,
                                   **needs(ch10.momentum_explorer, ref))
    gd, hb = text.values["gradient_descent_gap"], text.values["heavy_ball_gap"]
    assert gd is not None and hb is not None and hb < 1e-6 * gd, text.values


test_momentum_names_missing_function = missing_function_test(ch10.momentum_explorer, MOMENTUM_NEEDS[:4])


def test_momentum_polyak_parameters_missing_when_ticked(ref):
    ex = build(ch10.momentum_explorer, ref, polyak_parameters=stub)
    assert "not written yet" not in ex.readout.value  # not needed until the box is ticked
    ex.controls["polyak"].value = True
    assert_names_missing(ex, "polyak_parameters")


def test_momentum_runs_are_cached(ref):
    gd = counting(ref.gradient_descent)
    ex = build(ch10.momentum_explorer, ref, gradient_descent=gd)
    assert len(gd.calls) == 1
    ex.controls["kappa"].value = 100.0
    ex.controls["kappa"].value = 20.0
    assert len(gd.calls) == 2  # back to the first value: served from the cache


def test_noise_floor_explorer(ref):
    ex = build(ch10.noise_floor_explorer, ref)
    first = ex.readout.value
    assert ex.values["batch_size"] == 4 and ex.values["lr"] == 0.05, ex.values
    assert "estimate for independent batches" in first
    assert ex.last_figure is not None
    assert ex.values["tail_steps"] == 128 and not ex.values["diverged"]
    floor_4 = ex.values["floor"]
    ex.controls["batch_size"].value = 1
    floor_1 = ex.values["floor"]
    assert ex.values["batch_size"] == 1 and not ex.values["diverged"] and floor_1 > 2 * floor_4  # noisier
    ex.controls["lr"].value = 0.2
    floor_1_fast = ex.values["floor"]
    assert not ex.values["diverged"] and floor_1_fast > 2 * floor_1  # a larger learning rate, a higher floor
    ex.controls["batch_size"].value = 64
    assert ex.values["floor"] < 1e-8  # full batch: no floor


def test_noise_floor_estimate_is_right_for_batch_one(ref):
    _, text = ch10.render_noise_floor(1, 0.05, minibatch_sgd=ref.minibatch_sgd)
    measured, estimate = text.values["floor"], text.values["independent_estimate"]
    assert 0.5 < measured / estimate < 2, text.values


def test_reshuffled_floor_grows_like_the_square_of_the_learning_rate(ref):
    """Section 8's claim, read off the explorer: with one permutation per epoch a 10x learning rate raises the
    floor far more than 10x (the independent-batch estimate's factor), and the reshuffled estimate is close."""
    ex = build(ch10.noise_floor_explorer, ref)
    for batch in (2, 8, 16):
        floors = {}
        for lr in (0.02, 0.2):
            ex.controls["batch_size"].value = batch
            ex.controls["lr"].value = lr
            values = ex.values
            floors[lr] = values["floor"]
            reshuffled, independent = values["reshuffled_estimate"], values["independent_estimate"]
            if batch >= 8:  # lr L N / B <= 2.3: the regime of the derivation
                assert 0.75 < floors[lr] / reshuffled < 1.33, values
                assert floors[lr] < independent / 1.5, values  # an epoch's noise cancels: below independent batches
        assert 40 < floors[0.2] / floors[0.02] < 150, floors


def test_noise_floor_names_missing_function(ref):
    assert_each_missing_is_named(ch10.noise_floor_explorer, ref)


def test_noise_floor_wrong_shape_is_reported(ref):
    ex = ch10.noise_floor_explorer(minibatch_sgd=lambda *a, **k: ref.minibatch_sgd(*a, **k)[:-1])
    assert "one loss per step" in ex.readout.value


def test_renders_under_100_ms_median(ref):
    assert median_update_ms(build(ch10.momentum_explorer, ref)) < 100
    assert median_update_ms(build(ch10.noise_floor_explorer, ref)) < 100


def test_live_pictures_are_current_after_every_move(ref):
    assert_live_through_every_control(build(ch10.momentum_explorer, ref))
    assert_live_through_every_control(build(ch10.noise_floor_explorer, ref), max_full_draws=1)
