"""Messages between the trusted grader and the sandbox: JSON plus raw array buffers, never pickle.

A message is a JSON header (the requests and replies of ``protocol``) followed by
raw buffers. What crosses the boundary is plain data: None, bool, int, float,
complex, str, bytes, lists, tuples, dicts, NumPy arrays and scalars of numeric
dtypes, torch tensors, NumPy Generators (their bit generator state), and three
kinds of reference, which each side maps with its own hooks: ``ref`` (an object
living in the sandbox), ``cb`` (a callable living in the grader) and ``global``
(a name of the notebook's namespace in the sandbox). Decoding builds fresh
objects of those types only, so a message from the sandbox can never run code
in the trusted process.
"""
from __future__ import annotations

import json
import math
import socket
import struct
import time

import numpy as np

from ..settings import GRADER

MAX_MESSAGE = GRADER.wire_message_bytes
_ALLOWED_KINDS = set("biufc")
_LEN = struct.Struct("!Q")


class WireError(Exception):
    """A malformed or oversized message."""


def ref(id: int, type_name: str) -> dict:
    """The node of an object that lives in the sandbox."""
    return {"$": "ref", "id": int(id), "t": str(type_name)}


def callback(id: int) -> dict:
    """The node of a callable that lives in the grader."""
    return {"$": "cb", "id": int(id)}


def global_name(name: str) -> dict:
    """The node of a name in the sandbox's notebook namespace (a graded function passed as an argument)."""
    return {"$": "global", "name": str(name)}


def _dtype(spec: str) -> np.dtype:
    dtype = np.dtype(spec)
    if dtype.kind not in _ALLOWED_KINDS or dtype.hasobject:
        raise WireError(f"dtype {spec!r} may not cross the boundary")
    return dtype


class Encoder:
    """Turns a value into (json-able tree, buffers). ``on_object`` maps anything else to a tree
    (a reference node, or raises TypeError)."""

    def __init__(self, on_object):
        self.on_object = on_object
        self.buffers: list[bytes] = []

    def _buffer(self, data: bytes) -> int:
        self.buffers.append(data)
        return len(self.buffers) - 1

    def __call__(self, value):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return value if abs(value) < 2 ** 53 else {"$": "bigint", "v": str(value)}
        if isinstance(value, float):
            special = value != value or value in (float("inf"), float("-inf"))  # NaN and infinities: not JSON
            return {"$": "float", "v": repr(value)} if special else value
        if isinstance(value, complex):
            return {"$": "complex", "re": self(value.real), "im": self(value.imag)}
        if isinstance(value, (bytes, bytearray)):
            return {"$": "bytes", "b": self._buffer(bytes(value))}
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, tuple):
            return {"$": "tuple", "v": [self(v) for v in value]}
        if isinstance(value, dict):
            return {"$": "dict", "v": [[self(k), self(v)] for k, v in value.items()]}
        if isinstance(value, np.ndarray) and value.dtype.kind in _ALLOWED_KINDS:
            arr = np.asarray(value, order="C")  # (np.ascontiguousarray makes a 0-d array 1-d)
            return {"$": "nd", "dtype": arr.dtype.str, "shape": list(arr.shape), "b": self._buffer(arr.tobytes())}
        if isinstance(value, np.generic) and value.dtype.kind in _ALLOWED_KINDS:
            return {"$": "np", "dtype": value.dtype.str, "b": self._buffer(value.tobytes())}
        if isinstance(value, np.random.Generator):
            return {"$": "rng", "state": _jsonable(value.bit_generator.state)}
        torch = _torch_if_loaded()
        if torch is not None and isinstance(value, torch.Tensor):
            tensor = value.detach().cpu()
            return {"$": "tensor", "nd": self(tensor.resolve_conj().resolve_neg().numpy()),
                    "grad": bool(value.requires_grad)}
        return self.on_object(value)


def _jsonable(state):
    if isinstance(state, dict):
        return {k: _jsonable(v) for k, v in state.items()}
    if isinstance(state, np.ndarray):
        return {"$nd": state.tolist(), "dtype": state.dtype.str}
    if isinstance(state, np.integer):
        return int(state)
    return state


def _from_jsonable(state):
    if isinstance(state, dict):
        if "$nd" in state:
            return np.array(state["$nd"], dtype=_dtype(state["dtype"]))
        return {k: _from_jsonable(v) for k, v in state.items()}
    return state


def _torch_if_loaded():
    import sys
    return sys.modules.get("torch")


class Decoder:
    """Rebuilds a value; ``on_ref``/``on_callback``/``on_global`` say what references become here.

    One decoder serves one message and cannot amplify it: each raw buffer may be referenced once
    (a second reference is refused), and the nodes it builds and the bytes it allocates are counted
    against ``max_nodes`` and ``max_bytes`` before anything is allocated."""

    MAX_DEPTH = GRADER.decode_depth
    MAX_NODES = GRADER.decode_nodes
    MAX_BYTES = GRADER.decode_bytes

    def __init__(self, buffers, on_ref, on_callback, on_global, max_nodes: int | None = None,
                 max_bytes: int | None = None):
        self.buffers = buffers
        self.on_ref, self.on_callback, self.on_global = on_ref, on_callback, on_global
        self.depth = 0
        self.nodes, self.max_nodes = 0, max_nodes or self.MAX_NODES
        self.bytes, self.max_bytes = 0, max_bytes or self.MAX_BYTES
        self.used: set[int] = set()
        self.arrays: dict[int, tuple] = {}  # id of each array built -> (it, its shape, dtype and bytes as received)

    def _count(self, nodes: int = 1, size: int = 0) -> None:
        self.nodes += nodes
        self.bytes += size
        if self.nodes > self.max_nodes or self.bytes > self.max_bytes:
            raise WireError("the value is too large")

    def _buffer(self, index) -> bytes:
        """A raw buffer, at most once per message, counted before it is copied."""
        index = int(index)
        if index in self.used or not 0 <= index < len(self.buffers):
            raise WireError("a buffer is referenced twice, or does not exist")
        self.used.add(index)
        data = self.buffers[index]
        self._count(0, len(data))
        return data

    def received(self, value) -> tuple | None:
        """(shape, dtype, bytes) of an array this decoder built, as it arrived; None for any other value."""
        found = self.arrays.get(id(value))
        return found[1:] if found is not None and found[0] is value else None

    def __call__(self, tree):
        self._count()
        if tree is None or isinstance(tree, (bool, int, float, str)):
            if isinstance(tree, str):
                self._count(0, len(tree))
            return tree
        self.depth += 1
        try:
            if self.depth > self.MAX_DEPTH:
                raise WireError("value nested too deeply")
            return self._node(tree)
        finally:
            self.depth -= 1

    def _node(self, tree):
        if isinstance(tree, list):
            return [self(v) for v in tree]
        if not isinstance(tree, dict):
            raise WireError("unexpected node")
        kind = tree.get("$")
        if kind == "tuple":
            return tuple(self(v) for v in tree["v"])
        if kind == "dict":
            return {self(k): self(v) for k, v in tree["v"]}
        if kind == "float":
            return float(tree["v"])
        if kind == "bigint":
            text = str(tree["v"])
            if len(text) > 400:
                raise WireError("integer too large")
            return int(text)
        if kind == "complex":
            return complex(self(tree["re"]), self(tree["im"]))
        if kind == "bytes":
            return self._buffer(tree["b"])
        if kind == "nd":
            dtype = _dtype(tree["dtype"])
            shape = tuple(int(s) for s in tree["shape"])
            if len(shape) > 32 or any(s < 0 for s in shape):
                raise WireError("array shape is malformed")
            data = self._buffer(tree["b"])
            if len(data) != dtype.itemsize * math.prod(shape):
                raise WireError("array buffer has the wrong size")
            array = np.frombuffer(data, dtype=dtype).reshape(shape).copy()
            self.arrays[id(array)] = (array, shape, dtype.str, data)
            return array
        if kind == "np":
            dtype = _dtype(tree["dtype"])
            data = self._buffer(tree["b"])
            if len(data) != dtype.itemsize:
                raise WireError("scalar buffer has the wrong size")
            return np.frombuffer(data, dtype=dtype)[0]
        if kind == "rng":
            self._count(len(json.dumps(tree["state"])) // 8)
            state = _from_jsonable(tree["state"])
            name = state.get("bit_generator")
            if name not in ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"):
                raise WireError("unknown bit generator")
            bitgen = getattr(np.random, name)()
            bitgen.state = state
            return np.random.Generator(bitgen)
        if kind == "tensor":
            import torch
            tensor = torch.from_numpy(self(tree["nd"]))
            return tensor.requires_grad_(True) if tree.get("grad") and tensor.is_floating_point() else tensor
        if kind == "ref":
            return self.on_ref(int(tree["id"]), str(tree.get("t", ""))[:100])
        if kind == "cb":
            return self.on_callback(int(tree["id"]))
        if kind == "global":
            return self.on_global(str(tree["name"]))
        raise WireError(f"unknown node kind {kind!r}")


def send(sock: socket.socket, message: dict, encoder: Encoder) -> None:
    """Send ``message`` whose values were already encoded with ``encoder`` (its buffers follow)."""
    header = json.dumps(message, allow_nan=True).encode()
    parts = [_LEN.pack(len(header)), header, _LEN.pack(len(encoder.buffers))]
    for buf in encoder.buffers:
        parts += [_LEN.pack(len(buf)), buf]
    sock.sendall(b"".join(parts))


class Reader:
    """The incoming side of a socket, read ahead in pieces of up to ``READ_AHEAD`` bytes, so that a small
    message costs one system call. Every message on the socket is read through the same reader (the bytes
    it has read ahead are the next message's)."""

    READ_AHEAD = 1 << 16

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.pending = bytearray()

    def exact(self, n: int, deadline: float | None) -> bytes:
        """The next ``n`` bytes; the whole of them, not each read, must arrive by ``deadline`` (no trickling)."""
        pending = self.pending
        while len(pending) < n:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise socket.timeout("the message did not arrive in time")
                self.sock.settimeout(left)
            chunk = self.sock.recv(min(max(n - len(pending), self.READ_AHEAD), 1 << 20))
            if not chunk:
                raise EOFError("the other side closed the connection")
            pending += chunk
        data = bytes(pending[:n])
        del pending[:n]
        return data


def recv(reader: Reader, deadline: float | None = None, max_header: int = MAX_MESSAGE,
         max_total: int = MAX_MESSAGE) -> tuple[dict, list[bytes]]:
    """One message from ``reader``'s socket; a header over ``max_header`` bytes or a message over ``max_total``
    is refused unread."""
    total = 0

    def length(limit):
        nonlocal total
        (n,) = _LEN.unpack(reader.exact(_LEN.size, deadline))
        total += n
        if n > limit or total > max_total:
            raise WireError("message too large")
        return n

    try:
        header = json.loads(reader.exact(length(max_header), deadline))
    except RecursionError:
        raise WireError("message nested too deeply") from None
    if not isinstance(header, dict):
        raise WireError("message is not an object")
    count = length(100_000)
    buffers = [reader.exact(length(max_total), deadline) for _ in range(count)]
    return header, buffers
