"""Widgets of chapter 6 (attention and transformers).

Each widget is a pure ``render_*`` function returning ``(figure, readout)`` and a factory
that wires it to ipywidgets controls through ``Explorer``, with the student's functions:

* ``attention_explorer``: attention weights over a toy sentence (query, temperature, causal);
* ``positional_encoding_explorer``: the sinusoidal encoding and the similarity of positions;
* ``nadaraya_watson_explorer``: kernel regression with a bandwidth slider and kernel choice;
* ``transformer_attention_explorer``: the attention maps of the transformer trained in the
  notebook, recomputed with the student's ``scaled_dot_product_attention``.
"""
from __future__ import annotations

import functools

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np

from .explorer import Explorer

__all__ = [
    "SENTENCE", "toy_sentence_qkv", "render_attention", "attention_explorer",
    "render_positional_encoding", "positional_encoding_explorer",
    "regression_data", "true_function", "render_nadaraya_watson", "nadaraya_watson_explorer",
    "render_transformer_attention", "transformer_attention_explorer",
]


# --------------------------------------------------------------- attention over a toy sentence

SENTENCE = "the animal did not cross the street because it was too tired".split()

# word class of each word, and what a word of each class looks for in the other words
_FEATURES = ["noun", "animate", "verb", "pronoun", "determiner", "adjective", "function"]
_CLASS = {"the": ["determiner"], "animal": ["noun", "animate"], "did": ["verb"], "not": ["function"],
          "cross": ["verb"], "street": ["noun"], "because": ["function"], "it": ["pronoun", "animate"],
          "was": ["verb"], "too": ["function"], "tired": ["adjective"]}
_SEEKS = {"determiner": {"noun": 1.0}, "noun": {"verb": 0.8}, "animate": {},
          "verb": {"animate": 1.0, "noun": 0.4}, "pronoun": {"noun": 1.0, "animate": 1.2, "pronoun": -1.0},
          "adjective": {"animate": 1.0, "pronoun": 0.6}, "function": {}}


def toy_sentence_qkv(strength: float = 6.0, locality: float = 2.5):
    """Hand-made queries, keys and values for ``SENTENCE``: (words, Q, K, V), Q and K (T, 9).

    Keys are the word-class features plus a 2-D rotation that encodes the position; queries
    say which classes the word looks for, plus the same rotation, so that nearby words score
    higher (the dot product of the rotations is ``cos(theta * (i - j))``).
    """
    T = len(SENTENCE)
    theta = 0.35
    K = np.zeros((T, len(_FEATURES) + 2))
    Q = np.zeros_like(K)
    for t, word in enumerate(SENTENCE):
        for cls in _CLASS[word]:
            K[t, _FEATURES.index(cls)] = 1.0
            for target, weight in _SEEKS[cls].items():
                Q[t, _FEATURES.index(target)] += strength * weight
        rotation = np.array([np.cos(theta * t), np.sin(theta * t)])
        K[t, -2:] = rotation
        Q[t, -2:] = locality * rotation
    return list(SENTENCE), Q, K, K.copy()


def render_attention(query, temperature, causal, scaled_dot_product_attention, causal_mask):
    words, Q, K, V = toy_sentence_qkv()
    T = len(words)
    mask = np.asarray(causal_mask(T), dtype=bool) if causal else None
    _, weights = scaled_dot_product_attention(Q / temperature, K, V, mask)
    weights = np.asarray(weights, dtype=float)
    row = weights[query]
    top = int(np.argmax(row))
    p = row[row > 0]
    entropy = float(-(p * np.log(p)).sum())

    labels = [f"{w} {i}" for i, w in enumerate(words)]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.6), gridspec_kw={"width_ratios": [1.15, 1]})
    ax1.imshow(weights, cmap="Blues", vmin=0, vmax=1)
    ax1.set_xticks(range(T), labels, rotation=90, fontsize=7)
    ax1.set_yticks(range(T), labels, fontsize=7)
    ax1.add_patch(plt.Rectangle((-0.5, query - 0.5), T, 1, fill=False, edgecolor="crimson", lw=1.5))
    ax1.set_xlabel("key", fontsize=8)
    ax1.set_ylabel("query", fontsize=8)
    ax1.set_title("attention weights (rows sum to 1)", fontsize=9)
    colors = ["crimson" if j == top else "steelblue" for j in range(T)]
    ax2.bar(range(T), row, color=colors)
    ax2.set_xticks(range(T), labels, rotation=90, fontsize=7)
    ax2.set_ylim(0, 1)
    ax2.set_title(f"weights of the query “{words[query]}” (τ = {temperature:.2f})", fontsize=9)
    ax2.tick_params(labelsize=7)
    fig.subplots_adjust(left=0.11, right=0.98, bottom=0.3, top=0.9, wspace=0.25)  # fixed: tight_layout costs ~100 ms
    readout = (f"query “{words[query]}” (position {query}): top-attended word “{words[top]}” "
               f"(position {top}) with weight {row[top]:.3f}; entropy {entropy:.2f} nats "
               f"(uniform over {T} words: {np.log(T):.2f}); temperature {temperature:.2f}"
               f"{', causal mask' if causal else ''}")
    return fig, readout


def attention_explorer(scaled_dot_product_attention, causal_mask):
    """Attention weights over a toy sentence: query word, temperature and a causal-mask switch."""
    controls = {
        "query": widgets.Dropdown(options=[(f"{i}: {w}", i) for i, w in enumerate(SENTENCE)],
                                  value=SENTENCE.index("it"), description="query"),
        "temperature": widgets.FloatLogSlider(value=1.0, base=10, min=-1, max=1, step=0.05,
                                              description="temperature", continuous_update=False),
        "causal": widgets.Checkbox(value=False, description="causal"),
    }
    return Explorer(render_attention, controls,
                    needs={"scaled_dot_product_attention": scaled_dot_product_attention,
                           "causal_mask": causal_mask},
                    height="400px", title="Attention as a soft lookup")


# ------------------------------------------------------------------------ positional encoding

def render_positional_encoding(T, d, position, positional_encoding):
    PE = np.asarray(positional_encoding(T, d), dtype=float)
    if PE.shape != (T, d):
        raise ValueError(f"positional_encoding({T}, {d}) returned shape {PE.shape}, expected {(T, d)}")
    t0 = min(position, T - 1)
    G = PE @ PE.T
    similarity = G[t0]
    # how far PE[t] . PE[t + k] is from depending on the offset k only
    shift_error = max(float(np.max(np.abs(np.diagonal(G, k) - G[0, k]))) for k in range(T))
    others = np.delete(np.arange(T), t0)
    least = int(others[np.argmin(similarity[others])]) if len(others) else t0

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.4))
    ax1.imshow(PE, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
    ax1.axhline(t0, color="k", lw=0.8, ls="--")
    ax1.set_xlabel("feature (even: sin, odd: cos)", fontsize=8)
    ax1.set_ylabel("position t", fontsize=8)
    ax1.set_title(f"PE, T = {T}, d = {d}", fontsize=9)
    ax2.plot(np.arange(T), similarity, ".-", ms=3, lw=1)
    ax2.axvline(t0, color="k", lw=0.8, ls="--")
    ax2.axhline(0, color="gray", lw=0.5)
    ax2.set_xlabel("position t", fontsize=8)
    ax2.set_title(f"similarity PE[{t0}] · PE[t]", fontsize=9)
    for ax in (ax1, ax2):
        ax.tick_params(labelsize=7)
    fig.subplots_adjust(left=0.08, right=0.97, bottom=0.15, top=0.88, wspace=0.3)
    neighbour = (f"PE[{t0}]·PE[{t0 + 1}] = {G[t0, t0 + 1]:.2f}" if t0 + 1 < T
                 else f"PE[{t0}]·PE[{t0 - 1}] = {G[t0, t0 - 1]:.2f}" if t0 > 0 else "no other position")
    readout = (f"T = {T}, d = {d}: ‖PE[{t0}]‖² = {G[t0, t0]:.2f} (d/2 = {d / 2:g}); {neighbour}; "
               f"least similar position {least} ({similarity[least]:.2f}); "
               f"max |PE[t]·PE[t+k] − PE[0]·PE[k]| = {shift_error:.1e}")
    return fig, readout


def positional_encoding_explorer(positional_encoding):
    """Heatmap of the sinusoidal encoding and the dot-product similarity of positions."""
    controls = {
        "T": widgets.IntSlider(value=48, min=4, max=128, description="T", continuous_update=False),
        "d": widgets.IntSlider(value=32, min=2, max=128, description="d", continuous_update=False),
        "position": widgets.IntSlider(value=10, min=0, max=127, description="position t₀",
                                      continuous_update=False),
    }
    return Explorer(render_positional_encoding, controls,
                    needs={"positional_encoding": positional_encoding},
                    height="380px", title="Sinusoidal positional encoding")


# ---------------------------------------------------------------------- Nadaraya-Watson regression

def true_function(x):
    """The regression target of the widget: 2 sin(x) + x^0.8."""
    return 2 * np.sin(x) + np.asarray(x, dtype=float) ** 0.8


def regression_data(n: int = 50, noise: float = 0.5, seed: int = 0):
    """Noisy samples of ``true_function`` at stratified keys in [0, 5]: (keys, values).

    Consecutive keys are at most 0.16 apart, so every query in [keys[0], keys[-1]] has a key
    closer than 0.1: the compact kernels are defined for every bandwidth >= 0.1.
    """
    rng = np.random.default_rng(seed)
    keys = (np.arange(n) + rng.uniform(0.2, 0.8, size=n)) * (5.0 / n)
    values = true_function(keys) + rng.normal(0, noise, size=n)
    return keys, values


def render_nadaraya_watson(bandwidth, kernel, nadaraya_watson):
    keys, values = regression_data()
    grid = np.linspace(keys[0], keys[-1], 120)
    estimate = np.asarray(nadaraya_watson(grid, keys, values, bandwidth, kernel), dtype=float)
    truth = true_function(grid)
    # the attention weights, one call per key with one-hot values: W[:, j] = NW(queries, keys, e_j)
    queries = np.linspace(keys[0], keys[-1], 40)
    eye = np.eye(len(keys))
    weights = np.stack([np.asarray(nadaraya_watson(queries, keys, eye[j], bandwidth, kernel), dtype=float)
                        for j in range(len(keys))], axis=1)

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.4))
    ax1.plot(keys, values, "o", ms=3, color="gray", label="samples (keys, values)")
    ax1.plot(grid, truth, "k--", lw=1, label="true function")
    ax1.plot(grid, estimate, color="crimson", lw=1.8, label="Nadaraya–Watson")
    ax1.legend(fontsize=7, loc="lower left")
    ax1.set_xlabel("x", fontsize=8)
    ax1.set_title(f"{kernel} kernel, bandwidth {bandwidth:.2f}", fontsize=9)
    ax2.imshow(weights, cmap="Reds", aspect="auto", origin="lower",
               extent=(keys[0], keys[-1], queries[0], queries[-1]), vmin=0)
    ax2.set_xlabel("key x_i", fontsize=8)
    ax2.set_ylabel("query x", fontsize=8)
    ax2.set_title("attention weights", fontsize=9)
    for ax in (ax1, ax2):
        ax.tick_params(labelsize=7)
    fig.subplots_adjust(left=0.08, right=0.97, bottom=0.15, top=0.88, wspace=0.3)
    if not np.isfinite(estimate).all():
        return fig, (f"{kernel} kernel, bandwidth {bandwidth:.2f}: the estimate contains nan or inf "
                     f"(is every row of weights normalised, and the gaussian computed stably?)")
    mse = float(np.mean((estimate - truth) ** 2))
    baseline = float(np.mean((values.mean() - truth) ** 2))
    readout = (f"{kernel} kernel, bandwidth {bandwidth:.2f}: MSE {mse:.4f} against the true function "
               f"(the mean of the values scores {baseline:.3f}); largest weight per query on average "
               f"{weights.max(axis=1).mean():.2f}")
    return fig, readout


def nadaraya_watson_explorer(nadaraya_watson):
    """Kernel regression as attention pooling: bandwidth slider and kernel dropdown."""
    controls = {
        "bandwidth": widgets.FloatLogSlider(value=0.5, base=10, min=-1, max=0.5, step=0.05,
                                            description="bandwidth", continuous_update=False),
        "kernel": widgets.Dropdown(options=["gaussian", "boxcar", "triangular", "epanechnikov"],
                                   value="gaussian", description="kernel"),
    }
    return Explorer(render_nadaraya_watson, controls, needs={"nadaraya_watson": nadaraya_watson},
                    height="380px", title="Nadaraya–Watson regression")


# ------------------------------------------------------------- attention maps of a trained model

def render_transformer_attention(layer, head, example, record, scaled_dot_product_attention):
    """``record``: dict with "tokens", "predictions", "targets" (n, T) and per-layer lists
    "Q", "K", "V" of arrays (n, heads, T, d_h) and "weights" (n, heads, T, T) from torch."""
    Q = record["Q"][layer][example, head]
    K = record["K"][layer][example, head]
    V = record["V"][layer][example, head]
    _, weights = scaled_dot_product_attention(Q, K, V)
    weights = np.asarray(weights, dtype=float)
    torch_weights = np.asarray(record["weights"][layer][example, head], dtype=float)
    difference = float(np.max(np.abs(weights - torch_weights)))
    tokens = np.asarray(record["tokens"][example])
    predicted = np.asarray(record["predictions"][example])
    target = np.asarray(record["targets"][example])
    T = len(tokens)
    mirror = float(weights[np.arange(T), T - 1 - np.arange(T)].mean())
    correct = int((predicted == target).sum())

    fig, ax = plt.subplots(figsize=(4.6, 3.9))
    im = ax.imshow(weights, cmap="viridis", vmin=0, vmax=1)
    ax.set_xticks(range(T), [f"{t}\n({j})" for j, t in enumerate(tokens)], fontsize=7)
    ax.set_yticks(range(T), [f"({i}) {p}" for i, p in enumerate(predicted)], fontsize=7)
    ax.set_xlabel("key: input digit (position)", fontsize=8)
    ax.set_ylabel("query: (position) predicted digit", fontsize=8)
    ax.set_title(f"layer {layer + 1}, head {head + 1}", fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04).ax.tick_params(labelsize=7)
    fig.subplots_adjust(left=0.15, right=0.95, bottom=0.14, top=0.9)
    readout = (f"layer {layer + 1}, head {head + 1}, example {example}: input {' '.join(map(str, tokens))} → "
               f"predicted {' '.join(map(str, predicted))} ({correct}/{T} right); mean weight on the "
               f"mirrored position {T - 1} − i: {mirror:.2f}; your weights differ from torch's by at most "
               f"{difference:.1e}")
    return fig, readout


def transformer_attention_explorer(record, scaled_dot_product_attention):
    """Attention maps of the trained transformer: pick the layer, the head and the example."""
    n_layers = len(record["Q"])
    n_examples, n_heads = record["Q"][0].shape[:2]
    controls = {
        "layer": widgets.Dropdown(options=[(f"layer {i + 1}", i) for i in range(n_layers)],
                                  value=n_layers - 1, description="layer"),
        "head": widgets.Dropdown(options=[(f"head {i + 1}", i) for i in range(n_heads)], value=0,
                                 description="head"),
        "example": widgets.IntSlider(value=0, min=0, max=n_examples - 1, description="example",
                                     continuous_update=False),
    }
    render = functools.partial(render_transformer_attention, record=record)
    return Explorer(render, controls,
                    needs={"scaled_dot_product_attention": scaled_dot_product_attention},
                    height="420px", title="Attention maps of the trained transformer")
