"""Helpers shared by the benchmark scripts: environment, tables, JSON results."""
from __future__ import annotations

import datetime
import json
import os
import platform
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results"
BIN = os.path.dirname(sys.executable)
PY = sys.executable


def log(tag: str, message: str) -> None:
    """A progress line on stderr: ``[tag] message``."""
    print(f"[{tag}] {message}", file=sys.stderr, flush=True)


def child_env(**extra) -> dict:
    """os.environ with the interpreter's bin/ on PATH (nbgrader shells out to alembic) and Agg."""
    env = dict(os.environ)
    if BIN not in env.get("PATH", "").split(os.pathsep):
        env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
    env.setdefault("MPLBACKEND", "Agg")
    env.update(extra)
    return env


def setup_process_env() -> None:
    os.environ.update(child_env())


def machine() -> dict:
    import psutil
    return {"python": sys.version.split()[0], "platform": platform.platform(),
            "cpus": os.cpu_count(), "cpus_usable": len(os.sched_getaffinity(0)),
            "memory_gb": round(psutil.virtual_memory().total / 1024 ** 3, 1),
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "when": datetime.datetime.now().isoformat(timespec="seconds")}


def write_json(name: str, data: dict, stamp: bool = True) -> Path:
    """results/<name>.json, and a timestamped copy unless ``stamp`` is False (a partial result)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=1, default=str))
    if stamp:
        when = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        (RESULTS / f"{name}-{when}.json").write_text(path.read_text())
    return path


def table(rows: list[list], header: list[str]) -> str:
    """A plain-text table; numbers right-aligned."""
    cells = [[str(h) for h in header]] + [["" if v is None else str(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    numeric = [all(_is_number(r[i]) for r in cells[1:] if r[i]) for i in range(len(header))]

    def line(row):
        return "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(row, widths, numeric)).rstrip()
    out = [line(cells[0]), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in cells[1:]]
    return "\n".join(out)


def _is_number(text: str) -> bool:
    try:
        float(text.rstrip("%xs").replace(",", ""))
        return True
    except ValueError:
        return False


def median(values):
    return statistics.median(values) if values else None


def fmt(value, digits=1, unit=""):
    if value is None:
        return "-"
    return f"{value:.{digits}f}{unit}"


def load_warning(cores: int | None = None) -> str | None:
    """A line to print when the machine is busy with other work (timings are then pessimistic)."""
    cores = cores or len(os.sched_getaffinity(0))
    one, five, _ = os.getloadavg()
    if five > 0.75 * cores:
        return (f"note: load average {one:.1f} / {five:.1f} (1 / 5 min) on {cores} cores: other work shares "
                f"the machine, timings are pessimistic")
    return None


def chapters_option(parser) -> None:
    parser.add_argument("--chapters", default="", help="comma-separated chapter ids (default: all)")


def selected_chapters(parser, wanted: str) -> list[str]:
    """The course's chapters, or those of the comma-separated ``wanted`` (an unknown one: a usage error)."""
    from autograder.course import chapters
    known = chapters()
    names = [c.strip() for c in wanted.split(",") if c.strip()]
    unknown = sorted(set(names) - set(known))
    if unknown:
        parser.error(f"unknown chapters: {', '.join(unknown)} (known: {', '.join(known)})")
    return [c for c in known if c in names] if names else known


def print_load_warning() -> None:
    warning = load_warning()
    if warning:
        print(warning)
