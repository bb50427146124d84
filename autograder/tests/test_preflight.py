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
    (refusing_user_namespaces, ["user namespaces", "grade on a host or VM that allows them", "UNSAFE=1"]),
    (lambda folder: hiding_a_package(folder, "matplotlib"), ["matplotlib", "packages", "differ"]),
], ids=["user-namespaces-refused", "packages-differ"])
def test_an_environment_error_stops_make_grade_before_the_class(tmp_path, broken, says):
    folder = tmp_path / "class" / "alice" / CHAPTER
    folder.mkdir(parents=True)
    nbformat.write(untouched(CHAPTER), str(folder / f"{CHAPTER}.ipynb"))
    env = {**os.environ, "AUTOGRADER_BWRAP": broken(tmp_path), "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, "-m", "autograder", "grade", str(tmp_path / "class"), str(tmp_path / "out")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if "environment error" in line]
    assert len(lines) == 1 and lines[0].startswith("make grade: environment error, no notebook graded"), done.stderr
    assert all(word in lines[0] for word in says), lines[0]
    assert "Traceback" not in done.stderr
    out = tmp_path / "out"
    assert not (out / "grades.csv").exists() and not (out / "gradebook.db").exists()  # nobody got a zero
