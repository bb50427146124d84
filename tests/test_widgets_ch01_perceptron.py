"""The widgets of chapter 1, driven through their controls with the reference solutions and with stubs."""
import numpy as np
import pytest

from dlcourse.widgets import ch01_perceptron as ch01
from tests.helpers import (
    assert_each_missing_is_named,
    assert_live_through_every_control,
    build,
    counting,
    move,
    stub,
)


def test_stepper_walks_through_the_updates(ref):
    w = build(ch01.perceptron_steps_explorer, ref)
    first = w.readout.value
    assert w.values["update"] == 1, first
    total = w.values["total"]
    assert total >= 2
    w.controls["update"].value = 2
    assert w.values["update"] == 2 and w.values["total"] == total and w.readout.value != first
    w.controls["update"].value = 0
    assert w.values["update"] == 0 and w.values["total"] == total
    assert w.readout.value.startswith("before the first of"), w.readout.value  # no update shown yet: said so
    w.controls["update"].value = ch01.MAX_STEP  # beyond the last update: shows the last one
    assert w.values["update"] == total and w.values["total"] == total
    assert w.last_figure is not None and w.last_render_seconds < 2.0


def test_stepper_update_count_respects_novikoff_and_margin_slider_changes_the_data(ref):
    w = build(ch01.perceptron_steps_explorer, ref)
    seen = set()
    for value in (0.4, 0.1, 0.02):
        text = move(w, data_margin=value)
        total, bound, gamma = w.values["total"], w.values["bound"], w.values["gamma"]
        assert 1 <= total <= bound, text
        seen.add((total, bound, gamma))
    bounds = [b for _, b, _ in sorted(seen, key=lambda item: -item[2])]
    assert len(seen) == 3 and bounds == sorted(bounds), "a smaller margin should give a larger bound"
    w.controls["seed"].value = 3
    assert w.readout.value != text


def test_stepper_history_matches_the_updates(ref):
    X, y, _ = ch01.stepper_data(0.05, 2)
    states, corrected, total = ch01.perceptron_history(ref.perceptron_train, X, y)
    assert total == ref.perceptron_train(X, y)[2] == len(corrected) == len(states) - 1
    w_end, b_end, _ = ref.perceptron_train(X, y)
    assert np.allclose(states[-1][0], w_end) and states[-1][1] == b_end
    for t in range(1, total + 1):  # each update corrects a point that the previous state got wrong
        i = corrected[t - 1] % len(y)
        w, b = states[t - 1]
        assert y[i] * (X[i] @ w + b) <= 0
        assert np.allclose(states[t][0], w + y[i] * X[i]) and states[t][1] == b + y[i]


def test_stepper_names_the_missing_function(ref):
    for name in ("perceptron_train", "margin", "novikoff_bound"):
        w = build(ch01.perceptron_steps_explorer, ref, **{name: stub})
        assert "not written yet" in w.readout.value and f"<b>{name}</b>" in w.readout.value, w.readout.value
        assert w.last_figure is None


def test_cover_slider_changes_the_readout(ref):
    w = build(ch01.cover_explorer, ref)
    first, at_10 = w.readout.value, w.values
    assert at_10["n"] == 10 and at_10["fraction_at_2n"] == pytest.approx(0.5)
    assert at_10["fraction_at_n"] == pytest.approx(1.0)
    second = move(w, n=3)
    assert second != first and w.values["n"] == 3 and w.values["fraction_at_2n"] == pytest.approx(0.5)
    # the fraction at s = 4n drops as n grows
    assert w.values["fraction_at_4n"] > at_10["fraction_at_4n"]
    assert w.last_render_seconds < 2.0


def test_cover_names_the_missing_function(ref):
    assert_each_missing_is_named(ch01.cover_explorer, ref)


def test_adaboost_rounds_change_the_readout(ref):
    w = build(ch01.adaboost_explorer, ref)
    first = w.readout.value
    assert w.values["round"] == 1 and w.values["errors"] == 6 and w.values["points"] == 24
    fifth = move(w, rounds=5)
    assert w.values["round"] == 5 and fifth != first
    assert w.values["errors"] < 6 and w.values["points"] == 24
    w.controls["rounds"].value = ch01.MAX_ROUNDS
    assert w.values["errors"] == 0 and w.values["points"] == 24
    assert w.last_render_seconds < 2.0


def test_adaboost_names_the_missing_function(ref):
    assert_each_missing_is_named(ch01.adaboost_explorer, ref)


def test_adaboost_training_error_stays_under_prod_Z(ref):
    w = build(ch01.adaboost_explorer, ref)
    previous = 1.0
    for rounds in (1, 2, 7, 15, ch01.MAX_ROUNDS):
        text = move(w, rounds=rounds)
        error, prod_z, exp_bound = w.values["training_error"], w.values["prod_z"], w.values["exp_bound"]
        assert w.values["round"] == rounds and error == w.values["errors"] / w.values["points"]
        assert error <= prod_z <= exp_bound + 1e-12 and prod_z < previous, text
        previous = prod_z
    assert w.last_render_seconds < 0.5


def test_adaboost_runs_once_per_function_and_redraws_in_place(ref):
    step = counting(ref.adaboost_step)
    w = ch01.adaboost_explorer(adaboost_step=step)
    first_figure = w.last_figure
    assert len(step.calls) == ch01.MAX_ROUNDS
    w.controls["rounds"].value = 9
    w.controls["rounds"].value = 3
    assert len(step.calls) == ch01.MAX_ROUNDS and w.last_figure is first_figure
    assert w.values["round"] == 3
    # a wrong alpha (no 1/2) reweights differently: the bound and the readout change
    def doubled(weights, y, h_pred):
        alpha, new = ref.adaboost_step(weights, y, h_pred)
        return 2 * alpha, new
    other = ch01.adaboost_explorer(adaboost_step=doubled)
    other.controls["rounds"].value = 3
    assert other.readout.value != w.readout.value and other.last_figure is not first_figure


def test_cover_curves_are_cached_per_dimension(ref):
    cover_count = counting(ref.cover_count)
    w = ch01.cover_explorer(cover_count=cover_count)
    calls = len(cover_count.calls)
    w.controls["n"].value = 20   # one of the background dimensions: already computed
    assert len(cover_count.calls) == calls
    w.controls["n"].value = 10
    assert len(cover_count.calls) == calls and w.values["n"] == 10


def test_live_pictures_are_current_after_every_move(ref):
    stepper = build(ch01.perceptron_steps_explorer, ref)
    draws = stepper.cache.figure.full_draws
    for update in (2, 3, 0, 5):
        move(stepper, update=update)
    assert stepper.cache.figure.full_draws == draws  # an update moves lines over the kept data and curves
    assert_live_through_every_control(stepper)
    assert_live_through_every_control(build(ch01.cover_explorer, ref), max_full_draws=1)
    assert_live_through_every_control(build(ch01.adaboost_explorer, ref), max_full_draws=1)
