"""Small helpers shared by the course tests."""


def counting(fn):
    """``fn`` with a list ``.calls`` that grows by one per call (a new function object each time)."""
    def wrapper(*args, **kwargs):
        wrapper.calls.append(args)
        return fn(*args, **kwargs)
    wrapper.calls = []
    return wrapper


def stub(*args, **kwargs):
    """A student's function not written yet."""
    raise NotImplementedError()


def number(pattern, text):
    """The number a regex group captures in a widget's readout."""
    import re
    match = re.search(pattern, text)
    assert match, f"{pattern!r} not in readout {text!r}"
    return float(match.group(1))
