"""The warm template: a process that has imported a chapter's libraries, never runs student code, and forks
each sandbox (started and driven by ``template.Template``, in the grader).

Started once per grading process and set of preloaded modules, it imports what the sandbox's server
imports (numpy, the chapter's heavy modules, ``dlcourse.testing``), checks that a fork of it shares
nothing writable (one thread, no shared writable mapping), then answers two requests on its control
socket: ``spawn`` (a sandbox, given its end of the socket pair to the grader) and
``wait`` (a sandbox's exit status). It never receives anything of a student's: only limits, the
sandbox's environment, the layout of its file system (``isolation.layout``) and the seccomp filter.

Each sandbox is three forked processes, each set up before the next one starts:

    M (the process the grader sees)  setsid, joins the sandbox's memory and pids cgroups, unshares the
                                     mount, pid, network, IPC, UTS and cgroup namespaces, then waits
    S (pid 1 of the new namespace)   dies with M; builds a new root on an empty tmpfs exactly as
                                     ``isolation.layout`` says (a fresh sized tmpfs for the work folder
                                     and /tmp, a fresh /dev with its own /dev/shm, a fresh /proc), pivots
                                     into it, makes it read-only, then waits: when it exits, the kernel
                                     kills everything left in its pid namespace
    W (pid 2, the student's process) closes every descriptor but its socket, takes the sandbox's
                                     environment, becomes uid/gid 65534 with no capability (bounding,
                                     ambient, effective, permitted), no new privileges, dies with S,
                                     loads the seccomp filter, draws fresh random seeds, and only then
                                     runs ``server.serve`` (limits, capped output, the audit hook, requests)

so the student's first line meets the same boundary as a sandbox made by bubblewrap (``isolation.command``),
in a few milliseconds instead of a fresh interpreter's imports. What W shares with the template is
copy-on-write memory (a write is W's own) holding only public code. Run by root, the template is root on
the host; run by anyone else, it first enters a user namespace of its own in which that user is 65534.
"""
from __future__ import annotations

import ctypes
import json
import os
import select
import signal
import socket
import sys

CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x02000000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = \
    1, 2, 4, 8, 32, 4096, 16384, 1 << 18
LOCKED_FLAGS = MS_NOSUID | MS_NODEV | MS_NOEXEC | 1024 | 2048 | 4096  # + noatime, nodiratime, relatime (= ST_*)
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_SECCOMP, PR_CAPBSET_DROP = 1, 4, 22, 24
PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 47, 4
SECCOMP_MODE_FILTER = 2
SYS_PIVOT_ROOT = 155
NOBODY = 65534
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
READY = b"ready"
SETUP_FAILED = 70  # the exit status of a process whose set-up failed (it has said why on the ready pipe)

_libc = ctypes.CDLL(None, use_errno=True)
for _name, _args in (("mount", [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]),
                     ("umount2", [ctypes.c_char_p, ctypes.c_int]),
                     ("unshare", [ctypes.c_int]), ("sethostname", [ctypes.c_char_p, ctypes.c_size_t]),
                     ("prctl", [ctypes.c_int] + [ctypes.c_ulong] * 4),
                     ("capset", [ctypes.c_void_p, ctypes.c_void_p])):
    getattr(_libc, _name).argtypes = _args


def _checked(result: int, what: str) -> int:
    if result == -1:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")
    return result


def _mount(source, target, fstype, flags, data=None) -> None:
    def enc(value):
        return None if value is None else os.fsencode(value)
    _checked(_libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def _prctl(option: int, arg: int = 0) -> None:
    _checked(_libc.prctl(option, arg, 0, 0, 0), f"prctl {option}")


# ------------------------------------------------------------------ the template
def main() -> None:
    """The template process (started by ``template.Template``)."""
    from . import protocol
    config = json.loads(os.environ.pop(protocol.CONFIG_VARIABLE))
    control = socket.socket(fileno=int(config["fd"]))
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # dies with its grading process
    try:
        if os.geteuid() != 0:
            _enter_user_namespace()
        import numpy.random  # noqa: F401 - numpy as the server preloads it, its generator reseeded in each fork
        for name in config.get("preload", []):
            __import__(name)
        import dlcourse.testing  # noqa: F401 - imported by server.serve before the policy

        from . import server  # noqa: F401
        problem = _unfit_to_fork()
    except Exception as exc:  # noqa: BLE001 - said to the grader, which then starts its sandboxes cold
        problem = f"{type(exc).__name__}: {exc}"
    _send(control, {"ready": problem is None, "error": problem})
    if problem is not None:
        os._exit(1)
    statuses: dict[int, int] = {}
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, 1 << 20, 1)
        except OSError:
            break
        if not message:
            break
        request = json.loads(message)
        if request["op"] == "spawn":
            answer = _spawn(request, fds[0], control.fileno())
        else:
            answer = {"status": _wait(int(request["pid"]), float(request["timeout"]), statuses)}
        for fd in fds:
            _close(fd)
        _send(control, {**answer, "n": request.get("n")})
    os._exit(0)


def _send(control: socket.socket, message: dict) -> None:
    control.sendall(json.dumps(message).encode())


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _enter_user_namespace() -> None:
    """Not root: a user namespace of the template's own, in which this user is 65534 (as bwrap --uid does)."""
    uid, gid = os.getuid(), os.getgid()
    _checked(_libc.unshare(CLONE_NEWUSER), "unshare(CLONE_NEWUSER)")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{NOBODY} {uid} 1"), ("gid_map", f"{NOBODY} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def _unfit_to_fork() -> str | None:
    """Why a fork of this process would share something with the template, or None: a second thread
    (its state would be copied half-way), or a shared writable mapping (one sandbox's writes would reach
    the next)."""
    threads = os.listdir("/proc/self/task")
    if len(threads) != 1:
        return f"the template runs {len(threads)} threads after its imports"
    with open("/proc/self/maps") as f:
        shared = [line.split()[-1] for line in f if line.split()[1][1] == "w" and line.split()[1][3] == "s"]
    if shared:
        return f"the template holds a shared writable mapping ({shared[0]})"
    return None


def _wait(pid: int, timeout: float, statuses: dict[int, int]):
    """The exit status of sandbox ``pid`` (as ``subprocess.Popen.returncode``), None if still running."""
    import time
    end = time.monotonic() + timeout
    while True:
        while True:  # reap every ended sandbox, remember their statuses
            try:
                done, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if done == 0:
                break
            statuses[done] = _returncode(status)
        if pid in statuses:
            return statuses.pop(pid)
        if time.monotonic() >= end:
            return None
        time.sleep(0.005)


def _returncode(status: int) -> int:
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _spawn(request: dict, sock_fd: int, control_fd: int) -> dict:
    """Fork a sandbox; its (M's) pid once its student process is ready, or why it could not be made."""
    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(readable)
            os.close(control_fd)
            _middle(request, sock_fd, writable)
        except BaseException as exc:  # noqa: BLE001
            _say(writable, exc)
        os._exit(SETUP_FAILED)
    os.close(writable)
    said = b""
    try:
        while len(said) < 4096 and select.select([readable], [], [], float(request.get("timeout", 30)))[0]:
            chunk = os.read(readable, 4096)
            if not chunk:
                break
            said += chunk
            if said == READY:
                break
    finally:
        os.close(readable)
    if said == READY:
        return {"pid": pid}
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    return {"error": said.decode("utf-8", "replace") or "the sandbox ended during its set-up"}


def _say(fd: int, exc: BaseException) -> None:
    try:
        os.write(fd, f"{type(exc).__name__}: {exc}".encode()[:4000])
    except OSError:
        pass


def _middle(request: dict, sock_fd: int, ready: int) -> None:
    """M: its own session and cgroups, new namespaces; forks S and ends with S's status."""
    os.setsid()
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    for folder in request.get("cgroups", []):
        with open(os.path.join(folder, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    _checked(_libc.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
                           CLONE_NEWCGROUP), "unshare")
    init = os.fork()
    if init == 0:
        try:
            _init(request, sock_fd, ready)
        except BaseException as exc:  # noqa: BLE001
            _say(ready, exc)
        os._exit(SETUP_FAILED)
    os.close(sock_fd)
    os.close(ready)
    os._exit(_exit_status(os.waitpid(init, 0)[1]))


def _exit_status(status: int) -> int:
    return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _init(request: dict, sock_fd: int, ready: int) -> None:
    """S, pid 1 of the sandbox's namespaces: builds its root, forks the student's process, ends with it."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    _build_root(request["layout"], request["base"])
    name = b"sandbox"
    _checked(_libc.sethostname(name, len(name)), "sethostname")
    student = os.fork()
    if student == 0:
        try:
            _student_process(request, sock_fd, ready)
        except BaseException as exc:  # noqa: BLE001
            _say(ready, exc)
        os._exit(SETUP_FAILED)
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # as pid 1, it then ignores every signal from its namespace
    os.close(sock_fd)
    os.close(ready)
    while True:
        pid, status = os.wait()
        if pid == student:
            os._exit(_exit_status(status))


# ------------------------------------------------------------------ S: the new root
def _build_root(steps: list[dict], base: str) -> None:
    """Mount ``isolation.layout`` on a fresh tmpfs at ``base`` and make it the root, read-only."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", base, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    for step in steps:
        op = step["op"]
        if op == "ro-bind":
            _read_only_bind(step["source"], base + step["dest"])
        elif op == "dir":
            os.makedirs(base + step["path"], exist_ok=True)
            os.chmod(base + step["path"], step["mode"])
        elif op == "symlink":
            os.makedirs(os.path.dirname(base + step["path"]), exist_ok=True)
            os.symlink(step["target"], base + step["path"])
        elif op == "tmpfs":
            os.makedirs(base + step["path"], exist_ok=True)
            _mount("tmpfs", base + step["path"], "tmpfs", MS_NOSUID | MS_NODEV,
                   f"mode={step['mode']:o},size={int(step['size'])}")
        elif op == "hide":  # an empty read-only folder over a bound one
            _mount("tmpfs", base + step["path"], "tmpfs", MS_NOSUID | MS_NODEV, "mode=555,size=4096")
            _mount(None, base + step["path"], None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
        elif op == "proc":
            _proc(base + step["path"])
        elif op == "dev":
            _dev(base + step["path"])
        else:
            raise ValueError(f"unknown step {op!r}")
    os.chdir(base)
    _checked(_libc.syscall(SYS_PIVOT_ROOT, b".", b"."), "pivot_root")
    _checked(_libc.umount2(b".", MNT_DETACH), "umount the old root")
    os.chdir("/")
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _read_only_bind(source: str, target: str) -> None:
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "a"):
            pass
    _mount(source, target, None, MS_BIND | MS_REC)
    with open("/proc/self/mountinfo") as f:  # the bind and every mount beneath it
        points = [line.split()[4] for line in f]
    for point in points:
        if point == target or point.startswith(target.rstrip("/") + "/"):
            locked = os.statvfs(point).f_flag & LOCKED_FLAGS  # flags a user namespace may not clear
            _mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | locked)


def _proc(target: str) -> None:
    os.makedirs(target, exist_ok=True)
    _mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for name in ("sys", "sysrq-trigger", "irq", "bus"):  # as bubblewrap: what could reach the kernel, read-only
        path = os.path.join(target, name)
        if os.path.exists(path):
            _mount(path, path, None, MS_BIND | MS_REC)
            _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | (os.statvfs(path).f_flag & LOCKED_FLAGS))


def _dev(target: str) -> None:
    """A fresh /dev as bubblewrap's ``--dev``: the harmless device nodes, the usual links, an empty /dev/shm."""
    os.makedirs(target, exist_ok=True)
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            with open(os.path.join(target, name), "a"):
                pass
            _mount(f"/dev/{name}", os.path.join(target, name), None, MS_BIND)
    for name, link in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                       ("stderr", "/proc/self/fd/2"), ("core", "/proc/kcore"), ("ptmx", "pts/ptmx")):
        os.symlink(link, os.path.join(target, name))
    for name in ("shm", "pts"):
        os.mkdir(os.path.join(target, name), 0o755)


# ------------------------------------------------------------------ W: the student's process
def _student_process(request: dict, sock_fd: int, ready: int) -> None:
    """W: nothing of the template's left open, the sandbox's environment, no privilege, the seccomp filter,
    fresh random seeds; then the server."""
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    keep = {0, 1, 2, sock_fd, ready}
    for fd in [int(name) for name in os.listdir("/proc/self/fd")]:
        if fd not in keep:
            _close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[:] = [request["inside"] if p == request["root"] else p for p in sys.path]
    os.chdir(request["workdir"])
    _drop_privileges()
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # (cleared by the change of user)
    _load_seccomp(bytes.fromhex(request["seccomp"]))
    import random

    import numpy
    random.seed()          # (Python reseeds at fork too) numpy's global generator is drawn fresh, as in a new process
    numpy.random.seed()
    os.write(ready, READY)
    os.close(ready)
    from ..settings import Limits
    from . import server
    server.serve(socket.socket(fileno=sock_fd), Limits.from_wire(request["limits"]), request.get("nproc"))


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_privileges() -> None:
    """uid/gid 65534, no supplementary group, every capability set empty, no new privileges; verified."""
    for cap in range(64):
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1 and ctypes.get_errno() == 22:  # EINVAL: past the last
            break
    try:
        os.setgroups([])
    except PermissionError:
        if os.geteuid() == 0:
            raise  # (in the template's user namespace, setgroups is denied and there are none)
    os.setresgid(NOBODY, NOBODY, NOBODY)
    os.setresuid(NOBODY, NOBODY, NOBODY)
    header, data = _CapHeader(0x20080522, 0), (_CapData * 2)()  # _LINUX_CAPABILITY_VERSION_3
    _checked(_libc.capset(ctypes.addressof(header), ctypes.addressof(data)), "capset")
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    _prctl(PR_SET_DUMPABLE, 1)  # as after bubblewrap's exec: its own /proc/self is its own
    with open("/proc/self/status") as f:
        status = dict(line.split(":", 1) for line in f if ":" in line)
    ids = {int(v) for key in ("Uid", "Gid") for v in status[key].split()}
    caps = {int(status[key], 16) for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}
    if ids != {NOBODY} or caps != {0} or status["NoNewPrivs"].strip() != "1":
        raise PermissionError("the student's process kept a privilege")


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _load_seccomp(program: bytes) -> None:
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.addressof(buffer))
    _checked(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0), "seccomp")
