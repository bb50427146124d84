"""Per-notebook overhead of ours: sandbox start times, the phases of ``grade_submission``, a profile."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from ..common import PY, ROOT, child_env, log, median

BREAKDOWN = "from benchmarks.grading.overhead import breakdown_main; breakdown_main()"

def sandbox_start_seconds(preload: tuple, repeats: int = 3, cells: list[str] | None = None) -> list[float]:
    """Seconds to start a sandbox (bubblewrap, a fresh interpreter importing ``preload``) and run ``cells``
    in it (default: a trivial cell, which waits for the imports)."""
    from autograder.sandbox.client import Sandbox
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
    from autograder import job
    from autograder.sandbox import client
    phases: dict[str, float] = defaultdict(float)
    state = {"fresh": False}
    Sandbox = client.Sandbox
    original_start, original_run_cell, original_close = Sandbox.start, Sandbox.run_cell, Sandbox.close
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
                                           "notebook": f"{chapter}.ipynb", "path": path}).to_json()
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
        rows.append({"function": f"{Path(filename).name}:{line}({name})", "own": round(tt, 3),
                     "cumulative": round(ct, 3), "calls": nc})
    rows.sort(key=lambda r: -r["cumulative"])
    interesting = [r for r in rows if not r["function"].startswith(("~", "<"))]
    return interesting[:top]


def breakdown_main() -> None:  # in a fresh process: python -c "<BREAKDOWN>" CHAPTER NOTEBOOK
    chapter, path = sys.argv[1], sys.argv[2]
    runs = breakdown(chapter, path)
    print(json.dumps({"runs": runs, "profile": profile_warm(chapter, path)}))


def measure_overhead(chapters: list[str], work: Path) -> dict:
    from autograder.sandbox import isolation
    from autograder.submissions import reference, write_class
    t = time.perf_counter()
    reason = isolation.probe()
    out = {"isolation_probe_seconds": round(time.perf_counter() - t, 2),
           "runs_as": "uid 65534 in a bubblewrap sandbox" if reason is None else f"no sandbox ({reason})",
           "chapters": {}}
    log("grading", "overhead: sandbox start times")
    out["process_bare_seconds"] = round(median(sandbox_start_seconds(())), 3)
    folder = work / "overhead-class"
    write_class(folder, {("bench", ch): reference(ch) for ch in chapters})
    for chapter in chapters:
        preload = chapter_preload(chapter)
        cells = given_cells(chapter)
        times = sandbox_start_seconds(preload, cells=cells)
        log("grading", f"overhead: {chapter} breakdown "
                       "(a fresh process grading a correct notebook twice, then profiled)")
        proc = subprocess.run([PY, "-c", BREAKDOWN,
                               chapter, str(folder / "bench" / chapter / f"{chapter}.ipynb")],
                              cwd=ROOT, env=child_env(), capture_output=True, text=True)
        parsed = {}
        if proc.returncode == 0:
            parsed = json.loads(proc.stdout.strip().splitlines()[-1])
        out["chapters"][chapter] = {"preload": list(preload), "process_given_seconds": round(median(times), 3),
                                    "breakdown": parsed.get("runs", []), "profile": parsed.get("profile", []),
                                    **({"error": proc.stderr[-1500:]} if proc.returncode != 0 else {})}
    return out

