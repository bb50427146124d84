"""The grading benchmark's tables and budget lines, printed from its results (``data``)."""
from __future__ import annotations

from ..common import fmt, table

BUDGET_OVERHEAD_SECONDS = 0.3   # median per notebook, per chapter
BUDGET_STOCK_RATIO = 6.0        # ours (all cores) against stock nbgrader, sequential
BUDGET_BARE_RATIO = 1.3         # ours against the same cells run bare


def verdict(ok: bool | None) -> str:
    return "-" if ok is None else ("ok" if ok else "MISSED")


def budgets(data: dict) -> list[str]:
    """One line per budget: measured, budget, ok/MISSED; stored in data["budgets"] too."""
    lines, results = [], {}
    chapters = data.get("per_chapter", {})
    over = {c: e["overhead"] for c, e in chapters.items() if e["overhead"] is not None}
    median_ = data.get("class_overhead")
    if over and median_ is not None:
        worst = max(over, key=over.get)
        results["overhead"] = ok = median_ <= BUDGET_OVERHEAD_SECONDS
        lines.append(f"overhead per notebook (median over the class's {data['ours']['count']} notebooks): "
                     f"{median_:.2f} s, budget <= {BUDGET_OVERHEAD_SECONDS} s: {verdict(ok)}; per chapter "
                     f"{min(over.values()):.2f}-{over[worst]:.2f} s (worst {worst}, of which its checks' own work "
                     f"on the trusted side {chapters[worst].get('trusted_checks') or 0:.2f} s)")
    bare = {c: e["bare_ratio"] for c, e in chapters.items() if e.get("bare_ratio") is not None}
    if bare:
        worst = max(bare, key=bare.get)
        results["bare"] = ok = bare[worst] <= BUDGET_BARE_RATIO
        lines.append(f"ours / bare (correct notebooks, worst chapter {worst}): {bare[worst]:.2f}x, "
                     f"budget <= {BUDGET_BARE_RATIO}x: {verdict(ok)}")
    if data.get("stock_ratio") is not None:
        results["stock"] = ok = data["stock_ratio"] >= BUDGET_STOCK_RATIO
        lines.append(f"stock nbgrader sequential / ours --jobs {data['ours']['jobs']} (whole class, both measured): "
                     f"{data['stock_ratio']:.2f}x, budget >= {BUDGET_STOCK_RATIO}x: {verdict(ok)}")
    if data.get("same_scores"):
        same = all(e["identical"] is not False for e in data["same_scores"].values())
        results["scores"] = same
        compared = sum(e["compared"] for e in data["same_scores"].values())
        lines.append(f"scores on reference and blank work identical to stock's ({compared} test cells): "
                     f"{'yes' if same else 'NO'}")
    data["budgets"] = results
    return lines


def budget_figures(data: dict) -> dict[str, str]:
    """The budgets table's figures (benchmarks.budgets) of this run: what it measured."""
    figures, n = {}, data["ours"]["count"]
    chapters = {c.split("_")[0]: e for c, e in data.get("per_chapter", {}).items()}
    k = f"{len(chapters)} chapters"

    def spread(key, digits, unit):
        values = {c: e[key] for c, e in chapters.items() if e.get(key) is not None}
        low, high = min(values, key=values.get), max(values, key=values.get)
        return f"{values[low]:.{digits}f}{unit} ({low}) to {values[high]:.{digits}f}{unit} ({high})"
    if data.get("class_overhead") is not None:
        figures["grading_overhead"] = (f"{data['class_overhead']:.2f} s ({n} notebooks of {k}); per chapter "
                                       + spread("overhead", 2, " s"))
    if any(e.get("bare_ratio") is not None for e in chapters.values()):
        figures["grading_bare"] = spread("bare_ratio", 2, "×") + f" across {k}"
    if data.get("stock_ratio") is not None:
        stock, prepare = data["stock"], data.get("prepare") or {}
        generate = sum(e.get("generate_seconds") or 0 for e in stock["chapters"].values())
        figures["grading_stock"] = (
            f"{data['stock_ratio']:.2f}× ({n} notebooks of {k}: {data['ours']['wall_seconds']:.1f} s against "
            f"{stock['class_seconds']:.1f} s); per chapter " + spread("stock_ratio", 1, "×")
            + f". Made ahead, in neither figure: ours `prepare` {prepare.get('seconds', 0):.1f} s, "
            f"stock's `generate_assignment` {generate:.1f} s")
    if data.get("same_scores"):
        same = all(e["identical"] is not False for e in data["same_scores"].values())
        compared = sum(e["compared"] for e in data["same_scores"].values())
        figures["grading_scores"] = f"{'identical' if same else 'DIFFERENT'} ({compared} test cells of {k})"
    dask = data.get("dask")
    if dask and dask.get("speedup"):
        walls = {run["workers"]: run["wall_seconds"] for run in dask["runs"]}
        same = "identical to" if dask["identical"] else "DIFFERENT from"
        figures["grading_dask"] = (f"{dask['speedup']:.2f}× ({walls[1]:.1f} s → {walls[2]:.1f} s, {n} notebooks), "
                                   f"`tests.csv` {same} local processes'")
    return figures


def report(data: dict) -> None:
    ours, stock = data["ours"], data.get("stock")
    n = ours["count"]
    print(f"\nSynthetic class: {data['students']} students x {len(data['chapters'])} chapters = {n} notebooks "
          f"({', '.join(f'{k} {v}' for k, v in data['kinds'].items())}); built in {data['build_seconds']:.0f} s")
    rows = [[f"ours --jobs {ours['jobs']}", n, fmt(ours["wall_seconds"], 1), fmt(ours["jobs_phase_seconds"], 1),
             fmt(ours["per_minute"], 1)]]
    if data.get("ours_sequential"):
        seq = data["ours_sequential"]
        rows.append(["ours --jobs 1", seq["count"], fmt(seq["wall_seconds"], 1), fmt(seq["jobs_phase_seconds"], 1),
                     fmt(seq["per_minute"], 1)])
    for run in (data.get("dask") or {}).get("runs", []):
        rows.append([f"ours on Dask, {run['workers']} worker(s)", run["count"], fmt(run["wall_seconds"], 1),
                     fmt(run["jobs_phase_seconds"], 1), fmt(run["per_minute"], 1)])
    if stock:
        rows.append(["stock nbgrader (sequential)", stock["class_notebooks"], fmt(stock["class_seconds"], 1), "-",
                     fmt(stock["per_minute"], 1)])
    print(table(rows, ["grader", "notebooks", "wall s", "jobs phase s", "notebooks/min"]))
    print("  every row measured on the whole class in this run; wall: the whole command (ours: pool, jobs, "
          "gradebook, feedback, CSVs;\n  stock: its autograde runs, one per chapter); jobs phase: from grading.log.")
    prepare = data.get("prepare")
    generate = [e.get("generate_seconds") for e in (stock or {}).get("chapters", {}).values()]
    if prepare:
        print(f"  ahead of grading, not in the wall times: ours `prepare` {prepare['seconds']:.1f} s "
              f"({'nothing kept before' if prepare['cold'] else 'kept from an earlier run'})"
              + (f", stock `generate_assignment` {sum(g or 0 for g in generate):.1f} s" if generate else ""))

    print("\nPer chapter (medians over the chapter's notebooks; seconds)")
    rows = []
    for chapter, e in data["per_chapter"].items():
        same = (data.get("same_scores") or {}).get(chapter)
        rows.append([chapter, e["notebooks"], fmt(e["total"], 2), fmt(e["overhead"], 2),
                     fmt(e.get("trusted_checks"), 2), fmt(e["correct_total"], 2),
                     fmt(e.get("bare_seconds"), 2), fmt(e.get("bare_ratio"), 2, "x"), fmt(e.get("stock_seconds"), 1),
                     fmt(e.get("ours_share_seconds"), 1), fmt(e.get("stock_ratio"), 1, "x"),
                     "-" if same is None or same["identical"] is None
                     else ("yes" if same["identical"] else f"NO ({len(same['differences'])})")])
    print(table(rows, ["chapter", "n", "s/nb", "overhead", "(checks' trusted)", "correct s", "bare s", "ours/bare",
                       "stock s", "ours s", "stock/ours", "same scores"]))
    print("  overhead: a job's wall time minus its notebook cells and its checks' calls in the sandbox; of it,\n"
          "  checks' trusted: the test cells' own work in the grader (oracles, expected values), the calls' transport\n"
          "  (SubmissionResult.timings); correct s: our job on the reference; bare s: the same cells and test\n"
          "  cells in one plain python process (benchmarks/grading/bare.py), alone on the machine, while our jobs\n"
          f"  shared it {ours['jobs']} at a time; stock s: stock nbgrader's autograde of the chapter; ours s: the\n"
          f"  chapter's share of our run (its jobs' seconds / {ours['jobs']} workers); same scores: reference and\n"
          "  blank (untouched) notebooks, cell by cell, ours against stock's gradebook.")
    fixed = (ours["wall_seconds"] - (ours["jobs_phase_seconds"] or 0)) / max(n, 1)
    print(f"  the command's own time outside the jobs (pool, pre-flight, gradebook, outputs): {fixed:.2f} s per "
          "notebook of this class")

    print("\nPhases per chapter (median seconds per notebook, SubmissionResult.timings)")
    phases = ["sandbox_start", "preload", "cells", "checks", "checks_in_sandbox"]
    rows = [[chapter] + [fmt(e["phases"][p], 2) for p in phases] + [fmt(e["total"], 2)]
            for chapter, e in data["per_chapter"].items()]
    print(table(rows, ["chapter", "start", "preload", "cells", "checks", "(in sandbox)", "total"]))

    differences = [d for e in (data.get("same_scores") or {}).values() for d in e["differences"]]
    for line in differences[:20]:
        print(f"  score differs: {line}")
    for key, r in sorted(ours["notebooks"].items()):
        if r.get("problem_texts"):
            print(f"  {key} ({data['manifest'].get(key, {}).get('kind', '?')}): {r['status']}: "
                  + " | ".join(p[:200] for p in r["problem_texts"]))

    dask = data.get("dask")
    if dask:
        runs = {run["workers"]: run for run in dask["runs"]}
        print("\nDask (dask scheduler and each dask worker a process of its own, 1 thread each): "
              + ", ".join(f"{w} worker(s) {r['wall_seconds']:.1f} s" for w, r in runs.items())
              + (f"; speed-up {dask['speedup']:.2f}x" if dask.get("speedup") else "")
              + f"; tests.csv identical to the local run: {'yes' if dask['identical'] else 'NO'}")

    det = data.get("determinism")
    if det:
        result = "IDENTICAL" if det["identical"] else f"DIFFERENT ({len(det['differences'])} rows)"
        print(f"\nDeterminism: tests.csv of --jobs 1 vs --jobs 2 on {det['notebooks']} notebooks "
              f"({det['rows']} rows; kinds {', '.join(det['kinds'])}): {result}")
        for d in det["differences"][:10]:
            print("  ", d)

    print("\nBudgets (issue 28)")
    for line in budgets(data):
        print("  " + line)
