"""A large class (issue 40): classes of 30, 300 and 1,000 notebooks of one chapter, graded and measured.

    python -m benchmarks.grading large-class                          # 30, 300, 1000 notebooks of ch01
    python -m benchmarks.grading large-class --sizes 30,300 --conditions "loaded by a CI rehearsal"

For each size N a class of N copies of the chapter is built (``--chapter``, default ch01_perceptron): a
cycle of 10 kinds, 4 reference notebooks, 4 with one or two plausible mistakes of
``autograder/tests/mutants/<chapter>.py`` and 2 untouched releases, so that grading does real work
and writes real feedback. The distinct submissions are built once (a pool of ``POOL``) and each
student's copy carries its own name in the notebook's metadata, so no two files are the same. Then:

1. ``python -m autograder grade CLASS OUT --jobs <nproc>`` (the whole command: jobs, gradebook,
   feedback, CSVs): its wall time, per notebook, and (from OUT/grading.log) the jobs' share and what
   follows them; the peak memory of the grading process tree (the
   command and every descendant: workers, sandboxes, kernels), sampled from /proc every
   ``--interval`` s: the peak of the summed RSS (shared pages counted in each process, so an upper
   bound) and the command's own peak RSS (the coordinator, which holds every result);
2. the gradebook's size, ``OUT/gradebook.db``, and OUT's whole size;
3. ``python -m autograder feedback OUT`` (what an instructor runs after grading by hand): its time;
4. a re-grade of the same class into the same OUT (hand grades kept): its time and peak memory.

Flat means: time per notebook and peak memory of the largest class against the smallest (the
ratios, reported in docs/budgets.md); the gradebook grows with N, so it is reported per notebook.
Results: ``benchmarks/results/large_class.json``; the budget rows in ``benchmarks/measured/large_class.json``.
"""
from __future__ import annotations

import argparse
import copy
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from ..common import PY, ROOT, child_env, log, machine, print_load_warning, setup_process_env, table, write_json
from .class_builder import submission

KINDS = ["correct", "partial", "correct", "untouched", "partial", "correct", "partial", "correct", "untouched",
         "partial"]
POOL = 20
DEFAULT_SIZES = (30, 300, 1000)


def build(folder: Path, chapter: str, size: int, pool: list) -> dict:
    """``folder/<student>/<chapter>/<chapter>.ipynb`` for ``size`` students from the pool; the manifest's counts."""
    import nbformat
    if folder.exists():
        shutil.rmtree(folder)
    counts: dict[str, int] = {}
    for i in range(size):
        kind, nb = pool[i % len(pool)]
        nb = copy.deepcopy(nb)
        nb.metadata["benchmark_student"] = f"s{i:04d}"
        path = folder / f"s{i:04d}" / chapter / f"{chapter}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nb, str(path))
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def make_pool(chapter: str, seed: int) -> list:
    return [(KINDS[i % len(KINDS)], submission(chapter, KINDS[i % len(KINDS)], random.Random(f"{seed}-{i}"))[0])
            for i in range(POOL)]


class TreeMemory:
    """Samples the RSS of a process and all its descendants from /proc until stopped."""

    def __init__(self, pid: int, interval: float):
        self.pid, self.interval = pid, interval
        self.peak_sum = self.peak_root = self.peak_processes = self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _run(self):
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def sample(self):
        children: dict[int, list[int]] = {}
        rss: dict[int, int] = {}
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    stat = f.read()
                fields = stat[stat.rindex(b")") + 2:].split()
                # fields[1] = ppid, fields[21] = rss in pages (proc(5), counted after the command's name)
                pid = int(entry.name)
                children.setdefault(int(fields[1]), []).append(pid)
                rss[pid] = int(fields[21]) * PAGE
            except (OSError, ValueError, IndexError):
                continue
        if self.pid not in rss:
            return
        tree, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            tree.append(pid)
            todo.extend(children.get(pid, ()))
        self.samples += 1
        self.peak_sum = max(self.peak_sum, sum(rss.get(p, 0) for p in tree))
        self.peak_root = max(self.peak_root, rss[self.pid])
        self.peak_processes = max(self.peak_processes, len(tree))


PAGE = os.sysconf("SC_PAGE_SIZE")
MB = 1024 ** 2


def timed(command: list[str], interval: float) -> dict:
    """Run ``python -m autograder <command>`` from the checkout; its wall time and its tree's peak memory."""
    start = time.monotonic()
    proc = subprocess.Popen([PY, "-m", "autograder", *command], cwd=ROOT, env=child_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with TreeMemory(proc.pid, interval) as memory:
        stdout, stderr = proc.communicate()
    result = {"seconds": round(time.monotonic() - start, 2), "returncode": proc.returncode,
              "peak_tree_rss_mb": round(memory.peak_sum / MB, 1),
              "peak_command_rss_mb": round(memory.peak_root / MB, 1),
              "peak_processes": memory.peak_processes, "samples": memory.samples}
    if proc.returncode != 0:
        result["stderr_tail"] = stderr[-2000:]
        result["stdout_tail"] = stdout[-1000:]
    return result


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def graded_count(out: Path) -> int:
    return sum(1 for _ in (out / "results").glob("*/*.json"))


def phases(out: Path) -> dict:
    """From OUT/grading.log: the jobs (start to the last notebook back, the log's "graded N notebooks in X s")
    and what follows them in the same command (gradebook, feedback pages, CSVs, report)."""
    import datetime
    import re
    text = (out / "grading.log").read_text() if (out / "grading.log").is_file() else ""
    stamp = r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) INFO "
    start = re.findall(stamp + r"grading \d+ notebooks", text, re.M)
    end = re.findall(stamp + r"graded \d+ notebooks in ([0-9.]+) s", text, re.M)
    if not start or not end:
        return {}

    def when(t):
        return datetime.datetime.strptime(t, "%Y-%m-%d %H:%M:%S,%f")
    total = (when(end[-1][0]) - when(start[-1])).total_seconds()
    jobs = float(end[-1][1])
    return {"jobs_seconds": round(jobs, 1), "after_jobs_seconds": round(total - jobs, 1)}


def measure(work: Path, chapter: str, size: int, pool: list, jobs: int, interval: float) -> dict:
    class_dir, out = work / f"class-{size}", work / f"out-{size}"
    t = time.monotonic()
    kinds = build(class_dir, chapter, size, pool)
    entry: dict = {"size": size, "kinds": kinds, "build_seconds": round(time.monotonic() - t, 1)}
    if out.exists():
        shutil.rmtree(out)
    log("large-class", f"{size}: python -m autograder grade --jobs {jobs}")
    grade = entry["grade"] = timed(["grade", str(class_dir), str(out), "--jobs", str(jobs)], interval)
    entry["graded"] = graded_count(out)
    grade.update(phases(out))
    entry["seconds_per_notebook"] = round(grade["seconds"] / size, 3)
    db = out / "gradebook.db"
    entry["gradebook_bytes"] = db.stat().st_size if db.is_file() else None
    entry["gradebook_bytes_per_notebook"] = round(entry["gradebook_bytes"] / size) if entry["gradebook_bytes"] else None
    entry["out_bytes"] = folder_bytes(out)
    tests = out / "tests.csv"
    first_tests = tests.read_text() if tests.is_file() else None
    log("large-class", f"{size}: python -m autograder feedback OUT")
    entry["feedback"] = timed(["feedback", str(out)], interval)
    log("large-class", f"{size}: re-grade into the same OUT")
    regrade = entry["regrade"] = timed(["grade", str(class_dir), str(out), "--jobs", str(jobs)], interval)
    regrade["seconds_per_notebook"] = round(regrade["seconds"] / size, 3)
    regrade.update(phases(out))
    entry["regrade_same_tests_csv"] = first_tests is not None and tests.is_file() and tests.read_text() == first_tests
    entry["gradebook_bytes_after_regrade"] = db.stat().st_size if db.is_file() else None
    log("large-class", f"{size}: {grade['seconds']} s ({entry['seconds_per_notebook']} s per notebook), peak "
        f"{grade['peak_tree_rss_mb']} MB, gradebook {entry['gradebook_bytes']} B, feedback "
        f"{entry['feedback']['seconds']} s, re-grade {regrade['seconds']} s")
    return entry


def ratios(runs: list[dict]) -> dict:
    """The largest class against the smallest: time per notebook, peak memory (tree, command), re-grade, feedback
    per notebook, gradebook per notebook."""
    small, large = runs[0], runs[-1]

    def r(a, b):
        return round(b / a, 2) if a and b is not None else None
    return {"from": small["size"], "to": large["size"],
            "seconds_per_notebook": r(small["seconds_per_notebook"], large["seconds_per_notebook"]),
            "peak_tree_rss": r(small["grade"]["peak_tree_rss_mb"], large["grade"]["peak_tree_rss_mb"]),
            "peak_command_rss": r(small["grade"]["peak_command_rss_mb"], large["grade"]["peak_command_rss_mb"]),
            "regrade_seconds_per_notebook": r(small["regrade"]["seconds_per_notebook"],
                                              large["regrade"]["seconds_per_notebook"]),
            "feedback_seconds_per_notebook": r(small["feedback"]["seconds"] / small["size"],
                                               large["feedback"]["seconds"] / large["size"]),
            "gradebook_bytes_per_notebook": r(small["gradebook_bytes_per_notebook"],
                                              large["gradebook_bytes_per_notebook"])}


def report(data: dict) -> None:
    rows = [[e["size"], e["grade"]["seconds"], e["grade"].get("jobs_seconds"), e["grade"].get("after_jobs_seconds"),
             e["seconds_per_notebook"], e["grade"]["peak_tree_rss_mb"],
             e["grade"]["peak_command_rss_mb"], e["gradebook_bytes"], e["feedback"]["seconds"], e["regrade"]["seconds"],
             "yes" if e["regrade_same_tests_csv"] else "NO"] for e in data["runs"]]
    print(table(rows, ["notebooks", "grade s", "jobs s", "after jobs s", "s/notebook", "peak tree MB",
                       "peak command MB", "gradebook B",
                       "feedback s", "re-grade s", "same tests.csv"]))
    if data.get("ratios"):
        print("largest / smallest: " + ", ".join(f"{k} {v}" for k, v in data["ratios"].items()))


def figures(data: dict) -> tuple[dict[str, str], dict[str, dict]]:
    """The budget rows' texts and, per row, the values by size and the ratio (benchmarks.budgets renders the
    large-class table from them)."""
    runs, ratio = data["runs"], data.get("ratios") or {}
    sizes = "/".join(str(e["size"]) for e in runs)

    def by(get):
        return {str(e["size"]): get(e) for e in runs}

    def text(values, unit, key):
        body = ", ".join(f"{n}: {v}{unit}" for n, v in values.items())
        return f"{body} (×{ratio[key]} {ratio['from']}→{ratio['to']})" if ratio.get(key) is not None else body
    rows = {
        "large_class_seconds": (by(lambda e: e["seconds_per_notebook"]), " s", "seconds_per_notebook"),
        "large_class_memory": (by(lambda e: e["grade"]["peak_tree_rss_mb"]), " MB", "peak_tree_rss"),
        "large_class_command_memory": (by(lambda e: e["grade"]["peak_command_rss_mb"]), " MB", "peak_command_rss"),
        "large_class_gradebook": (by(lambda e: round(e["gradebook_bytes"] / 1024) if e["gradebook_bytes"] else None),
                                  " KiB", "gradebook_bytes_per_notebook"),
        "large_class_feedback": (by(lambda e: e["feedback"]["seconds"]), " s", "feedback_seconds_per_notebook"),
        "large_class_regrade": (by(lambda e: e["regrade"]["seconds_per_notebook"]), " s",
                                "regrade_seconds_per_notebook"),
    }
    texts, details = {}, {}
    for row, (values, unit, key) in rows.items():
        texts[row] = f"{text(values, unit, key)} [{data['chapter'].split('_')[0]}, {sizes} notebooks]"
        details[row] = {"sizes": [e["size"] for e in runs], "by_size": values, "unit": unit.strip(),
                        "ratio": ratio.get(key), "ratio_of": key}
    return texts, details


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.grading large-class",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)),
                        help="class sizes, comma separated (default 30,300,1000)")
    parser.add_argument("--chapter", default="ch01_perceptron")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="workers of our grader (default nproc)")
    parser.add_argument("--interval", type=float, default=0.2, help="seconds between memory samples (default 0.2)")
    parser.add_argument("--conditions", default="", help="how busy the machine was, for the record (default: its load)")
    parser.add_argument("--workdir", default=None, help="where to build the classes (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--no-record", action="store_true", help="don't write benchmarks/measured/large_class.json")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    except ValueError:
        parser.error("--sizes: whole numbers separated by commas, e.g. 30,300,1000")
    if not sizes or sizes[0] < 1:
        parser.error("--sizes must be positive")
    setup_process_env()
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="bench-large-class-"))
    work.mkdir(parents=True, exist_ok=True)
    data = {"machine": machine(), "chapter": args.chapter, "sizes": sizes, "jobs": args.jobs,
            "conditions": args.conditions, "workdir": str(work), "runs": []}
    try:
        log("large-class", f"building {POOL} distinct submissions of {args.chapter}")
        pool = make_pool(args.chapter, args.seed)
        for size in sizes:
            data["runs"].append(measure(work, args.chapter, size, pool, args.jobs, args.interval))
        data["ratios"] = ratios(data["runs"]) if len(data["runs"]) > 1 else None
        data["machine_at_end"] = machine()
        report(data)
        print_load_warning()
        reasons = failed(data["runs"])
        for reason in reasons:
            print(f"[large-class] NOT RECORDED: {reason}", file=sys.stderr)
        if not args.no_record and not reasons:
            from .. import budgets
            texts, details = figures(data)
            argv = sys.argv[1:] if argv is None else argv
            conditions = f"{args.conditions}; {budgets.machine_load()}" if args.conditions else ""
            budgets.record("large_class", texts, ["large-class", *argv], conditions=conditions, details=details,
                           module="grading")
    finally:
        path = write_json("large_class", data)
        print(f"\nresults: {path.relative_to(ROOT)}" + (f"; work folder kept: {work}" if args.keep else ""))
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if reasons else 0


def failed(runs: list[dict]) -> list[str]:
    """Why the runs cannot be recorded: a command that failed, notebooks left ungraded, a re-grade that differs."""
    why = []
    for e in runs:
        for step in ("grade", "regrade", "feedback"):
            if e[step]["returncode"]:
                why.append(f"{e['size']}: {step} exited {e[step]['returncode']}: "
                           f"{e[step].get('stderr_tail', '').strip()[-300:]}")
        if e["graded"] != e["size"]:
            why.append(f"{e['size']}: {e['graded']} of {e['size']} notebooks graded")
        if not e["regrade_same_tests_csv"]:
            why.append(f"{e['size']}: the re-grade's tests.csv differs")
    return why


if __name__ == "__main__":
    raise SystemExit(main())
