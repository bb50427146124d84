"""Widgets of chapter 12 (the capstone): every number they show comes from the student's functions.

* ``CapstoneRuns`` (made in the cell before the widgets): the student's ``train_capstone`` run with the
  student's pieces on the digits' training rows, once per variant of ``VARIANTS`` (the ablation); a function
  of the student's that raises is kept, not raised: the widgets given these runs raise it again when they
  draw, so that they name the function;
* ``attention_explorer``: a validation digit and the attention weights of the trained model over its rows,
  computed by the student's ``linear_forward``, ``layernorm_forward`` and ``attention_forward``;
* ``ablation_explorer``: the learning curves of the variants (validation accuracy or loss, training loss).

Each widget is a pure ``render_*`` function (controls and student functions in, ``(figure, readout)`` out)
wrapped in an ``Explorer``. None of them contains a solution of a graded function.
"""
from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from dlcourse.drivers.ch12_capstone import digit_rows

from .explorer import Explorer, readout
from .picture import LiveFigure, kept_figure

__all__ = ["VARIANTS", "PIECES", "CapstoneRuns", "render_attention", "attention_explorer", "QUANTITIES",
           "render_ablation", "ablation_explorer"]

# The ablation: the full model, then one trick taken away at a time (settings of train_capstone).
VARIANTS = {"full model": {},
            "without layer norm": {"layernorm": False},
            "SGD instead of Adam (lr 0.1)": {"optimizer": "sgd", "lr": 0.1},
            "without attention (MLP on the tokens)": {"attention": False}}
PIECES = ("linear_forward", "linear_backward", "layernorm_forward", "layernorm_backward", "attention_forward",
          "attention_backward", "adam_step")
N_SHOWN = 100  # validation digits the attention explorer offers


class CapstoneRuns:
    """``CapstoneRuns(train_capstone=..., linear_forward=..., ..., adam_step=...)`` runs the student's loop with
    the student's pieces on ``digit_rows()``'s training and validation parts, once per variant of ``VARIANTS``
    (``variants``: a subset, by name; ``epochs``: another number of epochs). ``results[name]`` is what
    ``train_capstone`` returned; ``functions`` are the student's functions used; ``error`` the first exception
    their code raised (kept for the widgets)."""

    def __init__(self, *, train_capstone, variants=None, epochs=None, **pieces):
        self.functions = {"train_capstone": train_capstone, **{name: pieces[name] for name in PIECES}}
        self.results, self.error = {}, None
        X_train, y_train, self.X_val, self.y_val, _, _ = digit_rows()
        for name in variants or VARIANTS:
            try:
                self.results[name] = train_capstone(*(pieces[p] for p in PIECES), X_train, y_train, self.X_val,
                                                    self.y_val, **VARIANTS[name],
                                                    **({} if epochs is None else {"epochs": epochs}))
            except Exception as exc:  # noqa: BLE001 - the student's code: the widgets show it
                self.error = exc
                break

    def check(self):
        """Raise the error the student's code met, if any."""
        if self.error is not None:
            raise self.error

    def table(self) -> str:
        """One line per variant: final validation accuracy and loss."""
        if self.error is not None:
            return f"CapstoneRuns: not trained ({type(self.error).__name__}: {str(self.error)[:200]})"
        lines = [f"{'variant':40s} {'val. accuracy':>13s} {'val. loss':>9s}"]
        for name, run in self.results.items():
            lines.append(f"{name:40s} {float(run['val_accuracy'][-1]):13.1%} {float(run['val_loss'][-1]):9.3f}")
        return "\n".join(lines)

    def __repr__(self):
        return self.table()


# ------------------------------------------------------------------ attention over the rows of a digit

def _attention_figure() -> LiveFigure:
    live = LiveFigure(Figure(figsize=(7.0, 3.4)))
    left, right = live.figure.subplots(1, 2)
    live.figure.subplots_adjust(left=0.06, right=0.97, bottom=0.12, top=0.88, wspace=0.3)
    left.set(xticks=[], yticks=range(8), ylabel="row (token)", title="validation digit")
    right.set(xticks=range(8), yticks=range(8), xlabel="key row (attended to)", ylabel="query row",
              title="attention weights")
    live.image = live.changes(left.imshow(np.zeros((8, 8)), cmap="gray_r", vmin=0, vmax=1))
    live.weights = live.changes(right.imshow(np.zeros((8, 8)), cmap="viridis", vmin=0, vmax=1))
    live.figure.colorbar(live.weights, ax=right, fraction=0.046)
    live.marker, = live.changes(right.plot([-0.5, 7.5], [0, 0], color="w", linestyle="--", linewidth=1.5))
    for ax in (left, right):
        live.changes(list(ax.spines.values()))  # the frames, over the images
    return live


def render_attention(digit=0, query=0, *, runs, linear_forward, layernorm_forward, attention_forward, cache=None,
                     **trained_with):
    """Validation digit ``digit`` and the attention weights (8, 8) of the trained full model over its rows, by the
    student's pieces that trained it: ``E = linear_forward(x, We, be) + P``, ``A = attention_forward(
    layernorm_forward(E, g1, c1), Wq, Wk, Wv)[1]``; the dashed line marks query row ``query``. (``trained_with``:
    the other functions of the runs.)"""
    runs.check()
    params = runs.results["full model"]["params"]
    We, be, P, g1, c1, Wq, Wk, Wv = (np.asarray(p, dtype=float) for p in params[:8])
    x = runs.X_val[int(digit)][None].copy()
    E = np.asarray(linear_forward(x, We, be), dtype=float) + P
    U = np.asarray(layernorm_forward(E, g1, c1), dtype=float)
    A = np.asarray(attention_forward(U, Wq, Wk, Wv)[1], dtype=float)[0]
    live = kept_figure(cache, _attention_figure)
    live.new_background("axes")
    live.image.set_data(runs.X_val[int(digit)])
    live.weights.set_data(A)
    live.marker.set_ydata([query, query])
    row = A[int(query)]
    entropy = float(-(row * np.log(np.clip(row, 1e-12, None))).sum())
    return live, readout(f"validation digit {int(digit)} (label {int(runs.y_val[int(digit)])}): row {int(query)} "
                         f"attends most to row {int(row.argmax())} (weight {row.max():.2f}); entropy of its weights "
                         f"{entropy:.2f} nats (uniform: {np.log(8):.2f})",
                         digit=int(digit), label=int(runs.y_val[int(digit)]), query=int(query),
                         attended_row=int(row.argmax()), weight=float(row.max()), entropy=entropy,
                         uniform_entropy=float(np.log(8)))


def attention_explorer(*, runs):
    """The trained model's attention over the rows of a validation digit (``runs``: a ``CapstoneRuns``), computed by
    the student's functions the runs were trained with."""
    controls = {"digit": widgets.IntSlider(value=0, min=0, max=N_SHOWN - 1, description="digit"),
                "query": widgets.IntSlider(value=3, min=0, max=7, description="query row")}
    return Explorer(render_attention, controls,
                    needs={**runs.functions, "runs": runs},
                    height="340px", title="Which rows each row of a digit attends to")


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


def _ablation_figure(names, epochs) -> LiveFigure:
    live = LiveFigure(Figure(figsize=(7.0, 3.4)))
    live.ax = live.figure.subplots()
    live.figure.subplots_adjust(left=0.1, right=0.97, bottom=0.15, top=0.95)
    live.ax.set(xlabel="epoch", xlim=(0.5, epochs + 0.5))
    live.lines = [live.changes(live.ax.plot([], [], linestyle=dash, color=f"C{i}", label=name, linewidth=2))[0]
                  for i, (name, dash) in enumerate(zip(names, DASHES))]
    live.on_top(live.ax.legend(loc="center right", fontsize=8))
    return live


def render_ablation(quantity="validation accuracy", *, runs, cache=None, **trained_with):
    """The learning curve of each variant of the runs: ``quantity`` per epoch (the training loss: the mean of the
    epoch's steps)."""
    runs.check()
    names = list(runs.results)
    epochs = len(runs.results[names[0]]["val_loss"])
    live = kept_figure(cache, lambda: _ablation_figure(names, epochs))
    if live.new_background(quantity):
        live.ax.set_ylim(*QUANTITIES[quantity])
        live.ax.set_ylabel(quantity)
    finals, last = [], {}
    for line, name in zip(live.lines, names):
        values = _curves(runs.results[name], quantity)
        line.set_data(np.arange(1, len(values) + 1), values)
        finals.append(f"{name} {values[-1]:.3f}")
        last[name] = float(values[-1])
    # ``final``: the quantity after the last epoch, by variant name
    return live, readout(f"{quantity} after the last epoch: " + "; ".join(finals),
                         quantity=quantity, final=last)


def ablation_explorer(*, runs):
    """The learning curves of the ablation (``runs``: a ``CapstoneRuns``)."""
    controls = {"quantity": widgets.Dropdown(options=list(QUANTITIES), value="validation accuracy",
                                             description="show")}
    return Explorer(render_ablation, controls, needs={**runs.functions, "runs": runs}, height="340px",
                    title="What each trick contributes, epoch by epoch")
