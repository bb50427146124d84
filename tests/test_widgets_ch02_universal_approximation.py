"""The widgets of ch02_universal_approximation: controls change the readout; missing functions are named."""
import numpy as np

from dlcourse.widgets import RenderCache
from dlcourse.widgets import ch02_universal_approximation as ch02
from dlcourse.widgets.picture import figure_of
from tests.helpers import (
    assert_each_missing_is_named,
    assert_live_through_every_control,
    assert_picture_is_current,
    build,
    counting,
    move,
)


def test_interpolant_explorer_width_changes_sup_error(ref):
    explorer = build(ch02.interpolant_explorer, ref)
    explorer.controls["target"].value = "sin(x)"
    first = move(explorer, width=4)
    err4 = explorer.values["sup_error"]
    assert explorer.values["units"] == 4
    second = move(explorer, width=16)
    err16 = explorer.values["sup_error"]
    assert second != first and explorer.values["units"] == 16
    # smooth target: the error falls like 1/m^2 (h^2/8 max|f''|)
    assert err16 < err4 / 8
    assert err16 <= (2 * np.pi / 16) ** 2 / 8 + 1e-12
    explorer.controls["target"].value = "|x|"
    assert explorer.readout.value.startswith("<b>|x|</b>")  # the target chosen, named to the student
    # 16 equal gaps on [-1, 1] put a knot at 0: |x| is represented exactly
    assert explorer.values["target"] == "|x|" and explorer.values["sup_error"] < 1e-12
    explorer.controls["show_units"].value = False
    assert explorer.last_figure is not None
    assert explorer.last_render_seconds < 2.0


def test_interpolant_explorer_names_missing_functions(ref):
    assert_each_missing_is_named(ch02.interpolant_explorer, ref, controls={"width": 5})


def test_regions_explorer_counts_against_zaslavsky(ref):
    explorer = build(ch02.regions_explorer, ref)
    explorer.controls["depth"].value = 1
    text = move(explorer, units=3)
    count = explorer.values["regions"]
    assert explorer.values["units"] == 3 and explorer.values["one_layer_bound"] == 7
    assert 1 <= count <= 7
    text8 = move(explorer, units=8)
    assert text8 != text and explorer.values["units"] == 8 and explorer.values["one_layer_bound"] == 37
    assert explorer.values["regions"] <= 37
    explorer.controls["seed"].value = 5
    assert explorer.readout.value != text8
    deep = move(explorer, depth=3)
    assert explorer.values["all_units"] == 24 and explorer.values["all_units_bound"] == 301
    assert "one layer only" in deep and "Hanin" in deep  # the verdict and its source, in words
    # random deep networks exceed the bound of one layer of their width, not that of one layer of all their units
    assert 37 < explorer.values["regions"] <= 301


def test_regions_explorer_names_missing_functions(ref):
    assert_each_missing_is_named(ch02.regions_explorer, ref, controls={"units": 4})


def test_stacked_layer_gives_concatenated_patterns():
    layers = ch02.random_relu_layers(4, 3, seed=1)
    points = np.random.default_rng(0).uniform(-3, 3, (50, 2))
    W_block, b_block, stacked, pre = ch02.stacked_layer(layers, points)
    assert W_block.shape == (12, 2 + 4 + 4) and stacked.shape == (50, 10)
    np.testing.assert_allclose(stacked @ W_block.T + b_block, pre)


def test_sawtooth_explorer_doubles_pieces_and_shallow_fits_fail(ref):
    explorer = build(ch02.sawtooth_explorer, ref)
    for depth in (2, 5):
        text = move(explorer, depth=depth)
        shown = explorer.values
        assert (shown["hidden_layers"], shown["units"], shown["pieces"]) == (depth, 2 * depth, 2 ** depth), text
    explorer.controls["depth"].value = 5
    text = move(explorer, width=6)
    error, bound = explorer.values["l1_error"], explorer.values["lower_bound"]
    assert "fails" in text and error >= bound > 0.08, text
    explorer.controls["width"].value = 32
    assert "exact (m ≥ 2^5 units represent it)" in explorer.readout.value
    explorer.controls["width"].value = 31
    assert "not exact" in explorer.readout.value and explorer.values["l1_error"] > 1e-3
    assert explorer.last_figure is not None


def test_shallow_fit_respects_the_lower_bound():
    for depth in (3, 5):
        for width in (1, 3, 2 ** depth - 4, 2 ** depth - 1, 2 ** depth):
            _, err = ch02.best_shallow_fit(depth, width)
            assert err >= ch02.telgarsky_l1_bound(depth, width) - 1e-12
            assert (err < 1e-9) == (width >= 2 ** depth), (depth, width, err)


def test_sawtooth_explorer_names_missing_functions(ref):
    assert_each_missing_is_named(ch02.sawtooth_explorer, ref, controls={"depth": 4})


def test_interpolant_error_curve_is_computed_once_per_target(ref):
    relu_interpolant = counting(ref.relu_interpolant)
    explorer = ch02.interpolant_explorer(relu_interpolant=relu_interpolant, mlp_forward=ref.mlp_forward)
    targets = len(ch02.TARGETS)
    # the current width, then the curve 1..40 of every target (the others' backgrounds are drawn ahead)
    assert len(relu_interpolant.calls) == 1 + targets * ch02.MAX_WIDTH
    assert explorer.cache.figure.full_draws == targets
    explorer.controls["width"].value = 12
    explorer.controls["show_units"].value = False
    assert len(relu_interpolant.calls) == 1 + targets * ch02.MAX_WIDTH + 2  # only the current width, twice
    assert explorer.values["units"] == 12
    for target in ch02.TARGETS:
        explorer.controls["target"].value = target
        assert_picture_is_current(explorer)
    assert len(relu_interpolant.calls) == 1 + targets * ch02.MAX_WIDTH + 2 + targets - 1  # curves from the cache
    assert explorer.cache.figure.full_draws == targets  # and backgrounds kept


def test_interpolant_cache_never_serves_another_function(ref):
    cache = RenderCache()
    _, good = ch02.render_interpolant("sin(x)", 8, relu_interpolant=ref.relu_interpolant,
                                      mlp_forward=ref.mlp_forward, cache=cache)

    def shifted(knots, values):  # a re-run exercise cell: a new function object, other results
        W1, b1, W2, b2 = ref.relu_interpolant(knots, values)
        return W1, b1, W2, b2 + 0.5

    shifted = counting(shifted)
    picture, text = ch02.render_interpolant("sin(x)", 8, relu_interpolant=shifted, mlp_forward=ref.mlp_forward,
                                        cache=cache)
    assert len(shifted.calls) == 1 + ch02.MAX_WIDTH and cache.misses == 2 and cache.hits == 0
    assert text.values["sup_error"] >= 0.5
    # the error curve drawn (right panel, first line) is the new function's: every error >= 0.5
    assert min(figure_of(picture).axes[1].get_lines()[0].get_ydata()) >= 0.5


def test_regions_revisited_settings_are_served_from_cache(ref):
    activation_patterns = counting(ref.activation_patterns)
    explorer = ch02.regions_explorer(activation_patterns=activation_patterns, zaslavsky_bound=ref.zaslavsky_bound)
    first = explorer.readout.value
    explorer.controls["seed"].value = 3
    assert len(activation_patterns.calls) == 2 and explorer.readout.value != first
    explorer.controls["seed"].value = 0
    assert len(activation_patterns.calls) == 2 and explorer.readout.value == first
    assert explorer.cache.hits == 1 and explorer.cache.figure.full_draws == 1  # the picture; one figure, drawn once
    # the student's function sees the whole grid
    assert activation_patterns.calls[0][2].shape[0] == ch02.REGIONS_RESOLUTION ** 2
    other = counting(ref.activation_patterns)  # a re-run exercise cell: computed afresh
    ch02.render_regions(5, 1, 0, activation_patterns=other, zaslavsky_bound=ref.zaslavsky_bound,
                        cache=explorer.cache)
    assert len(other.calls) == 1


def test_sawtooth_revisited_depth_is_served_from_cache(ref):
    network, count = counting(ref.sawtooth_network), counting(ref.count_linear_pieces)
    explorer = build(ch02.sawtooth_explorer, ref, sawtooth_network=network, count_linear_pieces=count)
    first, figure = explorer.readout.value, explorer.last_figure
    explorer.controls["depth"].value = 6
    assert explorer.values["pieces"] == 64
    explorer.controls["width"].value = 10
    explorer.controls["depth"].value = 3
    explorer.controls["width"].value = 4
    assert explorer.readout.value == first and explorer.last_figure is figure  # redrawn in place
    assert len(network.calls) == len(count.calls) == 2
    other = counting(ref.count_linear_pieces)  # a re-run exercise cell: computed afresh
    ch02.render_sawtooth(3, 4, sawtooth_network=network, deep_forward=ref.deep_forward,
                         relu_interpolant=ref.relu_interpolant, count_linear_pieces=other,
                         cache=explorer.cache)
    assert len(other.calls) == 1


def test_interpolant_picture_is_current_after_every_move(ref):
    explorer = build(ch02.interpolant_explorer, ref)
    for values in ({"width": 9}, {"show_units": False}, {"target": "|x|"}, {"width": 2}, {"show_units": True}):
        move(explorer, **values)
        assert_picture_is_current(explorer)
    assert explorer.cache.figure.full_draws == len(ch02.TARGETS)  # each target's once (ahead): no move redraws one


def test_regions_and_sawtooth_pictures_are_current_after_every_move(ref):
    assert_live_through_every_control(build(ch02.regions_explorer, ref), max_full_draws=1)
    assert_live_through_every_control(build(ch02.sawtooth_explorer, ref), max_full_draws=1)
