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

import dataclasses
import datetime
import logging
import multiprocessing
import multiprocessing.forkserver
import os
import stat
import sys
import time
from pathlib import Path

from .course import chapters, grading_order
from .errors import UsageError
from .job import THREADS, finish_worker, grade_submission, prepare_worker, warm_modules, worker_modules
from .outputs import private_files, write_outputs
from .preflight import check as preflight
from .preflight import sandbox_or_refusal
from .regrade import Gradebook
from .result import Outcome, SubmissionResult
from .sandbox import cgroups
from .settings import GRADER, Limits
from .task import Task
from .text import folder_id, log_text

log = logging.getLogger("autograder")


class OneLineFormatter(logging.Formatter):
    """Every record is one line, whatever a student's folder name or a message holds (``log_text``)."""

    def format(self, record: logging.LogRecord) -> str:
        return log_text(super().format(record))


def _entries(folder) -> list[os.DirEntry]:
    with os.scandir(folder) as it:
        return sorted((e for e in it if not e.name.startswith(".")), key=lambda e: e.name)


LINK = "is a symbolic link: not followed, graded as the untouched release"
LAYOUT = "SUBMISSIONS/<student>/<chapter>/<chapter>.ipynb"
UNSAFE_SWITCH = "UNSAFE=1 (--unsafe-no-isolation)"


def discover(submissions: Path, limits: Limits = Limits(), unsafe: bool = False) -> tuple[list[Task], list[str],
                                                                                            list[str]]:
    """Jobs for every <student>/<assignment>/ folder, warnings about what was skipped, and every notebook
    under ``submissions`` that is not graded (``not_graded``: each with the place it should have had).

    Symbolic links are never followed (a link to the solutions or to a classmate's notebook
    would be graded as that file): a linked notebook or assignment folder is graded as the
    untouched release, with a note; a linked student folder is skipped, with a warning.
    Each task names its notebook relative to the class folder (``root``, ``parts``), so the
    job can open it without following a link anywhere on the way (O_NOFOLLOW); each is graded within
    ``limits``, and without a sandbox if ``unsafe``.
    """
    known = set(chapters())
    tasks, warnings = [], []
    named: set[str] = set()  # notebooks graded, or named in a task's notes
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
            problems, chosen = _choose(folder, expected, named)
            path = parts = None
            if chosen is not None:
                named.add(chosen.path)
                path, parts = chosen.path, (student_dir.name, folder.name, chosen.name)
            submitted_at, submitted_from = submission_time(folder.path, chosen)
            tasks.append(Task(student, folder.name, expected, path, str(submissions), parts, tuple(problems),
                              submitted_at, submitted_from, unsafe, limits))
    warm = warm_modules(task.assignment for task in tasks)  # one template per grading process for the class
    tasks = [dataclasses.replace(task, warm=warm) for task in tasks]
    return tasks, warnings, not_graded(submissions, named, known)


def _choose(folder: os.DirEntry, expected: str, named: set[str]) -> tuple[list[str], os.DirEntry | None]:
    """(what to report, the notebook to grade or None) in one assignment folder; no link is followed.
    ``named`` gathers the notebooks a note names, so that they are not listed again as not graded."""
    if folder.is_symlink():
        return [f"the folder {folder.name} {LINK}"], None
    if not folder.is_dir(follow_symlinks=False):
        return [f"{folder.name} is not a folder: graded as the untouched release"], None
    notebooks = {e.name: e for e in _entries(folder.path) if e.name.endswith(".ipynb")}
    regular = [e for e in notebooks.values() if e.is_file(follow_symlinks=False)]
    links = [e for e in notebooks.values() if e.is_symlink()]
    if expected in notebooks:
        named.add(notebooks[expected].path)
        if notebooks[expected].is_symlink():
            return [f"{expected} {LINK}"], None
        if notebooks[expected].is_file(follow_symlinks=False):
            return [], notebooks[expected]
        return [f"{expected} is not a regular file: graded as the untouched release"], None
    if len(regular) == 1:
        return [f"the notebook was renamed to {folder_id(regular[0].name)}: graded anyway"], regular[0]
    if len(links) == 1 and not regular:
        named.add(links[0].path)
        return [f"{folder_id(links[0].name)} {LINK}"], None
    return [f"{expected} is missing: graded as the untouched release"], None


def not_graded(submissions: Path, named: set[str], known: set[str]) -> list[str]:
    """Every ``.ipynb`` under ``submissions`` (links included, none followed; hidden files and folders such as
    .ipynb_checkpoints aside) that is neither graded nor named in a note, each with where it should be."""
    found = []
    for folder, dirs, files in os.walk(submissions):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = os.path.join(folder, name)
            if name.startswith(".") or not name.endswith(".ipynb") or path in named:
                continue
            parts = Path(path).relative_to(submissions).parts
            stem = name[:-len(".ipynb")]
            chapter = next((p for p in reversed(parts[1:-1]) if p in known), stem if stem in known else None)
            if len(parts) == 1:
                student = "<student>"
            else:
                student = folder_id(parts[0])
            should = (f"SUBMISSIONS/{student}/{chapter}/{chapter}.ipynb" if chapter else
                      f"SUBMISSIONS/{student}/<chapter>/<chapter>.ipynb")
            graded = len(parts) > 1 and chapter and os.path.join(submissions, parts[0], chapter, f"{chapter}.ipynb")
            why = f"{should} is graded instead" if graded in named else f"it should be {should}"
            found.append(f"{'/'.join(folder_id(p) for p in parts)}: not graded; {why}")
    return found


def submission_time(folder: str, notebook: os.DirEntry | None) -> tuple[str | None, str | None]:
    """When a submission was handed in, and what says so: nbgrader's ``timestamp.txt`` beside the notebook
    (written by the student's side: it can be forged), else the notebook file's modification time. Opened
    without following a link; an unreadable or unparsable file is no time."""
    try:
        fd = os.open(os.path.join(folder, "timestamp.txt"), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                from nbgrader.utils import parse_utc
                moment = parse_utc(os.read(fd, 200).decode("utf-8").strip())
                return moment.strftime("%Y-%m-%d %H:%M:%S UTC"), "timestamp.txt"
        finally:
            os.close(fd)
    except Exception:  # noqa: BLE001 - the student's file: anything unreadable is no time, never a stop
        pass
    if notebook is None:
        return None, None
    try:
        moment = datetime.datetime.fromtimestamp(notebook.stat(follow_symlinks=False).st_mtime, datetime.timezone.utc)
    except OSError:
        return None, None
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC"), "file mtime"


def parse_due(text: str) -> datetime.datetime:
    """A due date with an explicit time zone ("2027-01-15 23:59 UTC", "2027-01-15T23:59+01:00"), as nbgrader
    stores it (naive UTC). Without a time zone it is refused: a class spans time zones."""
    import dateutil.parser
    import dateutil.tz
    parts = text.split()
    try:
        if len(parts) == 3 and not parts[2].startswith(("+", "-")):
            zone = dateutil.tz.gettz(parts[2])
            if zone is None:
                raise UsageError(f"DUE={text}: unknown time zone {parts[2]} (write UTC, or an offset: +01:00)")
            moment = dateutil.parser.parse(" ".join(parts[:2])).replace(tzinfo=zone)
        else:
            moment = dateutil.parser.parse(text)
    except (ValueError, OverflowError):
        raise UsageError(f"DUE={text}: not a date and time (e.g. DUE=\"2027-01-15 23:59 UTC\")") from None
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise UsageError(f"DUE={text}: give its time zone, e.g. DUE=\"{text} UTC\" or \"{text} +01:00\"")
    return (moment - moment.utcoffset()).replace(tzinfo=None)


def _safe_job(task: Task) -> SubmissionResult:
    try:
        return grade_submission(task)
    except Exception as exc:  # noqa: BLE001 - a grader bug must not stop the class
        return SubmissionResult.failed(task, f"the grader failed on this notebook ({type(exc).__name__}: {exc})")


def _progress(result: SubmissionResult, done: int, total: int) -> None:
    log.info("[%d/%d] %s/%s: %s in %.1f s", done, total, result.student, result.assignment,
             result.status, result.seconds)


def _worker_loop(conn, warm_up: tuple) -> None:
    """A grading process: warmed up for the class (``prepare_worker(*warm_up)``), then one submission at a
    time, each result sent back before the next is taken."""
    prepare_worker(*warm_up)
    try:
        while True:
            try:
                task = conn.recv()
            except EOFError:
                return
            if task is None:
                return
            conn.send(_safe_job(task))
    finally:
        finish_worker()


class _Worker:
    def __init__(self, context, warm_up: tuple):
        self.conn, theirs = context.Pipe()
        self.proc = context.Process(target=_worker_loop, args=(theirs, warm_up), daemon=True)
        self.proc.start()
        theirs.close()
        self.task: int | None = None
        self.since = 0.0

    def stop(self, seconds: float = 0) -> None:
        """End the process: once it has ended by itself (within ``seconds``, after being sent None), or killed."""
        self.proc.join(seconds)
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()
        self.conn.close()


# a submission's own limits end it long before this; the margin covers sandbox starts and feedback
HARD_LIMIT_MARGIN = GRADER.hard_limit_margin_seconds
STOP_SECONDS = GRADER.stop_seconds  # for an idle grading process to end by itself (its sandbox forked ahead removed)


def queue(tasks: list[Task]) -> list[int]:
    """The order to grade ``tasks`` in (indices): chapter by chapter, the slowest chapters first
    (``course.grading_order``)."""
    return sorted(range(len(tasks)), key=lambda i: grading_order(tasks[i].assignment))


def warm_up(tasks: list[Task]) -> tuple:
    """What each grading process prepares before its first job (``prepare_worker``'s arguments): the class's
    chapters and the modules of its sandboxes' template (``Task.warm``)."""
    return tuple(sorted({task.assignment for task in tasks})), tasks[0].warm if tasks else ()


def start_forkserver(tasks: list[Task]) -> None:
    """Start the process every grading process is forked from (multiprocessing's forkserver), importing what
    each of them needs (``job.worker_modules``) once, while this process goes on (the pre-flight). Its
    numerical libraries get one thread (``job.THREADS``), as each grading process's."""
    for name, value in THREADS.items():
        os.environ.setdefault(name, value)
    multiprocessing.get_context("forkserver").set_forkserver_preload(worker_modules(warm_up(tasks)[0]))
    multiprocessing.forkserver.ensure_running()


def _run_local(tasks: list[Task], jobs: int) -> list[SubmissionResult]:
    """Grade on ``jobs`` processes. Whatever kills or hangs a grading process costs only the submission it
    was grading: it is tried once more on a fresh process, then reported."""
    from multiprocessing.connection import wait

    # a notebook may be graded twice (job.grade_submission: the machine too busy), each within its wall-clock cap
    hard_limit = 2 * max(task.limits.notebook_wall_seconds for task in tasks) + HARD_LIMIT_MARGIN
    context = multiprocessing.get_context("forkserver")
    pending = queue(tasks)
    results: dict[int, SubmissionResult] = {}
    tries: dict[int, int] = {}
    prepared = warm_up(tasks)
    workers = [_Worker(context, prepared) for _ in range(min(jobs, len(tasks)))]

    def lost(worker, why: str, outcome: Outcome = Outcome.ERROR) -> None:
        i, worker.task = worker.task, None
        tries[i] = tries.get(i, 0) + 1
        task = tasks[i]
        if tries[i] < 2:
            log.warning("%s/%s: %s; trying it once more", task.student, task.assignment, why)
            pending.insert(0, i)
        else:
            results[i] = SubmissionResult.failed(task, f"grading stopped twice: {why}", outcome)
            _progress(results[i], len(results), len(tasks))
        worker.stop()
        workers[workers.index(worker)] = _Worker(context, prepared)

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
                    lost(worker, f"the grader's hard time limit of {hard_limit:.0f} s was reached", Outcome.LIMIT)
    finally:
        for worker in workers:
            if worker.task is None and worker.proc.is_alive():
                try:
                    worker.conn.send(None)
                except OSError:
                    pass
        for worker in workers:
            worker.stop(STOP_SECONDS)
    return [results[i] for i in range(len(tasks))]


def run_jobs(tasks: list[Task], jobs: int, scheduler: str | None = None) -> list[SubmissionResult]:
    """The results of ``tasks``, in their order, graded in the queue's (``queue``)."""
    if not tasks:
        return []
    if scheduler:
        from distributed import Client
        with Client(scheduler, timeout="30s") as client:
            client.run(prepare_worker, *warm_up(tasks))
            order = queue(tasks)
            futures_ = dict(zip(order, client.map(_safe_job, [tasks[i] for i in order], pure=False)))
            results = []
            for i, task in enumerate(tasks):
                try:  # a worker lost on one submission costs only that one
                    results.append(futures_[i].result())
                except Exception as exc:  # noqa: BLE001
                    results.append(SubmissionResult.failed(
                        task, f"grading crashed on its Dask worker: {type(exc).__name__}"))
            client.run(finish_worker)
            return results
    if jobs <= 1:
        prepare_worker(*warm_up(tasks))
        done: dict[int, SubmissionResult] = {}
        try:
            for i in queue(tasks):
                done[i] = _safe_job(tasks[i])
                _progress(done[i], len(done), len(tasks))
        finally:
            finish_worker()
        return [done[i] for i in range(len(tasks))]
    return _run_local(tasks, jobs)


def grade_class(submissions: str, out: str, jobs: int | None = None, scheduler: str | None = None,
                unsafe: bool = False, reset_hand_grades: bool = False, due: str | None = None,
                limits: Limits = Limits()) -> Path:
    """``unsafe``: grade even where no sandbox can be made (the report's first line says so).
    Into an OUT graded before, hand grades and comments are kept unless ``reset_hand_grades``;
    ``due``: the chapters' due date, with its time zone ("2027-01-15 23:59 UTC"); ``limits``: each
    sandbox's bounds (``make grade LIMITS=...``)."""
    if not submissions or not out:
        raise UsageError("usage: make grade SUBMISSIONS=<dir> OUT=<dir>")
    due_date = parse_due(due) if due else None
    # with Dask, the workers make the sandboxes (the pre-flight asks them)
    reason = None if scheduler else sandbox_or_refusal(unsafe, UNSAFE_SWITCH)
    source = Path(submissions)
    if not source.is_dir():
        raise UsageError(f"SUBMISSIONS={submissions} is not a directory")
    target = Path(out)
    if target.resolve() == source.resolve() or source.resolve() in target.resolve().parents:
        raise UsageError("OUT must not be inside SUBMISSIONS")
    existed = target.is_dir()
    try:
        target.mkdir(mode=0o700, parents=True, exist_ok=True)  # grades and feedback: the instructor's only
    except OSError as exc:
        raise UsageError(f"OUT={out} cannot be created ({exc.strerror})") from None
    if not os.access(target, os.W_OK):
        raise UsageError(f"OUT={out} is not writable")
    if (target / "gradebook.db").exists():  # the instructor's hand grades: read before anything is graded
        try:
            Gradebook.read(target / "gradebook.db")
        except Exception as exc:  # noqa: BLE001 - a damaged gradebook: one line, nothing overwritten
            raise UsageError(f"OUT={out}: its gradebook.db cannot be read ({type(exc).__name__}); it may hold hand "
                             f"grades: move it away (or give another OUT) to grade into this folder") from None

    with private_files():
        handler = logging.FileHandler(target / "grading.log", mode="w", encoding="utf-8")
    handler.setFormatter(OneLineFormatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    console = logging.StreamHandler(sys.stderr)
    console.setFormatter(OneLineFormatter("[grade] %(message)s"))
    log.addHandler(console)
    log.setLevel(logging.INFO)
    try:
        if existed and target.stat().st_mode & 0o077:
            log.warning("OUT=%s can be read by other users of this machine (mode %o): chmod 700 it to keep "
                        "grades and feedback private", out, target.stat().st_mode & 0o777)
        tasks, warnings, dropped = discover(source, limits, unsafe=reason is not None)
        if reason is not None:
            log.warning("UNSAFE: grading without a sandbox, as asked (%s)", reason)
        elif (limited := cgroups.limited()) is not None:
            log.warning("%s", limited)
        for warning in warnings + dropped:
            log.warning(warning)
        if not tasks:
            raise UsageError(f"nothing to grade in {submissions}: no notebook is where the grader looks, {LAYOUT}"
                             + (f" ({len(dropped)} notebooks elsewhere, named above)" if dropped else ""))
        jobs = jobs or os.cpu_count() or 1
        if jobs > 1 and not scheduler:
            start_forkserver(tasks)  # its imports run beside the pre-flight
        preflight({task.assignment for task in tasks}, unsafe, scheduler=scheduler)  # a machine's fault stops here
        log.info("grading %d notebooks from %s with %s", len(tasks), source,
                 f"the Dask scheduler at {scheduler}" if scheduler else f"{jobs} local processes")
        start = time.monotonic()
        results = run_jobs(tasks, jobs, scheduler)
        elapsed = time.monotonic() - start
        for task, r in zip(tasks, results):
            r.submitted_at, r.submitted_from = task.submitted_at, task.submitted_from
            for problem in r.problems:
                log.warning("%s/%s: %s", r.student, r.assignment, problem)
            if r.status is not Outcome.GRADED:
                log.warning("%s/%s: %s", r.student, r.assignment, r.status)
        run = write_outputs(target, results, elapsed, reset_hand_grades=reset_hand_grades, due=due_date,
                            not_graded=dropped)
        _summarize(run, reset_hand_grades)
        log.info("graded %d notebooks in %.1f s; see %s", len(results), elapsed, target / "grades.csv")
        if dropped:
            log.warning("%d notebooks were not graded (not in the layout %s): named above and in report.html",
                        len(dropped), LAYOUT)
    finally:
        log.removeHandler(handler)
        log.removeHandler(console)
        handler.close()
    return target


def _summarize(run: dict, reset: bool) -> None:
    """One line on what a re-grade kept and changed (the report lists each score, per student, with why)."""
    for line in run["lost"]:
        log.warning("hand grade not kept: %s", line)
    if reset:
        log.info("hand grades, comments and flags of earlier runs reset, as asked")
    elif run["hand_grades_kept"]:
        log.info("kept %d hand grades and comments of earlier runs%s", run["hand_grades_kept"],
                 f"; flagged, as the answer changed since: {', '.join(run['answer_changed'])}"
                 if run["answer_changed"] else "")
    if run["kept"]:
        log.info("kept %d submissions graded by an earlier run into this OUT (not in SUBMISSIONS now)",
                 len(run["kept"]))
    changes = run["changes"]
    if changes:
        log.info("re-grade: %d scores changed for %d students (%s); each with why in report.html",
                 sum(map(len, changes.values())), len(changes),
                 ", ".join(f"{student}: {len(lines)}" for student, lines in changes.items()))
