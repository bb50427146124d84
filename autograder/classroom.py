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

import concurrent.futures as futures
import json
import logging
import multiprocessing
import os
import sys
import time
from pathlib import Path

from .notebooks import chapters

log = logging.getLogger("autograder")


class UsageError(Exception):
    """The arguments cannot be used; the message is one line."""


def discover(submissions: Path) -> tuple[list[dict], list[str]]:
    """Jobs for every <student>/<assignment>/ folder, and warnings about what was skipped."""
    known = set(chapters())
    tasks, warnings = [], []
    for student_dir in sorted(p for p in submissions.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for folder in sorted(p for p in student_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
            if folder.name not in known:
                warnings.append(f"{student_dir.name}/{folder.name}: not an assignment of this course, skipped")
                continue
            expected = folder / f"{folder.name}.ipynb"
            task = {"student": student_dir.name, "assignment": folder.name, "notebook": expected.name,
                    "path": None, "problems": []}
            if expected.is_file():
                task["path"] = str(expected)
            else:
                others = sorted(p for p in folder.glob("*.ipynb") if p.is_file())
                if len(others) == 1:
                    task["path"] = str(others[0])
                    task["problems"].append(f"the notebook was renamed to {others[0].name}: graded anyway")
                else:
                    task["problems"].append(f"{expected.name} is missing: graded as the untouched release")
            tasks.append(task)
    return tasks, warnings


def _init_worker():
    """Warm a grading process before its first job: threads, torch for the oracles, the sandbox zygote."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        pass
    import dlcourse.testing  # noqa: F401
    from .client import Zygote
    if os.environ.get("AUTOGRADER_ZYGOTE", "1") != "0":
        Zygote.get()


def _safe_job(task: dict) -> dict:
    from .job import grade_submission
    limits = os.environ.get("AUTOGRADER_LIMITS")
    if limits and not task.get("limits"):
        task = {**task, "limits": json.loads(limits)}
    try:
        return grade_submission(task)
    except Exception as exc:  # noqa: BLE001 - a grader bug must not stop the class
        return {**task, "status": "error", "problems": task.get("problems", []) + [
            f"the grader failed on this notebook ({type(exc).__name__}: {exc})"],
            "cells": [], "manual": [], "cell_errors": {}, "restarts": 0, "notebook_json": None, "seconds": 0}


def _progress(result: dict, done: int, total: int) -> None:
    log.info("[%d/%d] %s/%s: %s in %.1f s", done, total, result["student"], result["assignment"],
             result["status"], result.get("seconds", 0))


def run_jobs(tasks: list[dict], jobs: int, scheduler: str | None = None) -> list[dict]:
    if not tasks:
        return []
    if scheduler:
        from distributed import Client
        with Client(scheduler, timeout="30s") as client:
            client.run(_init_worker)
            return client.gather(client.map(_safe_job, tasks, pure=False))
    if jobs <= 1:
        _init_worker()
        results = []
        for task in tasks:
            results.append(_safe_job(task))
            _progress(results[-1], len(results), len(tasks))
        return results
    results: dict[int, dict] = {}
    # the slowest chapters first, so that workers finish together
    weight = {"ch04_cnn": 0, "ch06_transformers": 1, "ch05_rnn": 2}
    pending = sorted(range(len(tasks)), key=lambda i: weight.get(tasks[i]["assignment"], 9))
    for attempt in range(3):  # a worker process that dies takes a fresh pool, not the class
        if not pending:
            break
        context = multiprocessing.get_context("forkserver")
        with futures.ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_init_worker) as pool:
            running = {pool.submit(_safe_job, tasks[i]): i for i in pending}
            for future in futures.as_completed(running):
                i = running[future]
                try:
                    results[i] = future.result()
                    _progress(results[i], len(results), len(tasks))
                except Exception as exc:  # noqa: BLE001 - BrokenProcessPool and the like
                    log.warning("a grading process failed on %s/%s (%s): retrying",
                                tasks[i]["student"], tasks[i]["assignment"], exc)
                    if attempt == 2:
                        results[i] = {**tasks[i], "status": "error", "problems": [f"grading crashed: {exc}"],
                                      "cells": [], "manual": [], "cell_errors": {}, "restarts": 0,
                                      "notebook_json": None, "seconds": 0}
        pending = [i for i in pending if i not in results]
    return [results[i] for i in range(len(tasks))]


def grade_class(submissions: str, out: str, jobs: int | None = None, scheduler: str | None = None) -> Path:
    if not submissions or not out:
        raise UsageError("usage: make grade SUBMISSIONS=<dir> OUT=<dir>")
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

    handler = logging.FileHandler(target / "grading.log", mode="w")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    console = logging.StreamHandler(sys.stderr)
    console.setFormatter(logging.Formatter("[grade] %(message)s"))
    log.addHandler(console)
    log.setLevel(logging.INFO)
    try:
        tasks, warnings = discover(source)
        for task in tasks:  # no sandbox sees the class or the grading outputs
            task["hide"] = [str(source.resolve()), str(target.resolve())]
        for warning in warnings:
            log.warning(warning)
        jobs = jobs or os.cpu_count() or 1
        log.info("grading %d notebooks from %s with %s", len(tasks), source,
                 f"the Dask scheduler at {scheduler}" if scheduler else f"{jobs} local processes")
        start = time.monotonic()
        results = run_jobs(tasks, jobs, scheduler)
        elapsed = time.monotonic() - start
        for r in results:
            summary = f"{r['student']}/{r['assignment']}: {r['status']}"
            for problem in r["problems"]:
                log.warning("%s: %s", f"{r['student']}/{r['assignment']}", problem)
            if r["status"] != "graded":
                log.warning("%s", summary)
        from .outputs import write_outputs
        write_outputs(target, results, elapsed)
        log.info("graded %d notebooks in %.1f s; see %s", len(results), elapsed, target / "grades.csv")
    finally:
        log.removeHandler(handler)
        log.removeHandler(console)
        handler.close()
    return target
