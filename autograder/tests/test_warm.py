"""Warm starts (issue 28): sandboxes forked from one template share nothing a student could leave behind.

Student A, forked from a template, changes everything it can reach (files in its work folder, /tmp and
/dev/shm, the environment, modules, numpy and builtins monkeypatched, the helper package, random seeds,
a SysV shared memory segment, the bytes of a loaded library through /proc/self/mem); the same probe
that sees all of that in A (the control) sees none of it in B, forked from the same template while A
still runs, nor in C, forked after A is gone. The audit hook is off: the OS boundary alone is tested.
"""
import time

import pytest

from autograder.sandbox import process, template
from autograder.sandbox.client import Sandbox

PRELOAD = ("torch",)  # as the grader preloads for a chapter that uses torch (the largest template)

PROBE = r"""
import builtins as _builtins, ctypes as _ctypes, os as _os, random as _random, stat as _stat, sys as _sys
import numpy as _np
import torch as _torch
import dlcourse.testing as _testing
_MARK = b"left-by-student-a"
_libc = _ctypes.CDLL(None, use_errno=True)
_libc.getenv.restype = _ctypes.c_char_p
_FOLDERS = ("/sandbox", "/tmp", "/dev/shm", "/sandbox/.matplotlib")
_SHM_KEY = 0x5EED

def _library_address():
    # a read-only page of numpy's compiled core: at the same address in every fork of one template
    for line in open("/proc/self/maps"):
        parts = line.split()
        if len(parts) >= 6 and parts[1] == "r--p" and "_multiarray_umath" in parts[5]:
            return int(parts[0].split("-")[0], 16) + 256

def look():
    found = {}
    found["files"] = sorted(f"{d}/{n}" for d in _FOLDERS if _os.path.isdir(d) for n in _os.listdir(d)
                            if "left-by" in n)
    found["environment"] = "LEFT_BY_A" in _os.environ or _libc.getenv(b"LEFT_BY_A_C") is not None
    found["modules"] = "left_by_a" in _sys.modules
    found["numpy"] = hasattr(_np, "left_by_a") or bool(_np.sum([1, 2]) != 3)
    found["builtins"] = hasattr(_builtins, "left_by_a") or _builtins.ascii("x") != "'x'"
    found["helper package"] = hasattr(_testing, "left_by_a")
    found["globals"] = "left_by_a_global" in globals()
    found["python random"] = _random.getstate() == _random.Random(1234).getstate()
    found["numpy random"] = bool((_np.random.get_state()[1] == _np.random.RandomState(1234).get_state()[1]).all())
    found["torch random"] = bool((_torch.get_rng_state() == _torch.Generator().manual_seed(1234).get_state()).all())
    found["shared memory"] = _libc.shmget(_SHM_KEY, 0, 0) != -1
    address = _library_address()
    found["library memory"] = address is not None and _ctypes.string_at(address, len(_MARK)) == _MARK
    return found

def fresh_state():
    # what each sandbox draws when nobody seeds: numpy's and Python's generators differ from fork to fork
    return [_random.random(), float(_np.random.random())]

def descriptors():
    # what is open in the student's process: its standard streams and its one socket to the grader
    kinds = {}
    for name in _os.listdir("/proc/self/fd"):
        try:
            mode = _os.fstat(int(name)).st_mode
        except OSError:
            continue
        kinds[int(name)] = "socket" if _stat.S_ISSOCK(mode) else "file"
    return kinds

def attack():
    done = {}
    for d in _FOLDERS:
        try:
            with open(f"{d}/left-by-a", "w") as f:
                f.write("a")
        except OSError:
            pass
    _os.environ["LEFT_BY_A"] = "1"
    _libc.setenv(b"LEFT_BY_A_C", b"1", 1)
    _sys.modules["left_by_a"] = type(_sys)("left_by_a")
    _np.left_by_a = True
    _np.sum = lambda *a, **k: 42
    _builtins.left_by_a = True
    _builtins.ascii = lambda x: "patched"
    _testing.left_by_a = True
    globals()["left_by_a_global"] = True
    _random.seed(1234)
    _np.random.seed(1234)
    _torch.manual_seed(1234)
    done["shared memory"] = _libc.shmget(_SHM_KEY, 4096, 0o1666) != -1  # IPC_CREAT | 0666
    try:
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(_library_address())
            mem.write(_MARK)
        done["library memory"] = True
    except OSError:
        done["library memory"] = False
    return done
"""


@pytest.fixture(scope="module")
def limits():
    return {"audit_hook": False}


def _box(limits) -> Sandbox:
    box = Sandbox(limits, preload=PRELOAD).start()
    assert box.isolation.startswith(process.WARM), box.isolation
    assert box.run_cell(PROBE, "probe") is None
    return box


def test_no_state_of_one_sandbox_reaches_the_next(limits):
    a = _box(limits)
    origin = a.process.proc.template
    try:
        fresh_a = a.function("fresh_state")()
        done = a.function("attack")()
        seen_in_a = a.function("look")()
        b = _box(limits)  # while A still runs
        try:
            assert b.process.proc.template is origin, "A and B come from the same template"
            seen_in_b = b.function("look")()
            fresh_b = b.function("fresh_state")()
            descriptors = b.function("descriptors")()
        finally:
            b.close()
    finally:
        a.close()
    c = _box(limits)  # after A is gone
    try:
        assert c.process.proc.template is origin
        seen_in_c = c.function("look")()
    finally:
        c.close()
    # the control: the probe sees in A all that A did
    assert {"/sandbox/left-by-a", "/tmp/left-by-a", "/sandbox/.matplotlib/left-by-a"} <= set(seen_in_a["files"])
    assert done["shared memory"] and done["library memory"], done
    control = {name: value for name, value in seen_in_a.items() if name != "files"}
    assert control == {**{name: True for name in control}, "library memory": done["library memory"]}, control
    nothing = {name: ([] if name == "files" else False) for name in seen_in_a}
    assert seen_in_b == nothing, "B (forked while A runs) sees what A left"
    assert seen_in_c == nothing, "C (forked after A) sees what A left"
    assert fresh_a[0] != fresh_b[0] and fresh_a[1] != fresh_b[1], "each fork draws its own random state"
    others = {fd for fd, kind in descriptors.items() if kind != "socket"}
    assert list(descriptors.values()).count("socket") == 1 and others <= {0, 1, 2}, descriptors


def _groups_of_this_process() -> set[str]:
    import glob
    import os
    return {os.path.basename(folder) for folder in glob.glob(f"/sys/fs/cgroup/*/**/sandbox-{os.getpid()}-*",
                                                               recursive=True)}


def test_the_sandbox_forked_ahead_is_the_next_one_and_holds_nothing_of_the_last(monkeypatch, limits):
    """A grading process forks each sandbox's successor while it works (``process.keep_one_ahead``): the next
    notebook gets that very process (no fork on its path), which holds nothing of the student before it;
    one forked for other limits is ended, not used; at the end, none is left, nor any of its groups."""
    monkeypatch.delenv("AUTOGRADER_AHEAD", raising=False)
    process.keep_one_ahead()
    try:
        a = _box(limits)
        try:
            a.function("attack")()
            process._join_fork()
            ahead = process._ahead["sandbox"]
            assert ahead is not None and ahead.proc.pid != a.process.pid, "A's successor is forked while A works"
            b = _box(limits)
            try:
                assert b.process.pid == ahead.proc.pid, "B is the sandbox forked ahead"
                seen_in_b = b.function("look")()
            finally:
                b.close()
        finally:
            a.close()
        assert seen_in_b == {name: ([] if name == "files" else False) for name in seen_in_b}, seen_in_b
        process._join_fork()
        ahead = process._ahead["sandbox"]
        with Sandbox({**limits, "tasks": 60}, preload=PRELOAD) as c:  # other limits: not the one forked ahead
            assert c.process.pid != ahead.proc.pid and ahead.proc.returncode is not None
        monkeypatch.setattr(process, "AHEAD_IDLE_SECONDS", 0.5)  # one nobody takes is ended after a while
        Sandbox(limits, preload=PRELOAD).start().close()
        process._join_fork()
        ahead = process._ahead["sandbox"]
        assert ahead is not None and ahead.group.paths
        deadline = time.monotonic() + 10
        while (process._ahead["sandbox"] is not None or _groups_of_this_process()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process._ahead["sandbox"] is None and not _groups_of_this_process(), "an idle one is ended, groups too"
    finally:
        process.keep_one_ahead(False)
    assert process._ahead["sandbox"] is None and not _groups_of_this_process()


def test_where_no_sandbox_can_be_forked_it_starts_cold(monkeypatch):
    """A template that cannot fork a sandbox (here: no folder to build its root on) costs a warm start,
    not the sandbox: it starts cold through bubblewrap, with the same bounds."""
    monkeypatch.setattr(template, "BASES", ("/no-such-folder-for-a-root",))
    monkeypatch.setattr(template, "failures", [])
    for attempt in range(template.MAX_FAILURES + 1):  # after MAX_FAILURES, no template is even asked
        with Sandbox({}, preload=()) as box:
            assert box.isolation.startswith("bubblewrap") and not box.isolation.startswith(process.WARM)
            assert box.run_cell("import os\ndef uid():\n    return os.getuid()", "after") is None
            assert box.function("uid")() == 65534
        assert len(template.failures) == min(attempt + 1, template.MAX_FAILURES)


def test_one_template_serves_every_chapter_of_a_class(monkeypatch):
    """Issue 28: a template made for a class (``Task.warm``: every chapter's libraries) serves the sandboxes of
    each chapter, whatever fewer libraries it needs, its imports paid once; a sandbox that needs a library it
    has not imported gets a template of its own."""
    monkeypatch.setattr(template, "_cache", {})
    warm = ("matplotlib.pyplot", "torch")
    probe = "import sys\ndef has(name):\n    return name in sys.modules"
    try:
        for preload in (("torch",), (), ("matplotlib.pyplot",)):
            with Sandbox({}, preload=preload, warm=warm) as box:
                assert box.isolation.startswith(process.WARM)
                assert box.run_cell(probe, "probe") is None
                assert box.function("has")("torch") and box.function("has")("matplotlib.pyplot")
        assert list(template._cache) == [("torch", "matplotlib.pyplot")]
        with Sandbox({}, preload=("networkx",), warm=warm) as box:
            assert box.run_cell(probe, "probe") is None and box.function("has")("networkx")
        assert [set(key) for key in template._cache] == [set(warm), {"networkx", *warm}]
    finally:
        template.close_all()


def test_a_grading_process_is_warmed_for_its_class_before_its_first_job(monkeypatch):
    """Issue 28: ``prepare_worker`` makes the class's template and imports what its checks import (and what
    their oracles import on first use), so that no notebook's time holds them."""
    import sys

    from autograder.course import Chapter
    from autograder.job import check_imports, finish_worker, prepare_worker
    assert "import torch._dynamo" in check_imports(Chapter.load("ch03_backprop"))  # torch.func.jvp's, 2 s
    monkeypatch.setattr(template, "_cache", {})
    try:
        prepare_worker(("ch01_perceptron",), ("matplotlib.pyplot",))
        assert list(template._cache) == [("matplotlib.pyplot",)]
        made = template._cache[("matplotlib.pyplot",)]
        with Sandbox({}, preload=("matplotlib.pyplot",), warm=("matplotlib.pyplot",)) as box:
            assert box.isolation.startswith(process.WARM)
        assert list(template._cache.values()) == [made]
        imports = check_imports(Chapter.load("ch01_perceptron"))
        assert imports and all(line.split()[1].split(".")[0] in sys.modules for line in imports)
    finally:
        finish_worker()
        template.close_all()
