"""The README's commands as a new user types them: `make lab` as root or not, `make check` on a notebook
saved anywhere, and one clear line (never a traceback) for a wrong path or argument."""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from autograder import submissions
from autograder.check import SelfCheckError, chapter_of
from autograder.course import ROOT

CHAPTER, OTHER = "ch01_perceptron", "ch02_universal_approximation"


def make(*args, timeout=120, **kwargs):
    # as typed by a user: not a sub-make of `make test` (whose errors say "make[1]: ***")
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    env["MPLBACKEND"] = "Agg"
    return subprocess.run(["make", "--no-print-directory", "-s", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env=env, **kwargs)


def one_line_error(done, *needles):
    """The command failed with exit status 2 and said why in one line that holds every needle."""
    lines = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("make: ***")]
    assert done.returncode != 0, done.stdout[-500:]
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert len(lines) == 1, done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


# ------------------------------------------------------------------ make lab


def test_make_lab_allows_root_only_for_root():
    done = make("-n", "lab")
    assert done.returncode == 0, done.stderr
    assert ("--allow-root" in done.stdout) == (os.geteuid() == 0), done.stdout
    if os.geteuid() == 0 and shutil.which("setpriv"):
        as_nobody = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                    "make", "--no-print-directory", "-n", "lab"],
                                   cwd=ROOT, capture_output=True, text=True, timeout=60)
        if as_nobody.returncode == 0:  # the checkout may be unreadable to nobody
            assert "jupyter lab" in as_nobody.stdout and "--allow-root" not in as_nobody.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_make_lab_starts_as_the_current_user(tmp_path):
    port, token = _free_port(), secrets.token_hex(8)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JPY_", "JUPYTER"))}
    env.update({"JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
                "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"), "BROWSER": "true"})
    log = open(tmp_path / "lab.log", "w")
    proc = subprocess.Popen(["make", "--no-print-directory", "lab", f"WORK={tmp_path / 'work'}",
                             f"LAB_ARGS=--no-browser --ServerApp.ip=127.0.0.1 --ServerApp.port={port} "
                             f"--ServerApp.port_retries=0 --IdentityProvider.token={token}"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (tmp_path / "lab.log").read_text()[-2000:]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents/{CHAPTER}?token={token}",
                                            timeout=2) as reply:
                    listing = json.loads(reply.read())
                    break
            except OSError:
                assert time.monotonic() < deadline, (tmp_path / "lab.log").read_text()[-2000:]
                time.sleep(0.3)
        assert f"{CHAPTER}.ipynb" in [item["name"] for item in listing["content"]]  # served from WORK
        assert (tmp_path / "work" / CHAPTER / f"{CHAPTER}.ipynb").is_file(), "WORK was not made from course/"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


# ------------------------------------------------------------------ make check finds the chapter


def _write(path: Path, nb) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


def test_chapter_comes_from_the_notebooks_metadata_wherever_it_is_saved(tmp_path):
    nb = submissions.untouched(CHAPTER)
    assert chapter_of(_write(tmp_path / "Downloads" / "notes (1).ipynb", nb)) == CHAPTER
    assert chapter_of(_write(tmp_path / "x" / "Untitled.ipynb", nb)) == CHAPTER
    # the metadata wins over a misleading place
    assert chapter_of(_write(tmp_path / "course" / OTHER / f"{OTHER}.ipynb", nb)) == CHAPTER
    # no metadata left (cells pasted into a new notebook): the file or folder name, else a clear message
    bare = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c.source) for c in nb.cells
                                           if c.cell_type == "code"])
    assert chapter_of(_write(tmp_path / CHAPTER / "mine.ipynb", bare)) == CHAPTER
    with pytest.raises(SelfCheckError, match="carry no nbgrader metadata"):
        chapter_of(_write(tmp_path / "elsewhere" / "mine.ipynb", bare))
    mixed = submissions.untouched(CHAPTER)
    mixed.cells += submissions.untouched(OTHER).cells[:40]
    ids = lambda n: {c.metadata.get("nbgrader", {}).get("grade_id") for c in n.cells} - {None, "setup"}  # noqa: E731
    if len(ids(mixed)) == len(ids(submissions.untouched(CHAPTER))) * 2:  # as many of each: ambiguous
        with pytest.raises(SelfCheckError, match="mixes"):
            chapter_of(_write(tmp_path / "mixed.ipynb", mixed))


def test_make_check_finds_a_renamed_notebook(tmp_path):
    path = _write(tmp_path / "my work" / "perceptron-final.ipynb", submissions.untouched(CHAPTER))
    done = make("check", f"NOTEBOOK={path}", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"Self-check of {CHAPTER}" in done.stdout


@pytest.mark.parametrize("kind", ["none", "missing", "folder", "json", "bare"])
def test_make_check_says_in_one_line_what_is_wrong(tmp_path, kind):
    bare = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    notebook = {"none": "", "missing": str(tmp_path / "nope.ipynb"), "folder": str(tmp_path),
                "text": str(tmp_path / "notes.txt"), "json": str(tmp_path / "broken.ipynb"),
                "bare": str(tmp_path / "scratch.ipynb")}[kind]
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "broken.ipynb").write_text('{"cells": [')
    nbformat.write(bare, str(tmp_path / "scratch.ipynb"))
    expected = {"none": "NOTEBOOK=", "missing": "no such notebook", "folder": "is a folder",
                "text": "is not a notebook", "json": "is not a notebook", "bare": "not a notebook of this course"}
    # an empty WORK: with no NOTEBOOK, make check looks for the notebook saved last there
    one_line_error(make("check", f"NOTEBOOK={notebook}", f"WORK={tmp_path / 'work'}"), "check:", expected[kind])


# ------------------------------------------------------------------ make grade, make export, the CLI


@pytest.mark.parametrize("case", ["nothing", "missing", "inside", "jobs", "out-unwritable", "limits"])
def test_make_grade_says_in_one_line_what_is_wrong(tmp_path, case):
    (tmp_path / "class").mkdir()
    (tmp_path / "a-file").write_text("x")
    args = {"nothing": [], "no-out": [f"SUBMISSIONS={tmp_path / 'class'}"],
            "missing": [f"SUBMISSIONS={tmp_path / 'nope'}", f"OUT={tmp_path / 'out'}"],
            "file": [f"SUBMISSIONS={tmp_path / 'a-file'}", f"OUT={tmp_path / 'out'}"],
            "inside": [f"SUBMISSIONS={tmp_path / 'class'}", f"OUT={tmp_path / 'class' / 'out'}"],
            "jobs": [f"SUBMISSIONS={tmp_path / 'class'}", f"OUT={tmp_path / 'out'}", "GRADE_JOBS=two"],
            "out-unwritable": [f"SUBMISSIONS={tmp_path / 'class'}", f"OUT={tmp_path / 'a-file' / 'out'}"],
            "limits": [f"SUBMISSIONS={tmp_path / 'class'}", f"OUT={tmp_path / 'out'}", "LIMITS=ram=1e9"]}[case]
    expected = {"nothing": "usage", "no-out": "usage", "missing": "not a directory", "file": "not a directory",
                "inside": "OUT must not be inside", "jobs": "--jobs", "out-unwritable": "cannot be created",
                "limits": "'ram' is not a limit (limits: memory_bytes, ram_bytes"}[case]
    one_line_error(make("grade", *args), expected)


def _graded_out(tmp_path) -> Path:
    """An OUT folder as make grade leaves it, in miniature: a gradebook with one (empty) submission."""
    from nbgrader.api import Gradebook
    out = tmp_path / "out"
    out.mkdir()
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        gb.add_assignment(CHAPTER)
        gb.add_student("alice")
        gb.add_submission(CHAPTER, "alice")
    return out


def test_make_export_rewrites_the_csvs_or_says_in_one_line_what_is_wrong(tmp_path):
    out = _graded_out(tmp_path)
    done = make("export", f"OUT={out}")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert (out / "grades.csv").read_text().splitlines()[1].startswith(f"alice,{CHAPTER},0,")
    one_line_error(make("export"), "usage: make export OUT=")
    one_line_error(make("export", f"OUT={tmp_path / 'nope'}"), "does not exist")
    (tmp_path / "empty").mkdir()
    one_line_error(make("export", f"OUT={tmp_path / 'empty'}"), "holds no gradebook.db")
    (tmp_path / "damaged").mkdir()
    (tmp_path / "damaged" / "gradebook.db").write_bytes(b"not a database" * 100)
    one_line_error(make("export", f"OUT={tmp_path / 'damaged'}"), "could not export")


def test_cli_argument_errors_are_one_line(tmp_path):
    missing = str(tmp_path / "nope.ipynb")
    cases = [(["frobnicate"], "invalid choice"), (["grade", "--jobs", "x"], "--jobs"),
             (["check"], "required"), (["release", "ch99_nope"], "no chapter ch99_nope"),
             (["release", "--check", CHAPTER], "give no chapter"), (["quickcheck", "ch99_nope"], "no chapter"),
             (["grade-one", CHAPTER, missing], "no such file"), (["to-py", missing, str(tmp_path / "x.py")],
                                                                  "no such file"),
             (["from-py", str(tmp_path / "x.py"), missing], "no such file"), (["normalize", str(tmp_path)],
                                                                                "is a folder"),
             (["grade", "--limits", "cell_seconds=0"], "positive"),
             (["check", "--limits", "ram_bytes=lots", missing], "give ram_bytes=<number>")]
    for args, needle in cases:
        done = subprocess.run([sys.executable, "-m", "autograder", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 2, (args, done.stderr)
        one_line_error(done, "python -m autograder", needle)


def test_every_verb_has_one_parser_and_help():
    from autograder.__main__ import parser
    verbs = parser()._subparsers._group_actions[0].choices
    assert {"grade", "export", "release", "check", "quickcheck", "grade-one", "to-py", "from-py",
            "normalize"} <= set(verbs)
    done = subprocess.run([sys.executable, "-m", "autograder", "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and all(verb in done.stdout for verb in verbs), done.stdout


def test_limits_are_set_by_name_on_every_door():
    """make grade's LIMITS, the --limits of grade, check and grade-one, and nbgrader's SandboxedExecute.limits:
    each bound by name, the others their defaults, an unknown name refused."""
    from traitlets import TraitError

    from autograder.__main__ import parser
    from autograder.nbgrader_plugin import SandboxedExecute
    from autograder.settings import Limits
    done = make("-n", "grade", "SUBMISSIONS=s", "OUT=o", "LIMITS=cell_seconds=25 ram_bytes=1e9")
    assert '--limits "cell_seconds=25 ram_bytes=1e9"' in done.stdout, done.stdout
    expected = Limits(cell_seconds=25.0, ram_bytes=10 ** 9)
    for args in (["grade", "s", "o"], ["check", "n.ipynb"], ["grade-one", CHAPTER, "n.ipynb"]):
        assert parser().parse_args(args).limits == Limits()
        assert parser().parse_args([args[0], "--limits", "cell_seconds=25,ram_bytes=1e9", *args[1:]]).limits \
            == expected
    assert Limits.from_mapping(SandboxedExecute(limits={"cell_seconds": "25", "ram_bytes": 10 ** 9}).limits) \
        == expected
    with pytest.raises(TraitError, match="unknown limit 'ram'"):
        SandboxedExecute(limits={"ram": 1})


# ------------------------------------------------------------------ nbgrader as the docs write it

ACTIVATE = "source .venv/bin/activate"


def test_the_docs_nbgrader_commands_work_as_written():
    """Issue 38, finding 7: the docs' `nbgrader ...` lines were "command not found" in a shell without the
    course's environment on PATH, as a clone's is. Every shell block of README.md and docs/ that runs nbgrader
    activates the environment first, and in a shell without it, that line makes `nbgrader` the course's."""
    import re
    blocks = {path.name: re.findall(r"```(?:bash|sh|shell)?\n(.*?)```", path.read_text(), re.S)
              for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]}
    runs = [(name, block) for name, found in blocks.items() for block in found
            if re.search(r"^nbgrader ", block, re.M)]
    assert runs, "the docs show the nbgrader cycle somewhere"
    for name, block in runs:
        lines = block.splitlines()
        first = next(i for i, line in enumerate(lines) if line.startswith("nbgrader "))
        assert any(line.startswith(ACTIVATE) for line in lines[:first]), (name, block)
    venv = str(Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                           if p and Path(p).resolve() != Path(venv).resolve())
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = path
    if not shutil.which("nbgrader", path=path):  # as in a fresh shell: not found without the line
        bare = subprocess.run(["bash", "-c", "command -v nbgrader"], cwd=ROOT, env=env, capture_output=True, text=True)
        assert bare.returncode != 0 and not bare.stdout, bare
    done = subprocess.run(["bash", "-c", f"{ACTIVATE} && command -v nbgrader"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert Path(done.stdout.strip()).resolve() == (ROOT / ".venv" / "bin" / "nbgrader").resolve(), done.stdout
