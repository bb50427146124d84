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
has an end; a sandbox that passes it, dies or breaks the protocol is killed and
each later request raises its ``SandboxError``.

Time is budgeted as CPU time, so that a notebook earns the same whether the machine is idle or busy: a cell
(``within``) may use ``seconds`` of its sandbox's CPU time (``Process.cpu_seconds``: every process of the
sandbox, their threads and waited-for children), and a notebook's sandboxes and grading together
``Limits.notebook_seconds`` (``NotebookClock``). While a reply is awaited the sandbox's CPU time is read every
``SLICE`` seconds. Wall-clock time is capped once per notebook (``Limits.notebook_wall_seconds``), which is what
a sleeping or stuck submission meets; when most of the notebook's wall time went waiting for a CPU (the run
queues of its sandboxes' and the grading process's threads), the stop says the machine was busy
(``SandboxError.busy``): the job grades such a notebook again rather than score it.
"""
from __future__ import annotations

import builtins
import contextlib
import os
import select
import signal
import socket
import time
from dataclasses import dataclass

import numpy as np

from ..settings import GRADER, Limits
from . import protocol, wire
from .process import Process, SandboxError, Stop, run_queue_wait
from .proxies import Handle, RemoteFunction

__all__ = ["Sandbox", "SandboxError", "RemoteError", "NotebookClock"]

# the grader's own bounds, declared in autograder/settings.py
MAX_REPLY_HEADER = GRADER.reply_header_bytes   # a reply's JSON part: far more than any check needs
MAX_REPLY = GRADER.reply_bytes                 # a reply with its arrays
MAX_MESSAGE_CHARS = GRADER.error_message_chars  # an error message of the student's code, as the grader keeps it
# what a malformed message from the sandbox raises while it is decoded
_BROKEN = (wire.WireError, ValueError, KeyError, TypeError, IndexError, RecursionError, AttributeError,
           OverflowError)
SLICE = GRADER.cpu_reading_seconds  # between two readings of a sandbox's CPU time while a reply is awaited
BUSY_SHARE = GRADER.busy_share      # a wall-clock stop is the machine's when this share of its time was run-queue wait


class _WaitMeter:
    """Run-queue wait of a set of threads, summed as it grows (a thread that ends keeps what was seen of it)."""

    def __init__(self):
        self.last: dict[int, float] = {}
        self.seconds = 0.0

    def read(self, waits: dict[int, float]) -> float:
        for tid, wait in waits.items():
            self.seconds += max(0.0, wait - self.last.get(tid, 0.0))
            self.last[tid] = wait
        return self.seconds


class NotebookClock:
    """One notebook's time, shared by its sandboxes (a restarted one replays on the same budget): the CPU time
    of its sandboxes and of the grading process's own work (``Limits.notebook_seconds``), the wall-clock cap
    (``Limits.notebook_wall_seconds``, from ``started``), and how much of that wall time went waiting for a CPU."""

    def __init__(self, limits: Limits, started: float | None = None):
        self.limits = limits
        self.started = time.monotonic() if started is None else started
        self.wall_end = self.started + self.limits.notebook_wall_seconds
        self.own_cpu = time.process_time()
        self.own_wait = _WaitMeter()
        self.own_wait_start = self.own_wait.read(run_queue_wait([os.getpid()]))  # counted from now on
        self.sandbox_wait = 0.0   # run-queue wait seen of its sandboxes' threads
        self.closed_cpu = 0.0     # CPU time of its sandboxes already closed
        self.boxes: list[Sandbox] = []

    def cpu_used(self) -> float:
        return time.process_time() - self.own_cpu + self.closed_cpu + sum(box.cpu_used() for box in self.boxes)

    def cpu_left(self) -> float:
        return self.limits.notebook_seconds - self.cpu_used()

    def wall_left(self) -> float:
        return self.wall_end - time.monotonic()

    def queued(self) -> float:
        """Seconds the notebook's threads (its sandboxes', the grading process's) spent waiting for a CPU."""
        return self.sandbox_wait + self.own_wait.read(run_queue_wait([os.getpid()])) - self.own_wait_start

    def busy(self) -> bool:
        """Whether most of the wall time so far went waiting for a CPU: the machine's time, not the notebook's."""
        elapsed = time.monotonic() - self.started
        return elapsed > 0 and self.queued() >= BUSY_SHARE * elapsed


@dataclass
class _Window:
    """The budget of one cell (``Sandbox.within``): CPU seconds of its sandbox from ``cpu_start``, named after
    the limit it comes from; and the notebook's wall-clock end."""
    seconds: float
    limit: str
    cpu_start: float
    wall_end: float


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

    def __init__(self, limits: Limits | dict | None = None, preload: tuple = (), unsafe: bool = False,
                 warm: tuple = (), clock: NotebookClock | None = None):
        self.limits = Limits.from_mapping(limits)  # a Limits as it is (the grader's); a mapping from a test
        self.process = Process(self.limits, list(preload), unsafe, tuple(warm))
        self.sock = self.reader = None
        self.callbacks: dict[int, object] = {}
        self.handles: dict[int, Handle] = {}
        self.clock = clock       # its notebook's (NotebookClock); a sandbox of its own is a notebook of its own
        self.window: _Window | None = None  # the current cell's budget, while ``within`` holds
        self.waits = _WaitMeter()  # run-queue wait of its threads
        self.checked = 0.0       # when its CPU time was last read (time.monotonic())
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
        if self.clock is None:
            self.clock = NotebookClock(self.limits)
        self.clock.boxes.append(self)
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
        if self.clock is not None and self in self.clock.boxes:
            self.usage()  # its last reading, before its processes and groups are gone
            self.process.kill()
            self.clock.closed_cpu += self.usage()
            self.clock.boxes.remove(self)
        self.process.close()
        self.sock = self.reader = None

    # -- time ------------------------------------------------------------------
    def usage(self) -> float:
        """The CPU seconds its processes have used (``Process.cpu_seconds``); adds their threads' run-queue wait
        since the last reading to its notebook's."""
        tasks = self.process.tasks()
        before = self.waits.seconds
        self.waits.read(run_queue_wait(tasks))
        if self.clock is not None:
            self.clock.sandbox_wait += self.waits.seconds - before
        self.checked = time.monotonic()
        return self.process.cpu_seconds(tasks)

    def cpu_used(self) -> float:
        """Its CPU seconds as last read (``usage``)."""
        return self.process.cpu_seconds(None, cached=True)

    def _check(self, window: _Window) -> None:
        """Stop it if its cell has used its CPU budget."""
        if self.usage() - window.cpu_start > window.seconds:
            who = "the notebook" if window.limit == "notebook_seconds" else "the cell"
            error = SandboxError(f"{who} used its {window.seconds:g} s of CPU time", Stop.TIMEOUT, window.limit)
            error.seconds = window.seconds
            raise self._kill(error)

    def _out_of_time(self) -> SandboxError:
        """The wall-clock cap is reached: the notebook's, or the machine's when it was too busy."""
        busy = self.clock is not None and self.clock.busy()
        seconds = self.limits.notebook_wall_seconds
        message = (f"the grading machine was too busy to run the notebook within its {seconds:g} s of wall-clock "
                   "time" if busy else f"the notebook's {seconds:g} s of wall-clock time ran out")
        error = SandboxError(message, Stop.TIMEOUT, "notebook_wall_seconds", busy)
        error.seconds = seconds
        return self._kill(error)

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
        window = self.window
        while True:
            if not self.reader.pending:  # bytes already read ahead are the reply's: read them at once
                if time.monotonic() - self.checked >= SLICE:
                    self._check(window)
                wait = min(SLICE, window.wall_end - time.monotonic())
                if wait <= 0:
                    raise self._out_of_time()
                try:
                    ready, _, _ = select.select([self.sock], [], [], wait)
                except (OSError, ValueError):
                    ready = [self.sock]  # let the read say what happened
                if not ready:
                    continue
            try:
                return wire.recv(self.reader, window.wall_end, MAX_REPLY_HEADER, MAX_REPLY)
            except socket.timeout:
                raise self._out_of_time() from None
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
        if self.window is None:  # every wait has an end: a request made outside a cell gets a cell's budget
            with self.within(self.limits.cell_seconds):
                return self.request(op, enc, **fields)
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
    def within(self, seconds: float, limit: str = "cell_seconds"):
        """Every request made meanwhile (a cell, a test cell's calls) may use ``seconds`` of the sandbox's CPU
        time in all (``limit`` names the bound they come from, for the message), and ends by the notebook's
        wall-clock cap."""
        if self.clock is None:
            self.clock = NotebookClock(self.limits)
        outer = self.window
        self.window = _Window(seconds, limit, self.usage(), self.clock.wall_end)
        try:
            yield self
        finally:
            self.window = outer
            if self.dead is None:
                self.usage()

    def run_cell(self, code: str, name: str, seconds: float | None = None, limit: str = "cell_seconds") -> dict | None:
        """Run a cell of the notebook; returns None or the error it raised ({type, message})."""
        with self.within(seconds or getattr(self.limits, limit), limit):
            return self.request(protocol.EXEC, code=code, name=name)["error"]

    def function(self, name: str) -> RemoteFunction:
        return RemoteFunction(self, name)

    def _monitors(self) -> list:
        """The enclosing from_scratch/line_budget monitors a request is watched under: none from inside a callback
        (it runs under the outer call's watch already)."""
        from dlcourse import testing
        return [] if self.callback_depth else testing.active_monitors()

    def call(self, target, args, kwargs):
        """``target(*args, **kwargs)`` in the sandbox, watched as the enclosing from_scratch/line_budget ask."""
        from dlcourse import testing
        monitors = self._monitors()
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
        ``name`` of ``module`` (of ``protocol.DRIVERS``), or else defined there from its ``source``; watched as
        the enclosing from_scratch/line_budget ask, as a call is (and as it is in a student's kernel)."""
        from dlcourse import testing
        monitors = self._monitors()
        enc = self.encoder()
        where = {"module": module} if module is not None else {"source": source}
        reply = self.request(protocol.RUN, enc, name=name, args=enc(list(args)), kwargs=enc(kwargs),
                             monitors=monitors, **where)
        verdict = testing.judge(monitors, reply.get("observations") or {}) if monitors else None
        if verdict:
            raise AssertionError(verdict)
        if not reply["ok"]:
            _raise(reply)
        return reply["value"]


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
