"""The trusted side of the sandbox: start it, run cells in it, call the student's code through proxies.

    with Sandbox(limits) as box:
        box.run_cell("def f(x): return 2 * x", "solution f")
        f = box.function("f")
        f(np.arange(3))            # -> array([0, 2, 4]), a fresh array built from the reply

Every value that comes back is plain data decoded by ``autograder.wire``; other
objects come back as ``Handle``s whose attributes, methods and operators are
forwarded. Arrays and Generators passed as arguments are updated in place from
the sandbox's copies after the call, so mutation is observable as in a local call.
"""
from __future__ import annotations

import builtins
import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

from . import isolation, wire

DEFAULT_LIMITS = {
    "memory_bytes": 3 * 1024 ** 3,   # address space; torch alone maps ~0.7 GB
    "cpu_seconds": 600,              # the whole sandbox lifetime
    "output_bytes": 2 * 1024 ** 2,   # what the student's code may print, in all
    "cell_seconds": 60,              # wall time per test cell
    "setup_seconds": 15,             # wall time per notebook cell run before the tests (they only define things)
    "notebook_seconds": 300,         # wall time for one submission, replays included
}


MAX_REPLY_HEADER = 8 * 1024 ** 2   # a reply's JSON part: far more than any check needs
MAX_REPLY = 128 * 1024 ** 2        # a reply with its arrays
MAX_MESSAGE_CHARS = 2000           # an error message of the student's code, as the grader keeps it


class SandboxError(Exception):
    """The sandbox died, hung past its limit, or broke the protocol."""

    def __init__(self, message: str, kind: str = "crash"):
        super().__init__(message)
        self.kind = kind  # "timeout", "crash", "memory", "protocol", "isolation"


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
    """One sandboxed process running a student's code (see ``autograder.isolation``).

    ``unsafe=True`` allows, where no sandbox can be made, a plain child process
    guarded only by the audit hook: for a student checking their own notebook, or an
    instructor who asked for it explicitly. ``isolation`` says which one runs.
    """

    def __init__(self, limits: dict | None = None, preload: tuple = (), unsafe: bool = False):
        self.limits = {**DEFAULT_LIMITS, **(limits or {})}
        self.preload = list(preload)
        self.unsafe = unsafe
        self.isolation = None  # "bubblewrap" or "none (...)", once started
        self.proc = None       # the Popen of the sandbox (bwrap, or the interpreter itself)
        self.pid = None        # its process (and process group) id
        self.sock = None
        self.callbacks: dict[int, object] = {}
        self.handles: dict[int, "Handle"] = {}
        self.deadline = None
        self.dead: SandboxError | None = None
        self.callback_depth = 0  # >0 while the student's code is calling back into a test's function

    # -- life cycle ----------------------------------------------------------
    def start(self) -> "Sandbox":
        reason = isolation.probe()
        if reason is not None and not self.unsafe:
            raise SandboxError(f"no sandbox can be made here: {reason}", "isolation")
        self.workdir = tempfile.mkdtemp(prefix="sandbox-")
        _seed_matplotlib_cache(self.workdir)
        ours, theirs = socket.socketpair()
        inside = isolation.WORKDIR if reason is None else self.workdir
        env = {
            "PATH": "/usr/bin:/bin", "HOME": inside, "MPLCONFIGDIR": os.path.join(inside, ".matplotlib"),
            "MPLBACKEND": "Agg", "TMPDIR": "/tmp", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "LANG": "C.UTF-8",
            "AUTOGRADER_SANDBOX": json.dumps({"fd": theirs.fileno(), "limits": self.limits, "preload": self.preload}),
        }
        code = "import sys; sys.path.insert(0, {!r}); from autograder.sandbox import main; main()"
        keep = [theirs.fileno()]
        if reason is None:
            if os.geteuid() == 0:
                for folder, _, files in os.walk(self.workdir):
                    for name in [folder, *(os.path.join(folder, f) for f in files)]:
                        os.chown(name, isolation.NOBODY, isolation.NOBODY)
            filter_fd = isolation.seccomp_fd()
            keep.append(filter_fd)
            cmd = isolation.command(sys.executable, self.workdir, ["-I", "-c", code.format("/grader")], env, filter_fd)
            self.isolation = "bubblewrap"
        else:
            cmd = [sys.executable, "-I", "-c", code.format(isolation.ROOT)]
            self.isolation = f"none ({reason})"
        try:
            self.proc = subprocess.Popen(cmd, cwd=self.workdir, env=env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=keep,
                                         start_new_session=True)
        finally:
            for fd in keep:
                os.close(fd)
        self.sock, self.pid = ours, self.proc.pid
        return self

    def __enter__(self):
        return self.start() if self.pid is None else self

    def __exit__(self, *exc):
        self.close()

    def _killpg(self) -> None:
        if self.pid is not None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def close(self) -> None:
        self._killpg()
        if self.proc is not None:
            self.proc.wait()
        if self.sock is not None:
            self.sock.close()
        if getattr(self, "workdir", None):
            shutil.rmtree(self.workdir, ignore_errors=True)
        self.proc, self.sock, self.pid = None, None, None

    def output_size(self) -> int:
        try:
            return os.path.getsize(os.path.join(self.workdir, "output.txt"))
        except OSError:
            return 0

    # -- messaging -------------------------------------------------------------
    def encoder(self):
        return wire.Encoder(self._unsendable)

    def _unsendable(self, value):
        if isinstance(value, Handle):
            return {"$": "ref", "id": value._ref_id, "t": value._type_name}
        if isinstance(value, RemoteFunction):
            return {"$": "global", "name": value._name}
        if callable(value):
            cid = len(self.callbacks) + 1
            self.callbacks[cid] = value
            return {"$": "cb", "id": cid}
        raise TypeError(f"a {type(value).__name__} cannot be passed to the student's code")

    def decoder(self, buffers):
        return wire.Decoder(buffers, on_ref=self._handle,
                            on_callback=lambda cid: (_ for _ in ()).throw(wire.WireError("no callbacks here")),
                            on_global=lambda name: RemoteFunction(self, name))

    def _handle(self, rid: int, type_name: str) -> "Handle":
        handle = self.handles.get(rid)
        if handle is None:
            handle = self.handles[rid] = Handle(self, rid, type_name)
        return handle

    def _kill(self, error: SandboxError) -> SandboxError:
        self.dead = error
        self._killpg()
        return error

    def _recv(self):
        # every wait has an end: a request made outside a cell's deadline gets a cell's time
        deadline = self.deadline or time.monotonic() + self.limits["cell_seconds"]
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._kill(SandboxError("time limit reached", "timeout"))
            try:
                return wire.recv(self.sock, deadline, MAX_REPLY_HEADER, MAX_REPLY)
            except socket.timeout:
                raise self._kill(SandboxError("time limit reached", "timeout")) from None
            except (EOFError, ConnectionError, OSError) as exc:
                code = self._exit_code()
                kind = "timeout" if code in (-signal.SIGXCPU, 128 + signal.SIGXCPU) else "crash"
                raise self._kill(SandboxError("the student's process died", kind)) from exc
            except (wire.WireError, ValueError, KeyError) as exc:
                raise self._kill(SandboxError(f"the student's process broke the protocol: {exc}", "protocol"))

    def _exit_code(self):
        try:
            return self.proc.wait(timeout=5) if self.proc else None
        except subprocess.TimeoutExpired:
            self._killpg()
            return None

    def request(self, message: dict, enc=None) -> dict:
        if self.dead is not None:
            raise self.dead
        enc = enc or self.encoder()
        try:
            wire.send(self.sock, message, enc)
        except OSError as exc:
            raise self._kill(SandboxError(f"the student's process is gone ({exc})")) from None
        while True:
            header, buffers = self._recv()
            try:
                if header.get("reply"):
                    dec = self.decoder(buffers)
                    if header.get("ok"):
                        header["value"] = dec(header.get("value"))
                        header["after"] = [(k, dec(v)) for k, v in header.get("after") or []]
                    return header
                self._serve_callback(header, buffers)
            except (wire.WireError, ValueError, KeyError, TypeError, IndexError, RecursionError) as exc:
                raise self._kill(SandboxError(f"the student's process broke the protocol: {exc}", "protocol"))

    def _serve_callback(self, header, buffers) -> None:
        if header.get("op") != "callback" or header.get("id") not in self.callbacks:
            raise wire.WireError("unexpected request from the sandbox")
        dec = self.decoder(buffers)
        function = self.callbacks[header["id"]]
        enc = self.encoder()
        self.callback_depth += 1
        try:
            value = function(*dec(header.get("args", [])), **dec(header.get("kwargs", {})))
            fields = {"ok": True, "value": enc(value)}
        except SandboxError:
            raise
        except Exception as exc:  # noqa: BLE001 - the test's own function failed
            fields = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        finally:
            self.callback_depth -= 1
        wire.send(self.sock, {"reply": True, **fields}, enc)

    @staticmethod
    def _raise(reply):
        error = reply.get("error") or {}
        raise remote_error(str(error.get("type", "Error")), str(error.get("message", "")))

    # -- what the grader uses ------------------------------------------------
    def run_cell(self, code: str, name: str, seconds: float | None = None) -> dict | None:
        """Run a cell of the notebook; returns None or the error it raised ({type, message})."""
        self.deadline = time.monotonic() + (seconds or self.limits["cell_seconds"])
        try:
            return self.request({"op": "exec", "code": code, "name": name})["error"]
        finally:
            self.deadline = None

    def function(self, name: str) -> "RemoteFunction":
        return RemoteFunction(self, name)

    def call(self, target, args, kwargs):
        from dlcourse import testing
        # calls made from inside a callback run under the outer call's watch already
        monitors = [] if self.callback_depth else [list(m) for m in testing._monitors]
        enc = self.encoder()
        message = {"op": "call", "target": enc(target), "args": enc(list(args)), "kwargs": enc(kwargs),
                   "monitors": monitors}
        reply = self.request(message, enc)
        verdict = testing.judge(monitors, reply.get("observations") or {}) if monitors else None
        if not reply["ok"]:
            if verdict:
                raise AssertionError(verdict)
            self._raise(reply)
        for key, new in reply["after"]:
            old = args[key] if isinstance(key, int) else kwargs.get(key)
            _mirror(old, new)
        if verdict:
            raise AssertionError(verdict)
        return reply["value"]

    def simple(self, op: str, **fields):
        reply = self.request({"op": op, **fields})
        if not reply["ok"]:
            self._raise(reply)
        return reply["value"]

    def release(self) -> None:
        """Forget every handle (between test cells)."""
        if self.dead is None and self.handles:
            self.simple("release")
        self.handles.clear()
        self.callbacks.clear()

    def run_driver(self, source: str, name: str, args, kwargs):
        """Run a test's driver function (its source) in the sandbox with the given arguments; its result."""
        enc = self.encoder()
        reply = self.request({"op": "run", "source": source, "name": name, "args": enc(list(args)),
                              "kwargs": enc(kwargs)}, enc)
        if not reply["ok"]:
            self._raise(reply)
        return reply["value"]


@functools.lru_cache(maxsize=1)
def _font_cache() -> str | None:
    """matplotlib's font list, built once by the grader (rebuilding it costs a sandbox seconds)."""
    try:
        import matplotlib
        from matplotlib import font_manager  # builds the cache file when it is missing
    except ImportError:
        return None
    path = os.path.join(matplotlib.get_cachedir(), f"fontlist-v{font_manager.FontManager.__version__}.json")
    return path if os.path.exists(path) else None


def _seed_matplotlib_cache(workdir: str) -> None:
    source = _font_cache()
    if source:
        os.makedirs(os.path.join(workdir, ".matplotlib"), exist_ok=True)
        shutil.copy(source, os.path.join(workdir, ".matplotlib", os.path.basename(source)))


def _mirror(old, new) -> None:
    if isinstance(old, np.ndarray) and isinstance(new, np.ndarray):
        if old.shape == new.shape and old.dtype == new.dtype and old.flags.writeable:
            old[...] = new
    elif isinstance(old, np.random.Generator) and isinstance(new, np.random.Generator):
        try:
            old.bit_generator.state = new.bit_generator.state
        except (TypeError, ValueError):
            pass


class RemoteFunction:
    """A graded name of the student's notebook (function or class), called in the sandbox."""

    def __init__(self, sandbox: Sandbox, name: str):
        self._sandbox, self._name = sandbox, name

    def __call__(self, *args, **kwargs):
        return self._sandbox.call(wire.Global(self._name), args, kwargs)

    def __instancecheck__(self, obj) -> bool:
        if not isinstance(obj, Handle):
            return False
        enc = self._sandbox.encoder()
        return bool(self._sandbox.simple("isinstance", obj=enc(obj), cls={"$": "global", "name": self._name}))

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self._sandbox.simple("getattr", obj={"$": "global", "name": self._name}, name=name)

    def __repr__(self):
        return f"<student's {self._name}>"


def _forward(op_name, reverse=False):
    def method(self, *others):
        args = (others[0], self) if reverse else (self, *others)
        enc = self._sandbox.encoder()
        tree = enc(list(args))
        reply = self._sandbox.request({"op": "op", "name": op_name, "args": tree}, enc)
        if not reply["ok"]:
            self._sandbox._raise(reply)
        return reply["value"]
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
        return self._sandbox.simple("getattr", obj=enc(self), name=name)

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
