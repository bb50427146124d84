"""Run a test cell in the trusted process and record its checks.

The test cell's code runs here, in the grader, with each graded name bound to a
``RemoteFunction`` into the sandbox. Comparisons, assertions and their
verdicts therefore happen in code the submission never touched: whatever it
did to its own process, all it can influence is the data its functions return.
"""
from __future__ import annotations

import contextlib
import functools
import io
import linecache
import time

from dlcourse import testing

from .course import count_checks, split_hidden
from .result import CellStatus, CellVerdict, Check
from .sandbox import protocol
from .sandbox.client import SandboxError
from .sandbox.limits import Limits
from .sandbox.process import Stop
from .sandbox.proxies import RemoteFunction

# Every chapter's drivers live in dlcourse.drivers: a driver sent as source (a test cell's own function) is
# refused, so no test cell's text can enter a sandbox. Off only for an author trying a driver out in a cell.
SOURCE_DRIVERS_REFUSED = True
MAX_MESSAGE = 1000  # characters of a check's message the grader keeps

LIMIT_MESSAGES = {
    Stop.TIMEOUT: "stopped: the time limit was reached (an endless loop, or far too slow?)",
    Stop.CRASH: "stopped: the student's process died (it exited, or passed its memory or task limit)",
    Stop.PROTOCOL: "stopped: the student's process sent a malformed reply (limit/error)",
}
BUSY = ("the grading machine was too busy: the notebook was stopped by its wall-clock cap while most of its time "
        "went waiting for a CPU, twice; these scores are not earned scores: grade it again on a quieter machine")


def limit_message(exc: SandboxError) -> str:
    """What a cell's verdict says of the stop ``exc``: which budget, and how to raise it for a self-check."""
    limit = getattr(exc, "limit", None)
    if exc.kind is not Stop.TIMEOUT or limit is None:
        return LIMIT_MESSAGES.get(exc.kind, str(exc))
    if getattr(exc, "busy", False):
        return f"not graded: {exc} (not the notebook's fault: it is graded again)"
    why = "sleeping, or waiting for something?" if limit == "notebook_wall_seconds" else \
        "an endless loop, or far too slow?"
    raised = 2 * float(getattr(exc, "seconds", None) or getattr(Limits(), limit, 60))
    return f'stopped: {exc} ({why}); for a self-check, raise it: make check LIMITS="{limit}={raised:g}"'


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
        self._open = (str(description), self._hidden(line), self.sandbox.dead)

    def in_student_process(self, driver, args, kwargs):
        module = driver_module(driver)
        if module is not None:
            return self.sandbox.run_driver(driver.__name__, args, kwargs, module=module)
        if SOURCE_DRIVERS_REFUSED:
            raise TypeError(f"in_student_process: the driver {getattr(driver, '__name__', driver)!r} must be a "
                            f"function of a module of {protocol.DRIVERS} (a test cell's own function is refused)")
        return self.sandbox.run_driver(driver.__name__, args, kwargs, source=driver_source(driver))

    def end(self, passed: bool, message: str | None) -> None:
        description, hidden, dead_before = self._open or ("check", False, None)
        stopped = self.sandbox.dead
        if not passed and stopped is not None and dead_before is None:  # the process was stopped in this check
            message = limit_message(stopped)
        self.checks.append(Check(description, bool(passed), _bounded(message), hidden))
        self._open = None


def _bounded(message: str | None) -> str | None:
    """A check's message as the grader keeps it: at most MAX_MESSAGE characters, whatever was returned."""
    if message is None or len(message) <= MAX_MESSAGE:
        return message
    return message[:MAX_MESSAGE] + f"… ({len(message) - MAX_MESSAGE} more characters)"


def driver_module(driver) -> str | None:
    """The module of ``protocol.DRIVERS`` that defines ``driver`` as a top-level function, else None."""
    import sys
    module = getattr(driver, "__module__", None) or ""
    if not module.startswith(protocol.DRIVERS + "."):
        return None
    name = getattr(driver, "__name__", "")
    return module if getattr(sys.modules.get(module), name, None) is driver else None


def driver_source(driver) -> str:
    """The source of a test's driver function, to be run in the sandbox (it must need nothing else)."""
    import inspect
    import textwrap
    code = getattr(driver, "__code__", None)
    if code is None or code.co_freevars or driver.__name__ == "<lambda>":
        raise TypeError("in_student_process needs a top-level function (no lambda or closure) as its driver")
    return textwrap.dedent(inspect.getsource(driver))


@functools.lru_cache(maxsize=512)
def _analysed(source: str) -> tuple[tuple, int]:
    """(its hidden lines, its number of checks) of a test cell: read once per process, as every student's
    notebook runs the same cell."""
    return tuple(split_hidden(source)[1]), max(count_checks(source), 1)


@functools.lru_cache(maxsize=512)
def _compiled(source: str, filename: str):
    return compile(source, filename, "exec")


def prepare(source: str, grade_id: str) -> None:
    """Read and compile a test cell ahead of the first notebook that runs it (``job.prepare_worker``)."""
    _analysed(source)
    try:
        _compiled(source, f"<{grade_id}>")
    except SyntaxError:
        pass  # said by the cell's verdict


def grade_test_cell(sandbox, grade_id: str, source: str, points: float, graded_names, seconds: float,
                    limit: str = "cell_seconds") -> CellVerdict:
    """Run a test cell against ``sandbox``: its calls may use ``seconds`` of the sandbox's CPU time (``limit``
    names the bound that gives them) and end by its notebook's wall-clock cap."""
    start = time.monotonic()
    hidden, total = _analysed(source)
    recorder = Recorder(sandbox, hidden)
    namespace = {"__name__": "__test_cell__"}
    namespace.update({name: RemoteFunction(sandbox, name) for name in graded_names})
    error = None
    status = CellStatus.OK
    filename = f"<{grade_id}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # drivers' source
    try:
        # every request of the cell ends by its deadline; a test cell's prints are for the student's kernel
        with sandbox.within(seconds, limit), testing.recording(recorder), contextlib.redirect_stdout(io.StringIO()):
            exec(_compiled(source, filename), namespace)
    except SandboxError as exc:
        status, error = CellStatus(exc.kind), limit_message(exc)
    except Exception as exc:  # noqa: BLE001 - a failure outside checks costs the cell's remaining checks
        error = _bounded(testing.describe(exc))
    if sandbox.dead is not None and status is CellStatus.OK:
        status = CellStatus(sandbox.dead.kind)
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
