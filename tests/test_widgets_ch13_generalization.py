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


# ------------------------------------------------------------------ the numbers the prose states

def _chapter():
    """The solution notebook's cells, and its prose (markdown) with whitespace collapsed."""
    import nbformat

    from autograder.course import SOLUTIONS
    nb = nbformat.read(str(SOLUTIONS / "ch13_generalization" / "ch13_generalization.ipynb"), as_version=4)
    return nb.cells, " ".join(" ".join(c.source.split()) for c in nb.cells if c.cell_type == "markdown")


def _cell(cells, grade_id=None, containing=None):
    for c in cells:
        if grade_id is not None and c.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            return c.source
        if containing is not None and c.cell_type == "code" and containing in c.source:
            return c.source
    raise AssertionError(f"no cell {grade_id or containing!r}")


def test_section_1_states_where_the_held_out_error_bottoms_out(ref):
    """Section 1's demo, run as the chapter runs it (its own code up to the plot): the training error falls with
    every degree and the held-out error bottoms out in the degrees the prose names."""
    import re
    cells, prose = _chapter()
    demo = _cell(cells, containing="test_err.append(")
    ns = {"np": np, "noisy_sine": ch13.noisy_sine, "polynomial_features": ref.polynomial_features,
          "ridge_fit": ref.ridge_fit}
    exec(demo.split("\nfig, ax")[0], ns)
    train, test = np.array(ns["train_err"]), np.array(ns["test_err"])
    assert "The training error falls with every degree" in prose and np.all(np.diff(train) < 0), train
    low, high, percent = map(int, re.search(r"bottoms out at degrees (\d+)–(\d+) \(within (\d+) % of one another\)",
                                             prose).groups())
    floor = [d for d in range(len(test)) if test[d] <= (1 + percent / 100) * test.min()]
    assert floor == list(range(low, high + 1)), (floor, np.round(test, 4))
    assert test[low:high + 1].max() <= (1 + percent / 100) * test[low:high + 1].min()
    assert test[-1] > 2 * test.min() and test[0] > 2 * test.min()  # then it rises (U-shaped)
    # the widget's data are the demo's
    x, y, x_test, y_test = ch13.curve_data()
    assert np.array_equal(x, ns["x_train"]) and np.array_equal(y_test, ns["y_test"])



def test_the_double_descent_widget_is_what_the_prose_says(ref):
    """'the same data as the check, the median of 3 draws per feature count'; at p = n the fit swings between the
    training points, at p = 10n it is smooth again."""
    import re

    from dlcourse.drivers.ch13_generalization import tanh_teacher
    cells, prose = _chapter()
    assert f"the median of {ch13.DRAWS} draws per feature count" in prose
    ex = build(ch13.double_descent_explorer, ref)
    assert f"(median of {ch13.DRAWS} draws)" in ex.readout.value
    assert ex.cache.figure.curve.get_label() == f"min-norm (median of {ch13.DRAWS} draws)"
    check = _cell(cells, grade_id="test_integration_double_descent")
    seed = int(re.search(r"\n    verify_double_descent\((\d+)\)\n### BEGIN HIDDEN", check).group(1))
    rng = np.random.default_rng(seed)
    beta = rng.standard_normal(ch13.DD_D) / np.sqrt(ch13.DD_D)
    X, y = tanh_teacher(ch13.DD_N, ch13.DD_D, rng, beta)
    X_test, y_test = tanh_teacher(1000, ch13.DD_D, rng, beta)
    for ours, theirs in zip(ch13.descent_data(), (X, y, X_test, y_test, beta)):
        assert np.array_equal(ours, theirs)
    assert "at $p = n$ it swings wildly between the training points, at $p = 10n$ it is smooth again" in prose
    _, curves = next(v for k, v in ex.cache.store.items() if k[0] == "descent")  # what the widget draws
    variation = {p: float(np.abs(np.diff(curves[ch13.FEATURE_COUNTS.index(p)][0])).sum()) for p in (40, 400)}
    teacher = float(np.abs(np.diff(np.tanh(ch13.SLICE * np.linalg.norm(beta)))).sum())
    assert variation[40] > 5 * variation[400] and variation[400] < 1.5 * teacher, (variation, teacher)


def test_the_ridge_widget_states_its_dof_at_both_ends(ref):
    """'fall from 12.5 (of 13) at the slider's left end, `lam` = 1e-8, to 0.47 at its right end, `lam` = 100'."""
    _, prose = _chapter()
    ex = build(ch13.ridge_explorer, ref)
    slider = ex.controls["log10_lam"]
    move(ex, log10_lam=slider.min)
    left = ex.values["effective_dof"]
    move(ex, log10_lam=slider.max)
    right = ex.values["effective_dof"]
    stated = (f"fall from {left:.1f} (of {ch13.RIDGE_DEGREE + 1}) at the slider's left end, `lam` = "
              f"{10.0 ** slider.min:.0e}, to {right:.2f} at its right end, `lam` = {10.0 ** slider.max:.0f}")
    assert stated.replace("e-0", "e-") in prose, stated


def test_the_degree_widgets_dof_is_the_number_of_parameters_at_every_degree(ref):
    """'the readout the effective degrees of freedom, which at `lam = 0` is the number of parameters'."""
    _, prose = _chapter()
    assert "which at `lam = 0` is the number of parameters" in prose
    ex = build(ch13.degree_explorer, ref)
    for degree in ch13.DEGREES:
        move(ex, degree=degree)
        assert ex.values["effective_dof"] == degree + 1, (degree, ex.values)
