"""OUT/report.html: how the class did, at a glance, with plots."""
from __future__ import annotations

import base64
import collections
import html
import io
from pathlib import Path


def _png(fig) -> str:
    import matplotlib.pyplot as plt
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return f'<img src="data:image/png;base64,{base64.b64encode(buffer.getvalue()).decode()}">'


def write_report(out: Path, results: list[dict], totals: dict, elapsed: float) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    esc = html.escape
    by_assignment = collections.defaultdict(list)
    for (student, assignment), (score, maximum) in totals.items():
        by_assignment[assignment].append(score / maximum if maximum else 0.0)
    unsafe = sorted({str(r.get("isolation")) for r in results if str(r.get("isolation") or "").startswith("none")})
    parts = [f"<p style='color:#b00;font-weight:bold'>UNSAFE: graded without the operating-system sandbox, "
             f"as asked: {esc('; '.join(unsafe))}. A submission could have read or changed anything its "
             f"grading process could.</p>"] if unsafe else []
    parts += [f"<h1>Grading report</h1><p>{len(results)} notebooks, {len(totals)} graded, "
              f"{elapsed:.1f} s of grading.</p>"]

    rows = "".join(
        f"<tr><td>{esc(name)}</td><td>{len(v)}</td><td>{100 * sum(v) / len(v):.0f}%</td>"
        f"<td>{100 * min(v):.0f}%</td><td>{100 * max(v):.0f}%</td></tr>"
        for name, v in sorted(by_assignment.items()))
    parts.append("<h2>Chapters</h2><table border=1 cellpadding=3><tr><th>chapter</th><th>notebooks</th>"
                 f"<th>mean score</th><th>lowest</th><th>highest</th></tr>{rows}</table>")
    if by_assignment:
        names = sorted(by_assignment)
        fig, axes = plt.subplots(1, len(names), figsize=(3.2 * len(names), 2.6), squeeze=False)
        for ax, name in zip(axes[0], names):
            ax.hist([100 * v for v in by_assignment[name]], bins=10, range=(0, 100), color="#4477aa")
            ax.set_title(name, fontsize=8)
            ax.set_xlabel("score %")
        parts.append("<h2>Score distribution per chapter</h2>" + _png(fig))

    passed = collections.defaultdict(lambda: [0, 0])
    failing = collections.Counter()
    for r in results:
        for cell in r["cells"]:
            key = (r["assignment"], cell["grade_id"])
            passed[key][0] += cell["score"] >= cell["points"] - 1e-9
            passed[key][1] += 1
            for check in cell["checks"]:
                if check["hidden"] and not check["passed"]:
                    failing[(r["assignment"], cell["grade_id"], check["description"],
                             (check["message"] or "")[:160])] += 1
    if passed:
        keys = sorted(passed)
        fig, ax = plt.subplots(figsize=(7, 0.22 * len(keys) + 0.8))
        ax.barh([f"{a}:{g}" for a, g in keys], [100 * p / n for p, n in (passed[k] for k in keys)], color="#66aa55")
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("% of students with full marks")
        ax.tick_params(axis="y", labelsize=7)
        parts.append("<h2>Pass rate per graded cell</h2>" + _png(fig))

    rows = "".join(f"<tr><td>{esc(a)}</td><td>{esc(g)}</td><td>{esc(d)}</td><td>{esc(m)}</td><td>{n}</td></tr>"
                   for (a, g, d, m), n in failing.most_common(20))
    parts.append("<h2>Hidden checks that fail most</h2><table border=1 cellpadding=3><tr><th>chapter</th>"
                 f"<th>cell</th><th>check</th><th>typical message</th><th>students</th></tr>{rows}</table>")

    trouble = [r for r in results if r["status"] != "graded" or r["problems"] or r.get("restarts")]
    rows = "".join(
        f"<tr><td>{esc(r['student'])}</td><td>{esc(r['assignment'])}</td><td>{esc(r['status'])}</td>"
        f"<td>{r.get('restarts', 0)}</td><td>{'<br>'.join(esc(p) for p in r['problems'])}"
        f"{'<br>'.join(esc(c['grade_id'] + ': ' + (c['error'] or '')) for c in r['cells'] if c['status'] != 'ok')}"
        f"</td></tr>" for r in trouble)
    parts.append("<h2>Limits hit, crashes and repaired submissions</h2><table border=1 cellpadding=3><tr>"
                 f"<th>student</th><th>chapter</th><th>status</th><th>restarts</th><th>what happened</th></tr>"
                 f"{rows}</table>")
    page = ("<!doctype html><meta charset=utf-8><title>Grading report</title>"
            "<body style='font-family:sans-serif'>" + "".join(parts) + "</body>")
    # any code point in a name or message: lone surrogates become \udXXX text, never an error
    (out / "report.html").write_text(page.encode("utf-8", "backslashreplace").decode("utf-8"), encoding="utf-8")
