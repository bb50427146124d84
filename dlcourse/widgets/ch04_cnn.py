"""Widgets and helpers of chapter 4 (convolutional networks).

Pure render functions ``render_*(**controls, **student_functions) -> (figure, readout)``
and factories returning an :class:`Explorer`:

- ``kernel_explorer(conv2d, conv_output_size)``: a kernel (edge, blur, sharpen or nine
  sliders) applied to a digit, with stride and padding, and the output shape;
- ``shift_explorer(conv2d)``: shift-equivariance, ``max |conv(shift(x)) - shift(conv(x))|``;
- ``feature_map_explorer(build_digits_cnn)``: the trained network's filters and feature maps;
- ``pooling_shift_explorer(conv2d, max_pool2d, avg_pool2d)``: stride and pooling break
  shift-equivariance (shifts that are not multiples of the total stride).

Drivers of the integration checks (self-contained, run in the student's process, return plain data):
``recover_kernel`` (gradient descent on a kernel with the student's ``conv2d`` and
``conv2d_backward``), ``train_traced`` (the student's own loop ``train_cnn``, its pieces' calls counted
and their gradients followed into the update), ``digits_cnn_report`` and ``digits_cnn_logits`` (the
student's ``build_digits_cnn``, built, and trained by the recipe). ``numpy_cnn_logits`` evaluates trained
NumPy-CNN weights with torch (the grader's side); ``digits_holdout()`` splits the recipe's training digits
again into training and validation digits (the test digits stay unseen); ``digits_logistic_baseline()`` is
logistic regression on the same training pixels, judged on the same test digits (the baseline beside the
CNN); ``cnn_weights`` names the weights of a ``train_cnn`` run. The loop and chain that ``train_cnn``
superseded, and the autograd oracle of that network, live in ``dlcourse.compat.ch04_cnn`` (old names still
import from here).

Helpers used by the notebook and by its tests: ``train_digits_recipe(model)`` (the course's
fixed training recipe, returns the test accuracy), ``trained_digits_cnn(build_digits_cnn)``
(the recipe run once per builder, cached), ``shift_images``, ``count_parameters``.
"""
from __future__ import annotations

import functools

import ipywidgets as widgets
import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..drivers.ch04_cnn import (
    CNN_WEIGHTS,
    digits_cnn_logits,
    digits_cnn_report,
    recover_kernel,
    train_traced,
)
from .explorer import Explorer, cached, readout
from .picture import LiveFigure, kept_figure

__all__ = [
    "KERNELS", "train_digits_recipe", "trained_digits_cnn", "count_parameters", "shift_images",
    "render_kernel", "kernel_explorer", "render_shift", "shift_explorer",
    "render_feature_map", "feature_map_explorer",
    "render_pooling_shift", "pooling_shift_explorer",
    "recover_kernel", "numpy_cnn_logits", "digits_holdout", "digits_logistic_baseline", "cnn_weights",
    "train_traced",
    "digits_cnn_report", "digits_cnn_logits",
]

KERNELS = {
    "vertical edge": np.array([[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]]),
    "horizontal edge": np.array([[1.0, 2.0, 1.0], [0.0, 0.0, 0.0], [-1.0, -2.0, -1.0]]),
    "blur": np.full((3, 3), 1.0 / 9.0),
    "sharpen": np.array([[0.0, -1.0, 0.0], [-1.0, 5.0, -1.0], [0.0, -1.0, 0.0]]),
    "identity": np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]),
}
SLIDERS = [f"k{i}{j}" for i in range(3) for j in range(3)]

# Superseded (issue 39): complete answers that earlier releases imported from here, now in dlcourse.compat
_MOVED = ("train_numpy_cnn", "numpy_cnn_gradients", "numpy_cnn_backprop", "torch_cnn_gradients")


def __getattr__(name):
    """The superseded helpers, for notebooks already handed out: imported from ``dlcourse.compat`` on first use."""
    if name in _MOVED:
        from importlib import import_module
        return getattr(import_module("dlcourse.compat.ch04_cnn"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ------------------------------------------------------------------ data and training

@functools.cache
def _digits():
    from dlcourse.data import digits_split
    return digits_split()


def digits_holdout(n_val: int = 300):
    """The digits of ``dlcourse.data.digits_split()`` in float64, its training part split again:
    ``(X_train, y_train, X_val, y_val, X_test, y_test)``, 1,047 / 300 / 450 images (N, 1, 8, 8). The
    validation digits are the last ``n_val`` of the (already shuffled and stratified) training part; the
    test digits are the recipe's, which no training loop of the chapter sees."""
    X_train, X_test, y_train, y_test = _digits()
    X_train, X_test = X_train.astype(np.float64), X_test.astype(np.float64)
    cut = len(X_train) - n_val
    return X_train[:cut], y_train[:cut].copy(), X_train[cut:], y_train[cut:].copy(), X_test, y_test.copy()


def digits_logistic_baseline(C: float = 1.0) -> dict:
    """Logistic regression (softmax over the 64 pixels and a bias, L2 penalty ``|W|^2 / (2 C)`` beside the summed
    cross-entropy, scikit-learn's default ``C = 1``), fitted by L-BFGS on the training digits of
    ``digits_holdout()`` and judged on its test digits: ``{"accuracy", "cross_entropy", "n_params"}``. The
    baseline a practitioner tries first; made once per process (a fraction of a second)."""
    return dict(_digits_logistic_baseline(float(C)))


@functools.lru_cache(maxsize=4)
def _digits_logistic_baseline(C):
    from scipy.optimize import minimize
    X_train, y_train, _, _, X_test, y_test = digits_holdout()
    X, Xt = X_train.reshape(len(X_train), -1), X_test.reshape(len(X_test), -1)
    n, d, k = X.shape[0], X.shape[1], 10
    onehot = np.eye(k)[y_train]

    def loss_and_grad(theta):
        W, b = theta[:k * d].reshape(k, d), theta[k * d:]
        z = X @ W.T + b
        z = z - z.max(axis=1, keepdims=True)
        lse = np.log(np.exp(z).sum(axis=1))
        G = C * (np.exp(z - lse[:, None]) - onehot)
        loss = C * np.sum(lse - z[np.arange(n), y_train]) + 0.5 * np.sum(W * W)
        return loss, np.concatenate([(G.T @ X + W).ravel(), G.sum(axis=0)])

    from threadpoolctl import threadpool_limits
    with threadpool_limits(1):  # small products: threads only wait for each other on a busy machine
        theta = minimize(loss_and_grad, np.zeros(k * d + k), jac=True, method="L-BFGS-B",
                         options={"maxiter": 5000, "gtol": 1e-8}).x
    logits = Xt @ theta[:k * d].reshape(k, d).T + theta[k * d:]
    z = logits - logits.max(axis=1, keepdims=True)
    return (("accuracy", float(np.mean(logits.argmax(axis=1) == y_test))),
            ("cross_entropy", float(np.mean(np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(y_test)), y_test]))),
            ("n_params", k * d + k))


def cnn_weights(params) -> dict:
    """The list ``[W1, b1, W2, b2, W3, b3]`` a ``train_cnn`` run returns, as the dict of ``numpy_cnn_logits``."""
    return dict(zip(CNN_WEIGHTS, (np.asarray(p, dtype=np.float64) for p in params)))


def digit_image(index: int) -> tuple[np.ndarray, int]:
    """Test image ``index`` of the course split as float64 (8, 8), and its label."""
    _, X_test, _, y_test = _digits()
    index = int(index) % len(X_test)
    return X_test[index, 0].astype(np.float64), int(y_test[index])


def count_parameters(model) -> int:
    return int(sum(p.numel() for p in model.parameters()))


def shift_images(X: np.ndarray, dx: int, dy: int) -> np.ndarray:
    """Images (..., H, W) moved ``dx`` pixels right and ``dy`` down, zeros shifted in (no wrap)."""
    out = np.zeros_like(X)
    H, W = X.shape[-2:]
    dx, dy = int(dx), int(dy)
    if abs(dx) >= W or abs(dy) >= H:
        return out
    src = X[..., max(0, -dy):H - max(0, dy), max(0, -dx):W - max(0, dx)]
    out[..., max(0, dy):H - max(0, -dy), max(0, dx):W - max(0, -dx)] = src
    return out


def _shift_batch(X, generator):
    """Each image of the batch X (torch, (B, 1, H, W)) moved by its own random (dx, dy) in {-1, 0, 1}^2."""
    import torch
    out = torch.zeros_like(X)
    moves = torch.randint(-1, 2, (len(X), 2), generator=generator)
    H, W = X.shape[-2:]
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            rows = ((moves[:, 0] == dx) & (moves[:, 1] == dy)).nonzero().flatten()
            if len(rows):
                src = X[rows][..., max(0, -dy):H - max(0, dy), max(0, -dx):W - max(0, dx)]
                out[rows, ..., max(0, dy):H - max(0, -dy), max(0, dx):W - max(0, -dx)] = src
    return out


def train_digits_recipe(model, epochs: int = 30, augment: bool = False) -> float:
    """Train ``model`` by the course recipe and return its test accuracy (a float in [0, 1]).

    The recipe (syllabus, ch04): scikit-learn's digits, pixels / 16 as float32 (N, 1, 8, 8),
    ``train_test_split(test_size=0.25, random_state=0, stratify=y)``; ``torch.manual_seed(0)``,
    Adam with lr 3e-3, cross-entropy, batches of 64 shuffled by a generator seeded with 0,
    30 epochs. Runs on one thread (a second or two for a small CNN). ``augment=True`` (not the
    recipe: the remedy of section 11) moves every training image by a random pixel in each batch.
    """
    import torch
    import torch.nn.functional as F

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        X_train, X_test, y_train, y_test = _digits()
        Xtr, ytr = torch.from_numpy(X_train), torch.from_numpy(y_train)
        Xte, yte = torch.from_numpy(X_test), torch.from_numpy(y_test)
        torch.manual_seed(0)
        optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
        generator = torch.Generator().manual_seed(0)
        moves = torch.Generator().manual_seed(1)
        model.train()
        for _ in range(epochs):
            order = torch.randperm(len(Xtr), generator=generator)
            for start in range(0, len(Xtr), 64):
                batch = order[start:start + 64]
                inputs = _shift_batch(Xtr[batch], moves) if augment else Xtr[batch]
                loss = F.cross_entropy(model(inputs), ytr[batch])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        model.eval()
        with torch.no_grad():
            return float((model(Xte).argmax(dim=1) == yte).float().mean().item())
    finally:
        torch.set_num_threads(threads)


@functools.lru_cache(maxsize=8)
def trained_digits_cnn(build_digits_cnn):
    """``(model, test_accuracy)``: ``build_digits_cnn()`` trained once by the recipe (cached per builder:
    the notebook's cell and the feature-map widget share the one training)."""
    import torch
    torch.manual_seed(0)
    model = build_digits_cnn()
    return model, train_digits_recipe(model)


# ------------------------------------------------------------------ kernel explorer

def _kernel(kernel: str, values: dict) -> np.ndarray:
    if kernel == "custom":
        return np.array([float(values[name]) for name in SLIDERS]).reshape(3, 3)
    return KERNELS[kernel]


def _panels(n, figsize, margins, ratios=None) -> LiveFigure:
    """A live figure of n image panels, built once per explorer: images, titles and frames change (the
    panels have no ticks, so nothing of the background depends on an image's shape)."""
    live = LiveFigure(Figure(figsize=figsize))
    axes = live.figure.subplots(1, n, gridspec_kw={"width_ratios": ratios} if ratios else None)
    live.axes = list(np.atleast_1d(axes))
    live.images = [_panel(live, ax) for ax in live.axes]
    live.figure.subplots_adjust(**margins)
    return live


def _panel(live, ax):
    """An image panel of ``live``: its image, title and frame marked as changing."""
    image = ax.imshow(np.zeros((2, 2)), cmap="gray", vmin=0, vmax=1, interpolation="nearest")
    ax.set_xticks([])
    ax.set_yticks([])
    live.changes([image, ax.set_title(" ", fontsize=9)] + list(ax.spines.values()))
    return image


@functools.lru_cache(maxsize=None)
def _colormap(name: str):
    """One colormap per name (``matplotlib.colormaps[name]`` is a new copy, which builds its table anew)."""
    return matplotlib.colormaps[name]


def _update(live, k, image, title, cmap="gray", vmin=0.0, vmax=1.0):
    """Panel ``k`` shows ``image`` coloured here (a few hundred pixels: Matplotlib would colour the
    image after resampling it to the screen, 100 times more, at every update)."""
    ax, im = live.axes[k], live.images[k]
    h, w = image.shape
    scaled = (np.asarray(image, dtype=float) - vmin) / (vmax - vmin if vmax > vmin else 1.0)
    im.set_data(_colormap(cmap)(np.clip(scaled, 0.0, 1.0), bytes=True))
    im.set_extent((-0.5, w - 0.5, h - 0.5, -0.5))
    ax.set_xlim(-0.5, w - 0.5)
    ax.set_ylim(h - 0.5, -0.5)
    ax.title.set_text(title)


def _kernel_figure() -> LiveFigure:
    live = _panels(3, (7.5, 2.7), dict(left=0.01, right=0.99, bottom=0.03, top=0.88, wspace=0.12), [1, 0.8, 1])
    live.frame = live.changes(live.axes[0].add_patch(Rectangle((-0.5, -0.5), 8, 8, fill=False,
                                                               edgecolor="tab:orange", linewidth=1.5)))
    live.texts = live.changes([live.axes[1].text(j, i, "", ha="center", va="center", fontsize=8)
                               for i in range(3) for j in range(3)])
    return live


def render_kernel(kernel="vertical edge", digit=0, stride=1, padding=0,
                  k00=0.0, k01=0.0, k02=0.0, k10=0.0, k11=1.0, k12=0.0, k20=0.0, k21=0.0, k22=0.0,
                  *, conv2d, conv_output_size, cache=None):
    """A digit, the kernel and ``conv2d(digit, kernel, stride, padding)``, with the output shape."""
    values = dict(k00=k00, k01=k01, k02=k02, k10=k10, k11=k11, k12=k12, k20=k20, k21=k21, k22=k22)
    K = _kernel(kernel, values)
    image, label = digit_image(digit)
    stride, padding = int(stride), int(padding)
    out = np.asarray(conv2d(image[None, None], K[None, None], None, stride, padding))[0, 0]
    predicted = (int(conv_output_size(8, 3, padding, stride)),) * 2

    live = kept_figure(cache, _kernel_figure)
    live.new_background("panels")  # image panels without ticks: nothing in the background changes
    padded = np.pad(image, padding)
    _update(live, 0, padded, f"digit {label}, padding {padding}: {padded.shape[0]}×{padded.shape[1]}")
    live.frame.set_xy((padding - 0.5, padding - 0.5))
    live.frame.set_visible(bool(padding))
    limit = max(np.abs(K).max(), 1e-12)
    _update(live, 1, K, f"kernel ({kernel})", cmap="RdBu_r", vmin=-limit, vmax=limit)
    for text, value in zip(live.texts, K.ravel()):
        text.set_text(f"{value:.2g}")
        text.set_color("white" if abs(value) > 0.6 * limit else "black")
    limit = max(np.abs(out).max(), 1e-12)
    _update(live, 2, out, f"output, stride {stride}: {out.shape[0]}×{out.shape[1]}",
            cmap="RdBu_r", vmin=-limit, vmax=limit)

    agree = "agrees with" if tuple(out.shape) == predicted else "DISAGREES with"
    shape = f"{out.shape[0]}×{out.shape[1]}"
    text = readout(f"digit #{int(digit)} (label {label}), {kernel} kernel: input 8×8, kernel 3×3, padding {padding}, "
                   f"stride {stride} → output shape {shape} ({agree} conv_output_size: {predicted[0]}×{predicted[1]}); "
                   f"output range [{out.min():.3g}, {out.max():.3g}]",
                   digit=int(digit), label=label, kernel=kernel, padding=padding, stride=stride,
                   output_shape=tuple(int(n) for n in out.shape), predicted_shape=predicted,
                   agrees=tuple(out.shape) == predicted, output_min=float(out.min()), output_max=float(out.max()))
    return live, text


def kernel_explorer(*, conv2d, conv_output_size):
    """Kernel explorer on a digit: your ``conv2d`` and ``conv_output_size`` at work."""
    slider = dict(min=-2.0, max=2.0, step=0.25, continuous_update=False,
                  layout=widgets.Layout(width="220px"))
    controls = {
        "kernel": widgets.Dropdown(options=list(KERNELS) + ["custom"], value="vertical edge",
                                   description="kernel"),
        "stride": widgets.IntSlider(1, min=1, max=3, description="stride", continuous_update=False),
        "padding": widgets.IntSlider(0, min=0, max=3, description="padding", continuous_update=False),
    }
    for name in SLIDERS:
        controls[name] = widgets.FloatSlider(1.0 if name == "k11" else 0.0,
                                             description=f"custom {name[1]},{name[2]}", **slider)
    controls["digit"] = widgets.IntSlider(0, min=0, max=449, description="digit #",
                                          continuous_update=False)
    return Explorer(render_kernel, controls,
                    needs={"conv2d": conv2d, "conv_output_size": conv_output_size},
                    height="300px", title="A 3×3 kernel on a digit (pick 'custom' to use the sliders)")


# ------------------------------------------------------------------ shift-equivariance

def _canvas(digit: int, size: int = 16) -> tuple[np.ndarray, int]:
    image, label = digit_image(digit)
    canvas = np.zeros((size, size))
    offset = (size - 8) // 2
    canvas[offset:offset + 8, offset:offset + 8] = image
    return canvas, label


def render_shift(dx=2, dy=0, kernel="vertical edge", digit=0, *, conv2d, cache=None):
    """conv(shift(x)) against shift(conv(x)) for a circular shift of a digit on a 16×16 canvas."""
    x, label = cached(cache, ("canvas", int(digit)), lambda: _canvas(digit))
    K = KERNELS[kernel][None, None]
    dx, dy = int(dx), int(dy)

    def conv(image):
        return np.asarray(conv2d(image[None, None], K, None, 1, 1))[0, 0]

    def shift(image):
        return np.roll(image, (dy, dx), axis=(0, 1))

    a = conv(shift(x))
    b = shift(cached(cache, ("conv", int(digit), kernel, conv2d), lambda: conv(x)))
    diff = np.abs(a - b)
    gap = float(diff.max())

    live = kept_figure(cache, lambda: _panels(4, (8.4, 2.4), dict(left=0.01, right=0.99, bottom=0.03, top=0.87,
                                                                  wspace=0.1)))
    live.new_background("panels")
    limit = max(np.abs(b).max(), 1e-12)
    _update(live, 0, shift(x), f"shift(x), ({dx}, {dy})")
    _update(live, 1, a, "conv(shift(x))", cmap="RdBu_r", vmin=-limit, vmax=limit)
    _update(live, 2, b, "shift(conv(x))", cmap="RdBu_r", vmin=-limit, vmax=limit)
    _update(live, 3, diff, f"|difference|, max {gap:.2g}", cmap="magma", vmin=0, vmax=limit)
    verdict = ("equal: the shift commutes with the convolution" if gap < 1e-9 else
               "not equal: the digit wrapped across the border, where zero padding is not circular")
    text = readout(f"shift (dx, dy) = ({dx}, {dy}), kernel {kernel}: "
                   f"max |conv(shift(x)) - shift(conv(x))| = {gap:.3g} ({verdict})",
                   dx=dx, dy=dy, kernel=kernel, digit=int(digit), max_difference=gap, equal=gap < 1e-9)
    return live, text


def shift_explorer(*, conv2d):
    """Shift-equivariance of your ``conv2d`` (padding 1, stride 1) under circular shifts."""
    controls = {
        "dx": widgets.IntSlider(2, min=-8, max=8, description="shift dx", continuous_update=False),
        "dy": widgets.IntSlider(0, min=-8, max=8, description="shift dy", continuous_update=False),
        "kernel": widgets.Dropdown(options=list(KERNELS), value="vertical edge", description="kernel"),
        "digit": widgets.IntSlider(0, min=0, max=449, description="digit #", continuous_update=False),
    }
    return Explorer(render_shift, controls, needs={"conv2d": conv2d},
                    height="270px",
                    title="Shift-equivariance: convolving then shifting = shifting then convolving")


# ------------------------------------------------------------------ filters and feature maps

def _first_conv(model):
    for module in model.modules():
        if type(module).__name__ == "Conv2d":
            return module
    raise ValueError("the model has no nn.Conv2d layer")


def _feature_figure() -> LiveFigure:
    live = LiveFigure(Figure(figsize=(9.0, 2.4)))
    axes = live.figure.subplots(1, 4, gridspec_kw={"width_ratios": [1, 1, 1, 1.4]})
    live.axes = list(axes[:3])
    live.images = [_panel(live, ax) for ax in live.axes]
    live.bars = live.changes(list(axes[3].bar(range(10), np.zeros(10), color="tab:blue")))
    live.changes(list(axes[3].spines.values()))  # the frame, over the bars
    axes[3].set_xticks(range(10))
    axes[3].set_ylim(0, 1)
    axes[3].set_title("softmax of the logits", fontsize=9)
    axes[3].tick_params(labelsize=8)
    live.figure.subplots_adjust(left=0.01, right=0.99, bottom=0.12, top=0.87, wspace=0.15)
    return live


def render_feature_map(digit=0, filter=0, *, build_digits_cnn, cache=None):
    """The trained network's first-layer filter ``filter`` and its feature map on a test digit."""
    import torch

    model, accuracy = trained_digits_cnn(build_digits_cnn)
    conv = _first_conv(model)
    image, label = digit_image(digit)
    captured = {}
    handle = conv.register_forward_hook(lambda module, inputs, output: captured.update(out=output))
    try:
        with torch.no_grad():
            logits = model(torch.from_numpy(image.astype(np.float32))[None, None])
    finally:
        handle.remove()
    probabilities = torch.softmax(logits[0], dim=0).numpy()
    maps = captured["out"][0].numpy()
    k = int(filter) % maps.shape[0]
    weights = conv.weight.detach().numpy()[k]  # (C_in, kh, kw)
    kernel = weights[0] if weights.shape[0] == 1 else weights.mean(axis=0)
    feature = maps[k]

    live = kept_figure(cache, _feature_figure)
    live.new_background("panels")
    _update(live, 0, image, f"test digit #{int(digit)} (label {label})")
    limit = max(np.abs(kernel).max(), 1e-12)
    _update(live, 1, kernel, f"filter {k} of {maps.shape[0]}", cmap="RdBu_r", vmin=-limit, vmax=limit)
    limit = max(np.abs(feature).max(), 1e-12)
    _update(live, 2, feature, f"feature map {k} (before ReLU)", cmap="RdBu_r", vmin=-limit, vmax=limit)
    for c, bar in enumerate(live.bars):
        bar.set_height(float(probabilities[c]))
        bar.set_color("tab:orange" if c == label else "tab:blue")
    predicted = int(probabilities.argmax())
    parameters = count_parameters(model)
    text = readout(f"digit #{int(digit)}: label {label}, predicted {predicted} (p = {probabilities[predicted]:.3f}); "
                   f"filter {k}: weights in [{kernel.min():.3g}, {kernel.max():.3g}], "
                   f"feature map {feature.shape[0]}×{feature.shape[1]} in [{feature.min():.3g}, {feature.max():.3g}]; "
                   f"network: {parameters} parameters, test accuracy {accuracy:.1%}",
                   digit=int(digit), label=label, predicted=predicted, probability=float(probabilities[predicted]),
                   filter=k, filters=int(maps.shape[0]), weight_min=float(kernel.min()),
                   weight_max=float(kernel.max()), feature_map_shape=tuple(int(n) for n in feature.shape),
                   feature_min=float(feature.min()), feature_max=float(feature.max()), parameters=parameters,
                   accuracy=float(accuracy))
    return live, text


def feature_map_explorer(*, build_digits_cnn):
    """Filters and feature maps of ``build_digits_cnn()`` trained by the recipe (trained once, cached)."""
    try:  # the number of first-layer filters, from an untrained copy
        filters = int(_first_conv(build_digits_cnn()).out_channels)
    except Exception:  # noqa: BLE001 - not written yet, or no Conv2d: the readout will say so
        filters = 8
    controls = {
        "digit": widgets.IntSlider(0, min=0, max=449, description="digit #", continuous_update=False),
        "filter": widgets.IntSlider(0, min=0, max=filters - 1, description="filter",
                                    continuous_update=False),
    }
    return Explorer(render_feature_map, controls,
                    needs={"build_digits_cnn": build_digits_cnn},
                    height="270px", title="What the first convolution of the trained network sees")


# ------------------------------------------------------------------ stride and pooling against shifts

def _pipeline(image, conv_stride, pool, *, conv2d, max_pool2d, avg_pool2d):
    out = np.asarray(conv2d(image[None, None], KERNELS["vertical edge"][None, None], None, int(conv_stride), 1))
    if pool == "max 2×2":
        out = np.asarray(max_pool2d(out, 2))
    elif pool == "avg 2×2":
        out = np.asarray(avg_pool2d(out, 2))
    return out[0, 0]


def _best_output_shift(a, b):
    """min over horizontal shifts v of the output grid of max |a - roll(b, v)| (the input moves
    horizontally), and the best (0, v)."""
    rolled = np.stack([np.roll(b, v, axis=1) for v in range(a.shape[1])])
    gaps = np.abs(rolled - a).max(axis=(1, 2))
    v = int(np.argmin(gaps))
    return float(gaps[v]), (0, v if v <= a.shape[1] // 2 else v - a.shape[1])


def render_pooling_shift(shift=1, conv_stride=1, pool="max 2×2", digit=0, *, conv2d, max_pool2d, avg_pool2d,
                         cache=None):
    """f = [pool](conv(x, vertical edge, stride, padding 1)) of a digit on a 24×24 canvas and of the digit
    moved ``shift`` pixels right: is f(shifted x) a shifted copy of f(x)?"""
    x, label = cached(cache, ("canvas", int(digit)), lambda: _canvas(digit, 24))
    moved = np.roll(x, int(shift), axis=1)   # the digit stays well inside the 24×24 canvas for shifts up to 4
    funcs = dict(conv2d=conv2d, max_pool2d=max_pool2d, avg_pool2d=avg_pool2d)
    fx = cached(cache, ("f", int(digit), int(conv_stride), pool, conv2d, max_pool2d, avg_pool2d),
                lambda: _pipeline(x, conv_stride, pool, **funcs))
    fm = _pipeline(moved, conv_stride, pool, **funcs)
    total = int(conv_stride) * (2 if pool != "none" else 1)
    gap, (u, v) = _best_output_shift(fm, fx)
    scale = max(float(np.abs(fx).max()), 1e-12)

    live = kept_figure(cache, lambda: _panels(4, (8.4, 2.3), dict(left=0.01, right=0.99, bottom=0.02, top=0.86,
                                                                  wspace=0.08)))
    live.new_background("panels")
    _update(live, 0, moved, f"x moved {int(shift)} px right")
    _update(live, 1, fx, f"f(x) {fx.shape[0]}×{fx.shape[1]}", cmap="RdBu_r", vmin=-scale, vmax=scale)
    _update(live, 2, fm, "f(moved x)", cmap="RdBu_r", vmin=-scale, vmax=scale)
    best = np.roll(fx, (u, v), axis=(0, 1))
    _update(live, 3, np.abs(fm - best), "|f(moved x) − best shift of f(x)|", cmap="magma", vmin=0, vmax=scale)
    if gap <= 1e-9 * scale:
        verdict = (f"equivariant: f(moved x) is f(x) moved by {v} output pixel(s)"
                   if int(shift) else "no shift: identical")
    else:
        verdict = (f"NOT equivariant: no shift of f(x) matches f(moved x) (best: {v} output pixel(s), "
                   f"still off by {gap / scale:.0%} of the largest response)")
    text = readout(f"shift {int(shift)} px, conv stride {int(conv_stride)}, pooling {pool}: total stride {total}; "
                   f"shift {'is' if int(shift) % total == 0 else 'is not'} a multiple of it → {verdict}",
                   shift=int(shift), conv_stride=int(conv_stride), pool=pool, total_stride=total,
                   multiple=int(shift) % total == 0, equivariant=bool(gap <= 1e-9 * scale), output_shift=v,
                   mismatch=gap / scale, digit=int(digit))
    return live, text


def pooling_shift_explorer(*, conv2d, max_pool2d, avg_pool2d):
    """Stride and pooling against shifts: your ``conv2d``, ``max_pool2d`` and ``avg_pool2d``."""
    controls = {
        "shift": widgets.IntSlider(1, min=0, max=4, description="shift (px)", continuous_update=False),
        "conv_stride": widgets.IntSlider(1, min=1, max=3, description="conv stride", continuous_update=False),
        "pool": widgets.Dropdown(options=["none", "max 2×2", "avg 2×2"], value="max 2×2", description="pooling"),
        "digit": widgets.IntSlider(0, min=0, max=449, description="digit #", continuous_update=False),
    }
    return Explorer(render_pooling_shift, controls,
                    needs={"conv2d": conv2d, "max_pool2d": max_pool2d, "avg_pool2d": avg_pool2d},
                    height="260px", columns=4,
                    title="Stride and pooling: equivariant only to shifts by multiples of the total stride")


# ------------------------------------------------------------------ the grader's oracles of the integration checks
# (their drivers live in dlcourse.drivers.ch04_cnn)

def numpy_cnn_logits(weights, X):
    """The logits of ``train_numpy_cnn``'s network for images X (N, 1, 8, 8), computed with torch."""
    import torch
    import torch.nn.functional as F
    P = {k: torch.from_numpy(np.asarray(weights[k], dtype=np.float64)) for k in ("W1", "b1", "W2", "b2", "W3", "b3")}
    with torch.no_grad():
        a1 = F.relu(F.conv2d(torch.from_numpy(np.asarray(X, dtype=np.float64)), P["W1"], P["b1"]))
        a2 = F.relu(F.conv2d(a1, P["W2"], P["b2"]))
        features = F.max_pool2d(a2, 2).flatten(1)
        return (features @ P["W3"].T + P["b3"]).numpy()
