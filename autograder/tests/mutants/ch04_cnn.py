"""Plausible mistakes in the graded functions of ch04_cnn (format: ``__init__.py`` here)."""
from autograder.tests.mutants import swap

MUTANTS = {
    'conv1d_full': {
        'correlation_no_flip': swap("out[t:t + n] += h[t] * f", "out[t:t + n] += h[m - 1 - t] * f"),
        'same_length': swap("    return out", '    return np.convolve(f, h, mode="same")'),
        'length_n_plus_m': swap("np.zeros(n + m - 1)", "np.zeros(n + m)"),
        'truncated_to_signal_length': swap("    return out", "    return out[:n]"),
    },
    'toeplitz': {
        'transposed': swap("    return H", "    return H.T"),
        'flipped_kernel': swap("H[j:j + m, j] = h", "H[j:j + m, j] = h[::-1]"),
        'square_n_by_n': swap("    return H", "    return H[:n]"),
        'upper_band': swap(
            ('dtype=',
             ''),
            ('''j in range(n):
        H[j:j + m, j] = h''',
             '''u in range(n + m - 1):
        for j in range(n):
            if 0 <= j - u + m - 1 < m:
                H[u, j] = h[j - u + m - 1]'''),
        ),
    },
    'corr2d': {
        'true_convolution': swap("K = np.asarray(K, dtype=float)", "K = np.asarray(K, dtype=float)[::-1, ::-1]"),
        'off_by_one_size': swap("oh, ow = X.shape[0] - kh + 1, X.shape[1] - kw + 1",
                                "oh, ow = X.shape[0] - kh, X.shape[1] - kw"),
        'kernel_axes_swapped': swap("out += K[a, b]", "out += K.T.reshape(kh, kw)[a, b]"),
        'square_kernel_assumed': swap("kh, kw = K.shape", "kh = kw = K.shape[0]"),
    },
    'conv_output_size': {
        'no_dilation': swap(
            'int((n + 2 * padding - dilation * (k - 1) - 1) // stride + 1)',
            '(n + 2 * padding - k) // stride + 1'),
        'ceil_instead_of_floor': swap(
            ('def',
             '''import math
def'''),
            ('int((n + 2 * padding - dilation * (k - 1) - 1) // stride + 1)',
             'math.ceil((n + 2 * padding - dilation * (k - 1) - 1) / stride) + 1'),
        ),
        'padding_one_side': swap(
            'int((n + 2 * padding - dilation * (k - 1) - 1) // stride + 1)',
            '(n + padding - dilation * (k - 1) - 1) // stride + 1'),
        'float_result': swap(
            'int((n + 2 * padding - dilation * (k - 1) - 1) // stride + 1)',
            '(n + 2 * padding - dilation * (k - 1) - 1) / stride + 1'),
        'dilation_times_k': swap(
            'int((n + 2 * padding - dilation * (k - 1) - 1) // stride + 1)',
            '(n + 2 * padding - dilation * k) // stride + 1'),
    },
    'conv2d': {
        'flipped_kernel': swap("W = np.asarray(W, dtype=float)", "W = np.asarray(W, dtype=float)[:, :, ::-1, ::-1]"),
        'tuple_uses_first_entry_only': swap(
            ("sh, sw = (stride, stride) if np.isscalar(stride) else stride",
             "sh = sw = stride if np.isscalar(stride) else stride[0]"),
            ("ph, pw = (padding, padding) if np.isscalar(padding) else padding",
             "ph = pw = padding if np.isscalar(padding) else padding[0]"),
        ),
        'pads_one_side_only': swap(
            ("(ph, ph), (pw, pw)", "(ph, 0), (pw, 0)"),
            ("H + 2 * ph - kh", "H + ph - kh"),
            ("Wd + 2 * pw - kw", "Wd + pw - kw"),
        ),
        'no_sum_over_input_channels': swap(
            ("window = Xp[:, :, a:", "window = Xp[:, :1, a:"),
            ("W[:, :, a, c]", "W[:, :1, a, c]"),
        ),
        'bias_ignored': swap(
            ("""    if b is not None:
        out += np.asarray(b, dtype=float)[None, :, None, None]
""", "")),
        # a different implementation (torch), nothing of the reference's to edit: whole cell
        'calls_torch': '''
import numpy as np
def conv2d(X, W, b=None, stride=1, padding=0):
    import torch
    import torch.nn.functional as F
    return F.conv2d(torch.from_numpy(np.asarray(X, float)), torch.from_numpy(np.asarray(W, float)),
                    None if b is None else torch.from_numpy(np.asarray(b, float)),
                    stride=stride, padding=padding).numpy()
''',
    },
    'conv2d_backward': {
        'zeros_of_the_right_shapes': swap("return dX, dW, db",
                                          "return np.zeros_like(X), np.zeros_like(W), np.zeros(len(W))"),
        'dX_without_flip': swap('np.einsum("nohw,oc->nchw", dY, W[:, :, a, c])',
                                'np.einsum("nohw,oc->nchw", dY, W[:, :, kh - 1 - a, kw - 1 - c])'),
        'db_mean_not_sum': swap("dY.sum(axis=(0, 2, 3))", "dY.mean(axis=(0, 2, 3))"),
        'dW_first_image_only': swap('np.einsum("nohw,nchw->oc", dY, X[:, :, a:a + oh, c:c + ow])',
                                    'np.einsum("ohw,chw->oc", dY[0], X[0, :, a:a + oh, c:c + ow])'),
        'dX_overwrites_instead_of_accumulating': swap("dX[:, :, a:a + oh, c:c + ow] +=",
                                                      "dX[:, :, a:a + oh, c:c + ow] ="),
        # a different implementation (torch autograd), nothing of the reference's to edit: whole cell
        'uses_torch_autograd': '''
import numpy as np
def conv2d_backward(X, W, dY):
    import torch
    import torch.nn.functional as F
    Xt = torch.tensor(np.asarray(X, float), requires_grad=True)
    Wt = torch.tensor(np.asarray(W, float), requires_grad=True)
    bt = torch.zeros(Wt.shape[0], dtype=torch.float64, requires_grad=True)
    (F.conv2d(Xt, Wt, bt) * torch.tensor(np.asarray(dY, float))).sum().backward()
    return Xt.grad.numpy(), Wt.grad.numpy(), bt.grad.numpy()
''',
        'dW_with_flipped_kernel': swap("dW[:, :, a, c] =", "dW[:, :, kh - 1 - a, kw - 1 - c] ="),
        'dW_transposed_window': swap('np.einsum("nohw,nchw->oc", dY, X[:, :, a:a + oh, c:c + ow])',
                                     'np.einsum("nohw,ncwh->oc", dY, X[:, :, c:c + ow, a:a + oh])'),
        'dW_mean_over_the_batch': swap('np.einsum("nohw,nchw->oc", dY, X[:, :, a:a + oh, c:c + ow])',
                                       'np.einsum("nohw,nchw->oc", dY, X[:, :, a:a + oh, c:c + ow]) / len(X)'),
    },
    'max_pool2d': {
        'stride_one_by_default': swap("stride = (kh, kw)", "stride = (1, 1)"),
        'starts_at_zero': swap("np.full(X.shape[:-2] + (oh, ow), -np.inf)", "np.zeros(X.shape[:-2] + (oh, ow))"),
        'reshape_assumes_divisible': swap(
            ("""    if stride is None:
        stride = (kh, kw)
""", "    stride = (kh, kw)\n"),
            ("oh, ow = (H - kh) // sh + 1, (Wd - kw) // sw + 1",
             """oh, ow = -(-H // kh), -(-Wd // kw)
    X = np.pad(X, [(0, 0)] * (X.ndim - 2) + [(0, oh * kh - H), (0, ow * kw - Wd)], constant_values=-np.inf)"""),
        ),
        'square_kernel_from_first_entry': swap(
            ("kh, kw = (kernel_size, kernel_size) if np.isscalar(kernel_size) else kernel_size",
             "kh = kw = kernel_size if np.isscalar(kernel_size) else kernel_size[0]"),
            ("sh, sw = (stride, stride) if np.isscalar(stride) else stride",
             "sh = sw = stride if np.isscalar(stride) else stride[0]"),
        ),
    },
    'avg_pool2d': {
        'stride_one_by_default': swap("stride = (kh, kw)", "stride = (1, 1)"),
        'divides_by_kernel_height_squared': swap("out / (kh * kw)", "out / (kh * kh)"),
        'ceil_mode_partial_windows': swap(
            ("oh, ow = (H - kh) // sh + 1, (Wd - kw) // sw + 1",
             """oh, ow = -(-(H - kh) // sh) + 1, -(-(Wd - kw) // sw) + 1
    X = np.pad(X, [(0, 0)] * (X.ndim - 2) + [(0, sh * (oh - 1) + kh - H), (0, sw * (ow - 1) + kw - Wd)],
               constant_values=np.nan)
    count = np.zeros(X.shape[:-2] + (oh, ow))"""),
            ("out += X[..., a:a + sh * (oh - 1) + 1:sh, c:c + sw * (ow - 1) + 1:sw]",
             """window = X[..., a:a + sh * (oh - 1) + 1:sh, c:c + sw * (ow - 1) + 1:sw]
            out += np.nan_to_num(window)
            count += ~np.isnan(window)"""),
            ("out / (kh * kw)", "out / count"),
        ),
        'max_instead_of_mean': swap(
            ("np.zeros(X.shape[:-2] + (oh, ow))", "np.full(X.shape[:-2] + (oh, ow), -np.inf)"),
            ("out += X[..., a:a + sh * (oh - 1) + 1:sh, c:c + sw * (ow - 1) + 1:sw]",
             "out = np.maximum(out, X[..., a:a + sh * (oh - 1) + 1:sh, c:c + sw * (ow - 1) + 1:sw])"),
            ("out / (kh * kw)", "out"),
        ),
    },
    'build_digits_cnn': {
        # a different model (a trained bias only), not an edit of the reference's layers: whole cell
        'constant_logits': '''
import torch
from torch import nn
class Constant(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 1, 3)
        self.bias = nn.Parameter(torch.zeros(10))
    def forward(self, x):
        return self.bias.expand(len(x), 10) + 0.0 * self.conv(x).sum()
def build_digits_cnn():
    return Constant()
''',
        'mlp_without_convolution': swap(
            ("nn.Conv2d(1, 8, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),    # 8 × 4 × 4\n", ""),
            ("        nn.Conv2d(8, 16, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 16 × 2 × 2\n", ""),
            ("nn.Linear(64, 10)", "nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)"),
        ),
        'no_pooling_too_many_parameters': swap(
            ("nn.Conv2d(1, 8, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),    # 8 × 4 × 4",
             "nn.Conv2d(1, 32, kernel_size=3, padding=1), nn.ReLU(),"),
            ("        nn.Conv2d(8, 16, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 16 × 2 × 2\n", ""),
            ("nn.Linear(64, 10)", "nn.Linear(32 * 8 * 8, 10)"),
        ),
        'fully_convolutional_output_not_flattened': swap("nn.Flatten(), nn.Linear(64, 10),", "nn.Conv2d(16, 10, 2),"),
        'layers_in_a_plain_list': swap(
            ("def build_digits_cnn():", """class DigitsCNN(nn.Module):
    def __init__(self, *layers):
        super().__init__()
        self.layers = list(layers)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def build_digits_cnn():"""),
            ("return nn.Sequential(", "return DigitsCNN("),
        ),
        'relu_after_the_last_layer': swap("nn.Linear(64, 10),", "nn.Linear(64, 10), nn.ReLU(),"),
        'pools_away_all_positions': swap(
            ("nn.MaxPool2d(2),    # 8 × 4 × 4", "nn.MaxPool2d(8),"),
            ("        nn.Conv2d(8, 16, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 16 × 2 × 2\n", ""),
            ("nn.Linear(64, 10)", "nn.Linear(8, 10)"),
        ),
        'flatten_merges_the_batch': swap("nn.Flatten(), nn.Linear(64, 10),", "nn.Flatten(0), nn.Linear(64, 10),"),
    },
    "max_pool2d_backward": {
        "every_tied_maximum_gets_the_gradient": swap(
            ("np.where(winner == a * kw + c, dY, 0.0)",
             "np.where(windows[..., a * kw + c] == windows.max(axis=-1), dY, 0.0)")),
        "last_maximum_wins_ties": swap(
            ("winner = windows.argmax(axis=-1)", "winner = kh * kw - 1 - windows[..., ::-1].argmax(axis=-1)")),
        "spread_like_average_pooling": swap(
            ("np.where(winner == a * kw + c, dY, 0.0)", "dY / (kh * kw)")),
        "overlapping_windows_overwrite": swap(
            ("dX[..., a:a + sh * (oh - 1) + 1:sh, c:c + sw * (ow - 1) + 1:sw] += np.where(",
             "dX[..., a:a + sh * (oh - 1) + 1:sh, c:c + sw * (ow - 1) + 1:sw] = np.where(")),
        "stride_ignored": swap(
            ("    if stride is None:\n        stride = (kh, kw)\n", "    stride = (kh, kw)\n")),
        "gradient_to_the_window_corner": swap(
            ("np.where(winner == a * kw + c, dY, 0.0)", "(dY if a == 0 and c == 0 else 0.0 * dY)")),
        # a different implementation (torch autograd), nothing of the reference's to edit: whole cell
        "uses_torch_autograd": '''
import numpy as np
def max_pool2d_backward(X, dY, kernel_size, stride=None):
    import torch
    import torch.nn.functional as F
    Xt = torch.tensor(np.asarray(X, float), requires_grad=True)
    (F.max_pool2d(Xt, kernel_size, stride) * torch.tensor(np.asarray(dY, float))).sum().backward()
    return Xt.grad.numpy()
''',
    },
    'train_cnn': {
        'evaluates_on_training_data': swap(("forward(X_val)[1], y_val)", "forward(X_train)[1], y_train)"),
                                           ("argmax(axis=1) == y_val", "argmax(axis=1) == y_train")),
        'shuffles_once': swap("    for epoch in range(epochs):\n        order = rng.permutation(len(X_train))\n",
                              "    order = rng.permutation(len(X_train))\n    for epoch in range(epochs):\n"),
        # the linear layer stepped as soon as its gradient is known: its new weights carry the gradient down
        'updates_before_the_backward_pass': swap(
            ("            dpooled = (dlogits @ params[4])",
             "            params[4], params[5] = params[4] - lr * dW3, params[5] - lr * db3\n"
             "            dpooled = (dlogits @ params[4])"),
            ("for p, g in zip(params, grads)]", "for p, g in zip(params[:4], grads[:4])] + params[4:]")),
        # torch's .grad accumulates until zero_grad(): the NumPy loop that imitates it without the reset
        'gradients_never_reset': swap(
            ("    losses, val_loss, val_accuracy = [], [], []\n",
             "    losses, val_loss, val_accuracy = [], [], []\n    total = [0.0] * 6\n"),
            ("            grads = [dW1, db1, dW2, db2, dW3, db3]\n",
             "            fresh = [dW1, db1, dW2, db2, dW3, db3]\n"
             "            total = [s + np.asarray(g, dtype=float) for s, g in zip(total, fresh)]\n"
             "            grads = total\n")),
        'drops_the_last_short_batch': swap("range(0, len(X_train), batch_size)",
                                           "range(0, len(X_train) - batch_size + 1, batch_size)"),
        'relu_mask_of_the_first_layer_forgotten': swap("dz1 = np.asarray(da1, dtype=float) * (z1 > 0)",
                                                       "dz1 = np.asarray(da1, dtype=float)"),
        'gradient_not_divided_by_the_batch': swap("            dlogits /= len(y)\n", ""),
        # L2 weight decay out of habit: the update is no longer what conv2d_backward returned (issue 39's tracing)
        'adds_weight_decay_to_the_gradients': swap(
            "params = [p - lr * np.asarray(g, dtype=float) for p, g in zip(params, grads)]",
            "params = [p - lr * (np.asarray(g, dtype=float) + 1e-4 * p) for p, g in zip(params, grads)]"),
        'weights_drawn_after_the_first_permutation': swap(
            ("    rng = np.random.default_rng(seed)\n",
             "    rng = np.random.default_rng(seed)\n    first = rng.permutation(len(X_train))\n"),
            ("        order = rng.permutation(len(X_train))\n",
             "        order = first if epoch == 0 else rng.permutation(len(X_train))\n")),
    },
}

# Integration checks: each listed mistake (function/mistake of MUTANTS) must also make the end-to-end
# check fail: the student's own pieces then fail to learn.
INTEGRATION = {
    "test_recover_sobel": ["conv2d_backward/dW_with_flipped_kernel", "conv2d_backward/dW_transposed_window",
                           "conv2d_backward/dW_mean_over_the_batch", "conv2d/flipped_kernel"],
    "test_numpy_cnn": ["max_pool2d_backward/spread_like_average_pooling",
                       "max_pool2d_backward/gradient_to_the_window_corner", "conv2d_backward/dX_without_flip",
                       "conv2d_backward/dX_overwrites_instead_of_accumulating",
                       "train_cnn/adds_weight_decay_to_the_gradients"],
}
