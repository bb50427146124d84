"""Stock nbgrader, sequential, on the same files (``generate_assignment`` then ``autograde``), every notebook."""
from __future__ import annotations

import datetime
import re
import shutil
import subprocess
import time
from pathlib import Path

from ..common import PY, ROOT, child_env, log

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


def run_stock(class_dir: Path, manifest: dict, chapters: list[str], work: Path) -> dict:
    """Every submission of the class, chapter by chapter, one ``nbgrader autograde`` each: measured, never
    extrapolated. Per chapter: its seconds, each student's (from nbgrader's timestamped log), and the
    autograded score of every test cell (``scores``: {student: {grade_id: score}}) from its gradebook."""
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
        students = sorted(v["student"] for v in manifest.values() if v["chapter"] == chapter)
        for student in students:
            src = class_dir / student / chapter / f"{chapter}.ipynb"
            dest = root / "submitted" / student / chapter / f"{chapter}.ipynb"
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dest)
        log("grading", f"stock nbgrader: autograde {chapter} for {len(students)} students")
        logfile = root / f"autograde-{chapter}.log"
        seconds, code, wall_start = _run_timed(
            nbgrader + ["autograde", chapter, "--force", f"--ExecutePreprocessor.timeout={STOCK_TIMEOUT}"],
            root, logfile)
        graded = [s for s in students if (root / "autograded" / s / chapter / f"{chapter}.ipynb").is_file()]
        entry.update({
            "students": len(students), "autograde_seconds": round(seconds, 2), "returncode": code,
            "graded": len(graded), "failed": sorted(set(students) - set(graded)),
            "per_student_seconds": per_student_seconds(logfile.read_text(), wall_start + seconds),
            "scores": gradebook_scores(root, chapter, graded)})
        result["chapters"][chapter] = entry
    measured = [e for e in result["chapters"].values() if "autograde_seconds" in e]
    result["class_seconds"] = round(sum(e["autograde_seconds"] for e in measured), 2)
    result["class_notebooks"] = sum(e["students"] for e in measured)
    result["per_minute"] = (round(60 * result["class_notebooks"] / result["class_seconds"], 2)
                            if result["class_seconds"] else None)
    return result


def gradebook_scores(root: Path, chapter: str, students: list[str]) -> dict:
    """{student: {grade_id: autograded score}} of the test cells, from stock nbgrader's gradebook."""
    from nbgrader.api import Gradebook
    scores = {}
    with Gradebook("sqlite:///" + str(root / "gradebook.db")) as gradebook:
        for student in students:
            try:
                notebook = gradebook.find_submission_notebook(chapter, chapter, student)
            except Exception:  # noqa: BLE001 - nbgrader's MissingEntry: not in the gradebook
                continue
            scores[student] = {grade.name: grade.auto_score for grade in notebook.grades
                               if grade.cell.cell_type == "code" and grade.auto_score is not None}
    return scores


def compare_scores(ours: dict, stock: dict, manifest: dict, kinds=("correct", "untouched")) -> dict:
    """Per chapter: the test cells of the ``kinds`` submissions whose score differs between ours and stock."""
    out = {}
    for chapter, entry in stock["chapters"].items():
        compared, differences = 0, []
        for key, info in sorted(manifest.items()):
            if info["chapter"] != chapter or info["kind"] not in kinds or key not in ours["notebooks"]:
                continue
            theirs = entry.get("scores", {}).get(info["student"], {})
            for grade_id, score in ours["notebooks"][key]["cells"].items():
                compared += 1
                other = theirs.get(grade_id)
                if other is None or abs(other - score) > 1e-6:
                    differences.append(f"{info['student']} ({info['kind']}) {grade_id}: ours {score}, stock {other}")
        # nothing to compare (no reference or blank notebook of the chapter in a small class): no verdict
        out[chapter] = {"compared": compared, "differences": differences,
                        "identical": (not differences) if compared else None}
    return out
