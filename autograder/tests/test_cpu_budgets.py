"""Issue 40: a notebook earns the same whether the grading machine is idle or busy.

A cell's budget counts its sandbox's CPU time, so 8 busy-loop processes (each in a cpu cgroup of its own, on
however few cores) cannot stop a correct cell; a cell that burns CPU forever is stopped at its CPU budget; one
that sleeps forever at the notebook's wall-clock cap; a wall-clock stop that was mostly run-queue wait is the
machine's (``SandboxError.busy``) and is graded again, then flagged, never scored as earned.

``ISSUE40_CLIENT=<a client.py>`` runs these tests against another client (e.g. ``git show
HEAD~:autograder/sandbox/client.py``), loaded as a module of ``autograder.sandbox``.
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import time

import pytest

from autograder.sandbox import client, isolation, process
from autograder.sandbox.process import SandboxError
from autograder.tests.load import available, hogs

pytestmark = [pytest.mark.xdist_group("load")]  # the hogs load every core: one worker, one at a time
needs_sandbox = pytest.mark.usefixtures("a_sandbox")
needs_load = pytest.mark.usefixtures("a_load")


@pytest.fixture
def a_sandbox():
    assert isolation.probe() is None, f"no sandbox can be made here: {isolation.probe()}"


@pytest.fixture
def a_load():
    assert available() is None, available()
BURN = "import time\nstart = time.process_time()\nwhile time.process_time() - start < {}:\n    pass\n"


def Sandbox(limits):
    other = os.environ.get("ISSUE40_CLIENT")
    if not other:
        return client.Sandbox(limits)
    spec = importlib.util.spec_from_file_location("autograder.sandbox._issue40_client", other)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Sandbox(limits)


@needs_sandbox
@needs_load
def test_cpu_work_within_its_budget_passes_on_a_busy_machine():
    """3 s of CPU work in a cell of 5 s, while 8 hogs load the cores: it passes (a wall-clock limit stops it)."""
    with Sandbox({"cell_seconds": 5, "notebook_wall_seconds": 300}) as box:
        box.run_cell("x = 1", "warm")
        with hogs(8):
            started = time.monotonic()
            assert box.run_cell(BURN.format(3), "three seconds of CPU") is None
            wall = time.monotonic() - started
        used = box.process.cpu_seconds()
    assert used >= 3, used
    print(f"3 s of CPU took {wall:.1f} s of wall time under 8 hogs")


@needs_sandbox
def test_endless_cpu_is_stopped_at_its_cpu_budget():
    with Sandbox({"cell_seconds": 2, "notebook_wall_seconds": 120}) as box:
        started = time.monotonic()
        with pytest.raises(SandboxError) as info:
            box.run_cell("while True:\n    pass\n", "spin")
        wall = time.monotonic() - started
        cpu = box.process.cpu_seconds()
    assert info.value.kind == "timeout" and info.value.limit == "cell_seconds", info.value
    assert "used its 2 s of CPU" in str(info.value)
    assert 2 <= cpu < 4 and wall < 60, (cpu, wall)


@needs_sandbox
def test_endless_sleep_is_stopped_at_the_wall_clock_cap():
    with Sandbox({"cell_seconds": 2, "notebook_wall_seconds": 4}) as box:
        started = time.monotonic()
        with pytest.raises(SandboxError) as info:
            box.run_cell("import time\nwhile True:\n    time.sleep(10)\n", "sleep")
        wall = time.monotonic() - started
    assert info.value.limit == "notebook_wall_seconds" and not info.value.busy, info.value
    assert "4 s of wall-clock time ran out" in str(info.value)
    assert 3 <= wall < 8, wall


@needs_sandbox
def test_cpu_time_is_counted_without_cgroups(monkeypatch):
    """Unprivileged (no cpuacct group): the sandbox's processes are found in /proc and their time summed."""
    monkeypatch.setattr(process.cgroups.Group, "cpu_seconds", lambda self: None)
    with Sandbox({"cell_seconds": 2, "notebook_wall_seconds": 120}) as box:
        with pytest.raises(SandboxError) as info:
            box.run_cell("while True:\n    pass\n", "spin")
    assert info.value.limit == "cell_seconds", info.value
    spinner = subprocess.Popen(["/bin/sh", "-c", "sh -c 'while :; do :; done' & wait"], start_new_session=True)
    try:
        end = time.monotonic() + 60  # however busy the machine, the spinning child gets half a second of CPU
        while time.monotonic() < end:
            found = process.related_processes(spinner.pid)
            if len(found) >= 2 and process.processes_cpu(found) >= 0.5:
                break
            time.sleep(0.2)
        assert len(found) >= 2 and process.processes_cpu(found) >= 0.5, found
    finally:
        os.killpg(spinner.pid, 9)
        spinner.wait()


@needs_sandbox
@needs_load
def test_a_wall_clock_stop_on_a_busy_machine_is_the_machines():
    """CPU-bound work stopped by the wall-clock cap while most of its time went waiting for a CPU: busy."""
    with Sandbox({"cell_seconds": 100, "notebook_wall_seconds": 8}) as box:
        box.run_cell("x = 1", "warm")
        with hogs(8), pytest.raises(SandboxError) as info:
            box.run_cell(BURN.format(60), "a minute of CPU")
    assert info.value.limit == "notebook_wall_seconds" and info.value.busy, info.value
    assert "too busy" in str(info.value)


def test_a_busy_stop_is_graded_again_then_flagged(monkeypatch):
    from autograder import job
    from autograder.result import Outcome, SubmissionResult
    from autograder.task import Task
    calls = []

    def graded(task):
        calls.append(task)
        return SubmissionResult(task.student, task.assignment, task.notebook, Outcome.LIMIT), len(calls) < 3

    monkeypatch.setattr(job, "_graded", graded)
    task = Task("s", "ch01_perceptron", "ch01_perceptron.ipynb", None)
    once = job.grade_submission(task)
    assert len(calls) == 2 and once.status == Outcome.ERROR and "too busy" in once.problems[-1], once
    again = job.grade_submission(task)
    assert len(calls) == 3 and again.status == Outcome.LIMIT and not again.problems
