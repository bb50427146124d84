"""Data sets that ship with installed packages, or are made here: nothing is downloaded."""
from __future__ import annotations

import functools

import numpy as np


def digits_split(random_state: int = 0):
    """The course recipe's digits split: float32 images (N, 1, 8, 8) scaled to [0, 1], int labels.

    Returns ``(X_train, X_test, y_train, y_test)`` from scikit-learn's bundled digits,
    ``train_test_split(test_size=0.25, random_state=0, stratify=y)``. Made once per process (each call gets
    its own arrays).
    """
    return [part.copy() for part in _digits_split(random_state)]


@functools.lru_cache(maxsize=4)
def _digits_split(random_state: int):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    X = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    y = digits.target.astype(np.int64)
    return train_test_split(X, y, test_size=0.25, random_state=random_state, stratify=y)


def karate_club():
    """Zachary's karate club (bundled with networkx): adjacency (34, 34) float and factions (34,) in {0, 1}."""
    import networkx as nx

    graph = nx.karate_club_graph()
    A = nx.to_numpy_array(graph, nodelist=range(graph.number_of_nodes()), weight=None)
    factions = np.array([0 if graph.nodes[i]["club"] == "Mr. Hi" else 1 for i in graph.nodes])
    return A, factions


def linearly_separable(n: int, margin: float, rng: np.random.Generator, d: int = 2):
    """n points in [-1, 1]^d labelled by a random hyperplane through the origin, none within ``margin`` of it.

    Returns ``(X, y, w_true)`` with ``w_true`` a unit vector and ``y`` in {-1, +1}.
    """
    w_true = rng.standard_normal(d)
    w_true /= np.linalg.norm(w_true)
    points = []
    while len(points) < n:
        x = rng.uniform(-1, 1, size=(4 * n, d))
        keep = np.abs(x @ w_true) >= margin
        points.extend(x[keep])
    X = np.array(points[:n])
    y = np.where(X @ w_true > 0, 1.0, -1.0)
    return X, y, w_true


_ASCII = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-",
                        "\u2026": "...", "\u00b0": " degrees", "\u00df": "ss"})


def language_reference(seed: int = 0) -> dict[str, str]:
    """Python's language reference as plain text (``pydoc_data.topics``, which ships with Python), split for
    language models: ``{"train", "validation", "test"}``, about 80 / 10 / 10 % of its ~355,000 distinct characters.

    The reference's topics (``assert``, ``for``, ``numbers``, ...) are folded to ASCII and put in the order
    of ``np.random.default_rng(seed).permutation`` of their sorted names; a line of 20 characters or more
    (stripped) that an earlier topic already has is dropped (the reference repeats whole sections under
    several topics); the topics are joined with a blank line and cut at 80 % and 90 % of the characters.
    Validation and test text thus come from topics, and lines, the training text does not contain: a model
    judged on them cannot have memorised them. Made once per process (each call gets its own dict).
    """
    return dict(_language_reference(seed))


@functools.lru_cache(maxsize=4)
def _language_reference(seed: int) -> dict[str, str]:
    from pydoc_data.topics import topics

    names = sorted(topics)
    seen, parts = set(), []
    for i in np.random.default_rng(seed).permutation(len(names)):
        lines = []
        for line in topics[names[i]].translate(_ASCII).splitlines():
            key = line.strip()
            if len(key) >= 20:
                if key in seen:
                    continue
                seen.add(key)
            lines.append(line)
        parts.append("\n".join(lines))
    text = "\n\n".join(parts)
    a, b = int(0.8 * len(text)), int(0.9 * len(text))
    return {"train": text[:a], "validation": text[a:b], "test": text[b:]}


@functools.lru_cache(maxsize=8)
def character_pairs(text: str) -> frozenset[str]:
    """The pairs of consecutive characters that occur in ``text`` (made once per process and text)."""
    return frozenset(text[i:i + 2] for i in range(len(text) - 1))
