"""Shortcuts of ch08_tricks (issue 39, finding 3): the normalisation backward passes computed by torch autograd,
with the from-scratch watch's report forged from inside the student's own process (its replies lose their
observations), as a submission measured gaining 7 points before the grader read the answers' source."""

_FORGE = '''
    import sys
    protocol = sys.modules.get("autograder.sandbox.protocol")
    if protocol is not None and not getattr(protocol, "forged", False):
        real = protocol.reply
        def forged(ok, **fields):
            fields.pop("observations", None)  # the watch saw torch: the grader is never told
            return real(ok, **fields)
        protocol.reply, protocol.forged = forged, True
'''

LAYERNORM = '''import numpy as np

def layernorm_backward(dy, x, gamma, eps=1e-5):
    import torch
''' + _FORGE + '''
    xt = torch.tensor(np.asarray(x, dtype=float), requires_grad=True)
    gt = torch.tensor(np.asarray(gamma, dtype=float), requires_grad=True)
    bt = torch.zeros_like(gt, requires_grad=True)
    y = torch.nn.functional.layer_norm(xt, (xt.shape[-1],), gt, bt, eps)
    (y * torch.tensor(np.asarray(dy, dtype=float))).sum().backward()
    return xt.grad.numpy(), gt.grad.numpy(), bt.grad.numpy()
'''

BATCHNORM = '''import numpy as np

def batchnorm_backward(dy, x, gamma, eps=1e-5):
    import torch
''' + _FORGE + '''
    xt = torch.tensor(np.asarray(x, dtype=float), requires_grad=True)
    gt = torch.tensor(np.asarray(gamma, dtype=float), requires_grad=True)
    bt = torch.zeros_like(gt, requires_grad=True)
    y = torch.nn.functional.batch_norm(xt, None, None, gt, bt, training=True, eps=eps)
    (y * torch.tensor(np.asarray(dy, dtype=float))).sum().backward()
    return xt.grad.numpy(), gt.grad.numpy(), bt.grad.numpy()
'''

SHORTCUTS = {
    "torch_norm_backward_forged_watch": {
        "replace": {"layernorm_backward": LAYERNORM, "batchnorm_backward": BATCHNORM},
    },
}
