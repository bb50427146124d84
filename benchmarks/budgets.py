"""The budgets table, docs/budgets.md, rendered from the figures the benchmarks last measured.

    python -m benchmarks.budgets          # write docs/budgets.md from benchmarks/measured/*.json

Each benchmark of ``make benchmark`` ends with ``record(<benchmark>, {row: measured text})``: its
figures, with the date and the command that measured them, go to ``benchmarks/measured/<benchmark>.json``
(committed; one entry per row, so a run replaces the rows it measured and keeps the others), and the
table is rendered again. An entry copied from an older record says so in ``source`` until a run
replaces it. ``tests/test_budgets_table.py`` checks the table against these files.
"""
from __future__ import annotations

import datetime
import json
import os
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "benchmarks" / "measured"
DOC = ROOT / "docs" / "budgets.md"

# (row, what a student or an instructor waits for, budget, the benchmark whose file holds its figures)
ROWS = [
    ("widget_median", "a widget's update after a control moves, in the browser (median per widget, 2 cores)",
     "≤ 100 ms", "widget_latency"),
    ("widget_worst", "the same, worst move", "≤ 300 ms", "widget_latency"),
    ("widget_median_1cpu", "the same on 1 CPU (like Binder), median", "≤ 200 ms", "widget_latency"),
    ("widget_first", "a widget's first picture", "≤ 1 s", "widget_latency"),
    ("chapter_seconds", "a chapter's reference notebook, top to bottom (fresh kernel)", "≤ 60 s", "chapter_budgets"),
    ("chapter_peak_mb", "its peak memory (kernel and children)", "≤ 1536 MB", "chapter_budgets"),
    ("binder_seconds", "each chapter on Binder (1 CPU, 2 GB)", "≤ 60 s", "binder"),
    ("grading_overhead", "a notebook's grading overhead: its job's wall time minus its cells and its checks' calls "
     "in the sandbox (median over the class's notebooks)", "≤ 0.3 s", "grading"),
    ("grading_bare", "our job on a reference notebook against the same cells and test cells run bare in one plain "
     "`python`", "≤ 1.3×", "grading"),
    ("grading_stock", "the class with our grader (2 workers) against stock nbgrader, sequential, both measured on "
     "the whole class", "≥ 6×", "grading"),
    ("grading_scores", "scores on reference and blank work: ours and stock nbgrader's", "identical", "grading"),
    ("grading_dask", "the class on a Dask cluster (`dask scheduler`, `dask worker` processes), 2 workers against 1",
     "reported", "grading"),
    ("make_test", "`make test` on 2 cores", "< 25 min", "make_test"),
    ("large_class_seconds", "a large class of one chapter (`python -m autograder grade`, 2 workers): wall time per "
     "notebook, smallest class to largest", "flat (ratio reported)", "large_class"),
    ("large_class_memory", "its peak memory: RSS summed over the grading process tree (command, workers, sandboxes)",
     "flat (ratio reported)", "large_class"),
    ("large_class_command_memory", "the `grade` command's own peak RSS (it holds every result)",
     "reported", "large_class"),
    ("large_class_gradebook", "the gradebook, `OUT/gradebook.db`", "reported", "large_class"),
    ("large_class_feedback", "`python -m autograder feedback OUT` on the class", "reported", "large_class"),
    ("large_class_regrade", "a re-grade of the same class into the same OUT, per notebook", "reported",
     "large_class"),
]

# The large-class table (issue 40): these rows' values by class size, and the largest against the smallest
LARGE_CLASS = [("large_class_seconds", "grading, per notebook"), ("large_class_memory", "peak memory, process tree"),
               ("large_class_command_memory", "peak memory, `grade` command"),
               ("large_class_gradebook", "gradebook.db"), ("large_class_feedback", "`feedback OUT`"),
               ("large_class_regrade", "re-grade into the same OUT, per notebook")]
RATIO_OF = {"seconds_per_notebook": "per notebook", "peak_tree_rss": "peak", "peak_command_rss": "peak",
            "gradebook_bytes_per_notebook": "per notebook", "feedback_seconds_per_notebook": "per notebook",
            "regrade_seconds_per_notebook": "per notebook"}

HEADER = """\
# Budgets

What a student or an instructor waits for, and the latest measured numbers. This page is generated:
each benchmark of `make benchmark` (`benchmarks/chapter_budgets.py`, `benchmarks/grading/`,
`benchmarks/widget_latency.py`, `benchmarks/binder.py`) writes the figures it measured, with the date
and the command, to `benchmarks/measured/<benchmark>.json` and renders this page again
(`python -m benchmarks.budgets` renders it alone). Don't edit it by hand. A row whose figures were
copied from an older record says so ("from the README, <date>") until a run replaces them; the
`make test` row is written by hand into `benchmarks/measured/make_test.json` after a timed run. Each
benchmark also prints its full tables and writes its raw results to `benchmarks/results/` (not
committed).

| what | budget | latest measured | measured by, when |
|---|---|---|---|
"""

FOOTER = """
How the widget numbers are measured, how they were reached (live figures drawn in layers, JupyterLab's
busy favicon off, what was tried and not kept) and the earlier runs: [widget-latency.md](widget-latency.md).
"""


def measured_figures() -> dict[str, dict]:
    """Every benchmark's figures: {benchmark: {row: {"measured", "command", "when", ...}}}."""
    return {path.stem: json.loads(path.read_text()) for path in sorted(MEASURED.glob("*.json"))}


def how(entry: dict) -> str:
    text = f"`{entry['command']}`, {entry['when']}"
    if entry.get("conditions"):
        text += f" ({entry['conditions']})"
    if entry.get("source"):
        text += f"; from the {entry['source']}"
    return text


def large_class_table(entries: dict) -> str:
    """The large-class section: each measure by class size, and the largest class against the smallest."""
    details = [(label, entries.get(row) or {}) for row, label in LARGE_CLASS]
    sizes = sorted({int(n) for _, e in details for n in e.get("by_size", {})})
    if not sizes:
        return ""
    first = next(e for _, e in details if e.get("by_size"))
    lines = ["", "## A large class", "",
             f"One chapter's class graded at {', '.join(map(str, sizes))} notebooks "
             f"(`{first['command']}`, {first['when']}" + (f"; {first['conditions']}" if first.get("conditions") else "")
             + "). Flat means a ratio near 1 from the smallest class to the largest.", "",
             "| measure | " + " | ".join(f"{n} notebooks" for n in sizes) + f" | {sizes[-1]} / {sizes[0]} |",
             "|---|" + "---|" * (len(sizes) + 1)]
    for label, e in details:
        values = e.get("by_size", {})
        unit = f" {e['unit']}" if e.get("unit") else ""
        cells = [f"{values[str(n)]}{unit}" if values.get(str(n)) is not None else "–" for n in sizes]
        ratio = f"×{e['ratio']} ({RATIO_OF.get(e.get('ratio_of'), '')})" if e.get("ratio") is not None else "–"
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {ratio} |")
    return "\n".join(lines) + "\n"


def render(measured: dict[str, dict] | None = None) -> str:
    measured = measured_figures() if measured is None else measured
    lines, previous = [], None
    for row, what, budget, benchmark in ROWS:
        entry = measured.get(benchmark, {}).get(row)
        if entry is None:
            lines.append(f"| {what} | {budget} | not measured yet | `{benchmark}` |")
            previous = None
            continue
        text = how(entry)
        lines.append(f"| {what} | {budget} | {entry['measured']} | {'same run' if text == previous else text} |")
        previous = text
    return HEADER + "\n".join(lines) + "\n" + large_class_table(measured.get("large_class", {})) + FOOTER


def write() -> Path:
    DOC.write_text(render())
    return DOC


def record(benchmark: str, figures: dict[str, str], argv: list[str] | None = None, conditions: str = "",
           details: dict[str, dict] | None = None, module: str | None = None) -> Path | None:
    """``figures`` ({row: measured text}) as measured now by ``python -m benchmarks.<module or benchmark> <argv>``
    (default: this process's arguments), each row with its ``details`` (extra fields) if any; then
    docs/budgets.md anew."""
    if not figures:
        return None
    known = {row for row, *_ in ROWS}
    unknown = sorted(set(figures) - known)
    if unknown:
        raise ValueError(f"not rows of the budgets table: {', '.join(unknown)}")
    path = MEASURED / f"{benchmark}.json"
    entries = json.loads(path.read_text()) if path.exists() else {}
    argv = sys.argv[1:] if argv is None else argv
    command = " ".join(["python -m benchmarks." + (module or benchmark)] + [shlex.quote(a) for a in argv])
    when = datetime.datetime.now().strftime("%-d %b %Y %H:%M")
    for row, text in figures.items():
        entries[row] = {"measured": text, "command": command, "when": when, "conditions": conditions or machine_load(),
                        **(details or {}).get(row, {})}
    MEASURED.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entries, indent=1, ensure_ascii=False) + "\n")
    write()
    print(f"budgets: {path}, {DOC}")
    return path


def machine_load() -> str:
    """How busy the machine was: the load average over the last 5 minutes, and the cores."""
    return f"load average {os.getloadavg()[1]:.1f}, {len(os.sched_getaffinity(0))} cores"


if __name__ == "__main__":
    print(write())
