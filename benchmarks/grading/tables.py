"""The grading benchmark's tables, printed from its results."""
from __future__ import annotations

from ..common import fmt, table


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

