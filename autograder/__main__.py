"""Command line of the grading tools.

    python -m autograder grade SUBMISSIONS OUT [--jobs N] [--scheduler tcp://host:port] [--unsafe-no-isolation]
    python -m autograder export OUT          # refresh grades.csv/tests.csv after manual grading
    python -m autograder check [--json] NOTEBOOK   # a full check of one notebook, for self-learners
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder")
    sub = parser.add_subparsers(dest="command", required=True)
    grade = sub.add_parser("grade", help="grade a class of submissions")
    grade.add_argument("submissions", nargs="?", default="")
    grade.add_argument("out", nargs="?", default="")
    grade.add_argument("--jobs", type=int, default=None)
    grade.add_argument("--scheduler", default=None, help="address of a Dask scheduler")
    grade.add_argument("--unsafe-no-isolation", action="store_true",
                       help="grade even where no sandbox can be made (the report says so on its first line)")
    export = sub.add_parser("export", help="rewrite the CSVs from OUT/gradebook.db")
    export.add_argument("out")
    check = sub.add_parser("check", help="check one notebook, hidden tests included")
    check.add_argument("--json", action="store_true", help="print the grader's result as JSON")
    check.add_argument("notebook")
    args = parser.parse_args(argv)

    if args.command == "grade":
        from .classroom import UsageError, grade_class
        try:
            grade_class(args.submissions, args.out, args.jobs, args.scheduler, args.unsafe_no_isolation)
        except UsageError as exc:
            print(f"make grade: {exc}", file=sys.stderr)
            return 2
        return 0
    if args.command == "export":
        from .outputs import export_csv
        if not (Path(args.out) / "gradebook.db").is_file():
            print(f"export: {args.out} holds no gradebook.db", file=sys.stderr)
            return 2
        export_csv(Path(args.out))
        return 0
    from .selfcheck import main as check_main
    return check_main((["--json"] if args.json else []) + [args.notebook])


if __name__ == "__main__":
    raise SystemExit(main())
