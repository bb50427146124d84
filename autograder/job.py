"""Grade one submitted notebook: the unit of work that runs in parallel (locally or on Dask).

``grade_submission(task)`` takes a ``Task`` (``autograder.task``) and returns a ``SubmissionResult``
(``autograder.result``: plain data, picklable, so it can be shipped back from any
worker process). It never raises for a broken submission: what went wrong is
reported in the result.
"""
from __future__ import annotations

import ast
import contextlib
import errno
import functools
import json
import logging
import os
import re
import stat
import time

import nbformat
from IPython.core.inputtransformer2 import TransformerManager
from nbformat.v4.rwbase import rejoin_lines

from . import provenance
from .course import Chapter, grade_id, graded_names, read, release_path, role, source_path
from .result import PLACEHOLDER, TIMINGS, CellStatus, CellVerdict, ManualAnswer, Outcome, SubmissionResult
from .sandbox import isolation, template
from .sandbox.client import NotebookClock, Sandbox, SandboxError
from .sandbox.process import Stop, font_cache, keep_one_ahead, warm_template
from .sanitize import bounded_cells, sanitize, shape_problem
from .settings import GRADER
from .task import Task
from .text import log_text, scrubbed
from .verdicts import BUSY, defined_names, grade_test_cell, limit_message, stop_phrase
from .verdicts import prepare as prepare_test_cell

PRELUDE = '''
class _NoShell:
    def __getattr__(self, name):
        return lambda *args, **kwargs: None
def get_ipython():
    return _NoShell()
def display(*args, **kwargs):
    return None
'''
PRELOADABLE = {"torch": "torch", "scipy": "scipy", "sklearn": "sklearn", "networkx": "networkx",
               "matplotlib": "matplotlib.pyplot"}
_python = functools.lru_cache(maxsize=2048)(TransformerManager().transform_cell)  # the given cells: once per process
THREADS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}  # a grading process's numerical libraries: one thread
log = logging.getLogger(__name__)
MAX_NOTEBOOK_BYTES = GRADER.notebook_bytes  # a submitted file is read up to this, before any work is spent on it


def sandbox_cells(notebook) -> list[tuple[str, str]]:
    """(name, python code) of the cells the sandbox runs: given code, answers, scratch work."""
    cells = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code" or role(cell) in ("tests", "demo"):
            continue
        name = grade_id(cell) or ("scratch" if "scratch" in cell.metadata.get("tags", []) else "given")
        try:
            code = _python(cell.source)
        except Exception:  # noqa: BLE001 - let the sandbox report the syntax error
            code = cell.source
        cells.append((f"cell {index} ({name})", code))
    return cells


def _drivers_source(chapter: str) -> str:
    """The text of the chapter's drivers module (``dlcourse/drivers/<chapter>.py``), or ''."""
    import dlcourse
    path = os.path.join(os.path.dirname(dlcourse.__file__), "drivers", f"{chapter}.py")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""


def _preload(cells) -> tuple[str, ...]:
    """The heavy modules the sandbox's cells mention, imported before the audit hook is installed."""
    text = "\n".join(code for _, code in cells)
    return tuple(module for name, module in PRELOADABLE.items() if re.search(rf"\b{name}\b", text))


def _drivers(chapter: Chapter) -> list[tuple[str, str]]:
    """(name, code) of what the chapter's checks run in the sandbox: drivers in test cells, its drivers module."""
    drivers = [("driver", c.source) for c in chapter.cells("tests") if "in_student_process" in c.source]
    return drivers + [("drivers", _drivers_source(chapter.name))]


def warm_modules(assignments) -> tuple[str, ...]:
    """The heavy modules the sandboxes of these chapters' released notebooks preload (``Task.warm``)."""
    modules: list[str] = []
    for assignment in sorted(set(assignments)):
        chapter = Chapter.load(assignment)
        for module in _preload(sandbox_cells(read(release_path(assignment))) + _drivers(chapter)):
            if module not in modules:
                modules.append(module)
    return tuple(modules)


class PhaseClock:
    """Seconds per phase of one job, summed over restarts: ``SubmissionResult.timings`` (``result.TIMINGS``)."""

    def __init__(self):
        self.seconds = dict.fromkeys(TIMINGS, 0.0)

    def add(self, phase: str, seconds: float) -> None:
        self.seconds[phase] += seconds

    @contextlib.contextmanager
    def phase(self, phase: str):
        start = time.monotonic()
        try:
            yield
        finally:
            self.add(phase, time.monotonic() - start)

    def rounded(self) -> dict[str, float]:
        return {phase: round(seconds, 3) for phase, seconds in self.seconds.items()}


class Runner:
    """A sandbox with the notebook's code in it, restarted (code replayed) after a crash or timeout."""

    def __init__(self, cells, limits, preload, budget, max_starts=3, unsafe=False, warm=()):
        self.cells, self.limits, self.preload, self.unsafe, self.warm = cells, limits, preload, unsafe, warm
        if not isinstance(budget, NotebookClock):  # a wall-clock end (time.monotonic()) only
            budget, budget.wall_end = NotebookClock(limits), budget
        self.budget, self.starts, self.max_starts = budget, 0, max_starts  # the notebook's time (CPU, wall)
        self.busy = False  # a stop by the wall-clock cap while the machine was too busy (SandboxError.busy)
        self.box: Sandbox | None = None
        self.cell_errors: dict[str, str] = {}
        self.fatal: set[str] = set()  # cells that killed a sandbox: not replayed
        self.failed: dict[str, str] = {}  # cell -> what happened to it ("was stopped after 15 s of CPU", "raised X")
        self.isolation = None         # how the sandboxes were made (autograder.sandbox.client.Sandbox.isolation)
        self.leftovers: list[str] = []  # what could not be removed after a sandbox (cgroups, folders)
        self.clock = PhaseClock()

    def _close(self, box: Sandbox) -> None:
        box.close()
        self.leftovers += box.process.leftovers

    def ready(self) -> Sandbox | None:
        if self.box is not None and self.box.dead is None:
            return self.box
        if self.box is not None:
            self._close(self.box)
            self.box = None
        while self.starts < self.max_starts and self.budget.wall_left() > 0 and self.budget.cpu_left() > 0:
            self.starts += 1
            with self.clock.phase("sandbox_start"):
                box = Sandbox(self.limits, self.preload, self.unsafe, self.warm, self.budget).start()
            self.isolation = box.isolation
            current = "prelude"
            try:
                with self.clock.phase("preload"):  # the first reply waits for the interpreter and the imports
                    box.run_cell(PRELUDE, "prelude")
                for name, code in self.cells:
                    if name in self.fatal:
                        continue
                    current = name
                    left = self.budget.cpu_left()
                    if left <= 0:  # every cell shares the notebook's budget, however many there are
                        raise SandboxError("the notebook's CPU time budget is used up", Stop.TIMEOUT)
                    limit = "setup_seconds" if self.limits.setup_seconds <= left else "notebook_seconds"
                    with self.clock.phase("cells"):
                        error = box.run_cell(code, name, min(self.limits.setup_seconds, left), limit)
                    if error and name not in self.cell_errors:
                        self.cell_errors[name] = f"{error['type']}: {error['message']}"
                        self.failed[name] = f"raised {log_text(str(error['type']))[:100]}"
                self.box = box
                return box
            except SandboxError as exc:
                self.fatal.add(current)
                self.busy = self.busy or exc.busy
                self.cell_errors[current] = limit_message(exc) + " (skipped when re-running)"
                self.failed[current] = stop_phrase(exc)
                self._close(box)
            except BaseException:
                self._close(box)
                raise
        return None

    def kill(self):
        if self.box is not None:
            self.box.process.kill()

    def close(self):
        if self.box is not None:
            self._close(self.box)
            self.box = None


def missing_names(cells, failed: dict[str, str]) -> dict[str, str]:
    """{name: "cell 6 (margin) was stopped after 15 s of CPU"}: each name bound only by notebook cells that were
    stopped (not replayed) or raised (``Runner.failed``), with the last such cell; a name another cell binds is
    left out (it is defined)."""
    if not failed:
        return {}
    missing: dict[str, str] = {}
    bound: set[str] = set()
    for name, code in cells:
        names = defined_names(code)
        if name in failed:
            missing.update(dict.fromkeys(names, f"{log_text(name)} {failed[name]}"))
        else:
            bound |= names
    return {name: why for name, why in missing.items() if name not in bound}


def prepare_worker(chapters=(), warm: tuple = ()) -> None:
    """Warm a grading process before its first job: threads, torch for the oracles, matplotlib's fonts; for a
    class, its ``chapters``' checks' imports (trusted code, run here), their test cells compiled, and the
    template its sandboxes are forked from (``warm``: ``Task.warm``), so that no notebook pays for what every
    one of them needs; each sandbox's successor is forked while it works (``process.keep_one_ahead``: end it
    with ``finish_worker``)."""
    for name, value in THREADS.items():
        os.environ.setdefault(name, value)
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        pass
    import dlcourse.testing  # noqa: F401
    font_cache()
    for chapter in chapters:
        loaded = course_files(chapter)[0]  # read as its jobs will read it: once
        for statement in check_imports(loaded):
            try:
                exec(statement, {})  # an import line of the chapter's own test cells
            except Exception:  # noqa: BLE001 - its check will say so where it matters
                pass
        for cell in loaded.cells("tests"):
            prepare_test_cell(cell.source, grade_id(cell))
    if warm and isolation.probe() is None and template.enabled():
        try:
            warm_template((), warm)
        except template.TemplateError:
            pass  # the first sandbox tries again, or starts cold
    keep_one_ahead()


def finish_worker() -> None:
    """What a grading process does after its last job: the sandbox forked ahead ended, its groups removed."""
    keep_one_ahead(False)


def worker_modules(chapters) -> list[str]:
    """What every grading process of a class imports: its code, torch, its checks' imports (``classroom`` has a
    forkserver import them once, and forks each grading process from it)."""
    modules = ["autograder.classroom", "torch", "dlcourse.testing"]
    for chapter in chapters:
        for statement in check_imports(Chapter.load(chapter)):
            node = ast.parse(statement).body[0]
            for name in [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]:
                if name and name not in modules:
                    modules.append(name)
    return modules


def check_imports(chapter: Chapter) -> list[str]:
    """The import statements at the top level of the chapter's test cells (hidden parts included), and what
    their oracles import on first use (``torch.func``'s transforms: torch._dynamo and jvp's decompositions, 2.4 s)."""
    found: dict[str, None] = {}
    for cell in chapter.cells("tests"):
        try:
            body = ast.parse(cell.source).body
        except SyntaxError:
            continue
        found.update(dict.fromkeys(ast.unparse(n) for n in body if isinstance(n, (ast.Import, ast.ImportFrom))))
        if "torch.func." in cell.source:
            found["import torch._dynamo"] = None
            found["import torch._decomp.decompositions_for_jvp"] = None
    return list(found)


def _open_submission(path: str, root: str | None, parts) -> int:
    """A read-only descriptor on the submitted file, opened without following a symbolic link.

    With the class folder known (``root`` and ``parts`` from ``classroom.discover``) every folder on
    the way is opened relative to the previous one with O_NOFOLLOW, so a link swapped in after the
    class was listed (the notebook, its assignment or student folder) fails instead of being read."""
    cloexec = getattr(os, "O_CLOEXEC", 0)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | cloexec  # O_NONBLOCK: a FIFO cannot stall us
    if not root or not parts:
        return os.open(path, flags)
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | cloexec)
    try:
        for part in parts[:-1]:
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | cloexec, dir_fd=folder)
            os.close(folder)
            folder = inner
        return os.open(parts[-1], flags, dir_fd=folder)
    finally:
        os.close(folder)


def read_submission(path: str | None, root: str | None = None,
                    parts=None) -> tuple[nbformat.NotebookNode | None, str | None]:
    """(the submitted notebook at ``path`` or None, the problem to report). Never raises; never follows a
    link (below ``root``, the class folder, each of ``parts`` is opened in turn: ``Task.root``, ``Task.parts``).
    JSON that is not a notebook's shape (``sanitize.shape_problem``) is None, with the problem named; a notebook
    of more cells than ``sanitize.BOUNDS.cells_read`` is read without the others, and the problem says so.

    Any code point is data: undecodable bytes become U+FFFD, and lone surrogates that the JSON
    spells out (``"\\ud800"``) become ``\\ud800`` text, so nothing downstream has to encode them."""
    if not path:
        return None, None
    try:
        fd = _open_submission(path, root, parts)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            return None, ("the notebook or a folder on its path is a symbolic link: not followed, "
                          "graded as the untouched release")
        return None, (f"the notebook could not be opened ({errno.errorcode.get(exc.errno, 'error')}): "
                      "graded as the untouched release")
    try:
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return None, "the notebook is not a regular file: graded as the untouched release"
            data = f.read(MAX_NOTEBOOK_BYTES + 1)
            if len(data) > MAX_NOTEBOOK_BYTES:
                return None, (f"the notebook is larger than {MAX_NOTEBOOK_BYTES // 1024 ** 2} MB: "
                              "graded as the untouched release")
            f_text = data.decode("utf-8", errors="replace")
        data = json.loads(f_text)
        shape = shape_problem(data)  # JSON, but not a notebook's shape: named here, never raised on later
        if shape is not None:
            return None, f"the notebook is not a valid notebook ({shape}): graded as the untouched release"
        cut = bounded_cells(data)  # a notebook of thousands of cells costs what its first ones cost
        if data.get("nbformat") == 4:  # its shape checked: nbformat's validation is not needed (22 s for 16 MB)
            submitted = rejoin_lines(nbformat.from_dict(scrubbed(data)))  # as nbformat.reads: text, not lines
        else:
            submitted = nbformat.from_dict(scrubbed(nbformat.reads(json.dumps(data), as_version=4)))
        if not isinstance(submitted.get("cells"), list):
            raise ValueError("no cells")
        return submitted, cut
    except Exception as exc:  # noqa: BLE001 - invalid JSON, wrong format, unreadable file
        return None, f"the notebook could not be read ({type(exc).__name__}): graded as the untouched release"


def course_files(assignment: str) -> tuple[Chapter, nbformat.NotebookNode]:
    """The chapter's source and its release, read once per grading process while their files are unchanged;
    shared by its jobs, which never modify them (``sanitize`` copies what it takes)."""
    paths = (source_path(assignment), release_path(assignment))
    stamps = []
    for path in paths:
        try:
            info = os.stat(path)
            stamps.append((info.st_mtime_ns, info.st_size, info.st_ino))
        except OSError:
            stamps.append(None)
    return _course_files(assignment, tuple(stamps))


@functools.lru_cache(maxsize=16)
def _course_files(assignment: str, stamps: tuple) -> tuple[Chapter, nbformat.NotebookNode]:
    return Chapter.load(assignment), read(release_path(assignment))


def manual_answers(notebook, release) -> list[ManualAnswer]:
    """The answers graded by hand, with 0 points already for those left unanswered."""
    manual: list[ManualAnswer] = []
    handed_out = {grade_id(c): c.source.strip() for c in release.cells if role(c) == "answer"}
    for cell in notebook.cells:
        if role(cell) == "answer":
            meta = cell.metadata["nbgrader"]
            # unanswered: empty, or still the text the release handed out
            unanswered = cell.source.strip() in ("", PLACEHOLDER, handed_out.get(meta["grade_id"]))
            manual.append(ManualAnswer(meta["grade_id"], float(meta.get("points", 0)),
                                       0.0 if unanswered else None, cell.source))
    return manual


def grade_submission(task: Task) -> SubmissionResult:
    """The result of grading ``task``'s notebook; never raises for a broken submission. A notebook stopped by
    its wall-clock cap while the machine was too busy (most of its time spent waiting for a CPU) is graded once
    more; stopped so again, its result says so (``verdicts.BUSY``, status error): never a score it did not earn."""
    result, busy = _graded(task)
    if busy:
        log.warning("%s/%s: the grading machine was too busy (run-queue wait); grading it once more",
                    task.student, task.assignment)
        result, busy = _graded(task)
        if busy:
            result.status = Outcome.ERROR
            result.problems.append(BUSY)
            log.warning("%s/%s: %s", task.student, task.assignment, BUSY)
    return result


def _graded(task: Task) -> tuple[SubmissionResult, bool]:
    """One grading of ``task``'s notebook, and whether the machine was too busy for it (``SandboxError.busy``)."""
    started = time.monotonic()
    limits = task.limits
    chapter, release = course_files(task.assignment)
    problems = list(task.problems)
    submitted, problem = read_submission(task.path, task.root, task.parts)
    if problem:
        problems.append(problem)

    notebook, notes = sanitize(submitted if submitted is not None else release, release)
    problems += notes

    names = graded_names(chapter.source)
    refused = {r.name: r for r in provenance.refusals(notebook, task.assignment, names)}  # read here, not run
    problems += provenance.problem_lines(list(refused.values()))
    cells = sandbox_cells(notebook)
    runner = Runner(cells, limits, _preload(cells + _drivers(chapter)), NotebookClock(limits, started),
                    unsafe=task.unsafe, warm=task.warm)
    verdicts: list[CellVerdict] = []
    status = Outcome.GRADED
    try:
        for cell in chapter.cells("tests"):
            gid, points = grade_id(cell), float(cell.metadata["nbgrader"].get("points", 0))
            box = runner.ready()
            if box is None:
                verdicts.append(CellVerdict(gid, points, 0.0, [], "not run: the grading machine was too busy"
                                            if runner.busy else "not run: the notebook's limits were reached",
                                            CellStatus.NOT_RUN))
                status = Outcome.LIMIT
                continue
            left = runner.budget.cpu_left()  # CPU seconds; the wall-clock cap ends every cell's requests
            seconds, limit = (limits.cell_seconds, "cell_seconds") if limits.cell_seconds <= left else \
                (left, "notebook_seconds")
            if seconds <= 0 or runner.budget.wall_left() <= 0:
                runner.busy = runner.busy or (seconds > 0 and runner.budget.busy())
                verdicts.append(CellVerdict(gid, points, 0.0, [], "not run: the grading machine was too busy"
                                            if runner.busy else "not run: the notebook's time budget was used up",
                                            CellStatus.NOT_RUN))
                status = Outcome.LIMIT
                continue
            waited = box.seconds_waiting
            with runner.clock.phase("checks"):
                verdict = grade_test_cell(box, gid, cell.source, points, names, seconds, limit,
                                          missing_names(cells, runner.failed))
            runner.clock.add("checks_in_sandbox", box.seconds_waiting - waited)
            reached = provenance.refers_to(cell.source, refused)
            if reached:  # a graded name its code refuses: the cell earns nothing, whatever its checks said (it still
                # runs: what its run did to the sandbox, a stop, is reported as for any cell)
                why = refused[sorted(reached, key=names.index)[0]].message
                verdict = CellVerdict(gid, points, 0.0, [], verdict.error, verdict.status, verdict.seconds, why)
            runner.busy = runner.busy or (box.dead is not None and box.dead.busy)
            if verdict.status is not CellStatus.OK:
                status = Outcome.LIMIT
            verdicts.append(verdict)
        runner.kill()  # the sandbox's end overlaps what is left to do here
        manual = manual_answers(notebook, release)
        text = nbformat.writes(notebook)
    finally:
        runner.close()
    problems += [f"{what} could not be removed after grading" for what in runner.leftovers]
    result = SubmissionResult(
        task.student, task.assignment, task.notebook, status, problems, runner.cell_errors,
        max(runner.starts - 1, 0), runner.isolation, verdicts, manual, text)
    result.seconds = round(time.monotonic() - started, 3)
    runner.clock.add("total", result.seconds)
    result.timings = runner.clock.rounded()
    return result, runner.busy

