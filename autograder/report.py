"""OUT/report.html: how the class did, at a glance, with plots (``templates/report.html.j2``)."""
from __future__ import annotations

import base64
import collections
import io
from pathlib import Path

from dlcourse.vocabulary import not_written

from .feedback import template
from .result import SubmissionResult


def _png(fig) -> str:
    """The figure as base64 PNG data (closed afterwards)."""
    import matplotlib.pyplot as plt
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode()


def hardest_checks(results: list[SubmissionResult], limit: int = 20) -> list[dict]:
    """Hidden checks that fail most, one row per check, counted over the submissions that attempted it:
    a check that failed as "not implemented yet" is counted apart (a blank, not a wrong answer)."""
    rows: dict[tuple, dict] = {}
    for r in results:
        for cell in r.cells:
            for check in cell.checks:
                if not check.hidden:
                    continue
                row = rows.setdefault((r.assignment, cell.grade_id, check.description), {
                    "chapter": r.assignment, "cell": cell.grade_id, "check": check.description, "failed": 0,
                    "attempted": 0, "blank": 0, "messages": collections.Counter()})
                if not check.passed and not_written(check.message):
                    row["blank"] += 1
                    continue
                row["attempted"] += 1
                if not check.passed:
                    row["failed"] += 1
                    row["messages"][(check.message or "")[:160]] += 1
    failing = [row for row in rows.values() if row["failed"]]
    failing.sort(key=lambda row: (-row["failed"] / row["attempted"], -row["failed"], row["chapter"], row["cell"]))
    for row in failing:
        row["message"] = row.pop("messages").most_common(1)[0][0]
    return failing[:limit]


def write_report(out: Path, results: list[SubmissionResult], totals: dict, elapsed: float,
                 submissions: list[dict] = (), run: dict | None = None) -> None:
    """``totals``: (score, max score) per (student, assignment), as the gradebook has them; ``submissions``:
    grades.csv's rows as dicts (hand grades waiting, lateness); ``run``: what the grading run found (notebooks
    not graded, scores changed since the last run, hand grades that could not be kept)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by_assignment = collections.defaultdict(list)
    for (student, assignment), (score, maximum) in totals.items():
        by_assignment[assignment].append(score / maximum if maximum else 0.0)
    unsafe = sorted({str(r.isolation) for r in results if str(r.isolation or "").startswith("none")})
    limited = sorted({str(r.isolation) for r in results if "LIMITED" in str(r.isolation or "")})
    chapters = [{"name": name, "count": len(v), "mean": sum(v) / len(v), "lowest": min(v), "highest": max(v)}
                for name, v in sorted(by_assignment.items())]
    distribution = None
    if by_assignment:
        names = sorted(by_assignment)
        fig, axes = plt.subplots(1, len(names), figsize=(3.2 * len(names), 2.6), squeeze=False)
        for ax, name in zip(axes[0], names):
            ax.hist([100 * v for v in by_assignment[name]], bins=10, range=(0, 100), color="#4477aa")
            ax.set_title(name, fontsize=8)
            ax.set_xlabel("score %")
        distribution = _png(fig)

    passed = collections.defaultdict(lambda: [0, 0])
    for r in results:
        for cell in r.cells:
            key = (r.assignment, cell.grade_id)
            passed[key][0] += cell.full
            passed[key][1] += 1
    pass_rates = None
    if passed:
        keys = sorted(passed)
        fig, ax = plt.subplots(figsize=(7, 0.22 * len(keys) + 0.8))
        ax.barh([f"{a}:{g}" for a, g in keys], [100 * p / n for p, n in (passed[k] for k in keys)], color="#66aa55")
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("% of students with full marks")
        ax.tick_params(axis="y", labelsize=7)
        pass_rates = _png(fig)

    trouble = [{"student": r.student, "assignment": r.assignment, "status": r.status, "restarts": r.restarts,
                "problems": r.problems,
                "stopped_cells": [f"{c.grade_id}: {c.error or ''}" for c in r.cells if c.status != "ok"]}
               for r in results if r.status != "graded" or r.problems or r.restarts]
    run = run or {}
    to_review = [{"student": r.student, "assignment": r.assignment,
                  "cells": [name for name, hand in sorted(r.hand.items()) if hand.answer_changed]}
                 for r in results if any(hand.answer_changed for hand in r.hand.values())]
    page = template("report.html.j2").render(
        unsafe=unsafe, limited=limited, notebooks=len(results), graded=len(totals), elapsed=elapsed, chapters=chapters,
        distribution=distribution, pass_rates=pass_rates, failing=hardest_checks(results), trouble=trouble,
        not_graded=run.get("not_graded") or [], changes=sorted((run.get("changes") or {}).items()),
        lost=run.get("lost") or [], kept=run.get("kept") or [], to_review=to_review,
        pending=[s for s in submissions if int(s["pending_hand_grades"])],
        late=[s for s in submissions if s["late"] == "yes"], dated=any(s["due"] for s in submissions),
        timed=[s for s in submissions if s["submitted_at"]])
    # any code point in a name or message: lone surrogates become \udXXX text, never an error
    (out / "report.html").write_text(page.encode("utf-8", "backslashreplace").decode("utf-8"), encoding="utf-8")
