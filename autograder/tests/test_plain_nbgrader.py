"""Plain nbgrader commands work from a checkout with the shipped nbgrader_config.py."""
import os
import shutil
import subprocess
import sys

import pytest

from autograder.course import ROOT, chapters
from autograder.submissions import reference

pytestmark = [pytest.mark.xdist_group("plain-nbgrader"), pytest.mark.slow]


def nbgrader(*args, cwd):
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "nbgrader"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"nbgrader {' '.join(args)}:\n{proc.stderr[-2000:]}"
    return proc


def test_generate_autograde_feedback_export(tmp_path):
    chapter = chapters()[1]
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    shutil.copytree(ROOT / "solutions" / chapter, tmp_path / "solutions" / chapter)
    nbgrader("generate_assignment", chapter, "--force", cwd=tmp_path)
    assert (tmp_path / "grading").stat().st_mode & 0o777 == 0o700, "grading/ (the gradebook) readable by others"
    assert (tmp_path / "course" / chapter / f"{chapter}.ipynb").is_file()
    import nbformat
    submitted = tmp_path / "grading" / "submitted" / "alice" / chapter
    submitted.mkdir(parents=True)
    nbformat.write(reference(chapter), str(submitted / f"{chapter}.ipynb"))
    nbgrader("autograde", chapter, "--force", cwd=tmp_path)
    nbgrader("generate_feedback", chapter, "--force", cwd=tmp_path)
    assert (tmp_path / "grading" / "feedback" / "alice" / chapter / f"{chapter}.html").is_file()
    nbgrader("export", cwd=tmp_path)
    rows = (tmp_path / "grades.csv").read_text().splitlines()
    alice = dict(zip(rows[0].split(","), rows[1].split(",")))
    assert alice["student_id"] == "alice"
    assert float(alice["raw_score"]) == float(alice["max_score"]) - 2  # all but the free response


def test_autograde_says_what_this_machine_cannot_bound(monkeypatch, caplog):
    """Issue 38, finding 7: nbgrader autograde says LIMITED, as make grade does, when a bound cannot be enforced
    here (an unprivileged instructor: no memory cgroup); once, before its first notebook."""
    import logging

    import nbformat

    from autograder import nbgrader_plugin
    from autograder.sandbox import cgroups

    class Stop(Exception):
        pass

    def stop(*args, **kwargs):
        raise Stop
    line = "no memory cgroup: a notebook's memory is bounded by rlimits only"
    monkeypatch.setattr(cgroups, "missing", lambda: (line,))
    monkeypatch.setattr(nbgrader_plugin, "sandbox_or_refusal", lambda *args: None)
    monkeypatch.setattr(nbgrader_plugin, "prepare_worker", lambda: None)
    monkeypatch.setattr(nbgrader_plugin, "grade_submission", stop)
    monkeypatch.setattr(nbgrader_plugin, "_WARM", [])
    step = nbgrader_plugin.SandboxedExecute()
    step.log = logging.getLogger("autograde-test")
    info = {"nbgrader": {"assignment": chapters()[0], "student": "alice", "notebook": chapters()[0]}}
    with caplog.at_level(logging.WARNING, logger="autograde-test"):
        for _ in range(2):
            with pytest.raises(Stop):
                step.preprocess(nbformat.v4.new_notebook(), info)
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("LIMITED: ")]
    assert said == [f"LIMITED: {line}"], said
