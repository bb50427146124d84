"""The sandbox, directly: what the student's code may not do, and the limits it runs under."""
import numpy as np
import pytest

from autograder import wire
from autograder.client import Sandbox, SandboxError
from autograder.notebooks import ROOT


@pytest.fixture(scope="module")
def box():
    with Sandbox({"memory_bytes": 3 * 1024 ** 3, "output_bytes": 10_000}) as sandbox:
        yield sandbox


@pytest.mark.parametrize("code", [
    f"open({str(ROOT / 'solutions' / 'README.md')!r}).read()",
    f"open({str(ROOT / 'nbgrader_config.py')!r}).read()",
    "import os; os.listdir('/work')",
    "import os; os.listdir('/tmp')",
    "open('/tmp/written-by-a-student', 'w').write('x')",
    "import os; os.system('true')",
    "import subprocess; subprocess.run(['true'])",
    "import os; os.kill(os.getppid(), 0)",
    "import ctypes; ctypes.CDLL(None)",
    "import ctypes; ctypes.string_at(id(1), 8)",
    "import ctypes; ctypes.memmove(id(1), id(2), 8)",
    "import socket; socket.socket()",
    "import gc; gc.get_objects()",
    "import sys; sys.settrace(lambda *a: None)",
    "import resource; resource.setrlimit(resource.RLIMIT_AS, (-1, -1))",
    "def f(): pass\nf.__code__ = (lambda: 1).__code__",
])
def test_forbidden(box, code):
    error = box.run_cell(code, "attempt")
    assert error is not None and error["type"] in ("PermissionError", "ModuleNotFoundError", "ImportError"), error


def test_hidden_paths_do_not_exist_for_the_sandbox(box):
    """Below the Python policy, the OS hides solutions, history and grading state (as root, or with user namespaces)."""
    import os
    if os.geteuid() != 0 and not box.isolation().startswith("mount"):
        pytest.skip(f"no mount namespace here: {box.isolation()}")
    assert box.isolation() == "mount namespace"
    box.run_cell("import os\ndef seen(paths):\n    return [os.path.exists(p) for p in paths]", "probe")
    paths = [str(ROOT / "solutions" / "README.md"), str(ROOT / ".git" / "HEAD"), "/proc/1/root",
             str(ROOT / "dlcourse" / "testing.py")]
    assert box.function("seen")(paths) == [False, False, False, True]


def test_allowed_work(box):
    assert box.run_cell("import numpy as np, torch, math\nopen('scratch.txt', 'w').write('ok')\n"
                        "x = np.linalg.solve(np.eye(3), np.ones(3))\nt = torch.ones(2) * 2", "work") is None
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


def test_wire_refuses_objects():
    encoder = wire.Encoder(lambda v: (_ for _ in ()).throw(TypeError("no")))
    tree = encoder(np.array([1, 2]))
    tree["dtype"] = "|O"
    decoder = wire.Decoder(encoder.buffers, None, None, None)
    with pytest.raises(wire.WireError):
        decoder(tree)
