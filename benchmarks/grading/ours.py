"""Our grader (``python -m autograder grade``) on the class, as a subprocess; and its determinism."""
from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import time
from collections import defaultdict
from pathlib import Path

from ..common import PY, ROOT, child_env, log
from .class_builder import build_class


def run_prepare(chapters: list[str]) -> dict:
    """``python -m autograder prepare`` (``make release`` runs it): what grading makes from the course alone,
    made ahead and kept by content, as stock nbgrader's ``generate_assignment`` runs before its autograde.
    ``cold``: whether nothing of it was kept yet."""
    from autograder import course_cache
    cold = not any(course_cache.FOLDER.glob("*")) if course_cache.FOLDER.is_dir() else True
    start = time.monotonic()
    proc = subprocess.run([PY, "-m", "autograder", "prepare", *chapters], cwd=ROOT, env=child_env(),
                          capture_output=True, text=True)
    result = {"seconds": round(time.monotonic() - start, 2), "returncode": proc.returncode, "cold": cold}
    if proc.returncode != 0:
        result["stderr_tail"] = proc.stderr[-2000:]
    return result


def run_ours(class_dir: Path, out: Path, jobs: int, scheduler: str | None = None) -> dict:
    """``python -m autograder grade`` on the class: its wall time, and per notebook what its result says
    (seconds, ``timings``, status, the score of each test cell)."""
    if out.exists():
        shutil.rmtree(out)
    how = ["--scheduler", scheduler] if scheduler else ["--jobs", str(jobs)]
    start = time.monotonic()
    proc = subprocess.run([PY, "-m", "autograder", "grade", str(class_dir), str(out), *how],
                          cwd=ROOT, env=child_env(), capture_output=True, text=True)
    wall = time.monotonic() - start
    result = {"jobs": jobs, "scheduler": scheduler, "wall_seconds": round(wall, 2), "returncode": proc.returncode}
    if proc.returncode != 0:
        result["stderr_tail"] = proc.stderr[-2000:]
    logfile = out / "grading.log"
    match = re.search(r"graded (\d+) notebooks in ([0-9.]+) s", logfile.read_text() if logfile.exists() else "")
    result["jobs_phase_seconds"] = float(match.group(2)) if match else None
    per = {}
    for path in sorted((out / "results").glob("*/*.json")):
        r = json.loads(path.read_text())
        points = sum(c["points"] for c in r["cells"])
        per[f"{r['student']}/{r['assignment']}"] = {
            "seconds": r.get("seconds", 0.0), "timings": r.get("timings") or {}, "status": r["status"],
            "restarts": r.get("restarts", 0), "score": round(sum(c["score"] for c in r["cells"]), 4),
            "points": points, "cells": {c["grade_id"]: c["score"] for c in r["cells"]},
            "test_seconds": round(sum(c.get("seconds", 0.0) for c in r["cells"]), 3),
            "problems": len(r.get("problems", [])), "cell_errors": list(r.get("cell_errors", {})),
            **({"problem_texts": r.get("problems", [])} if r["status"] not in ("graded", "limit") else {})}
    result["notebooks"] = per
    result["count"] = len(per)
    result["per_minute"] = round(60 * len(per) / wall, 2) if wall and per else None
    tests = out / "tests.csv"
    result["tests_csv"] = sorted(tuple(row) for row in csv.reader(tests.open())) if tests.is_file() else None
    return result


def summarize_ours(run: dict, manifest: dict) -> dict:
    """Per (chapter, kind): count, mean seconds, mean test seconds, mean score / points."""
    groups = defaultdict(list)
    for key, r in run["notebooks"].items():
        info = manifest.get(key, {})
        groups[(info.get("chapter", key.split("/")[1]), info.get("kind", "?"))].append(r)
    out = {}
    for (chapter, kind), rs in sorted(groups.items()):
        out[f"{chapter}/{kind}"] = {
            "chapter": chapter, "kind": kind, "count": len(rs),
            "mean_seconds": round(sum(r["seconds"] for r in rs) / len(rs), 2),
            "mean_test_seconds": round(sum(r["test_seconds"] for r in rs) / len(rs), 2),
            "mean_score_fraction": round(sum(r["score"] / r["points"] if r["points"] else 0 for r in rs) / len(rs), 3),
            "restarts": sum(r["restarts"] for r in rs),
            "statuses": sorted({r["status"] for r in rs})}
    return out


def check_determinism(work: Path, chapters: list[str]) -> dict:
    kinds = ["correct", "partial", "partial", "untouched", "json", "exit"]
    folder = work / "determinism-class"
    build_class(folder, chapters, len(kinds), seed=1, kinds=kinds)
    tables = {}
    for jobs in (1, 2):
        log("grading", f"determinism: grading {len(kinds) * len(chapters)} notebooks with --jobs {jobs}")
        tables[jobs] = run_ours(folder, work / f"determinism-out-{jobs}", jobs)["tests_csv"] or []
    diff = sorted(set(tables[1]) ^ set(tables[2]))
    return {"notebooks": len(kinds) * len(chapters), "kinds": kinds, "rows": len(tables[1]),
            "identical": not diff, "differences": [list(d) for d in diff[:20]]}

