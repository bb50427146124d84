"""Widgets and helpers of chapter 7 (graph neural networks), all on Zachary's karate club.

Pure render functions ``render_*(**controls, **student_functions) -> (figure, readout)``
and factories returning an :class:`Explorer`:

- ``laplacian_modes_explorer(laplacian)``: the Laplacian's eigenvectors as signals on the
  graph, from low to high frequency (index slider, normalised or not), readout with the
  eigenvalue and the number of edges across which the eigenvector changes sign;
- ``oversmoothing_explorer(normalized_adjacency, dirichlet_energy)``: ``Ahat^k X`` for a
  depth slider, nodes coloured by the degree-normalised feature, and the Dirichlet energy
  against depth (readout: the energy at the chosen depth); a propagation dropdown (plain,
  residual, initial residual as in APPNP) and a PairNorm switch show what the remedies do;
- ``wl_refinement_explorer(wl_colors, wl_distinguishes)``: 1-WL colour refinement on pairs of
  graphs, run jointly with the student's ``wl_colors`` (rounds slider, readout: the two colour
  histograms and the verdict of ``wl_distinguishes``);
- ``karate_gcn_explorer(normalized_adjacency, train_gcn=None)``: a two-layer GCN trained
  semi-supervised with one labelled node per faction, replayed epoch by epoch (readout:
  accuracy).

Helpers: ``karate_graph()`` (adjacency, factions, a spring layout computed once with a fixed
seed), ``train_karate_gcn`` (the default trainer, same recipe as the notebook's demo),
``draw_graph``; the ring-counting data set of section 8.5 as edge lists, ``ring_split(seed)``
(training, validation and test graphs fixed by the seed; no test graph isomorphic to a training one),
``ring_baselines(seed)`` (majority, node count, a bag of nodes on the test graphs) and ``batch_graphs(graphs, index)``
(several graphs as one disjoint graph, with their node features and graph ids).
"""
from __future__ import annotations

import copy
import functools
import hashlib

import ipywidgets as widgets
import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from .explorer import Explorer, cached, frozen, readout
from .picture import LiveFigure, decade_limits, kept_figure

__all__ = [
    "karate_graph", "draw_graph", "train_karate_gcn",
    "render_laplacian_modes", "laplacian_modes_explorer",
    "render_oversmoothing", "oversmoothing_explorer", "PROPAGATIONS",
    "WL_PAIRS", "render_wl_refinement", "wl_refinement_explorer",
    "render_karate_gcn", "karate_gcn_explorer",
    "ring_graph_list", "ring_split", "batch_graphs", "bag_of_nodes", "ring_baselines", "RING_FAMILY",
    "RING_HELD_OUT",
]

LAYOUT_SEED = 7
MAX_DEPTH = 40
GCN_EPOCHS = 100
LABELLED = (0, 33)
# digits as Unicode super- and subscripts: titles in plain text (a new mathtext title costs 10-20 ms to lay out)
_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")

# ------------------------------------------------------------------ data and drawing

@functools.cache
def karate_graph():
    """(A (34, 34) float, factions (34,) in {0, 1}, positions (34, 2)); the layout is computed once."""
    import networkx as nx

    from dlcourse.data import karate_club

    A, factions = karate_club()
    graph = nx.from_numpy_array(A)
    layout = nx.spring_layout(graph, seed=LAYOUT_SEED)
    pos = np.array([layout[i] for i in range(len(A))])
    return frozen((A, factions, pos))


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

def _laplacian_figure() -> LiveFigure:
    A, _, pos = karate_graph()
    live = LiveFigure(Figure(figsize=(8.4, 3.6)))
    ax, ax_spec = live.figure.subplots(1, 2, gridspec_kw={"width_ratios": [1.25, 1]})
    live.ax_spec = ax_spec
    live.nodes = live.changes(draw_graph(ax, A, pos, np.zeros(len(A)), cmap="RdBu_r", vmin=-1, vmax=1))
    live.title = live.changes(ax.set_title(" ", fontsize=9))
    live.spectrum, = ax_spec.plot([], [], ".", color="0.5")
    live.dot, = live.changes(ax_spec.plot([], [], "o", color="C3"))
    ax_spec.set_xlabel("index (low to high frequency)")
    ax_spec.set_ylabel("eigenvalue $\\lambda$")
    ax_spec.set_title("spectrum", fontsize=9)
    live.figure.subplots_adjust(left=0.02, right=0.9, bottom=0.14, top=0.9, wspace=0.25)
    return live


def render_laplacian_modes(index, normalized, *, laplacian, cache=None):
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
    live = kept_figure(cache, _laplacian_figure)
    if live.new_background((bool(normalized), laplacian)):  # the spectrum
        live.spectrum.set_data(np.arange(len(lam)), lam)
        live.ax_spec.set_xlim(-1.5, len(lam) + 0.5)
        span = max(float(lam.max() - lam.min()), 1e-9)
        live.ax_spec.set_ylim(lam.min() - 0.06 * span, lam.max() + 0.06 * span)
    scale = np.abs(u).max() or 1.0
    live.nodes.set_array(u)
    live.nodes.set_clim(-scale, scale)
    name = "normalised Laplacian" if normalized else "Laplacian D - A"
    live.title.set_text(f"eigenvector u{str(index).translate(_SUBSCRIPTS)} of the {name}")
    live.dot.set_data([index], [lam[index]])
    text = readout(f"eigenvector {index} of {len(lam)}: eigenvalue λ = {lam[index]:.4f}; "
                   f"{crossings} of {len(i)} edges join nodes of opposite sign",
                   index=index, eigenvalues=len(lam), eigenvalue=float(lam[index]), crossings=crossings,
                   edges=len(i), normalized=bool(normalized))
    return live, text


def laplacian_modes_explorer(*, laplacian):
    controls = {
        "index": widgets.IntSlider(1, min=0, max=33, step=1, description="index"),
        "normalized": widgets.Checkbox(False, description="normalised"),
    }
    return Explorer(render_laplacian_modes, controls, needs={"laplacian": laplacian},
                    title="The Laplacian's eigenvectors as graph signals")


# ------------------------------------------------------------------ over-smoothing

def _oversmoothing_features():
    return np.random.default_rng(0).standard_normal((34, 2))


PROPAGATIONS = ("plain", "residual", "initial residual")
APPNP_ALPHA = 0.1


def _propagate(Ahat, X0, propagation, pairnorm):
    """Features after 0..MAX_DEPTH propagation steps (no weights), as a list of (M, d) arrays.

    plain: X <- Ahat X; residual: X <- (X + Ahat X) / 2 (a skip connection, rescaled);
    initial residual: X <- (1 - alpha) Ahat X + alpha X0 (APPNP); PairNorm re-centres the
    features and rescales them to the initial mean squared row norm after every step.
    """
    scale0 = np.sqrt(np.mean(np.sum(X0 ** 2, axis=1)))
    X, frames = X0, [X0]
    for _ in range(MAX_DEPTH):
        if propagation == "residual":
            X = 0.5 * (X + Ahat @ X)
        elif propagation == "initial residual":
            X = (1 - APPNP_ALPHA) * (Ahat @ X) + APPNP_ALPHA * X0
        else:
            X = Ahat @ X
        if pairnorm:
            X = X - X.mean(axis=0)
            X = X * (scale0 / max(np.sqrt(np.mean(np.sum(X ** 2, axis=1))), 1e-300))
        frames.append(X)
    return frames


def _oversmoothing_curves(normalized_adjacency, dirichlet_energy, propagation, pairnorm):
    A, _, _ = karate_graph()
    Ahat = np.asarray(normalized_adjacency(A.copy()), dtype=float)
    if Ahat.shape != A.shape:
        raise ValueError(f"normalized_adjacency(A) has shape {Ahat.shape}, expected {A.shape}")
    scale = 1.0 / np.sqrt(1.0 + A.sum(axis=0))     # D~^{-1/2}
    frames = _propagate(Ahat, _oversmoothing_features(), propagation, pairnorm)
    normalised = [float(dirichlet_energy(X * scale[:, None], A.copy())) for X in frames]
    raw = [float(dirichlet_energy(X, A.copy())) for X in frames]
    return frames, normalised, raw, scale


def _oversmoothing_figure() -> LiveFigure:
    """The karate club and the energy axes: node colours, curves and the depth marker change."""
    A, _, pos = karate_graph()
    live = LiveFigure(Figure(figsize=(8.4, 3.6)))
    ax, ax_e = live.ax, live.ax_e = live.figure.subplots(1, 2, gridspec_kw={"width_ratios": [1.25, 1]})
    live.figure.subplots_adjust(left=0.02, right=0.9, bottom=0.14, top=0.9, wspace=0.25)
    live.nodes = live.changes(draw_graph(ax, A, pos, np.zeros(len(A)), cmap="RdBu_r", vmin=-1, vmax=1))
    live.title = live.changes(ax.set_title(" ", fontsize=9))
    ks = np.arange(MAX_DEPTH + 1)
    ax_e.set_yscale("log")
    live.normalised, = live.changes(ax_e.plot(ks, np.ones(len(ks)), "-", color="C0",
                                              label="$E(\\tilde D^{-1/2} X_k)$"))
    live.raw, = live.changes(ax_e.plot(ks, np.ones(len(ks)), "--", color="C1", label="$E(X_k)$"))
    live.dot, = live.changes(ax_e.plot([0], [1], "o", color="C3"))
    ax_e.minorticks_off()
    ax_e.set_xlabel("depth k")
    ax_e.set_title("Dirichlet energy", fontsize=9)
    live.on_top(ax_e.legend(fontsize=8, loc="lower left"))  # over the curves
    return live


def render_oversmoothing(depth, propagation="plain", pairnorm=False, *, normalized_adjacency, dirichlet_energy,
                         cache=None):
    """Propagated features on the karate club and the Dirichlet energy against depth."""
    A, _, pos = karate_graph()
    propagation = propagation if propagation in PROPAGATIONS else "plain"

    def curves(propagation, pairnorm):
        return cached(cache, ("curves", normalized_adjacency, dirichlet_energy, propagation, pairnorm),
                      lambda: _oversmoothing_curves(normalized_adjacency, dirichlet_energy, propagation, pairnorm))

    frames, normalised, raw, scale = curves(propagation, bool(pairnorm))
    depth = int(np.clip(depth, 0, MAX_DEPTH))
    signal = frames[depth][:, 0] * scale
    v0 = np.abs(frames[0][:, 0] * scale).max()
    live = kept_figure(cache, _oversmoothing_figure)
    floor = 1e-300
    # one energy axis for every propagation and PairNorm setting (whole decades): switching keeps it
    settings = [(p, n) for p in PROPAGATIONS for n in (False, True)] if cache is not None else []
    energies = [normalised, raw] + [e for p, n in settings for e in curves(p, n)[1:3]]
    limits = decade_limits(np.maximum(np.concatenate(energies), floor))
    if live.new_background(limits):
        live.ax_e.set_ylim(limits[0] / 2, limits[1] * 2)
    live.nodes.set_array(np.asarray(signal, dtype=float))
    live.nodes.set_clim(-v0, v0)
    k = str(depth)
    label = "Â" + k.translate(_SUPERSCRIPTS) + " X" if propagation == "plain" else "X" + k.translate(_SUBSCRIPTS)
    live.title.set_text(f"first feature of D̃^(−1/2) {label} ({propagation}"  # plain text: mathtext costs
                        f"{', PairNorm' if pairnorm else ''})")                   # ~20 ms per new title
    ks = np.arange(MAX_DEPTH + 1)
    live.normalised.set_data(ks, np.maximum(normalised, floor))
    live.raw.set_data(ks, np.maximum(raw, floor))
    live.dot.set_data([depth], [max(normalised[depth], floor)])
    text = readout(f"depth k = {depth}: Dirichlet energy of the degree-normalised features "
                   f"{normalised[depth]:.4g} ({normalised[depth] / normalised[0]:.2%} of depth 0); "
                   f"raw energy E(X_k) = {raw[depth]:.4g} [{propagation}{', PairNorm' if pairnorm else ''}]",
                   depth=depth, energy=normalised[depth], energy_fraction=normalised[depth] / normalised[0],
                   raw_energy=raw[depth], propagation=propagation, pairnorm=bool(pairnorm))
    return live, text


def oversmoothing_explorer(*, normalized_adjacency, dirichlet_energy):
    controls = {"depth": widgets.IntSlider(0, min=0, max=MAX_DEPTH, step=1, description="depth k"),
                "propagation": widgets.Dropdown(options=list(PROPAGATIONS), value="plain",
                                                description="propagation"),
                "pairnorm": widgets.Checkbox(False, description="PairNorm")}
    return Explorer(render_oversmoothing, controls,
                    needs={"normalized_adjacency": normalized_adjacency,
                           "dirichlet_energy": dirichlet_energy},
                    title="Over-smoothing: repeated propagation on the karate club")


# ------------------------------------------------------------------ WL colour refinement

def _graph(n, edges):
    A = np.zeros((n, n))
    for i, j in edges:
        A[i, j] = A[j, i] = 1.0
    return A


def _molecule(copies):
    """``copies`` disjoint copies of two triangles and one 3-node chain."""
    base = _graph(9, [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (6, 7), (7, 8)])
    return np.kron(np.eye(copies), base)


WL_PAIRS = {
    "6-cycle vs two triangles": (
        _graph(6, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0)]),
        _graph(6, [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3)])),
    "6-path vs triangle + 3-path": (
        _graph(6, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]),
        _graph(6, [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5)])),
    "star vs triangle + isolated node": (
        _graph(4, [(0, 1), (0, 2), (0, 3)]),
        _graph(4, [(1, 2), (2, 3), (3, 1)])),
    "one vs two copies of a molecule": (_molecule(1), _molecule(2)),
}
WL_TITLES = {
    "6-cycle vs two triangles": ("6-cycle", "two triangles"),
    "6-path vs triangle + 3-path": ("6-path", "triangle + 3-path"),
    "star vs triangle + isolated node": ("star", "triangle + isolated node"),
    "one vs two copies of a molecule": ("one copy (2 rings, 1 chain)", "two copies"),
}


@functools.cache
def _wl_layout(pair, side):
    """Graph ``side`` (0 or 1) of ``pair``: each connected component laid out on its own (Kamada-Kawai),
    components side by side in a grid."""
    import networkx as nx
    A = WL_PAIRS[pair][side]
    graph = nx.from_numpy_array(A)
    components = sorted((sorted(c) for c in nx.connected_components(graph)), key=lambda c: c[0])
    columns = int(np.ceil(np.sqrt(len(components))))
    pos = np.zeros((len(A), 2))
    for k, nodes in enumerate(components):
        if len(nodes) == 1:
            local = np.zeros((1, 2))
        else:
            layout = nx.kamada_kawai_layout(graph.subgraph(nodes))
            local = np.array([layout[i] for i in nodes], dtype=float)
            local -= local.mean(axis=0)
            local /= max(np.abs(local).max(), 1e-9) * 2.6
        pos[nodes] = local + np.array([k % columns, -(k // columns)], dtype=float)
    return frozen(pos)


def _wl_result(wl_colors, wl_distinguishes, pair, rounds):
    A1, A2 = WL_PAIRS[pair]
    M1 = len(A1)
    union = np.zeros((M1 + len(A2),) * 2)
    union[:M1, :M1], union[M1:, M1:] = A1, A2
    colours = np.asarray(wl_colors(union.copy(), rounds)).astype(int)
    if colours.shape != (len(union),):
        raise ValueError(f"wl_colors returned shape {colours.shape}, expected ({len(union)},)")
    verdict = bool(wl_distinguishes(A1.copy(), A2.copy(), rounds))
    return colours, verdict


def _wl_figure(pair) -> LiveFigure:
    """The two graphs of ``pair``, drawn once; the node colours change."""
    live = LiveFigure(Figure(figsize=(7.6, 3.3)))
    axes = live.figure.subplots(1, 2)
    live.figure.subplots_adjust(left=0.02, right=0.98, bottom=0.04, top=0.9, wspace=0.1)
    live.scatters = []
    for side, (ax, A, name) in enumerate(zip(axes, WL_PAIRS[pair], WL_TITLES[pair])):
        live.scatters.append(live.changes(draw_graph(ax, A, _wl_layout(pair, side), np.zeros(len(A)), cmap="tab10",
                                                     vmin=0, vmax=9, size=110)))
        ax.set_title(name, fontsize=9)
    return live


def render_wl_refinement(pair, rounds, *, wl_colors, wl_distinguishes, cache=None):
    """Joint 1-WL colours of a pair of graphs after ``rounds`` rounds (the student's ``wl_colors``)."""
    pair = pair if pair in WL_PAIRS else next(iter(WL_PAIRS))
    rounds = int(rounds)
    colours, verdict = cached(cache, ("wl", wl_colors, wl_distinguishes, pair, rounds),
                              lambda: _wl_result(wl_colors, wl_distinguishes, pair, rounds))
    A1, A2 = WL_PAIRS[pair]
    M1 = len(A1)
    n = int(colours.max()) + 1 if len(colours) else 1
    h1 = np.bincount(colours[:M1], minlength=n)
    h2 = np.bincount(colours[M1:], minlength=n)
    live = kept_figure(cache, lambda: _wl_figure(pair), key=pair)  # one figure per pair of graphs
    live.new_background(pair)
    for scatter, c in zip(live.scatters, (colours[:M1], colours[M1:])):
        scatter.set_array(np.asarray(c % 10, dtype=float))
    same = np.array_equal(h1, h2)
    text = readout(f"round {rounds}: {n} colour{'s' if n != 1 else ''}; histograms {h1.tolist()} and {h2.tolist()} "
                   f"are {'equal' if same else 'different'}; wl_distinguishes → {verdict}",
                   pair=pair, rounds=rounds, colours=n, histogram_1=h1.tolist(), histogram_2=h2.tolist(),
                   same_histograms=bool(same), distinguishes=verdict)
    return live, text


def wl_refinement_explorer(*, wl_colors, wl_distinguishes):
    controls = {"pair": widgets.Dropdown(options=list(WL_PAIRS), value="6-cycle vs two triangles",
                                         description="graphs", layout=widgets.Layout(width="340px")),
                "rounds": widgets.IntSlider(0, min=0, max=5, step=1, description="rounds")}
    return Explorer(render_wl_refinement, controls,
                    needs={"wl_colors": wl_colors, "wl_distinguishes": wl_distinguishes},
                    height="330px", title="1-WL colour refinement, run jointly on two graphs")


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


def _trained(train_gcn, Ahat, factions, epochs):
    history = train_gcn(Ahat, np.array(factions), list(LABELLED), epochs=epochs)
    probs = np.asarray(history["probs"], dtype=float)
    if probs.shape[0] != epochs + 1:
        raise ValueError(f"train_gcn returned {probs.shape[0]} snapshots, expected epochs + 1 = {epochs + 1}")
    return frozen((probs, np.asarray(history["loss"], dtype=float)))


def _karate_gcn_figure(factions) -> LiveFigure:
    A, _, pos = karate_graph()
    live = LiveFigure(Figure(figsize=(8.4, 3.6)))
    ax, ax_c = live.figure.subplots(1, 2, gridspec_kw={"width_ratios": [1.25, 1]})
    live.ax_c = ax_c
    draw_graph(ax, A, pos, np.zeros(len(A)), cmap="coolwarm", vmin=0.0, vmax=1.0, markers=factions, outline=LABELLED)
    live.nodes = live.changes(list(ax.collections[1:]))  # circles (faction 0), squares (faction 1)
    live.crosses = live.changes(ax.scatter(np.zeros(0), np.zeros(0), marker="x", c="red", s=70 * 0.6,
                                           linewidths=1.5, zorder=3))
    live.title = live.changes(ax.set_title(" ", fontsize=9))
    live.accuracy, = ax_c.plot([], [], color="C2", label="accuracy (34 nodes)")
    ax_c.set_ylim(0, 1.05)
    ax_c.set_xlabel("epoch")
    live.ax_l = ax_l = ax_c.twinx()
    ax_l.set_yscale("log")
    live.loss, = ax_l.plot([], [], color="C0", label="training loss")
    ax_l.set_ylabel("loss (2 labelled nodes)", fontsize=8)
    live.epoch = live.changes(ax_c.axvline(0, color="C3", lw=1))
    handles = [live.accuracy, live.loss]
    ax_c.legend(handles, [h.get_label() for h in handles], fontsize=8, loc="center right")
    live.figure.subplots_adjust(left=0.02, right=0.9, bottom=0.14, top=0.9, wspace=0.25)
    return live


def render_karate_gcn(epoch, *, normalized_adjacency, train_gcn=None, epochs=GCN_EPOCHS, cache=None):
    """Predictions of the semi-supervised GCN after ``epoch`` epochs (training cached per Ahat)."""
    A, factions, pos = karate_graph()
    Ahat = np.asarray(normalized_adjacency(A.copy()), dtype=float)
    if Ahat.shape != A.shape:
        raise ValueError(f"normalized_adjacency(A) has shape {Ahat.shape}, expected {A.shape}")
    train_gcn = train_gcn or train_karate_gcn
    key = ("gcn", train_gcn, hashlib.sha1(np.ascontiguousarray(Ahat).tobytes()).hexdigest(), int(epochs))
    probs, losses = cached(cache, key, lambda: _trained(train_gcn, Ahat, factions, int(epochs)))
    epoch = int(np.clip(epoch, 0, epochs))
    p1 = probs[epoch][:, 1]
    predicted = probs[epoch].argmax(axis=1)
    wrong = predicted != factions
    accuracy = float(np.mean(~wrong))
    unlabelled = np.setdiff1d(np.arange(len(A)), LABELLED)
    correct_u = int(np.sum(predicted[unlabelled] == factions[unlabelled]))
    accuracies = (probs.argmax(axis=2) == factions[None, :]).mean(axis=1)

    live = kept_figure(cache, lambda: _karate_gcn_figure(factions))
    if live.new_background(key):  # the training curves
        ks = np.arange(len(losses))
        live.accuracy.set_data(ks, accuracies)
        live.loss.set_data(ks, losses)
        live.ax_c.set_xlim(-0.02 * len(ks), 1.02 * len(ks))
        live.ax_l.set_ylim(min(losses) / 1.5, max(losses) * 1.5)
    for nodes, faction in zip(live.nodes, (0, 1)):
        nodes.set_array(p1[factions == faction])
    live.crosses.set_offsets(pos[wrong].reshape(-1, 2))
    live.title.set_text(f"epoch {epoch}: P(administrator's faction)")
    live.epoch.set_xdata([epoch, epoch])
    correct = int(np.sum(~wrong))
    text = readout(f"epoch {epoch}: accuracy {accuracy:.1%} ({correct}/{len(A)}); "
                   f"unlabelled members {correct_u}/{len(unlabelled)} correct; training loss {losses[epoch]:.4f}",
                   epoch=epoch, accuracy=accuracy, correct=correct, nodes=len(A), unlabelled_correct=correct_u,
                   unlabelled=len(unlabelled), loss=float(losses[epoch]))
    return live, text


def karate_gcn_explorer(*, normalized_adjacency, train_gcn=None, epochs=GCN_EPOCHS):
    """The epoch slider over a GCN trained with ``train_gcn`` (default ``train_karate_gcn``)."""
    controls = {"epoch": widgets.IntSlider(0, min=0, max=int(epochs), step=1, description="epoch")}
    needs = {"normalized_adjacency": normalized_adjacency, "train_gcn": train_gcn or train_karate_gcn}
    return Explorer(functools.partial(render_karate_gcn, epochs=int(epochs)), controls, needs=needs,
                    title="A GCN trained with one labelled member per faction")


# ------------------------------------------------------------------ ring counting on edge lists (section 8.5)

RING_BASES = ((1, 1), (1, 2), (2, 1), (1, 3), (3, 1))
RING_SPLIT = {"train": 300, "validation": 100, "test": 200}
# (triangles, chains) of the training family, k (p, q) for k = 1..4: 20 pairs; the pair fixes a graph up to isomorphism
RING_FAMILY = tuple(sorted({(k * p, k * q) for p, q in RING_BASES for k in range(1, 5)}))
# the test graphs' pairs: 1..5 triangles and 1..8 chains, none of the family's (27 pairs): no test graph is
# isomorphic to a training or validation graph
RING_HELD_OUT = tuple((t, c) for t in range(1, 6) for c in range(1, 9) if (t, c) not in RING_FAMILY)


def ring_graph_list(n, rng, counts=None):
    """``n`` graphs as ``(edge_index, n_nodes)`` and their labels (n,) in {0, 1}.

    Graph: k copies (k = 1..4, ``rng.integers(1, 5)``) of a base of p triangles and q 3-node chains,
    (p, q) drawn as ``RING_BASES[rng.integers(5)]`` first; nodes renumbered by ``rng.permutation(M)``
    (node j of the construction becomes node ``perm[j]``); ``edge_index`` (2, E) holds every edge in both
    directions. Label 1 when the graph has at least three triangles (k p >= 3). With ``counts``, a list of
    (triangles, chains) pairs, each graph's pair is ``counts[rng.integers(len(counts))]`` instead (no base, no k)."""
    graphs, labels = [], []
    for _ in range(n):
        if counts is None:
            p, q = RING_BASES[rng.integers(len(RING_BASES))]
            k = int(rng.integers(1, 5))
            rings, chains = k * p, k * q
        else:
            rings, chains = counts[rng.integers(len(counts))]
        M = 3 * (rings + chains)
        src, dst = [], []
        for i in range(rings + chains):
            a = 3 * i
            src += [a, a + 1]
            dst += [a + 1, a + 2]
            if i < rings:
                src.append(a + 2)
                dst.append(a)
        perm = rng.permutation(M)
        s, t = perm[np.array(src)], perm[np.array(dst)]
        graphs.append((np.vstack([np.r_[s, t], np.r_[t, s]]).astype(np.int64), M))
        labels.append(int(rings >= 3))
    return graphs, np.array(labels, dtype=np.int64)


def ring_split(seed=0):
    """The ring-counting data set: ``{"train", "validation", "test"}``, each ``(graphs, labels)``.

    One ``rng = np.random.default_rng(seed)`` draws 300 + 100 + 200 graphs with ``ring_graph_list``, in
    that order (training first); the test graphs' (triangles, chains) pairs are ``RING_HELD_OUT``, which no
    training or validation graph has, so no test graph is isomorphic to one of them. About two graphs in three
    have at least three rings. Made once per process
    (each call gets its own copy)."""
    return copy.deepcopy(_ring_split(seed))


@functools.lru_cache(maxsize=4)
def _ring_split(seed):
    rng = np.random.default_rng(seed)
    out = {}
    for part, n in RING_SPLIT.items():
        out[part] = ring_graph_list(n, rng, counts=RING_HELD_OUT if part == "test" else None)
    return out


def batch_graphs(graphs, index):
    """The graphs ``graphs[i]`` for ``i`` in ``index`` (in that order) as one disjoint graph.

    Returns ``(edge_index, graph_ids, X)``: the edges of graph g shifted by the number of nodes of the
    graphs before it, ``graph_ids`` (M,) the position in ``index`` of each node's graph, and the node
    features ``X`` (M, 2), the one-hot degree: column 0 for degree 1, column 1 for degree 2 (every node of
    the ring data set has one or the other)."""
    edges, ids, offset = [], [], 0
    for g, i in enumerate(index):
        edge_index, n_nodes = graphs[int(i)]
        edges.append(np.asarray(edge_index, dtype=np.int64).reshape(2, -1) + offset)
        ids.append(np.full(n_nodes, g, dtype=np.int64))
        offset += n_nodes
    edge_index = np.hstack(edges) if edges else np.zeros((2, 0), dtype=np.int64)
    degree = np.bincount(edge_index[1], minlength=offset)
    X = np.stack([degree == 1, degree == 2], axis=1).astype(np.float64)
    graph_ids = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
    return edge_index, graph_ids, X


def bag_of_nodes(graphs):
    """Each graph as the sum of its nodes' features (those of ``batch_graphs``): (number of degree-1 nodes, number
    of degree-2 nodes), float array (n_graphs, 2). A bag of nodes: it ignores who is connected to whom."""
    out = np.zeros((len(graphs), 2))
    for g, (edge_index, n_nodes) in enumerate(graphs):
        degree = np.bincount(np.asarray(edge_index)[1], minlength=n_nodes)
        out[g] = [np.sum(degree == 1), np.sum(degree == 2)]
    return out


def ring_baselines(seed=0):
    """The first baselines of the ring data's test graphs, fitted on its training graphs: ``majority`` (the test
    graphs' more frequent label), ``node_count`` (the best rule "at least t nodes" on the training graphs) and
    ``bag_of_nodes`` (logistic regression, scikit-learn's defaults, on ``bag_of_nodes`` of each graph): test
    accuracies. Made once per process."""
    return dict(_ring_baselines(seed))


@functools.lru_cache(maxsize=4)
def _ring_baselines(seed):
    from sklearn.linear_model import LogisticRegression

    data = _ring_split(seed)
    (train, y_train), (test, y_test) = data["train"], data["test"]
    sizes = np.array([n for _, n in train])
    cut = max(range(1, 50), key=lambda t: np.mean((sizes >= t) == y_train))
    node_count = float(np.mean((np.array([n for _, n in test]) >= cut) == y_test))
    model = LogisticRegression(max_iter=5000).fit(bag_of_nodes(train), y_train)
    bag = float(np.mean(model.predict(bag_of_nodes(test)) == y_test))
    majority = float(max(np.mean(y_test == 1), np.mean(y_test == 0)))
    return (("majority", majority), ("node_count", node_count), ("bag_of_nodes", bag))
