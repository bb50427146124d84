"""The student's functions and objects as a test cell sees them, in the trusted grader.

``RemoteFunction`` is a graded name of the notebook; calling it calls the function in
the sandbox. What comes back is plain data, or a ``Handle`` for any other object (an
instance of the student's class, a torch module): its attributes, methods and
operators are forwarded to the sandbox; it is never true or false, never an array.
"""
from __future__ import annotations

from . import protocol


class RemoteFunction:
    """A graded name of the student's notebook (function or class), called in the sandbox."""

    def __init__(self, sandbox, name: str):
        self._sandbox, self._name = sandbox, name

    def __call__(self, *args, **kwargs):
        return self._sandbox.call(self, args, kwargs)

    def __instancecheck__(self, obj) -> bool:
        if not isinstance(obj, Handle):
            return False
        enc = self._sandbox.encoder()
        return bool(self._sandbox.simple(protocol.ISINSTANCE, enc, obj=enc(obj), cls=enc(self)))

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        enc = self._sandbox.encoder()
        return self._sandbox.simple(protocol.GETATTR, enc, obj=enc(self), name=name)

    def __repr__(self):
        return f"<student's {self._name}>"


def _forward(name, reverse=False):
    """A special method that applies ``protocol.OPERATORS[name]`` in the sandbox."""
    assert name in protocol.OPERATORS

    def method(self, *others):
        args = (others[0], self) if reverse else (self, *others)
        enc = self._sandbox.encoder()
        return self._sandbox.simple(protocol.OPERATOR, enc, name=name, args=enc(list(args)))
    return method


class Handle:
    """An object that lives in the sandbox (an instance of the student's class, a torch module, ...)."""

    __slots__ = ("_sandbox", "_ref_id", "_type_name")

    def __init__(self, sandbox, ref_id, type_name):
        object.__setattr__(self, "_sandbox", sandbox)
        object.__setattr__(self, "_ref_id", ref_id)
        object.__setattr__(self, "_type_name", type_name)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        enc = self._sandbox.encoder()
        return self._sandbox.simple(protocol.GETATTR, enc, obj=enc(self), name=name)

    def __setattr__(self, name, value):
        raise AttributeError("objects of the student's code are read-only in tests")

    def __call__(self, *args, **kwargs):
        return self._sandbox.call(self, args, kwargs)

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return hash((id(self._sandbox), self._ref_id))

    def __repr__(self):
        return f"<{self._type_name} in the student's process>"

    __add__, __radd__ = _forward("add"), _forward("add", True)
    __sub__, __rsub__ = _forward("sub"), _forward("sub", True)
    __mul__, __rmul__ = _forward("mul"), _forward("mul", True)
    __truediv__, __rtruediv__ = _forward("truediv"), _forward("truediv", True)
    __pow__, __rpow__ = _forward("pow"), _forward("pow", True)
    __matmul__, __rmatmul__ = _forward("matmul"), _forward("matmul", True)
    __neg__, __pos__, __abs__ = _forward("neg"), _forward("pos"), _forward("abs")
    __lt__, __le__, __gt__, __ge__ = _forward("lt"), _forward("le"), _forward("gt"), _forward("ge")
    __float__, __int__ = _forward("float"), _forward("int")
    # no __len__/__getitem__/__iter__: a handle is never taken for a sequence of data

    def __bool__(self):
        # a verdict never rests on an object's own idea of its truth: only data is true or false
        raise TypeError(f"a {self._type_name} object was returned where a value (True/False, a number, "
                        f"an array) was expected")

    __array_priority__ = -1

    def __array__(self, *args, **kwargs):
        raise TypeError(f"a {self._type_name} object was returned where an array was expected")
