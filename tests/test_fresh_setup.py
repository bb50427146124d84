"""The first ten minutes as a student on Debian: a copy of this checkout in an ordinary account's home
folder, Debian's own python3.11 (3.11.2) the only Python on PATH, nothing but the README's commands.

`make setup` there builds the environment from the package registries (a CPU-sized torch, progress
lines), `make lab` serves JupyterLab, and `make check` grades a chapter in its sandbox. Slow (the whole
download): `make test-setup`, which .ci/run runs after `make test`; needs root (useradd) and the network
to the package registries."""
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.fresh_setup

ROOT = Path(__file__).resolve().parents[1]
USER = "dlstudent"
HOME = Path("/home") / USER
CLONE = HOME / "dlcourse"
DEBIAN_PYTHON = "/usr/bin/python3.11"
# What README.md states: the download of make lab's first set-up on Linux, in MB
STATED = re.compile(r"download(?:s)? (?:of )?about (\d+) MB")


def as_student(command, timeout, **popen):
    """``command`` in bash as the student: a clean environment, but pip configured as this machine is (where
    its administrator put the package mirror and torch's CPU wheel: PIP_* and root's pip.conf)."""
    env = {"HOME": str(HOME), "USER": USER, "LANG": "C.UTF-8", "PATH": "/usr/local/bin:/usr/bin:/bin",
           **{k: v for k, v in os.environ.items() if k.startswith("PIP_")}}
    argv = ["runuser", "-u", USER, "--", "env", "-i", *[f"{k}={v}" for k, v in env.items()], "bash", "-c", command]
    if popen:
        return subprocess.Popen(argv, cwd=CLONE, **popen)
    return subprocess.run(argv, cwd=CLONE, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def student():
    assert os.geteuid() == 0, "make test-setup makes an ordinary account: run it as root"
    subprocess.run(["userdel", "-r", USER], capture_output=True)
    subprocess.run(["useradd", "-m", "-s", "/bin/bash", USER], check=True)
    files = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (CLONE / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, CLONE / name)
    pip_conf = Path.home() / ".config" / "pip" / "pip.conf"
    if pip_conf.exists():
        (HOME / ".config" / "pip").mkdir(parents=True, exist_ok=True)
        shutil.copy2(pip_conf, HOME / ".config" / "pip" / "pip.conf")
    subprocess.run(["chown", "-R", f"{USER}:{USER}", str(HOME)], check=True)
    yield
    subprocess.run(["pkill", "-u", USER], capture_output=True)
    subprocess.run(["userdel", "-r", USER], capture_output=True)


def test_make_setup_with_debians_python_in_a_home_folder(student):
    assert as_student("command -v python3.11", 10).stdout.strip() == DEBIAN_PYTHON
    started = time.monotonic()
    done = as_student("make setup", 1800)
    minutes = (time.monotonic() - started) / 60
    print(f"make setup as {USER} with {DEBIAN_PYTHON}: {minutes:.1f} min")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    lines = done.stdout.splitlines()
    assert len([line for line in lines if re.match(r"set-up:\s+\[\s*\d+/\d+\]", line)]) > 100, done.stdout
    assert lines[-1] == "set-up: environment ready in .venv"
    assert (CLONE / ".venv" / ".python").read_text() == DEBIAN_PYTHON
    probe = as_student(".venv/bin/python -c \"import sys, torch, importlib.metadata as m; "
                       "print(sys.version.split()[0], torch.__version__, torch.version.cuda, sorted(d.metadata['Name'] "
                       "for d in m.distributions() if d.metadata['Name'].startswith(('nvidia', 'triton'))))\"", 120)
    assert probe.stdout.split(" ", 3) == ["3.11.2", "2.13.0+cpu", "None", "[]\n"], probe.stdout + probe.stderr
    # the download: what pip fetched (sizes it printed) and the files it took from a local folder
    log = (CLONE / ".venv" / "setup.log").read_text()
    units = {"kB": 1e3, "MB": 1e6, "GB": 1e9}
    fetched = sum(float(n) * units[u] for n, u in re.findall(r"Downloading \S+ \(([\d.]+) (kB|MB|GB)\)", log))
    local = sum(os.path.getsize(path) for path in re.findall(r"Processing (/\S+\.whl)", log))
    total_mb = (fetched + local) / 1e6
    stated = [int(n) for n in STATED.findall((ROOT / "README.md").read_text())]
    print(f"download of the first set-up: {total_mb:.0f} MB (README: {stated})")
    assert total_mb < 800, f"{total_mb:.0f} MB: not a CPU-sized environment"
    assert stated and all(abs(n - total_mb) <= 0.15 * total_mb for n in stated), (total_mb, stated)
    again = as_student("make setup", 120)
    assert again.returncode == 0 and not again.stdout.strip(), again.stdout  # nothing to do: silent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_make_lab_serves_the_course(student):
    port = free_port()
    lab = as_student(f"exec make lab LAB_ARGS='--no-browser --ServerApp.port={port} --ServerApp.token=t'", 0,
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        deadline, page = time.monotonic() + 120, None
        while time.monotonic() < deadline and page is None:
            try:
                page = urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents/ch01_perceptron?token=t",
                                              timeout=5).read()
            except OSError:
                time.sleep(1)
        assert page and b"ch01_perceptron.ipynb" in page, "JupyterLab did not serve work/ within 120 s"
    finally:
        os.killpg(lab.pid, 15)
        lab.wait(30)
    assert (CLONE / "work" / "ch01_perceptron" / "ch01_perceptron.ipynb").exists()


def test_make_check_grades_in_its_sandbox(student):
    done = as_student("make check CHAPTER=ch01_perceptron", 600)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert re.search(r"\b0 of \d+ points|\b0 ?/ ?\d+", output), output[-3000:]
    assert "without isolation" not in output.lower() and "unsandboxed" not in output.lower(), output[-3000:]
