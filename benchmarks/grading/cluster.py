"""A Dask cluster as an instructor starts one: ``dask scheduler`` and each ``dask worker`` a process of its own.

On several machines the same commands run on each (see the README, "Grading on a Dask cluster");
here they all run on this one, talking over TCP on 127.0.0.1. Each worker has one thread: a grading
job is one notebook at a time, and its sandbox is a process of its own.

    with Cluster(folder) as cluster:
        cluster.add_workers(2)
        ... python -m autograder grade CLASS OUT --scheduler cluster.address ...
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from ..common import BIN, ROOT, child_env

DASK = os.path.join(BIN, "dask")
START_SECONDS = 60


class Cluster:
    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.scheduler_file = self.folder / "scheduler.json"
        self.processes: list[subprocess.Popen] = []
        self.workers = 0

    def _start(self, name: str, args: list[str]) -> subprocess.Popen:
        log = open(self.folder / f"{name}.log", "w")
        proc = subprocess.Popen([DASK, *args], cwd=ROOT, env=child_env(), stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        log.close()
        self.processes.append(proc)
        return proc

    def start(self) -> Cluster:
        self.scheduler_file.unlink(missing_ok=True)
        self._start("scheduler", ["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                  "--scheduler-file", str(self.scheduler_file)])
        self._wait(lambda: self.scheduler_file.is_file() and self.scheduler_file.stat().st_size > 0, "the scheduler")
        return self

    @property
    def address(self) -> str:
        return json.loads(self.scheduler_file.read_text())["address"]

    def add_workers(self, count: int = 1) -> None:
        """``count`` more workers (one process, one thread each); returns once the scheduler has them all."""
        for _ in range(count):
            self.workers += 1
            self._start(f"worker-{self.workers}", [
                "worker", self.address, "--nthreads", "1", "--nworkers", "1", "--name", f"worker-{self.workers}",
                "--no-dashboard", "--memory-limit", "0", "--local-directory", str(self.folder / "workers")])
        self._wait(lambda: self.connected() >= self.workers, f"{self.workers} workers")

    def connected(self) -> int:
        """Workers the scheduler knows now."""
        from distributed import Client
        with Client(self.address, timeout="10s") as client:
            return len(client.scheduler_info()["workers"])

    def _wait(self, ready, what: str) -> None:
        end = time.monotonic() + START_SECONDS
        while time.monotonic() < end:
            if any(p.poll() is not None for p in self.processes):
                break
            try:
                if ready():
                    return
            except OSError:
                pass
            time.sleep(0.5)
        self.stop()
        logs = " | ".join(p.read_text()[-300:] for p in sorted(self.folder.glob("*.log")))
        raise RuntimeError(f"the Dask cluster did not start {what} in {START_SECONDS} s: {logs}")

    def stop(self) -> None:
        """Workers first, then the scheduler: each process group is ended (SIGTERM, then SIGKILL)."""
        for proc in reversed(self.processes):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in reversed(self.processes):
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.processes.clear()

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
