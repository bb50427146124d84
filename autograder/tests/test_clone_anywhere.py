"""Issue 37, finding 5: a clone of the course anywhere grades and checks in its sandbox, /tmp included.

The sandbox's /tmp is its own (a link into its work folder's tmpfs): a clone under the host's /tmp, with its
virtualenv inside it as ``make setup`` makes it, must still be seen at its own path inside, and nothing else of
the host's /tmp. The clone here is the working tree's files (``git ls-files``: what a clone holds, with the
edits not yet committed) in a fresh folder under /tmp, its ``.venv`` this environment's virtualenv hard-linked
into it (a real folder at its real path under /tmp, not a link), its editable install pointed at the clone.
Where no sandbox can be made at all, ``make check`` still checks, and says so in one line.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from autograder.course import ROOT
from autograder.sandbox import isolation
from autograder.sandbox.process import WARM
from autograder.submissions import reference

pytestmark = pytest.mark.xdist_group("clone-anywhere")  # one clone, its tests on one worker
CHAPTER = "ch01_perceptron"
SECRET = "planted-by-the-host"

# a student's extra cell: what the sandbox lets it see of the clone and of the host's /tmp, said in its error
LOOK_AROUND = """
import os
def _seen(path):
    try:
        open(path).read()
        return "READ"
    except OSError as e:
        return type(e).__name__
raise RuntimeError("seen: uid=%d tmp=%s base=%s solutions=%s planted=%s" % (
    os.getuid(), sorted(os.listdir("/tmp")), sorted(os.listdir(os.path.dirname(CLONE))),
    _seen(os.path.join(CLONE, "solutions", "README.md")), _seen(PLANTED)))
"""


def _hard_linked_venv(target: Path) -> None:
    """This environment's virtualenv at ``target`` (hard links: seconds, no space), its editable install of
    the course pointed at the clone, as ``make setup`` in the clone would have made it."""
    prefix = Path(os.path.realpath(sys.prefix))
    assert sys.prefix != sys.base_prefix and (prefix / "pyvenv.cfg").exists(), "run the suite from make setup's .venv"
    done = subprocess.run(["cp", "-al", str(prefix), str(target)], capture_output=True, text=True)
    if done.returncode != 0:  # /tmp on another file system: a copy (slower)
        shutil.rmtree(target, ignore_errors=True)
        subprocess.run(["cp", "-a", str(prefix), str(target)], check=True, capture_output=True)
    for found in target.glob("lib/python*/site-packages/__editable__*"):
        text = found.read_text()
        if str(ROOT) in text:
            found.unlink()  # a hard link: the original stays as it is
            found.write_text(text.replace(str(ROOT) + "/", str(target.parent) + "/").replace(
                repr(str(ROOT)), repr(str(target.parent))))


@pytest.fixture(scope="module")
def clone():
    base = Path(tempfile.mkdtemp(prefix="dlcourse-anywhere-", dir="/tmp"))  # /tmp itself, whatever --basetemp
    course = base / "course"
    try:
        files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                               capture_output=True, check=True).stdout.decode().split("\0")
        for name in filter(None, files):
            if (ROOT / name).is_file():
                (course / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, course / name)
        _hard_linked_venv(course / ".venv")
        (base / SECRET).write_text("the host's /tmp")
        yield course
    finally:  # unlinking ~50,000 hard links takes a busy disk ~20 s: in the background, the folder renamed first
        gone = base.with_name(base.name + "-removed")
        base.rename(gone)
        subprocess.run(["sh", "-c", 'rm -rf --one-file-system -- "$0" >/dev/null 2>&1 &', str(gone)], check=True)


def run(cwd: Path, *args, **env) -> subprocess.CompletedProcess:
    """A command in the clone, with the clone's virtualenv (``make ...``: as ``binder/start`` runs it, nothing
    installed) and nothing of this run's environment that names the repository."""
    environment = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "PYTHONPATH", "WORK")}
    environment.update(PATH=f"{cwd / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}", MPLBACKEND="Agg",
                       DLCOURSE_EXISTING_ENV="1", **env)
    return subprocess.run(list(args), cwd=cwd, env=environment, capture_output=True, text=True, timeout=300)


def test_make_grade_from_a_clone_under_tmp_grades_in_the_sandbox(clone):
    base = clone.parent
    folder = base / "class" / "alice" / CHAPTER
    folder.mkdir(parents=True)
    nb = reference(CHAPTER)
    nb.cells.append(nbformat.v4.new_code_cell(f"CLONE, PLANTED = {str(clone)!r}, {str(base / SECRET)!r}\n"
                                              + LOOK_AROUND))
    nbformat.write(nb, str(folder / f"{CHAPTER}.ipynb"))
    done = run(clone, "make", "--no-print-directory", "grade", f"SUBMISSIONS={base / 'class'}",
               f"OUT={base / 'out'}", "GRADE_JOBS=1")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "UNSAFE" not in done.stderr and "Can't mkdir" not in done.stderr, done.stderr[-2000:]
    result = json.loads((base / "out" / "results" / "alice" / f"{CHAPTER}.json").read_text())
    assert str(result["isolation"]).split(" (LIMITED")[0] == WARM, result["isolation"]  # forked from a template
    assert result["cells"] and all(cell["score"] == cell["points"] for cell in result["cells"]), result["cells"]
    seen = [error for error in result["cell_errors"].values() if "seen:" in error]
    # the sandbox's /tmp holds the way to the clone's runtime, nothing of the host's /tmp: not the class, not
    # OUT, not the planted file; of the clone, not the solutions
    assert len(seen) == 1 and f"uid=65534 tmp=['{base.name}'] base=['course'] solutions=FileNotFoundError " \
                               f"planted=FileNotFoundError" in seen[0], result["cell_errors"]


def test_make_check_from_a_clone_under_tmp_checks_in_the_sandbox(clone):
    notebook = clone.parent / "mine" / f"{CHAPTER}.ipynb"
    notebook.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(reference(CHAPTER), str(notebook))
    done = run(clone, str(clone / ".venv" / "bin" / "python"), "-m", "autograder", "check", "--json", str(notebook),
               AUTOGRADER_WARM="0")  # started cold, by bubblewrap itself (make grade above: forked warm)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert str(result["isolation"]).split(" (LIMITED")[0] == "bubblewrap", result["isolation"]
    assert "UNSAFE" not in done.stderr and not any("UNSAFE" in note for note in result["notes"]), result["notes"]
    assert result["cells"] and all(cell["score"] == cell["points"] for cell in result["cells"])


def test_make_check_says_when_it_runs_without_a_sandbox(clone, tmp_path):
    """Where no sandbox can be made (Binder, a container refusing user namespaces), the self-check still
    checks the learner's own code, and says so: one line on the terminal, the first note of its table."""
    notebook = clone.parent / "mine" / f"{CHAPTER}.ipynb"
    notebook.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(reference(CHAPTER), str(notebook))
    done = run(clone, "make", "--no-print-directory", "check", f"NOTEBOOK={notebook}",
               AUTOGRADER_BWRAP=str(tmp_path / "no-bwrap-here"))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    lines = [line for line in done.stderr.splitlines() if "sandbox" in line]
    assert len(lines) == 1 and lines[0].startswith("check: UNSAFE: checked without the operating-system sandbox")
    assert "bubblewrap is not installed" in lines[0] and "unconfined" in lines[0], lines
    table = " ".join(done.stdout.split())  # (its notes wrapped to the terminal)
    assert "UNSAFE: checked without the operating-system sandbox" in table, done.stdout  # the table's first note


def test_paths_under_tmp_are_bound_inside_the_work_folder(monkeypatch):
    """bubblewrap and the template build the root without following the sandbox's /tmp link; the work folder
    and its /tmp keep their modes."""
    monkeypatch.setattr(isolation, "runtime_paths", lambda: ["/opt/python", "/tmp/x/course/.venv",
                                                             "/tmp/x/course/dlcourse"])
    steps = isolation.layout(1 << 20)
    binds = {step["source"]: step["dest"] for step in steps if step["op"] == "ro-bind"}
    assert binds["/tmp/x/course/.venv"] == f"{isolation.WORKDIR}/tmp/x/course/.venv"
    assert binds["/tmp/x/course/dlcourse"] == f"{isolation.WORKDIR}/tmp/x/course/dlcourse"
    assert binds["/opt/python"] == "/opt/python"
    modes = [(step["path"], step["mode"]) for step in steps if step["op"] in ("dir", "tmpfs")]
    assert [mode for path, mode in modes if path in (isolation.WORKDIR, f"{isolation.WORKDIR}/tmp")] == [0o1777] * 2
    assert (f"{isolation.WORKDIR}/tmp/x/course", 0o755) in modes
    assert not any(step.get("path", "").startswith("/tmp/") or step.get("dest", "").startswith("/tmp/")
                   for step in steps)


@pytest.mark.parametrize("where", ["/tmp", "/", "/proc/self", isolation.WORKDIR])
def test_a_runtime_where_the_sandbox_has_its_own_folders_is_refused_in_one_line(monkeypatch, where):
    monkeypatch.setattr(isolation, "runtime_paths", lambda: ["/opt/python", where])
    reason = isolation.probe.__wrapped__()
    assert reason and "\n" not in reason and f"at {where}," in reason and "e.g. ~/dlcourse" in reason, reason
    with pytest.raises(ValueError):
        isolation.layout(1 << 20)


def test_a_failing_bubblewrap_under_tmp_says_to_clone_elsewhere(monkeypatch, tmp_path):
    from autograder.tests.broken_environments import refusing_user_namespaces
    monkeypatch.setenv("AUTOGRADER_BWRAP", refusing_user_namespaces(tmp_path))
    monkeypatch.setattr(isolation, "ROOT", "/tmp/somewhere/course")
    reason = isolation.probe.__wrapped__()
    assert reason.startswith("bubblewrap could not start a sandbox here") and "\n" not in reason
    assert "under a temporary folder" in reason and "clone the course outside it, e.g. ~/dlcourse" in reason
