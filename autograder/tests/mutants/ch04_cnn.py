"""Plausible mistakes in the graded functions of ch04_cnn: each must make its test cell fail.

Written as edits of the reference solutions (``swap``) or, where an edit cannot say it, as the
whole solution cell; the format and the loader are in autograder/tests/mutants/__init__.py.
"""
from autograder.tests.mutants import swap

MUTANTS = {
    'conv1d_full': {
        'correlation_no_flip': '''
import numpy as np
def conv1d_full(f, h):
    f, h = np.asarray(f, float), np.asarray(h, float)
    n, m = len(f), len(h)
    out = np.zeros(n + m - 1)
    for t in range(m):
        out[t:t + n] += h[m - 1 - t] * f
    return out
''',
        'same_length': '''
import numpy as np
def conv1d_full(f, h):
    return np.convolve(f, h, mode="same")
''',
        'length_n_plus_m': '''
import numpy as np
def conv1d_full(f, h):
    f, h = np.asarray(f, float), np.asarray(h, float)
    n, m = len(f), len(h)
    out = np.zeros(n + m)
    for t in range(m):
        out[t:t + n] += h[t] * f
    return out
''',
        'truncated_to_signal_length': '''
import numpy as np
def conv1d_full(f, h):
    f, h = np.asarray(f, float), np.asarray(h, float)
    n = len(f)
    out = np.zeros(n)
    for u in range(n):
        for t in range(len(h)):
            if 0 <= u - t < n:
                out[u] += h[t] * f[u - t]
    return out
''',
    },
    'toeplitz': {
        'transposed': swap(
            ('dtype=',
             ''),
            ('''H
''',
             '''H.T
'''),
        ),
        'flipped_kernel': swap(
            ('dtype=',
             ''),
            ('''h
''',
             '''h[::-1]
'''),
        ),
        'square_n_by_n': '''
import numpy as np
def toeplitz(h, n):
    h = np.asarray(h, float)
    H = np.zeros((n, n))
    for u in range(n):
        for j in range(n):
            if 0 <= u - j < len(h):
                H[u, j] = h[u - j]
    return H
''',
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
        'true_convolution': '''
import numpy as np
def corr2d(X, K):
    X, K = np.asarray(X, float), np.asarray(K, float)[::-1, ::-1]
    kh, kw = K.shape
    oh, ow = X.shape[0] - kh + 1, X.shape[1] - kw + 1
    out = np.zeros((oh, ow))
    for a in range(kh):
        for b in range(kw):
            out += K[a, b] * X[a:a + oh, b:b + ow]
    return out
''',
        'off_by_one_size': '''
import numpy as np
def corr2d(X, K):
    X, K = np.asarray(X, float), np.asarray(K, float)
    kh, kw = K.shape
    oh, ow = X.shape[0] - kh, X.shape[1] - kw
    out = np.zeros((oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[i, j] = (X[i:i + kh, j:j + kw] * K).sum()
    return out
''',
        'kernel_axes_swapped': '''
import numpy as np
def corr2d(X, K):
    X, K = np.asarray(X, float), np.asarray(K, float)
    kh, kw = K.shape
    oh, ow = X.shape[0] - kh + 1, X.shape[1] - kw + 1
    out = np.zeros((oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[i, j] = (X[i:i + kh, j:j + kw] * K.T.reshape(kh, kw)).sum()
    return out
''',
        'square_kernel_assumed': '''
import numpy as np
def corr2d(X, K):
    X, K = np.asarray(X, float), np.asarray(K, float)
    k = K.shape[0]
    oh, ow = X.shape[0] - k + 1, X.shape[1] - k + 1
    out = np.zeros((oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[i, j] = (X[i:i + k, j:j + k] * K[:k, :k]).sum()
    return out
''',
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
        'flipped_kernel': '''
import numpy as np
def conv2d(X, W, b=None, stride=1, padding=0):
    X, W = np.asarray(X, float), np.asarray(W, float)[:, :, ::-1, ::-1]
    sh, sw = (stride, stride) if np.isscalar(stride) else stride
    ph, pw = (padding, padding) if np.isscalar(padding) else padding
    N, C, H, Wd = X.shape
    C_out, C_in, kh, kw = W.shape
    Xp = np.pad(X, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh, ow = (H + 2 * ph - kh) // sh + 1, (Wd + 2 * pw - kw) // sw + 1
    out = np.zeros((N, C_out, oh, ow))
    for a in range(kh):
        for c in range(kw):
            out += np.einsum("nchw,oc->nohw",
                             Xp[:, :, a:a + sh * (oh - 1) + 1:sh, c:c + sw * (ow - 1) + 1:sw], W[:, :, a, c])
    if b is not None:
        out += np.asarray(b, float)[None, :, None, None]
    return out
''',
        'tuple_uses_first_entry_only': '''
import numpy as np
def conv2d(X, W, b=None, stride=1, padding=0):
    X, W = np.asarray(X, float), np.asarray(W, float)
    s = stride if np.isscalar(stride) else stride[0]
    p = padding if np.isscalar(padding) else padding[0]
    N, C, H, Wd = X.shape
    C_out, C_in, kh, kw = W.shape
    Xp = np.pad(X, ((0, 0), (0, 0), (p, p), (p, p)))
    oh, ow = (H + 2 * p - kh) // s + 1, (Wd + 2 * p - kw) // s + 1
    out = np.zeros((N, C_out, oh, ow))
    for a in range(kh):
        for c in range(kw):
            out += np.einsum("nchw,oc->nohw",
                             Xp[:, :, a:a + s * (oh - 1) + 1:s, c:c + s * (ow - 1) + 1:s], W[:, :, a, c])
    if b is not None:
        out += np.asarray(b, float)[None, :, None, None]
    return out
''',
        'pads_one_side_only': '''
import numpy as np
def conv2d(X, W, b=None, stride=1, padding=0):
    X, W = np.asarray(X, float), np.asarray(W, float)
    sh, sw = (stride, stride) if np.isscalar(stride) else stride
    ph, pw = (padding, padding) if np.isscalar(padding) else padding
    N, C, H, Wd = X.shape
    C_out, C_in, kh, kw = W.shape
    Xp = np.pad(X, ((0, 0), (0, 0), (ph, 0), (pw, 0)))
    oh, ow = (H + ph - kh) // sh + 1, (Wd + pw - kw) // sw + 1
    out = np.zeros((N, C_out, oh, ow))
    for a in range(kh):
        for c in range(kw):
            out += np.einsum("nchw,oc->nohw",
                             Xp[:, :, a:a + sh * (oh - 1) + 1:sh, c:c + sw * (ow - 1) + 1:sw], W[:, :, a, c])
    if b is not None:
        out += np.asarray(b, float)[None, :, None, None]
    return out
''',
        'no_sum_over_input_channels': '''
import numpy as np
def conv2d(X, W, b=None, stride=1, padding=0):
    X, W = np.asarray(X, float), np.asarray(W, float)
    sh, sw = (stride, stride) if np.isscalar(stride) else stride
    ph, pw = (padding, padding) if np.isscalar(padding) else padding
    N, C, H, Wd = X.shape
    C_out, C_in, kh, kw = W.shape
    Xp = np.pad(X, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh, ow = (H + 2 * ph - kh) // sh + 1, (Wd + 2 * pw - kw) // sw + 1
    out = np.zeros((N, C_out, oh, ow))
    for a in range(kh):
        for c in range(kw):
            window = Xp[:, :1, a:a + sh * (oh - 1) + 1:sh, c:c + sw * (ow - 1) + 1:sw]
            out += np.einsum("nchw,oc->nohw", window, W[:, :1, a, c])
    if b is not None:
        out += np.asarray(b, float)[None, :, None, None]
    return out
''',
        'bias_ignored': '''
import numpy as np
def conv2d(X, W, b=None, stride=1, padding=0):
    X, W = np.asarray(X, float), np.asarray(W, float)
    sh, sw = (stride, stride) if np.isscalar(stride) else stride
    ph, pw = (padding, padding) if np.isscalar(padding) else padding
    N, C, H, Wd = X.shape
    C_out, C_in, kh, kw = W.shape
    Xp = np.pad(X, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh, ow = (H + 2 * ph - kh) // sh + 1, (Wd + 2 * pw - kw) // sw + 1
    out = np.zeros((N, C_out, oh, ow))
    for a in range(kh):
        for c in range(kw):
            out += np.einsum("nchw,oc->nohw",
                             Xp[:, :, a:a + sh * (oh - 1) + 1:sh, c:c + sw * (ow - 1) + 1:sw], W[:, :, a, c])
    return out
''',
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
        'zeros_of_the_right_shapes': '''
import numpy as np
def conv2d_backward(X, W, dY):
    return np.zeros(np.shape(X)), np.zeros(np.shape(W)), np.zeros(np.shape(W)[0])
''',
        'dX_without_flip': '''
import numpy as np
def conv2d_backward(X, W, dY):
    X, W, dY = np.asarray(X, float), np.asarray(W, float), np.asarray(dY, float)
    kh, kw = W.shape[2:]
    oh, ow = dY.shape[2:]
    dX, dW = np.zeros_like(X), np.zeros_like(W)
    for a in range(kh):
        for c in range(kw):
            dW[:, :, a, c] = np.einsum("nohw,nchw->oc", dY, X[:, :, a:a + oh, c:c + ow])
            dX[:, :, a:a + oh, c:c + ow] += np.einsum("nohw,oc->nchw", dY, W[:, :, kh - 1 - a, kw - 1 - c])
    return dX, dW, dY.sum(axis=(0, 2, 3))
''',
        'db_mean_not_sum': '''
import numpy as np
def conv2d_backward(X, W, dY):
    X, W, dY = np.asarray(X, float), np.asarray(W, float), np.asarray(dY, float)
    kh, kw = W.shape[2:]
    oh, ow = dY.shape[2:]
    dX, dW = np.zeros_like(X), np.zeros_like(W)
    for a in range(kh):
        for c in range(kw):
            dW[:, :, a, c] = np.einsum("nohw,nchw->oc", dY, X[:, :, a:a + oh, c:c + ow])
            dX[:, :, a:a + oh, c:c + ow] += np.einsum("nohw,oc->nchw", dY, W[:, :, a, c])
    return dX, dW, dY.mean(axis=(0, 2, 3))
''',
        'dW_first_image_only': '''
import numpy as np
def conv2d_backward(X, W, dY):
    X, W, dY = np.asarray(X, float), np.asarray(W, float), np.asarray(dY, float)
    kh, kw = W.shape[2:]
    oh, ow = dY.shape[2:]
    dX, dW = np.zeros_like(X), np.zeros_like(W)
    for a in range(kh):
        for c in range(kw):
            dW[:, :, a, c] = np.einsum("ohw,chw->oc", dY[0], X[0, :, a:a + oh, c:c + ow])
            dX[:, :, a:a + oh, c:c + ow] += np.einsum("nohw,oc->nchw", dY, W[:, :, a, c])
    return dX, dW, dY.sum(axis=(0, 2, 3))
''',
        'dX_overwrites_instead_of_accumulating': '''
import numpy as np
def conv2d_backward(X, W, dY):
    X, W, dY = np.asarray(X, float), np.asarray(W, float), np.asarray(dY, float)
    kh, kw = W.shape[2:]
    oh, ow = dY.shape[2:]
    dX, dW = np.zeros_like(X), np.zeros_like(W)
    for a in range(kh):
        for c in range(kw):
            dW[:, :, a, c] = np.einsum("nohw,nchw->oc", dY, X[:, :, a:a + oh, c:c + ow])
            dX[:, :, a:a + oh, c:c + ow] = np.einsum("nohw,oc->nchw", dY, W[:, :, a, c])
    return dX, dW, dY.sum(axis=(0, 2, 3))
''',
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
        'dW_with_flipped_kernel': '''
import numpy as np
def conv2d_backward(X, W, dY):
    X, W, dY = np.asarray(X, float), np.asarray(W, float), np.asarray(dY, float)
    kh, kw = W.shape[2:]
    oh, ow = dY.shape[2:]
    dX, dW = np.zeros_like(X), np.zeros_like(W)
    for a in range(kh):
        for c in range(kw):
            dW[:, :, kh - 1 - a, kw - 1 - c] = np.einsum("nohw,nchw->oc", dY, X[:, :, a:a + oh, c:c + ow])
            dX[:, :, a:a + oh, c:c + ow] += np.einsum("nohw,oc->nchw", dY, W[:, :, a, c])
    return dX, dW, dY.sum(axis=(0, 2, 3))
''',
        'dW_transposed_window': '''
import numpy as np
def conv2d_backward(X, W, dY):
    X, W, dY = np.asarray(X, float), np.asarray(W, float), np.asarray(dY, float)
    kh, kw = W.shape[2:]
    oh, ow = dY.shape[2:]
    dX, dW = np.zeros_like(X), np.zeros_like(W)
    for a in range(kh):
        for c in range(kw):
            dW[:, :, a, c] = np.einsum("nohw,ncwh->oc", dY, X[:, :, c:c + ow, a:a + oh])
            dX[:, :, a:a + oh, c:c + ow] += np.einsum("nohw,oc->nchw", dY, W[:, :, a, c])
    return dX, dW, dY.sum(axis=(0, 2, 3))
''',
        'dW_mean_over_the_batch': '''
import numpy as np
def conv2d_backward(X, W, dY):
    X, W, dY = np.asarray(X, float), np.asarray(W, float), np.asarray(dY, float)
    kh, kw = W.shape[2:]
    oh, ow = dY.shape[2:]
    dX, dW = np.zeros_like(X), np.zeros_like(W)
    for a in range(kh):
        for c in range(kw):
            dW[:, :, a, c] = np.einsum("nohw,nchw->oc", dY, X[:, :, a:a + oh, c:c + ow]) / len(X)
            dX[:, :, a:a + oh, c:c + ow] += np.einsum("nohw,oc->nchw", dY, W[:, :, a, c])
    return dX, dW, dY.sum(axis=(0, 2, 3))
''',
    },
    'max_pool2d': {
        'stride_one_by_default': swap(
            ('dtype=',
             ''),
            ('''if stride is None:
        stride = (kh, kw)
    sh, sw = (stride, stride) if np.isscalar(stride) else stride''',
             'sh, sw = (1, 1) if stride is None else ((stride, stride) if np.isscalar(stride) else stride)'),
        ),
        'starts_at_zero': swap(
            ('dtype=',
             ''),
            ('''if stride is None:
        stride = (kh, kw)
    sh, sw = (stride, stride) if np.isscalar(stride) else stride''',
             'sh, sw = (kh, kw) if stride is None else ((stride, stride) if np.isscalar(stride) else stride)'),
            ('full(X.shape[:-2] + (oh, ow), -np.inf',
             'zeros(X.shape[:-2] + (oh, ow)'),
        ),
        'reshape_assumes_divisible': '''
import numpy as np
def max_pool2d(X, kernel_size, stride=None):
    X = np.asarray(X, float)
    kh, kw = (kernel_size, kernel_size) if np.isscalar(kernel_size) else kernel_size
    N, C, H, Wd = X.shape
    oh, ow = -(-H // kh), -(-Wd // kw)
    Xp = np.pad(X, ((0, 0), (0, 0), (0, oh * kh - H), (0, ow * kw - Wd)), constant_values=-np.inf)
    return Xp.reshape(N, C, oh, kh, ow, kw).max(axis=(3, 5))
''',
        'square_kernel_from_first_entry': '''
import numpy as np
def max_pool2d(X, kernel_size, stride=None):
    X = np.asarray(X, float)
    k = kernel_size if np.isscalar(kernel_size) else kernel_size[0]
    s = k if stride is None else (stride if np.isscalar(stride) else stride[0])
    H, Wd = X.shape[-2:]
    oh, ow = (H - k) // s + 1, (Wd - k) // s + 1
    out = np.full(X.shape[:-2] + (oh, ow), -np.inf)
    for a in range(k):
        for c in range(k):
            out = np.maximum(out, X[..., a:a + s * (oh - 1) + 1:s, c:c + s * (ow - 1) + 1:s])
    return out
''',
    },
    'avg_pool2d': {
        'stride_one_by_default': swap(
            ('dtype=',
             ''),
            ('''if stride is None:
        stride = (kh, kw)
    sh, sw = (stride, stride) if np.isscalar(stride) else stride''',
             'sh, sw = (1, 1) if stride is None else ((stride, stride) if np.isscalar(stride) else stride)'),
        ),
        'divides_by_kernel_height_squared': swap(
            ('dtype=',
             ''),
            ('''if stride is None:
        stride = (kh, kw)
    sh, sw = (stride, stride) if np.isscalar(stride) else stride''',
             'sh, sw = (kh, kw) if stride is None else ((stride, stride) if np.isscalar(stride) else stride)'),
            ('''* kw)
''',
             '''* kh)
'''),
        ),
        'ceil_mode_partial_windows': '''
import numpy as np
def avg_pool2d(X, kernel_size, stride=None):
    X = np.asarray(X, float)
    kh, kw = (kernel_size, kernel_size) if np.isscalar(kernel_size) else kernel_size
    sh, sw = (kh, kw) if stride is None else ((stride, stride) if np.isscalar(stride) else stride)
    H, Wd = X.shape[-2:]
    oh, ow = -(-(H - kh) // sh) + 1, -(-(Wd - kw) // sw) + 1
    out = np.zeros(X.shape[:-2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[..., i, j] = X[..., i * sh:i * sh + kh, j * sw:j * sw + kw].mean(axis=(-2, -1))
    return out
''',
        'max_instead_of_mean': swap(
            ('dtype=',
             ''),
            ('''if stride is None:
        stride = (kh, kw)
    sh, sw = (stride, stride) if np.isscalar(stride) else stride''',
             'sh, sw = (kh, kw) if stride is None else ((stride, stride) if np.isscalar(stride) else stride)'),
            ('zeros(X.shape[:-2] + (oh, ow)',
             'full(X.shape[:-2] + (oh, ow), -np.inf'),
            ('''+= X[..., a:a + sh * (oh - 1) + 1:sh, c:c + sw * (ow - 1) + 1:sw]
    return out / (kh * kw)''',
             '''= np.maximum(out, X[..., a:a + sh * (oh - 1) + 1:sh, c:c + sw * (ow - 1) + 1:sw])
    return out'''),
        ),
    },
    'build_digits_cnn': {
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
        'mlp_without_convolution': '''
import torch
from torch import nn
def build_digits_cnn():
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
''',
        'no_pooling_too_many_parameters': '''
import torch
from torch import nn
def build_digits_cnn():
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(32 * 8 * 8, 10))
''',
        'fully_convolutional_output_not_flattened': '''
import torch
from torch import nn
def build_digits_cnn():
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 10, 2))
''',
        'layers_in_a_plain_list': '''
import torch
from torch import nn
class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                       nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                       nn.Flatten(), nn.Linear(64, 10)]
    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
def build_digits_cnn():
    return DigitsCNN()
''',
        'relu_after_the_last_layer': '''
import torch
from torch import nn
def build_digits_cnn():
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(64, 10), nn.ReLU())
''',
        'pools_away_all_positions': '''
import torch
from torch import nn
def build_digits_cnn():
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(8),
                         nn.Flatten(), nn.Linear(8, 10))
''',
        'flatten_merges_the_batch': '''
import torch
from torch import nn
class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Linear(64, 10)
    def forward(self, x):
        return self.head(torch.flatten(self.features(x)))
def build_digits_cnn():
    return DigitsCNN()
''',
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
}

# Integration checks: each listed mistake (function/mistake of MUTANTS) must also make the end-to-end
# check fail: the student's own pieces then fail to learn.
INTEGRATION = {
    "test_recover_sobel": ["conv2d_backward/dW_with_flipped_kernel", "conv2d_backward/dW_transposed_window",
                           "conv2d_backward/dW_mean_over_the_batch", "conv2d/flipped_kernel"],
    "test_numpy_cnn": ["max_pool2d_backward/spread_like_average_pooling",
                       "max_pool2d_backward/gradient_to_the_window_corner", "conv2d_backward/dX_without_flip",
                       "conv2d_backward/dX_overwrites_instead_of_accumulating"],
}
