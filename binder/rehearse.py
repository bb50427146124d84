"""Rehearse Binder here: build its environment from binder/ alone, then run every chapter under its limits.

    python3.11 binder/rehearse.py                      # a fresh virtualenv in /tmp/binder-rehearsal
    python3.11 binder/rehearse.py --reuse              # keep an environment already built there
    python3.11 binder/rehearse.py --chapters ch01_perceptron --json /tmp/binder.json
    python3.11 binder/rehearse.py --wheels /opt/wheels  # torch's +cpu wheel from a folder, not its index

1. A clean virtualenv gets ``binder/requirements.txt`` only (as repo2docker does: pip, CPU torch),
   then ``binder/postBuild`` runs from the repository root (installs the course package, builds
   matplotlib's font cache, turns the instructor extensions off).
2. The extensions are what a learner should see: nbgrader's formgrader, course list and
   create-assignment off (JupyterLab plugins disabled and locked, server extensions disabled),
   the assignment list and validate on.
3. Every chapter's notebook runs top to bottom in that environment through ``binder/start``
   (one thread for BLAS and torch), pinned to one CPU (``taskset -c 0``) with 2 GB of address
   space (``prlimit --as``: stricter than Binder's 2 GB of resident memory). Reported per chapter:
   wall time, the peak resident memory of the largest process (the kernel), and whether it ran clean.

Exit status 0 when the environment was built, the extensions are right and every chapter ran within
the limits and the per-chapter budget (60 s on Binder's one CPU).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"
MEMORY_BYTES = 2 * 1024 ** 3
BUDGET_SECONDS = 60.0
LEARNER_OFF = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list", "@jupyter/nbgrader:create-assignment",
               "nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list")
LEARNER_ON = ("@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:validate-assignment",
              "nbgrader.server_extensions.assignment_list", "nbgrader.server_extensions.validate_assignment")


def requirements(wheels: str) -> Path:
    """binder/requirements.txt; with ``wheels``, its PyTorch index replaced by that folder of wheels
    (where download.pytorch.org cannot be reached: the same pinned ``+cpu`` wheel, from a local copy)."""
    if not wheels:
        return BINDER / "requirements.txt"
    lines = [f"--find-links {Path(wheels).resolve()}" if line.startswith("--extra-index-url") else line
             for line in (BINDER / "requirements.txt").read_text().splitlines()]
    path = Path(tempfile.mkdtemp(prefix="binder-req-")) / "requirements.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def build(venv: Path, reuse: bool, wheels: str = "") -> float:
    started = time.monotonic()
    if not (reuse and (venv / "bin" / "jupyter").exists()):
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--disable-pip-version-check", "-q",
                        "-r", str(requirements(wheels))], check=True, cwd=ROOT)
    subprocess.run(["bash", str(BINDER / "postBuild")], check=True, cwd=ROOT, env=venv_env(venv))
    return time.monotonic() - started


def venv_env(venv: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_", "VIRTUAL_ENV", "PYTHON"))}
    env.update({"PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", "VIRTUAL_ENV": str(venv),
                "MPLBACKEND": "Agg"})
    return env


def extensions(venv: Path) -> dict:
    """Each extension of LEARNER_OFF and LEARNER_ON: True when enabled, as jupyter lists them."""
    env = venv_env(venv)
    listed = ""
    for args in (["labextension", "list"], ["server", "extension", "list"]):
        done = subprocess.run([str(venv / "bin" / "jupyter"), *args], capture_output=True, text=True, env=env)
        listed += done.stdout + done.stderr
    page = venv / "etc" / "jupyter" / "labconfig" / "page_config.json"  # where --level=sys_prefix writes
    page_config = json.loads(page.read_text()) if page.is_file() else {}
    state = {}
    for name in LEARNER_OFF + LEARNER_ON:
        lines = [line for line in listed.splitlines() if name in line]
        if name.startswith("@"):  # disabled, and locked so that the UI cannot enable it again
            state[name] = not (page_config.get("disabledExtensions", {}).get(name)
                               and page_config.get("lockedExtensions", {}).get(name))
        else:
            state[name] = any("enabled" in line.lower() and "disabled" not in line.lower() for line in lines)
    return state


def chapters() -> list[str]:
    return sorted(p.name for p in (ROOT / "solutions").iterdir() if (p / f"{p.name}.ipynb").is_file())


def run_chapter(venv: Path, chapter: str, seconds: float = 600) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"binder-{chapter}-") as tmp:
        stats = Path(tmp) / "time.txt"
        command = ["taskset", "-c", "0", "prlimit", f"--as={MEMORY_BYTES}", "/usr/bin/time", "-f", "%e %M",
                   "-o", str(stats), "bash", str(BINDER / "start"),
                   str(venv / "bin" / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
                   f"--ExecutePreprocessor.timeout={int(seconds)}", "--output-dir", tmp, "--output", "ran",
                   str(ROOT / "solutions" / chapter / f"{chapter}.ipynb")]
        env = {**venv_env(venv), "HOME": tmp}
        try:
            done = subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True, timeout=seconds + 60)
            ok, error = done.returncode == 0, (done.stderr.strip().splitlines() or [""])[-1]
        except subprocess.TimeoutExpired:
            ok, error = False, f"did not finish in {seconds:.0f} s"
        wall, peak_kb = (stats.read_text().split()[-2:] if stats.exists() else ("nan", "0"))
    return {"chapter": chapter, "ok": ok, "seconds": float(wall), "peak_mb": int(peak_kb) / 1024,
            "error": None if ok else error}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--venv", default="/tmp/binder-rehearsal")
    parser.add_argument("--reuse", action="store_true", help="reuse an environment already built at --venv")
    parser.add_argument("--chapters", default="", help="comma-separated chapter ids (default: all)")
    parser.add_argument("--json", default="", help="write the results there too")
    parser.add_argument("--wheels", default="", help="a folder holding the pinned torch +cpu wheel, used instead of "
                                                     "download.pytorch.org (offline machines)")
    args = parser.parse_args(argv)
    venv = Path(args.venv)
    for tool in ("taskset", "prlimit"):
        if shutil.which(tool) is None:
            print(f"rehearse: {tool} is missing (util-linux)", file=sys.stderr)
            return 2
    built = build(venv, args.reuse, args.wheels)
    print(f"environment from binder/ built in {built:.0f} s at {venv}")
    state = extensions(venv)
    wrong = [n for n in LEARNER_OFF if state[n]] + [n for n in LEARNER_ON if not state[n]]
    for name in LEARNER_OFF + LEARNER_ON:
        print(f"  {'on ' if state[name] else 'off'}  {name}")
    results = []
    print(f"\n{'chapter':<32} {'seconds':>8} {'peak MB':>8}  (1 CPU, {MEMORY_BYTES // 2**20} MB address space)")
    for chapter in (args.chapters.split(",") if args.chapters else chapters()):
        r = run_chapter(venv, chapter)
        results.append(r)
        flag = "" if r["ok"] and r["seconds"] <= BUDGET_SECONDS else f"  ✗ {r['error'] or 'over the 60 s budget'}"
        print(f"{chapter:<32} {r['seconds']:>8.1f} {r['peak_mb']:>8.0f}{flag}")
    report = {"build_seconds": built, "extensions": state, "chapters": results,
              "limits": {"cpus": 1, "address_space_bytes": MEMORY_BYTES}}
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    bad = wrong or [r for r in results if not r["ok"] or r["seconds"] > BUDGET_SECONDS]
    if wrong:
        print("extensions in the wrong state for learners:", ", ".join(wrong))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
