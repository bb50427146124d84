"""Drivers of the integration checks of ch06_transformers: public code that runs where the student's code runs.

Each is a top-level function that ``dlcourse.testing.in_student_process`` names (module and function):
under the grader the sandbox imports it from here, so no test cell's text ever enters the student's
process. A driver holds no hidden check, threshold or secret data: it uses the student's pieces it is
given and returns plain data; the verdict is reached in the test cell.
"""
from __future__ import annotations

import numpy as np


def __getattr__(name):
    """Names of earlier releases (``train_char_transformer``, a complete torch training) from ``dlcourse.compat``."""
    if name == "train_char_transformer":
        from dlcourse.compat import ch06_transformers
        return getattr(ch06_transformers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


BLOCK_KEYS = ("ln1_g", "ln1_b", "W_q", "W_k", "W_v", "W_o", "ln2_g", "ln2_b", "W1", "b1", "W2", "b2")


def char_model_logits(model, tokens, transformer_block, causal_mask):
    """Logits (B, T, V) of a trained character model with the student's block: ``model`` a dict with
    ``weights`` (E, pos, the twelve block parameters, lnf_g, lnf_b, W_out, b_out), ``n_heads`` and ``chars``;
    ``tokens`` integer ids (T,) or (B, T), T at most the model's context."""
    W = model["weights"]
    tokens = np.atleast_2d(tokens)
    T = tokens.shape[1]
    x = W["E"][tokens] + W["pos"][:T]
    h = np.asarray(transformer_block(x, {key: W[key] for key in BLOCK_KEYS}, model["n_heads"],
                                     np.asarray(causal_mask(T), dtype=bool)), dtype=float)
    h = (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + 1e-5) * W["lnf_g"] + W["lnf_b"]
    return h @ W["W_out"].T + W["b_out"]


def generate(model, prompt, length, transformer_block, causal_mask, sample_token, temperature=0.8, top_k=None, seed=0):
    """``prompt`` followed by ``length`` characters drawn one at a time with the student's ``sample_token`` from
    the logits of the last position (the last ``context`` characters as input), ``rng = default_rng(seed)``."""
    chars = model["chars"]
    context = model["weights"]["pos"].shape[0]
    out = [chars.index(c) for c in prompt]
    rng = np.random.default_rng(seed)
    for _ in range(length):
        last = char_model_logits(model, np.array(out[-context:]), transformer_block, causal_mask)[0, -1]
        out.append(int(sample_token(last, temperature, rng, top_k)))
    return "".join(chars[i] for i in out)


def char_model_run(train_char_model, transformer_block, transformer_block_backward, layernorm_backward, causal_mask,
                   sample_token, train_text, val_text, chars, prompt="", sample_length=200, temperature=0.8,
                   top_k=None, **settings):
    """The student's ``train_char_model(transformer_block, transformer_block_backward, layernorm_backward,
    causal_mask, train_text, val_text, chars, **settings)``, then ``generate`` from the trained model.

    Returns plain data: ``type`` (of what the loop returned), ``params`` (dict of float arrays, or None),
    ``losses`` (float array or None), ``val_loss`` (float or None) and ``sample`` (the prompt and
    ``sample_length`` generated characters; "" when ``sample_length`` is 0)."""
    result = train_char_model(transformer_block, transformer_block_backward, layernorm_backward, causal_mask,
                              train_text, val_text, chars, **settings)
    out = {"type": type(result).__name__, "params": None, "losses": None, "val_loss": None, "sample": ""}
    if not isinstance(result, dict):
        return out
    if isinstance(result.get("params"), dict):
        out["params"] = {str(k): np.array(v, dtype=np.float64) for k, v in result["params"].items()}
    if result.get("losses") is not None:
        out["losses"] = np.asarray([float(v) for v in result["losses"]], dtype=np.float64)
    if result.get("val_loss") is not None:
        out["val_loss"] = float(result["val_loss"])
    if sample_length and out["params"] is not None:
        model = {"weights": out["params"], "n_heads": settings.get("n_heads", 4), "chars": "".join(chars)}
        out["sample"] = generate(model, prompt, sample_length, transformer_block, causal_mask, sample_token,
                                 temperature, top_k)
    return out


TRACED_KEYS = BLOCK_KEYS + ("lnf_g", "lnf_b", "pos")


def char_model_traced(train_char_model, transformer_block, transformer_block_backward, layernorm_backward, causal_mask,
                      sample_token, train_text, val_text, chars, probe=None, alter=0.0, prompt="", sample_length=0,
                      temperature=0.8, top_k=None, **settings):
    """``char_model_run`` with the backward pieces traced into the update, the loop watched for torch calls.

    The student's loop gets ``transformer_block_backward`` and ``layernorm_backward`` wrapped: each call is
    logged in ``events`` ("L" for layernorm_backward, "B" for transformer_block_backward, in call order); at
    every call the wrapper keeps the parameters it was given (the twelve block parameters; ``gamma``, i.e.
    ``lnf_g``) and the gradients it returns (the twelve block gradients, ``dgamma``, ``dbeta`` and the batch sum
    of ``dX``, which is the gradient of ``pos``), at the flat positions ``probe[key]`` (every position when
    ``probe`` is None). With ``alter`` > 0 the wrappers return the student's results each multiplied elementwise
    by ``1 + alter * u``, ``u`` uniform in [-1, 1] from ``default_rng(2024)``: then only a loop that applies what
    the pieces returned updates the parameters by Adam of the logged gradients (Adam works elementwise, so
    the probed positions are enough to follow it). The loop runs inside a ``Watch`` for torch calls (unless a
    watch, the test's ``from_scratch`` in a student's kernel, is on already): its observations come back as
    ``watched`` (``torch_used``, ``tampered``, ``threads``), to be judged by the test.

    Returns what ``char_model_run`` returns, and ``events`` (str), ``block_params`` / ``block_grads`` (key ->
    array (calls, positions)), ``lnf_gamma`` / ``lnf_dgamma`` / ``lnf_dbeta`` (arrays (calls, positions)),
    ``pos_grads`` (array (calls, positions)), ``watched``."""
    import numpy as np

    from dlcourse.testing import Watch

    noise = np.random.default_rng(2024)
    events = []
    log = {"block_params": {k: [] for k in BLOCK_KEYS}, "block_grads": {k: [] for k in BLOCK_KEYS},
           "lnf_gamma": [], "lnf_dgamma": [], "lnf_dbeta": [], "pos_grads": []}

    def at(key, array):
        flat = np.asarray(array, dtype=np.float64).reshape(-1)
        return flat.copy() if probe is None or key not in probe else flat[np.asarray(probe[key], dtype=int)]

    def altered(array):
        array = np.asarray(array, dtype=np.float64)
        return array * (1.0 + alter * noise.uniform(-1.0, 1.0, array.shape)) if alter else array

    def traced_block_backward(X, params, n_heads, d_out, mask=None):
        events.append("B")
        for key in BLOCK_KEYS:
            log["block_params"][key].append(at(key, params[key]) if key in params else np.full(1, np.nan))
        dX, grads = transformer_block_backward(X, params, n_heads, d_out, mask)
        dX = altered(dX)
        grads = {key: altered(value) for key, value in dict(grads).items()}
        for key in BLOCK_KEYS:
            log["block_grads"][key].append(at(key, grads[key]) if key in grads else np.full(1, np.nan))
        log["pos_grads"].append(at("pos", dX.sum(axis=0)) if dX.ndim == 3 else np.full(1, np.nan))
        return dX, grads

    def traced_layernorm_backward(dy, x, gamma, eps=1e-5):
        events.append("L")
        log["lnf_gamma"].append(at("lnf_g", gamma))
        dx, dgamma, dbeta = (altered(a) for a in layernorm_backward(dy, x, gamma, eps))
        log["lnf_dgamma"].append(at("lnf_g", dgamma))
        log["lnf_dbeta"].append(at("lnf_b", dbeta))
        return dx, dgamma, dbeta

    import sys
    watch = Watch(torch_calls=True)
    # in a student's kernel the test's own from_scratch may watch this call already (a second watch inside it
    # would look like tampering); in the grader's sandbox no profile hook is set here (only a Watch may set one)
    outer = sys.getprofile() is not None
    if not outer:
        watch.__enter__()
    try:
        out = char_model_run(train_char_model, transformer_block, traced_block_backward, traced_layernorm_backward,
                             causal_mask, sample_token, train_text, val_text, chars, prompt=prompt, sample_length=0,
                             **settings)
    finally:
        if not outer:
            watch.__exit__(None, None, None)
    if sample_length and out["params"] is not None:   # generation is the test's, outside the watch
        model = {"weights": out["params"], "n_heads": settings.get("n_heads", 4), "chars": "".join(chars)}
        out["sample"] = generate(model, prompt, sample_length, transformer_block, causal_mask, sample_token,
                                 temperature, top_k)

    def stacked(rows):
        try:
            return np.array(rows, dtype=np.float64).reshape(len(rows), -1)
        except ValueError:                              # ragged: shapes changed between calls
            return np.full((len(rows), 1), np.nan)

    out["events"] = "".join(events)
    for name in ("block_params", "block_grads"):
        out[name] = {key: stacked(rows) for key, rows in log[name].items()}
    for name in ("lnf_gamma", "lnf_dgamma", "lnf_dbeta", "pos_grads"):
        out[name] = stacked(log[name])
    out["watched"] = watch.observations()
    return out
