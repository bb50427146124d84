"""The trusted side of the sandbox: start it, run cells in it, call the student's code through proxies.

    with Sandbox(limits) as box:
        box.run_cell("def f(x): return 2 * x", "solution f")
        f = box.function("f")
        f(np.arange(3))            # -> array([0, 2, 4]), a fresh array built from the reply

Every value that comes back is plain data decoded by ``wire``; other objects come
back as ``proxies.Handle``s whose attributes, methods and operators are forwarded.
Arrays and Generators passed as arguments are updated in place from the sandbox's
copies after the call (an array only when the call changed it), so mutation is observable
as in a local call. Every wait
has a deadline; a sandbox that misses it, dies or breaks the protocol is killed and
each later request raises its ``SandboxError``.
"""
from __future__ import annotations

import builtins
import contextlib
import signal
import socket
import time

import numpy as np

from . import protocol, wire
from .limits import Limits
from .process import Process, SandboxError, Stop
from .proxies import Handle, RemoteFunction

__all__ = ["Sandbox", "SandboxError", "RemoteError"]

MAX_REPLY_HEADER = 8 * 1024 ** 2   # a reply's JSON part: far more than any check needs
MAX_REPLY = 128 * 1024 ** 2        # a reply with its arrays
MAX_MESSAGE_CHARS = 2000           # an error message of the student's code, as the grader keeps it
# what a malformed message from the sandbox raises while it is decoded
_BROKEN = (wire.WireError, ValueError, KeyError, TypeError, IndexError, RecursionError, AttributeError,
           OverflowError)


class RemoteError(Exception):
    """The student's code raised; only its type name and message crossed over."""

    def __init__(self, type_name: str, message: str):
        super().__init__(message)
        self.remote_type = type_name

    def __str__(self):
        return self.args[0]


_BUILTIN_ERRORS = {name: cls for name, cls in vars(builtins).items()
                   if isinstance(cls, type) and issubclass(cls, Exception) and cls is not Exception}
_ERROR_CLASSES: dict[str, type] = {}


def remote_error(type_name: str, message: str) -> RemoteError:
    """A RemoteError that is also an instance of the builtin exception of that name, if any,
    so that ``except ValueError`` in a test cell catches the student's ValueError."""
    type_name, message = type_name[:100], message[:MAX_MESSAGE_CHARS]
    base = _BUILTIN_ERRORS.get(type_name)
    if base is None:
        return RemoteError(type_name, message)
    cls = _ERROR_CLASSES.get(type_name)
    if cls is None:
        cls = _ERROR_CLASSES[type_name] = type(f"Remote{type_name}", (RemoteError, base), {})
    return cls(type_name, message)


class Sandbox:
    """One sandboxed process running a student's code (see ``isolation`` and ``process``).

    ``unsafe=True`` allows, where no sandbox can be made, a plain child process
    guarded only by the audit hook: for a student checking their own notebook, or an
    instructor who asked for it explicitly. ``isolation`` says which one runs.
    """

    def __init__(self, limits: dict | None = None, preload: tuple = (), unsafe: bool = False, warm: tuple = ()):
        self.limits = Limits.from_mapping(limits)
        self.process = Process(self.limits, list(preload), unsafe, tuple(warm))
        self.sock = self.reader = None
        self.callbacks: dict[int, object] = {}
        self.handles: dict[int, Handle] = {}
        self.deadline = None     # of the current cell (time.monotonic()), while ``within`` holds
        self.dead: SandboxError | None = None
        self.callback_depth = 0  # >0 while the student's code is calling back into a test's function
        self.sent = 0            # requests sent: each reply names the one it answers
        self.seconds_waiting = 0.0  # waiting for replies: the time requests spent in the sandbox (job timings)

    @property
    def isolation(self) -> str | None:
        """"bubblewrap" or "none (<why>)", once started."""
        return self.process.isolation

    # -- life cycle ----------------------------------------------------------
    def start(self) -> "Sandbox":
        return self.connect(self.process.start())

    def connect(self, sock) -> "Sandbox":
        """Talk to the server on ``sock`` (every reply read through one ``wire.Reader``)."""
        self.sock, self.reader = sock, wire.Reader(sock)
        return self

    def __enter__(self):
        return self.start() if self.sock is None else self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        self.process.close()
        self.sock = self.reader = None

    def _kill(self, error: SandboxError) -> SandboxError:
        self.dead = error
        self.process.kill()
        return error

    # -- encoding --------------------------------------------------------------
    def encoder(self):
        return wire.Encoder(self._unsendable)

    def _unsendable(self, value):
        if isinstance(value, Handle):
            return wire.ref(value._ref_id, value._type_name)
        if isinstance(value, RemoteFunction):
            return wire.global_name(value._name)
        if callable(value):
            cid = len(self.callbacks) + 1
            self.callbacks[cid] = value
            return wire.callback(cid)
        raise TypeError(f"a {type(value).__name__} cannot be passed to the student's code")

    def decoder(self, buffers):
        return wire.Decoder(buffers, on_ref=self._handle, on_callback=_no_callbacks,
                            on_global=lambda name: RemoteFunction(self, name))

    def _handle(self, rid: int, type_name: str) -> Handle:
        handle = self.handles.get(rid)
        if handle is None:
            handle = self.handles[rid] = Handle(self, rid, type_name)
        return handle

    # -- messaging -------------------------------------------------------------
    def _recv(self):
        # every wait has an end: a request made outside a cell's deadline gets a cell's time
        deadline = self.deadline or time.monotonic() + self.limits["cell_seconds"]
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._kill(SandboxError("time limit reached", Stop.TIMEOUT))
            try:
                return wire.recv(self.reader, deadline, MAX_REPLY_HEADER, MAX_REPLY)
            except socket.timeout:
                raise self._kill(SandboxError("time limit reached", Stop.TIMEOUT)) from None
            except (EOFError, ConnectionError, OSError) as exc:
                code = self.process.exit_code()
                kind = Stop.TIMEOUT if code in (-signal.SIGXCPU, 128 + signal.SIGXCPU) else Stop.CRASH
                raise self._kill(SandboxError("the student's process died", kind)) from exc
            except (wire.WireError, ValueError, KeyError) as exc:
                raise self._kill(_broken(exc))

    def request(self, op: protocol.Operation, enc=None, **fields) -> dict:
        """Send a request for ``op`` (its fields already encoded with ``enc``), serve the sandbox's callbacks
        meanwhile, return its reply, checked (``protocol.check_reply``) and decoded. Whatever else comes
        back (a malformed or forged reply, to this request or another) kills the sandbox: ``SandboxError``."""
        if self.dead is not None:
            raise self.dead
        enc = enc or self.encoder()
        self.sent += 1
        number = self.sent
        try:
            wire.send(self.sock, {**protocol.request(op, **fields), "n": number}, enc)
        except OSError as exc:
            raise self._kill(SandboxError(f"the student's process is gone ({exc})")) from None
        while True:
            waiting = time.monotonic()
            try:
                header, buffers = self._recv()
            finally:
                self.seconds_waiting += time.monotonic() - waiting
            try:
                if protocol.is_reply(header):
                    protocol.check_reply(op, header, number)
                    dec = self.decoder(buffers)
                    if header.get("ok"):
                        header["value"] = dec(header.get("value"))
                        header["after"] = [(k, dec(v)) for k, v in header.get("after") or []]
                    return header
                self._serve_callback(header, buffers)
            except _BROKEN as exc:
                raise self._kill(_broken(exc))

    def _serve_callback(self, header, buffers) -> None:
        op = protocol.operation(header, protocol.GRADER)
        if op is not protocol.CALLBACK or header.get("id") not in self.callbacks:
            raise wire.WireError("unexpected request from the sandbox")
        dec = self.decoder(buffers)
        function = self.callbacks[header["id"]]
        enc = self.encoder()
        self.callback_depth += 1
        try:
            value = function(*dec(header.get("args", [])), **dec(header.get("kwargs", {})))
            answer = protocol.reply(True, value=enc(value))
        except SandboxError:
            raise
        except Exception as exc:  # noqa: BLE001 - the test's own function failed
            answer = protocol.reply(False, error=f"{type(exc).__name__}: {exc}")
        finally:
            self.callback_depth -= 1
        wire.send(self.sock, answer, enc)

    def simple(self, op: protocol.Operation, enc=None, **fields):
        """The value of a request's reply; the student's exception, re-raised here, if it failed."""
        reply = self.request(op, enc, **fields)
        if not reply["ok"]:
            _raise(reply)
        return reply["value"]

    # -- what the grader uses ------------------------------------------------
    @contextlib.contextmanager
    def within(self, seconds: float):
        """Every request made meanwhile (a cell, a test cell's calls) ends by ``seconds`` from now."""
        self.deadline = time.monotonic() + seconds
        try:
            yield self
        finally:
            self.deadline = None

    def run_cell(self, code: str, name: str, seconds: float | None = None) -> dict | None:
        """Run a cell of the notebook; returns None or the error it raised ({type, message})."""
        with self.within(seconds or self.limits["cell_seconds"]):
            return self.request(protocol.EXEC, code=code, name=name)["error"]

    def function(self, name: str) -> RemoteFunction:
        return RemoteFunction(self, name)

    def call(self, target, args, kwargs):
        """``target(*args, **kwargs)`` in the sandbox, watched as the enclosing from_scratch/line_budget ask."""
        from dlcourse import testing
        # calls made from inside a callback run under the outer call's watch already
        monitors = [] if self.callback_depth else testing.active_monitors()
        enc = self.encoder()
        reply = self.request(protocol.CALL, enc, target=enc(target), args=enc(list(args)), kwargs=enc(kwargs),
                             monitors=monitors)
        verdict = testing.judge(monitors, reply.get("observations") or {}) if monitors else None
        if not reply["ok"]:
            if verdict:
                raise AssertionError(verdict)
            _raise(reply)
        for key, new in reply["after"]:
            old = args[key] if isinstance(key, int) else kwargs.get(key)
            _mirror(old, new)
        if verdict:
            raise AssertionError(verdict)
        return reply["value"]

    def release(self) -> None:
        """Forget every handle (between test cells)."""
        if self.dead is None and self.handles:
            self.simple(protocol.RELEASE)
        self.handles.clear()
        self.callbacks.clear()

    def run_driver(self, name: str, args, kwargs, module: str | None = None, source: str | None = None):
        """Run a test's driver in the sandbox with the given arguments; its result. The driver is function
        ``name`` of ``module`` (of ``protocol.DRIVERS``), or else defined there from its ``source``."""
        enc = self.encoder()
        where = {"module": module} if module is not None else {"source": source}
        return self.simple(protocol.RUN, enc, name=name, args=enc(list(args)), kwargs=enc(kwargs), **where)


def _broken(exc: Exception) -> SandboxError:
    return SandboxError(f"the student's process broke the protocol: {str(exc)[:200]}", Stop.PROTOCOL)


def _no_callbacks(cid: int):
    raise wire.WireError("no callbacks here")


def _raise(reply):
    error = reply.get("error") or {}
    raise remote_error(str(error.get("type", "Error")), str(error.get("message", "")))


def _mirror(old, new) -> None:
    if isinstance(old, np.ndarray) and isinstance(new, np.ndarray):
        if old.shape == new.shape and old.dtype == new.dtype and old.flags.writeable:
            old[...] = new
    elif isinstance(old, np.random.Generator) and isinstance(new, np.random.Generator):
        try:
            old.bit_generator.state = new.bit_generator.state
        except (TypeError, ValueError):
            pass
