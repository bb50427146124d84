"""The same command grades through a Dask cluster, with the same per-cell scores as local processes."""
import subprocess

import pytest

from autograder.course import ROOT, chapters
from autograder.submissions import filled, reference, untouched, write_class
from autograder.tests.cases import mutant_groups

pytestmark = [pytest.mark.xdist_group("distributed"), pytest.mark.slow]


def grade(folder, out, *extra):
    proc = subprocess.run(["make", "--no-print-directory", "grade", f"SUBMISSIONS={folder}", f"OUT={out}", *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return (out / "tests.csv").read_text()


def test_parallel_sequential_and_dask_give_the_same_scores(tmp_path):
    from distributed import LocalCluster
    chapter = chapters()[1]
    chapter, replace, _ = next(g for g in mutant_groups() if g[0] == chapter)
    folder = write_class(tmp_path / "class", {("ref", chapter): reference(chapter),
                                               ("stub", chapter): untouched(chapter),
                                               ("wrong", chapter): filled(chapter, replace)})
    local = grade(folder, tmp_path / "local")
    assert grade(folder, tmp_path / "sequential", "GRADE_JOBS=1") == local, "parallel and sequential differ"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        distributed = grade(folder, tmp_path / "dask", f"SCHEDULER={cluster.scheduler_address}")
    assert distributed == local
    log = (tmp_path / "dask" / "grading.log").read_text()
    assert "Dask scheduler" in log
