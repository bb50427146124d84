"""The same command grades through a Dask cluster, with the same per-cell scores as local processes.

The cluster is started as an instructor starts one on several machines: ``dask scheduler`` and each
``dask worker`` a process of its own (``benchmarks.grading.cluster``), graded through with one worker,
then with two."""
import subprocess

import pytest

from autograder.course import ROOT, chapters
from autograder.submissions import filled, reference, untouched, write_class
from autograder.tests.cases import mutant_groups
from benchmarks.grading.cluster import Cluster

pytestmark = [pytest.mark.xdist_group("distributed"), pytest.mark.slow]


def grade(folder, out, *extra):
    proc = subprocess.run(["make", "--no-print-directory", "grade", f"SUBMISSIONS={folder}", f"OUT={out}", *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return (out / "tests.csv").read_text()


def test_parallel_sequential_and_dask_give_the_same_scores(tmp_path):
    chapter = chapters()[1]
    chapter, replace, _ = next(g for g in mutant_groups() if g[0] == chapter)
    folder = write_class(tmp_path / "class", {("ref", chapter): reference(chapter),
                                               ("stub", chapter): untouched(chapter),
                                               ("wrong", chapter): filled(chapter, replace)})
    local = grade(folder, tmp_path / "local")
    assert grade(folder, tmp_path / "sequential", "GRADE_JOBS=1") == local, "parallel and sequential differ"
    with Cluster(tmp_path / "cluster") as cluster:
        assert cluster.address.startswith("tcp://127.0.0.1:")
        for workers in (1, 2):
            cluster.add_workers(workers - cluster.workers)
            assert cluster.connected() == workers
            out = tmp_path / f"dask-{workers}"
            assert grade(folder, out, f"SCHEDULER={cluster.address}") == local, f"{workers} Dask worker(s) differ"
            log = (out / "grading.log").read_text()
            assert f"with the Dask scheduler at {cluster.address}" in log
        processes = list(cluster.processes)
    assert len(processes) == 3 and all(p.poll() is not None for p in processes), "the cluster outlived its test"
