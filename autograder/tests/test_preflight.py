"""A machine that cannot grade stops `make grade` before the class, with one line; no student gets a zero.

(nbgrader's door, `nbgrader autograde`, is checked the same way in tests/test_lifecycle.py.)
"""
import os
import subprocess
import sys

import nbformat
import pytest

from autograder.course import ROOT
from autograder.submissions import untouched
from autograder.tests.broken_environments import hiding_a_package, refusing_user_namespaces

CHAPTER = "ch01_perceptron"  # its given cells import matplotlib.pyplot


@pytest.mark.parametrize("broken, says", [
    (refusing_user_namespaces, ["user namespaces", "grade on a host or VM", "Dask workers there", "UNSAFE=1"]),
    (lambda folder: hiding_a_package(folder, "matplotlib"), ["matplotlib", "packages", "differ"]),
], ids=["user-namespaces-refused", "packages-differ"])
def test_an_environment_error_stops_make_grade_before_the_class(tmp_path, broken, says):
    folder = tmp_path / "class" / "alice" / CHAPTER
    folder.mkdir(parents=True)
    nbformat.write(untouched(CHAPTER), str(folder / f"{CHAPTER}.ipynb"))
    # cold starts: the broken bubblewrap stands for a sandbox whose layout hides a package; a warm template has
    # imported the chapter's packages before its sandboxes pivot into that layout, so it grades regardless
    env = {**os.environ, "AUTOGRADER_BWRAP": broken(tmp_path), "AUTOGRADER_WARM": "0", "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, "-m", "autograder", "grade", str(tmp_path / "class"), str(tmp_path / "out")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if "environment error" in line]
    assert len(lines) == 1 and lines[0].startswith("make grade: environment error, no notebook graded"), done.stderr
    assert all(word in lines[0] for word in says), lines[0]
    assert "Traceback" not in done.stderr
    out = tmp_path / "out"
    assert not (out / "grades.csv").exists() and not (out / "gradebook.db").exists()  # nobody got a zero


def test_with_dask_only_the_workers_need_sandboxes(tmp_path, monkeypatch):
    """The way out on a hub that refuses user namespaces: its `make grade ... SCHEDULER=` hands the class to
    Dask workers on a machine that allows them, and grades; workers that cannot grade stop it, with one line."""
    from distributed import LocalCluster
    folder = tmp_path / "class" / "alice" / CHAPTER
    folder.mkdir(parents=True)
    nbformat.write(untouched(CHAPTER), str(folder / f"{CHAPTER}.ipynb"))
    refusing = refusing_user_namespaces(tmp_path)

    def grade(out, env):
        with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None) as cluster:
            return subprocess.run([sys.executable, "-m", "autograder", "grade", str(tmp_path / "class"), str(out),
                                   "--scheduler", cluster.scheduler_address], cwd=ROOT, env=env,
                                  capture_output=True, text=True, timeout=300)

    hub = grade(tmp_path / "hub", {**os.environ, "AUTOGRADER_BWRAP": refusing, "MPLBACKEND": "Agg"})
    assert hub.returncode == 0, hub.stderr[-2000:]
    assert "alice" in (tmp_path / "hub" / "grades.csv").read_text()
    monkeypatch.setenv("AUTOGRADER_BWRAP", refusing)  # the workers' machine refuses them too
    stopped = grade(tmp_path / "stopped", {**os.environ, "AUTOGRADER_BWRAP": "", "MPLBACKEND": "Agg"})
    lines = [line for line in stopped.stderr.splitlines() if "environment error" in line]
    assert stopped.returncode == 2 and len(lines) == 1, stopped.stderr[-2000:]
    assert "user namespaces" in lines[0] and "Dask worker" in lines[0]
    assert not (tmp_path / "stopped" / "grades.csv").exists()
