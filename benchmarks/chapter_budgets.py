"""Per chapter: run the solutions notebook top to bottom, and time every widget's updates.

    python -m benchmarks.chapter_budgets                      # every chapter
    python -m benchmarks.chapter_budgets --chapters ch02_universal_approximation,ch04_cnn
    python -m benchmarks.chapter_budgets --no-execute         # widgets only (or --no-widgets)
    python -m benchmarks.chapter_budgets --strict             # exit 1 when a budget is exceeded

1. Execution: ``solutions/<chapter>/<chapter>.ipynb`` runs in a fresh kernel with nbclient
   (cwd: a temporary folder, ``MPLBACKEND=Agg``). Reported: wall time, the slowest cell, cells
   that raised, and the peak memory: the RSS of the kernel and all its children, summed,
   sampled every 50 ms with psutil (shared pages are counted once per process, so this
   errs high).
2. Widgets: the demo cells are run here, in the reference namespace of the chapter
   (``autograder.reference.namespace``), recording every ``dlcourse.widgets.Explorer`` they
   build. Each control is then moved through a few values (sliders: min, middle, max;
   dropdowns and radio buttons: every option; checkboxes: both) and back, and
   ``explorer.last_render_seconds`` (the render function) and ``last_picture_seconds`` (the PNG
   the explorer sends) are recorded after each update: median and worst per widget.
   The first render (at construction, caches cold) is reported separately.

Budgets (solutions/README.md): a chapter under 60 s and 1.5 GB; a widget update under 100 ms
(median). Results: ``benchmarks/results/notebooks.json`` (and a timestamped copy).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import threading
import time
import traceback

from .common import (
    ROOT,
    chapters_option,
    fmt,
    machine,
    median,
    print_load_warning,
    selected_chapters,
    setup_process_env,
    table,
    write_json,
)

BUDGET_SECONDS = 60.0
BUDGET_MB = 1536.0
BUDGET_WIDGET_MS = 100.0
MAX_OPTIONS = 12  # a dropdown with more options is sampled (first, evenly spaced, last)


# ------------------------------------------------------------------ execution

class MemorySampler(threading.Thread):
    """Peak of the summed RSS of this process's descendants (the kernel and its children)."""

    def __init__(self, interval: float = 0.05):
        super().__init__(daemon=True)
        import psutil
        self.psutil = psutil
        self.me = psutil.Process()
        self.interval = interval
        self.peak = 0
        self.samples = 0
        self._halt = threading.Event()

    def run(self):
        psutil = self.psutil
        while not self._halt.is_set():
            total = 0
            try:
                children = self.me.children(recursive=True)
            except psutil.Error:
                children = []
            for child in children:
                try:
                    total += child.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            self.samples += 1
            self._halt.wait(self.interval)

    def stop(self) -> int:
        self._halt.set()
        self.join()
        return self.peak


def _cell_seconds(cell) -> float | None:
    """Execution time of a cell from nbclient's timing metadata."""
    from datetime import datetime
    timing = cell.get("metadata", {}).get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not start or not end:
        return None
    parse = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))  # noqa: E731
    return (parse(end) - parse(start)).total_seconds()


def execute_chapter(chapter: str, timeout: int) -> dict:
    import nbclient

    from autograder.course import read, source_path

    nb = read(source_path(chapter))
    result = {"chapter": chapter, "ok": False}
    sampler = MemorySampler()
    with tempfile.TemporaryDirectory(prefix=f"bench-{chapter}-") as cwd:
        client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                                         record_timing=True, resources={"metadata": {"path": cwd}})
        sampler.start()
        start = time.monotonic()
        try:
            client.execute()
            result["ok"] = True
        except Exception as exc:  # noqa: BLE001 - a timeout or dead kernel is a result too
            result["error"] = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}"
        result["seconds"] = round(time.monotonic() - start, 2)
        result["peak_mb"] = round(sampler.stop() / 1024 ** 2, 1)
        result["memory_samples"] = sampler.samples
    errors, slowest = [], []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                errors.append({"cell": index, "error": f"{out.get('ename')}: {out.get('evalue', '')[:200]}"})
        seconds = _cell_seconds(cell)
        if seconds is not None:
            slowest.append((seconds, index, cell.source.strip().splitlines()[0][:60] if cell.source.strip() else ""))
    slowest.sort(reverse=True)
    result["cell_errors"] = errors
    result["slowest_cells"] = [{"seconds": round(s, 2), "cell": i, "first_line": line} for s, i, line in slowest[:3]]
    return result


# ------------------------------------------------------------------ widgets

def _values_to_try(control) -> list:
    """Values a control is moved through, its current value excluded."""
    current = control.value
    values = []
    options = getattr(control, "_options_values", None)
    if options is not None:
        options = list(options)
        if len(options) > MAX_OPTIONS:
            step = (len(options) - 1) / (MAX_OPTIONS - 1)
            options = [options[round(i * step)] for i in range(MAX_OPTIONS)]
        is_slider = type(control).__name__.startswith("Selection")
        values = [options[0], options[len(options) // 2], options[-1]] if is_slider else options
    elif isinstance(current, bool):
        values = [not current]
    elif isinstance(current, (int, float)) and hasattr(control, "min") and hasattr(control, "max"):
        lo, hi = control.min, control.max
        mid = (lo + hi) / 2
        if isinstance(current, int) and not isinstance(current, bool):
            step = getattr(control, "step", 1) or 1
            mid = lo + int(round((mid - lo) / step)) * step
        values = [lo, mid, hi]
    elif isinstance(current, tuple) and len(current) == 2 and hasattr(control, "min"):
        lo, hi = control.min, control.max
        mid = (lo + hi) / 2 if isinstance(lo, float) else (lo + hi) // 2
        values = [(lo, mid), (mid, hi), (lo, hi)]
    out = []
    for v in values:
        if v != current and v not in out:
            out.append(v)
    return out


def _exercise(explorer) -> dict:
    """Move each control through its values and back; the render times of the updates."""
    times, png, problems, skipped = [], [], [], []

    def record(what):
        text = str(explorer.readout.value)
        from dlcourse.widgets.explorer import is_notice
        if is_notice(text):
            problems.append(f"{what}: {text[:160]}")
        if explorer.last_render_seconds is not None:
            times.append(explorer.last_render_seconds)
        if explorer.last_figure is not None and getattr(explorer, "last_picture_seconds", None) is not None:
            png.append(explorer.last_picture_seconds)

    for name, control in explorer.controls.items():
        values = _values_to_try(control)
        if not values:
            skipped.append(name)
            continue
        original = control.value
        for value in values + [original]:
            before = explorer.render_count
            try:
                control.value = value
            except Exception as exc:  # noqa: BLE001 - a value the control refuses
                problems.append(f"{name}={value!r} refused: {type(exc).__name__}: {exc}")
                continue
            if explorer.render_count > before:
                record(f"{name}={value!r}")
    return {"times": times, "png": png, "problems": problems, "skipped_controls": skipped}


def _factory_name() -> str:
    """The function that called Explorer(...) (the widget factory), as module.function."""
    frame = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module != "dlcourse.widgets.explorer" and frame.f_code.co_name != "__init__":
            return f"{module.rsplit('.', 1)[-1]}.{frame.f_code.co_name}"
        frame = frame.f_back
    return "?"


def widget_chapter(chapter: str) -> dict:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from IPython.core.inputtransformer2 import TransformerManager

    from autograder.course import Chapter
    from autograder.reference import namespace
    from dlcourse.widgets import explorer as explorer_module

    transform = TransformerManager().transform_cell
    result = {"chapter": chapter, "widgets": [], "demo_cells": [], "error": None}
    created: list[tuple[str, object, float]] = []
    original_init = explorer_module.Explorer.__init__

    def recording_init(self, *args, **kwargs):
        factory = _factory_name()
        start = time.perf_counter()
        original_init(self, *args, **kwargs)
        created.append((factory, self, time.perf_counter() - start))

    try:
        ns = namespace(chapter)
    except Exception as exc:  # noqa: BLE001
        result["error"] = f"reference namespace: {type(exc).__name__}: {exc}"
        return result
    demo_cells = [(i, c) for i, c in enumerate(Chapter.load(chapter).source.cells)
                  if c.cell_type == "code" and "demo" in c.get("metadata", {}).get("tags", [])]
    explorer_module.Explorer.__init__ = recording_init
    try:
        for index, cell in demo_cells:
            start = time.perf_counter()
            first = len(created)
            entry = {"cell": index, "error": None}
            try:
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    value = eval_or_exec(transform(cell.source), ns, f"<{chapter} demo cell {index}>")
                if isinstance(value, explorer_module.Explorer) and all(value is not c[1] for c in created):
                    created.append(("?", value, float("nan")))
            except Exception as exc:  # noqa: BLE001 - report it, keep going
                entry["error"] = f"{type(exc).__name__}: {exc}"[:300]
            entry["seconds"] = round(time.perf_counter() - start, 3)
            entry["explorers"] = len(created) - first
            result["demo_cells"].append(entry)
            plt.close("all")
    finally:
        explorer_module.Explorer.__init__ = original_init

    counts: dict[str, int] = {}
    for factory, explorer, build_seconds in created:
        counts[factory] = counts.get(factory, 0) + 1
        name = factory if counts[factory] == 1 else f"{factory}#{counts[factory]}"
        first_render = explorer.last_render_seconds
        with contextlib.redirect_stdout(io.StringIO()):
            run = _exercise(explorer)
        plt.close("all")
        times = run["times"]
        result["widgets"].append({
            "widget": name, "controls": len(explorer.controls), "updates": len(times),
            "build_ms": round(build_seconds * 1000, 1) if build_seconds == build_seconds else None,
            "first_render_ms": round(first_render * 1000, 1) if first_render is not None else None,
            "median_ms": round(median(times) * 1000, 1) if times else None,
            "worst_ms": round(max(times) * 1000, 1) if times else None,
            "picture_median_ms": round(median(run["png"]) * 1000, 1) if run["png"] else None,
            "problems": run["problems"], "skipped_controls": run["skipped_controls"],
        })
    return result


def eval_or_exec(source: str, ns: dict, filename: str):
    """Run a cell like IPython: statements, then the value of a trailing expression."""
    import ast
    tree = ast.parse(source, filename)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, filename, "exec"), ns)
    if last is not None:
        return eval(compile(last, filename, "eval"), ns)
    return None


# ------------------------------------------------------------------ report

def flags_for(execution: dict | None, widgets: dict | None) -> list[str]:
    flags = []
    if execution:
        if not execution.get("ok"):
            flags.append(f"execution failed: {execution.get('error')}")
        if execution.get("seconds", 0) > BUDGET_SECONDS:
            flags.append(f"time {execution['seconds']:.1f} s > {BUDGET_SECONDS:.0f} s")
        if execution.get("peak_mb", 0) > BUDGET_MB:
            flags.append(f"memory {execution['peak_mb']:.0f} MB > {BUDGET_MB:.0f} MB")
        if execution.get("cell_errors"):
            flags.append(f"{len(execution['cell_errors'])} cell(s) raised, first: cell "
                         f"{execution['cell_errors'][0]['cell']} {execution['cell_errors'][0]['error'][:100]}")
    if widgets:
        if widgets.get("error"):
            flags.append(widgets["error"])
        for cell in widgets.get("demo_cells", []):
            if cell["error"]:
                flags.append(f"demo cell {cell['cell']} raised here: {cell['error'][:120]}")
        for w in widgets.get("widgets", []):
            if w["median_ms"] is not None and w["median_ms"] > BUDGET_WIDGET_MS:
                flags.append(f"{w['widget']}: median update {w['median_ms']:.0f} ms > {BUDGET_WIDGET_MS:.0f} ms")
            for problem in w["problems"][:2]:
                flags.append(f"{w['widget']}: {problem}")
    return flags


def print_report(results: list[dict]) -> None:
    rows = []
    for r in results:
        ex, wd = r.get("execution") or {}, r.get("widgets") or {}
        slow = ex.get("slowest_cells") or [{}]
        status = "ok"
        if r["flags"]:
            status = "OVER BUDGET" if any(" > " in f for f in r["flags"]) else "see flags"
        rows.append([r["chapter"], fmt(ex.get("seconds"), 1), fmt(ex.get("peak_mb"), 0),
                     f"{slow[0].get('seconds', '-')} (cell {slow[0].get('cell', '-')})" if ex else "-",
                     len(ex.get("cell_errors", [])) if ex else "-", len(wd.get("widgets", [])) if wd else "-",
                     status])
    print("\nExecution of solutions/<chapter>/<chapter>.ipynb in a fresh kernel "
          f"(budgets: {BUDGET_SECONDS:.0f} s, {BUDGET_MB:.0f} MB)")
    print(table(rows, ["chapter", "time s", "peak MB", "slowest cell s", "errors", "widgets", "status"]))

    rows = []
    for r in results:
        for w in (r.get("widgets") or {}).get("widgets", []):
            over = w["median_ms"] is not None and w["median_ms"] > BUDGET_WIDGET_MS
            rows.append([r["chapter"], w["widget"], w["controls"], w["updates"], fmt(w["first_render_ms"], 1),
                         fmt(w["median_ms"], 1), fmt(w["worst_ms"], 1), fmt(w.get("picture_median_ms"), 1),
                         "OVER" if over else ("problems" if w["problems"] else "ok")])
    if rows:
        print(f"\nWidget update latency (explorer.last_render_seconds; budget: median {BUDGET_WIDGET_MS:.0f} ms)")
        print(table(rows, ["chapter", "widget", "controls", "updates", "first ms", "median ms", "worst ms",
                           "+picture ms", "status"]))
        print("  first: the render at construction; median/worst: the updates after moving each control\n"
              "  (the render function alone, a diagnostic); +picture: drawing the figure and encoding it as\n"
              "  the PNG the explorer sends (explorer.last_picture_seconds). What the student waits for,\n"
              "  end to end in a browser: python -m benchmarks.widget_latency.")
    flagged = [(r["chapter"], f) for r in results for f in r["flags"]]
    if flagged:
        print("\nFlags:")
        for chapter, flag in flagged:
            print(f"  {chapter}: {flag}")
    else:
        print("\nNo budget exceeded.")


def budget_figures(results: list[dict], every: list[str]) -> dict[str, str]:
    """The budgets table's figures (benchmarks.budgets) of the chapters executed in this run."""
    ran = [(r["chapter"].split("_")[0], r["execution"]) for r in results
           if r.get("execution") and r["execution"].get("seconds") is not None]
    if not ran:
        return {}
    which = "" if len(ran) == len(every) else f"; {len(ran)} chapters: {', '.join(c for c, _ in ran)}"
    failed = [c for c, e in ran if not e.get("ok") or e.get("cell_errors")]
    which += f"; errors in {', '.join(failed)}" if failed else ""
    seconds = sorted(ran, key=lambda c: -c[1]["seconds"])
    peak = max(ran, key=lambda c: c[1]["peak_mb"])
    longest = ", ".join(f"{c} {e['seconds']:.0f} s" for c, e in seconds[:3])
    shortest, slowest = seconds[-1][1]["seconds"], seconds[0][1]["seconds"]
    return {"chapter_seconds": f"{shortest:.0f}–{slowest:.0f} s ({longest} the longest)" + which,
            "chapter_peak_mb": f"at most {peak[1]['peak_mb']:.0f} MB ({peak[0]})" + which}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.chapter_budgets", description=__doc__.split("\n")[0])
    chapters_option(parser)
    parser.add_argument("--no-execute", action="store_true", help="skip the nbclient runs")
    parser.add_argument("--no-widgets", action="store_true", help="skip the widget latencies")
    parser.add_argument("--timeout", type=int, default=600, help="nbclient timeout per cell (s)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a budget is exceeded")
    args = parser.parse_args(argv)

    setup_process_env()
    sys.path.insert(0, str(ROOT))
    selected = selected_chapters(parser, args.chapters)

    start_machine = machine()
    results = []
    for chapter in selected:
        entry = {"chapter": chapter, "execution": None, "widgets": None}
        if not args.no_execute:
            print(f"[notebooks] executing {chapter} ...", file=sys.stderr, flush=True)
            try:
                entry["execution"] = execute_chapter(chapter, args.timeout)
            except Exception as exc:  # noqa: BLE001
                entry["execution"] = {"chapter": chapter, "ok": False, "error": f"{type(exc).__name__}: {exc}",
                                      "traceback": traceback.format_exc()}
        if not args.no_widgets:
            print(f"[notebooks] widgets of {chapter} ...", file=sys.stderr, flush=True)
            try:
                entry["widgets"] = widget_chapter(chapter)
            except Exception as exc:  # noqa: BLE001
                entry["widgets"] = {"chapter": chapter, "widgets": [], "demo_cells": [],
                                    "error": f"{type(exc).__name__}: {exc}"}
        entry["flags"] = flags_for(entry["execution"], entry["widgets"])
        results.append(entry)

    print_report(results)
    print_load_warning()
    path = write_json("notebooks", {"machine": machine(), "machine_at_start": start_machine, "budgets": {
        "chapter_seconds": BUDGET_SECONDS, "chapter_mb": BUDGET_MB, "widget_median_ms": BUDGET_WIDGET_MS},
        "chapters": results})
    print(f"\nresults: {path.relative_to(ROOT)}")
    from . import budgets
    budgets.record("chapter_budgets", budget_figures(results, selected_chapters(parser, "")), argv)
    return 1 if args.strict and any(r["flags"] for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
