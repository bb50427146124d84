"""Rehearse Binder here: build its environment from binder/ alone, then run every chapter under its limits.

    python -m benchmarks.binder                        # a fresh virtualenv in /tmp/binder-rehearsal
    python -m benchmarks.binder --reuse                # keep an environment already built there
    python -m benchmarks.binder --chapters ch01_perceptron
    python -m benchmarks.binder --wheels /opt/wheels   # torch's +cpu wheel from a folder, not its index

1. A clean virtualenv gets ``binder/requirements.txt`` only (as repo2docker does: pip, CPU torch),
   then ``binder/postBuild`` runs from the repository root (installs the course package, builds
   matplotlib's font cache, turns the instructor extensions off). PyTorch's CPU index is used
   when it can be reached; where it cannot (an offline machine, CI), the same pinned ``+cpu``
   wheel comes from what pip is configured with (its find-links, registry or cache), or from
   ``--wheels DIR``.
2. The extensions are what a learner should see: nbgrader's formgrader, course list,
   create-assignment and assignment list off (JupyterLab plugins disabled and locked, server extensions
   disabled), validate on.
3. Every chapter's notebook runs top to bottom in that environment through ``binder/start``
   (one thread for BLAS and torch), pinned to one CPU (``taskset -c 0``) with 2 GB of address
   space (``prlimit --as``: stricter than Binder's 2 GB of resident memory). Reported per chapter:
   wall time, the peak resident memory of the largest process (the kernel), and whether it ran clean.
4. Then each chapter's self-check (the reference through ``python -m autograder check --json``, what "Check
   my work" runs) on the same one CPU: its wall time and score (``--no-self-check`` skips it).

Results: ``benchmarks/results/binder.json`` (and a timestamped copy). Exit status 0 when the environment
was built, the extensions are right and every chapter ran within the limits and the per-chapter budget
(60 s on Binder's one CPU).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

from .common import ROOT, chapters_option, machine, print_load_warning, selected_chapters, table, write_json

BINDER = ROOT / "binder"
MEMORY_BYTES = 2 * 1024 ** 3
BUDGET_SECONDS = 60.0
# What binder/postBuild turns off (tests/test_environment.py reads these): the instructor's tools, and the
# Assignment List (fetch and submit need a class's exchange, which Binder has not)
LEARNER_OFF = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list", "@jupyter/nbgrader:create-assignment",
               "@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:menu", "nbgrader.server_extensions.formgrader",
               "nbgrader.server_extensions.course_list", "nbgrader.server_extensions.assignment_list")
LEARNER_ON = ("@jupyter/nbgrader:validate-assignment", "nbgrader.server_extensions.validate_assignment")


def reachable(url: str, seconds: float = 5.0) -> bool:
    parsed = urlparse(url)
    try:
        with socket.create_connection((parsed.hostname, parsed.port or 443), timeout=seconds):
            return True
    except OSError:
        return False


def requirements(wheels: str) -> tuple[Path, str]:
    """(binder/requirements.txt as pip gets it, where torch comes from). With ``wheels``, its PyTorch
    index is replaced by that folder of wheels; when the index cannot be reached, it is left out and
    pip finds the same pinned ``+cpu`` wheel where it is configured to look (find-links, registry, cache)."""
    lines = (BINDER / "requirements.txt").read_text().splitlines()
    index = next((line.split()[-1] for line in lines if line.startswith("--extra-index-url")), "")
    if not wheels and (not index or reachable(index)):
        return BINDER / "requirements.txt", index or "pip's configuration"
    source = str(Path(wheels).resolve()) if wheels else "pip's configuration (the PyTorch index is unreachable)"
    lines = [line for line in lines if not line.startswith("--extra-index-url")]
    if wheels:
        lines.insert(0, f"--find-links {Path(wheels).resolve()}")
    path = Path(tempfile.mkdtemp(prefix="binder-req-")) / "requirements.txt"
    path.write_text("\n".join(lines) + "\n")
    return path, source


def build(venv: Path, reuse: bool, wheels: str = "") -> tuple[float, str]:
    """(seconds, where torch came from): a fresh virtualenv with binder/requirements.txt, then postBuild."""
    started, source = time.monotonic(), "reused"
    if not (reuse and (venv / "bin" / "jupyter").exists()):
        shutil.rmtree(venv, ignore_errors=True)
        base = getattr(sys, "_base_executable", sys.executable)  # not this checkout's .venv
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
        path, source = requirements(wheels)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--disable-pip-version-check", "-q",
                        "-r", str(path)], check=True, cwd=ROOT)
    subprocess.run(["bash", str(BINDER / "postBuild")], check=True, cwd=ROOT, env=venv_env(venv))
    return time.monotonic() - started, source


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


def run_check(venv: Path, chapter: str, seconds: float = 900) -> dict:
    """The self-check of the chapter's reference on one CPU (``python -m autograder check --json``, what the
    notebook's "Check my work" button runs, through ``binder/start``): its wall time and score. The grader's
    own limits bound its sandboxes' memory (``ram_bytes``), as Binder's 2 GB bound the session's."""
    import nbformat

    from autograder import submissions
    with tempfile.TemporaryDirectory(prefix=f"binder-check-{chapter}-") as tmp:
        notebook = Path(tmp) / chapter / f"{chapter}.ipynb"
        notebook.parent.mkdir()
        nbformat.write(submissions.reference(chapter), str(notebook))
        command = ["taskset", "-c", "0", "bash", str(BINDER / "start"), str(venv / "bin" / "python"), "-m",
                   "autograder", "check", "--json", str(notebook)]
        started = time.monotonic()
        try:
            done = subprocess.run(command, cwd=ROOT, env={**venv_env(venv), "HOME": tmp}, capture_output=True,
                                  text=True, timeout=seconds)
        except subprocess.TimeoutExpired:
            return {"seconds": seconds, "ok": False, "score": None, "error": f"did not finish in {seconds:.0f} s"}
        wall = time.monotonic() - started
    try:
        totals = json.loads(done.stdout)["totals"]
        score, maximum = totals["score"], totals["points"]
    except (ValueError, KeyError, TypeError):
        return {"seconds": round(wall, 1), "ok": False, "score": None,
                "error": (done.stderr.strip().splitlines() or ["no JSON"])[-1]}
    return {"seconds": round(wall, 1), "ok": score == maximum, "score": f"{score:g}/{maximum:g}",
            "error": None if score == maximum else "the reference lost points"}


def budget_figures(results: list[dict], every: list[str]) -> dict[str, str]:
    """The budgets table's figures (benchmarks.budgets): each chapter's time on Binder's limits."""
    if not results:
        return {}
    ran = [(r["chapter"].split("_")[0], r) for r in results]
    failed = [c for c, r in ran if not r["ok"]]
    slowest, peak = max(ran, key=lambda c: c[1]["seconds"]), max(ran, key=lambda c: c[1]["peak_mb"])
    fastest = min(r["seconds"] for _, r in ran)
    which = "" if len(ran) == len(every) else f"; {len(ran)} chapters: {', '.join(c for c, _ in ran)}"
    return {"binder_seconds": f"{fastest:.0f}–{slowest[1]['seconds']:.0f} s, "
            + (f"failed: {', '.join(failed)}" if failed else "every chapter clean")
            + f" ({slowest[0]} {slowest[1]['seconds']:.1f} s the longest; "
            f"peak at most {peak[1]['peak_mb']:.0f} MB, {peak[0]})" + which}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.binder", description=__doc__.split("\n")[0])
    parser.add_argument("--venv", default="/tmp/binder-rehearsal")
    parser.add_argument("--reuse", action="store_true", help="reuse an environment already built at --venv")
    parser.add_argument("--no-self-check", dest="self_check", action="store_false",
                        help="skip each chapter's self-check on one CPU (the reference, through `autograder check`)")
    chapters_option(parser)
    parser.add_argument("--wheels", default="", help="a folder holding the pinned torch +cpu wheel, used instead of "
                                                     "download.pytorch.org (offline machines)")
    args = parser.parse_args(argv)
    selected = selected_chapters(parser, args.chapters)
    venv = Path(args.venv)
    for tool in ("taskset", "prlimit"):
        if shutil.which(tool) is None:
            print(f"benchmarks.binder: {tool} is missing (util-linux)", file=sys.stderr)
            return 2
    start_machine = machine()
    built, torch_from = build(venv, args.reuse, args.wheels)
    print(f"environment from binder/ built in {built:.0f} s at {venv} (torch from {torch_from})")
    state = extensions(venv)
    wrong = [n for n in LEARNER_OFF if state[n]] + [n for n in LEARNER_ON if not state[n]]
    for name in LEARNER_OFF + LEARNER_ON:
        print(f"  {'on ' if state[name] else 'off'}  {name}")
    results = []
    for chapter in selected:
        print(f"[binder] {chapter} on 1 CPU, {MEMORY_BYTES // 2**20} MB of address space ...",
              file=sys.stderr, flush=True)
        results.append(run_chapter(venv, chapter))
        if args.self_check:
            print(f"[binder] {chapter}: its self-check on 1 CPU ...", file=sys.stderr, flush=True)
            results[-1]["self_check"] = run_check(venv, chapter)
    over = [r for r in results if not r["ok"] or r["seconds"] > BUDGET_SECONDS]
    print(f"\nChapters under Binder's limits (1 CPU: taskset -c 0; {MEMORY_BYTES // 2**20} MB address space: "
          f"prlimit --as; budget {BUDGET_SECONDS:.0f} s)")
    checks = {r["chapter"]: r["self_check"] for r in results if "self_check" in r}
    over += [r for r in results if r["chapter"] in checks and not checks[r["chapter"]]["ok"] and r not in over]
    print(table([[r["chapter"], f"{r['seconds']:.1f}", f"{r['peak_mb']:.0f}",
                  *([f"{checks[r['chapter']]['seconds']:.1f}", checks[r["chapter"]]["score"] or "-"] if checks else []),
                  "ok" if r not in over else (r["error"] or (checks.get(r["chapter"]) or {}).get("error")
                                              or f"over the {BUDGET_SECONDS:.0f} s budget")]
                 for r in results],
                ["chapter", "seconds", "peak MB", *(["self-check s", "score"] if checks else []), ""]))
    if wrong:
        print("extensions in the wrong state for learners:", ", ".join(wrong))
    print_load_warning()
    path = write_json("binder", {"machine": machine(), "machine_at_start": start_machine, "build_seconds": built,
                                 "torch_from": torch_from, "extensions": state, "chapters": results,
                                 "limits": {"cpus": 1, "address_space_bytes": MEMORY_BYTES,
                                            "budget_seconds": BUDGET_SECONDS}})
    print(f"\nresults: {path.relative_to(ROOT)}")
    from . import budgets
    budgets.record("binder", budget_figures(results, selected_chapters(parser, "")), argv)
    return 1 if wrong or over else 0


if __name__ == "__main__":
    raise SystemExit(main())
