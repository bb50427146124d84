"""Widgets of ch07_gnn: driven with the reference solutions, and with unfinished (stub) functions."""
import numpy as np

from dlcourse.widgets import ch07_gnn as ch07
from tests.helpers import (
    assert_each_missing_is_named,
    assert_live_through_every_control,
    build,
    counting,
    missing_function_test,
    move,
)


def test_karate_graph_is_fixed():
    A, factions, pos = ch07.karate_graph()
    assert A.shape == (34, 34) and factions.shape == (34,) and pos.shape == (34, 2)
    assert ch07.karate_graph()[2] is pos  # the layout is computed once


def test_laplacian_modes(ref):
    explorer = build(ch07.laplacian_modes_explorer, ref)
    first = explorer.readout.value
    assert "eigenvector 1 of 34" in first and "eigenvalue" in first
    low = explorer.values
    assert low["edges"] == 78
    explorer.controls["index"].value = 0
    assert abs(explorer.values["eigenvalue"]) < 1e-9
    assert explorer.values["crossings"] == 0 and explorer.values["edges"] == 78  # the constant vector
    top = move(explorer, index=33)
    assert top != first
    assert explorer.values["eigenvalue"] > low["eigenvalue"]
    assert explorer.values["crossings"] > low["crossings"] and explorer.values["edges"] == 78
    explorer.controls["normalized"].value = True
    assert explorer.values["eigenvalue"] <= 2.0 + 1e-9
    assert explorer.last_figure is not None


def test_laplacian_modes_stub(ref):
    assert_each_missing_is_named(ch07.laplacian_modes_explorer, ref, controls={"index": 5})


def test_oversmoothing(ref):
    explorer = build(ch07.oversmoothing_explorer, ref)
    first = explorer.readout.value
    assert "depth k = 0" in first and "of depth 0" in first
    assert explorer.values["energy_fraction"] == 1.0
    e0 = explorer.values["energy"]
    later = move(explorer, depth=10)
    assert later != first and "depth k = 10" in later
    e10 = explorer.values["energy"]
    assert e10 < 0.01 * e0  # over-smoothing: the energy collapses
    explorer.controls["depth"].value = 40
    assert explorer.values["energy"] < e10


test_oversmoothing_stub = missing_function_test(ch07.oversmoothing_explorer)


def test_karate_gcn(ref):
    explorer = build(ch07.karate_gcn_explorer, ref)
    first = explorer.readout.value
    assert first.startswith("epoch 0:") and "accuracy" in first
    first_loss = explorer.values["loss"]
    last = move(explorer, epoch=ch07.GCN_EPOCHS)
    assert last != first
    assert explorer.values["accuracy"] >= 0.90
    assert explorer.values["loss"] < first_loss


def test_karate_gcn_with_custom_trainer(ref):
    calls = []

    def train(Ahat, labels, labelled, epochs):
        calls.append(np.array(Ahat))
        probs = np.tile(np.eye(2)[np.asarray(labels)], (epochs + 1, 1, 1)).astype(float)
        return {"probs": probs, "loss": np.linspace(1.0, 0.1, epochs + 1)}

    explorer = ch07.karate_gcn_explorer(normalized_adjacency=ref.normalized_adjacency, train_gcn=train,
                                        epochs=5)
    assert "accuracy" in explorer.readout.value and explorer.values["accuracy"] == 1.0
    explorer.controls["epoch"].value = 3
    assert explorer.readout.value.startswith("epoch 3:")
    assert len(calls) == 1  # trained once, replayed afterwards
    np.testing.assert_allclose(calls[0], ref.normalized_adjacency(ch07.karate_graph()[0]))


def test_karate_gcn_stub(ref):
    assert_each_missing_is_named(ch07.karate_gcn_explorer, ref)


def test_oversmoothing_remedies(ref):
    explorer = build(ch07.oversmoothing_explorer, ref)
    explorer.controls["depth"].value = 40
    plain = explorer.values["energy_fraction"]
    assert "[plain]" in explorer.readout.value and plain < 1e-4
    explorer.controls["propagation"].value = "initial residual"
    appnp = explorer.values["energy_fraction"]
    assert "[initial residual]" in explorer.readout.value and appnp > 100 * plain  # a fixed point away from 0
    explorer.controls["propagation"].value = "residual"
    residual = explorer.values["energy_fraction"]
    assert plain < residual < appnp  # slower decay, but still a decay
    explorer.controls["pairnorm"].value = True
    assert "[residual, PairNorm]" in explorer.readout.value
    assert explorer.values["energy_fraction"] > 0.05


def test_oversmoothing_depth_served_from_cache(ref):
    energy = counting(ref.dirichlet_energy)
    explorer = ch07.oversmoothing_explorer(normalized_adjacency=ref.normalized_adjacency, dirichlet_energy=energy)
    calls = len(energy.calls)
    explorer.controls["depth"].value = 7
    assert len(energy.calls) == calls and "depth k = 7" in explorer.readout.value


def test_wl_refinement(ref):
    explorer = build(ch07.wl_refinement_explorer, ref)
    first = explorer.readout.value
    assert first.startswith("round 0: 1 colour;") and "wl_distinguishes → False" in first
    explorer.controls["rounds"].value = 5
    assert "1 colour;" in explorer.readout.value and "are equal" in explorer.readout.value  # C6 vs 2C3 never split
    explorer.controls["pair"].value = "6-path vs triangle + 3-path"
    explorer.controls["rounds"].value = 1
    assert "are equal" in explorer.readout.value and "wl_distinguishes → False" in explorer.readout.value
    explorer.controls["rounds"].value = 2
    assert "are different" in explorer.readout.value and "wl_distinguishes → True" in explorer.readout.value
    move(explorer, pair="one vs two copies of a molecule")
    h1, h2 = np.array(explorer.values["histogram_1"]), np.array(explorer.values["histogram_2"])
    assert np.array_equal(2 * h1, h2)  # proportional histograms: what a mean readout sees is the same
    assert explorer.last_figure is not None


test_wl_refinement_stub = missing_function_test(ch07.wl_refinement_explorer)


def test_live_pictures_are_current_after_every_move(ref):
    assert_live_through_every_control(build(ch07.laplacian_modes_explorer, ref))
    assert_live_through_every_control(build(ch07.oversmoothing_explorer, ref))
    assert_live_through_every_control(build(ch07.karate_gcn_explorer, ref), max_full_draws=1)
    assert_live_through_every_control(build(ch07.wl_refinement_explorer, ref))


def test_ring_split_is_fixed_by_the_seed_and_batches_graphs_as_one():
    data = ch07.ring_split()
    assert {part: len(graphs) for part, (graphs, _) in data.items()} == {"train": 300, "validation": 100, "test": 200}
    again = ch07.ring_split()
    for part in data:
        assert np.array_equal(data[part][1], again[part][1])
        assert all(np.array_equal(a[0], b[0]) and a[1] == b[1] for a, b in zip(data[part][0], again[part][0]))
    assert not np.array_equal(ch07.ring_split(seed=1)["train"][1], data["train"][1])
    graphs, labels = data["train"]
    assert 0.55 < labels.mean() < 0.75  # about two graphs in three have three rings or more
    for edge_index, n in graphs[:20]:
        pairs = set(map(tuple, edge_index.T))
        assert pairs == {(t, s) for s, t in pairs}  # undirected: every edge in both directions
        degree = np.bincount(edge_index[1], minlength=n)
        assert set(degree.tolist()) <= {1, 2} and n % 3 == 0
    edge_index, graph_ids, X = ch07.batch_graphs(graphs, [2, 0])
    n2, n0 = graphs[2][1], graphs[0][1]
    assert X.shape == (n2 + n0, 2) and np.all(X.sum(axis=1) == 1)
    assert np.array_equal(graph_ids, np.r_[np.zeros(n2, int), np.ones(n0, int)])
    assert np.array_equal(edge_index, np.hstack([graphs[2][0], graphs[0][0] + n2]))
    assert np.array_equal(X[:, 0] == 1, np.bincount(edge_index[1], minlength=n2 + n0) == 1)


def _prose(chapter="ch07_gnn"):
    import nbformat
    nb = nbformat.read(f"solutions/{chapter}/{chapter}.ipynb", as_version=4)
    return " ".join(" ".join(c.source.split()) for c in nb.cells if c.cell_type == "markdown").replace("# ", "")


def test_no_test_graph_is_isomorphic_to_a_training_or_validation_graph():
    """The held-out check's test graphs (ring_split()['test']) are new up to isomorphism: their Weisfeiler-Leman
    hashes (which isomorphic graphs share) meet none of the training and validation graphs'; and the test pairs
    really are outside the training family."""
    import warnings

    import networkx as nx

    def wl_hash(graph):
        edge_index, n = graph
        G = nx.Graph()
        G.add_nodes_from(range(n))
        G.add_edges_from(np.asarray(edge_index).T.tolist())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return nx.weisfeiler_lehman_graph_hash(G, iterations=4)

    data = ch07.ring_split()
    seen = {wl_hash(g) for part in ("train", "validation") for g in data[part][0]}
    test = [wl_hash(g) for g in data["test"][0]]
    assert len(seen) == 20 and not seen & set(test)
    assert len(set(test)) >= 20   # many distinct held-out graphs, not a few repeated
    assert not set(ch07.RING_HELD_OUT) & set(ch07.RING_FAMILY)


def test_the_gin_and_the_baselines_on_the_test_graphs_are_the_chapters_numbers(ref):
    """The reference GIN's test accuracy and the baselines' are those the chapter states, and the margins of
    test_gin_heldout hold for the reference."""
    data = ch07.ring_split()
    run = ref.train_gin(ref.gin_backward, ref.logistic_loss, ref.edge_message_passing, ref.graph_readout,
                        data["train"], data["validation"])
    P = run["params"]
    graphs, y = data["test"]
    ei, ids, H = ch07.batch_graphs(graphs, range(len(graphs)))
    for k in (0, 4):
        Z = H.copy()
        np.add.at(Z, ei[1], H[ei[0]])
        H = np.maximum(Z @ P[k] + P[k + 1], 0.0) @ P[k + 2] + P[k + 3]
    G = np.zeros((len(graphs), H.shape[1]))
    np.add.at(G, ids, H)
    accuracy = float(np.mean(((G @ P[8]) / 30 + P[9][0] > 0) == y))
    base = ch07.ring_baselines()
    prose = _prose()
    assert f"The reference reaches {accuracy * 100:.1f} %" in prose
    assert f"the test graphs ({base['majority'] * 100:.0f} %)" in prose
    assert f"which gets {base['node_count'] * 100:.0f} % on these test graphs" in prose
    assert f"classifies {base['bag_of_nodes'] * 100:.0f} % of the same test graphs" in prose
    assert accuracy >= base["majority"] + 0.25 + 0.02 and accuracy >= base["bag_of_nodes"] - 0.10 + 0.02
