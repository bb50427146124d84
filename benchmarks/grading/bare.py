"""The limit: a notebook's cells run bare, in one plain Python process, with no grader around them.

The same cells the grader runs (``autograder.job``: its prelude, the sanitized notebook's given, answer and
scratch cells, then every test cell of the chapter, hidden tests included), in that order, in one
namespace, in a fresh ``python`` with the sandbox's thread settings (one BLAS/OpenMP thread) and no
sandbox, proxy or feedback. The wall time of that process, interpreter start and imports included, is
what the student's code costs at the least; ``benchmarks.grading`` divides the grader's time by it.

    python -m benchmarks.grading.bare CELLS.json    # [[name, code], ...]; prints {"failed": [...], "slowest": [...]}
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..common import PY, ROOT, child_env

THREADS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}  # as in the sandbox


def cells(chapter: str, notebook) -> list[tuple[str, str]]:
    """(name, python code): what the grader runs for ``notebook``, in its order."""
    from autograder import job
    from autograder.course import Chapter, grade_id, read, release_path
    from autograder.sanitize import sanitize
    sanitized, _ = sanitize(notebook, read(release_path(chapter)))
    tests = [(f"test {grade_id(c)}", job._python(c.source)) for c in Chapter.load(chapter).cells("tests")]
    return [("prelude", job.PRELUDE)] + job.sandbox_cells(sanitized) + tests


def run_bare(chapter: str, notebook, repeats: int = 2) -> dict:
    """The median wall time of ``repeats`` fresh processes running the cells, and the cells that raised."""
    with tempfile.TemporaryDirectory(prefix="bare-") as folder:
        path = Path(folder) / "cells.json"
        path.write_text(json.dumps(cells(chapter, notebook)))
        env = child_env(PYTHONPATH=str(ROOT), **THREADS)
        times, reply = [], {}
        for _ in range(repeats):
            start = time.monotonic()
            proc = subprocess.run([PY, "-m", "benchmarks.grading.bare", str(path)], cwd=folder, env=env,
                                  capture_output=True, text=True)
            times.append(time.monotonic() - start)
            if proc.returncode != 0:
                return {"error": proc.stderr[-1500:]}
            reply = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"seconds": round(statistics.median(times), 3), "runs": [round(t, 3) for t in times], **reply}


def main() -> None:
    namespace = {"__name__": "__main__"}
    failed, seconds = [], {}
    for name, code in json.loads(Path(sys.argv[1]).read_text()):
        start = time.perf_counter()
        try:
            exec(compile(code, f"<{name}>", "exec"), namespace)
        except Exception as exc:  # noqa: BLE001 - a failing cell is reported, the next runs
            failed.append(f"{name}: {type(exc).__name__}")
        seconds[name] = round(time.perf_counter() - start, 3)
    slowest = sorted(seconds.items(), key=lambda item: -item[1])[:3]
    print(json.dumps({"failed": failed, "slowest": slowest}))


if __name__ == "__main__":
    main()
