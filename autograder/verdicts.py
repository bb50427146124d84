"""Run a test cell in the trusted process and record its checks.

The test cell's code runs here, in the grader, with each graded name bound to a
``RemoteFunction`` into the sandbox. Comparisons, assertions and their
verdicts therefore happen in code the submission never touched: whatever it
did to its own process, all it can influence is the data its functions return.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import io
import linecache
import re
import sys
import time

from dlcourse import testing, vocabulary

from .course import count_checks, split_hidden
from .result import CellStatus, CellVerdict, Check
from .sandbox import protocol
from .sandbox.client import RemoteError, SandboxError
from .sandbox.process import Stop
from .sandbox.proxies import RemoteFunction
from .settings import GRADER, Limits
from .text import log_text

# Every chapter's drivers live in dlcourse.drivers: a driver sent as source (a test cell's own function) is
# refused, so no test cell's text can enter a sandbox. Off only for an author trying a driver out in a cell.
SOURCE_DRIVERS_REFUSED = True
MAX_MESSAGE = GRADER.check_message_chars  # characters of a check's message the grader keeps

LIMIT_MESSAGES = {
    Stop.TIMEOUT: "stopped: the time limit was reached (an endless loop, or far too slow?)",
    Stop.CRASH: "stopped: the student's process died (it exited, or passed its memory or task limit)",
    Stop.PROTOCOL: "stopped: the student's process sent a malformed reply (limit/error)",
}
BUSY = ("the grading machine was too busy: the notebook was stopped by its wall-clock cap while most of its time "
        "went waiting for a CPU, twice; these scores are not earned scores: grade it again on a quieter machine")


def limit_message(exc: SandboxError) -> str:
    """What a cell's verdict says of the stop ``exc``: which budget, and how to raise it (a self-check, a class)."""
    limit = getattr(exc, "limit", None)
    if exc.kind is not Stop.TIMEOUT or limit is None:
        return LIMIT_MESSAGES.get(exc.kind, str(exc))
    if getattr(exc, "busy", False):
        return f"not graded: {exc} (not the notebook's fault: it is graded again)"
    why = "sleeping, or waiting for something?" if limit == "notebook_wall_seconds" else \
        "an endless loop, or far too slow?"
    raised = f'LIMITS="{limit}={2 * float(getattr(exc, "seconds", None) or getattr(Limits(), limit, 60)):g}"'
    return f"stopped: {exc} ({why}); to raise it: make check {raised} for a self-check, make grade {raised} for a class"


def stop_phrase(exc: SandboxError) -> str:
    """What stopped a cell or a check, after its name: ``was stopped after 60 s of CPU``."""
    seconds, limit = getattr(exc, "seconds", None), getattr(exc, "limit", None)
    if exc.kind is Stop.TIMEOUT and seconds and limit in ("cell_seconds", "setup_seconds"):
        return f"was stopped after {float(seconds):g} s of CPU"
    if exc.kind is Stop.TIMEOUT and seconds and limit == "notebook_seconds":
        return f"was stopped when the notebook's {float(seconds):g} s of CPU ran out"
    return f"was stopped: {log_text(str(exc))}"


# A check that failed because a name was never bound: a NameError here or in the student's process; a graded name
# missing from the student's process reaches the sandbox's namespace as a KeyError of that name.
_UNDEFINED = re.compile(r"NameError: name '(\w+)' is not defined\b|KeyError: '(\w+)'$")


def undefined_name(message: str | None) -> tuple[str, bool] | None:
    """(the name, whether it came as a KeyError) that a check's message says is not defined, or None."""
    found = _UNDEFINED.match(message or "")
    return None if found is None else (found.group(1) or found.group(2), found.group(2) is not None)


@functools.lru_cache(maxsize=1024)
def defined_names(code: str) -> frozenset[str]:
    """The names a cell binds at its top level (in ``if``/``for``/``with``/``try`` too, not in a function's
    body): assigned, ``def``, ``class``, imported. A cell that does not parse (it never ran): its ``def``,
    ``class`` and ``name =`` lines."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return frozenset(a or b for a, b in re.findall(r"^(?:def|class)\s+(\w+)|^(\w+)\s*=(?!=)", code, re.M))
    return _bound(tree.body)


def _bound(statements) -> frozenset[str]:
    names: set[str] = set()
    todo = list(statements)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(a.asname or a.name.split(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
                                 ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            todo.extend(ast.iter_child_nodes(node))
    return frozenset(names)


def needs(failed_where: str, name: str) -> str:
    """The one line of a check that failed for want of ``name``, which ``failed_where`` (``cell 6 (margin) was
    stopped after 60 s of CPU``) should have bound."""
    return f"{failed_where}; this check needs `{log_text(name)}` from it"


class Recorder:
    """What ``dlcourse.testing.recording`` reports a test cell's checks to while it runs here."""

    def __init__(self, sandbox, hidden_ranges, source: str = "", missing=None, graded_names=()):
        self.sandbox = sandbox
        self.hidden_ranges = hidden_ranges
        self.checks: list[Check] = []
        self._open = None
        # why a name may be unbound (``explained``): the test cell's source (its checks' blocks), each name of the
        # notebook's cells that failed ({name: "cell 6 (margin) was stopped after 60 s of CPU"}), the graded names
        self.source, self.missing, self.graded = source, dict(missing or {}), frozenset(graded_names)
        self._stops: list[SandboxError | None] = []  # per check: the stop that ended it, if one did
        self._lines: list[int] = []                  # per check: the line of its ``with check(...)``

    def _hidden(self, line: int) -> bool:
        return any(first <= line <= last for first, last in self.hidden_ranges)

    def begin(self, description: str, line: int) -> None:
        self._open = (str(description), self._hidden(line), self.sandbox.dead, line)

    def in_student_process(self, driver, args, kwargs):
        module = driver_module(driver)
        if module is not None:
            return self.sandbox.run_driver(driver.__name__, args, kwargs, module=module)
        if SOURCE_DRIVERS_REFUSED:
            raise TypeError(f"in_student_process: the driver {getattr(driver, '__name__', driver)!r} must be a "
                            f"function of a module of {protocol.DRIVERS} (a test cell's own function is refused)")
        return self.sandbox.run_driver(driver.__name__, args, kwargs, source=driver_source(driver))

    def end(self, passed: bool, message: str | None) -> None:
        description, hidden, dead_before, line = self._open or ("check", False, None, 0)
        stopped = self.sandbox.dead
        stop = stopped if stopped is not None and dead_before is None else None
        raised = sys.exc_info()[1] if not passed else None  # check.__exit__ reports the exception it handles
        if not passed and stop is not None:  # the process was stopped in this check
            message = limit_message(stopped)
        elif not passed and isinstance(raised, SandboxError) and any(self._stops):  # stopped in an earlier check
            number = max(i for i, earlier in enumerate(self._stops) if earlier is not None)
            message = f"not run: check {number + 1} of this cell {stop_phrase(self._stops[number])}"
        elif not passed:
            message = self.explained(message, raised)
        self.checks.append(Check(description, bool(passed), _bounded(message), hidden))
        self._stops.append(stop)
        self._lines.append(line)
        self._open = None

    def explained(self, message: str | None, raised: BaseException | None = None) -> str | None:
        """``message``, or, when it says a name is not defined that an earlier check of this cell or a cell of
        the notebook would have bound had it not been stopped or raised, the one line that says so (``needs``).
        ``raised``: the exception, if known: a name of the test cell is unbound here, one of the notebook's in
        the student's process (``RemoteError``)."""
        found = undefined_name(message)
        if found is None:
            return message
        name, as_key = found
        remote = None if raised is None else isinstance(raised, RemoteError)
        earlier = () if as_key or remote else reversed(range(len(self.checks)))
        for number in earlier:
            check = self.checks[number]
            if check.passed or name not in _check_binds(self.source, self._lines[number]):
                continue
            if self._stops[number] is not None:
                return needs(f"check {number + 1} of this cell {stop_phrase(self._stops[number])}", name)
            if vocabulary.not_written(check.message):
                return check.message  # the blank it needs: not written yet, not a mistake of this check
            return needs(f"check {number + 1} of this cell {failure_phrase(check.message)}", name)
        if remote is not False and name in self.missing and (not as_key or name in self.graded):
            return needs(self.missing[name], name)
        return message


def failure_phrase(message: str | None) -> str:
    """How a check or a cell failed, after its name: ``raised ValueError`` (``testing.describe``'s words), or
    ``failed``."""
    raised = re.match(r"(\w{1,100}(?:Error|Exception|Warning|Exit|Interrupt|Iteration)): ", message or "")
    return f"raised {raised.group(1)}" if raised else "failed"


@functools.lru_cache(maxsize=512)
def _check_blocks(source: str) -> tuple[tuple[int, int, frozenset], ...]:
    """(first line, last line of its header, the names its body binds) of each ``with check(...)`` of a test cell."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ()
    return tuple((node.lineno, node.body[0].lineno - 1, _bound(node.body)) for node in ast.walk(tree)
                 if isinstance(node, (ast.With, ast.AsyncWith)) and any(
                     isinstance(item.context_expr, ast.Call) and getattr(item.context_expr.func, "id", None) == "check"
                     for item in node.items))


def _check_binds(source: str, line: int) -> frozenset:
    """The names bound by the body of the test cell's ``with check(...)`` at ``line``."""
    for first, last, names in _check_blocks(source):
        if first <= line <= max(first, last):
            return names
    return frozenset()


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
                    limit: str = "cell_seconds", missing=None) -> CellVerdict:
    """Run a test cell against ``sandbox``: its calls may use ``seconds`` of the sandbox's CPU time (``limit``
    names the bound that gives them) and end by its notebook's wall-clock cap. ``missing``: each name that a
    notebook cell stopped or raised before binding, with what happened to it (``job.missing_names``)."""
    start = time.monotonic()
    hidden, total = _analysed(source)
    recorder = Recorder(sandbox, hidden, source, missing, graded_names)
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
        error = _bounded(recorder.explained(testing.describe(exc), exc))
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
