"""The widgets of chapter 5 respond to their controls and name unfinished functions."""
import numpy as np
import pytest

from dlcourse.widgets import ch05_rnn as ch05
from tests.helpers import (
    assert_each_missing_is_named,
    assert_live_through_every_control,
    assert_picture_is_current,
    build,
    missing_function_test,
    move,
)


def test_gradient_norms_follow_sigma(ref):
    explorer = build(ch05.gradient_norm_explorer, ref)
    assert "first/last norm" in explorer.readout.value
    explorer.controls["input_scale"].value = 0.0
    explorer.controls["T"].value = 40
    vanishing = move(explorer, sigma=0.8)
    assert "vanishing" in vanishing and explorer.values["ratio"] < 0.1
    exploding = move(explorer, sigma=1.3)
    assert "exploding" in exploding and exploding != vanishing and explorer.values["ratio"] > 10
    # zero inputs: the ratio is exactly the bound sigma^(T-1)
    _, text = ch05.render_gradient_norm(1.3, 40, 0.0, 0, jacobian_norms=ref.jacobian_norms)
    assert text.values["ratio"] == pytest.approx(1.3 ** 39, rel=1e-9)
    assert text.values["bound"] == pytest.approx(1.3 ** 39, rel=1e-12)
    # saturation pulls the norms down
    explorer.controls["input_scale"].value = 2.0
    assert explorer.readout.value != exploding
    assert explorer.last_figure is not None


def test_gradient_norms_names_missing_function(ref):
    assert_each_missing_is_named(ch05.gradient_norm_explorer, ref)


def test_lru_explorer_moves_with_ring(ref):
    explorer = build(ch05.lru_explorer, ref)
    first = explorer.readout.value
    assert "inside the unit circle: yes" in first
    explorer.controls["r_min"].value = 0.5
    short = move(explorer, r_max=0.6)
    assert short != first
    short_half_life = explorer.values["half_life"]
    move(explorer, r_max=0.999)
    assert explorer.values["half_life"] > 10 * short_half_life
    explorer.controls["m"].value = 3
    assert explorer.values["m"] == 3
    # moduli reported within the ring
    explorer.controls["r_min"].value = 0.9
    explorer.controls["r_max"].value = 0.95
    lo, hi = explorer.values["modulus_min"], explorer.values["modulus_max"]
    assert 0.9 <= lo <= hi <= 0.95


test_lru_explorer_names_missing_function = missing_function_test(ch05.lru_explorer)


def test_lstm_gates_follow_forget_bias(ref):
    explorer = build(ch05.lstm_gate_explorer, ref)
    low = move(explorer, forget_bias=-2.0)
    f_low, memory_low = explorer.values["mean_f"], explorer.values["memory"]
    high = move(explorer, forget_bias=5.0)
    f_high, memory_high = explorer.values["mean_f"], explorer.values["memory"]
    assert low != high
    assert f_low < 0.3 < 0.9 < f_high
    assert memory_low < 1e-3 < 0.5 < memory_high


def test_lstm_gate_probes_recover_the_gates(ref):
    m, n = 4, 2
    W_ih, W_hh, b_ih, b_hh = ch05.lstm_weights(m, n, 1.0, seed=3)
    X = ch05.pulse_sequence(2.0, T=12, seed=3)
    gates = ch05.lstm_gates(ref.lstm_cell, X, W_ih, W_hh, b_ih, b_hh)
    h = np.zeros(m)
    for t, x in enumerate(X):
        a = W_ih @ x + b_ih + W_hh @ h + b_hh
        sig = 1 / (1 + np.exp(-a))
        np.testing.assert_allclose(gates["i"][t], sig[:m], rtol=1e-8)
        np.testing.assert_allclose(gates["f"][t], sig[m:2 * m], rtol=1e-8)
        np.testing.assert_allclose(gates["o"][t], sig[3 * m:], rtol=1e-6)
        h = gates["h"][t]


def test_lstm_gates_names_missing_function(ref):
    assert_each_missing_is_named(ch05.lstm_gate_explorer, ref)


def trained_like_model(m=8, seed=0, K=4, D=4, T=50):
    """Weights shaped like the notebook's trained first-token LSTM (random here), as float64 arrays."""
    W_ih, W_hh, b_ih, b_hh = ch05.lstm_weights(m, K + D, 3.0, seed)
    rng = np.random.default_rng(seed)
    return {"W_ih": W_ih, "W_hh": W_hh, "b_ih": b_ih, "b_hh": b_hh, "head_W": rng.standard_normal((K, m)),
            "head_b": np.zeros(K), "K": K, "D": D, "T": T}


def test_trained_lstm_gates_respond_to_controls(ref):
    explorer = ch05.lstm_gate_explorer(lstm_cell=ref.lstm_cell, model=trained_like_model())
    first = explorer.readout.value
    assert first.startswith("trained LSTM") and explorer.values["true_answer"] == 0, first
    best_first = explorer.values["memory_best"]
    shifted = move(explorer, forget_shift=-6.0)
    assert explorer.values["memory_best"] < best_first and explorer.values["forget_shift"] == -6.0
    explorer.controls["first_token"].value = 2
    assert explorer.values["true_answer"] == 2
    explorer.controls["sequence"].value = 3
    assert explorer.readout.value != shifted
    assert explorer.last_figure is not None
    # the gates of the probe are the sigmoids of the pre-activations, computed directly
    model = trained_like_model()
    X, tokens = ch05.first_token_sequence(1, 0)
    assert tokens[0] == 1 and (tokens[1:] >= 4).all() and X.shape == (50, 8)
    gates = ch05.lstm_gates(ref.lstm_cell, X, model["W_ih"], model["W_hh"], model["b_ih"], model["b_hh"])
    a = model["W_ih"] @ X[0] + model["b_ih"] + model["b_hh"]
    np.testing.assert_allclose(gates["f"][0], 1 / (1 + np.exp(-a[8:16])), rtol=1e-8)


def test_trained_lstm_gates_name_missing_function(ref):
    assert_each_missing_is_named(ch05.lstm_gate_explorer, ref, model=trained_like_model())


def test_heldout_baselines_count_on_training_text_and_score_held_out_text():
    # train "abab": unigram (2 + 1) / (4 + 2) = 1/2 for each character
    unigram, bigram = ch05.heldout_baselines("abab", "aab")
    assert unigram == pytest.approx(np.log(2))                      # -log(1/2) for both "a" and "b"
    # pairs of "abab": a->b twice, b->a once; add-one rows: a: (a 1, b 3)/4, b: (a 2, b 1)/3
    assert bigram == pytest.approx(-(np.log(1 / 4) + np.log(3 / 4)) / 2)   # "aa" then "ab"
    from dlcourse.data import language_reference
    corpus = language_reference()
    unigram, bigram = ch05.heldout_baselines(corpus["train"], corpus["validation"])
    assert round(bigram, 2) == 2.58 and 3.1 < unigram < 3.3           # the figures the chapter states


def test_char_rnn_driver_trains_and_samples(ref):
    """The superseded driver (the loop is the student's now) keeps working for released notebooks, from compat."""
    from dlcourse.compat import ch05_rnn as compat
    from dlcourse.drivers import ch05_rnn as drivers
    assert ch05.train_char_rnn is compat.train_char_rnn is drivers.train_char_rnn
    assert "train_char_rnn" not in ch05.__all__
    text = ch05.zen_of_python()
    assert text.startswith("The Zen of Python") and len(text) > 800
    unigram, bigram = ch05.unigram_bigram_entropy(text)
    assert 3.0 < unigram < 3.2 and 1.9 < bigram < 2.0
    model = ch05.train_char_rnn(text, ref.rnn_forward, ref.rnn_backward, ref.clip_grad_norm, steps=60,
                                sample_length=50)
    assert model["U"].shape == (64, 64) and model["V"].shape == (64, len(model["chars"]))
    assert len(model["losses"]) == 60 and model["losses"][-1] < model["losses"][0]
    assert len(model["sample"]) == 50 and set(model["sample"]) <= set(text)
    loss = ch05.char_rnn_cross_entropy(text, model["U"], model["V"], model["W"], model["chars"])
    assert loss < unigram
    sample = ch05.sample_char_rnn(model, ref.rnn_forward, length=30, start="T")
    assert len(sample) == 30 and sample[0] == "T"


def test_lru_picture_is_current_after_every_move(ref):
    explorer = build(ch05.lru_explorer, ref)
    assert_live_through_every_control(explorer, max_full_draws=1)  # the axes depend on T only


def test_gradient_norm_picture_is_current_after_every_move(ref):
    assert_live_through_every_control(build(ch05.gradient_norm_explorer, ref))


def test_moving_the_sequence_length_keeps_the_axes(ref):
    explorer = build(ch05.gradient_norm_explorer, ref)
    draws = explorer.cache.figure.full_draws
    for T in (55, 60, 5, 100):
        move(explorer, T=T)
    assert explorer.cache.figure.full_draws == draws, "the lag axis should span the longest T the slider allows"
    assert_picture_is_current(explorer)


def test_trained_lstm_gate_picture_is_current_after_every_move(ref):
    explorer = ch05.lstm_gate_explorer(lstm_cell=ref.lstm_cell, model=trained_like_model())
    assert_live_through_every_control(explorer, max_full_draws=1)  # the axes depend on the model's shapes only


def test_lstm_gate_picture_is_current_after_every_move(ref):
    assert_live_through_every_control(build(ch05.lstm_gate_explorer, ref), max_full_draws=1)


def test_numbers_the_chapter_states_are_its_own_run(ref):
    """§ 3 states the test text's baselines and the reference RNN's loss there: they are those of the run."""
    import re

    from autograder.course import Chapter
    from dlcourse.data import language_reference
    prose = " ".join(c.source for c in Chapter.load("ch05_rnn").cells("prose"))
    corpus = language_reference()
    run = ref.train_char_rnn(ref.rnn_forward, ref.rnn_backward, ref.clip_grad_norm, ref.adam_step, corpus["train"],
                             corpus["validation"][:6000])
    chars = "".join(sorted(set(corpus["train"])))
    model = ch05.char_rnn_cross_entropy(corpus["test"], *run["params"], chars)
    unigram, bigram = ch05.heldout_baselines(corpus["train"], corpus["test"])
    trigram = ch05.heldout_trigram(corpus["train"], corpus["validation"], corpus["test"])["cross_entropy"]
    stated = re.search(r"\((\d\.\d\d) nats on the test\s+text; the unigram model scores (\d\.\d\d)\)\. "
                       r"The reference reaches about (\d\.\d\d)", prose)
    wins = re.search(r"scores\s+(\d\.\d\d) nats on the test text, better than the RNN", prose)
    assert stated and wins, "the sentences that state the numbers changed: update this test"
    assert stated.groups() == (f"{bigram:.2f}", f"{unigram:.2f}", f"{model:.2f}") and wins.group(1) == f"{trigram:.2f}"
    assert trigram < model <= bigram - 0.15        # what the chapter says: the count model wins, the check passes
