"""Command line of the grading tools.

    python -m autograder grade SUBMISSIONS OUT [--jobs N] [--scheduler tcp://host:port] [--unsafe-no-isolation]
    python -m autograder export OUT          # refresh grades.csv/tests.csv after manual grading
    python -m autograder check [--json] NOTEBOOK   # a full check of one notebook, for self-learners
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (no usage block), exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m autograder")
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
        except OSError as exc:  # a folder that cannot be read or written while grading
            print(f"make grade: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        return 0
    if args.command == "export":
        return _export(args.out)
    from .check import main as check_main
    return check_main((["--json"] if args.json else []) + [args.notebook])


def _export(out: str) -> int:
    if not out.strip():
        print("make export: usage: make export OUT=<the OUT folder of a make grade run>", file=sys.stderr)
        return 2
    if not (Path(out) / "gradebook.db").is_file():
        what = "does not exist" if not Path(out).exists() else "holds no gradebook.db (not the OUT of make grade)"
        print(f"make export: OUT={out} {what}", file=sys.stderr)
        return 2
    from .outputs import export_csv
    try:
        students, cells = export_csv(Path(out))
    except Exception as exc:  # noqa: BLE001 - a damaged gradebook or an unwritable folder: one line, no traceback
        print(f"make export: could not export {out}/gradebook.db ({type(exc).__name__}: "
              f"{str(exc).splitlines()[0] if str(exc) else ''})", file=sys.stderr)
        return 2
    print(f"wrote {Path(out) / 'grades.csv'} ({students} submissions) and {Path(out) / 'tests.csv'} ({cells} cells)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
