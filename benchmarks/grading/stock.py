"""Stock nbgrader, sequential, on the same files (``generate_assignment`` then ``autograde``)."""
from __future__ import annotations

import datetime
import re
import shutil
import subprocess
import time
from pathlib import Path

from ..common import PY, ROOT, child_env, log

STOCK_ORDER = ["correct", "partial", "untouched", "hang", "exit", "json"]
STOCK_TIMEOUT = 60
# The course's own settings (autograder/nbgrader_settings.py), with stock nbgrader's in-kernel autograde.
STOCK_CONFIG = '''import sys
sys.path.insert(0, {repo!r})
from autograder.nbgrader_settings import configure  # noqa: E402
c = get_config()  # noqa: F821
configure(c, {root!r}, source="source")
c.Exchange.root = {exchange!r}
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
    (root / "nbgrader_config.py").write_text(STOCK_CONFIG.format(repo=str(ROOT), root=str(root),
                                                                 exchange=str(root / "exchange")))
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
        log("grading", f"stock nbgrader: autograde {chapter} for {len(chosen)} students ({', '.join(chosen)})")
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

