"""Control groups: the kernel's own bound on a sandbox's memory and tasks.

A sandbox's process joins a group of its own in the memory, pids and cpuacct controllers (cgroup v1, what
these machines offer; cpuacct only counts the CPU time its time budgets read, ``Group.cpu_seconds``), made
inside the grading process's own group, so every limit already placed on the grader still holds:

    <the grader's group>/autograder-<session>/                   the class: at most CLASS_SHARE of the machine's RAM
    <the grader's group>/autograder-<session>/sandbox-<pid>-<n>  one sandbox: Limits.ram_bytes, Limits.tasks

The memory controller counts what an address-space limit does not: tmpfs (the sandbox's work folder
and /tmp), memfd and page cache. The class group keeps GRADE_JOBS sandboxes at their limits within the
machine however many run at once. ``Group.remove`` kills whatever is left in the group, removes it and
says which folder could not be removed.

Where a controller cannot be used (not root, nor delegated to this user; cgroup v2 only), ``missing()``
says so in one line per control, and the sandbox falls back to what ``policy`` can set itself
(address space, RLIMIT_NPROC; CPU time read from /proc): see ``Process``.
"""
from __future__ import annotations

import errno
import functools
import itertools
import os
import signal
import time

from ..settings import GRADER, Limits, unprivileged

MOUNT = "/sys/fs/cgroup"
CONTROLLERS = ("memory", "pids", "cpuacct")  # cpuacct only counts: the CPU time a sandbox's budgets read
CLASS_SHARE = GRADER.class_ram_share  # of the machine's RAM, for all the sandboxes of one grading session together
_counter = itertools.count(1)


def _own_groups() -> dict[str, str]:
    """controller -> the folder of this process's group in that controller's v1 hierarchy."""
    found = {}
    try:
        with open("/proc/self/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return found
    for line in lines:
        _, names, path = line.split(":", 2)
        for name in names.split(","):
            if name in CONTROLLERS:
                for mount in (os.path.join(MOUNT, names), os.path.join(MOUNT, name)):
                    if os.path.isdir(mount):
                        found[name] = os.path.join(mount, path.lstrip("/"))
                        break
    return found


def machine_memory() -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    return 0


def _write(folder: str, name: str, value) -> None:
    with open(os.path.join(folder, name), "w") as f:
        f.write(str(value))


def _class_limits(controller: str, ram: int, tasks: int) -> dict:
    if controller == "cpuacct":
        return {}
    if controller == "memory":
        whole = int(machine_memory() * CLASS_SHARE) or ram
        return {"memory.limit_in_bytes": whole, "memory.memsw.limit_in_bytes": whole}
    return {"pids.max": tasks * 16}


def _group_limits(controller: str, ram: int, tasks: int) -> dict:
    if controller == "cpuacct":
        return {}
    if controller == "memory":  # memsw after memory: swap counted too where the kernel accounts it
        return {"memory.limit_in_bytes": ram, "memory.memsw.limit_in_bytes": ram}
    return {"pids.max": tasks}


def _make(folder: str, limits: dict) -> None:
    os.makedirs(folder, exist_ok=True)
    for name, value in limits.items():
        if name == "memory.memsw.limit_in_bytes" and not os.path.exists(os.path.join(folder, name)):
            continue  # no swap accounting in this kernel
        _write(folder, name, value)


class Group:
    """One sandbox's groups. ``paths``: controller -> folder; ``missing``: controller -> why it is not used."""

    def __init__(self, ram_bytes: int, tasks: int):
        self.paths: dict[str, str] = {}
        self.missing: dict[str, str] = {}
        own = _own_groups()
        name = f"sandbox-{os.getpid()}-{next(_counter)}"
        for controller in CONTROLLERS:
            if controller not in own:
                self.missing[controller] = "no cgroup v1 hierarchy for it here"
                continue
            top = os.path.join(own[controller], f"autograder-{os.getsid(0)}")
            for attempt in range(3):  # the class group may vanish between its creation and ours (last one out)
                try:
                    _make(top, _class_limits(controller, ram_bytes, tasks))
                    _sweep(top)
                    _make(os.path.join(top, name), _group_limits(controller, ram_bytes, tasks))
                    self.paths[controller] = os.path.join(top, name)
                    break
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    self.missing[controller] = f"cannot be written here: {exc.strerror}"
                    _remove_folder(os.path.join(top, name))
                    break

    def join(self) -> None:
        """Move the calling process into every group (called in the sandbox's process before it execs)."""
        pid = str(os.getpid()).encode()
        for folder in self.paths.values():
            fd = os.open(os.path.join(folder, "cgroup.procs"), os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)

    def tasks(self) -> list[int]:
        for folder in self.paths.values():
            try:
                with open(os.path.join(folder, "cgroup.procs")) as f:
                    return [int(p) for p in f.read().split()]
            except OSError:
                continue
        return []

    def peak_memory(self) -> int | None:
        folder = self.paths.get("memory")
        try:
            with open(os.path.join(folder, "memory.max_usage_in_bytes")) as f:
                return int(f.read())
        except (OSError, TypeError, ValueError):
            return None

    def cpu_seconds(self) -> float | None:
        """The CPU time (user and system) every task of the group has used since it was made, the ended ones
        included (cpuacct.usage), or None without a cpuacct group."""
        folder = self.paths.get("cpuacct")
        try:
            with open(os.path.join(folder, "cpuacct.usage")) as f:
                return int(f.read()) / 1e9
        except (OSError, TypeError, ValueError):
            return None

    def remove(self, seconds: float = 10.0) -> list[str]:
        """Kill every task left in the group, remove its folders; the folders that could not be removed."""
        end = time.monotonic() + seconds
        while True:
            left = self.tasks()
            if not left or time.monotonic() > end:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.01)
        stuck = []
        for folder in self.paths.values():
            if not _remove_folder(folder, end):
                stuck.append(folder)
            _remove_folder(os.path.dirname(folder), 0)  # the class group, once its last sandbox is gone
        self.paths = {}
        return stuck


def _sweep(top: str) -> None:
    """Remove the empty groups of sandboxes whose grading process has ended without removing them
    (a grading process killed at its hard limit cannot clean up after itself)."""
    for name in os.listdir(top):
        parts = name.split("-")
        if name.startswith("sandbox-") and len(parts) == 3 and parts[1].isdigit() and \
                not os.path.exists(f"/proc/{parts[1]}"):
            _remove_folder(os.path.join(top, name))


def _remove_folder(folder: str, until: float = 0) -> bool:
    while True:
        try:
            os.rmdir(folder)
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            if exc.errno != errno.EBUSY or time.monotonic() > until:
                return False
            time.sleep(0.01)


FALLBACKS = {  # what bounds a sandbox where a controller is missing (declared with its limit: autograder/settings.py)
    "memory": f"memory is bounded by {unprivileged('ram_bytes')}",
    "pids": f"tasks are bounded by {unprivileged('tasks')}",
    "cpuacct": f"CPU time is {unprivileged('cell_seconds')}",
}


def described(missing: dict[str, str]) -> list[str]:
    """One line per missing controller: which, why, and the fallback."""
    return [f"no {controller} cgroup ({why}): {FALLBACKS[controller]}" for controller, why in missing.items()]


def limited() -> str | None:
    """The one line every door (make grade, make check, nbgrader autograde) says before its first notebook when
    a bound cannot be enforced here as declared (an unprivileged run: no cgroup); None when all can."""
    lines = missing()
    return f"LIMITED: {'; '.join(lines)}" if lines else None


@functools.lru_cache(maxsize=1)
def missing() -> tuple[str, ...]:
    """One line per control a sandbox here would lack (empty when every control is available)."""
    group = Group(Limits().ram_bytes, Limits().tasks)
    try:
        return tuple(described(group.missing))
    finally:
        group.remove()


def count_tasks_of(uid: int) -> int:
    """Threads and processes of ``uid`` on this machine now (for RLIMIT_NPROC, where no pids cgroup is used)."""
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                status = f.read()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        try:
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"])
        except (KeyError, ValueError, IndexError):
            continue
    return count
