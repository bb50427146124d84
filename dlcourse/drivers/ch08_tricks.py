"""Drivers of ch08_tricks' checks (see ``dlcourse/drivers/__init__.py``): public helper code that
calls the student's functions where they run and returns plain data; every verdict is reached in the
test cell."""


def dropout_eval_copy(dropout):
    """Is the evaluation-mode result of ``dropout`` a copy of x, not x itself? Returns the result's values,
    x after writing into the result, and a training-mode result."""
    import numpy as np
    x = np.arange(6.0).reshape(2, 3)
    out = dropout(x, 0.4, np.random.default_rng(0), training=False)
    values = np.array(out, dtype=float, copy=True)
    if isinstance(out, np.ndarray) and out.flags.writeable:
        out[...] = -7.0                      # writing into the result must not change x
    trained = np.array(dropout(np.arange(6.0).reshape(2, 3), 0.4, np.random.default_rng(0)), dtype=float)
    return {"values": values, "x_after": x, "training": trained}


def batchnorm_eval_copies(batchnorm_forward):
    """Are the running statistics ``batchnorm_forward`` returns in evaluation mode copies? Returns its
    outputs' values and the running statistics given after writing into the returned ones."""
    import numpy as np
    x = np.array([[1.0, 2.0], [3.0, 0.0], [0.5, -1.0]])
    rm, rv = np.array([0.5, -0.5]), np.array([2.0, 0.5])
    y, new_rm, new_rv = batchnorm_forward(x, np.ones(2), np.zeros(2), rm, rv, False)
    values = [np.array(a, dtype=float, copy=True) for a in (y, new_rm, new_rv)]
    for a in (new_rm, new_rv):
        if isinstance(a, np.ndarray) and a.flags.writeable:
            a[...] = 99.0                    # writing into the returned statistics must not change the inputs
    return {"values": values, "rm_after": rm, "rv_after": rv}
