"""The operating-system boundary around a student's code: a bubblewrap sandbox with a seccomp filter.

Every sandbox process (``process.Process``) is started through
``command()``: bubblewrap (Debian's ``bubblewrap``) puts it in fresh user, pid,
network, IPC, UTS and mount namespaces, as uid/gid 65534 (also outside the
namespace when the grader is root), with no capabilities and no new privileges.
Its file system is a new, empty root holding read-only views of what Python
needs (``/usr``, the interpreter's installation, the virtualenv, the course's
helper package ``dlcourse`` and the few modules of the sandbox's own server) and
one writable folder, its work folder: a tmpfs of bounded size that also holds /tmp. No repository, no solutions, no home
folders, no class, no OUT, no other process. A seccomp filter then refuses the
system calls a notebook never needs: new processes (only threads may be
created), namespaces and mounts, ptrace and cross-process memory, sockets,
keyrings, BPF, perf, io_uring, kernel modules and the like.

``probe()`` says whether this machine can make such a sandbox; grading refuses
to start where it cannot (``autograder.classroom``, ``process``), unless the instructor asks
for the unsafe mode explicitly.
"""
from __future__ import annotations

import functools
import os
import platform
import shutil
import struct
import subprocess
import sys
import sysconfig

from ..settings import BWRAP

NOBODY = 65534
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository
# All of the grader the sandbox sees (read-only, under INSIDE): the server and what it imports.
SERVER_MODULES = ("autograder/__init__.py", "autograder/settings.py", "autograder/sandbox/__init__.py",
                  "autograder/sandbox/server.py",
                  "autograder/sandbox/protocol.py", "autograder/sandbox/wire.py", "autograder/sandbox/policy.py",
                  "autograder/sandbox/template_server.py")
INSIDE = "/grader"    # where SERVER_MODULES are, inside the sandbox
WORKDIR = "/sandbox"  # the sandbox's own folder, inside it

# --------------------------------------------------------------------- seccomp
# x86_64 system call numbers that a notebook never needs; each fails with EPERM.
DENIED_SYSCALLS = {
    "fork": 57, "vfork": 58, "ptrace": 101, "syslog": 103, "personality": 135, "uselib": 134,
    "modify_ldt": 154, "pivot_root": 155, "chroot": 161, "acct": 163, "mount": 165, "umount2": 166,
    "swapon": 167, "swapoff": 168, "reboot": 169, "iopl": 172, "ioperm": 173, "init_module": 175,
    "delete_module": 176, "quotactl": 179, "lookup_dcookie": 212, "kexec_load": 246, "add_key": 248,
    "request_key": 249, "keyctl": 250, "mknod": 133, "mknodat": 259, "unshare": 272, "move_pages": 279,
    "perf_event_open": 298, "fanotify_init": 300, "name_to_handle_at": 303, "open_by_handle_at": 304,
    "setns": 308, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "finit_module": 313,
    "kexec_file_load": 320, "bpf": 321, "userfaultfd": 323, "pidfd_send_signal": 424,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428,
    "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "pidfd_open": 434,
    "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442,
    "socket": 41, "connect": 42, "accept": 43, "bind": 49, "listen": 50, "socketpair": 53, "accept4": 288,
}
CLONE, CLONE3, CLONE_THREAD = 56, 435, 0x00010000
AUDIT_ARCH_X86_64 = 0xC000003E
EPERM, ENOSYS = 1, 38
_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW, _KILL = 0x7FFF0000, 0x80000000


def _errno(n: int) -> int:
    return 0x00050000 | n


def seccomp_program() -> bytes:
    """A classic-BPF seccomp filter (what ``bwrap --seccomp`` loads), built by hand: no libseccomp needed.

    Wrong architecture: kill. x32 system calls: EPERM. The denied calls: EPERM.
    ``clone`` is allowed only for threads (CLONE_THREAD); ``clone3``, whose flags a
    filter cannot read, answers ENOSYS so that the C library falls back to ``clone``.
    """
    code: list[tuple] = [(_LD_W_ABS, 0, 0, 4), (_JEQ, 0, "kill", AUDIT_ARCH_X86_64), (_LD_W_ABS, 0, 0, 0),
                         (_JGE, "eperm", 0, 0x40000000)]
    code += [(_JEQ, "eperm", 0, nr) for nr in sorted(DENIED_SYSCALLS.values())]
    code += [(_JEQ, "clone", 0, CLONE), (_JEQ, "enosys", 0, CLONE3), (_RET, 0, 0, _ALLOW)]
    labels = {"clone": len(code)}
    code += [(_LD_W_ABS, 0, 0, 16), (_JSET, "allow", "eperm", CLONE_THREAD)]
    for name, value in (("allow", _ALLOW), ("eperm", _errno(EPERM)), ("enosys", _errno(ENOSYS)), ("kill", _KILL)):
        labels[name] = len(code)
        code.append((_RET, 0, 0, value))

    def offset(target, at):
        return target if isinstance(target, int) else labels[target] - at - 1
    return b"".join(struct.pack("=HBBI", op, offset(jt, i), offset(jf, i), k)
                    for i, (op, jt, jf, k) in enumerate(code))


# ------------------------------------------------------------------ bubblewrap
def bwrap() -> str | None:
    """bubblewrap's path; ``AUTOGRADER_BWRAP`` names another (the tests name a missing one)."""
    path = BWRAP.value() or shutil.which("bwrap")
    return path if path and os.path.exists(path) else None


def runtime_paths() -> list[str]:
    """What the sandbox's Python needs to see, read-only, beyond /usr: its installation and packages."""
    import dlcourse
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
             os.path.dirname(os.path.abspath(dlcourse.__file__))}
    paths = {os.path.realpath(p) for p in paths if p and os.path.exists(p)}
    paths = {p for p in paths if p != "/usr" and not p.startswith("/usr/")}
    # keep the outermost of nested paths
    return sorted(p for p in paths if not any(p != q and p.startswith(q.rstrip("/") + "/") for q in paths))


def layout(disk_bytes: int, matplotlib_files: dict[str, str] | None = None) -> list[dict]:
    """The sandbox's file system, built in order on an empty root: the one description that both bubblewrap
    (``command``) and a warm template (``template_server``) follow. Each step is a dict: ``ro-bind`` (source,
    dest), ``dir`` (path, mode), ``symlink`` (target, path), ``proc`` (path), ``dev`` (path), ``tmpfs``
    (path, size, mode), ``hide`` (path: an empty read-only folder over it, ``hidden_paths``). The root itself is
    made read-only once built.

    Its work folder (``WORKDIR``) and ``/tmp`` (a link to ``WORKDIR/tmp``) are one tmpfs of ``disk_bytes``: the
    kernel bounds what it writes (its pages are also counted by the sandbox's memory cgroup), and it vanishes
    with the sandbox's mount namespace, nothing to clean on the host. ``matplotlib_files`` (name -> host path)
    are bound read-only into its matplotlib folder. The runtime is seen at its own paths, also where it lives
    under the host's /tmp (a clone of the course there): bound under ``WORKDIR/tmp`` (``_under_workdir``)."""
    steps: list[dict] = [{"op": "ro-bind", "source": "/usr", "dest": "/usr"}]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):  # usr-merged systems link these into /usr
        path = os.path.join("/", name)
        if os.path.islink(path):
            steps.append({"op": "symlink", "target": os.readlink(path), "path": path})
        elif os.path.isdir(path):
            steps.append({"op": "ro-bind", "source": path, "dest": path})
    for path in ("/etc/ld.so.cache", "/etc/localtime"):
        if os.path.exists(path):
            steps.append({"op": "ro-bind", "source": path, "dest": path})
    steps += [{"op": "proc", "path": "/proc"}, {"op": "dev", "path": "/dev"},
              {"op": "tmpfs", "path": WORKDIR, "size": int(disk_bytes), "mode": 0o1777},
              {"op": "dir", "path": f"{WORKDIR}/tmp", "mode": 0o1777},
              {"op": "symlink", "target": f"{WORKDIR}/tmp", "path": "/tmp"},
              {"op": "dir", "path": f"{WORKDIR}/.matplotlib", "mode": 0o1777}]
    for name, source in (matplotlib_files or {}).items():
        steps.append({"op": "ro-bind", "source": source, "dest": f"{WORKDIR}/.matplotlib/{name}"})
    wrong = misplaced()
    if wrong is not None:  # (probe() refuses first, in one line)
        raise ValueError(f"{wrong} cannot be bound into a sandbox")
    binds = [(path, _under_workdir(path)) for path in runtime_paths()]
    binds += [(os.path.join(ROOT, module), os.path.join(INSIDE, module)) for module in SERVER_MODULES]
    made = {WORKDIR, f"{WORKDIR}/tmp", f"{WORKDIR}/.matplotlib"}  # (a "dir" step would change their mode)
    parents = {p for _, dest in binds for p in _ancestors(dest)} - made
    for parent in sorted(parents, key=lambda p: (p.count("/"), p)):  # traversable, listing nothing else
        steps.append({"op": "dir", "path": parent, "mode": 0o755})
    steps += [{"op": "ro-bind", "source": source, "dest": dest} for source, dest in binds]
    steps += [{"op": "hide", "path": _under_workdir(path)} for path in hidden_paths()]
    return steps


def hidden_paths() -> list[str]:
    """Folders of the bound runtime the sandbox must not see: ``dlcourse/compat`` (the superseded complete answers
    kept for notebooks already handed out; graded code never reaches them), each covered by an empty read-only
    folder (a ``hide`` step)."""
    import dlcourse
    compat = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(dlcourse.__file__)), "compat"))
    return [compat] if os.path.isdir(compat) else []


def _under_workdir(path: str) -> str:
    """Where a runtime path is bound, as the sandbox's root holds it. The sandbox's /tmp is a link into its work
    folder's tmpfs (``WORKDIR/tmp``), so a path under the host's /tmp (a clone of the course there, its
    virtualenv) is bound at the same path under ``WORKDIR/tmp``: the sandbox finds it at its own path through
    the link, and sees nothing else of the host's /tmp. Neither bubblewrap nor a template then follows the
    link while building the root (bubblewrap would resolve it outside the new root: "Can't mkdir")."""
    return WORKDIR + path if path.startswith("/tmp/") else path


# where the sandbox makes its own folders: a runtime path there, or above one, cannot be bound
OWN_FOLDERS = ("/tmp", "/proc", "/dev", WORKDIR, INSIDE)


def misplaced() -> str | None:
    """A runtime path the sandbox cannot show at its own path (``/tmp`` itself, /proc, /dev, the sandbox's
    folders or above them), or None."""
    for path in runtime_paths():
        if any(own == path or own.startswith(path.rstrip("/") + "/") for own in OWN_FOLDERS) or \
                path.startswith(("/proc/", "/dev/")):
            return path
    return None


def _bwrap_arguments(step: dict) -> list[str]:
    op = step["op"]
    if op == "ro-bind":
        return ["--ro-bind", step["source"], step["dest"]]
    if op == "dir":
        return ["--perms", f"{step['mode']:04o}", "--dir", step["path"]]
    if op == "symlink":
        return ["--symlink", step["target"], step["path"]]
    if op in ("proc", "dev"):
        return [f"--{op}", step["path"]]
    if op == "tmpfs":
        return ["--perms", f"{step['mode']:04o}", "--size", str(step["size"]), "--tmpfs", step["path"]]
    if op == "hide":
        return ["--perms", "0555", "--size", "4096", "--tmpfs", step["path"], "--remount-ro", step["path"]]
    raise ValueError(f"unknown step {op!r}")


def command(python: str, argv: list[str], env: dict, seccomp_fd: int, disk_bytes: int,
            matplotlib_files: dict[str, str] | None = None) -> list[str]:
    """The bwrap command line that runs ``python argv`` in a sandbox whose file system is ``layout()``.

    Started by root, bubblewrap runs privileged: it builds the namespaces and mounts
    (it can read a runtime under a private home folder), then ``setpriv`` becomes
    uid/gid 65534 on the host, with no capabilities left, and runs Python. Started
    by anyone else, bubblewrap adds a user namespace that maps that user to 65534.
    """
    cmd = [bwrap(), "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
           "--die-with-parent", "--new-session", "--hostname", "sandbox"]
    if os.geteuid() != 0:
        cmd += ["--unshare-user", "--disable-userns", "--cap-drop", "ALL", "--uid", str(NOBODY), "--gid", str(NOBODY)]
        become = []
    else:
        become = [shutil.which("setpriv") or "/usr/bin/setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                  "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    for step in layout(disk_bytes, matplotlib_files):
        cmd += _bwrap_arguments(step)
    cmd += ["--chdir", WORKDIR, "--remount-ro", "/", "--clearenv"]
    for key, value in env.items():
        cmd += ["--setenv", key, value]
    return cmd + ["--seccomp", str(seccomp_fd), "--", *become, python, *argv]


def _ancestors(path: str) -> list[str]:
    parts = path.strip("/").split("/")[:-1]
    return ["/" + "/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _placement_hint() -> str:
    """What to try when bubblewrap fails and the course lives in a temporary folder (mounted oddly on some
    machines: noexec, another user's namespace): a clone elsewhere."""
    under = sorted({p for p in [ROOT, *runtime_paths()] if p.startswith(("/tmp/", "/var/tmp/", "/dev/shm/"))})
    return (f" (the course or its Python is under a temporary folder, {under[0]}: if that is why, clone the course "
            f"outside it, e.g. ~/dlcourse)") if under else ""


def seccomp_fd() -> int:
    """A readable, inheritable descriptor holding the filter (bwrap reads it once)."""
    fd = os.memfd_create("seccomp", os.MFD_CLOEXEC)
    os.write(fd, seccomp_program())
    os.lseek(fd, 0, os.SEEK_SET)
    os.set_inheritable(fd, True)
    return fd


@functools.lru_cache(maxsize=1)
def probe() -> str | None:
    """None when sandboxes can be made here, else the one-line reason why not."""
    if sys.platform != "linux":
        return f"the sandbox needs Linux namespaces (this is {sys.platform})"
    if platform.machine() not in ("x86_64", "AMD64"):
        return f"the sandbox's seccomp filter is written for x86_64 (this is {platform.machine()})"
    if bwrap() is None:
        return "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    path = misplaced()
    if path is not None:
        return (f"the course's Python or code is at {path}, where a sandbox makes its own folders: clone the course "
                f"(and make its virtualenv) elsewhere, e.g. ~/dlcourse")
    fd = seccomp_fd()
    try:  # the sandbox must be able to write its own (sized) work folder
        cmd = command(sys.executable, ["-I", "-c", "import os; open('probe', 'w').write('1'); print(os.getuid())"],
                      {"PATH": "/usr/bin:/bin"}, fd, 1024 ** 2)
        done = subprocess.run(cmd, pass_fds=(fd,), capture_output=True, text=True, timeout=60, cwd="/")
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap could not start a sandbox ({exc})"
    finally:
        os.close(fd)
    if done.returncode != 0 or done.stdout.strip() != str(NOBODY):
        reason = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return f"bubblewrap could not start a sandbox here: {reason}{_placement_hint()}"
    return None
