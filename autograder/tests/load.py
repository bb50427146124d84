"""A busy grading machine for the tests of issue 40: busy-loop processes, each in a cpu cgroup of its own.

    with hogs(8):      # 8 processes spinning on every core, each group weighing as much as the grader's
        ...

Each group is made for the test under the cpu controller's root (cgroup v1) and removed after, with its process.
"""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time

CPU = "/sys/fs/cgroup/cpu"
SPIN = "while :; do :; done"


def available() -> str | None:
    """Why no load can be made here, or None."""
    if not os.path.isdir(CPU) or not os.access(CPU, os.W_OK):
        return f"{CPU} (cgroup v1's cpu controller) cannot be written here"
    return None


def _die_with_parent() -> None:
    """A hog outlives no test run, even one killed before its clean-up (prctl PR_SET_PDEATHSIG, SIGKILL)."""
    import ctypes
    if ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")


@contextlib.contextmanager
def hogs(count: int = 8):
    groups, procs = [], []
    try:
        for i in range(count):
            folder = os.path.join(CPU, f"issue40-hog-{os.getpid()}-{i}")
            os.makedirs(folder, exist_ok=True)
            groups.append(folder)
            proc = subprocess.Popen(["/bin/sh", "-c", SPIN], start_new_session=True, stdin=subprocess.DEVNULL,
                                    preexec_fn=_die_with_parent)
            procs.append(proc)
            with open(os.path.join(folder, "cgroup.procs"), "w") as f:
                f.write(str(proc.pid))
        time.sleep(0.5)
        yield procs
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for folder in groups:
            for _ in range(100):
                try:
                    os.rmdir(folder)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)
