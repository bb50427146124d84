"""Grade a whole class: ``make grade SUBMISSIONS=<dir> OUT=<dir>``.

    SUBMISSIONS/<student>/<assignment>/<notebook>.ipynb   ->   OUT/grades.csv
                                                               OUT/tests.csv
                                                               OUT/feedback/<student>/<assignment>/<notebook>.html
                                                               OUT/report.html, OUT/grading.log
                                                               OUT/gradebook.db, OUT/autograded/ (for the formgrader)

Each submission is one job (``autograder.job.grade_submission``) run in parallel
on local processes, or on a Dask cluster when a scheduler address is given.
Writing the gradebook, feedback and CSVs happens here, once every job is back.
"""
from __future__ import annotations

import json
import logging
import multiprocessing
import os
import sys
import time
from pathlib import Path

from .course import chapters
from .result import SubmissionResult

log = logging.getLogger("autograder")


class UsageError(Exception):
    """The arguments cannot be used; the message is one line."""


def log_text(text: str) -> str:
    """``text`` on one line: control and format characters, line and paragraph separators and lone
    surrogates written as ``\\n``, ``\\x1b``, ``\\u2028``, ``\\udcff``..., so that a name or a message
    cannot start a forged log line, move the cursor or reorder the text."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape", "backslashreplace").decode("ascii")
                   for ch in text)


class OneLineFormatter(logging.Formatter):
    """Every record is one line, whatever a student's folder name or a message holds (``log_text``)."""

    def format(self, record: logging.LogRecord) -> str:
        return log_text(super().format(record))


def folder_id(name: str) -> str:
    """A file or folder name as the one-line text every output uses (student id, CSV, gradebook, feedback
    folder, log): undecodable bytes as ``\\xNN`` (``os.fsdecode`` would make them lone surrogates, which no
    output can encode), control and format characters escaped as in ``log_text``."""
    return log_text(os.fsencode(name).decode("utf-8", "backslashreplace"))


def _entries(folder) -> list[os.DirEntry]:
    with os.scandir(folder) as it:
        return sorted((e for e in it if not e.name.startswith(".")), key=lambda e: e.name)


LINK = "is a symbolic link: not followed, graded as the untouched release"


def discover(submissions: Path) -> tuple[list[dict], list[str]]:
    """Jobs for every <student>/<assignment>/ folder, and warnings about what was skipped.

    Symbolic links are never followed (a link to the solutions or to a classmate's notebook
    would be graded as that file): a linked notebook or assignment folder is graded as the
    untouched release, with a note; a linked student folder is skipped, with a warning.
    Each task names its notebook relative to the class folder (``root``, ``parts``), so the
    job can open it without following a link anywhere on the way (O_NOFOLLOW).
    """
    known = set(chapters())
    tasks, warnings = [], []
    seen: dict[str, int] = {}
    submissions = Path(os.path.abspath(submissions))  # the same file for a worker started elsewhere
    for student_dir in _entries(submissions):
        student = folder_id(student_dir.name)
        if student_dir.is_symlink():
            warnings.append(f"{student}: the student folder is a symbolic link: not followed, skipped")
            continue
        if not student_dir.is_dir(follow_symlinks=False):
            continue
        seen[student] = seen.get(student, 0) + 1
        if seen[student] > 1:  # two folder names that read the same once escaped
            student = f"{student}~{seen[student]}"
            warnings.append(f"{student}: a second folder with this name once escaped: graded as {student}")
        for folder in _entries(student_dir.path):
            if folder.name not in known:
                if folder.is_dir(follow_symlinks=False) or folder.is_symlink():
                    warnings.append(f"{student}/{folder_id(folder.name)}: not an assignment of this course, skipped")
                continue
            expected = f"{folder.name}.ipynb"
            task = {"student": student, "assignment": folder.name, "notebook": expected,
                    "path": None, "problems": [], "root": str(submissions), "parts": None}
            tasks.append(task)
            if folder.is_symlink():
                task["problems"].append(f"the folder {folder.name} {LINK}")
                continue
            if not folder.is_dir(follow_symlinks=False):
                task["problems"].append(f"{folder.name} is not a folder: graded as the untouched release")
                continue
            notebooks = {e.name: e for e in _entries(folder.path) if e.name.endswith(".ipynb")}
            regular = [e for e in notebooks.values() if e.is_file(follow_symlinks=False)]
            links = [e for e in notebooks.values() if e.is_symlink()]
            chosen = None
            if expected in notebooks:
                if notebooks[expected].is_symlink():
                    task["problems"].append(f"{expected} {LINK}")
                elif notebooks[expected].is_file(follow_symlinks=False):
                    chosen = notebooks[expected]
                else:
                    task["problems"].append(f"{expected} is not a regular file: graded as the untouched release")
            elif len(regular) == 1:
                chosen = regular[0]
                task["problems"].append(f"the notebook was renamed to {folder_id(chosen.name)}: graded anyway")
            elif len(links) == 1 and not regular:
                task["problems"].append(f"{folder_id(links[0].name)} {LINK}")
            else:
                task["problems"].append(f"{expected} is missing: graded as the untouched release")
            if chosen is not None:
                task["path"] = chosen.path
                task["parts"] = [student_dir.name, folder.name, chosen.name]
    return tasks, warnings


def _init_worker():
    """Warm a grading process before its first job: threads, torch for the oracles, matplotlib's fonts."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        pass
    import dlcourse.testing  # noqa: F401

    from .sandbox.process import font_cache as _font_cache
    _font_cache()


def _safe_job(task: dict) -> SubmissionResult:
    from .job import grade_submission
    limits = os.environ.get("AUTOGRADER_LIMITS")
    if limits and not task.get("limits"):
        task = {**task, "limits": json.loads(limits)}
    try:
        return grade_submission(task)
    except Exception as exc:  # noqa: BLE001 - a grader bug must not stop the class
        return SubmissionResult.failed(task, f"the grader failed on this notebook ({type(exc).__name__}: {exc})")


def _progress(result: SubmissionResult, done: int, total: int) -> None:
    log.info("[%d/%d] %s/%s: %s in %.1f s", done, total, result.student, result.assignment,
             result.status, result.seconds)


def _worker_loop(conn) -> None:
    """A grading process: one submission at a time, each result sent back before the next is taken."""
    _init_worker()
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        conn.send(_safe_job(task))


class _Worker:
    def __init__(self, context):
        self.conn, theirs = context.Pipe()
        self.proc = context.Process(target=_worker_loop, args=(theirs,), daemon=True)
        self.proc.start()
        theirs.close()
        self.task: int | None = None
        self.since = 0.0

    def stop(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()
        self.conn.close()


# a submission's own limits end it long before this; the margin covers sandbox starts and feedback
HARD_LIMIT_MARGIN = 120


def _run_local(tasks: list[dict], jobs: int) -> list[SubmissionResult]:
    """Grade on ``jobs`` processes. Whatever kills or hangs a grading process costs only the submission it
    was grading: it is tried once more on a fresh process, then reported."""
    from multiprocessing.connection import wait

    from .sandbox.process import DEFAULT_LIMITS
    limits = {**DEFAULT_LIMITS, **json.loads(os.environ.get("AUTOGRADER_LIMITS") or "{}")}
    hard_limit = limits["notebook_seconds"] + HARD_LIMIT_MARGIN
    context = multiprocessing.get_context("forkserver")
    weight = {"ch04_cnn": 0, "ch06_transformers": 1, "ch05_rnn": 2}  # the slowest chapters first
    pending = sorted(range(len(tasks)), key=lambda i: weight.get(tasks[i]["assignment"], 9))
    results: dict[int, SubmissionResult] = {}
    tries: dict[int, int] = {}
    workers = [_Worker(context) for _ in range(min(jobs, len(tasks)))]

    def lost(worker, why: str) -> None:
        i, worker.task = worker.task, None
        tries[i] = tries.get(i, 0) + 1
        task = tasks[i]
        if tries[i] < 2:
            log.warning("%s/%s: %s; trying it once more", task["student"], task["assignment"], why)
            pending.insert(0, i)
        else:
            results[i] = SubmissionResult.failed(task, f"grading stopped twice: {why}",
                                                 "limit" if "limit" in why else "error")
            _progress(results[i], len(results), len(tasks))
        worker.stop()
        workers[workers.index(worker)] = _Worker(context)

    try:
        while len(results) < len(tasks):
            for worker in workers:
                if worker.task is None and pending:
                    worker.task, worker.since = pending.pop(0), time.monotonic()
                    worker.conn.send(tasks[worker.task])
            busy = [w for w in workers if w.task is not None]
            ready = wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout=1.0)
            for worker in busy:
                if worker.conn in ready:
                    try:
                        result = worker.conn.recv()
                    except (EOFError, OSError):
                        lost(worker, "its grading process died")
                        continue
                    results[worker.task], worker.task = result, None
                    _progress(result, len(results), len(tasks))
                elif worker.proc.sentinel in ready:
                    lost(worker, "its grading process died")
                elif time.monotonic() - worker.since > hard_limit:
                    lost(worker, f"the grader's hard time limit of {hard_limit:.0f} s was reached")
    finally:
        for worker in workers:
            if worker.task is None and worker.proc.is_alive():
                try:
                    worker.conn.send(None)
                except OSError:
                    pass
            worker.stop()
    return [results[i] for i in range(len(tasks))]


def run_jobs(tasks: list[dict], jobs: int, scheduler: str | None = None) -> list[SubmissionResult]:
    if not tasks:
        return []
    if scheduler:
        from distributed import Client
        with Client(scheduler, timeout="30s") as client:
            client.run(_init_worker)
            futures_ = client.map(_safe_job, tasks, pure=False)
            results = []
            for task, future in zip(tasks, futures_):
                try:  # a worker lost on one submission costs only that one
                    results.append(future.result())
                except Exception as exc:  # noqa: BLE001
                    results.append(SubmissionResult.failed(
                        task, f"grading crashed on its Dask worker: {type(exc).__name__}"))
            return results
    if jobs <= 1:
        _init_worker()
        results = []
        for task in tasks:
            results.append(_safe_job(task))
            _progress(results[-1], len(results), len(tasks))
        return results
    return _run_local(tasks, jobs)


def grade_class(submissions: str, out: str, jobs: int | None = None, scheduler: str | None = None,
                unsafe: bool = False) -> Path:
    """``unsafe``: grade even where no sandbox can be made (the report's first line says so)."""
    if not submissions or not out:
        raise UsageError("usage: make grade SUBMISSIONS=<dir> OUT=<dir>")
    from .sandbox.isolation import probe
    reason = probe()
    if reason is not None and not unsafe:
        raise UsageError(f"no sandbox for the students' code can be made here: {reason}; "
                         f"to grade without one anyway, pass UNSAFE=1 (--unsafe-no-isolation)")
    source = Path(submissions)
    if not source.is_dir():
        raise UsageError(f"SUBMISSIONS={submissions} is not a directory")
    target = Path(out)
    if target.resolve() == source.resolve() or source.resolve() in target.resolve().parents:
        raise UsageError("OUT must not be inside SUBMISSIONS")
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"OUT={out} cannot be created ({exc.strerror})") from None
    if not os.access(target, os.W_OK):
        raise UsageError(f"OUT={out} is not writable")

    handler = logging.FileHandler(target / "grading.log", mode="w", encoding="utf-8")
    handler.setFormatter(OneLineFormatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    console = logging.StreamHandler(sys.stderr)
    console.setFormatter(OneLineFormatter("[grade] %(message)s"))
    log.addHandler(console)
    log.setLevel(logging.INFO)
    try:
        tasks, warnings = discover(source)
        if reason is not None:
            log.warning("UNSAFE: grading without a sandbox, as asked (%s)", reason)
            for task in tasks:
                task["unsafe"] = True
        else:
            from .sandbox.cgroups import missing
            for line in missing():
                log.warning("LIMITED: %s", line)
        for warning in warnings:
            log.warning(warning)
        jobs = jobs or os.cpu_count() or 1
        log.info("grading %d notebooks from %s with %s", len(tasks), source,
                 f"the Dask scheduler at {scheduler}" if scheduler else f"{jobs} local processes")
        start = time.monotonic()
        results = run_jobs(tasks, jobs, scheduler)
        elapsed = time.monotonic() - start
        for r in results:
            for problem in r.problems:
                log.warning("%s/%s: %s", r.student, r.assignment, problem)
            if r.status != "graded":
                log.warning("%s/%s: %s", r.student, r.assignment, r.status)
        from .outputs import write_outputs
        write_outputs(target, results, elapsed)
        log.info("graded %d notebooks in %.1f s; see %s", len(results), elapsed, target / "grades.csv")
    finally:
        log.removeHandler(handler)
        log.removeHandler(console)
        handler.close()
    return target
