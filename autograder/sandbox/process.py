"""The life cycle of one sandbox process: its work folder, its environment, its start and its end.

``Process.start()`` makes the sandbox's control groups (``cgroups``: memory counting tmpfs, memfd
and page cache; tasks), a socket pair and the one environment the server runs with
(``environment``), then forks it from the grading process's warm template (``template``) or starts
``python -c 'from autograder.sandbox.server import main; main()'`` through bubblewrap
(``isolation.command``): its work folder and /tmp are one sized tmpfs that lives and dies with the
sandbox's mount namespace, so nothing it writes reaches the host's disk. In the unsafe mode only, it
runs as a plain child process in a host folder. A grading process that grades one notebook after
another keeps the next warm sandbox forked ahead (``keep_one_ahead``): made while the current one works,
exactly as it would be made at start, and never given anything before its own notebook.
``cpu_seconds()`` is the CPU time its processes have used (what the time budgets count: ``client.Sandbox``),
``run_queue_wait()`` how long each of its threads waited for a CPU (the machine's time, not the
submission's). ``kill()`` ends its whole process group; ``close()`` also kills what is left in its groups,
removes them and any host folder (``remove_tree``: no recursion, no path length limit) and records in
``leftovers`` what could not be.
"""
from __future__ import annotations

import atexit
import functools
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import weakref
from dataclasses import dataclass
from enum import StrEnum

from ..errors import GraderError
from ..settings import AHEAD, GRADER, Limits
from . import cgroups, isolation, protocol, template

WARM = "bubblewrap-equivalent, forked warm"  # Process.isolation of a sandbox forked from a template
log = logging.getLogger(__name__)
SERVER = "import sys; sys.path.insert(0, {!r}); from autograder.sandbox.server import main; main()"


def environment(home: str, config: dict) -> dict:
    """The server's whole environment (nothing of the grader's): ``home`` is its work folder as it sees it,
    ``config`` what it reads at start (its socket's descriptor, limits, modules to preload)."""
    return {
        "PATH": "/usr/bin:/bin", "HOME": home, "MPLCONFIGDIR": os.path.join(home, ".matplotlib"),
        "MPLBACKEND": "Agg", "TMPDIR": "/tmp", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "LANG": "C.UTF-8",
        protocol.CONFIG_VARIABLE: json.dumps(config),
    }


class Process:
    """One sandbox process. ``isolation`` says how it was made: "bubblewrap" (with the controls it lacks,
    if any) or "none (<why>)"."""

    def __init__(self, limits: Limits, preload: list, unsafe: bool, warm: tuple = ()):
        self.limits, self.preload, self.unsafe = limits, preload, unsafe
        self.warm = warm  # what a template made for it may preload too (``Task.warm``)
        self.isolation = None  # once started
        self.proc = None       # the Popen of the sandbox (bwrap, or the interpreter itself)
        self.pid = None        # its process (and process group) id
        self.sock = None       # the grader's end of the socket pair
        self.workdir = None    # a host folder: in the unsafe mode only
        self.group = None      # its cgroups.Group
        self.leftovers: list[str] = []  # what could not be removed after it (reported by the job)
        self._cpu_seen = 0.0   # the most CPU time read (``cpu_seconds``)

    def start(self) -> socket.socket:
        """Start the server; the grader's end of its socket."""
        reason = isolation.probe()
        if reason is not None and not self.unsafe:
            raise SandboxError(f"no sandbox can be made here: {reason}", Stop.ISOLATION)
        limits = self.limits
        if reason is None and template.enabled():
            ahead = _take_ahead(limits, self.preload)
            if ahead is not None:
                self.group, self.sock, self.proc, self.pid = ahead.group, ahead.sock, ahead.proc, ahead.proc.pid
                weakref.finalize(self, self.group.remove)
                self.isolation = WARM + self._limited()
                _fork_ahead(limits, self.preload, self.warm)
                return self.sock
        self.group = cgroups.Group(limits.ram_bytes, limits.tasks)
        weakref.finalize(self, self.group.remove)  # even if close() is never called, the groups go with us
        config = {"limits": limits.to_wire(), "preload": self.preload}
        if "pids" not in self.group.paths:  # the fallback: RLIMIT_NPROC, counted per user by the kernel
            uid = isolation.NOBODY if reason is None and os.geteuid() == 0 else os.getuid()
            config["nproc"] = cgroups.count_tasks_of(uid) + limits.tasks
        ours, theirs = socket.socketpair()
        if reason is None and template.enabled():
            try:
                self.proc = self._fork_warm(config, theirs.fileno())
            except template.TemplateError as exc:  # the same sandbox, started cold (a note in the grader's log)
                template.failures.append(str(exc))
                log.warning("warm sandbox start failed, starting cold through bubblewrap%s: %s",
                            "" if template.enabled() else " (from now on, in this process)", exc)
            if self.proc is not None:
                theirs.close()
                self.sock, self.pid = ours, self.proc.pid
                _fork_ahead(limits, self.preload, self.warm)
                return ours
        config["fd"] = theirs.fileno()
        keep = [theirs.fileno()]
        if reason is None:
            env = environment(isolation.WORKDIR, config)
            filter_fd = isolation.seccomp_fd()
            keep.append(filter_fd)
            cmd = isolation.command(sys.executable, ["-I", "-c", SERVER.format(isolation.INSIDE)], env, filter_fd,
                                    limits.disk_bytes, _matplotlib_files())
            self.isolation = "bubblewrap" + self._limited()
            cwd = "/"
        else:
            self.workdir = tempfile.mkdtemp(prefix="sandbox-")
            _seed_matplotlib_cache(self.workdir)
            env = environment(self.workdir, config)
            cmd = [sys.executable, "-I", "-c", SERVER.format(isolation.ROOT)]
            self.isolation = f"none ({reason})"
            cwd = self.workdir
        try:
            self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=keep,
                                         start_new_session=True, preexec_fn=self.group.join if self.group.paths
                                         else None)
        except BaseException:
            ours.close()
            self.close()
            raise
        finally:
            for fd in keep:
                os.close(fd)
        self.sock, self.pid = ours, self.proc.pid
        return ours

    def _limited(self) -> str:
        missing = cgroups.described(self.group.missing)
        return f" (LIMITED: {'; '.join(missing)})" if missing else ""

    def _fork_warm(self, config: dict, sock_fd: int) -> template.WarmProcess:
        """The sandbox forked from this process's template for its preload (``template``): the same
        namespaces, layout, cgroups, limits and filter as ``isolation.command``'s, without an interpreter's start."""
        proc = warm_template(tuple(self.preload), self.warm).spawn(
            sock_fd, _spawn_request(self.limits, self.group, config.get("nproc")))
        self.isolation = WARM + self._limited()
        return proc

    def kill(self) -> None:
        """SIGKILL to its whole process group."""
        if self.pid is not None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def exit_code(self):
        """Its exit status, once it has ended (waits up to 5 s, then kills it)."""
        try:
            return self.proc.wait(timeout=5) if self.proc else None
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def tasks(self) -> list[int]:
        """Its processes: those of its control groups, else (no cgroup here) those of its session and their
        descendants, found in /proc."""
        if self.pid is None:
            return []
        if self.group is not None and self.group.paths:
            return self.group.tasks()
        return related_processes(self.pid)

    def cpu_seconds(self, tasks: list[int] | None = None, cached: bool = False) -> float:
        """The CPU time (user and system) its processes have used since it started, never less than last read
        (``cached``: as last read): its cpuacct group's count (ended processes included), else the sum of its
        processes' (``tasks``, if already found) own time and that of the children they waited for."""
        if cached:
            return self._cpu_seen
        used = self.group.cpu_seconds() if self.group is not None else None
        if used is None:
            used = processes_cpu(self.tasks() if tasks is None else tasks)
        self._cpu_seen = max(self._cpu_seen, used)
        return self._cpu_seen

    def run_queue_wait(self) -> dict[int, float]:
        """thread id -> seconds it has spent runnable but waiting for a CPU, for each thread of its processes."""
        return run_queue_wait(self.tasks())

    def peak_memory(self) -> int | None:
        """The most memory its group used (bytes), where a memory cgroup bounds it."""
        return self.group.peak_memory() if self.group is not None else None

    def close(self) -> None:
        self.kill()
        if self.proc is not None:
            self.proc.wait()
        if self.sock is not None:
            self.sock.close()
        if self.group is not None:
            self.leftovers += [f"control group {folder}" for folder in self.group.remove()]
            self.group = None
        if self.workdir:
            if not remove_tree(self.workdir):
                self.leftovers.append(f"work folder {self.workdir}")
            self.workdir = None
        self.proc, self.sock, self.pid = None, None, None


def _spawn_request(limits: Limits, group: cgroups.Group, nproc: int | None = None) -> dict:
    """What a template is told to make a sandbox (``template.Template.spawn``): nothing of a student's."""
    return {"env": _sandbox_env(), "limits": limits.to_wire(), "nproc": nproc, "cgroups": list(group.paths.values()),
            "layout": isolation.layout(limits.disk_bytes, _matplotlib_files())}


@dataclass
class _Ahead:
    """A warm sandbox forked before its notebook: its groups, the grader's end of its socket, its process."""
    limits: Limits
    template: template.Template
    group: cgroups.Group
    sock: socket.socket
    proc: template.WarmProcess
    expiry: threading.Timer | None = None  # ends it if no notebook has taken it by then (AHEAD_IDLE_SECONDS)

    def fits(self, limits: Limits, preload) -> bool:
        """Whether it is the sandbox ``Process(limits, preload)`` would fork now, and still waiting."""
        return (self.limits == limits and set(preload) <= set(self.template.preload) and self.template.alive()
                and self.proc.returncode is None and _running(self.proc))

    def taken(self) -> _Ahead:
        if self.expiry is not None:
            self.expiry.cancel()
        return self

    def close(self) -> None:
        self.taken()
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        self.sock.close()
        self.group.remove()


_ahead: dict = {"on": False, "sandbox": None, "thread": None}  # this process's sandbox forked ahead
_ahead_lock = threading.Lock()
AHEAD_IDLE_SECONDS = GRADER.ahead_idle_seconds  # a sandbox forked ahead that no notebook takes by then is ended


def keep_one_ahead(on: bool = True) -> None:
    """Fork each warm sandbox's successor while it works (a grading process of a class: its next notebook then
    starts without waiting for the fork); ``discard_ahead`` ends the one left."""
    _ahead["on"] = on and AHEAD.on()
    if not on:
        discard_ahead()


def _running(proc: template.WarmProcess) -> bool:
    try:
        return proc.template.wait(proc.pid, 0) is None
    except template.TemplateError:
        return False


def _take_ahead(limits: Limits, preload) -> _Ahead | None:
    """The sandbox forked ahead if it is the one to start now; any other is ended."""
    _join_fork()
    with _ahead_lock:
        ahead, _ahead["sandbox"] = _ahead["sandbox"], None
    if ahead is None:
        return None
    if ahead.fits(limits, preload):
        return ahead.taken()
    ahead.close()
    return None


def _fork_ahead(limits: Limits, preload, warm) -> None:
    """Start forking the next sandbox in the background, if this process keeps one ahead and has none."""
    if not _ahead["on"] or _ahead["sandbox"] is not None or _ahead["thread"] is not None:
        return

    def fork() -> None:
        group = cgroups.Group(limits.ram_bytes, limits.tasks)
        if "pids" not in group.paths:  # RLIMIT_NPROC's count is taken at the start: no sandbox ahead
            group.remove()
            return
        ours, theirs = socket.socketpair()
        try:
            made = warm_template(tuple(preload), warm)
            proc = made.spawn(theirs.fileno(), _spawn_request(limits, group))
        except Exception:  # noqa: BLE001 - no sandbox ahead: the next one is forked when it is needed
            ours.close()
            group.remove()
            return
        finally:
            theirs.close()
        ahead = _Ahead(limits, made, group, ours, proc, threading.Timer(AHEAD_IDLE_SECONDS, lambda: _expire(ahead)))
        ahead.expiry.daemon = True
        with _ahead_lock:
            _ahead["sandbox"] = ahead
        ahead.expiry.start()

    _ahead["thread"] = threading.Thread(target=fork, name="sandbox-ahead", daemon=True)
    _ahead["thread"].start()


def discard_ahead() -> None:
    """End this process's sandbox forked ahead, if any (its groups removed)."""
    _join_fork()
    with _ahead_lock:
        ahead, _ahead["sandbox"] = _ahead["sandbox"], None
    if ahead is not None:
        ahead.close()


def _expire(ahead: _Ahead) -> None:
    """End ``ahead`` if it is still waiting for its notebook."""
    with _ahead_lock:
        if _ahead["sandbox"] is not ahead:
            return
        _ahead["sandbox"] = None
    ahead.close()


def _join_fork() -> None:
    thread, _ahead["thread"] = _ahead["thread"], None
    if thread is not None:
        thread.join()


atexit.register(discard_ahead)


def remove_tree(folder: str) -> bool:
    """Remove a folder however deep and whatever it holds (``rm`` walks it without recursion or path length
    limits, and stays on its file system); True when nothing is left."""
    if not os.path.lexists(folder):
        return True
    rm = shutil.which("rm") or "/bin/rm"
    try:
        subprocess.run([rm, "-rf", "--one-file-system", "--", folder], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    except (OSError, subprocess.SubprocessError):
        pass
    return not os.path.lexists(folder)


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after its command's name: [0] is field 3 (state), [1] the parent,
    [3] the session, [11:15] utime, stime, cutime, cstime (clock ticks); None once it has ended."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2:].decode().split()


def related_processes(leader: int) -> list[int]:
    """``leader``, the processes of its session and every descendant of those (one pass over /proc)."""
    parents, sessions = {}, {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None and len(fields) > 3:
                parents[int(entry)], sessions[int(entry)] = int(fields[1]), int(fields[3])
    found = {leader} | {pid for pid, sid in sessions.items() if sid == leader}
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    todo = list(found)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return sorted(pid for pid in found if pid in parents)


def processes_cpu(pids) -> float:
    """Seconds of CPU the processes ``pids`` used: their threads' and their waited-for children's."""
    ticks = 0
    for pid in pids:
        fields = _stat(pid)
        if fields is not None and len(fields) > 14:
            ticks += sum(int(value) for value in fields[11:15])
    return ticks / CLOCK_TICKS


def run_queue_wait(pids) -> dict[int, float]:
    """thread id -> seconds spent waiting on a run queue (``/proc/<pid>/task/<tid>/schedstat``, second field),
    for every thread of the processes ``pids``."""
    waits = {}
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    waits[int(tid)] = int(f.read().split()[1]) / 1e9
            except (OSError, IndexError, ValueError):
                continue
    return waits


class Stop(StrEnum):
    """Why a sandbox was stopped (a cell's status, as written in the results)."""
    TIMEOUT = "timeout"      # a time limit was reached
    CRASH = "crash"          # the process died (it exited, or a memory or task limit killed it)
    PROTOCOL = "protocol"    # it sent something that is not a well-formed reply
    ISOLATION = "isolation"  # no sandbox could be made


class SandboxError(GraderError):
    """The sandbox died, hung past its limit, or broke the protocol."""

    def __init__(self, message: str, kind: Stop = Stop.CRASH, limit: str | None = None, busy: bool = False):
        super().__init__(message)
        self.kind = Stop(kind)
        self.limit = limit  # a time budget that stopped it: "cpu" (a cell's, a setup cell's, the notebook's) or "wall"
        self.busy = busy    # stopped by the wall-clock cap while most of the time went waiting for a CPU


def _sandbox_env() -> dict:
    env = environment(isolation.WORKDIR, {})
    env.pop(protocol.CONFIG_VARIABLE)
    return env


def warm_template(preload: tuple, warm: tuple = ()) -> template.Template:
    """This process's template for ``preload`` (``template.template``: made now if none has imported it), the
    one a warm sandbox is forked from; a grading process makes its class's (``warm``) before its first job."""
    fonts = font_cache()
    return template.template(tuple(preload), {**_sandbox_env(), **({"MPLCONFIGDIR": os.path.dirname(fonts)}
                                                                     if fonts else {})}, warm)


@functools.lru_cache(maxsize=1)
def font_cache() -> str | None:
    """matplotlib's font list, built once by the grader (rebuilding it costs a sandbox seconds)."""
    try:
        import matplotlib
        from matplotlib import font_manager  # builds the cache file when it is missing
    except ImportError:
        return None
    path = os.path.join(matplotlib.get_cachedir(), f"fontlist-v{font_manager.FontManager.__version__}.json")
    return path if os.path.exists(path) else None


def _matplotlib_files() -> dict[str, str]:
    """Read-only files for the sandbox's matplotlib folder (name -> host path): its font list."""
    source = font_cache()
    return {os.path.basename(source): source} if source else {}


def _seed_matplotlib_cache(workdir: str) -> None:
    source = font_cache()
    if source:
        os.makedirs(os.path.join(workdir, ".matplotlib"), exist_ok=True)
        shutil.copy(source, os.path.join(workdir, ".matplotlib", os.path.basename(source)))
