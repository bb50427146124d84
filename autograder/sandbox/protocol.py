"""The requests the grader and the sandbox exchange: one table, read by both sides.

A request is a message (``wire``) whose header is ``{"op": <name>, <fields>}``; its
answer is a reply, ``{"reply": true, "ok": <bool>, "value" | "error", ...}``. The
grader asks and the sandbox answers, except for ``CALLBACK``: while it serves a
``CALL``, the student's code may call a function of the test (a callable passed
as an argument), and the sandbox then asks the grader. Each side waits for its
reply and serves the other side's requests meanwhile, so calls nest.

The server (``server``) answers the operations served by ``SANDBOX`` with one
handler each; the client (``client``) builds its requests with ``request`` and
answers ``CALLBACK``. Names of operations appear nowhere else.
"""
from __future__ import annotations

import operator
from typing import NamedTuple

from .wire import WireError

SANDBOX, GRADER = "sandbox", "grader"   # who answers an operation
CONFIG_VARIABLE = "AUTOGRADER_SANDBOX"  # the environment variable that carries the sandbox's configuration
DRIVERS = "dlcourse.drivers"            # the package whose functions RUN may name


class Operation(NamedTuple):
    name: str
    fields: tuple[str, ...]  # the request's fields besides "op"
    served_by: str           # SANDBOX or GRADER
    summary: str             # what it does; what its reply holds besides ok/error


EXEC = Operation("exec", ("code", "name"), SANDBOX,
                 "run a notebook cell; reply: error (None or {type, message}), ok always true")
CALL = Operation("call", ("target", "args", "kwargs", "monitors"), SANDBOX,
                 "call a graded name or a returned object under a Watch of the monitors; reply: value, after (the "
                 "array arguments the call changed, and the Generator ones, as they are after it), observations "
                 "(what the Watch saw)")
GETATTR = Operation("getattr", ("obj", "name"), SANDBOX, "an attribute of an object in the sandbox; reply: value")
OPERATOR = Operation("op", ("name", "args"), SANDBOX, "OPERATORS[name](*args) in the sandbox; reply: value")
ISINSTANCE = Operation("isinstance", ("obj", "cls"), SANDBOX, "isinstance(obj, cls) in the sandbox; reply: value")
RUN = Operation("run", ("module", "source", "name", "args", "kwargs", "monitors"), SANDBOX,
                "call a test's driver: function name of module (a module of DRIVERS, imported there), or defined "
                "from its source (only while verdicts.SOURCE_DRIVERS_REFUSED is off), under a Watch of the monitors "
                "when there are any; reply: value, observations (what the Watch saw)")
RELEASE = Operation("release", (), SANDBOX, "forget every object handed out so far; reply: value None")
CALLBACK = Operation("callback", ("id", "args", "kwargs"), GRADER,
                     "call a test's function passed to the student's code; reply: value, or error (a string)")

OPERATIONS = {op.name: op for op in (EXEC, CALL, GETATTR, OPERATOR, ISINSTANCE, RUN, RELEASE, CALLBACK)}

# What OPERATOR may apply to an object of the student's (the grader's proxies forward these).
OPERATORS = {name: getattr(operator, name) for name in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "neg", "pos", "abs", "matmul",
    "lt", "le", "gt", "ge", "eq", "ne", "getitem", "contains")}
OPERATORS.update(float=float, int=int, bool=bool, len=len, repr=repr, str=str, list=list)


def request(op: Operation, **fields) -> dict:
    """The header of a request for ``op`` (its fields already encoded)."""
    unknown = set(fields) - set(op.fields)
    if unknown:
        raise ValueError(f"{op.name} has no field {sorted(unknown)[0]!r}")
    return {"op": op.name, **fields}


def operation(header: dict, served_by: str) -> Operation | None:
    """The operation a received request asks for, if this side (``served_by``) serves it."""
    op = OPERATIONS.get(header.get("op"))
    return op if op is not None and op.served_by == served_by else None


_OBSERVATIONS = {"torch_used": list, "line_count": int, "tampered": bool, "threads": bool}


def check_reply(op: Operation, header: dict, number=None) -> dict:
    """``header`` if it is a well-formed reply to request ``number`` of ``op`` (still encoded), else
    ``wire.WireError`` (what the other side sent wrong). The grader checks every reply before reading it."""
    if not isinstance(header, dict) or header.get("reply") is not True or not isinstance(header.get("ok"), bool):
        raise WireError("not a reply")
    if header.get("n") != number:
        raise WireError("a reply to another request")
    error = header.get("error")
    if op is EXEC or not header["ok"]:
        if op in (EXEC, RELEASE) and not header["ok"]:
            raise WireError(f"{op.name} cannot fail")
        if not isinstance(error, dict) and (error is not None or not header["ok"]):
            raise WireError("malformed error")
        if error is not None and not (isinstance(error.get("type"), str) and isinstance(error.get("message"), str)):
            raise WireError("malformed error")
    elif "value" not in header:
        raise WireError("a reply without its value")
    if op is RELEASE and header.get("value") is not None:
        raise WireError("release answers None")
    if op is CALL:
        after = header.get("after") or []
        if not isinstance(after, list) or not all(
                isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], (int, str)) for pair in after):
            raise WireError("malformed arguments after the call")
    if op in (CALL, RUN):
        observations = header.get("observations") or {}
        if not isinstance(observations, dict) or any(
                not isinstance(observations.get(key, kind()), kind) for key, kind in _OBSERVATIONS.items()):
            raise WireError("malformed observations")
        if not all(isinstance(name, str) for name in observations.get("torch_used", [])):
            raise WireError("malformed observations")
    return header


def reply(ok: bool, **fields) -> dict:
    """The header of a reply."""
    return {"reply": True, "ok": ok, **fields}


def is_reply(header: dict) -> bool:
    return bool(header.get("reply"))
