"""Small helpers shared by the course tests."""


def counting(fn):
    """``fn`` with a list ``.calls`` that grows by one per call (a new function object each time)."""
    def wrapper(*args, **kwargs):
        wrapper.calls.append(args)
        return fn(*args, **kwargs)
    wrapper.calls = []
    return wrapper
