"""python -m benchmarks.grading: build the class, run ours, run stock nbgrader, measure overhead, report."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from ..common import (
    ROOT,
    chapters_option,
    log,
    machine,
    print_load_warning,
    selected_chapters,
    setup_process_env,
    write_json,
)
from . import __doc__ as DOC
from .bare import run_bare
from .class_builder import KINDS, build_class
from .cluster import Cluster
from .ours import check_determinism, run_ours, run_prepare, summarize_ours
from .overhead import class_overhead, per_chapter
from .stock import compare_scores, run_stock
from .tables import budget_figures, report


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["large-class"]:  # classes of 30, 300 and 1,000 notebooks of one chapter (large_class)
        from .large_class import main as large_class
        return large_class(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m benchmarks.grading", description=DOC.split("\n")[0])
    parser.add_argument("--students", type=int, default=10, help="students per chapter (default 10)")
    chapters_option(parser)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="workers of our grader (default nproc)")
    parser.add_argument("--sequential", action="store_true", help="also time our grader with --jobs 1")
    parser.add_argument("--no-stock", action="store_true", help="skip stock nbgrader")
    parser.add_argument("--no-bare", action="store_true", help="skip the bare runs of the reference notebooks")
    parser.add_argument("--dask", action="store_true",
                        help="also grade the class on a Dask cluster (dask scheduler, dask worker): 1, then 2 workers")
    parser.add_argument("--check-determinism", action="store_true",
                        help="compare tests.csv of --jobs 1 and --jobs 2 on a small class")
    parser.add_argument("--workdir", default=None, help="where to build the class (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.students < 1:
        parser.error("--students must be positive")

    setup_process_env()
    chapters = selected_chapters(parser, args.chapters)

    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="bench-grading-"))
    work.mkdir(parents=True, exist_ok=True)
    data = {"machine": machine(), "students": args.students, "chapters": chapters, "workdir": str(work)}
    try:
        log("grading", f"building {args.students} x {len(chapters)} submissions in {work}")
        t = time.monotonic()
        class_dir = work / "class"
        if class_dir.exists():
            shutil.rmtree(class_dir)
        manifest = build_class(class_dir, chapters, args.students, args.seed)
        data["build_seconds"] = round(time.monotonic() - t, 1)
        data["kinds"] = {k: sum(v["kind"] == k for v in manifest.values()) for k in KINDS}
        data["manifest"] = manifest

        log("grading", "ours, ahead of grading: python -m autograder prepare (as stock's generate_assignment)")
        data["prepare"] = run_prepare(chapters)
        log("grading", f"ours: python -m autograder grade --jobs {args.jobs}")
        ours = data["ours"] = run_ours(class_dir, work / "out", args.jobs)
        data["ours_by_kind"] = summarize_ours(ours, manifest)
        chapters_ = data["per_chapter"] = per_chapter(ours, manifest)
        data["class_overhead"] = class_overhead(ours)
        if args.sequential:
            log("grading", "ours: python -m autograder grade --jobs 1")
            data["ours_sequential"] = run_ours(class_dir, work / "out-sequential", 1)
        if args.dask:
            data["dask"] = run_dask(class_dir, work, ours)
        if not args.no_bare:
            from autograder.submissions import reference
            for chapter in chapters:
                log("grading", f"bare: {chapter}'s reference in one plain python process")
                bare = chapters_[chapter]["bare"] = run_bare(chapter, reference(chapter))
                chapters_[chapter]["bare_seconds"] = bare.get("seconds")
                if bare.get("seconds") and chapters_[chapter]["correct_total"]:
                    chapters_[chapter]["bare_ratio"] = round(chapters_[chapter]["correct_total"] / bare["seconds"], 2)
        if not args.no_stock:
            stock = data["stock"] = run_stock(class_dir, manifest, chapters, work)
            data["same_scores"] = compare_scores(ours, stock, manifest)
            for chapter, entry in stock["chapters"].items():
                share = chapters_[chapter]["job_seconds_sum"] / args.jobs
                chapters_[chapter]["stock_seconds"] = entry.get("autograde_seconds")
                chapters_[chapter]["ours_share_seconds"] = round(share, 2)
                if entry.get("autograde_seconds") and share:
                    chapters_[chapter]["stock_ratio"] = round(entry["autograde_seconds"] / share, 2)
            if stock["class_seconds"] and ours["wall_seconds"]:
                data["stock_ratio"] = round(stock["class_seconds"] / ours["wall_seconds"], 2)
        if args.check_determinism:
            data["determinism"] = check_determinism(work, chapters)
        data["machine_at_end"] = machine()
        report(data)
        print_load_warning()
        from .. import budgets
        budgets.record("grading", budget_figures(data), argv)
    finally:
        path = write_json("grading", data)
        print(f"\nresults: {path.relative_to(ROOT)}" + (f"; work folder kept: {work}" if args.keep else ""))
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    failed = (data.get("ours", {}).get("returncode", 0) != 0 or data.get("prepare", {}).get("returncode", 0) != 0
              or (data.get("determinism") or {}).get("identical") is False
              or (data.get("dask") or {}).get("identical") is False
              or any(e["identical"] is False for e in (data.get("same_scores") or {}).values()))
    return 1 if failed else 0


def run_dask(class_dir: Path, work: Path, local: dict) -> dict:
    """The class graded through a Dask cluster of separate processes with 1, then 2 workers."""
    runs = []
    with Cluster(work / "dask-cluster") as cluster:
        for workers in (1, 2):
            cluster.add_workers(workers - cluster.workers)
            log("grading", f"ours on Dask: {workers} worker(s) at {cluster.address}")
            run = run_ours(class_dir, work / f"out-dask-{workers}", workers, scheduler=cluster.address)
            run["workers"] = workers
            runs.append(run)
    walls = {run["workers"]: run["wall_seconds"] for run in runs}
    return {"runs": [{k: v for k, v in run.items() if k not in ("notebooks", "tests_csv")} for run in runs],
            "speedup": round(walls[1] / walls[2], 2) if walls.get(2) else None,
            "identical": all(run["tests_csv"] == local["tests_csv"] and run["returncode"] == 0 for run in runs)}


if __name__ == "__main__":
    raise SystemExit(main())
