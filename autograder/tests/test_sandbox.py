"""The sandbox, directly: what the student's code may not do, and the limits it runs under."""
import os
import time

import numpy as np
import pytest

from autograder.course import ROOT
from autograder.sandbox import isolation, protocol, wire
from autograder.sandbox.client import Sandbox, SandboxError
from autograder.tests import boundary_attacks


@pytest.fixture(scope="module")
def box():
    # torch is preloaded as the grader does for a notebook that mentions it (autograder.job._preload)
    with Sandbox({"memory_bytes": 3 * 1024 ** 3, "output_bytes": 10_000}, preload=("torch",)) as sandbox:
        yield sandbox


@pytest.mark.parametrize("code", [
    f"open({str(ROOT / 'solutions' / 'README.md')!r}).read()",
    f"open({str(ROOT / 'nbgrader_config.py')!r}).read()",
    "import os; os.listdir('/work')",
    "import os; os.listdir('/home')",
    "open('/usr/written-by-a-student', 'w').write('x')",
    "import os; os.system('true')",
    "import subprocess; subprocess.run(['true'])",
    "import os; os.kill(os.getppid(), 0)",
    "import socket; socket.socket()",
    "import gc; gc.get_objects()",
    "import sys; sys.settrace(lambda *a: None)",
    "import resource; resource.setrlimit(resource.RLIMIT_AS, (-1, -1))",
    "import dlcourse.testing as t\nt.Watch._profile.__code__ = (lambda *a: None).__code__",
])
def test_forbidden(box, code):
    error = box.run_cell(code, "attempt")
    assert error is not None and error["type"] in ("PermissionError", "ModuleNotFoundError", "ImportError"), error


@pytest.mark.parametrize("start", ["warm", "cold"])
def test_the_boundary_is_the_operating_system(start, monkeypatch):
    """Issue 11, finding 3: what gets past a Python audit hook meets the OS sandbox (namespaces, seccomp), whether
    the sandbox is forked from a warm template (issue 28) or started cold by bubblewrap.

    The audit hook is switched off here, as if the student's code had found a way around it."""
    from autograder.sandbox.process import WARM
    monkeypatch.setenv("AUTOGRADER_WARM", "1" if start == "warm" else "0")
    with Sandbox({"audit_hook": False}) as box:
        assert box.isolation.split(" (LIMITED")[0] == (WARM if start == "warm" else "bubblewrap"), \
            "CI and graders have bubblewrap and user namespaces: grading refuses to run without them"
        box.run_cell(ESCAPES, "escapes")
        seen = box.function("escapes")(str(ROOT))
    assert seen.pop("uid") == 65534 and seen.pop("processes") == ["1", "2"], seen
    runtime_tops = {path.strip("/").split("/")[0] for path in isolation.runtime_paths()}  # e.g. the venv's and pyenv's
    system = {name for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32") if os.path.lexists("/" + name)}
    expected = sorted(system | runtime_tops | {"dev", "etc", "grader", "proc", "sandbox", "tmp", "usr"})
    assert seen.pop("root") == expected, "the sandbox sees only the runtime, its folder and /tmp"
    assert seen.pop("repository") == ["dlcourse"], "of the repository only the helper package is visible"
    for attempt, outcome in seen.items():
        assert outcome.startswith(("denied", "missing")), f"{attempt}: {outcome}"


@pytest.mark.parametrize("start", ["warm", "cold"])
def test_the_sandbox_has_no_compat(start, monkeypatch):
    """Issue 39: the superseded complete answers (``dlcourse/compat``) are not in the sandbox, whether it is forked
    from a warm template or started cold: the folder is empty there, and importing any module of it fails."""
    from autograder.sandbox.process import WARM
    (compat,) = isolation.hidden_paths()
    there = sorted(name for name in os.listdir(compat) if name.endswith(".py"))
    assert "__init__.py" in there, "the grader's side has the package the sandbox must not see"
    monkeypatch.setenv("AUTOGRADER_WARM", "1" if start == "warm" else "0")
    with Sandbox({}) as box:
        assert box.isolation.split(" (LIMITED")[0] == (WARM if start == "warm" else "bubblewrap")
        box.run_cell(f"import os\ndef look():\n    return sorted(os.listdir({compat!r}))\n", "look")
        assert box.function("look")() == [], "dlcourse/compat is an empty folder inside"
        for module in ["anything", *(name[:-3] for name in there if name != "__init__.py")]:
            error = box.run_cell(f"import dlcourse.compat.{module}", "attempt")
            assert error is not None and error["type"] == "ModuleNotFoundError", (module, error)
        error = box.run_cell("import dlcourse.compat\nassert not dlcourse.compat.__doc__", "attempt")
        assert error is None, "what is imported as dlcourse.compat there is an empty namespace, not the package"


ESCAPES = r"""
import os, sys
def escapes(repo):
    out = {"uid": os.getuid(), "processes": sorted(p for p in os.listdir("/proc") if p.isdigit()),
           "root": sorted(os.listdir("/")), "repository": sorted(os.listdir(repo))}
    if ".venv" in out["repository"]:
        out["repository"].remove(".venv")  # the virtualenv, when it lives in the repository
    def attempt(name, f):
        try:
            out[name] = f"allowed: {f()!r}"[:200]
        except FileNotFoundError as e:
            out[name] = f"missing: {e}"
        except (OSError, PermissionError) as e:
            out[name] = f"denied: {e}"
    def by_dir_fd():
        fd = os.open(repo, os.O_RDONLY)
        return os.read(os.open("solutions/README.md", os.O_RDONLY, dir_fd=fd), 10)
    attempt("read solutions through a directory descriptor", by_dir_fd)
    attempt("read the grading state", lambda: os.listdir(os.path.join(repo, "grading")))
    attempt("read a home folder", lambda: os.listdir("/root/.ssh"))
    attempt("write the grader's package", lambda: open(os.path.join(repo, "dlcourse", "x.py"), "w"))
    attempt("rename into the grader's package", lambda: os.rename("/sandbox/output.txt",
                                                                     os.path.join(repo, "dlcourse", "testing.py")))
    attempt("symlink into the grader's package", lambda: os.symlink("/sandbox/x", os.path.join(repo, "dlcourse", "y")))
    import _posixsubprocess as fork_exec  # what subprocess forks with (the audit hook is off here)
    import fcntl
    read_end, write_end = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3) for fd in os.pipe())  # its error pipe
    attempt("start a process with _posixsubprocess", lambda: fork_exec.fork_exec(
        [b"/bin/true"], [b"/bin/true"], True, (), None, None, -1, -1, -1, -1, -1, -1, read_end, write_end,
        False, False, -1, None, None, None, -1, None, False))
    attempt("fork", os.fork)
    attempt("signal the outside through a pidfd", lambda: os.pidfd_open(1))
    attempt("signal init", lambda: os.kill(1, 9))
    attempt("open a network socket", lambda: __import__("_socket").socket())
    attempt("new namespaces", lambda: os.unshare(0x10000000) if hasattr(os, "unshare") else (_ for _ in ()).throw(
        PermissionError("no os.unshare")))
    attempt("write under /usr", lambda: open("/usr/lib/planted.py", "w"))
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    def raw(name, *args):  # the C library directly: no audit hook sees it, the kernel still refuses
        if getattr(libc, name)(*args) == -1:
            raise PermissionError(f"{name}: errno {ctypes.get_errno()}")
        return "succeeded"
    attempt("fork through the C library", lambda: raw("fork"))
    attempt("a socket through the C library", lambda: raw("socket", 2, 1, 0))
    attempt("a user namespace through the C library", lambda: raw("unshare", 0x10000000))
    attempt("ptrace through the C library", lambda: raw("ptrace", 16, 1, 0, 0))
    return out
"""


def test_allowed_work(box):
    assert box.run_cell("import numpy as np, torch, math\nopen('scratch.txt', 'w').write('ok')\n"
                        "x = np.linalg.solve(np.eye(3), np.ones(3))\nt = torch.ones(2) * 2\n"
                        "import torch.optim\np = torch.zeros(2, requires_grad=True)\n"
                        "opt = torch.optim.Adam([p], lr=0.1)\n(p - 1).pow(2).sum().backward()\nopt.step()\n"
                        "from sklearn.datasets import make_moons\nmoons = make_moons(20, random_state=0)",
                        "work") is None
    assert box.run_cell("print('x' * 100000)\nimport sys; print('y' * 100000, file=sys.stderr)", "loud") is None


def test_memory_limit_is_an_error_not_a_crash(box):
    error = box.run_cell("hog = bytearray(8 * 1024 ** 3)", "hog")
    assert error["type"] == "MemoryError"
    assert box.run_cell("ok = 1", "after") is None


def test_time_limit_kills_only_this_sandbox():
    with Sandbox() as sandbox:
        with pytest.raises(SandboxError) as info:
            sandbox.run_cell("while True: pass", "hang", seconds=2)
        assert info.value.kind == "timeout"
        with pytest.raises(SandboxError):
            sandbox.run_cell("x = 1", "after")


def test_exit_is_reported_as_a_crash():
    with Sandbox() as sandbox:
        with pytest.raises(SandboxError) as info:
            sandbox.run_cell("import os; os._exit(0)", "exit")
        assert info.value.kind == "crash"


def test_values_come_back_as_fresh_data(box):
    box.run_cell("import numpy as np\ndef f(x):\n    x += 1\n    return x.sum(), x.dtype.name, (1, [2.5]), None", "f")
    x = np.zeros(3)
    total, dtype, nested, none = box.function("f")(x)
    assert total == 3.0 and dtype == "float64" and nested == (1, [2.5]) and none is None
    assert x.tolist() == [1.0, 1.0, 1.0], "mutation of an argument is visible, as in a local call"


def test_arrays_keep_their_shape_on_the_wire():
    """A 0-d array (what np.sum(x, keepdims=False) of a 0-d input, or np.asarray(2.0), gives) stays 0-d."""
    for value in (np.asarray(2.5), np.ones((3, 4))[:, ::2], np.zeros((0, 2)), np.arange(6).reshape(2, 3).T):
        encoder = wire.Encoder(None)
        back = wire.Decoder(encoder.buffers, None, None, None)(encoder(value))
        assert back.shape == value.shape and back.dtype == value.dtype and np.array_equal(back, value)


def test_wire_refuses_objects():
    encoder = wire.Encoder(lambda v: (_ for _ in ()).throw(TypeError("no")))
    tree = encoder(np.array([1, 2]))
    tree["dtype"] = "|O"
    decoder = wire.Decoder(encoder.buffers, None, None, None)
    with pytest.raises(wire.WireError):
        decoder(tree)


def test_from_scratch_watch_sees_threads():
    """Issue 11, finding 8: torch called from a thread does not pass a from-scratch check."""
    from autograder.verdicts import grade_test_cell
    cell = ("from dlcourse.testing import check, from_scratch\nimport numpy as np\n"
            "with check('no torch'):\n    with from_scratch('f'):\n        out = f(np.ones(3))\n"
            "    assert float(out) == 3.0\n")
    sneaky = ("import threading, numpy as np\ndef f(x):\n    box = []\n"
              "    t = threading.Thread(target=lambda: box.append(float(__import__('torch').tensor(x).sum())))\n"
              "    t.start(); t.join()\n    return box[0]\n")
    pool = ("import numpy as np\nfrom concurrent.futures import ThreadPoolExecutor\npool = ThreadPoolExecutor(1)\n"
            "pool.submit(lambda: 0).result()\n"
            "def f(x):\n    return pool.submit(lambda: float(__import__('torch').tensor(x).sum())).result()\n")
    honest = "import numpy as np\ndef f(x):\n    return float(np.sum(x))\n"
    scores = {}
    for name, code in (("thread", sneaky), ("pool", pool), ("honest", honest)):
        with Sandbox({}, preload=("torch",)) as box:
            assert box.run_cell(code, name) is None
            scores[name] = grade_test_cell(box, "test_f", cell, 1, ["f"], 20).score
    assert scores == {"thread": 0.0, "pool": 0.0, "honest": 1.0}


def test_one_table_of_operations():
    """Every operation the sandbox serves has one handler in the server, and the grader serves the rest."""
    from autograder.sandbox.server import Server
    served = {op for op in protocol.OPERATIONS.values() if op.served_by == protocol.SANDBOX}
    assert set(Server(None, None).handlers) == served
    assert {op for op in protocol.OPERATIONS.values() if op not in served} == {protocol.CALLBACK}
    with pytest.raises(ValueError):
        protocol.request(protocol.EXEC, source="x = 1")


def test_the_server_sees_only_its_own_modules():
    """What the sandbox can see of the grader (isolation.SERVER_MODULES) is all that the server imports."""
    import ast

    from autograder.course import ROOT as repository
    bound = set(isolation.SERVER_MODULES)
    for module in bound:
        tree = ast.parse((repository / module).read_text())
        package = module.rsplit("/", 1)[0].split("/")  # the folder of the module: autograder or autograder/sandbox
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                anchor = "/".join(package[:len(package) - node.level + 1])
                names = [node.module] if node.module else [alias.name for alias in node.names]
                for name in names:
                    assert f"{anchor}/{name.replace('.', '/')}.py" in bound, f"{module} imports {name}, not bound"
            if isinstance(node, ast.ImportFrom) and not node.level:
                assert not (node.module or "").startswith("autograder"), module
            if isinstance(node, ast.Import):
                assert not any(alias.name.startswith("autograder") for alias in node.names), module


def test_recording_and_sandbox_monitors_are_scoped():
    """The grader's recorder and the sandbox's thread counting are context managers that leave nothing behind."""
    import _thread

    from dlcourse import testing

    class Recorder:
        def __init__(self):
            self.checks = []

        def begin(self, description, line):
            self.description = description

        def end(self, passed, message):
            self.checks.append((self.description, passed))

    recorder = Recorder()
    with testing.recording(recorder):
        with testing.check("fails, recorded"):
            with testing.from_scratch("f"):
                assert testing.active_monitors() == [["from_scratch", "f"]]
                raise AssertionError("no")
    assert recorder.checks == [("fails, recorded", False)] and testing.active_monitors() == []
    with pytest.raises(testing.CheckFailed):
        with testing.check("raises outside recording"):
            raise AssertionError("no")
    start = _thread.start_new_thread
    with testing.sandbox_monitors() as Watch:
        assert _thread.start_new_thread is not start and Watch is testing.Watch
    assert _thread.start_new_thread is start


def test_every_operation_round_trips(box):
    """Each operation of the table, through the proxies: call, callback, getattr, operator, isinstance, run, release."""
    box.run_cell("class V:\n    def __init__(self, x):\n        self.x = x\n    def __add__(self, other):\n"
                 "        return V(self.x + other.x)\n    def norm(self):\n        return abs(self.x)\n"
                 "def apply(g, x):\n    return g(x) + 1\n", "ops")
    V, apply = box.function("V"), box.function("apply")
    assert apply(lambda x: 2 * x, 3) == 7, "the sandbox calls back into the test's function"
    v = V(-2) + V(-1)
    assert isinstance(v, V) and v.x == -3 and v.norm() == 3
    drive = "def drive(V, n):\n    return [V(i).norm() for i in range(n)]\n"
    assert box.run_driver("drive", (V, 3), {}, source=drive) == [0, 1, 2]
    box.release()
    assert box.handles == {} and box.callbacks == {}


# ------------------------------------------------------------------ issue 27: the machine's shared resources

def _machine():
    """The control groups of this process's sandboxes (what a sandbox takes and must give back); other
    test workers of the same session make and remove their own beside them, so those are not counted."""
    import glob
    return sorted(glob.glob(f"/sys/fs/cgroup/*/**/autograder-{os.getsid(0)}/sandbox-{os.getpid()}-*/**",
                            recursive=True))


def test_memory_disk_and_tasks_are_bounded_by_the_kernel():
    """Findings 1-3: tmpfs, the work folder, memfd and threads meet the kernel's limits; nothing is left."""
    from autograder.sandbox import cgroups
    from autograder.settings import MiB
    before = _machine()
    limits = {"disk_bytes": 64 * MiB, "ram_bytes": 512 * MiB, "tasks": 64}
    with Sandbox(limits) as sandbox:
        sandbox.run_cell(boundary_attacks.THREADS + boundary_attacks.DEEP_FOLDER, "attack")
        sandbox.run_cell("import os, shutil\n"
                         "def _state():\n"
                         "    return [shutil.disk_usage('/tmp').total, _started]\n", "probe")
        disk, threads = sandbox.function("_state")()
        groups = dict(sandbox.process.group.paths) if sandbox.process.group else {}
        assert all(any(p.startswith(g) for p in _machine()) for g in groups.values())  # the snapshot sees this sandbox
        try:  # 1.2 GB of memfd and 3.2 GB of files: refused (ENOSPC), or the process is killed at its limit
            sandbox.run_cell(boundary_attacks.SHARED_MEMORY_AND_DISK, "hog")
            stopped = None
        except SandboxError as exc:
            stopped = exc.kind
        peak = sandbox.process.peak_memory()
        assert sandbox.process.workdir is None  # its work folder is a tmpfs: nothing on the host's disk
    assert disk <= 64 * MiB and threads < 64
    if cgroups.missing():
        pytest.skip(f"no cgroup here: {cgroups.missing()}")
    assert set(groups) == {"memory", "pids", "cpuacct"} and peak <= 512 * MiB and stopped == "crash"
    assert _machine() == before and not any(os.path.exists(g) for g in groups.values())


def test_the_wire_cannot_amplify():
    """Finding 4: one buffer referenced twice is refused, and the decoded size is capped before allocation."""
    enc = wire.Encoder(lambda v: None)
    node = enc(np.zeros(1000))
    dec = wire.Decoder(enc.buffers, None, None, None)
    with pytest.raises(wire.WireError):
        dec([node, node])
    with pytest.raises(wire.WireError):
        wire.Decoder(enc.buffers, None, None, None, max_bytes=4000)(node)
    with pytest.raises(wire.WireError):
        wire.Decoder([], None, None, None, max_nodes=1000)(list(range(2000)))


def test_drivers_are_named_not_sent(box, monkeypatch):
    """Finding 6: a driver of dlcourse.drivers reaches the sandbox as its module and name; with
    SOURCE_DRIVERS_REFUSED (on), a test cell's own function is refused; the sandbox imports nothing else."""
    from autograder import verdicts
    from dlcourse.drivers.ch02_universal_approximation import relu_alias_probe
    box.run_cell("def relu(x):\n    return x * (x > 0)\n", "relu")
    recorder = verdicts.Recorder(box, [])
    probe = recorder.in_student_process(relu_alias_probe, (box.function("relu"), np.array([1.0, -2.0])), {})
    assert probe["value"].tolist() == [1.0, 0.0] and not probe["shares"]

    def own(relu, x):
        return relu(x)
    with pytest.raises(TypeError):  # refused by default: no test cell's text enters the sandbox
        recorder.in_student_process(own, (box.function("relu"), np.array([-1.0])), {})
    monkeypatch.setattr(verdicts, "SOURCE_DRIVERS_REFUSED", False)  # an author trying a driver out
    assert recorder.in_student_process(own, (box.function("relu"), np.array([-1.0])), {}).tolist() == [0.0]
    with pytest.raises(ValueError):
        box.run_driver("loads", ([],), {}, module="json")


def test_a_driver_runs_under_the_enclosing_from_scratch(box):
    """A loop checked through in_student_process is watched in the sandbox as a call is, and as it is in a student's
    kernel: torch reached by the student's pieces inside a driver fails its check; NumPy passes."""
    from autograder import verdicts
    from dlcourse import testing
    from dlcourse.drivers.ch02_universal_approximation import relu_alias_probe
    box.run_cell("import numpy as np\ndef relu(x):\n    return x * (x > 0)\n"
                 "def relu_torch(x):\n    import torch\n    return torch.relu(torch.from_numpy(x)).numpy()\n", "relus")
    recorder = verdicts.Recorder(box, [])
    with testing.recording(recorder), testing.from_scratch("relu"):
        assert recorder.in_student_process(relu_alias_probe, (box.function("relu"), np.array([1.0, -2.0])), {})
        with pytest.raises(AssertionError, match="from scratch in NumPy, but it called"):
            recorder.in_student_process(relu_alias_probe, (box.function("relu_torch"), np.array([1.0, -2.0])), {})


def test_an_argument_comes_back_when_the_call_changed_it():
    """Mutation is observable as in a local call: an array the student's function changes in place is changed
    here too, a Generator it draws from advances here too; an array it leaves alone is not sent back at all."""
    code = "def f(a, b, rng):\n    a[0] = 7.0\n    rng.random()\n    return float(b.sum())"
    with Sandbox() as box:
        assert box.run_cell(code, "f") is None
        a, b, rng = np.zeros(3), np.ones(2), np.random.default_rng(0)
        assert box.function("f")(a, b, rng) == 2.0
        assert a.tolist() == [7.0, 0.0, 0.0] and b.tolist() == [1.0, 1.0]
        assert rng.random() == np.random.default_rng(0).random(2)[1]
        enc = box.encoder()
        reply = box.request(protocol.CALL, enc, target=enc(box.function("f")), args=enc([np.zeros(3), b, rng]),
                            kwargs=enc({}), monitors=[])
        assert [key for key, _ in reply["after"]] == [0, 2], "only the changed array and the Generator come back"


def test_every_malformed_reply_is_a_protocol_stop():
    """Finding 7: a reply that is not what its request answers, to any request (RELEASE included), stops
    that sandbox as broken protocol, never an error of the grader."""
    import socket
    import threading
    forged = [{"reply": True, "ok": False, "error": 5}, {"reply": True, "ok": True}, {"reply": 1, "ok": True},
              {"reply": True, "ok": True, "value": None, "n": 99}, {"reply": True, "ok": False,
                                                                    "error": {"type": "X", "message": "y"}}]
    for op, fields in ((protocol.RELEASE, {}), (protocol.EXEC, {"code": "", "name": "c"}),
                       (protocol.CALL, {"target": None, "args": [], "kwargs": {}, "monitors": []})):
        for header in forged:
            mine, theirs = socket.socketpair()
            sandbox = Sandbox().connect(mine)
            sandbox.process.kill = lambda: None
            answer = {**header}

            def reply():
                wire.recv(wire.Reader(theirs))
                wire.send(theirs, answer, wire.Encoder(None))
            thread = threading.Thread(target=reply)
            thread.start()
            with pytest.raises(SandboxError) as stop:
                sandbox.simple(op, **fields)
            thread.join()
            theirs.close()
            sandbox.sock.close()
            ok = op is protocol.CALL and header.get("ok") is False and isinstance(header.get("error"), dict)
            assert ok or stop.value.kind == "protocol", (op.name, header, stop.value)


def test_no_hidden_test_text_enters_the_sandbox(monkeypatch):
    """Finding 6: while every integration check of a chapter runs, the student's process holds no line of its
    hidden tests: not in any frame, global, module or linecache (what its code can read)."""
    from autograder.course import HIDDEN_BEGIN, HIDDEN_END, Chapter, grade_id, graded_names, read, release_path
    from autograder.job import Runner, sandbox_cells
    from autograder.sanitize import sanitize
    from autograder.settings import Limits
    from autograder.submissions import reference
    from autograder.tests.test_grading import _hidden_lines
    from autograder.verdicts import grade_test_cell
    chapter = boundary_attacks.READ_THE_DRIVER_CHAPTER
    source = Chapter.load(chapter)
    notebook, _ = sanitize(reference(chapter), read(release_path(chapter)))
    names = graded_names(source.source)
    spy = SPY.replace("NAMES", repr(names))
    runner = Runner(sandbox_cells(notebook) + [("spy", spy)], Limits(), ("torch",), time.monotonic() + 600)
    try:
        box = runner.ready()
        assert "spy" not in runner.cell_errors, runner.cell_errors
        # the control: a driver sent as source (what drivers were, refused since) is seen by the spy
        from autograder import verdicts
        monkeypatch.setattr(verdicts, "SOURCE_DRIVERS_REFUSED", False)
        grade_test_cell(box, "control", CONTROL.format(begin=HIDDEN_BEGIN, end=HIDDEN_END, name=names[0]), 1.0,
                        names, 60)
        assert CONTROL_MARK.encode() in box.function("_seen")()
        monkeypatch.setattr(verdicts, "SOURCE_DRIVERS_REFUSED", True)
        cells = [c for c in source.cells("tests") if "in_student_process" in c.source]
        assert cells
        for cell in cells:
            verdict = grade_test_cell(box, grade_id(cell), cell.source, 1.0, names, 120)
            assert verdict.score == 1.0, verdict
        seen = box.function("_seen")().decode("utf-8", "replace")
    finally:
        runner.close()
    hidden = _hidden_lines(chapter)
    assert hidden and len(seen) > 10_000
    assert not [line for line in hidden if line in seen]


CONTROL_MARK = "a line of a hidden driver that the spy sees when drivers travel as source"
CONTROL = """from dlcourse.testing import check, in_student_process
{begin}
def _hidden_driver(f):
    mark = "%s"
    try:
        f()
    except TypeError:
        pass
    return mark
with check("control"):
    in_student_process(_hidden_driver, {name})
{end}
""" % CONTROL_MARK

SPY = r"""
import gc as _gc, linecache as _linecache, sys as _sys
_texts = set()
def _collect(value, depth=0):
    try:
        _gather(value, depth)
    except Exception:
        pass
def _gather(value, depth):
    if isinstance(value, str):
        _texts.add(value)
    elif isinstance(value, bytes):
        _texts.add(value.decode("utf-8", "replace"))
    elif depth < 3 and isinstance(value, dict):
        for k, v in list(value.items()):
            _collect(k, depth + 1)
            _collect(v, depth + 1)
    elif depth < 3 and isinstance(value, (list, tuple)):
        for v in value:
            _collect(v, depth + 1)
    elif hasattr(value, "co_consts"):
        for c in value.co_consts:
            _collect(c, depth)
def _look():
    frame = _sys._getframe(1)
    while frame is not None:
        _collect(frame.f_code)
        _collect(frame.f_locals)
        _collect(frame.f_globals)
        frame = frame.f_back
    for name, module in list(_sys.modules.items()):
        if name.split(".")[0] in ("torch", "numpy", "scipy", "sklearn", "matplotlib"):
            continue  # big third-party libraries: they cannot hold a test's text
        for value in list(getattr(module, "__dict__", {}).values()):
            _collect(value)
            _collect(getattr(value, "__code__", None))
    for entry in list(_linecache.cache.values()):
        _collect(entry)
_calls = [0]
def _spied(f):
    def spy(*args, **kwargs):
        _calls[0] += 1
        if _calls[0] % 500 == 1:  # from inside every driver, without scanning on each of its many calls
            _look()
        return f(*args, **kwargs)
    return spy
for _name in NAMES:
    if callable(globals().get(_name)) and not isinstance(globals()[_name], type):
        globals()[_name] = _spied(globals()[_name])
def _seen():
    return "\n".join(sorted(_texts)).encode()
"""


def test_cleanup_has_no_depth_limit_and_reports_what_stays(tmp_path):
    """Finding 3: a folder deeper than Python's recursion limit is removed, and one that cannot be removed
    (an immutable file in it) is reported, not silently left."""
    import shutil
    import subprocess

    from autograder.sandbox.process import remove_tree
    deep = tmp_path / "deep"
    deep.mkdir()
    fd = os.open(deep, os.O_RDONLY)
    for _ in range(1200):  # deeper than sys.getrecursionlimit(): shutil.rmtree would fail
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    assert remove_tree(str(deep)) and not deep.exists()
    stuck = tmp_path / "stuck"
    stuck.mkdir()
    (stuck / "kept").write_text("x")
    if os.geteuid() != 0 or not shutil.which("chattr") or \
            subprocess.run(["chattr", "+i", str(stuck / "kept")], capture_output=True).returncode != 0:
        pytest.skip("no immutable files here")
    try:
        assert remove_tree(str(stuck)) is False and (stuck / "kept").exists()
    finally:
        subprocess.run(["chattr", "-i", str(stuck / "kept")], check=True)


def test_groups_of_a_killed_grading_process_are_swept():
    """A grading process killed at its hard limit cannot remove its sandbox's groups: the next sandbox does."""
    from autograder.sandbox import cgroups
    if cgroups.missing():
        pytest.skip(f"no cgroup here: {cgroups.missing()}")
    with Sandbox() as first:
        orphans = [os.path.join(os.path.dirname(path), "sandbox-999999999-1")
                   for path in first.process.group.paths.values()]
        for orphan in orphans:
            os.mkdir(orphan)
        with Sandbox():
            assert not any(os.path.exists(orphan) for orphan in orphans)


def test_drivers_hold_no_hidden_test():
    """The drivers are public helper code: no three consecutive lines of any chapter's hidden tests (one of
    them found nowhere in the release) are in dlcourse/drivers/."""
    import re

    from autograder.course import HIDDEN_BEGIN, HIDDEN_END, chapters, read, source_path
    from autograder.tests.test_grading import _hidden_lines
    drivers = ROOT / "dlcourse" / "drivers"
    text = "\n".join(line.strip() for path in drivers.glob("*.py") for line in path.read_text().splitlines())
    assert len(list(drivers.glob("ch*.py"))) >= 7
    for chapter in chapters():
        secret = set(_hidden_lines(chapter))
        for cell in read(source_path(chapter)).cells:
            for part in re.findall(rf"{re.escape(HIDDEN_BEGIN)}(.*?){re.escape(HIDDEN_END)}", cell.source, re.S):
                lines = [line.strip() for line in part.splitlines() if line.strip()]
                for window in zip(lines, lines[1:], lines[2:]):
                    if secret & set(window):
                        assert "\n".join(window) not in text, (chapter, window)
