"""The widgets of ch12_capstone: controls change the readout; unwritten functions are named; renders are fast."""

import numpy as np
import pytest

from dlcourse.widgets import ch12_capstone as ch12
from tests.helpers import assert_live_through_every_control, assert_names_missing, counting, median_update_ms, stub

EPOCHS = 3  # the widgets need trained runs, not good ones


def capstone_runs(ref, **replace):
    functions = {name: replace.get(name, getattr(ref, name)) for name in ("train_capstone",) + ch12.PIECES}
    return ch12.CapstoneRuns(**functions, epochs=EPOCHS)


@pytest.fixture(scope="module")
def runs(ref):
    """The four variants trained for three epochs with the reference pieces (shared by the tests of this module)."""
    return capstone_runs(ref)


def test_runs_train_every_variant(runs):
    assert runs.error is None, runs.error
    assert list(runs.results) == list(ch12.VARIANTS)
    for name, run in runs.results.items():
        assert len(run["val_accuracy"]) == EPOCHS, name
        assert np.mean(run["losses"][-10:]) < np.mean(run["losses"][:10]), f"{name}: the loss did not go down"
    assert runs.results["full model"]["val_accuracy"][-1] > 0.6
    table = repr(runs)
    assert all(name in table for name in ch12.VARIANTS)


def test_attention_explorer(runs):
    ex = ch12.attention_explorer(runs=runs)
    assert ex.values["digit"] == 0 and ex.values["label"] == int(runs.y_val[0]) and ex.last_figure is not None
    assert ex.values["query"] == 3
    assert 0 <= ex.values["entropy"] <= np.log(8) + 1e-9  # a distribution over 8 rows
    ex.controls["digit"].value = 7
    assert ex.values["digit"] == 7 and ex.values["label"] == int(runs.y_val[7])
    ex.controls["query"].value = 6
    assert ex.values["query"] == 6


def test_attention_uses_the_students_attention_forward(ref):
    attention = counting(ref.attention_forward)
    runs = ch12.CapstoneRuns(train_capstone=ref.train_capstone, variants=["full model"], epochs=1,
                             **{name: getattr(ref, name) for name in ch12.PIECES if name != "attention_forward"},
                             attention_forward=attention)
    calls = len(attention.calls)
    ex = ch12.attention_explorer(runs=runs)
    ex.controls["digit"].value = 3
    assert len(attention.calls) == calls + 2 and attention.calls[-1][0].shape == (1, 8, 16)


def test_ablation_explorer(runs):
    ex = ch12.ablation_explorer(runs=runs)
    first = ex.readout.value
    assert first.startswith("validation accuracy after the last epoch") and ex.last_figure is not None  # named
    assert ex.values["quantity"] == "validation accuracy" and list(ex.values["final"]) == list(ch12.VARIANTS)
    full = ex.values["final"]["full model"]
    assert full == pytest.approx(runs.results["full model"]["val_accuracy"][-1], rel=1e-12)
    ex.controls["quantity"].value = "training loss (epoch mean)"
    last_epoch = np.array_split(np.asarray(runs.results["full model"]["losses"]), EPOCHS)[-1].mean()
    assert ex.values["final"]["full model"] == pytest.approx(last_epoch, rel=1e-12)
    ex.controls["quantity"].value = "validation loss"
    assert ex.values["final"]["SGD instead of Adam (lr 0.1)"] == pytest.approx(
        runs.results["SGD instead of Adam (lr 0.1)"]["val_loss"][-1], rel=1e-12)


@pytest.mark.parametrize("missing", ["train_capstone", "attention_backward", "adam_step"])
def test_runs_missing_a_function_are_named_by_both_widgets(ref, missing):
    broken = capstone_runs(ref, **{missing: stub})
    assert "not trained" in repr(broken)
    assert_names_missing(ch12.attention_explorer(runs=broken), missing)
    assert_names_missing(ch12.ablation_explorer(runs=broken), missing)


def test_updates_under_100_ms_median(runs):
    assert median_update_ms(ch12.attention_explorer(runs=runs)) < 100
    assert median_update_ms(ch12.ablation_explorer(runs=runs)) < 100


def test_live_pictures_are_current_after_every_move(runs):
    assert_live_through_every_control(ch12.attention_explorer(runs=runs), max_full_draws=1)
    assert_live_through_every_control(ch12.ablation_explorer(runs=runs), max_full_draws=3)
