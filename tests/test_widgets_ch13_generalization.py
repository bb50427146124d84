"""The widgets of ch13_generalization: controls change the readout; unwritten functions are named; renders are fast."""

import numpy as np

from dlcourse.widgets import ch13_generalization as ch13
from tests.helpers import (
    assert_live_through_every_control,
    build,
    counting,
    median_update_ms,
    missing_function_test,
    move,
)


def test_degree_explorer(ref):
    ex = build(ch13.degree_explorer, ref)
    assert ex.values["degree"] == 3 and ex.last_figure is not None
    assert ex.values["effective_dof"] == 4.0  # lam 0: the rank of the 20 x 4 design
    errors = {}
    for degree in (0, 3, 8, 15):
        move(ex, degree=degree)
        errors[degree] = (ex.values["train_error"], ex.values["heldout_error"])
    assert errors[0][0] > errors[3][0] > errors[15][0]            # training error falls with the degree
    assert errors[3][1] < errors[0][1] and errors[3][1] < errors[15][1]  # held-out error is U-shaped
    assert 0 < ex.values["best_degree"] < 15


def test_ridge_explorer_dof_falls_with_lam(ref):
    ex = build(ch13.ridge_explorer, ref)
    dofs = []
    for log_lam in (-8.0, -3.0, 2.0):
        move(ex, log10_lam=log_lam)
        dofs.append(ex.values["effective_dof"])
    assert 13 > dofs[0] > dofs[1] > dofs[2] > 0, dofs


def test_double_descent_peaks_at_the_interpolation_threshold(ref):
    ex = build(ch13.double_descent_explorer, ref)
    assert ex.values["peak_features"] in (36, 40, 44), ex.values
    assert ex.values["peak_error"] > 5 * ex.values["last_error"], ex.values
    move(ex, n_features=400)
    assert ex.values["heldout_error"] == ex.values["last_error"]


def test_folds_explorer(ref):
    ex = build(ch13.folds_explorer, ref)
    assert ex.values["fold_sizes"] == [5, 5, 5, 4, 4] and ex.values["leaks"] == 0
    move(ex, k=10)
    assert sum(ex.values["fold_sizes"]) == 23 and len(ex.values["fold_sizes"]) == 10
    move(ex, n=5)
    assert "raises ValueError" in ex.readout.value


def test_folds_explorer_shows_a_leak(ref):
    def leaky(n, k, rng):
        return [(np.arange(n), val) for _, val in ref.kfold_indices(n, k, rng)]
    ex = build(ch13.folds_explorer, ref, kfold_indices=leaky)
    assert ex.values["leaks"] == 23 and "leak" in ex.readout.value


def test_degree_errors_are_cached(ref):
    fit = counting(ref.ridge_fit)
    ex = build(ch13.degree_explorer, ref, ridge_fit=fit)
    calls = len(fit.calls)
    move(ex, degree=5)
    move(ex, degree=3)
    assert len(fit.calls) == calls  # every degree was fitted for the error curves at the first render


test_degree_names_missing_function = missing_function_test(ch13.degree_explorer)
test_ridge_names_missing_function = missing_function_test(ch13.ridge_explorer)
test_double_descent_names_missing_function = missing_function_test(ch13.double_descent_explorer)
test_folds_names_missing_function = missing_function_test(ch13.folds_explorer)


def test_renders_under_100_ms_median(ref):
    for factory in (ch13.degree_explorer, ch13.ridge_explorer, ch13.double_descent_explorer, ch13.folds_explorer):
        assert median_update_ms(build(factory, ref)) < 100, factory.__name__


def test_live_pictures_are_current_after_every_move(ref):
    for factory in (ch13.degree_explorer, ch13.ridge_explorer, ch13.double_descent_explorer, ch13.folds_explorer):
        assert_live_through_every_control(build(factory, ref))
