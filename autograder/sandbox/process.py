"""The life cycle of one sandbox process: its work folder, its environment, its start and its end.

``Process.start()`` makes a work folder, a socket pair and the one environment the
server runs with (``environment``), then starts ``python -c 'from autograder.sandbox.server
import main; main()'`` through bubblewrap (``isolation.command``), or, in the unsafe mode
only, as a plain child process. ``kill()`` ends its whole process group; ``close()``
also removes the work folder.
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

from . import isolation, protocol

DEFAULT_LIMITS = {
    "memory_bytes": 3 * 1024 ** 3,   # address space; torch alone maps ~0.7 GB
    "cpu_seconds": 600,              # the whole sandbox lifetime
    "output_bytes": 2 * 1024 ** 2,   # what the student's code may print, in all
    "cell_seconds": 60,              # wall time per test cell
    "setup_seconds": 15,             # wall time per notebook cell run before the tests (they only define things)
    "notebook_seconds": 300,         # wall time for one submission, replays included
}
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
    """One sandbox process. ``isolation`` says how it was made: "bubblewrap" or "none (<why>)"."""

    def __init__(self, limits: dict, preload: list, unsafe: bool):
        self.limits, self.preload, self.unsafe = limits, preload, unsafe
        self.isolation = None  # once started
        self.proc = None       # the Popen of the sandbox (bwrap, or the interpreter itself)
        self.pid = None        # its process (and process group) id
        self.sock = None       # the grader's end of the socket pair
        self.workdir = None

    def start(self) -> socket.socket:
        """Start the server; the grader's end of its socket."""
        reason = isolation.probe()
        if reason is not None and not self.unsafe:
            raise SandboxError(f"no sandbox can be made here: {reason}", "isolation")
        self.workdir = tempfile.mkdtemp(prefix="sandbox-")
        _seed_matplotlib_cache(self.workdir)
        ours, theirs = socket.socketpair()
        inside = isolation.WORKDIR if reason is None else self.workdir
        env = environment(inside, {"fd": theirs.fileno(), "limits": self.limits, "preload": self.preload})
        keep = [theirs.fileno()]
        if reason is None:
            if os.geteuid() == 0:
                for folder, _, files in os.walk(self.workdir):
                    for name in [folder, *(os.path.join(folder, f) for f in files)]:
                        os.chown(name, isolation.NOBODY, isolation.NOBODY)
            filter_fd = isolation.seccomp_fd()
            keep.append(filter_fd)
            cmd = isolation.command(sys.executable, self.workdir, ["-I", "-c", SERVER.format(isolation.INSIDE)],
                                    env, filter_fd)
            self.isolation = "bubblewrap"
        else:
            cmd = [sys.executable, "-I", "-c", SERVER.format(isolation.ROOT)]
            self.isolation = f"none ({reason})"
        try:
            self.proc = subprocess.Popen(cmd, cwd=self.workdir, env=env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=keep,
                                         start_new_session=True)
        finally:
            for fd in keep:
                os.close(fd)
        self.sock, self.pid = ours, self.proc.pid
        return ours

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

    def close(self) -> None:
        self.kill()
        if self.proc is not None:
            self.proc.wait()
        if self.sock is not None:
            self.sock.close()
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
        self.proc, self.sock, self.pid = None, None, None


class SandboxError(Exception):
    """The sandbox died, hung past its limit, or broke the protocol."""

    def __init__(self, message: str, kind: str = "crash"):
        super().__init__(message)
        self.kind = kind  # "timeout", "crash", "memory", "protocol", "isolation"


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


def _seed_matplotlib_cache(workdir: str) -> None:
    source = font_cache()
    if source:
        os.makedirs(os.path.join(workdir, ".matplotlib"), exist_ok=True)
        shutil.copy(source, os.path.join(workdir, ".matplotlib", os.path.basename(source)))
