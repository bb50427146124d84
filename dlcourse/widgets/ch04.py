"""Widgets and helpers of chapter 4 (convolutional networks).

Pure render functions ``render_*(**controls, **student_functions) -> (figure, readout)``
and factories returning an :class:`Explorer`:

- ``kernel_explorer(conv2d, conv_output_size)``: a kernel (edge, blur, sharpen or nine
  sliders) applied to a digit, with stride and padding, and the output shape;
- ``shift_explorer(conv2d)``: shift-equivariance, ``max |conv(shift(x)) - shift(conv(x))|``;
- ``feature_map_explorer(build_digits_cnn)``: the trained network's filters and feature maps.

Helpers used by the notebook and by its tests: ``train_digits_recipe(model)`` (the course's
fixed training recipe, returns the test accuracy), ``trained_digits_cnn(build_digits_cnn)``
(the recipe run once per builder, cached), ``shift_images``, ``count_parameters``.
"""
from __future__ import annotations

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np

from .explorer import Explorer

__all__ = [
    "KERNELS", "train_digits_recipe", "trained_digits_cnn", "count_parameters", "shift_images",
    "render_kernel", "kernel_explorer", "render_shift", "shift_explorer",
    "render_feature_maps", "feature_map_explorer",
]

KERNELS = {
    "vertical edge": np.array([[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]]),
    "horizontal edge": np.array([[1.0, 2.0, 1.0], [0.0, 0.0, 0.0], [-1.0, -2.0, -1.0]]),
    "blur": np.full((3, 3), 1.0 / 9.0),
    "sharpen": np.array([[0.0, -1.0, 0.0], [-1.0, 5.0, -1.0], [0.0, -1.0, 0.0]]),
    "identity": np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]),
}
SLIDERS = [f"k{i}{j}" for i in range(3) for j in range(3)]


# ------------------------------------------------------------------ data and training

_DIGITS = None


def _digits():
    global _DIGITS
    if _DIGITS is None:
        from dlcourse.data import digits_split
        _DIGITS = digits_split()
    return _DIGITS


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


def train_digits_recipe(model, epochs: int = 30) -> float:
    """Train ``model`` by the course recipe and return its test accuracy (a float in [0, 1]).

    The recipe (syllabus, ch04): scikit-learn's digits, pixels / 16 as float32 (N, 1, 8, 8),
    ``train_test_split(test_size=0.25, random_state=0, stratify=y)``; ``torch.manual_seed(0)``,
    Adam with lr 3e-3, cross-entropy, batches of 64 shuffled by a generator seeded with 0,
    30 epochs. Runs on one thread (a second or two for a small CNN).
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
        model.train()
        for _ in range(epochs):
            order = torch.randperm(len(Xtr), generator=generator)
            for start in range(0, len(Xtr), 64):
                batch = order[start:start + 64]
                loss = F.cross_entropy(model(Xtr[batch]), ytr[batch])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        model.eval()
        with torch.no_grad():
            return float((model(Xte).argmax(dim=1) == yte).float().mean().item())
    finally:
        torch.set_num_threads(threads)


_TRAINED: dict = {}


def trained_digits_cnn(build_digits_cnn):
    """``(model, test_accuracy)``: ``build_digits_cnn()`` trained once by the recipe (cached per builder)."""
    if build_digits_cnn not in _TRAINED:
        import torch
        torch.manual_seed(0)
        model = build_digits_cnn()
        accuracy = train_digits_recipe(model)
        _TRAINED[build_digits_cnn] = (model, accuracy)
    return _TRAINED[build_digits_cnn]


# ------------------------------------------------------------------ kernel explorer

def _kernel(kernel: str, values: dict) -> np.ndarray:
    if kernel == "custom":
        return np.array([float(values[name]) for name in SLIDERS]).reshape(3, 3)
    return KERNELS[kernel]


def _show(ax, image, title, cmap="gray", vmin=None, vmax=None):
    ax.imshow(image, cmap=cmap, vmin=vmin, vmax=vmax, interpolation="nearest")
    ax.set_title(title, fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])


def render_kernel(kernel="vertical edge", digit=0, stride=1, padding=0,
                  k00=0.0, k01=0.0, k02=0.0, k10=0.0, k11=1.0, k12=0.0, k20=0.0, k21=0.0, k22=0.0,
                  *, conv2d, conv_output_size):
    """A digit, the kernel and ``conv2d(digit, kernel, stride, padding)``, with the output shape."""
    values = dict(k00=k00, k01=k01, k02=k02, k10=k10, k11=k11, k12=k12, k20=k20, k21=k21, k22=k22)
    K = _kernel(kernel, values)
    image, label = digit_image(digit)
    stride, padding = int(stride), int(padding)
    out = np.asarray(conv2d(image[None, None], K[None, None], None, stride, padding))[0, 0]
    predicted = (int(conv_output_size(8, 3, padding, stride)),) * 2

    fig, axes = plt.subplots(1, 3, figsize=(7.5, 2.7), gridspec_kw={"width_ratios": [1, 0.8, 1]})
    padded = np.pad(image, padding)
    _show(axes[0], padded, f"digit {label}, padding {padding}: {padded.shape[0]}×{padded.shape[1]}",
          vmin=0, vmax=1)
    if padding:
        axes[0].add_patch(plt.Rectangle((padding - 0.5, padding - 0.5), 8, 8, fill=False,
                                        edgecolor="tab:orange", linewidth=1.5))
    limit = max(np.abs(K).max(), 1e-12)
    _show(axes[1], K, f"kernel ({kernel})", cmap="RdBu_r", vmin=-limit, vmax=limit)
    for (i, j), value in np.ndenumerate(K):
        axes[1].text(j, i, f"{value:.2g}", ha="center", va="center", fontsize=8,
                     color="white" if abs(value) > 0.6 * limit else "black")
    limit = max(np.abs(out).max(), 1e-12)
    _show(axes[2], out, f"output, stride {stride}: {out.shape[0]}×{out.shape[1]}",
          cmap="RdBu_r", vmin=-limit, vmax=limit)
    fig.tight_layout()

    agree = "agrees with" if tuple(out.shape) == predicted else "DISAGREES with"
    text = (f"digit #{int(digit)} (label {label}), {kernel} kernel: input 8×8, kernel 3×3, padding {padding}, stride {stride} → output shape "
            f"{out.shape[0]}×{out.shape[1]} ({agree} conv_output_size: {predicted[0]}×{predicted[1]}); "
            f"output range [{out.min():.3g}, {out.max():.3g}]")
    return fig, text


def kernel_explorer(conv2d, conv_output_size):
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


def render_shift(dx=2, dy=0, kernel="vertical edge", digit=0, *, conv2d):
    """conv(shift(x)) against shift(conv(x)) for a circular shift of a digit on a 16×16 canvas."""
    x, label = _canvas(digit)
    K = KERNELS[kernel][None, None]
    dx, dy = int(dx), int(dy)

    def conv(image):
        return np.asarray(conv2d(image[None, None], K, None, 1, 1))[0, 0]

    def shift(image):
        return np.roll(image, (dy, dx), axis=(0, 1))

    a = conv(shift(x))
    b = shift(conv(x))
    diff = np.abs(a - b)
    gap = float(diff.max())

    fig, axes = plt.subplots(1, 4, figsize=(8.4, 2.4))
    limit = max(np.abs(b).max(), 1e-12)
    _show(axes[0], shift(x), f"shift(x), ({dx}, {dy})", vmin=0, vmax=1)
    _show(axes[1], a, "conv(shift(x))", cmap="RdBu_r", vmin=-limit, vmax=limit)
    _show(axes[2], b, "shift(conv(x))", cmap="RdBu_r", vmin=-limit, vmax=limit)
    _show(axes[3], diff, f"|difference|, max {gap:.2g}", cmap="magma", vmin=0, vmax=limit)
    fig.tight_layout()
    verdict = ("equal: the shift commutes with the convolution" if gap < 1e-9 else
               "not equal: the digit wrapped across the border, where zero padding is not circular")
    text = (f"shift (dx, dy) = ({dx}, {dy}), kernel {kernel}: "
            f"max |conv(shift(x)) - shift(conv(x))| = {gap:.3g} ({verdict})")
    return fig, text


def shift_explorer(conv2d):
    """Shift-equivariance of your ``conv2d`` (padding 1, stride 1) under circular shifts."""
    controls = {
        "dx": widgets.IntSlider(2, min=-8, max=8, description="shift dx", continuous_update=False),
        "dy": widgets.IntSlider(0, min=-8, max=8, description="shift dy", continuous_update=False),
        "kernel": widgets.Dropdown(options=list(KERNELS), value="vertical edge", description="kernel"),
        "digit": widgets.IntSlider(0, min=0, max=449, description="digit #", continuous_update=False),
    }
    return Explorer(render_shift, controls, needs={"conv2d": conv2d}, height="270px",
                    title="Shift-equivariance: convolving then shifting = shifting then convolving")


# ------------------------------------------------------------------ filters and feature maps

def _first_conv(model):
    for module in model.modules():
        if type(module).__name__ == "Conv2d":
            return module
    raise ValueError("the model has no nn.Conv2d layer")


def render_feature_maps(digit=0, filter=0, *, build_digits_cnn):
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

    fig, axes = plt.subplots(1, 4, figsize=(9.0, 2.4), gridspec_kw={"width_ratios": [1, 1, 1, 1.4]})
    _show(axes[0], image, f"test digit #{int(digit)} (label {label})", vmin=0, vmax=1)
    limit = max(np.abs(kernel).max(), 1e-12)
    _show(axes[1], kernel, f"filter {k} of {maps.shape[0]}", cmap="RdBu_r", vmin=-limit, vmax=limit)
    limit = max(np.abs(feature).max(), 1e-12)
    _show(axes[2], feature, f"feature map {k} (before ReLU)", cmap="RdBu_r", vmin=-limit, vmax=limit)
    axes[3].bar(range(10), probabilities, color=["tab:orange" if c == label else "tab:blue"
                                                 for c in range(10)])
    axes[3].set_xticks(range(10))
    axes[3].set_ylim(0, 1)
    axes[3].set_title("softmax of the logits", fontsize=9)
    axes[3].tick_params(labelsize=8)
    fig.tight_layout()
    predicted = int(probabilities.argmax())
    text = (f"digit #{int(digit)}: label {label}, predicted {predicted} (p = {probabilities[predicted]:.3f}); "
            f"filter {k}: weights in [{kernel.min():.3g}, {kernel.max():.3g}], "
            f"feature map {feature.shape[0]}×{feature.shape[1]} in [{feature.min():.3g}, {feature.max():.3g}]; "
            f"network: {count_parameters(model)} parameters, test accuracy {accuracy:.1%}")
    return fig, text


def feature_map_explorer(build_digits_cnn):
    """Filters and feature maps of ``build_digits_cnn()`` trained by the recipe (trained once, cached)."""
    try:  # the number of first-layer filters, from an untrained copy
        filters = int(_first_conv(build_digits_cnn()).out_channels)
    except Exception:  # not written yet, or no Conv2d: the readout will say so
        filters = 8
    controls = {
        "digit": widgets.IntSlider(0, min=0, max=449, description="digit #", continuous_update=False),
        "filter": widgets.IntSlider(0, min=0, max=filters - 1, description="filter",
                                    continuous_update=False),
    }
    return Explorer(render_feature_maps, controls, needs={"build_digits_cnn": build_digits_cnn},
                    height="270px", title="What the first convolution of the trained network sees")
