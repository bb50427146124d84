"""Throughput of the class grader (``python -m autograder grade``) against stock nbgrader.

    python -m benchmarks.grading                                  # 40 students x every chapter
    python -m benchmarks.grading --students 40 --stock-sample 3 --chapters ch02_universal_approximation,ch04_cnn
    python -m benchmarks.grading --students 3 --stock-sample 1 --check-determinism --sequential

1. A synthetic class is built with ``autograder.submissions`` (``--students`` per chapter; the
   kind of each submission follows a fixed cycle of 20): 9 correct (the reference), 6 partial
   (the reference with 1-2 answers replaced by a plausible mistake of
   ``autograder/tests/mutants/<chapter>.py``), 2 untouched releases (stubs), and 3 broken ones:
   invalid JSON, a scratch cell ``while True: pass``, a scratch cell ``os._exit(1)``.
2. Ours: ``python -m autograder grade CLASS OUT --jobs <nproc>`` as a subprocess (the whole
   command: jobs, gradebook, feedback, CSVs); ``--sequential`` adds a ``--jobs 1`` run.
3. Stock nbgrader, sequential, on the same files: a temporary course (``source/`` = a copy of
   ``solutions/<chapter>``, ``submitted/<student>/<chapter>/``, its own gradebook),
   ``nbgrader generate_assignment <ch> --force`` then
   ``nbgrader autograde <ch> --force --ExecutePreprocessor.timeout=60`` (``Execute.allow_errors``
   as in the course's nbgrader_config.py). ``--stock-sample K`` grades only K students per
   chapter, chosen across kinds (correct, partial, untouched, hang, exit, json, then again)
   and extrapolates: nbgrader's fixed start-up + the mean per-notebook time x the class size
   (per-notebook times come from nbgrader's timestamped log).
4. Per-notebook overhead of ours: a sandbox started and a trivial cell run, with no preload
   and with the chapter's preload; and the phases of ``grade_submission`` for a correct
   notebook, cold (a fresh process) and warm (the second notebook of that process).
5. ``--check-determinism``: a small class graded with ``--jobs 1`` and ``--jobs 2`` must give
   the same OUT/tests.csv.

Results: ``benchmarks/results/grading.json`` (and a timestamped copy).
"""
from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from .common import ROOT, load_warning, child_env, fmt, machine, median, setup_process_env, table, write_json

PATTERN = ["correct", "partial", "correct", "untouched", "partial", "correct", "hang", "partial", "correct",
           "json", "correct", "partial", "untouched", "correct", "partial", "exit", "correct", "partial",
           "correct", "correct"]
KINDS = ["correct", "partial", "untouched", "json", "hang", "exit"]
STOCK_ORDER = ["correct", "partial", "untouched", "hang", "exit", "json"]
HANG = "while True:\n    pass\n"
EXIT = "import os; os._exit(1)\n"
STOCK_TIMEOUT = 60
PY = sys.executable


def log(message: str) -> None:
    print(f"[grading] {message}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ the synthetic class

def mutants(chapter: str) -> dict:
    import importlib
    try:
        return importlib.import_module(f"autograder.tests.mutants.{chapter}").MUTANTS
    except (ImportError, AttributeError):
        return {}


def submission(chapter: str, kind: str, rng: random.Random):
    """(notebook or raw text, description of what was done)."""
    import nbformat
    from autograder.submissions import filled, reference, untouched
    if kind == "correct":
        return reference(chapter), {}
    if kind == "untouched":
        return untouched(chapter), {}
    if kind == "partial":
        table_ = mutants(chapter)
        names = sorted(table_)
        if not names:
            return untouched(chapter), {"note": "no mutants: graded as untouched"}
        picks = rng.sample(names, min(len(names), rng.choice([1, 2])))
        replace = {name: table_[name][rng.choice(sorted(table_[name]))] for name in picks}
        chosen = {name: next(k for k, v in table_[name].items() if v == replace[name]) for name in picks}
        return filled(chapter, replace), {"mutants": chosen}
    if kind == "json":
        text = nbformat.writes(reference(chapter))
        return text[: len(text) // 2], {}
    if kind == "hang":
        return filled(chapter, append=[HANG]), {}
    if kind == "exit":
        return filled(chapter, append=[EXIT]), {}
    raise ValueError(kind)


def build_class(folder: Path, chapters: list[str], students: int, seed: int = 0,
                kinds: list[str] | None = None) -> dict:
    """Write the class; returns the manifest {"<student>/<chapter>": {"kind": ..., ...}}."""
    from autograder.submissions import write_class
    notebooks, manifest = {}, {}
    for c_index, chapter in enumerate(chapters):
        for i in range(students):
            student = f"s{i:03d}"
            kind = kinds[i % len(kinds)] if kinds else PATTERN[(i + 7 * c_index) % len(PATTERN)]
            rng = random.Random(f"{seed}-{student}-{chapter}")
            nb, info = submission(chapter, kind, rng)
            notebooks[(student, chapter)] = nb
            manifest[f"{student}/{chapter}"] = {"student": student, "chapter": chapter, "kind": kind, **info}
    write_class(folder, notebooks)
    (folder.parent / f"{folder.name}-manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


# ------------------------------------------------------------------ ours

def run_ours(class_dir: Path, out: Path, jobs: int) -> dict:
    if out.exists():
        shutil.rmtree(out)
    start = time.monotonic()
    proc = subprocess.run([PY, "-m", "autograder", "grade", str(class_dir), str(out), "--jobs", str(jobs)],
                          cwd=ROOT, env=child_env(), capture_output=True, text=True)
    wall = time.monotonic() - start
    result = {"jobs": jobs, "wall_seconds": round(wall, 2), "returncode": proc.returncode}
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
            "seconds": r.get("seconds", 0.0), "status": r["status"], "restarts": r.get("restarts", 0),
            "score": round(sum(c["score"] for c in r["cells"]), 4), "points": points,
            "test_seconds": round(sum(c.get("seconds", 0.0) for c in r["cells"]), 3),
            "problems": len(r.get("problems", [])), "cell_errors": list(r.get("cell_errors", {})),
            **({"problem_texts": r.get("problems", [])} if r["status"] not in ("graded", "limit") else {})}
    result["notebooks"] = per
    result["count"] = len(per)
    result["per_minute"] = round(60 * len(per) / wall, 2) if wall and per else None
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


# ------------------------------------------------------------------ stock nbgrader

STOCK_CONFIG = '''c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "dlcourse"
c.CourseDirectory.root = {root!r}
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.db_url = "sqlite:///{root}/gradebook.db"
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "README.md"]
c.ClearSolutions.code_stub = {{"python": "# YOUR CODE HERE\\nraise NotImplementedError()"}}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.Execute.allow_errors = True
c.Exchange.root = "{root}/exchange"
# timestamps, to split the autograde run per student
c.NbGrader.log_format = "%(asctime)s.%(msecs)03d [%(name)s | %(levelname)s] %(message)s"
'''
STUDENT_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) .*Creating/updating student with ID '([^']+)'")


def stock_sample(manifest: dict, chapter: str, k: int | None) -> list[str]:
    """Students of ``chapter`` to grade with stock nbgrader: all, or K spread over the kinds."""
    entries = sorted((v for v in manifest.values() if v["chapter"] == chapter), key=lambda v: v["student"])
    if k is None or k >= len(entries):
        return [v["student"] for v in entries]
    by_kind = {kind: [v["student"] for v in entries if v["kind"] == kind] for kind in STOCK_ORDER}
    chosen, round_ = [], 0
    while len(chosen) < k:
        for kind in STOCK_ORDER:
            if round_ < len(by_kind[kind]) and len(chosen) < k:
                chosen.append(by_kind[kind][round_])
        round_ += 1
    return sorted(chosen)


def _run_timed(args: list[str], cwd: Path, logfile: Path) -> tuple[float, int, float]:
    start, wall_start = time.monotonic(), time.time()
    with open(logfile, "w") as f:
        proc = subprocess.run(args, cwd=cwd, env=child_env(), stdout=f, stderr=subprocess.STDOUT)
    return time.monotonic() - start, proc.returncode, wall_start


def per_student_seconds(logtext: str, end_wall: float) -> dict[str, float]:
    """Seconds from each 'Creating/updating student' line to the next one (or to the end of the run)."""
    events = []
    for line in logtext.splitlines():
        m = STUDENT_LINE.match(line)
        if m:
            when = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp()
            events.append((when, m.group(2)))
    out = {}
    for i, (when, student) in enumerate(events):
        nxt = events[i + 1][0] if i + 1 < len(events) else end_wall
        out[student] = round(max(nxt - when, 0.0), 2)
    return out


def run_stock(class_dir: Path, manifest: dict, chapters: list[str], sample: int | None, work: Path,
              students: int) -> dict:
    root = work / "stock"
    if root.exists():
        shutil.rmtree(root)
    (root / "source").mkdir(parents=True)
    (root / "nbgrader_config.py").write_text(STOCK_CONFIG.format(root=str(root)))
    nbgrader = [PY, "-m", "nbgrader"]
    result = {"timeout": STOCK_TIMEOUT, "chapters": {}}
    for chapter in chapters:
        shutil.copytree(ROOT / "solutions" / chapter, root / "source" / chapter,
                        ignore=shutil.ignore_patterns("README.md", ".ipynb_checkpoints", "__pycache__"))
        seconds, code, _ = _run_timed(nbgrader + ["generate_assignment", chapter, "--force"], root,
                                      root / f"generate-{chapter}.log")
        entry = {"generate_seconds": round(seconds, 2), "generate_returncode": code}
        if code != 0:
            entry["error"] = (root / f"generate-{chapter}.log").read_text()[-1500:]
            result["chapters"][chapter] = entry
            continue
        chosen = stock_sample(manifest, chapter, sample)
        for student in chosen:
            src = class_dir / student / chapter / f"{chapter}.ipynb"
            dest = root / "submitted" / student / chapter / f"{chapter}.ipynb"
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dest)
        log(f"stock nbgrader: autograde {chapter} for {len(chosen)} students ({', '.join(chosen)})")
        logfile = root / f"autograde-{chapter}.log"
        seconds, code, wall_start = _run_timed(
            nbgrader + ["autograde", chapter, "--force", f"--ExecutePreprocessor.timeout={STOCK_TIMEOUT}"],
            root, logfile)
        per = per_student_seconds(logfile.read_text(), wall_start + seconds)
        graded = [s for s in chosen if (root / "autograded" / s / chapter / f"{chapter}.ipynb").is_file()]
        fixed = max(seconds - sum(per.values()), 0.0) if len(per) == len(chosen) else None
        timed = [per[s] for s in chosen if s in per]
        per_notebook = (sum(timed) / len(timed)) if timed and fixed is not None else seconds / max(len(chosen), 1)
        estimate = (fixed or 0.0) + per_notebook * students
        entry.update({
            "students": chosen, "kinds": {s: manifest[f"{s}/{chapter}"]["kind"] for s in chosen},
            "autograde_seconds": round(seconds, 2), "returncode": code, "graded": len(graded),
            "failed": sorted(set(chosen) - set(graded)), "per_student_seconds": per,
            "fixed_seconds": round(fixed, 2) if fixed is not None else None,
            "per_notebook_seconds": round(per_notebook, 2),
            "extrapolated": len(chosen) < students,
            "class_seconds": round(estimate if len(chosen) < students else seconds, 2)})
        result["chapters"][chapter] = entry
    total = sum(e.get("class_seconds", 0) for e in result["chapters"].values())
    count = students * sum(1 for e in result["chapters"].values() if "class_seconds" in e)
    result["class_seconds"] = round(total, 2)
    result["class_notebooks"] = count
    result["per_minute"] = round(60 * count / total, 2) if total else None
    result["extrapolated"] = any(e.get("extrapolated") for e in result["chapters"].values())
    return result


# ------------------------------------------------------------------ overhead of ours

def sandbox_start_seconds(preload: tuple, repeats: int = 3, cells: list[str] | None = None) -> list[float]:
    """Seconds to start a sandbox (bubblewrap, a fresh interpreter importing ``preload``) and run ``cells``
    in it (default: a trivial cell, which waits for the imports)."""
    from autograder.client import Sandbox
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        box = Sandbox(preload=preload).start()
        try:
            for index, code in enumerate(cells or ["x = 1"]):
                error = box.run_cell(code, f"benchmark cell {index}")
                if error:
                    raise RuntimeError(f"cell {index} failed in the sandbox: {error}")
            times.append(time.perf_counter() - start)
        finally:
            box.close()
    return times


def given_cells(chapter: str) -> list[str]:
    """The prelude and the chapter's given cells (imports, data): what runs before any answer."""
    from autograder import job
    from autograder.reference import code_cells
    return [job.PRELUDE] + [code for role, code in code_cells(chapter) if role == "given"]


def chapter_preload(chapter: str) -> tuple:
    from autograder import job
    from autograder.sanitize import sanitize
    from autograder.submissions import reference
    notebook, _ = sanitize(reference(chapter), reference(chapter))
    return tuple(job._preload(job.sandbox_cells(notebook)))


def breakdown(chapter: str, path: str, repeats: int = 2) -> list[dict]:
    """Phases of grade_submission for one notebook, ``repeats`` times in this process (cold, warm)."""
    from autograder import client, job
    phases: dict[str, float] = defaultdict(float)
    state = {"fresh": False}
    original_start, original_run_cell, original_close = client.Sandbox.start, client.Sandbox.run_cell, client.Sandbox.close
    original_test = job.grade_test_cell

    def start(self, *a, **k):
        t = time.perf_counter()
        try:
            return original_start(self, *a, **k)
        finally:
            state["fresh"] = True
            phases["sandbox start + preload (until the first cell ran)"] += time.perf_counter() - t

    def run_cell(self, *a, **k):
        t = time.perf_counter()
        try:
            return original_run_cell(self, *a, **k)
        finally:
            key = ("sandbox start + preload (until the first cell ran)" if state["fresh"]
                   else "notebook cells (given + student) in the sandbox")
            state["fresh"] = False
            phases[key] += time.perf_counter() - t

    def close(self, *a, **k):
        t = time.perf_counter()
        try:
            return original_close(self, *a, **k)
        finally:
            phases["sandbox teardown"] += time.perf_counter() - t

    def test(*a, **k):
        t = time.perf_counter()
        try:
            return original_test(*a, **k)
        finally:
            phases["test cells (trusted side + calls into the sandbox)"] += time.perf_counter() - t

    def timed(label, function):
        def wrapper(*a, **k):
            t = time.perf_counter()
            try:
                return function(*a, **k)
            finally:
                phases[label] += time.perf_counter() - t
        return wrapper

    from autograder import outputs
    from autograder.course import Chapter
    patched = [(client.Sandbox, "start", start), (client.Sandbox, "run_cell", run_cell),
               (client.Sandbox, "close", close), (job, "grade_test_cell", test),
               (job, "read", timed("chapter + release loaded (nbformat)", job.read)),
               (job, "sanitize", timed("sanitize", job.sanitize)),
               (Chapter, "load", classmethod(timed("chapter + release loaded (nbformat)", Chapter.load.__func__))),
               (outputs, "feedback_html", timed("feedback HTML (nbconvert)", outputs.feedback_html))]
    saved = [(owner, name, owner.__dict__[name]) for owner, name, _ in patched]
    for owner, name, value in patched:
        setattr(owner, name, value)
    runs = []
    try:
        from autograder.classroom import _init_worker
        _init_worker()
        for _ in range(repeats):
            phases.clear()
            t = time.perf_counter()
            result = job.grade_submission({"student": "bench", "assignment": chapter,
                                           "notebook": f"{chapter}.ipynb", "path": path})
            total = time.perf_counter() - t
            named = dict(phases)
            named["other trusted work"] = max(total - sum(named.values()), 0.0)
            runs.append({"total": round(total, 3), "phases": {k: round(v, 3) for k, v in named.items()},
                         "status": result["status"],
                         "score": sum(c["score"] for c in result["cells"]),
                         "points": sum(c["points"] for c in result["cells"]),
                         "slowest_tests": sorted(((c["seconds"], c["grade_id"]) for c in result["cells"]),
                                                 reverse=True)[:3]})
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)
    return runs


def profile_warm(chapter: str, path: str, top: int = 12) -> list[dict]:
    """Where a warm grade_submission spends its time in the trusted process (cProfile, by own time)."""
    import cProfile
    import pstats
    from autograder import job
    task = {"student": "bench", "assignment": chapter, "notebook": f"{chapter}.ipynb", "path": path}
    job.grade_submission(task)
    profiler = cProfile.Profile()
    profiler.enable()
    job.grade_submission(task)
    profiler.disable()
    stats = pstats.Stats(profiler)
    rows = []
    for (filename, line, name), (cc, nc, tt, ct, callers) in stats.stats.items():
        rows.append({"function": f"{Path(filename).name}:{line}({name})", "own": round(tt, 3), "cumulative": round(ct, 3),
                     "calls": nc})
    rows.sort(key=lambda r: -r["cumulative"])
    interesting = [r for r in rows if not r["function"].startswith(("~", "<"))]
    return interesting[:top]


def _breakdown_main() -> None:  # python -c "from benchmarks.grading import _breakdown_main; _breakdown_main()" CH PATH
    chapter, path = sys.argv[1], sys.argv[2]
    runs = breakdown(chapter, path)
    print(json.dumps({"runs": runs, "profile": profile_warm(chapter, path)}))


def measure_overhead(chapters: list[str], work: Path) -> dict:
    from autograder import isolation
    from autograder.submissions import reference, write_class
    t = time.perf_counter()
    reason = isolation.probe()
    out = {"isolation_probe_seconds": round(time.perf_counter() - t, 2),
           "runs_as": "uid 65534 in a bubblewrap sandbox" if reason is None else f"no sandbox ({reason})",
           "chapters": {}}
    log("overhead: sandbox start times")
    out["process_bare_seconds"] = round(median(sandbox_start_seconds(())), 3)
    folder = work / "overhead-class"
    write_class(folder, {("bench", ch): reference(ch) for ch in chapters})
    for chapter in chapters:
        preload = chapter_preload(chapter)
        cells = given_cells(chapter)
        times = sandbox_start_seconds(preload, cells=cells)
        log(f"overhead: {chapter} breakdown (a fresh process grading a correct notebook twice, then profiled)")
        proc = subprocess.run([PY, "-c", "from benchmarks.grading import _breakdown_main; _breakdown_main()",
                               chapter, str(folder / "bench" / chapter / f"{chapter}.ipynb")],
                              cwd=ROOT, env=child_env(), capture_output=True, text=True)
        parsed = {}
        if proc.returncode == 0:
            parsed = json.loads(proc.stdout.strip().splitlines()[-1])
        out["chapters"][chapter] = {"preload": list(preload), "process_given_seconds": round(median(times), 3),
                                    "breakdown": parsed.get("runs", []), "profile": parsed.get("profile", []),
                                    **({"error": proc.stderr[-1500:]} if proc.returncode != 0 else {})}
    return out


# ------------------------------------------------------------------ determinism

def check_determinism(work: Path, chapters: list[str]) -> dict:
    kinds = ["correct", "partial", "partial", "untouched", "json", "exit"]
    folder = work / "determinism-class"
    build_class(folder, chapters, len(kinds), seed=1, kinds=kinds)
    tables = {}
    for jobs in (1, 2):
        log(f"determinism: grading {len(kinds) * len(chapters)} notebooks with --jobs {jobs}")
        run = run_ours(folder, work / f"determinism-out-{jobs}", jobs)
        with open(work / f"determinism-out-{jobs}" / "tests.csv") as f:
            tables[jobs] = sorted(tuple(row) for row in csv.reader(f))
    diff = sorted(set(tables[1]) ^ set(tables[2]))
    return {"notebooks": len(kinds) * len(chapters), "kinds": kinds, "rows": len(tables[1]),
            "identical": not diff, "differences": [list(d) for d in diff[:20]]}


# ------------------------------------------------------------------ report

def report(data: dict) -> None:
    ours, stock = data["ours"], data.get("stock")
    n = ours["count"]
    print(f"\nSynthetic class: {data['students']} students x {len(data['chapters'])} chapters = {n} notebooks "
          f"({', '.join(f'{k} {v}' for k, v in data['kinds'].items())}); built in {data['build_seconds']:.0f} s")
    rows = [[f"ours --jobs {ours['jobs']}", n, fmt(ours["wall_seconds"], 1), fmt(ours["jobs_phase_seconds"], 1),
             fmt(ours["per_minute"], 1), "measured"]]
    if data.get("ours_sequential"):
        seq = data["ours_sequential"]
        rows.append(["ours --jobs 1", seq["count"], fmt(seq["wall_seconds"], 1), fmt(seq["jobs_phase_seconds"], 1),
                     fmt(seq["per_minute"], 1), "measured"])
    if stock:
        sampled = sum(len(e.get("students", [])) for e in stock["chapters"].values())
        rows.append(["stock nbgrader (sequential)", stock["class_notebooks"], fmt(stock["class_seconds"], 1), "-",
                     fmt(stock["per_minute"], 1),
                     f"EXTRAPOLATED from {sampled} notebooks" if stock["extrapolated"] else "measured"])
    print(table(rows, ["grader", "notebooks", "wall s", "jobs phase s", "notebooks/min", ""]))
    print("  wall: the whole command (pool, jobs, gradebook, feedback, CSVs); jobs phase: from its grading.log.")
    if stock and stock["per_minute"] and ours["per_minute"]:
        ratio = ours["per_minute"] / stock["per_minute"]
        print(f"ours / stock throughput: {ratio:.2f}x (target >= 2x on {data['machine']['cpus_usable']} cores)"
              + ("  [stock extrapolated]" if stock["extrapolated"] else ""))
        data["ratio"] = round(ratio, 2)

    print("\nOurs, per chapter and kind of submission (seconds from OUT/results/*/*.json, one worker each)")
    rows = [[v["chapter"], v["kind"], v["count"], fmt(v["mean_seconds"], 1), fmt(v["mean_test_seconds"], 1),
             fmt(100 * v["mean_score_fraction"], 0, "%"), v["restarts"], ",".join(v["statuses"])]
            for v in data["ours_by_kind"].values()]
    print(table(rows, ["chapter", "kind", "n", "s/notebook", "tests s", "score", "restarts", "status"]))
    for key, r in sorted(ours["notebooks"].items()):
        if r.get("problem_texts"):
            print(f"  {key} ({data['manifest'].get(key, {}).get('kind', '?')}): {r['status']}: "
                  + " | ".join(p[:200] for p in r["problem_texts"]))

    if stock:
        print("\nStock nbgrader, per chapter (autograde --ExecutePreprocessor.timeout=60)")
        rows = []
        for chapter, e in stock["chapters"].items():
            if "students" not in e:
                rows.append([chapter, "-", "-", "-", "-", "-", "-", e.get("error", "")[:60]])
                continue
            per = ", ".join(f"{e['kinds'][s]} {e['per_student_seconds'].get(s, '?')}" for s in e["students"])
            rows.append([chapter, len(e["students"]), fmt(e["autograde_seconds"], 1), fmt(e["fixed_seconds"], 1),
                         fmt(e["per_notebook_seconds"], 1), fmt(e["class_seconds"], 1),
                         f"{e['graded']}/{len(e['students'])}", per])
        print(table(rows, ["chapter", "sampled", "autograde s", "fixed s", "s/notebook", "class s (est.)",
                           "graded", "per student: kind s"]))
        if stock["extrapolated"]:
            print("  class s (est.) = fixed start-up + s/notebook x students: EXTRAPOLATED from the sample above.\n"
                  "  Kinds not sampled (often hang/exit/json) are assumed to cost the sample's mean; a hanging\n"
                  "  notebook costs stock >= 60 s, so leaving it out favours stock.")
        same = []
        for chapter, e in stock["chapters"].items():
            for s in e.get("students", []):
                mine = ours["notebooks"].get(f"{s}/{chapter}")
                if mine and s in e["per_student_seconds"]:
                    same.append([chapter, s, e["kinds"][s], fmt(e["per_student_seconds"][s], 1),
                                 fmt(mine["seconds"], 1), "yes" if s not in e["failed"] else "FAILED"])
        if same:
            print("\nSame notebooks, one at a time (latency, not throughput)")
            print(table(same, ["chapter", "student", "kind", "stock s", "ours s", "stock graded"]))

    over = data.get("overhead")
    if over:
        print(f"\nPer-notebook overhead of ours (sandboxes run as {over['runs_as']}; "
              f"the isolation probe took {over['isolation_probe_seconds']:.2f} s, once per grading process)")
        rows = []
        for chapter, e in over["chapters"].items():
            mean = data["ours_by_kind"].get(f"{chapter}/correct", {}).get("mean_seconds")
            warm = e["breakdown"][-1]["total"] if e["breakdown"] else None
            rows.append([chapter, " ".join(e["preload"]) or "-", fmt(over["process_bare_seconds"], 2),
                         fmt(e["process_given_seconds"], 2),
                         fmt(e["breakdown"][0]["total"], 2) if e["breakdown"] else "-", fmt(warm, 2), fmt(mean, 1)])
        print(table(rows, ["chapter", "preload", "own process s", "+preload+given s",
                           "cold nb s", "warm nb s", "class mean s"]))
        print("  own process: a sandbox (bubblewrap, a fresh interpreter), a trivial cell;\n"
              "  +preload+given: the same with the chapter's preload, running the prelude and the given cells;\n"
              "  cold/warm nb: grade_submission of a correct\n"
              "  notebook, first / second in a fresh process; class mean: the correct notebooks of the class run\n"
              "  above (2 workers sharing the cores).")
        for chapter, e in over["chapters"].items():
            for label, run in zip(("cold", "warm"), e["breakdown"]):
                parts = ", ".join(f"{k} {v:.2f}" for k, v in sorted(run["phases"].items(), key=lambda kv: -kv[1]))
                print(f"  {chapter} {label}: {run['total']:.2f} s = {parts}")
            if e["breakdown"]:
                slow = ", ".join(f"{g} {s:.2f}" for s, g in e["breakdown"][-1]["slowest_tests"])
                print(f"    slowest test cells (warm): {slow}")
            if e.get("profile"):
                root = e["profile"][0]["cumulative"]
                print(f"    warm profile (cProfile, inflated; grade_submission {root:.2f} s): " + "; ".join(
                    f"{r['function']} {r['cumulative']:.2f}" for r in e["profile"][1:9]))
            if e.get("error"):
                print(f"  {chapter}: breakdown failed: {e['error'][-300:]}")

    det = data.get("determinism")
    if det:
        verdict = "IDENTICAL" if det["identical"] else f"DIFFERENT ({len(det['differences'])} rows)"
        print(f"\nDeterminism: tests.csv of --jobs 1 vs --jobs 2 on {det['notebooks']} notebooks "
              f"({det['rows']} rows; kinds {', '.join(det['kinds'])}): {verdict}")
        for d in det["differences"][:10]:
            print("  ", d)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.grading", description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=40, help="students per chapter (default 40)")
    parser.add_argument("--chapters", default="", help="comma-separated chapter ids (default: all)")
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
    from autograder.course import chapters as all_chapters
    chapters = all_chapters()
    if args.chapters:
        wanted = [c.strip() for c in args.chapters.split(",") if c.strip()]
        unknown = sorted(set(wanted) - set(chapters))
        if unknown:
            parser.error(f"unknown chapters: {', '.join(unknown)} (known: {', '.join(chapters)})")
        chapters = [c for c in chapters if c in wanted]

    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="bench-grading-"))
    work.mkdir(parents=True, exist_ok=True)
    data = {"machine": machine(), "students": args.students, "chapters": chapters, "workdir": str(work)}
    try:
        log(f"building {args.students} x {len(chapters)} submissions in {work}")
        t = time.monotonic()
        class_dir = work / "class"
        if class_dir.exists():
            shutil.rmtree(class_dir)
        manifest = build_class(class_dir, chapters, args.students, args.seed)
        data["build_seconds"] = round(time.monotonic() - t, 1)
        data["kinds"] = {k: sum(v["kind"] == k for v in manifest.values()) for k in KINDS}
        data["manifest"] = manifest

        log(f"ours: python -m autograder grade --jobs {args.jobs}")
        data["ours"] = run_ours(class_dir, work / "out", args.jobs)
        data["ours_by_kind"] = summarize_ours(data["ours"], manifest)
        if args.sequential:
            log("ours: python -m autograder grade --jobs 1")
            data["ours_sequential"] = run_ours(class_dir, work / "out-sequential", 1)
        if not args.no_stock:
            data["stock"] = run_stock(class_dir, manifest, chapters, args.stock_sample, work, args.students)
        if not args.no_overhead:
            data["overhead"] = measure_overhead(chapters, work)
        if args.check_determinism:
            data["determinism"] = check_determinism(work, chapters)
        data["machine_at_end"] = machine()
        report(data)
        warning = load_warning()
        if warning:
            print(warning)
    finally:
        path = write_json("grading", data)
        print(f"\nresults: {path.relative_to(ROOT)}" + (f"; work folder kept: {work}" if args.keep else ""))
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    failed = data.get("ours", {}).get("returncode", 0) != 0 or (data.get("determinism") or {}).get("identical") is False
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
