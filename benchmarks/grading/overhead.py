"""Where a notebook's time goes in our grader, per chapter, read from the results (``SubmissionResult.timings``).

A notebook's **overhead** is its job's wall time minus the time the notebook's own code spends in the
sandbox: its code cells (given, answers, scratch) and the calls its test cells make into the sandbox (the
student's functions, the drivers). What is left is the grader's: making the sandbox, its interpreter
and preloaded libraries, reading and sanitizing, the trusted side of the checks (feedback pages are
rendered once per class, outside the jobs).
"""
from __future__ import annotations

from collections import defaultdict

from ..common import median

PHASES = ("sandbox_start", "preload", "cells", "checks", "checks_in_sandbox")


def overhead(timings: dict) -> float | None:
    """Seconds of one job that are the grader's, not the notebook's code; None for a result without timings."""
    if not timings:
        return None
    return max(timings["total"] - timings["cells"] - timings["checks_in_sandbox"], 0.0)


def trusted_checks(timings: dict) -> float | None:
    """Seconds of one job's checks spent on the trusted side (a part of its overhead): the test cells' own work
    there (oracles, expected values) and the calls' transport."""
    if not timings:
        return None
    return max(timings["checks"] - timings["checks_in_sandbox"], 0.0)


def class_overhead(ours: dict) -> float | None:
    """The median overhead over every notebook of the class (the budget's number)."""
    return _median(overhead(r["timings"]) for r in ours["notebooks"].values())


def per_chapter(ours: dict, manifest: dict) -> dict:
    """{chapter: medians over its notebooks of the total, the overhead and each phase; the same for the
    correct ones (``correct_total``, compared with a bare run of the reference)}."""
    groups = defaultdict(list)
    for key, r in ours["notebooks"].items():
        info = manifest.get(key, {})
        groups[info.get("chapter", key.split("/")[-1])].append((info.get("kind"), r))
    out = {}
    for chapter, entries in sorted(groups.items()):
        timed = [r for _, r in entries if r["timings"]]
        correct = [r for kind, r in entries if kind == "correct" and r["timings"]]
        out[chapter] = {
            "notebooks": len(entries), "timed": len(timed),
            "total": _median(r["timings"]["total"] for r in timed),
            "overhead": _median(overhead(r["timings"]) for r in timed),
            "trusted_checks": _median(trusted_checks(r["timings"]) for r in timed),
            "phases": {p: _median(r["timings"][p] for r in timed) for p in PHASES},
            "correct_total": _median(r["timings"]["total"] for r in correct),
            "correct_overhead": _median(overhead(r["timings"]) for r in correct),
            "job_seconds_sum": round(sum(r["seconds"] for _, r in entries), 2)}
    return out


def _median(values) -> float | None:
    values = [v for v in values if v is not None]
    return round(median(values), 3) if values else None
