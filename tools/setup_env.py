"""Builds the course's environment (make setup): the interpreter checked, a virtualenv, the pinned packages.

    python3.11 tools/setup_env.py [--venv .venv] [--torch-index URL] [--dry-run]

1. The interpreter is refused in one line, before anything is downloaded, unless pyproject.toml's
   ``requires-python`` admits it (or it cannot make a virtualenv with pip).
2. The virtualenv is made anew when another interpreter made it; a failed or changed set-up is redone.
3. torch comes first, on Linux from PyTorch's CPU index (``--torch-index``; empty: PyPI's default
   build, which is CUDA's on Linux), at the lock's version: a CPU-sized download.
4. Everything else at requirements.lock's versions, one progress line per package; the whole pip log is
   kept in <venv>/setup.log and its end shown when pip fails.
5. The course itself (editable), matplotlib's font cache, jupyter-config/ copied in; then the stamp.

Runs on any Python 3 so that it can refuse one in a line: no syntax newer than 3.6.
"""
from __future__ import print_function

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
INPUTS = ("requirements.txt", "requirements.lock", "pyproject.toml")
STAMP = ".dlcourse-setup.json"
NOISE = re.compile(r"^WARNING: Location '.*' is ignored")  # a pip.conf index without that project: not news
PIP = ["-m", "pip", "--disable-pip-version-check"]


def say(text):
    print("set-up: " + text, flush=True)


def requires_python():
    """pyproject.toml's requires-python, e.g. ">=3.11,<3.12": the one place the range is declared."""
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        return re.search(r'^requires-python\s*=\s*"([^"]+)"', f.read(), re.M).group(1)


def admits(spec, version):
    """Whether ``version`` (a tuple of ints) meets every clause of ``spec`` (>=, >, <=, <, ==, !=)."""
    def key(text):
        return tuple(int(part) for part in text.split("."))
    for clause in spec.split(","):
        op, bound = re.match(r"\s*(>=|<=|==|!=|>|<)\s*([0-9.]+)\s*$", clause).groups()
        bound = key(bound)
        mine = tuple(version[:len(bound)]) if op in ("==", "!=") else tuple(version)
        if not {">=": mine >= bound, ">": mine > bound, "<=": mine <= bound, "<": mine < bound,
                "==": mine == bound, "!=": mine != bound}[op]:
            return False
    return True


def refusal(version=None, executable=None):
    """One line when this interpreter cannot build the course's environment, else None."""
    version = tuple(sys.version_info[:3]) if version is None else tuple(version)
    executable = executable or sys.executable
    spec = requires_python()
    found = "Python {} ({})".format(".".join(map(str, version)), executable)
    if not admits(spec, version):
        return ("{} is not supported: the course needs Python {} (any 3.11 release); point make at one: "
                "make lab PYTHON=/path/to/python3.11".format(found, spec))
    try:
        import ensurepip  # noqa: F401  Debian splits it off: python3.11 -m venv fails without it
        import venv  # noqa: F401
    except ImportError:
        return ("{0} cannot make a virtualenv with pip: install python3.{1}-venv (Debian, Ubuntu: sudo apt "
                "install python3.{1}-venv), or make lab PYTHON=/path/to/another/python3.11".format(found, version[1]))
    return None


def inputs_digest(torch_index):
    digest = hashlib.sha256(torch_index.encode())
    for name in INPUTS:
        with open(os.path.join(ROOT, name), "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()[:16]


def wanted_stamp(torch_index):
    """What a finished set-up records in the stamp; the interpreter that made the virtualenv is <venv>/.python."""
    return {"version": sys.version.split()[0], "inputs": inputs_digest(torch_index), "torch_index": torch_index}


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def made_by_this_interpreter(venv):
    """The virtualenv was made by this interpreter (<venv>/.python, else its pyvenv.cfg, says which) and has
    a working Python."""
    if not os.access(os.path.join(venv, "bin", "python"), os.X_OK):
        return False
    me = os.path.realpath(sys.executable)
    try:
        with open(os.path.join(venv, ".python")) as f:
            return os.path.realpath(f.read().strip()) == me
    except OSError:
        pass
    config = {}
    try:
        with open(os.path.join(venv, "pyvenv.cfg")) as f:
            for line in f:
                if "=" in line:
                    name, value = line.split("=", 1)
                    config[name.strip()] = value.strip()
    except OSError:
        return False
    return (config.get("version", config.get("version_info", "")) == sys.version.split()[0]
            and os.path.realpath(config.get("home", "")) in (os.path.dirname(sys.executable), os.path.dirname(me)))


_LOCK = []


def lock_lines():
    """requirements.lock's lines, read once."""
    if not _LOCK:
        with open(os.path.join(ROOT, "requirements.lock")) as f:
            _LOCK.extend(f.read().splitlines())
    return _LOCK


def pin(name):
    for line in lock_lines():
        if line.split("==")[0].strip().lower() == name:
            return line.split("==")[1].split("#")[0].split(";")[0].strip()
    raise SystemExit("requirements.lock pins no {}".format(name))


def count_pins():
    return sum(1 for line in lock_lines() if "==" in line.split("#")[0] and ";" not in line)  # markers: other platforms


def commands(python, torch_index, platform=sys.platform):
    """The pip commands of set-up, in order: (what it is, argv)."""
    steps = []
    if torch_index and platform.startswith("linux"):
        steps.append(("torch {} from {}".format(pin("torch"), torch_index),
                      [python] + PIP + ["install", "--progress-bar", "off", "--no-deps", "--index-url", torch_index,
                                        "torch=={}".format(pin("torch"))]))
    steps.append(("the pinned packages",
                  [python] + PIP + ["install", "--progress-bar", "off", "-r", "requirements.txt",
                                    "-c", "requirements.lock"]))
    steps.append(("the course (editable)",
                  [python] + PIP + ["install", "--no-deps", "--no-build-isolation", "-e", "."]))
    return steps


def run_pip(what, argv, log, total):
    """Runs pip, printing a line per package it collects; the whole output goes to ``log``."""
    say("installing {} ...".format(what))
    log.write("$ {}\n".format(" ".join(argv)))
    log.flush()
    process = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               universal_newlines=True, bufsize=1)
    seen, tail = set(), []
    for line in process.stdout:
        log.write(line)
        line = line.rstrip()
        if NOISE.match(line):
            continue
        tail = (tail + [line])[-25:]
        named = re.match(r"\s*(?:Collecting|Requirement already satisfied:) ([A-Za-z0-9._-]+)"
                         r"|Processing \S*/([A-Za-z0-9._]+?)-\d\S*\.whl", line)
        if named:
            name = re.sub(r"[-_.]+", "-", named.group(1) or named.group(2)).lower()
            if name not in seen:
                seen.add(name)
                if not line.startswith("Requirement already satisfied"):
                    say("  [{:>3}/{}] {}".format(len(seen), total, name))
        elif re.match(r"\s*Downloading \S+ \((.*)\)", line):
            say("             downloading {}".format(line.split("(")[-1].rstrip(")")))
        elif line.startswith("Installing collected packages") and line.count(",") > 9:
            say("  unpacking {} packages (a minute or two) ...".format(line.count(",") + 1))
        elif line.startswith("ERROR"):
            print(line, flush=True)
    if len(seen) > 1:
        say("  {} packages at the lock's versions".format(len(seen)))
    if process.wait():
        print("\n".join("  | " + line for line in tail), flush=True)
        return False
    return True


def build(venv, torch_index):
    os.chdir(ROOT)
    stamp_path = os.path.join(venv, STAMP)
    want = wanted_stamp(torch_index)
    if read_json(stamp_path) == want and made_by_this_interpreter(venv):
        install_jupyter_config(venv)
        return 0
    if os.path.exists(venv) and not made_by_this_interpreter(venv):
        say("{} was made by another interpreter or is incomplete: making it anew with {}".format(venv, sys.executable))
        shutil.rmtree(venv)
    if os.path.exists(stamp_path):
        os.remove(stamp_path)
    if not os.path.exists(venv):
        say("making the virtualenv {} with Python {} ({})".format(venv, want["version"], sys.executable))
        made = subprocess.call([sys.executable, "-m", "venv", venv])
        if made:
            shutil.rmtree(venv, ignore_errors=True)
            return fail("could not make the virtualenv {} (above)".format(venv))
        with open(os.path.join(venv, ".python"), "w") as f:  # the Makefile's PYTHON from now on
            f.write(sys.executable)
        say("first time: about {} packages, several minutes (torch is the largest); later: seconds"
            .format(count_pins()))
    python = os.path.join(os.path.abspath(venv), "bin", "python")
    total = count_pins()
    with open(os.path.join(venv, "setup.log"), "w") as log:
        for what, argv in commands(python, torch_index):
            if what.startswith("torch") and installed_torch(python, venv) == torch_index:
                continue
            if not run_pip(what, argv, log, total):
                if what.startswith("torch"):
                    return fail("pip could not install torch from {} (its last lines above); make lab TORCH_INDEX= "
                                "takes PyPI's build instead (on Linux CUDA's: several GB)".format(torch_index))
                return fail("pip failed while installing {} (its last lines above; all of it in {}/setup.log)"
                            .format(what, venv))
            if what.startswith("torch"):
                with open(os.path.join(venv, ".torch-index"), "w") as f:
                    f.write(torch_index)
    say("building matplotlib's font cache")
    subprocess.check_call([python, "-c", "import matplotlib.pyplot"], env=dict(os.environ, MPLBACKEND="Agg"))
    install_jupyter_config(venv)
    if not os.path.exists(os.path.join(venv, ".python")):  # a virtualenv older than this record
        with open(os.path.join(venv, ".python"), "w") as f:
            f.write(sys.executable)
    with open(stamp_path, "w") as f:
        json.dump(want, f)
    say("environment ready in {}".format(venv))
    return 0


def installed_torch(python, venv):
    """The index the installed torch came from, when it is the lock's version; else None."""
    try:
        with open(os.path.join(venv, ".torch-index")) as f:
            index = f.read()
    except OSError:
        return None
    found = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('torch'))"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True)
    return index if found.stdout.strip().split("+")[0] == pin("torch") else None


def install_jupyter_config(venv):
    """jupyter-config/ (the course's JupyterLab settings) into the environment's etc/jupyter."""
    target = os.path.join(venv, "etc", "jupyter")
    for folder, _, files in os.walk(os.path.join(ROOT, "jupyter-config")):
        into = os.path.join(target, os.path.relpath(folder, os.path.join(ROOT, "jupyter-config")))
        os.makedirs(into, exist_ok=True)
        for name in files:
            shutil.copyfile(os.path.join(folder, name), os.path.join(into, name))


def fail(why):
    say("FAILED: {}. Fix that, then run make lab again: set-up starts where it stopped "
        "(make clean starts over).".format(why))
    return 1


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    venv = argv[argv.index("--venv") + 1] if "--venv" in argv else ".venv"
    torch_index = argv[argv.index("--torch-index") + 1] if "--torch-index" in argv else CPU_INDEX
    why = refusal()
    if why:
        print("make: " + why, file=sys.stderr)
        return 2
    if "--dry-run" in argv:
        for what, command in commands(os.path.join(venv, "bin", "python"), torch_index):
            print(" ".join(command))
        return 0
    return build(venv, torch_index)


if __name__ == "__main__":
    sys.exit(main())
