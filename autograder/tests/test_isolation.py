"""Grading refuses to run without the operating-system sandbox, unless asked to; the report then says so."""
import os
import subprocess

import nbformat

from autograder.course import ROOT, chapters
from autograder.sandbox import isolation
from autograder.submissions import reference


def _grade(tmp_path, *extra):
    chapter = chapters()[0]
    folder = tmp_path / "class" / "alice" / chapter
    folder.mkdir(parents=True)
    nbformat.write(reference(chapter), str(folder / f"{chapter}.ipynb"))
    env = {**os.environ, "AUTOGRADER_BWRAP": str(tmp_path / "no-bwrap-here")}
    return subprocess.run(["make", "--no-print-directory", "grade", f"SUBMISSIONS={tmp_path / 'class'}",
                           f"OUT={tmp_path / 'out'}", *extra], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)


def test_no_sandbox_no_grading(tmp_path):
    proc = _grade(tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.startswith("make grade:")]
    assert len(lines) == 1 and "bubblewrap is not installed" in lines[0] and "UNSAFE=1" in lines[0], proc.stderr
    assert not (tmp_path / "out" / "grades.csv").exists()


def test_unsafe_grading_says_so_first(tmp_path):
    proc = _grade(tmp_path, "UNSAFE=1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = (tmp_path / "out" / "report.html").read_text()
    body = report[report.index("<body"):]
    assert body.split("</p>")[0].count("UNSAFE: graded without the operating-system sandbox") == 1
    assert "UNSAFE" in (tmp_path / "out" / "grading.log").read_text()


def test_the_seccomp_filter_is_well_formed():
    program = isolation.seccomp_program()
    assert len(program) % 8 == 0 and 40 < len(program) // 8 < 256  # classic BPF, jumps within reach
    assert isolation.probe() is None, "graders and CI have bubblewrap (apt-get install bubblewrap)"
