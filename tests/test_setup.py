"""Set-up on the machines students have (tools/setup_env.py, make setup): every supported Python, a
CPU-sized torch on Linux, one line for an interpreter that cannot serve, a changed or failed set-up redone.

The whole set-up from a clone in an ordinary account's home folder with Debian's own python3.11, then
make check there, is tests/test_fresh_setup.py (make test-setup, run by .ci/run)."""
import importlib.util
import os
import re
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from packaging.markers import Marker
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tools" / "setup_env.py"
# Releases a student is likely to have: 3.11.0, Debian 12's 3.11.2, this machine's 3.11.7, and a late 3.11
SUPPORTED = ("3.11.0", "3.11.2", "3.11.7", "3.11.14")
OTHER_PYTHONS = ("/root/.pyenv/versions/3.10.13/bin/python3.10", "/root/.pyenv/versions/3.12.1/bin/python3.12",
                 "/root/.pyenv/versions/3.6.15/bin/python3.6", "/root/.pyenv/versions/2.7.18/bin/python2.7",
                 "/usr/bin/python3.10", "/usr/bin/python3.12", "/usr/bin/python3.13")
DEBIAN_PYTHON = "/usr/bin/python3.11"  # Debian 12's own, 3.11.2


# as a user types it: not a sub-make of `make test` (whose MAKELEVEL makes make say "make[1]:")
TOP_LEVEL_MAKE = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}


def setup_env():
    spec = importlib.util.spec_from_file_location("setup_env", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lock_pins():
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        line = line.split("#")[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            version, _, marker = version.partition(";")
            if not marker or Marker(marker).evaluate():  # appnope: macOS only
                pins[name.strip()] = version.strip()
    return pins


def test_the_declared_range_is_the_one_students_have():
    module = setup_env()
    spec = module.requires_python()
    assert spec == ">=3.11,<3.12"
    for version in SUPPORTED:
        assert module.admits(spec, tuple(map(int, version.split(".")))), version
        assert version in SpecifierSet(spec)
    for version in ("3.10.12", "3.12.0", "3.9.2", "2.7.18"):
        assert not module.admits(spec, tuple(map(int, version.split(".")))), version


def test_every_pin_installs_on_every_supported_python():
    """Each pin's own Requires-Python (its installed metadata) admits every supported release: soupsieve
    4.1.2 (>=3.11.5) broke set-up on Debian 12's 3.11.2."""
    refused = {}
    for name, version in lock_pins().items():
        try:
            found = distribution(name)
        except PackageNotFoundError:
            refused[name] = "not installed: make setup"
            continue
        assert found.version.split("+")[0] == version, f"{name} {found.version} installed, lock says {version}"
        requires = found.metadata.get("Requires-Python")
        if requires:
            bad = [v for v in SUPPORTED if v not in SpecifierSet(requires)]
            if bad:
                refused[name] = f"{version} requires Python {requires}: not {', '.join(bad)}"
    assert not refused, refused


def test_an_unsupported_python_is_refused_in_one_line():
    module = setup_env()
    for version in ((3, 10, 12), (3, 12, 1), (3, 9, 2)):
        line = module.refusal(version, "/usr/bin/python3")
        assert "\n" not in line and len(line) < 250, line
        assert ".".join(map(str, version)) in line and ">=3.11,<3.12" in line and "PYTHON=" in line, line
    assert module.refusal((3, 11, 2), "/usr/bin/python3.11") is None


def test_make_refuses_another_python_before_any_download(tmp_path):
    """A real interpreter outside the range, through make: exit 2, one line on stderr, nothing made."""
    others = [p for p in OTHER_PYTHONS if os.access(p, os.X_OK)]
    assert others, f"none of {OTHER_PYTHONS} on this machine to try"
    for python in others:
        venv = tmp_path / "venv"
        done = subprocess.run(["make", "--no-print-directory", "setup", f"PYTHON={python}", f"VENV={venv}"],
                              cwd=ROOT, capture_output=True, text=True, timeout=60, env=TOP_LEVEL_MAKE)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 2 and lines[1].startswith("make: ***"), done.stderr
        version = subprocess.run([python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                                 capture_output=True, text=True).stdout.strip()
        assert f"Python {version} ({python}" in lines[0] and "make lab PYTHON=" in lines[0], lines[0]
        assert not done.stdout and not venv.exists()


def test_the_lock_covers_linux_and_macos():
    """Every package the direct pins need on Linux (x86_64, aarch64) and macOS is in the lock (the README
    names those platforms), read from the installed packages' metadata with each platform's markers."""
    import re as regex
    from importlib.metadata import requires

    from packaging.requirements import Requirement

    def canonical(name):
        return regex.sub(r"[-_.]+", "-", name).lower()

    lock = {canonical(line.split("==")[0]) for line in (ROOT / "requirements.lock").read_text().splitlines()
            if "==" in line.split("#")[0]}
    direct = [canonical(line.split("==")[0]) for line in (ROOT / "requirements.txt").read_text().splitlines()
              if "==" in line.split("#")[0]]
    for platform in ({"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64"},
                     {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "aarch64"},
                     {"sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "arm64"}):
        seen, todo = set(), list(direct)
        while todo:
            name = todo.pop()
            if name in seen or name not in lock:
                assert name in lock or name in seen, f"{name} ({platform['sys_platform']}) is not in the lock"
                continue
            seen.add(name)
            try:
                needs = requires(name) or []
            except PackageNotFoundError:  # another platform's package (appnope): it needs nothing more
                needs = []
            for text in needs:
                requirement = Requirement(text)
                if requirement.marker is None or requirement.marker.evaluate({"extra": "", **platform}):
                    todo.append(canonical(requirement.name))


def test_linux_takes_torch_from_the_cpu_index():
    """torch first, alone, from PyTorch's CPU index at the lock's version (PyPI's Linux wheel is CUDA's:
    several GB); TORCH_INDEX= (empty) gives PyPI's; macOS and Windows take PyPI's, a CPU build there."""
    module = setup_env()
    torch = lock_pins()["torch"]
    first = module.commands("py", module.CPU_INDEX, "linux")[0][1]
    assert first[first.index("--index-url") + 1] == "https://download.pytorch.org/whl/cpu"
    assert f"torch=={torch}" in first and "--no-deps" in first
    for index, platform in (("", "linux"), (module.CPU_INDEX, "darwin"), (module.CPU_INDEX, "win32")):
        assert not any("torch==" in " ".join(argv) for _, argv in module.commands("py", index, platform))
    dry = subprocess.run(["make", "-n", "setup", "VENV=/nonexistent"], cwd=ROOT, capture_output=True, text=True)
    assert "--torch-index \"https://download.pytorch.org/whl/cpu\"" in dry.stdout, dry.stdout


def test_the_environment_is_cpu_sized():
    import torch

    assert torch.version.cuda is None, torch.version.cuda
    cuda = sorted(d.metadata["Name"] for d in __import__("importlib.metadata").metadata.distributions()
                  if re.match(r"(nvidia-|triton)", d.metadata["Name"] or "", re.I))
    assert not cuda, cuda


def _setup(python, venv, **env):
    return subprocess.run([python, str(SCRIPT), "--venv", str(venv), "--torch-index", ""], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env={**os.environ, **env})


def test_a_failed_or_changed_set_up_is_redone(tmp_path):
    """pip fails (no index reachable): one last line says what to do and no stamp is written, so the next
    run installs again; another interpreter (PYTHON=...) makes the virtualenv anew, never reuses it."""
    venv = tmp_path / "venv"
    offline = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(tmp_path), "PIP_CONFIG_FILE": os.devnull}
    first = _setup(sys.executable, venv, **offline)
    last = first.stdout.strip().splitlines()[-1]
    assert first.returncode == 1 and "FAILED" in last and "make lab again" in last, first.stdout + first.stderr
    assert (venv / ".python").read_text() == sys.executable and not (venv / ".dlcourse-setup.json").exists()
    again = _setup(sys.executable, venv, **offline)
    assert "making" not in again.stdout and "installing the pinned packages" in again.stdout, again.stdout
    assert os.path.realpath(DEBIAN_PYTHON) != os.path.realpath(sys.executable), "run the tests from .venv"
    changed = _setup(DEBIAN_PYTHON, venv, **offline)
    assert f"making it anew with {DEBIAN_PYTHON}" in changed.stdout, changed.stdout
    assert (venv / ".python").read_text() == DEBIAN_PYTHON and changed.returncode == 1


def test_make_uses_the_interpreter_that_made_the_environment(tmp_path):
    """Once set up with PYTHON=..., a plain make keeps that interpreter (never remakes the environment)."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / ".python").write_text("/usr/bin/python3.11")
    dry = subprocess.run(["make", "-n", "setup", f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True)
    assert "/usr/bin/python3.11 tools/setup_env.py" in dry.stdout, dry.stdout
    (venv / ".python").write_text("/nonexistent/python3.11")  # gone: the default again
    dry = subprocess.run(["make", "-n", "setup", f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True)
    assert "/nonexistent" not in dry.stdout and "tools/setup_env.py" in dry.stdout
