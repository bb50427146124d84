"""Widgets and helpers of chapter 7 (graph neural networks), all on Zachary's karate club.

Pure render functions ``render_*(**controls, **student_functions) -> (figure, readout)``
and factories returning an :class:`Explorer`:

- ``laplacian_modes_explorer(laplacian)``: the Laplacian's eigenvectors as signals on the
  graph, from low to high frequency (index slider, normalised or not), readout with the
  eigenvalue and the number of edges across which the eigenvector changes sign;
- ``oversmoothing_explorer(normalized_adjacency, dirichlet_energy)``: ``Ahat^k X`` for a
  depth slider, nodes coloured by the degree-normalised feature, and the Dirichlet energy
  against depth (readout: the energy at the chosen depth);
- ``karate_gcn_explorer(normalized_adjacency, train_gcn=None)``: a two-layer GCN trained
  semi-supervised with one labelled node per faction, replayed epoch by epoch (readout:
  accuracy).

Helpers: ``karate_graph()`` (adjacency, factions, a spring layout computed once with a fixed
seed), ``train_karate_gcn`` (the default trainer, same recipe as the notebook's demo),
``draw_graph``.
"""
from __future__ import annotations

import functools
import hashlib

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import LineCollection

from .explorer import Explorer

__all__ = [
    "karate_graph", "draw_graph", "train_karate_gcn",
    "render_laplacian_modes", "laplacian_modes_explorer",
    "render_oversmoothing", "oversmoothing_explorer",
    "render_karate_gcn", "karate_gcn_explorer",
]

LAYOUT_SEED = 7
MAX_DEPTH = 40
GCN_EPOCHS = 100
LABELLED = (0, 33)

# ------------------------------------------------------------------ data and drawing

_KARATE = None


def karate_graph():
    """(A (34, 34) float, factions (34,) in {0, 1}, positions (34, 2)); the layout is computed once."""
    global _KARATE
    if _KARATE is None:
        import networkx as nx
        from dlcourse.data import karate_club

        A, factions = karate_club()
        graph = nx.from_numpy_array(A)
        layout = nx.spring_layout(graph, seed=LAYOUT_SEED)
        pos = np.array([layout[i] for i in range(len(A))])
        A.setflags(write=False)
        factions.setflags(write=False)
        pos.setflags(write=False)
        _KARATE = (A, factions, pos)
    return _KARATE


def _edges(A):
    i, j = np.nonzero(np.triu(A, 1))
    return i, j


def draw_graph(ax, A, pos, values, *, cmap="RdBu_r", vmin=None, vmax=None, size=70,
               markers=None, outline=None, crosses=None):
    """Nodes at ``pos`` coloured by ``values``, edges as thin grey lines; returns the scatter(s).

    ``markers`` (M,) of 0/1 draws class 0 as circles and class 1 as squares; ``outline`` lists
    nodes drawn with a thick black edge; ``crosses`` is a boolean mask of nodes marked with a red x.
    """
    i, j = _edges(A)
    ax.add_collection(LineCollection(np.stack([pos[i], pos[j]], axis=1), colors="0.75",
                                     linewidths=0.7, zorder=1))
    M = len(A)
    groups = [(np.ones(M, bool), "o")] if markers is None else [
        (np.asarray(markers) == 0, "o"), (np.asarray(markers) == 1, "s")]
    linewidths = np.full(M, 0.5)
    if outline is not None:
        linewidths[list(outline)] = 2.5
    out = None
    for mask, marker in groups:
        out = ax.scatter(pos[mask, 0], pos[mask, 1], c=np.asarray(values)[mask], cmap=cmap,
                         vmin=vmin, vmax=vmax, s=size, marker=marker, edgecolors="k",
                         linewidths=linewidths[mask], zorder=2)
    if crosses is not None and np.any(crosses):
        ax.scatter(pos[crosses, 0], pos[crosses, 1], marker="x", c="red", s=size * 0.6,
                   linewidths=1.5, zorder=3)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_aspect("equal")
    for side in ax.spines.values():
        side.set_visible(False)
    return out


# ------------------------------------------------------------------ Laplacian eigenvectors

def render_laplacian_modes(index, normalized, laplacian):
    """Eigenvector ``index`` (ascending eigenvalue) of ``laplacian(A, normalized)`` on the karate club."""
    A, _, pos = karate_graph()
    L = np.asarray(laplacian(A.copy(), normalized=bool(normalized)), dtype=float)
    if L.shape != A.shape:
        raise ValueError(f"laplacian(A) has shape {L.shape}, expected {A.shape}")
    lam, U = np.linalg.eigh((L + L.T) / 2)
    index = int(np.clip(index, 0, len(A) - 1))
    u = U[:, index]
    k = np.argmax(np.abs(u))
    u = u * (1.0 if u[k] >= 0 else -1.0)          # a fixed sign: largest entry positive
    i, j = _edges(A)
    crossings = int(np.sum(u[i] * u[j] < -1e-12))
    fig, (ax, ax_spec) = plt.subplots(1, 2, figsize=(8.4, 3.6), gridspec_kw={"width_ratios": [1.25, 1]})
    scale = np.abs(u).max() or 1.0
    draw_graph(ax, A, pos, u, cmap="RdBu_r", vmin=-scale, vmax=scale)
    name = "normalised Laplacian" if normalized else "Laplacian D - A"
    ax.set_title(f"eigenvector $u_{{{index}}}$ of the {name}", fontsize=9)
    ax_spec.plot(np.arange(len(lam)), lam, ".", color="0.5")
    ax_spec.plot([index], [lam[index]], "o", color="C3")
    ax_spec.set_xlabel("index (low to high frequency)")
    ax_spec.set_ylabel("eigenvalue $\\lambda$")
    ax_spec.set_title("spectrum", fontsize=9)
    fig.subplots_adjust(left=0.02, right=0.9, bottom=0.14, top=0.9, wspace=0.25)
    text = (f"eigenvector {index} of {len(lam)}: eigenvalue λ = {lam[index]:.4f}; "
            f"{crossings} of {len(i)} edges join nodes of opposite sign")
    return fig, text


def laplacian_modes_explorer(laplacian):
    controls = {
        "index": widgets.IntSlider(1, min=0, max=33, step=1, description="index"),
        "normalized": widgets.Checkbox(False, description="normalised"),
    }
    return Explorer(render_laplacian_modes, controls, needs={"laplacian": laplacian},
                    title="The Laplacian's eigenvectors as graph signals")


# ------------------------------------------------------------------ over-smoothing

def _oversmoothing_features():
    return np.random.default_rng(0).standard_normal((34, 2))


def render_oversmoothing(depth, normalized_adjacency, dirichlet_energy):
    """``Ahat^depth X`` on the karate club and the Dirichlet energy against depth."""
    A, _, pos = karate_graph()
    Ahat = np.asarray(normalized_adjacency(A.copy()), dtype=float)
    if Ahat.shape != A.shape:
        raise ValueError(f"normalized_adjacency(A) has shape {Ahat.shape}, expected {A.shape}")
    scale = 1.0 / np.sqrt(1.0 + A.sum(axis=0))     # D~^{-1/2}
    depth = int(np.clip(depth, 0, MAX_DEPTH))
    X = _oversmoothing_features()
    normalised, raw, frames = [], [], []
    for _ in range(MAX_DEPTH + 1):
        frames.append(X)
        normalised.append(float(dirichlet_energy(X * scale[:, None], A.copy())))
        raw.append(float(dirichlet_energy(X, A.copy())))
        X = Ahat @ X
    signal = frames[depth][:, 0] * scale
    v0 = np.abs(frames[0][:, 0] * scale).max()
    fig, (ax, ax_e) = plt.subplots(1, 2, figsize=(8.4, 3.6), gridspec_kw={"width_ratios": [1.25, 1]})
    draw_graph(ax, A, pos, signal, cmap="RdBu_r", vmin=-v0, vmax=v0)
    ax.set_title(f"first feature of $\\tilde D^{{-1/2}}\\hat A^{{{depth}}} X$", fontsize=9)
    ks = np.arange(MAX_DEPTH + 1)
    floor = 1e-300
    ax_e.semilogy(ks, np.maximum(normalised, floor), "-", color="C0",
                  label="$E(\\tilde D^{-1/2}\\hat A^k X)$")
    ax_e.semilogy(ks, np.maximum(raw, floor), "--", color="C1", label="$E(\\hat A^k X)$")
    ax_e.plot([depth], [max(normalised[depth], floor)], "o", color="C3")
    ax_e.set_xlabel("depth k")
    ax_e.set_title("Dirichlet energy", fontsize=9)
    ax_e.legend(fontsize=8, loc="lower left")
    fig.subplots_adjust(left=0.02, right=0.9, bottom=0.14, top=0.9, wspace=0.25)
    text = (f"depth k = {depth}: Dirichlet energy of the degree-normalised features "
            f"{normalised[depth]:.4g} ({normalised[depth] / normalised[0]:.2%} of depth 0); "
            f"raw energy E(Ahat^k X) = {raw[depth]:.4g}")
    return fig, text


def oversmoothing_explorer(normalized_adjacency, dirichlet_energy):
    controls = {"depth": widgets.IntSlider(0, min=0, max=MAX_DEPTH, step=1, description="depth k")}
    return Explorer(render_oversmoothing, controls,
                    needs={"normalized_adjacency": normalized_adjacency,
                           "dirichlet_energy": dirichlet_energy},
                    title="Over-smoothing: repeated GCN propagation on the karate club")


# ------------------------------------------------------------------ semi-supervised GCN

def train_karate_gcn(Ahat, labels, labelled, epochs=GCN_EPOCHS, hidden=16, lr=0.01, seed=0):
    """The notebook's recipe: softmax(Ahat relu(Ahat X W0) W1), X = I, cross-entropy on ``labelled``.

    Returns {"probs": (epochs + 1, M, c), "loss": (epochs + 1,)}; entry e is after e epochs of Adam.
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(seed)
        M, c = len(Ahat), int(np.max(labels)) + 1
        At = torch.tensor(np.asarray(Ahat), dtype=torch.float32)
        X = torch.eye(M)
        W0 = torch.nn.Parameter(torch.nn.init.xavier_uniform_(torch.empty(M, hidden)))
        W1 = torch.nn.Parameter(torch.nn.init.xavier_uniform_(torch.empty(hidden, c)))
        optimizer = torch.optim.Adam([W0, W1], lr=lr, weight_decay=5e-4)
        idx = torch.as_tensor(np.asarray(labelled))
        targets = torch.as_tensor(np.array(labels))[idx]
        probs, losses = [], []
        for epoch in range(epochs + 1):
            logits = At @ torch.relu(At @ X @ W0) @ W1
            loss = torch.nn.functional.cross_entropy(logits[idx], targets)
            probs.append(torch.softmax(logits, dim=1).detach().numpy())
            losses.append(loss.item())
            if epoch < epochs:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    finally:
        torch.set_num_threads(threads)
    return {"probs": np.stack(probs), "loss": np.array(losses)}


_GCN_CACHE: dict = {}


def _trained(train_gcn, Ahat, factions, epochs):
    key = (id(train_gcn), hashlib.sha1(np.ascontiguousarray(Ahat).tobytes()).hexdigest(), epochs)
    if key not in _GCN_CACHE:
        history = train_gcn(Ahat, np.array(factions), list(LABELLED), epochs=epochs)
        probs = np.asarray(history["probs"], dtype=float)
        if probs.shape[0] != epochs + 1:
            raise ValueError(f"train_gcn returned {probs.shape[0]} snapshots, expected epochs + 1 = {epochs + 1}")
        if len(_GCN_CACHE) > 8:
            _GCN_CACHE.clear()
        _GCN_CACHE[key] = (train_gcn, probs, np.asarray(history["loss"], dtype=float))
    return _GCN_CACHE[key][1:]


def render_karate_gcn(epoch, normalized_adjacency, train_gcn=None, epochs=GCN_EPOCHS):
    """Predictions of the semi-supervised GCN after ``epoch`` epochs (training cached per Ahat)."""
    A, factions, pos = karate_graph()
    Ahat = np.asarray(normalized_adjacency(A.copy()), dtype=float)
    if Ahat.shape != A.shape:
        raise ValueError(f"normalized_adjacency(A) has shape {Ahat.shape}, expected {A.shape}")
    probs, losses = _trained(train_gcn or train_karate_gcn, Ahat, factions, int(epochs))
    epoch = int(np.clip(epoch, 0, epochs))
    p1 = probs[epoch][:, 1]
    predicted = probs[epoch].argmax(axis=1)
    wrong = predicted != factions
    accuracy = float(np.mean(~wrong))
    unlabelled = np.setdiff1d(np.arange(len(A)), LABELLED)
    correct_u = int(np.sum(predicted[unlabelled] == factions[unlabelled]))
    accuracies = (probs.argmax(axis=2) == factions[None, :]).mean(axis=1)

    fig, (ax, ax_c) = plt.subplots(1, 2, figsize=(8.4, 3.6), gridspec_kw={"width_ratios": [1.25, 1]})
    draw_graph(ax, A, pos, p1, cmap="coolwarm", vmin=0.0, vmax=1.0, markers=factions,
               outline=LABELLED, crosses=wrong)
    ax.set_title(f"epoch {epoch}: P(administrator's faction)", fontsize=9)
    ks = np.arange(len(losses))
    ax_c.plot(ks, accuracies, color="C2", label="accuracy (34 nodes)")
    ax_c.set_ylim(0, 1.05)
    ax_c.set_xlabel("epoch")
    ax_l = ax_c.twinx()
    ax_l.semilogy(ks, losses, color="C0", label="training loss")
    ax_l.set_ylabel("loss (2 labelled nodes)", fontsize=8)
    ax_c.axvline(epoch, color="C3", lw=1)
    handles = ax_c.get_lines()[:1] + ax_l.get_lines()[:1]
    ax_c.legend(handles, [h.get_label() for h in handles], fontsize=8, loc="center right")
    fig.subplots_adjust(left=0.02, right=0.9, bottom=0.14, top=0.9, wspace=0.25)
    text = (f"epoch {epoch}: accuracy {accuracy:.1%} ({int(np.sum(~wrong))}/{len(A)}); "
            f"unlabelled members {correct_u}/{len(unlabelled)} correct; training loss {losses[epoch]:.4f}")
    return fig, text


def karate_gcn_explorer(normalized_adjacency, train_gcn=None, epochs=GCN_EPOCHS):
    """The epoch slider over a GCN trained with ``train_gcn`` (default ``train_karate_gcn``)."""
    controls = {"epoch": widgets.IntSlider(0, min=0, max=int(epochs), step=1, description="epoch")}
    needs = {"normalized_adjacency": normalized_adjacency, "train_gcn": train_gcn or train_karate_gcn}
    return Explorer(functools.partial(render_karate_gcn, epochs=int(epochs)), controls, needs=needs,
                    title="A GCN trained with one labelled member per faction")
