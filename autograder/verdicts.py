"""Run a test cell in the trusted process and record its checks.

The test cell's code runs here, in the grader, with each graded name bound to a
``RemoteFunction`` into the sandbox. Comparisons, assertions and their
verdicts therefore happen in code the submission never touched: whatever it
did to its own process, all it can influence is the data its functions return.
"""
from __future__ import annotations

import contextlib
import io
import linecache
import time

from dlcourse import testing

from .course import count_checks, split_hidden
from .result import CellVerdict, Check
from .sandbox.client import SandboxError
from .sandbox.proxies import RemoteFunction

LIMIT_MESSAGES = {
    "timeout": "stopped: the time limit was reached (an endless loop, or far too slow?)",
    "crash": "stopped: the student's process died (it exited, or ran out of memory)",
    "protocol": "stopped: the student's process broke the grader's protocol",
}


class Recorder:
    """What ``dlcourse.testing.recording`` reports a test cell's checks to while it runs here."""

    def __init__(self, sandbox, hidden_ranges):
        self.sandbox = sandbox
        self.hidden_ranges = hidden_ranges
        self.checks: list[Check] = []
        self._open = None

    def _hidden(self, line: int) -> bool:
        return any(first <= line <= last for first, last in self.hidden_ranges)

    def begin(self, description: str, line: int) -> None:
        self._open = (str(description), self._hidden(line))

    def end(self, passed: bool, message: str | None) -> None:
        description, hidden = self._open or ("check", False)
        self.checks.append(Check(description, bool(passed), message, hidden))
        self._open = None

    def in_student_process(self, driver, args, kwargs):
        return self.sandbox.run_driver(driver_source(driver), driver.__name__, args, kwargs)


def driver_source(driver) -> str:
    """The source of a test's driver function, to be run in the sandbox (it must need nothing else)."""
    import inspect
    import textwrap
    code = getattr(driver, "__code__", None)
    if code is None or code.co_freevars or driver.__name__ == "<lambda>":
        raise TypeError("in_student_process needs a top-level function (no lambda or closure) as its driver")
    return textwrap.dedent(inspect.getsource(driver))


def grade_test_cell(sandbox, grade_id: str, source: str, points: float, graded_names, seconds: float) -> CellVerdict:
    start = time.monotonic()
    _, hidden = split_hidden(source)
    total = max(count_checks(source), 1)
    recorder = Recorder(sandbox, hidden)
    namespace = {"__name__": "__test_cell__"}
    namespace.update({name: RemoteFunction(sandbox, name) for name in graded_names})
    error = None
    status = "ok"
    sandbox.deadline = time.monotonic() + seconds
    filename = f"<{grade_id}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # drivers' source
    try:
        # a test cell's prints are for the student's kernel
        with testing.recording(recorder), contextlib.redirect_stdout(io.StringIO()):
            exec(compile(source, filename, "exec"), namespace)
    except SandboxError as exc:
        status, error = exc.kind, LIMIT_MESSAGES.get(exc.kind, str(exc))
    except Exception as exc:  # noqa: BLE001 - a failure outside checks costs the cell's remaining checks
        error = testing.describe(exc)
    finally:
        sandbox.deadline = None
    if sandbox.dead is not None and status == "ok":
        status = sandbox.dead.kind
    for check in recorder.checks:  # a check that failed because the process died says so
        if not check.passed and sandbox.dead is not None and check.message and "time limit" in check.message:
            check.message = LIMIT_MESSAGES["timeout"]
    passed = sum(c.passed for c in recorder.checks)
    total = max(total, len(recorder.checks))  # a check inside a loop runs more than once
    score = min(float(points), round(float(points) * passed / total, 4))
    if error is not None and not recorder.checks:
        score = 0.0
    try:
        sandbox.release()
    except SandboxError:
        pass
    return CellVerdict(grade_id, float(points), score, recorder.checks, error, status,
                       round(time.monotonic() - start, 3))
