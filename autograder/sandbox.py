"""The sandbox: one process per submission that runs the student's code and answers calls.

It is started by ``autograder.client.Sandbox`` inside the operating system's
sandbox (``autograder.isolation``: namespaces, uid 65534, a read-only view of
the Python runtime only, a seccomp filter); it never decides a score. It runs
the notebook's given and student cells, then serves requests from the trusted
grader (call a graded function, read an attribute of a returned object, ...)
over a socket, replying with plain data (``autograder.wire``).

Before any student code runs it: limits memory, CPU time and file size; sends
stdout/stderr to a capped file; and installs an audit hook (PEP 578), a second
line behind the operating system's boundary that gives clear messages. The hook denies reading or listing files outside the Python
installation, the course's helper package and the sandbox's own temp folder
(so no solutions, gradebook or other submissions), writing outside that
folder, new processes, sockets, signals to other processes, raising
its own limits, heap introspection (gc), swapping a function's code, and
installing trace or profile functions other than the grader's own watch.
"""
from __future__ import annotations

import io
import json
import operator
import os
import resource
import signal
import socket
import sys
import traceback

from . import wire

OPERATORS = {name: getattr(operator, name) for name in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "neg", "pos", "abs", "matmul",
    "lt", "le", "gt", "ge", "eq", "ne", "getitem", "contains")}
OPERATORS.update(float=float, int=int, bool=bool, len=len, repr=repr, str=str, list=list)


def _apply_limits(limits: dict) -> None:
    def cap(which, value):
        if value:
            soft, hard = resource.getrlimit(which)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (value, value))
    cap(resource.RLIMIT_AS, int(limits.get("memory_bytes", 0)))
    cap(resource.RLIMIT_CPU, int(limits.get("cpu_seconds", 0)))
    cap(resource.RLIMIT_FSIZE, int(limits.get("output_bytes", 0)))
    cap(resource.RLIMIT_CORE, 0) if False else resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an over-long write fails instead of killing us


def _readable_roots(extra) -> tuple[str, ...]:
    import site
    import sysconfig
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             *site.getsitepackages(), sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]}
    import dlcourse
    roots.add(os.path.dirname(dlcourse.__file__))
    roots.update(extra)
    roots = {os.path.realpath(r) for r in roots if r}
    return tuple(sorted(r.rstrip("/") + "/" for r in roots))


def install_policy(workdir: str, watch_functions: tuple) -> None:
    """The audit hook. Everything it uses is bound now, in its closure."""
    realpath, fspath, getpid = os.path.realpath, os.fspath, os.getpid
    getframe = sys._getframe
    workdir = os.path.realpath(workdir).rstrip("/") + "/"
    readable = _readable_roots([]) + (workdir, "/dev/null", "/dev/urandom", "/dev/zero",
                                       "/proc/cpuinfo", "/proc/meminfo", "/proc/self/stat",
                                       "/proc/self/status", "/proc/self/cgroup", "/sys/fs/cgroup/",
                                       "/sys/devices/system/cpu/", "/etc/localtime", "/usr/share/zoneinfo/",
                                       "/etc/ld.so.cache", "/usr/lib/locale/", "/usr/share/fonts/")
    writable = (workdir, "/dev/null")
    denied_prefixes = ("subprocess.", "os.exec", "os.spawn", "os.posix_spawn", "os.fork", "os.forkpty",
                       "pty.", "socket.", "_winapi.", "webbrowser.", "os.system",
                       "os.chroot", "os.setuid", "os.setgid", "shutil.rmtree")
    denied_events = {"resource.setrlimit", "resource.prlimit", "gc.get_objects", "gc.get_referrers",
                     "gc.get_referents", "sys.addaudithook.remove",
                     "sys._current_frames", "sys.setrecursionlimit-never"}
    # processes and sockets are refused by the OS (seccomp); importing their modules is harmless and
    # honest code needs it (torch imports subprocess; sklearn and torch load libraries with ctypes,
    # whose raw memory reaches nothing beyond this process)
    denied_imports = ("_testcapi", "_testinternalcapi")
    watch_codes = tuple(f.__code__ for f in watch_functions)
    watch_funcs = tuple(watch_functions)
    Denied = PermissionError

    def under(path, roots):
        return any(path == r.rstrip("/") or path.startswith(r) for r in roots)

    def hook(event, args):
        if event == "sys._getframe" or event == "object.__getattr__":
            return
        if event in ("open", "os.listdir", "os.scandir", "os.chdir", "os.chmod", "os.chown",
                     "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.link", "os.symlink",
                     "os.truncate", "os.utime", "shutil.copyfile", "shutil.move", "glob.glob"):
            target = args[0] if args else None
            if isinstance(target, int) or target is None:
                return  # an already-open file descriptor: we opened it or it is inherited-free
            try:
                path = realpath(fspath(target))
            except Exception:
                raise Denied(f"sandbox: {event} denied") from None
            write = event != "open" or (len(args) > 1 and isinstance(args[1], str) and any(
                c in args[1] for c in "wax+")) or (len(args) > 2 and isinstance(args[2], int) and args[2] & 0o3)
            if event in ("os.listdir", "os.scandir", "os.chdir", "glob.glob") or not write:
                if under(path, readable):
                    return
            elif under(path, writable):
                return
            raise Denied(f"sandbox: {event} of {path} is not allowed while grading")
        if event in ("sys.settrace", "sys.setprofile"):
            new = args[0] if args else None
            if new is None and getframe(1).f_code in watch_codes:
                return
            if getattr(new, "__func__", None) in watch_funcs:
                return
            raise Denied("sandbox: trace and profile hooks are reserved for the grader")
        if event == "object.__setattr__" and len(args) > 1 and args[1] == "__code__" and (
                args[0] in watch_funcs or getattr(args[0], "__module__", "") == "dlcourse.testing"):
            raise Denied("sandbox: changing a function's code is not allowed while grading")
        if event in ("os.kill", "os.killpg", "signal.pthread_kill"):
            if event == "os.kill" and args and args[0] in (0, getpid()):
                return
            raise Denied("sandbox: signals to other processes are not allowed")
        if event == "import" and args and isinstance(args[0], str) and args[0].split(".")[0] in denied_imports:
            if args[0] in sys.modules:
                return
            raise Denied(f"sandbox: importing {args[0]} is not allowed while grading")
        if event in denied_events or event.startswith(denied_prefixes):
            raise Denied(f"sandbox: {event} is not allowed while grading")

    sys.addaudithook(hook)


class Server:
    """Serves the trusted grader's requests; re-entrant for callbacks into the grader."""

    def __init__(self, sock: socket.socket, watch_class):
        self.sock = sock
        self.Watch = watch_class
        self.namespace = {"__name__": "__main__", "__builtins__": __builtins__}
        self.objects: dict[int, object] = {}
        self.ids: dict[int, int] = {}
        self.next_id = 1

    # -- encoding ----------------------------------------------------------
    def _register(self, obj) -> dict:
        rid = self.ids.get(id(obj))
        if rid is None or self.objects.get(rid) is not obj:
            rid, self.next_id = self.next_id, self.next_id + 1
            self.objects[rid], self.ids[id(obj)] = obj, rid
        return {"$": "ref", "id": rid, "t": type(obj).__name__}

    def encoder(self):
        return wire.Encoder(self._register)

    def decoder(self, buffers):
        return wire.Decoder(buffers, on_ref=lambda rid, _t: self.objects[rid],
                            on_callback=self._callback, on_global=lambda name: self.namespace[name])

    def _callback(self, cid: int):
        def call_grader(*args, **kwargs):
            enc = self.encoder()
            reply = self.request({"op": "callback", "id": cid, "args": enc(list(args)), "kwargs": enc(kwargs)}, enc)
            if not reply["ok"]:
                raise RuntimeError(f"the test's function raised {reply['error']}")
            return reply["value"]
        return call_grader

    # -- messaging ---------------------------------------------------------
    def request(self, message, enc) -> dict:
        wire.send(self.sock, message, enc)
        while True:
            header, buffers = wire.recv(self.sock)
            if header.get("reply"):
                dec = self.decoder(buffers)
                if header.get("ok"):
                    header["value"] = dec(header.get("value"))
                return header
            self.serve(header, buffers)

    def reply(self, enc, **fields):
        wire.send(self.sock, {"reply": True, **fields}, enc)

    def serve(self, header, buffers) -> None:
        op = header.get("op")
        enc = self.encoder()
        try:
            dec = self.decoder(buffers)
            if op == "exec":
                self.reply(enc, ok=True, error=self.run_cell(header["code"], header.get("name", "cell")))
            elif op == "call":
                self.call(header, dec)
            elif op == "getattr":
                value = getattr(dec(header["obj"]), header["name"])
                self.reply(enc, ok=True, value=enc(value))
            elif op == "op":
                fn = OPERATORS[header["name"]]
                self.reply(enc, ok=True, value=enc(fn(*dec(header["args"]))))
            elif op == "isinstance":
                self.reply(enc, ok=True, value=isinstance(dec(header["obj"]), dec(header["cls"])))
            elif op == "run":
                self.reply(enc, ok=True, value=enc(self.run_driver(header, dec)))
            elif op == "release":
                self.objects.clear()
                self.ids.clear()
                self.reply(enc, ok=True, value=None)
            else:
                self.reply(enc, ok=False, error={"type": "ProtocolError", "message": f"unknown op {op!r}"})
        except BaseException as exc:  # noqa: BLE001 - the student's code may raise anything
            if isinstance(exc, (EOFError, wire.WireError, BrokenPipeError)):
                raise
            self.reply(self.encoder(), ok=False, error=_describe(exc))

    def run_cell(self, code: str, name: str):
        try:
            exec(compile(code, f"<{name}>", "exec"), self.namespace)
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt included
            return _describe(exc)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        return None

    def call(self, header, dec) -> None:
        target = dec(header["target"])
        args, kwargs = dec(header.get("args", [])), dec(header.get("kwargs", {}))
        monitors = header.get("monitors") or []
        watch = self.Watch(torch_calls=any(m[0] == "from_scratch" for m in monitors),
                           lines=any(m[0] == "line_budget" for m in monitors))
        try:
            if monitors:
                with watch:
                    value = target(*args, **kwargs)
            else:
                value = target(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001
            enc = self.encoder()
            self.reply(enc, ok=False, error=_describe(exc), observations=watch.observations())
            return
        enc = self.encoder()
        after = [[i, enc(a)] for i, a in enumerate(args) if _mirrored(a)]
        after += [[k, enc(a)] for k, a in kwargs.items() if _mirrored(a)]
        self.reply(enc, ok=True, value=enc(value), after=after, observations=watch.observations())

    def run_driver(self, header, dec):
        """A test's driver (its source, from the grader) called with the student's pieces as arguments."""
        scope = {"__name__": "__driver__", "__builtins__": __builtins__}
        exec(compile(header["source"], "<driver>", "exec"), scope)
        return scope[header["name"]](*dec(header.get("args", [])), **dec(header.get("kwargs", {})))

    def loop(self) -> None:
        while True:
            try:
                header, buffers = wire.recv(self.sock)
            except (EOFError, ConnectionError):
                return
            self.serve(header, buffers)


class CappedOutput(io.TextIOBase):
    """stdout and stderr of the student's code: kept up to a cap, silently dropped beyond it.

    Printing a lot is honest; it must never make the student's function fail.
    """

    def __init__(self, cap: int):
        self.cap, self.written = cap, 0

    def writable(self):
        return True

    def write(self, text):
        text = str(text)
        if self.written < self.cap:
            data = text.encode("utf-8", "replace")[: self.cap - self.written]
            try:
                os.write(1, data)
            except OSError:
                pass
            self.written += len(data)
        return len(text)

    def flush(self):
        pass


def _mirrored(value) -> bool:
    import numpy as np
    return isinstance(value, (np.ndarray, np.random.Generator))


def _describe(exc: BaseException) -> dict:
    text = str(exc)
    if len(text) > 500:
        text = text[:500] + "…"
    return {"type": type(exc).__name__, "message": text}


def serve(sock: socket.socket, limits: dict) -> None:
    """Become the sandbox: capped output, limits, the audit policy, then answer requests."""
    workdir = os.getcwd()
    out = os.open(os.path.join(workdir, "output.txt"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    sys.stdout = sys.stderr = CappedOutput(int(limits.get("output_bytes", 0)) or 1 << 20)
    from dlcourse.testing import Watch, _torch_dir, count_thread_starts
    _torch_dir()
    count_thread_starts()
    _apply_limits(limits)
    if limits.get("audit_hook", True):  # off only in the tests that probe the OS boundary beneath it
        install_policy(workdir, (Watch.__enter__, Watch.__exit__, Watch._profile, Watch._trace))
    server = Server(sock, Watch)
    try:
        server.loop()
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
    finally:
        os._exit(0)


def main() -> None:
    """The sandbox process (started by ``autograder.client.Sandbox``, inside bubblewrap)."""
    config = json.loads(os.environ.pop("AUTOGRADER_SANDBOX"))
    sock = socket.socket(fileno=int(config["fd"]))
    import numpy  # noqa: F401 - preload what every chapter uses, before the policy
    for name in config.get("preload", []):
        __import__(name)
    serve(sock, config.get("limits", {}))


if __name__ == "__main__":
    main()
