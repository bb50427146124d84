"""The widgets of chapter 6 react to their controls and name unfinished exercises."""
import numpy as np
import pytest

from dlcourse.widgets import ch06_transformers as ch06
from tests.helpers import (
    assert_each_missing_is_named,
    assert_live_through_every_control,
    assert_names_missing,
    assert_only_in_hints,
    build,
    move,
    public_checks_missed,
    stub,
)


def fake_record(n_examples=3, n_heads=2, n_layers=2, T=8, d_head=4, seed=0):
    """A record shaped like the notebook's: random Q, K, V and their softmax weights."""
    rng = np.random.default_rng(seed)
    record = {"Q": [], "K": [], "V": [], "weights": []}
    for _ in range(n_layers):
        Q, K, V = (rng.normal(size=(n_examples, n_heads, T, d_head)) for _ in range(3))
        S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_head)
        W = np.exp(S - S.max(-1, keepdims=True))
        record["Q"].append(Q)
        record["K"].append(K)
        record["V"].append(V)
        record["weights"].append(W / W.sum(-1, keepdims=True))
    tokens = rng.integers(0, 10, size=(n_examples, T))
    record.update(tokens=tokens, targets=tokens[:, ::-1], predictions=tokens[:, ::-1].copy())
    return record


def test_attention_explorer_reacts_to_query_temperature_and_mask(ref):
    w = build(ch06.attention_explorer, ref)
    first = w.readout.value
    assert "query “it”" in first and "top-attended word “animal”" in first, first
    first_weight = w.values["weight"]
    sharp = move(w, temperature=0.2)
    assert sharp != first
    assert w.values["weight"] > first_weight      # a lower temperature sharpens the attention
    w.controls["query"].value = ch06.SENTENCE.index("tired")
    assert "query “tired”" in w.readout.value
    w.controls["causal"].value = True
    assert "causal mask" in w.readout.value
    w.controls["query"].value = 0                 # the first word can only attend to itself
    assert w.values["weight"] == pytest.approx(1.0) and w.values["top"] == 0
    assert w.last_figure is not None and w.last_render_seconds < 2


def test_attention_explorer_names_missing_functions(ref):
    assert_names_missing(build(ch06.attention_explorer, ref, scaled_dot_product_attention=stub),
                         "scaled_dot_product_attention")
    w = build(ch06.attention_explorer, ref, causal_mask=stub)
    assert "top-attended" in w.readout.value      # causal_mask is only needed once the box is ticked
    w.controls["causal"].value = True
    assert_names_missing(w, "causal_mask")


def test_positional_encoding_explorer(ref):
    w = build(ch06.positional_encoding_explorer, ref)
    first = w.values
    assert (first["T"], first["d"], first["position"]) == (48, 32, 10), first
    assert first["squared_norm"] == pytest.approx(16.0)
    assert first["shift_error"] < 1e-10           # even d: similarity depends on the offset only
    w.controls["d"].value = 64
    assert w.values["position"] == 10 and w.values["squared_norm"] == pytest.approx(32.0)
    w.controls["position"].value = 127            # clamped to T - 1
    assert w.values["position"] == 47
    w.controls["T"].value = 20
    assert w.values["T"] == 20 and w.values["position"] == 19
    w.controls["d"].value = 7                     # odd d: the lone sine column breaks exact shift invariance
    assert w.values["shift_error"] > 1e-6


def test_positional_encoding_explorer_names_missing_function(ref):
    assert_each_missing_is_named(ch06.positional_encoding_explorer, ref)


def test_nadaraya_watson_explorer(ref):
    w = build(ch06.nadaraya_watson_explorer, ref)

    def mse():
        return w.values["mse"]
    assert "gaussian kernel" in w.readout.value, w.readout.value
    assert w.values["kernel"] == "gaussian" and w.values["bandwidth"] == pytest.approx(0.5)
    middle = mse()
    w.controls["bandwidth"].value = 3.0           # over-smoothing
    assert mse() > middle
    for kernel in ("boxcar", "triangular", "epanechnikov"):
        w.controls["kernel"].value = kernel
        assert f"{kernel} kernel" in w.readout.value and "nan" not in w.readout.value
        w.controls["bandwidth"].value = 0.1       # every query still has a key within the bandwidth
        assert np.isfinite(mse())
        w.controls["bandwidth"].value = 3.0
    assert w.last_render_seconds < 2


def test_nadaraya_watson_explorer_names_missing_function(ref):
    assert_each_missing_is_named(ch06.nadaraya_watson_explorer, ref)


def test_transformer_attention_explorer(ref):
    record = fake_record()
    w = build(ch06.transformer_attention_explorer, ref, record=record)
    first = w.readout.value
    assert (w.values["layer"], w.values["head"], w.values["example"]) == (2, 1, 0), first
    assert (w.values["correct"], w.values["length"]) == (8, 8), first
    assert w.values["max_difference"] < 1e-12
    w.controls["head"].value = 1
    w.controls["example"].value = 2
    assert (w.values["layer"], w.values["head"], w.values["example"]) == (2, 2, 2) and w.readout.value != first
    w.controls["layer"].value = 0
    assert w.values["layer"] == 1


def test_transformer_attention_explorer_names_missing_function(ref):
    assert_each_missing_is_named(ch06.transformer_attention_explorer, ref, record=fake_record())


def test_toy_sentence_attention_is_meaningful(ref):
    words, Q, K, V = ch06.toy_sentence_qkv()
    _, weights = ref.scaled_dot_product_attention(Q, K, V)
    top = {words[i]: words[int(np.argmax(weights[i]))] for i in range(len(words))}
    assert top["it"] == "animal" and top["cross"] == "animal"


@pytest.fixture(scope="module")
def char_model(ref):
    """The character model trained by the reference's train_char_model (the student's loop) for 5 steps, on the
    Zen of Python (enough for the widget's mechanics)."""
    from dlcourse.widgets.ch05_rnn import zen_of_python
    text = zen_of_python()
    chars = "".join(sorted(set(text)))
    run = ref.train_char_model(ref.transformer_block, ref.transformer_block_backward, ref.layernorm_backward,
                               ref.causal_mask, text[:700], text[700:], chars, steps=5)
    return {"weights": run["params"], "n_heads": 4, "chars": chars}


def test_superseded_torch_driver_still_runs_from_compat(ref):
    """Released notebooks import train_char_transformer from the driver and widget modules: it lives in compat."""
    import sys

    from dlcourse.compat import ch06_transformers as compat
    from dlcourse.drivers import ch06_transformers as drivers
    from dlcourse.widgets.ch05_rnn import zen_of_python
    assert ch06.train_char_transformer is compat.train_char_transformer is drivers.train_char_transformer
    assert "train_char_transformer" not in ch06.__all__ and "dlcourse.compat.ch06_transformers" in sys.modules
    text = zen_of_python()
    model = compat.train_char_transformer(text, ref.causal_mask, ref.transformer_block, ref.sample_token, steps=5,
                                          sample_length=3)
    K = len(model["chars"])
    assert model["eval_logits"].shape == ((len(text) - 1) // 32, 32, K)
    assert len(model["losses"]) == 5 and len(model["sample"]) == 3
    ids = np.array([model["chars"].index(c) for c in text[:32]])
    logits = ch06.char_model_logits(model, ids, ref.transformer_block, ref.causal_mask)
    np.testing.assert_allclose(logits[0], model["eval_logits"][0], rtol=1e-10)
    assert 1.9 < ch06.bigram_cross_entropy(text) < 2.0


def test_char_model_explorer_temperature_and_top_k(ref, char_model):
    w = build(ch06.char_model_explorer, ref, model=char_model)
    kept = lambda: w.values["kept"]  # noqa: E731
    entropy = lambda: w.values["entropy"]  # noqa: E731
    text = lambda: w.values["generated"]  # noqa: E731
    K = len(char_model["chars"])
    assert kept() == K and text().startswith("Beautiful is ")
    first, h1 = text(), entropy()
    w.controls["temperature"].value = 2.0
    assert entropy() > h1 and text() != first
    w.controls["top_k"].value = 1                 # greedy: one character kept, entropy 0
    assert kept() == 1 and entropy() == 0.0
    greedy = text()
    w.controls["seed"].value = 5                  # greedy decoding does not depend on the seed
    assert text() == greedy
    w.controls["top_k"].value = 3
    assert kept() == 3
    w.controls["prompt"].value = ch06.PROMPTS[1]
    assert text().startswith(ch06.PROMPTS[1])
    assert w.last_figure is not None


@pytest.mark.parametrize("missing", ["transformer_block", "causal_mask", "sample_token"])
def test_char_model_explorer_names_missing_function(ref, char_model, missing):
    assert_names_missing(build(ch06.char_model_explorer, ref, model=char_model, **{missing: stub}), missing)


def test_live_pictures_are_current_after_every_move(ref, char_model):
    assert_live_through_every_control(build(ch06.attention_explorer, ref), max_full_draws=1)
    assert_live_through_every_control(build(ch06.nadaraya_watson_explorer, ref), max_full_draws=1)
    assert_live_through_every_control(build(ch06.positional_encoding_explorer, ref))
    assert_live_through_every_control(build(ch06.transformer_attention_explorer, ref, record=fake_record()))
    assert_live_through_every_control(build(ch06.char_model_explorer, ref, model=char_model))


def test_heldout_bigram_baseline_of_the_reference_text():
    from dlcourse.data import language_reference
    texts = language_reference()
    assert 2.55 < ch06.heldout_bigram_cross_entropy(texts["train"], texts["validation"]) < 2.60
    # one added to every count: a pair the training text lacks costs log(V + count), not infinity
    assert ch06.heldout_bigram_cross_entropy("aaaa", "ab") == pytest.approx(np.log(5))


def test_char_model_run_trains_with_the_students_loop_and_samples(ref):
    from dlcourse.drivers.ch06_transformers import char_model_run
    text = "abcabcabd " * 30
    chars = "".join(sorted(set(text)))
    run = char_model_run(ref.train_char_model, ref.transformer_block, ref.transformer_block_backward,
                         ref.layernorm_backward, ref.causal_mask, ref.sample_token, text[:200], text[200:], chars,
                         prompt="ab", sample_length=5, d=8, n_heads=2, d_ff=8, context=4, steps=3, batch=2)
    assert run["type"] == "dict" and run["losses"].shape == (3,) and isinstance(run["val_loss"], float)
    assert len(run["params"]) == 18
    assert all(isinstance(v, np.ndarray) and v.dtype == np.float64 for v in run["params"].values())
    assert run["sample"].startswith("ab") and len(run["sample"]) == 7 and set(run["sample"]) <= set(chars)
    silent = char_model_run(lambda *args, **kwargs: None, ref.transformer_block, ref.transformer_block_backward,
                            ref.layernorm_backward, ref.causal_mask, ref.sample_token, text, text, chars)
    assert silent == {"type": "NoneType", "params": None, "losses": None, "val_loss": None, "sample": ""}


def test_char_model_explorer_takes_its_prompts(ref, char_model):
    w = build(ch06.char_model_explorer, ref, model=char_model, prompts=ch06.REFERENCE_PROMPTS)
    assert w.values["generated"].startswith("The ")
    assert list(w.controls["prompt"].options) == list(ch06.REFERENCE_PROMPTS)


def test_char_model_traced_follows_the_pieces_into_the_update(ref):
    """The trace of test_train_char_model: Adam of the logged (altered) gradients gives the next parameters."""
    from dlcourse.drivers.ch06_transformers import char_model_traced
    text = "abcabcabd " * 30
    chars = "".join(sorted(set(text)))
    settings = dict(d=8, n_heads=2, d_ff=8, context=4, steps=4, batch=2, lr=0.02, seed=1)
    run = char_model_traced(ref.train_char_model, ref.transformer_block, ref.transformer_block_backward,
                            ref.layernorm_backward, ref.causal_mask, ref.sample_token, text[:200], text[200:], chars,
                            alter=0.01, **settings)
    assert run["events"] == "LB" * 4 and run["watched"]["torch_used"] == []
    p, g = run["block_params"]["W_q"], run["block_grads"]["W_q"]
    assert p.shape == (4, 64) and g.shape == (4, 64)
    m = 0.1 * g[0]
    v = 0.001 * g[0] ** 2
    np.testing.assert_allclose(p[1], p[0] - 0.02 * (m / 0.1) / (np.sqrt(v / 0.001) + 1e-8), rtol=1e-12)
    plain = char_model_traced(ref.train_char_model, ref.transformer_block, ref.transformer_block_backward,
                              ref.layernorm_backward, ref.causal_mask, ref.sample_token, text[:200], text[200:], chars,
                              probe={"W_q": [0, 5]}, **settings)
    assert plain["block_params"]["W_q"].shape == (4, 2) and not np.allclose(plain["block_grads"]["W_q"], g[:, [0, 5]])


def test_trigram_baseline_is_a_distribution_and_beats_the_bigram():
    from dlcourse.data import language_reference
    texts = language_reference()
    tri = ch06.heldout_trigram(texts["train"], texts["validation"], texts["test"])
    assert abs(sum(tri["weights"]) - 1) < 1e-12 and min(tri["weights"]) >= 0 and tri["weights"][2] > 0
    assert tri["cross_entropy"] < ch06.heldout_bigram_cross_entropy(texts["train"], texts["test"]) - 0.3
    # where the character before the last decides (x a -> b, y a -> c), the trigram estimate carries the weight
    assert ch06.heldout_trigram("xabyac" * 30, "xabyacxab", "yacxab")["weights"][0] >= 0.9


def test_numbers_the_chapter_states_are_its_own_run(ref):
    """§ 6.5 states the baselines on the test text and the reference's loss there: they are those of the run."""
    import re

    from autograder.course import Chapter
    from dlcourse.data import language_reference
    prose = " ".join(c.source for c in Chapter.load("ch06_transformers").cells("prose"))
    texts = language_reference()
    chars = "".join(sorted(set(texts["train"])))
    run = ref.train_char_model(ref.transformer_block, ref.transformer_block_backward, ref.layernorm_backward,
                               ref.causal_mask, texts["train"], texts["validation"], chars)
    ids = np.array([chars.index(c) for c in texts["test"]])
    n = (len(ids) - 1) // 32
    logits = ch06.char_model_logits({"weights": run["params"], "n_heads": 4, "chars": chars},
                                    ids[:n * 32].reshape(n, 32), ref.transformer_block, ref.causal_mask)
    z = logits - logits.max(axis=-1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    model = float(-np.take_along_axis(log_p, ids[1:n * 32 + 1].reshape(n, 32, 1), axis=-1).mean())
    bigram = ch06.heldout_bigram_cross_entropy(texts["train"], texts["test"])
    trigram = ch06.heldout_trigram(texts["train"], texts["validation"], texts["test"])["cross_entropy"]
    stated = re.search(r"\((\d\.\d\d) nats per character on the test text; the reference reaches about "
                       r"(\d\.\d\d)\)", prose)
    wins = re.search(r"The trigram count model wins\*\* \((\d\.\d\d) nats on the test text\)", prose)
    assert stated and wins, "the sentences that state the numbers changed: update this test"
    assert stated.groups() == (f"{bigram:.2f}", f"{model:.2f}") and wins.group(1) == f"{trigram:.2f}"
    assert trigram < model < bigram - 0.08        # what the chapter says: the count model wins, the check passes


# ------------------------------------------------------------ issue 42: public checks that catch the common mistakes
# and messages that name the wrong term

# (function, mistake) -> words the first failing public check's message must contain (None: any failure)
PUBLIC_CATCHES = {
    ("softmax_backward", "missing_sum_term"): "returned p * dp: that is only the i = j case",
    ("softmax_backward", "sum_over_first_axis"): "the row sums of dz (over the last axis)",
    ("softmax_backward", "softmax_applied_to_p"): "treated p as the scores z",
    ("softmax_backward", "diagonal_only"): None,
    ("softmax_backward", "unweighted_sum"): None,
    ("softmax_backward", "sum_without_keepdims"): None,
    ("scaled_dot_product_attention", "unstable_softmax_inline"): "weights for scores of about 1000 contains nan",
    ("scaled_dot_product_attention_backward", "dK_untransposed"): "dK (T_q = T_k = 3) is wrong",
    ("transformer_block_backward", "input_gradient_through_K_transposed"):
        "through the keys (K = LN1(X) W_k^T) uses W_k the wrong way round",
    ("transformer_block_backward", "only_query_path_to_ln1"):
        "through the keys (K = LN1(X) W_k^T) and through the values (V = LN1(X) W_v^T) is missing",
    ("transformer_block_backward", "attention_residual_dropped"): "the residual path is missing",
    ("standardize_backward", "mean_term_missing"): "is missing the term through the mean mu",
    ("standardize_backward", "projection_term_missing"):
        "is missing the term through sigma: the error of dx lies along xhat",
    ("standardize_backward", "mu_and_sigma_constant"): "mu and sigma were treated as constants",
    ("standardize_backward", "unbiased_variance"): "divides by the unbiased variance's sigma (ddof=1)",
    ("standardize_backward", "axis_ignored"): "(dxhat, x, axis=0) for (6, 4) standardised along axis 1",
    ("standardize_backward", "averages_over_axis_0"): None,
    ("standardize_backward", "projection_without_keepdims"): None,
    ("standardize_backward", "divides_by_variance"): None,
    ("layernorm_backward", "gamma_forgotten_in_dx"): "is the one for gamma = 1",
    ("layernorm_backward", "parameter_grads_summed_over_axis_0_only"): "their gradients add up over every leading axis",
    ("layernorm_backward", "dgamma_not_summed"): "their gradients add up over every leading axis",
    ("layernorm_backward", "mean_treated_as_constant"): None,
    ("layernorm_backward", "variance_treated_as_constant"): None,
    ("layernorm_backward", "dgamma_from_x_not_xhat"): "dgamma weighs dy by what gamma multiplies",
}


def test_public_checks_catch_the_common_mistakes_and_name_the_wrong_term():
    """Issue 42: the public checks the student sees (the release's cells) pass for the reference and fail for the
    softmax's backward mistakes (the missing sum term, the wrong axis, p taken for z), an overflowing inline softmax in
    attention (scores of about 1000), dK with dS untransposed (named dK), and the block's input gradient through K with
    W_k transposed, a missing path or residual (named as such, not as "dX is wrong")."""
    assert not public_checks_missed("ch06_transformers", PUBLIC_CATCHES)


def test_the_softmax_formula_is_only_in_a_collapsed_hint():
    """Issue 42: the release states the route to softmax_backward and attention's backward pass; their results sit in
    collapsed <details> hints, nowhere else in what the student reads."""
    assert_only_in_hints("ch06_transformers",
                         ("np.sum(dp * p", "operatorname{diag}(p) - p p^", "A^\\top G", "p_i(\\delta_{ij} - p_j)"))


# the results of layer norm's derivation (steps 2 and 3), as the release may print them only inside <details>
LAYERNORM_RESULTS = ("\\overline{\\hat g \\odot \\hat x}", "dxhat.mean(axis, keepdims=True)",
                     "\\frac1D - \\frac{\\hat x_i\\hat x_j}{D}", "\\hat x \\hat x^\\top", "= \\hat x_j / D")
# the forms the chapter used to print in its prose and its checks' hints: gone everywhere
OLD_PRINTED = ("mean(g_{\\hat x}", "mean(g * x_hat)", "mean(g) AND", "x_hat * mean(", "xhat * mean(")


def test_the_layernorm_backward_formula_is_only_in_a_collapsed_hint():
    """Issue 42: the release gives the route to layer norm's backward pass (the affine part, the standardisation's
    Jacobian through mu and sigma, the contraction); the Jacobian and the result sit in collapsed <details> hints,
    nowhere else the student reads (prose, test cells' messages)."""
    release = assert_only_in_hints("ch06_transformers", LAYERNORM_RESULTS, OLD_PRINTED)
    prose = "\n".join(c.source for c in release.cells if c.cell_type == "markdown")
    assert "standardize_backward(dxhat, x, eps=1e-5, axis=-1)" in prose and "Jacobian" in prose
