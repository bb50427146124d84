"""The sandbox's own rules, set by the server before any student code runs (a second line behind ``isolation``).

- ``apply_limits``: memory (address space), CPU time and file size, no core files (and tasks, where no
  cgroup bounds them);
- ``capture_output``: stdout and stderr go to ``output.txt`` in the work folder, capped;
- ``install_audit_hook``: an audit hook (PEP 578) that gives clear messages for what the
  operating system refuses anyway. It denies reading or listing files outside the Python
  installation, the course's helper package and the sandbox's own work folder (so no
  solutions, gradebook or other submissions), writing outside that folder, new processes,
  sockets, signals to other processes, raising its own limits, heap introspection (gc),
  swapping a function's code, and installing trace or profile functions other than the
  grader's own watch.
"""
from __future__ import annotations

import io
import os
import resource
import signal
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..settings import Limits


def apply_limits(limits: Limits, nproc: int | None = None) -> None:
    """Memory, CPU time and file size as the grader set them (``None``: no cap); no core files. ``nproc``: the
    RLIMIT_NPROC the grader asks for where no pids cgroup bounds the sandbox's tasks."""
    def cap(which, value):
        if value is not None:
            soft, hard = resource.getrlimit(which)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (value, value))
    cap(resource.RLIMIT_AS, limits.memory_bytes)
    cap(resource.RLIMIT_CPU, limits.cpu_seconds)
    cap(resource.RLIMIT_FSIZE, limits.output_bytes)
    cap(resource.RLIMIT_NPROC, nproc)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an over-long write fails instead of killing us


def _readable_roots() -> tuple[str, ...]:
    """The Python installation and the course's helper package, as folder prefixes."""
    import site
    import sysconfig
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             *site.getsitepackages(), sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]}
    import dlcourse
    roots.add(os.path.dirname(dlcourse.__file__))
    roots = {os.path.realpath(r) for r in roots if r}
    return tuple(sorted(r.rstrip("/") + "/" for r in roots))


def install_audit_hook(workdir: str, watch_functions: tuple) -> None:
    """The audit hook. Everything it uses is bound now, in its closure.

    ``watch_functions`` (``dlcourse.testing.Watch.hook_functions()``) alone may set trace and profile hooks."""
    realpath, fspath, getpid = os.path.realpath, os.fspath, os.getpid
    getframe = sys._getframe
    workdir = os.path.realpath(workdir).rstrip("/") + "/"
    readable = _readable_roots() + (workdir, "/dev/null", "/dev/urandom", "/dev/zero",
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
                     "sys._current_frames"}
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
            except Exception:  # noqa: BLE001 - whatever the path is, the event is denied
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


class CappedOutput(io.TextIOBase):
    """stdout and stderr of the student's code: kept up to a cap (``None``: no cap), silently dropped beyond it.

    Printing a lot is honest; it must never make the student's function fail.
    """

    def __init__(self, cap: int | None):
        self.cap, self.written = cap, 0

    def writable(self):
        return True

    def write(self, text):
        text = str(text)
        if self.cap is None or self.written < self.cap:
            data = text.encode("utf-8", "replace")
            data = data if self.cap is None else data[: self.cap - self.written]
            try:
                os.write(1, data)
            except OSError:
                pass
            self.written += len(data)
        return len(text)

    def flush(self):
        pass


def capture_output(workdir: str, cap: int | None) -> None:
    """Send this process's stdout and stderr (Python's and the file descriptors) to ``workdir/output.txt``."""
    out = os.open(os.path.join(workdir, "output.txt"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    sys.stdout = sys.stderr = CappedOutput(cap)
