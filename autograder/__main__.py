"""The command line of the course tools: one parser, one verb per job.

Instructors (the Makefile's targets call these):

    python -m autograder grade SUBMISSIONS OUT [--jobs N] [--scheduler tcp://host:port] [--unsafe-no-isolation]
                               [--due "2027-01-15 23:59 UTC"] [--reset-hand-grades]
                               [--limits "cell_seconds=120 ram_bytes=4e9"]   # each sandbox's bounds
    python -m autograder feedback OUT                # after grading by hand: feedback, CSVs and report anew
    python -m autograder export OUT                  # the same (make export)
    python -m autograder release [--check] [CHAPTER ...]   # course/ from solutions/ (nbgrader generate_assignment)
    python -m autograder prepare [CHAPTER ...]       # what grading makes from the course alone, made ahead

Learners:

    python -m autograder check [--json] [--limits ...] NOTEBOOK   # one notebook, hidden tests included

Authors (see solutions/README.md):

    python -m autograder quickcheck CHAPTER          # in-process: reference passes, stubs and mistakes fail
    python -m autograder grade-one [--limits ...] CHAPTER NOTEBOOK   # one notebook, sandboxed, result as JSON
    python -m autograder to-py NOTEBOOK SCRIPT       # a notebook as a jupytext percent script
    python -m autograder from-py SCRIPT NOTEBOOK     # ...and back, stored clean, cell ids kept
    python -m autograder normalize NOTEBOOK ...      # strip outputs and volatile metadata

``--limits`` (``make grade LIMITS="..."``) sets each sandbox's bounds by name (declared in ``autograder/settings.py``;
``--help`` of a verb lists them with their units, defaults and meanings); the others keep their defaults. They are
read here, once, and travel in each ``Task``.

Every verb is a function of a module; this file only parses. A wrong argument or path is one line on
stderr and exit status 2, never a traceback.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .errors import UsageError
from .settings import Limits, limits_help


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (no usage block), exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


LIMITS_HELP = ("each sandbox's bounds, NAME=NUMBER separated by spaces or commas, e.g. \"cell_seconds=120 "
               "ram_bytes=4e9\"; the others keep their defaults (listed below)")


def limits(text: str) -> Limits:
    """``--limits "cell_seconds=120 ram_bytes=4e9"``: the named bounds, the others their defaults (parsed once,
    here: ``Limits.parse``)."""
    try:
        return Limits.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parser() -> OneLineParser:
    top = OneLineParser(prog="python -m autograder", description=__doc__.split("\n")[0])
    sub = top.add_subparsers(dest="command", required=True, metavar="VERB", parser_class=OneLineParser)

    def verb(name, run, help, **kwargs):
        p = sub.add_parser(name, help=help, description=help, **kwargs)
        p.set_defaults(run=run)
        return p

    with_limits = {"epilog": limits_help(), "formatter_class": argparse.RawDescriptionHelpFormatter}
    grade = verb("grade", _grade, "grade a class of submissions", **with_limits)
    grade.add_argument("submissions", nargs="?", default="")
    grade.add_argument("out", nargs="?", default="")
    grade.add_argument("--jobs", type=int, default=None)
    grade.add_argument("--scheduler", default=None, help="address of a Dask scheduler")
    grade.add_argument("--unsafe-no-isolation", action="store_true",
                       help="grade even where no sandbox can be made (the report says so on its first line)")
    grade.add_argument("--due", default=None, help='the due date, with its time zone: "2027-01-15 23:59 UTC"')
    grade.add_argument("--reset-hand-grades", action="store_true",
                       help="into an OUT graded before: drop its hand grades, comments and flags (kept otherwise)")
    grade.add_argument("--limits", type=limits, default=Limits(), help=LIMITS_HELP)
    verb("feedback", _export, "after grading by hand: rewrite the feedback pages, CSVs and report of OUT "
         "from its gradebook").add_argument("out")
    verb("export", _export, "the same as feedback").add_argument("out")
    release = verb("release", _release, "generate course/ from solutions/ with nbgrader")
    release.add_argument("--check", action="store_true", help="fail when course/ differs from a fresh release")
    release.add_argument("chapters", nargs="*", metavar="CHAPTER", help="only these chapters (default: all)")
    prepare = verb("prepare", _prepare, "make what grading derives from the course alone (each chapter's empty "
                   "gradebook, the feedback pages' released cells) and keep it in .cache/grading/ for later runs")
    prepare.add_argument("chapters", nargs="*", metavar="CHAPTER", help="only these chapters (default: all)")
    check = verb("check", _check, "check one notebook, hidden tests included", **with_limits)
    check.add_argument("--json", action="store_true", help="print the grader's result as JSON")
    check.add_argument("--details", action="store_true",
                       help="list every failing check under its exercise (default: the first one only)")
    check.add_argument("--limits", type=limits, default=Limits(), help=LIMITS_HELP)
    check.add_argument("notebook", help="course/<chapter>/<chapter>.ipynb")
    verb("quickcheck", _quickcheck, "run a chapter's test cells in-process against the reference, "
         "the release stubs and its plausible mistakes").add_argument("chapter")
    one = verb("grade-one", _grade_one, "grade one notebook through the sandboxed grader, print the result as JSON",
               **with_limits)
    one.add_argument("--limits", type=limits, default=Limits(), help=LIMITS_HELP)
    one.add_argument("chapter")
    one.add_argument("notebook")
    to_py = verb("to-py", _to_py, "write a notebook as a jupytext percent-format script")
    to_py.add_argument("notebook")
    to_py.add_argument("script")
    from_py = verb("from-py", _from_py, "write a script back into a notebook, stored clean")
    from_py.add_argument("script")
    from_py.add_argument("notebook")
    verb("normalize", _normalize, "store notebooks clean (outputs and volatile metadata removed)").add_argument(
        "notebooks", nargs="+", metavar="NOTEBOOK")
    return top


def main(argv=None) -> int:
    top = parser()
    args = top.parse_args(argv)
    try:
        return args.run(args)
    except UsageError as exc:
        print(f"{top.prog} {args.command}: {exc}", file=sys.stderr)
        return 2


# ------------------------------------------------------------------ instructors


def _grade(args) -> int:
    from .classroom import grade_class
    try:
        grade_class(args.submissions, args.out, args.jobs, args.scheduler, args.unsafe_no_isolation,
                    args.reset_hand_grades, args.due, args.limits)
    except UsageError as exc:
        print(f"make grade: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a folder that cannot be read or written while grading
        print(f"make grade: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0


def _export(args) -> int:
    out, verb = args.out, f"make {args.command}"
    if not out.strip():
        print(f"{verb}: usage: {verb} OUT=<the OUT folder of a make grade run>", file=sys.stderr)
        return 2
    if not (Path(out) / "gradebook.db").is_file():
        what = "does not exist" if not Path(out).exists() else "holds no gradebook.db (not the OUT of make grade)"
        print(f"{verb}: OUT={out} {what}", file=sys.stderr)
        return 2
    from .outputs import publish
    try:
        students, cells = publish(Path(out))
    except Exception as exc:  # noqa: BLE001 - a damaged gradebook or an unwritable folder: one line, no traceback
        print(f"{verb}: could not export {out}/gradebook.db ({type(exc).__name__}: "
              f"{str(exc).splitlines()[0] if str(exc) else ''})", file=sys.stderr)
        return 2
    print(f"wrote {Path(out) / 'grades.csv'} ({students} submissions), {Path(out) / 'tests.csv'} ({cells} cells), "
          f"comments.csv, the feedback pages and report.html, with the hand grades and comments of the gradebook")
    return 0


def _release(args) -> int:
    from . import release
    if args.check:
        if args.chapters:
            raise UsageError("--check compares the whole course/: give no chapter")
        return release.check_fresh()
    release.generate(release.COURSE, only=_known_chapters(args.chapters) or None)
    return 0


def _prepare(args) -> int:
    from .course import chapters
    from .outputs import prepare
    prepare(_known_chapters(args.chapters) or chapters())
    return 0


# ------------------------------------------------------------------ learners


def _check(args) -> int:
    from .check import run
    return run(args.notebook, args.json, args.limits, args.details)


def check_main(argv=None) -> int:
    """The ``dlcourse-check`` console script: the ``check`` verb."""
    return main(["check", *(sys.argv[1:] if argv is None else argv)])


# ------------------------------------------------------------------ authors


def _known_chapters(names: list[str]) -> list[str]:
    from .course import chapters
    known = chapters()
    unknown = [name for name in names if name not in known]
    if unknown:
        raise UsageError(f"no chapter {', '.join(unknown)} in solutions/ (chapters: {', '.join(known)})")
    return names


def _quickcheck(args) -> int:
    from .quickcheck import main as quickcheck
    return quickcheck(_known_chapters([args.chapter])[0])


def _grade_one(args) -> int:
    _known_chapters([args.chapter])
    _existing(args.notebook)
    from .job import grade_submission
    from .task import Task
    result = grade_submission(Task("cli", args.chapter, f"{args.chapter}.ipynb", args.notebook, limits=args.limits))
    print(json.dumps(result.to_json(feedback=True), indent=1))
    return 0


def _existing(path: str) -> Path:
    if not Path(path).is_file():
        raise UsageError(f"{path}: {'is a folder' if Path(path).is_dir() else 'no such file'}")
    return Path(path)


def _to_py(args) -> int:
    from .course import to_py
    to_py(_existing(args.notebook), args.script)
    return 0


def _from_py(args) -> int:
    from .course import from_py
    from_py(_existing(args.script), args.notebook)
    return 0


def _normalize(args) -> int:
    from .course import normalize_files
    normalize_files([_existing(path) for path in args.notebooks])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
