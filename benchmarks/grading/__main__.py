"""python -m benchmarks.grading: build the class, run ours, run stock nbgrader, measure overhead, report."""
from __future__ import annotations

import argparse
import os
import shutil
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
from .class_builder import KINDS, build_class
from .ours import check_determinism, run_ours, summarize_ours
from .overhead import measure_overhead
from .tables import report
from .stock import run_stock


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.grading", description=DOC.split("\n")[0])
    parser.add_argument("--students", type=int, default=40, help="students per chapter (default 40)")
    chapters_option(parser)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="workers of our grader (default nproc)")
    parser.add_argument("--sequential", action="store_true", help="also time our grader with --jobs 1")
    parser.add_argument("--stock-sample", type=int, default=None, metavar="K",
                        help="grade only K students per chapter with stock nbgrader and extrapolate")
    parser.add_argument("--no-stock", action="store_true", help="skip stock nbgrader")
    parser.add_argument("--no-overhead", action="store_true", help="skip the per-notebook overhead measurements")
    parser.add_argument("--check-determinism", action="store_true",
                        help="compare tests.csv of --jobs 1 and --jobs 2 on a small class")
    parser.add_argument("--workdir", default=None, help="where to build the class (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.students < 1 or (args.stock_sample is not None and args.stock_sample < 1):
        parser.error("--students and --stock-sample must be positive")

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

        log("grading", f"ours: python -m autograder grade --jobs {args.jobs}")
        data["ours"] = run_ours(class_dir, work / "out", args.jobs)
        data["ours_by_kind"] = summarize_ours(data["ours"], manifest)
        if args.sequential:
            log("grading", "ours: python -m autograder grade --jobs 1")
            data["ours_sequential"] = run_ours(class_dir, work / "out-sequential", 1)
        if not args.no_stock:
            data["stock"] = run_stock(class_dir, manifest, chapters, args.stock_sample, work, args.students)
        if not args.no_overhead:
            data["overhead"] = measure_overhead(chapters, work)
        if args.check_determinism:
            data["determinism"] = check_determinism(work, chapters)
        data["machine_at_end"] = machine()
        report(data)
        print_load_warning()
    finally:
        path = write_json("grading", data)
        print(f"\nresults: {path.relative_to(ROOT)}" + (f"; work folder kept: {work}" if args.keep else ""))
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    failed = data.get("ours", {}).get("returncode", 0) != 0 or (data.get("determinism") or {}).get("identical") is False
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
