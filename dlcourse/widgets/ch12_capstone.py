"""Widgets of chapter 12 (the capstone): every number they show comes from the student's functions.

* ``CapstoneRuns`` (made in the cell before the widgets): the student's ``train_capstone`` run with the
  student's pieces on the training part of ``pointer_sequences()``, once per variant of ``VARIANTS`` (the
  ablation) and seed of ``SEEDS``; a function of the student's that raises is kept, not raised: the widgets
  given these runs raise it again when they draw, so that they name the function;
* ``attention_explorer``: a validation sequence and the attention weights of the trained model over its
  tokens, computed by the student's ``linear_forward``, ``layernorm_forward`` and ``attention_forward``;
* ``ablation_explorer``: the learning curves of the variants (validation accuracy or loss, training loss),
  the mean over the seeds and each seed's.

Each widget is a pure ``render_*`` function (controls and student functions in, ``(figure, readout)`` out)
wrapped in an ``Explorer``. None of them contains a solution of a graded function.
"""
from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from dlcourse.drivers.ch12_capstone import N_SLOTS, N_TOKENS, pointer_sequences, symbols_and_pointers

from .explorer import Explorer, readout
from .picture import LiveFigure, kept_figure

__all__ = ["VARIANTS", "SEEDS", "PIECES", "CapstoneRuns", "render_attention", "attention_explorer", "QUANTITIES",
           "render_ablation", "ablation_explorer"]

# The ablation: the full model, then one trick taken away at a time (settings of train_capstone).
VARIANTS = {"full model": {},
            "without layer norm": {"layernorm": False},
            "SGD instead of Adam (lr 0.1)": {"optimizer": "sgd", "lr": 0.1},
            "without attention (MLP on the tokens)": {"attention": False}}
SEEDS = (0, 1, 2)  # each variant trained from three initialisations (and batch orders)
PIECES = ("linear_forward", "linear_backward", "layernorm_forward", "layernorm_backward", "attention_forward",
          "attention_backward", "adam_step")
N_SHOWN = 100  # validation sequences the attention explorer offers


class CapstoneRuns:
    """``CapstoneRuns(train_capstone=..., linear_forward=..., ..., adam_step=...)`` runs the student's loop with
    the student's pieces on ``pointer_sequences()``'s training and validation parts, once per variant of
    ``VARIANTS`` and seed of ``SEEDS`` (``variants``: a subset, by name; ``seeds``: other seeds; ``epochs``: another
    number of epochs). ``by_seed[name]`` lists what ``train_capstone`` returned, one run per seed, and
    ``results[name]`` is the first seed's run; ``functions`` are the student's functions used; ``error`` the first
    exception their code raised (kept for the widgets)."""

    def __init__(self, *, train_capstone, variants=None, seeds=None, epochs=None, **pieces):
        self.functions = {"train_capstone": train_capstone, **{name: pieces[name] for name in PIECES}}
        self.seeds = tuple(SEEDS if seeds is None else seeds)
        self.by_seed, self.results, self.error, self._pointer = {}, {}, None, None
        X_train, y_train, self.X_val, self.y_val, _, _ = pointer_sequences()
        try:
            for name in variants or VARIANTS:
                self.by_seed[name] = []
                for seed in self.seeds:
                    self.by_seed[name].append(train_capstone(
                        *(pieces[p] for p in PIECES), X_train, y_train, self.X_val, self.y_val,
                        **VARIANTS[name], seed=seed, **({} if epochs is None else {"epochs": epochs})))
                self.results[name] = self.by_seed[name][0]
        except Exception as exc:  # noqa: BLE001 - the student's code: the widgets show it
            self.error = exc
            self.by_seed = {name: runs for name, runs in self.by_seed.items() if len(runs) == len(self.seeds)}

    def check(self):
        """Raise the error the student's code met, if any."""
        if self.error is not None:
            raise self.error

    def pointer_attention(self, linear_forward, layernorm_forward, attention_forward) -> tuple[float, float]:
        """Over the validation sequences, by the functions given and the full model of the first seed: the fraction
        whose pointer (query token 7) puts its largest attention weight on the position it names, and the mean weight
        it puts there. Computed once per ``CapstoneRuns``."""
        if self._pointer is None:
            params = self.results["full model"]["params"]
            We, be, P, g1, c1, Wq, Wk, Wv = (np.asarray(p, dtype=float) for p in params[:8])
            E = np.asarray(linear_forward(self.X_val.copy(), We, be), dtype=float) + P
            A = np.asarray(attention_forward(np.asarray(layernorm_forward(E, g1, c1), dtype=float), Wq, Wk, Wv)[1],
                           dtype=float)[:, N_SLOTS]
            named = symbols_and_pointers(self.X_val)[1]
            self._pointer = (float(np.mean(A.argmax(axis=1) == named)),
                             float(A[np.arange(len(named)), named].mean()))
        return self._pointer

    def final_accuracies(self, name) -> np.ndarray:
        """Variant ``name``'s validation accuracy after the last epoch, one per seed."""
        return np.array([float(run["val_accuracy"][-1]) for run in self.by_seed[name]])

    def table(self) -> str:
        """One line per variant: the final validation accuracy per seed, their mean and the mean final loss."""
        if self.error is not None:
            return f"CapstoneRuns: not trained ({type(self.error).__name__}: {str(self.error)[:200]})"
        seeds = " ".join(f"{f'seed {s}':>7s}" for s in self.seeds)
        lines = [f"{'variant (validation accuracy)':40s} {seeds} {'mean':>7s} {'val. loss':>9s}"]
        for name, runs in self.by_seed.items():
            accuracies = self.final_accuracies(name)
            loss = np.mean([float(run["val_loss"][-1]) for run in runs])
            lines.append(f"{name:40s} {' '.join(f'{a:7.1%}' for a in accuracies)} {accuracies.mean():7.1%} "
                         f"{loss:9.3f}")
        return "\n".join(lines)

    def __repr__(self):
        return self.table()


# ------------------------------------------------------------------ attention over the tokens of a sequence

FEATURE_LABELS = [str(k) for k in range(10)] + [f"@{k}" for k in range(N_SLOTS)]
TOKEN_LABELS = [str(k) for k in range(N_SLOTS)] + [f"{N_SLOTS} pointer"]


def _attention_figure() -> LiveFigure:
    live = LiveFigure(Figure(figsize=(7.6, 3.4)))
    left, right = live.figure.subplots(1, 2, gridspec_kw={"width_ratios": [17, 10]})
    live.figure.subplots_adjust(left=0.11, right=0.9, bottom=0.16, top=0.9, wspace=0.35)
    left.set(xticks=range(len(FEATURE_LABELS)), yticks=range(N_TOKENS), ylabel="token",
             xlabel="feature: symbol 0-9, pointed position @0-@6", title="validation sequence")
    left.set_xticklabels(FEATURE_LABELS, fontsize=7)
    left.set_yticklabels(TOKEN_LABELS, fontsize=8)
    right.set(xticks=range(N_TOKENS), yticks=range(N_TOKENS), xlabel="key token (attended to)",
              ylabel="query token", title="attention weights")
    live.image = live.changes(left.imshow(np.zeros((N_TOKENS, len(FEATURE_LABELS))), cmap="gray_r", vmin=0,
                                          vmax=1))
    live.weights = live.changes(right.imshow(np.zeros((N_TOKENS, N_TOKENS)), cmap="viridis", vmin=0, vmax=1))
    live.figure.colorbar(live.weights, ax=right, fraction=0.046)
    live.marker, = live.changes(right.plot([-0.5, N_TOKENS - 0.5], [0, 0], color="w", linestyle="--",
                                           linewidth=1.5))
    for ax in (left, right):
        live.changes(list(ax.spines.values()))  # the frames, over the images
    return live


def render_attention(sequence=0, query=N_SLOTS, *, runs, linear_forward, layernorm_forward, attention_forward,
                     cache=None, **trained_with):
    """Validation sequence ``sequence`` and the attention weights (8, 8) of the trained full model (the first
    seed's) over its tokens, by the student's pieces that trained it: ``E = linear_forward(x, We, be) + P``, ``A =
    attention_forward(layernorm_forward(E, g1, c1), Wq, Wk, Wv)[1]``; the dashed line marks query token ``query``.
    (``trained_with``: the other functions of the runs.)"""
    runs.check()
    params = runs.results["full model"]["params"]
    We, be, P, g1, c1, Wq, Wk, Wv = (np.asarray(p, dtype=float) for p in params[:8])
    k, query = int(sequence), int(query)
    x = runs.X_val[k][None].copy()
    E = np.asarray(linear_forward(x, We, be), dtype=float) + P
    U = np.asarray(layernorm_forward(E, g1, c1), dtype=float)
    A = np.asarray(attention_forward(U, Wq, Wk, Wv)[1], dtype=float)[0]
    live = kept_figure(cache, _attention_figure)
    live.new_background("axes")
    live.image.set_data(runs.X_val[k])
    live.weights.set_data(A)
    live.marker.set_ydata([query, query])
    row = A[query]
    entropy = float(-(row * np.log(np.clip(row, 1e-12, None))).sum())
    symbols, pointers = symbols_and_pointers(runs.X_val[k][None])
    symbols, pointer, label = symbols[0], int(pointers[0]), int(runs.y_val[k])
    who = "The pointer" if query == N_SLOTS else f"Token {query}"
    found, named_weight = runs.pointer_attention(linear_forward, layernorm_forward, attention_forward)
    return live, readout(f"validation sequence {k}: symbols {' '.join(map(str, symbols))}, the pointer names "
                         f"position {pointer} (label {label}). {who} attends most to token {int(row.argmax())} "
                         f"(weight {row.max():.2f}); entropy of its weights {entropy:.2f} nats (uniform: "
                         f"{np.log(N_TOKENS):.2f}). Over the {len(runs.y_val)} validation sequences, the pointer "
                         f"attends most to the position it names in {found:.1%}, with a mean weight of "
                         f"{named_weight:.2f} there",
                         sequence=k, label=label, pointer=pointer, query=query, attended=int(row.argmax()),
                         weight=float(row.max()), entropy=entropy, uniform_entropy=float(np.log(N_TOKENS)),
                         pointer_found=found, pointer_weight=named_weight)


def attention_explorer(*, runs):
    """The trained model's attention over the tokens of a validation sequence (``runs``: a ``CapstoneRuns``),
    computed by the student's functions the runs were trained with."""
    controls = {"sequence": widgets.IntSlider(value=0, min=0, max=N_SHOWN - 1, description="sequence"),
                "query": widgets.IntSlider(value=N_SLOTS, min=0, max=N_TOKENS - 1, description="query token")}
    return Explorer(render_attention, controls,
                    needs={**runs.functions, "runs": runs},
                    height="340px", title="Which tokens each token of a sequence attends to")


# ------------------------------------------------------------------ the ablation's learning curves

QUANTITIES = {"validation accuracy": (0.0, 1.0), "validation loss": (0.0, 2.5),
              "training loss (epoch mean)": (0.0, 2.5)}
DASHES = ("-", "--", "-.", ":")


def _curves(run, quantity):
    if quantity == "validation accuracy":
        return np.asarray(run["val_accuracy"], dtype=float)
    if quantity == "validation loss":
        return np.asarray(run["val_loss"], dtype=float)
    losses = np.asarray(run["losses"], dtype=float)
    return np.array([chunk.mean() for chunk in np.array_split(losses, len(run["val_loss"]))])


def _ablation_figure(names, epochs, n_seeds) -> LiveFigure:
    live = LiveFigure(Figure(figsize=(7.0, 3.7)))
    live.ax = live.figure.subplots()
    live.figure.subplots_adjust(left=0.1, right=0.97, bottom=0.14, top=0.84)
    live.ax.set(xlabel="epoch", xlim=(0.5, epochs + 0.5))
    live.seed_lines = [[live.changes(live.ax.plot([], [], linestyle=dash, color=f"C{i}", linewidth=0.8,
                                                  alpha=0.45))[0] for _ in range(n_seeds)]
                       for i, dash in zip(range(len(names)), DASHES)]
    live.lines = [live.changes(live.ax.plot([], [], linestyle=dash, color=f"C{i}", label=f"{name} (mean)",
                                            linewidth=2.2))[0]
                  for i, (name, dash) in enumerate(zip(names, DASHES))]
    live.on_top(live.ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=8,
                                frameon=False))
    return live


def render_ablation(quantity="validation accuracy", *, runs, cache=None, **trained_with):
    """The learning curves of each variant of the runs: ``quantity`` per epoch (the training loss: the mean of the
    epoch's steps), each seed's (thin) and their mean (thick)."""
    runs.check()
    names = list(runs.by_seed)
    epochs = len(runs.results[names[0]]["val_loss"])
    live = kept_figure(cache, lambda: _ablation_figure(names, epochs, len(runs.seeds)))
    if live.new_background(quantity):
        live.ax.set_ylim(*QUANTITIES[quantity])
        live.ax.set_ylabel(quantity)
    finals, last, per_seed = [], {}, {}
    for line, seed_lines, name in zip(live.lines, live.seed_lines, names):
        curves = np.array([_curves(run, quantity) for run in runs.by_seed[name]])
        for seed_line, values in zip(seed_lines, curves):
            seed_line.set_data(np.arange(1, len(values) + 1), values)
        mean = curves.mean(axis=0)
        line.set_data(np.arange(1, len(mean) + 1), mean)
        finals.append(f"{name} {mean[-1]:.3f}")
        last[name], per_seed[name] = float(mean[-1]), [float(v) for v in curves[:, -1]]
    # ``final``: the quantity after the last epoch (mean over the seeds), by variant name; ``per_seed``: each seed's
    return live, readout(f"{quantity} after the last epoch, mean of {len(runs.seeds)} seeds: " + "; ".join(finals),
                         quantity=quantity, final=last, per_seed=per_seed)


def ablation_explorer(*, runs):
    """The learning curves of the ablation (``runs``: a ``CapstoneRuns``)."""
    controls = {"quantity": widgets.Dropdown(options=list(QUANTITIES), value="validation accuracy",
                                             description="show")}
    return Explorer(render_ablation, controls, needs={**runs.functions, "runs": runs}, height="340px",
                    title="What each trick contributes, epoch by epoch (three seeds)")
