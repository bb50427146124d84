"""The widgets of ch11_diffusion: controls change the readout; unwritten functions are named; renders are fast."""

import pytest

from dlcourse.widgets import ch11_diffusion as ch11
from tests.helpers import (
    assert_each_missing_is_named,
    assert_live_through_every_control,
    assert_names_missing,
    build,
    counting,
    median_update_ms,
    missing_function_test,
    stub,
)

RUN_FUNCTIONS = ("linear_betas", "alpha_bars", "q_sample", "eps_loss", "ddpm_sample")


def ring_run(ref, steps=800, **replace):
    functions = {name: replace.get(name, getattr(ref, name)) for name in RUN_FUNCTIONS}
    return ch11.RingRun(**functions, steps=steps)


@pytest.fixture(scope="module")
def run(ref):
    """One short training of the ring model with the reference pieces (shared by the tests of this module)."""
    return ring_run(ref)


def test_forward_explorer(ref):
    ex = build(ch11.forward_explorer, ref)
    first = ex.readout.value
    assert "linear schedule" in first and ex.values["t"] == 100 and ex.last_figure is not None
    assert ex.values["correlation"] > 0.8  # little noise yet
    ex.controls["t"].value = 999
    assert ex.values["alpha_bar"] < 1e-3
    assert abs(ex.values["correlation"]) < 0.3  # the digit is gone
    assert 0.8 < ex.values["mean_radius"] < 1.6  # N(0, I) in 2-D: mean radius sqrt(pi / 2)
    ex.controls["t"].value = 300
    linear = ex.values["alpha_bar"]
    ex.controls["schedule"].value = "cosine"
    cosine = ex.values["alpha_bar"]
    assert "cosine schedule" in ex.readout.value and ex.values["t"] == 300
    assert cosine > linear  # the cosine one keeps more signal


def test_forward_uses_the_students_q_sample(ref):
    q = counting(ref.q_sample)
    ex = build(ch11.forward_explorer, ref, q_sample=q)
    calls = len(q.calls)
    ex.controls["t"].value = 500
    assert len(q.calls) == calls + 2  # the ring and the digit, at the new t
    assert q.calls[-1][1] == 500


test_forward_names_missing_function = missing_function_test(ch11.forward_explorer,
                                                            ["linear_betas", "alpha_bars", "q_sample"])


def test_forward_names_missing_cosine_schedule_when_chosen(ref):
    ex = build(ch11.forward_explorer, ref, cosine_alpha_bars=stub)
    assert "not written yet" not in ex.readout.value  # the linear schedule is shown first
    ex.controls["schedule"].value = "cosine"
    assert_names_missing(ex, "cosine_alpha_bars")


def test_ring_run_records_every_step(run):
    assert run.error is None, run.error
    assert run.steps == list(range(ch11.T - 1, -1, -1)) and len(run.states) == ch11.T
    assert run.losses[-100:].mean() < run.losses[:100].mean()  # training reduced the student's eps_loss


def test_reverse_explorer(ref, run):
    ex = build(ch11.reverse_explorer, ref, run=run)
    assert ex.values["t"] == 999 and ex.last_figure is not None
    assert ex.values["spread"] > 0.8  # pure noise
    assert ex.values["near_centre"] < 0.05  # from pure noise the best guess is the data's mean
    ex.controls["t"].value = -1
    end = ex.readout.value
    assert "the output of ddpm_sample" in end and ex.values["t"] == -1
    assert ex.values["spread"] > 0.8  # the ring has radius 1.5
    assert ex.values["near_centre"] > 0.2  # a short training: blurred blobs, but blobs
    ex.controls["t"].value = 50
    assert ex.values["near_centre"] > 0.2  # predicted x0 already near the blobs


@pytest.mark.parametrize("missing", RUN_FUNCTIONS)
def test_a_run_missing_a_function_is_named_by_both_widgets(ref, missing):
    broken = ring_run(ref, steps=5, **{missing: stub})
    assert "not trained" in repr(broken)
    assert_names_missing(build(ch11.reverse_explorer, ref, run=broken), missing)
    assert_names_missing(build(ch11.score_explorer, ref, run=broken), missing)


def test_reverse_and_score_name_their_own_missing_functions(ref, run):
    assert_each_missing_is_named(ch11.reverse_explorer, ref, run=run)
    assert_each_missing_is_named(ch11.score_explorer, ref, run=run)


def test_score_explorer(ref, run):
    ex = build(ch11.score_explorer, ref, run=run)
    assert ex.values["t"] == 300 and ex.last_figure is not None
    assert ex.values["median_error"] < 0.5  # the trained model knows the score there
    ex.controls["t"].value = 990
    assert ex.values["blob_std"] > 0.99  # almost N(0, I)
    assert ex.values["median_error"] < 0.3


def test_score_uses_the_students_functions(ref, run):
    score = counting(ref.gaussian_mixture_score)
    ex = build(ch11.score_explorer, ref, run=run, gaussian_mixture_score=score)
    ex.controls["t"].value = 100
    assert len(score.calls) == 2 and score.calls[-1][0].shape == ch11.GRID.shape


def test_updates_under_100_ms_median(ref, run):
    assert median_update_ms(build(ch11.forward_explorer, ref)) < 100
    assert median_update_ms(build(ch11.reverse_explorer, ref, run=run)) < 100
    assert median_update_ms(build(ch11.score_explorer, ref, run=run)) < 100


def test_live_pictures_are_current_after_every_move(ref, run):
    assert_live_through_every_control(build(ch11.forward_explorer, ref), max_full_draws=2)
    assert_live_through_every_control(build(ch11.reverse_explorer, ref, run=run), max_full_draws=1)
    assert_live_through_every_control(build(ch11.score_explorer, ref, run=run), max_full_draws=1)
