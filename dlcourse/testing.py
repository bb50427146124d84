"""Checks for the test cells of the notebooks.

A test cell is a sequence of named checks::

    with check("a point on the hyperplane is labelled 0"):
        out = perceptron_predict(X, w, b)
        assert_close(out, [1.0, 0.0], name="perceptron_predict(X, w, b)")

In a student's kernel the first failing check raises ``CheckFailed`` at once, which
IPython shows as one short block instead of a traceback (``_render_traceback_``): the
check's description, the message that names the likely mistake (got against expected,
the hint) and, for an error raised in the student's own code, where in it; a cell
whose checks all pass says so in one line ("5 checks passed"). Lines are wrapped to
``WIDTH`` columns, so that nbgrader's Validate (which cuts longer lines) shows them whole.

The autograder runs the very same cells in its own trusted process, where the
student's functions are remote proxies, inside ``with recording(recorder):``:
there every check runs, and each is recorded as passed or failed (partial credit).

``from_scratch()`` and ``line_budget(n)`` watch the student's code while it
runs (no torch allowed; at most n traced Python lines). In a student's kernel
they watch the current process; under the autograder they are monitors that the
grader sends with each call (``active_monitors()``), and a ``Watch`` does the
watching in the sandboxed process that runs the student's code, inside
``with sandbox_monitors():``; ``judge`` turns what it saw into a verdict.
"""
from __future__ import annotations

import contextlib
import linecache
import os
import sys
import textwrap

import numpy as np

from .vocabulary import NOT_WRITTEN  # the wording of results has one home

__all__ = [
    "check", "assert_close", "assert_equal", "assert_shape", "assert_unchanged",
    "assert_type", "from_scratch", "line_budget", "in_student_process", "CheckFailed",
]

FROM_SCRATCH, LINE_BUDGET = "from_scratch", "line_budget"  # the kinds of monitor

# Set by ``recording`` only, in the autograder's trusted process.
_recorder = None
# Monitors of the enclosing from_scratch/line_budget blocks while recording; the
# grader's proxies send them along with each call to the sandbox.
_monitors: list[tuple[str, object]] = []


WIDTH = 78  # columns of a failure's lines: nbgrader's Validate cuts lines past 87 (its width 90, less 3)


class CheckFailed(AssertionError):
    """A check of a test cell failed, in a student's kernel: ``description`` and ``reason`` (the
    one-line ``describe`` of what went wrong, as the grader's feedback and the self-check word it).
    IPython shows ``_render_traceback_``'s lines in place of a traceback; the original exception
    stays the ``__cause__`` (``%debug`` still reaches it)."""

    def __init__(self, description: str, reason: str = ""):
        super().__init__(f"{description}: {reason}" if reason else description)
        self.description, self.reason = description, reason

    def _render_traceback_(self) -> list[str]:
        return render_failure(self.description, self.reason, self.__cause__)


@contextlib.contextmanager
def recording(recorder):
    """Under the autograder, while a test cell runs in the trusted process: every check runs and is
    reported to ``recorder`` (``begin(description, line)``, ``end(passed, message)``) instead of
    raising, monitors become ``active_monitors()`` and ``in_student_process`` goes through
    ``recorder.in_student_process(driver, args, kwargs)``."""
    global _recorder
    if _recorder is not None:
        raise RuntimeError("a test cell is already being recorded")
    _recorder = recorder
    try:
        yield recorder
    finally:
        _recorder = None
        _monitors.clear()


def active_monitors() -> list[list]:
    """The monitors (kind, argument) of the enclosing from_scratch/line_budget blocks, while recording."""
    return [list(m) for m in _monitors]


MAX_SHOWN = 300      # characters of a value a check's message shows
MAX_DESCRIBED = 1000  # characters of an exception's message a check keeps


def shown(value) -> str:
    """A value as a check's message shows it: its repr, cut to MAX_SHOWN characters, then with its type and
    size, so what a student's function returns can never make a message (or the work spent on it) large."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a value whose repr fails is still shown by its type
        text = f"<{type(value).__name__}>"
    if len(text) <= MAX_SHOWN:
        return text
    shape = getattr(value, "shape", None)
    size = f"of shape {tuple(shape)}" if shape is not None else \
        f"of length {len(value)}" if isinstance(value, (str, bytes, list, tuple, dict, set)) else "shown"
    return f"{text[:MAX_SHOWN]}… (a {type(value).__name__} {size}, cut from {len(text)} characters)"


def describe(exc: BaseException) -> str:
    """A one-line reason for an exception, with no traceback (at most MAX_DESCRIBED characters)."""
    if isinstance(exc, NotImplementedError) or getattr(exc, "remote_type", None) == "NotImplementedError":
        return NOT_WRITTEN
    if isinstance(exc, AssertionError):
        text = str(exc).strip()[:MAX_DESCRIBED]
        return text or "an assertion failed"
    text = str(exc).strip()[:MAX_DESCRIBED]
    name = getattr(exc, "remote_type", None) or type(exc).__name__
    return f"{name}: {text}" if text else name


class check(contextlib.AbstractContextManager):
    """One named check of a test cell (see the module docstring)."""

    def __init__(self, description: str):
        self.description = description

    def __enter__(self):
        if _recorder is not None:
            _recorder.begin(self.description, sys._getframe(1).f_lineno)
        return self

    def __exit__(self, exc_type, exc, tb):
        if _recorder is not None:
            if exc is not None and not isinstance(exc, Exception):
                return False  # KeyboardInterrupt, SystemExit: not ours to swallow
            _recorder.end(exc is None, None if exc is None else describe(exc))
            return True
        if exc is None:
            _passed_in_this_cell()
            return False
        raise CheckFailed(self.description, describe(exc)) from exc


# ------------------------------------------------- what a student's kernel shows

def _cell_names() -> dict:
    """The files IPython compiled the notebook's cells into, with their execution counts ({} outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return {}
    shell = get_ipython()
    return getattr(getattr(shell, "compile", None), "_filename_map", None) or {}


def student_frames(exc: BaseException | None) -> list[tuple[str, int, str]]:
    """Where in the student's own cells ``exc`` was raised: (cell label, line, function) from outermost
    to innermost, the test cell itself and every library frame left out."""
    cells = _cell_names()
    tb = getattr(exc, "__traceback__", None)
    if tb is None or not cells:
        return []
    test_cell = tb.tb_frame.f_code.co_filename  # the first frame: the check's own block
    frames = []
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename in cells and code.co_filename != test_cell:
            frames.append((code.co_filename, tb.tb_lineno, code.co_name))
        tb = tb.tb_next
    return frames


def _wrapped(text: str, indent: str, hang: str = "  ") -> list[str]:
    """``text`` in lines of at most ``WIDTH`` columns, each of its lines indented, their continuations more."""
    lines = []
    for line in str(text).splitlines() or [""]:
        lines.extend(textwrap.wrap(line, WIDTH, initial_indent=indent, subsequent_indent=indent + hang,
                                   break_long_words=True, break_on_hyphens=False) or [indent])
    return lines


RED, BOLD, DIM, RESET = "\x1b[31m", "\x1b[1m", "\x1b[2m", "\x1b[0m"


def render_failure(description: str, reason: str, cause: BaseException | None = None) -> list[str]:
    """The lines a failed check shows in a student's kernel: which check, why (the got/expected and
    the hint of ``describe``), and for an error raised in the student's own code, the lines of it
    that raised, innermost last; no library frames. Every line fits ``WIDTH`` columns (plus colour codes)."""
    frames = student_frames(cause)
    if isinstance(cause, NotImplementedError) and frames:
        reason = f"{frames[-1][2]} is {NOT_WRITTEN.replace('the function', 'it')}"
    head = _wrapped(f"Check failed: {description}", "", hang="    ")
    lines = [f"{RED}{BOLD}{line}{RESET}" for line in head] + _wrapped(reason, "  ")
    if frames and not isinstance(cause, NotImplementedError):
        cells = _cell_names()
        for filename, lineno, function in frames:
            lines += _wrapped(f"raised in your code: Cell In[{cells[filename]}], line {lineno}, in {function}", "  ")
            source = linecache.getline(filename, lineno).strip()
            if source:
                lines += [f"{DIM}{line}{RESET}" for line in _wrapped(source, "      ")]
    return lines


_passes = {"count": 0, "shell": None}  # checks passed in the cell running now, in a student's kernel


def _passed_in_this_cell() -> None:
    """Count a passed check; once the cell has run, ``_summary`` says how many passed (IPython only)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    if _passes["shell"] is not shell:
        shell.events.register("pre_run_cell", _start_of_cell)
        shell.events.register("post_run_cell", _summary)
        _passes["shell"] = shell
    _passes["count"] += 1


def _start_of_cell(info=None) -> None:
    _passes["count"] = 0


def _summary(result=None) -> None:
    """After a cell: one line saying how many checks passed, when they all did and the cell ended well."""
    count, _passes["count"] = _passes["count"], 0
    if count and getattr(result, "error_in_exec", None) is None and getattr(result, "error_before_exec", None) is None:
        print(passed_summary(count))


def passed_summary(count: int) -> str:
    return f"{count} check{'s' if count != 1 else ''} passed"


# ---------------------------------------------------------------- assertions

def _hint(hint: str) -> str:
    return f" {hint}" if hint else ""


def assert_type(value, types, name="the result", hint=""):
    if not isinstance(value, types):
        names = types.__name__ if isinstance(types, type) else " or ".join(t.__name__ for t in types)
        raise AssertionError(f"{name} should be a {names}, got {type(value).__name__}.{_hint(hint)}")


def assert_shape(value, shape, name="the result", hint=""):
    if not isinstance(value, np.ndarray):
        raise AssertionError(
            f"{name} should be a NumPy array of shape {tuple(shape)}, got {type(value).__name__}.{_hint(hint)}")
    if value.shape != tuple(shape):
        raise AssertionError(f"{name} has shape {value.shape}, expected {tuple(shape)}.{_hint(hint)}")


def assert_close(actual, expected, *, rtol=1e-6, atol=1e-9, name="the result", hint=""):
    """``actual`` equals ``expected`` to tolerance, with shape and finiteness checked first."""
    expected_arr = np.asarray(expected)
    if isinstance(expected, np.ndarray) or expected_arr.ndim > 0:
        if not isinstance(actual, np.ndarray):
            raise AssertionError(
                f"{name} should be a NumPy array, got {type(actual).__name__}.{_hint(hint)}")
        if actual.shape != expected_arr.shape:
            raise AssertionError(
                f"{name} has shape {actual.shape}, expected {expected_arr.shape}.{_hint(hint)}")
    try:
        actual_arr = np.asarray(actual)
        if actual_arr.dtype == object:
            raise TypeError
        as_type = complex if np.iscomplexobj(actual_arr) else np.result_type(actual_arr, float)
        actual_arr = actual_arr.astype(as_type)
    except (TypeError, ValueError):
        raise AssertionError(f"{name} should be numeric, got {type(actual).__name__}.{_hint(hint)}") from None
    if actual_arr.shape != expected_arr.shape:
        raise AssertionError(f"{name} has shape {actual_arr.shape}, expected {expected_arr.shape}.{_hint(hint)}")
    if np.isfinite(expected_arr).all() and not np.isfinite(actual_arr).all():
        raise AssertionError(f"{name} contains nan or inf.{_hint(hint)}")
    if not np.allclose(actual_arr, expected_arr, rtol=rtol, atol=atol, equal_nan=True):
        diff = np.abs(actual_arr - expected_arr)
        worst = np.unravel_index(np.nanargmax(diff), diff.shape) if diff.ndim else ()
        where = f" at index {tuple(int(i) for i in worst)}" if diff.ndim else ""
        got = actual_arr[worst] if diff.ndim else actual_arr
        want = expected_arr[worst] if diff.ndim else expected_arr
        raise AssertionError(
            f"{name} is wrong{where}: got {np.round(got, 6)}, expected {np.round(want, 6)}.{_hint(hint)}")


def assert_equal(actual, expected, name="the result", hint=""):
    same = np.array_equal(np.asarray(actual), np.asarray(expected)) if isinstance(
        expected, np.ndarray) else actual == expected
    if not same:
        raise AssertionError(f"{name} is {shown(actual)}, expected {shown(expected)}.{_hint(hint)}")


def assert_unchanged(array, original, name="the input"):
    if not np.array_equal(array, original):
        raise AssertionError(f"{name} was modified: functions must not mutate their inputs (work on a copy).")


# ------------------------------------------------------------------ monitors

_TORCH_DIR = None


def _torch_dir():
    global _TORCH_DIR
    if _TORCH_DIR is None:
        import importlib.util
        spec = importlib.util.find_spec("torch")
        _TORCH_DIR = os.path.dirname(spec.origin) if spec and spec.origin else "/nonexistent-torch"
    return _TORCH_DIR


def _is_torch_callable(obj) -> bool:
    module = getattr(obj, "__module__", None) or ""
    if module.startswith("torch"):
        return True
    owner = getattr(obj, "__self__", None)
    if owner is not None:
        mod = getattr(owner, "__name__", "") if isinstance(owner, type(sys)) else type(owner).__module__
        return (mod or "").startswith("torch")
    return False


class Watch:
    """Watch a block of code: which torch functions it calls, how many Python lines it runs.

    Used in a student's kernel by ``from_scratch``/``line_budget`` and, under the
    autograder, inside the sandbox around each call to the student's code.
    """

    @classmethod
    def for_monitors(cls, monitors) -> "Watch":
        """A watch that sees what the monitors ((kind, argument) pairs) need to judge."""
        kinds = {kind for kind, _ in monitors}
        return cls(torch_calls=FROM_SCRATCH in kinds, lines=LINE_BUDGET in kinds)

    @classmethod
    def hook_functions(cls) -> tuple:
        """The functions that set and remove a watch's trace and profile hooks (the sandbox allows these only)."""
        return (cls.__enter__, cls.__exit__, cls._profile, cls._trace)

    def __init__(self, torch_calls=False, lines=False):
        self.torch_calls = torch_calls
        self.lines = lines
        self.torch_used: list[str] = []
        self.line_count = 0
        self.tampered = False
        self.threads = False    # other threads ran beside the watched code (they would escape the watch)
        self._exiting = False
        self._setprofile, self._settrace = sys.setprofile, sys.settrace
        self._getprofile, self._gettrace = sys.getprofile, sys.gettrace

    def _profile(self, frame, event, arg):
        if event == "c_call" and not self._exiting:
            if arg in (self._setprofile, self._settrace) or getattr(arg, "__name__", "") in (
                    "setprofile", "settrace", "_setprofileallthreads", "_settraceallthreads"):
                self.tampered = True
            elif _is_torch_callable(arg) and len(self.torch_used) < 5:
                self.torch_used.append(getattr(arg, "__qualname__", repr(arg)))
        elif event == "call" and frame.f_code.co_filename.startswith(_torch_dir()):
            if len(self.torch_used) < 5:
                self.torch_used.append(f"{frame.f_code.co_name} (torch)")

    def _trace(self, frame, event, arg):
        if event == "line":
            self.line_count += 1
        return self._trace

    def __enter__(self):
        import threading
        self._old = (self._getprofile(), self._gettrace())
        self._starts = _THREAD_STARTS[0]
        # In the sandbox (thread starts counted) the student's code must be alone; in a student's
        # kernel the kernel's own threads (heartbeat, IOPub, control) are always there: only
        # threads that appear during the call count.
        self._before = {t.ident for t in threading.enumerate()}
        self.threads = _THREAD_COUNTING[0] and threading.active_count() > 1
        if self.torch_calls:
            threading.setprofile(self._profile)  # threads started inside are watched too
            self._setprofile(self._profile)
        if self.lines:
            threading.settrace(self._trace)
            self._settrace(self._trace)
        return self

    def __exit__(self, *exc):
        import threading
        self._exiting = True
        if self.torch_calls and self._getprofile() != self._profile:
            self.tampered = True
        if self.lines and self._gettrace() != self._trace:
            self.tampered = True
        self._settrace(self._old[1])
        self._setprofile(self._old[0])
        threading.setprofile(None)
        threading.settrace(None)
        alive = {t.ident for t in threading.enumerate()}
        beside = threading.active_count() > 1 if _THREAD_COUNTING[0] else bool(alive - self._before)
        self.threads = self.threads or _THREAD_STARTS[0] != self._starts or beside
        return False

    def observations(self) -> dict:
        return {"torch_used": list(self.torch_used), "line_count": self.line_count, "tampered": self.tampered,
                "threads": self.threads}


_THREAD_STARTS = [0]  # threads started inside sandbox_monitors(), by any means of the threading modules
_THREAD_COUNTING = [False]  # True inside sandbox_monitors() (the sandbox), never in a student's kernel


@contextlib.contextmanager
def sandbox_monitors():
    """This process becomes the autograder's sandbox for ``Watch``es: yields the ``Watch`` class.

    The sandbox's server enters it once, before any student code runs: from then on every
    thread started is counted (a watched call must run alone: no thread beside it may
    escape the watch) and torch's folder is known (found now, before the audit hook).
    """
    import _thread
    import threading
    _torch_dir()
    saved = (_thread.start_new_thread, _thread.start_new, threading._start_new_thread)
    start = saved[0]

    def counted(*args, **kwargs):
        _THREAD_STARTS[0] += 1
        return start(*args, **kwargs)
    _thread.start_new_thread = _thread.start_new = threading._start_new_thread = counted
    _THREAD_COUNTING[0] = True
    try:
        yield Watch
    finally:
        _thread.start_new_thread, _thread.start_new, threading._start_new_thread = saved
        _THREAD_COUNTING[0] = False


def judge(monitors, observations: dict) -> str | None:
    """The failure message for what a Watch saw, or None when every monitor is satisfied."""
    if observations.get("tampered"):
        return "the code under test changed the interpreter's trace or profile hooks"
    if observations.get("threads"):
        return ("the code under test ran threads beside it: a function checked from scratch or for its "
                "number of lines must do its work in the calling thread")
    for kind, arg in monitors:
        if kind == FROM_SCRATCH and observations.get("torch_used"):
            return (f"{arg} must be written from scratch in NumPy, but it called "
                    f"{observations['torch_used'][0]}")
        if kind == LINE_BUDGET and observations.get("line_count", 0) > arg:
            return (f"the call executed {observations['line_count']} Python lines, more than the budget "
                    f"of {arg}: use vectorised rounds, not a Python loop over time steps")
    return None


@contextlib.contextmanager
def _monitored(kind, arg):
    if _recorder is not None:  # under the autograder: the sandbox watches each call
        _monitors.append((kind, arg))
        try:
            yield
        finally:
            _monitors.pop()
        return
    watch = Watch.for_monitors([(kind, arg)])
    with watch:
        yield
    message = judge([(kind, arg)], watch.observations())
    if message:
        raise AssertionError(message)


def from_scratch(name="this function"):
    """Fail when the code in the block calls into torch."""
    return _monitored(FROM_SCRATCH, name)


def line_budget(n: int):
    """Fail when the code in the block executes more than n traced Python lines."""
    return _monitored(LINE_BUDGET, int(n))


def in_student_process(driver, *args, **kwargs):
    """``driver(*args, **kwargs)`` run where the student's code runs; its result must be plain data.

    A driver uses the student's pieces it is given as arguments, e.g. a training loop::

        def train(MLP, zero_grad, sgd_step, X, y, steps):
            import numpy as np
            ...
            return predictions            # numbers, lists, dicts, NumPy arrays

        from dlcourse.drivers.ch03_backprop import train
        predictions = in_student_process(train, MLP, zero_grad, sgd_step, X, y, steps=40)

    The driver is a top-level function of ``dlcourse.drivers.<chapter folder name>``
    (public helper code: no hidden check, threshold or secret data; the verdict stays in
    the test cell). In a student's kernel this is just the call. Under the autograder
    the sandboxed process imports the driver by its module and name (no test cell's text
    is ever sent there) and runs it at full speed, the student's functions bound to
    their arguments; only its (plain data) result comes back, and the verdict is reached
    here, in the test cell.
    """
    if _recorder is not None:
        return _recorder.in_student_process(driver, args, kwargs)
    return driver(*args, **kwargs)


_REMEMBERED: dict = {}
REMEMBERED_MAX = 32  # results kept per process (the oldest first out)


def remembered(function, *args, **kwargs):
    """``function(*args, **kwargs)`` computed once per process for the same function and arguments (compared by
    value), each caller given its own copy: for a check's expected values that are the same for every notebook
    graded here (an oracle's training run on fixed data and seeds), not computed again for each student.
    Arguments that cannot be compared by value (a student's function) are not remembered: just the call."""
    import copy
    import hashlib
    import pickle
    try:
        key = (function.__code__, hashlib.sha256(pickle.dumps((args, sorted(kwargs.items())), protocol=5)).digest())
    except Exception:  # noqa: BLE001 - unpicklable arguments: compute it, keep nothing
        return function(*args, **kwargs)
    if key not in _REMEMBERED:
        _REMEMBERED[key] = function(*args, **kwargs)
        while len(_REMEMBERED) > REMEMBERED_MAX:
            _REMEMBERED.pop(next(iter(_REMEMBERED)))
    return copy.deepcopy(_REMEMBERED[key])
