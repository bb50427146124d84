"""Attacks on the operating-system boundary (issue 11, findings 1-4, 6 and 8) and on the machine's shared
resources (issue 27, findings 1-7: ``RESOURCE_ATTACKS``).

What a determined student tries once the audit hook is out of the way: reading the
solutions through a directory descriptor, planting code in the grader's packages,
starting processes that outlive grading, killing the grading worker or unrelated
processes, replies that blow up the grader, finalisers and scratch cells that outlast
the budget, torch hidden in a thread, TorchScript that would run in the grader.

Each must earn no more than the untouched release (``cases.attacks``), and harm no
classmate: ``test_grading`` checks the repository's files, a sentinel process and the
honest submissions graded in the same run.
"""
from __future__ import annotations

import nbformat

from autograder.course import ROOT, chapters, graded_names, read, source_path
from autograder.submissions import filled, untouched

SENTINEL = "dlcourse-sentinel-process"   # a process the test starts: no submission may kill it
PLANTED = "planted-by-a-student"         # a marker no submission may get into a file outside its sandbox

OS_ESCAPES = """
import os, signal, sys
_stolen = []
def _try(f):
    try:
        r = f()
        if isinstance(r, (bytes, str)):
            _stolen.append(r[:2000])
    except BaseException:
        pass
_repo = REPO
def _by_dir_fd():
    fd = os.open(_repo, os.O_RDONLY)
    return os.read(os.open("solutions/README.md", os.O_RDONLY, dir_fd=fd), 100000)
_try(_by_dir_fd)
_try(lambda: open(os.path.join(_repo, "solutions", "README.md")).read())
for _target in ("dlcourse/testing.py", "autograder/verdicts.py", "autograder/job.py"):
    _path = os.path.join(_repo, _target)
    _try(lambda: open(_path, "a").write("# " + PLANTED + "\\n"))
    _try(lambda: os.rename("output.txt", _path))
    _try(lambda: os.link("output.txt", _path + ".lnk"))
    _try(lambda: os.symlink("/tmp/" + PLANTED, _path + ".sym"))
_posix = sys.modules.get("_posixsubprocess")  # imported already where a preloaded library needed subprocess
def _fork_exec():
    import fcntl
    pipe = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3) for fd in os.pipe()]  # an error pipe it accepts
    return _posix.fork_exec([b"/bin/sleep"], [b"/bin/sleep", b"600"], True, (), None, None, -1, -1, -1, -1, -1, -1,
                            pipe[0], pipe[1], False, False, -1, None, None, None, -1, None, False)
if _posix is not None:
    _try(_fork_exec)
_try(lambda: os.fork() or None)
_try(lambda: os.kill(-1, signal.SIGKILL))
for _pid in range(3, 400):
    _try(lambda: os.pidfd_open(_pid))
    _try(lambda: os.kill(_pid, signal.SIGTERM))
""".replace("REPO", repr(str(ROOT))).replace("PLANTED", repr(PLANTED))

KILL_THE_GRADER = """
import os, signal, socket, struct
def _kill_the_grader():
    for fd in range(3, 64):
        try:
            s = socket.socket(fileno=fd)
            pid = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
            s.detach()
        except Exception:
            continue
        for target in (pid, -pid, os.getppid(), 1):
            try:
                os.kill(target, signal.SIGKILL)
            except Exception:
                pass
_kill_the_grader()
def _answer(*args, **kwargs):
    _kill_the_grader()
    return 0
"""

HUGE_REPLIES = """
import itertools
_kinds = itertools.cycle(["big", "deep", "message"])
class _Huge(Exception):
    pass
def _deep(n):
    out = []
    for _ in range(n):
        out = [out]
    return out
_BIG = [0.5] * 4_000_000
def _answer(*args, **kwargs):
    kind = next(_kinds)
    if kind == "big":
        return _BIG
    if kind == "deep":
        return _deep(100_000)
    raise _Huge("x" * 30_000_000)
"""

SLOW_FINALIZER = """
import time
class _Lingers:
    def __del__(self):
        time.sleep(100_000)
    def __call__(self, *a, **k):
        return self
def _answer(*args, **kwargs):
    return _Lingers()
"""

SLOW_CELL = "import time\ntime.sleep(14)\n"

TORCH_IN_A_THREAD = """
import threading
import numpy as np
def conv2d(X, W, b=None, stride=1, padding=0):
    import torch
    import torch.nn.functional as F
    out = []
    def work():
        y = F.conv2d(torch.tensor(X), torch.tensor(W), None if b is None else torch.tensor(b),
                     stride=stride, padding=padding)
        out.append(y.numpy())
    t = threading.Thread(target=work)
    t.start()
    t.join()
    return out[0]
"""

SCRIPTED_MODEL = """
import torch
from torch import nn
class _Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)
    def forward(self, x):
        stolen = torch.from_file(REPO + "/solutions/README.md", size=16, dtype=torch.uint8)
        torch.save(stolen, REPO + "/dlcourse/" + PLANTED + ".pt")
        return torch.zeros(x.shape[0], 10)
def build_digits_cnn():
    return torch.jit.script(_Probe())
""".replace("REPO", repr(str(ROOT))).replace("PLANTED", repr(PLANTED))


# ------------------------------------------------------------------ issue 27: the machine's shared resources
# finding 1: memory the address-space limit does not count (tmpfs, memfd), and disk
SHARED_MEMORY_AND_DISK = """
import os, mmap
_held = []
def _fill(opener, megabytes):
    done = 0
    try:
        for i in range(megabytes // 2):
            with opener(i) as f:
                f.write(b"x" * (2 << 20))
            done += 2
    except OSError:
        pass
    return done
_fill(lambda i: open(f"/tmp/fill-{i}", "wb"), 1600)
_fill(lambda i: open(f"fill-{i}", "wb"), 1600)
try:
    for _ in range(600):
        _fd = os.memfd_create("hold")
        os.write(_fd, b"x" * (2 << 20))
        _held.append(_fd)
except OSError:
    pass
"""
# finding 2: threads
THREADS = """
import threading
_stop = threading.Event()
_started = 0
try:
    for _ in range(3000):
        threading.Thread(target=_stop.wait, daemon=True).start()
        _started += 1
except Exception:
    pass
"""
# finding 3: a work folder too deep for a recursive clean-up
DEEP_FOLDER = """
import os
_fd = os.open(".", os.O_RDONLY)
for _ in range(3000):
    try:
        os.mkdir("d" * 10, dir_fd=_fd)
        _next = os.open("d" * 10, os.O_RDONLY, dir_fd=_fd)
        os.close(_fd)
        _fd = _next
        with open(f"/proc/self/fd/{_fd}/x", "wb") as _f:
            _f.write(b"x" * 8192)
    except OSError:
        break
"""
# finding 4: one raw buffer referenced many times in a reply (a copy per reference if decoded naively)
AMPLIFYING_REPLY = """
import sys
import numpy as np
_wire = sys.modules["autograder.sandbox.wire"]
_BIG = np.zeros(1_000_000)
if not hasattr(_wire, "_encode"):  # every answer cell runs this prelude: patch once
    _wire._encode = _wire.Encoder.__call__
    def _amplified(self, value):
        if value is _BIG:
            return [_wire._encode(self, value)] * 700   # one 8 MB buffer, 700 references: 5.6 GB decoded naively
        return _wire._encode(self, value)
    _wire.Encoder.__call__ = _amplified
def _answer(*args, **kwargs):
    return _BIG
"""
# finding 5: values and markdown far larger than any check needs
HUGE_TEXT = "x" * 300_000
LONG_VALUES = """
def _answer(*args, **kwargs):
    return "x" * 300_000
"""
# finding 6: hidden test code read from the student's own process while it is graded
READ_THE_DRIVER = """
import linecache, sys
def _answer(*args, **kwargs):
    found = []
    frame = sys._getframe(1)
    while frame is not None:
        found += [c for c in frame.f_code.co_consts if isinstance(c, str)]
        found += [repr(v)[:5000] for v in list(frame.f_locals.values()) if isinstance(v, (str, dict))]
        frame = frame.f_back
    for lines in list(linecache.cache.values()):
        found += list(lines[2]) if len(lines) > 2 else []
    raise ValueError("\n".join(found)[:1_000_000])
"""
# finding 7: forged replies, the last one to the clean-up request (RELEASE)
FORGED_REPLIES = """
import json, os, socket, stat, struct
def _socket_fd():
    for fd in range(3, 64):
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                return fd
        except OSError:
            pass
def _message(header):
    data = json.dumps(header).encode()
    return struct.pack("!Q", len(data)) + data + struct.pack("!Q", 0)
_calls = 0
def _answer(*args, **kwargs):
    global _calls
    _calls += 1
    fd = _socket_fd()
    forged = [{"reply": True, "ok": True, "value": 1.0, "n": _calls},
              {"reply": True, "ok": False, "error": 12345},
              {"reply": True, "ok": True, "n": "x" * 100},
              {"reply": 1}]
    for header in forged:
        os.write(fd, _message(header))
    return 0.0
"""


def resource_attacks() -> dict[str, tuple[str, object]]:
    """Issue 27, findings 1-7: built on the release, each must earn no more than it and stay within its
    budget; ``test_grading`` also checks the machine's memory, disk and tasks after the run."""
    chs = chapters()
    markdown = _scratch(_every_answer(chs[5], LONG_VALUES), HUGE_TEXT)
    markdown.cells.append(nbformat.v4.new_markdown_cell(HUGE_TEXT))
    return {
        "shared_memory_and_disk": (chs[0], _scratch(untouched(chs[0]), SHARED_MEMORY_AND_DISK)),
        "threads": (chs[1], _scratch(untouched(chs[1]), THREADS, at_end=False)),
        "deep_work_folder": (chs[2], _scratch(untouched(chs[2]), DEEP_FOLDER)),
        "amplifying_reply": (chs[3], _every_answer(chs[3], AMPLIFYING_REPLY)),
        "long_values_and_markdown": (chs[5], markdown),
        "read_the_driver": (READ_THE_DRIVER_CHAPTER, _every_answer(READ_THE_DRIVER_CHAPTER, READ_THE_DRIVER)),
        "forged_replies": (chs[4], _every_answer(chs[4], FORGED_REPLIES)),
    }


READ_THE_DRIVER_CHAPTER = "ch07_gnn"  # its hidden tests call a driver many times


def _scratch(nb, code: str, at_end: bool = True) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(code)
    nb.cells.insert(len(nb.cells) if at_end else 0, cell)
    return nb


def _every_answer(chapter: str, prelude: str) -> nbformat.NotebookNode:
    """Every graded function of the chapter answers with ``_answer`` (defined by ``prelude``)."""
    replace = {name: prelude + f"\ndef {name}(*args, **kwargs):\n    return _answer(*args, **kwargs)\n"
               for name in graded_names(read(source_path(chapter)))}
    return filled(chapter, replace, answers=None)


def attacks() -> dict[str, tuple[str, object]]:
    """Built on the release: each must earn no more than the release."""
    chs = chapters()
    slow_cells = untouched(chs[1])
    for _ in range(40):
        slow_cells = _scratch(slow_cells, SLOW_CELL)
    return {
        "os_escapes": (chs[0], _scratch(untouched(chs[0]), OS_ESCAPES, at_end=False)),
        "kill_the_grader": (chs[2], _every_answer(chs[2], KILL_THE_GRADER)),
        "huge_replies": (chs[3], _every_answer(chs[3], HUGE_REPLIES)),
        "slow_finalizer": (chs[4], _every_answer(chs[4], SLOW_FINALIZER)),
        "slow_scratch_cells": (chs[1], slow_cells),
        **resource_attacks(),
    }


def cheats() -> dict[str, tuple[str, str, object]]:
    """Built on the reference with one answer cheating: name -> (chapter, function, notebook).
    The cheating function's test cell must earn less than the reference's."""
    return {
        "torch_in_a_thread": ("ch04_cnn", "conv2d", filled("ch04_cnn", {"conv2d": TORCH_IN_A_THREAD})),
        "scripted_model": ("ch04_cnn", "build_digits_cnn",
                           filled("ch04_cnn", {"build_digits_cnn": SCRIPTED_MODEL})),
    }
