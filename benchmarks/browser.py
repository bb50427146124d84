"""A JupyterLab server and Chromium, for the browser tests (``tests/test_browser.py`` and others) and the
widget benchmark (``benchmarks.widget_latency``): one home for both, so benchmarks import no test code.

Chromium is Debian's package (``apt-get install chromium``), driven by Python playwright;
``playwright install`` is never needed.
"""
from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat

from .common import ROOT

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
RUN_ALL_SECONDS = 150        # a chapter runs in well under 60 s; JupyterLab and the browser add some
LAB_SETTINGS = {  # JupyterLab settings for the test server only
    # every cell attached, painted or not (screenshots of whole outputs); a student's JupyterLab has
    # the default "contentVisibility" (off-screen cells are not painted), which Lab(default_windowing=True) keeps
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                         "checkForUpdates": False},
}


class RunFailed(Exception):
    """A notebook could not be run in the lab (the kernel did not start, Run All did not finish)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A JupyterLab server on a temporary copy of the reference notebooks."""

    def __init__(self, root: Path, home: Path, prefix: list[str] | tuple = (), default_windowing: bool = False,
                 student: bool = False):
        self.root, self.home, self.prefix = root, home, list(prefix)  # prefix: e.g. taskset -c 0
        self.student = student  # True: the student's lab, as make lab opens it (jupyter-config/student/)
        self.default_windowing = default_windowing  # True: JupyterLab's own windowing mode, as students have it
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = None

    def start(self, timeout: float = 60) -> "Lab":
        settings = self.home / "lab-settings"
        for name, values in LAB_SETTINGS.items():
            if self.default_windowing:
                values = {k: v for k, v in values.items() if k != "windowingMode"}
            path = settings / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MPLBACKEND", "JPY_", "JUPYTER"))}
        env.update({"JUPYTERLAB_SETTINGS_DIR": str(settings),
                    "JUPYTERLAB_WORKSPACES_DIR": str(self.home / "workspaces"),
                    "JUPYTER_CONFIG_DIR": str(self.home / "config"),
                    "JUPYTER_RUNTIME_DIR": str(self.home / "runtime"),
                    "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"})
        if self.student:
            env["JUPYTER_CONFIG_PATH"] = str(ROOT / "jupyter-config" / "student")
        self.log = open(self.home / "jupyter.log", "w")
        self.proc = subprocess.Popen(
            self.prefix + [str(Path(sys.executable).parent / "jupyter"), "lab", "--no-browser",
             "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={self.root}",
             "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
            + (["--allow-root"] if os.geteuid() == 0 else []),
            stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=self.root, start_new_session=True)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited: {self.tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/status?token={self.token}", timeout=2) as reply:
                    if reply.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.3)
        raise RuntimeError(f"jupyter lab did not answer in {timeout} s: {self.tail()}")

    def tail(self) -> str:
        self.log.flush()
        return (self.home / "jupyter.log").read_text()[-2000:]

    def api(self, method: str, path: str):
        request = urllib.request.Request(f"{self.url}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            body = reply.read()
            return json.loads(body) if body else None

    def kernels(self) -> list:
        """The server's kernels; [] on a passing server error (a kernel being shut down while listed)."""
        try:
            return self.api("GET", "/api/kernels") or []
        except urllib.error.HTTPError:
            return []

    def shutdown_kernels(self) -> None:
        for session in self.api("GET", "/api/sessions") or []:
            self.api("DELETE", f"/api/sessions/{session['id']}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()  # jupyter shuts its kernels down on SIGTERM
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
        self.log.close()


def open_and_run(page, lab: Lab, chapter: str) -> None:
    """Open ``chapter``'s notebook in the lab, Run > Run All Cells, wait until every code cell ran;
    ``RunFailed`` (its message says what did not happen) otherwise."""
    url = f"{lab.url}/lab/workspaces/{chapter}/tree/{chapter}/{chapter}.ipynb?reset&token={lab.token}"
    page.goto(url, wait_until="domcontentloaded", timeout=60_000)
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=60_000)
    # the kernel is up when the server says it is idle with a client connected, and the toolbar agrees
    deadline = time.monotonic() + 90
    while not any(k.get("connections", 0) >= 1 and k.get("execution_state") == "idle"
                  for k in lab.kernels()):
        if time.monotonic() > deadline:
            raise RunFailed(f"the kernel did not start: {lab.kernels()}")
        page.wait_for_timeout(300)
    page.wait_for_function(
        """() => { const s = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');
                   return s && s.getAttribute('data-status') === 'idle'; }""", timeout=60_000)
    for attempt in range(3):  # Run > Run All Cells; again if nothing started (a kernel still settling)
        page.locator(".lm-MenuBar-item", has_text="Run").first.click()
        page.locator('.lm-Menu-item[data-command="runmenu:run-all"]').click()
        try:
            page.wait_for_function(
                """() => [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell .jp-InputArea-prompt')]
                         .some(p => /\\[(\\*|\\d+)\\]/.test(p.textContent))""", timeout=10_000)
            break
        except Exception:  # noqa: BLE001 - playwright's TimeoutError
            page.keyboard.press("Escape")
    else:
        raise RunFailed("Run All Cells started nothing")
    deadline = time.monotonic() + RUN_ALL_SECONDS
    # counted in the file: with JupyterLab's default windowing, cells attach to the page while they run
    notebook = nbformat.read(str(lab.root / chapter / f"{chapter}.ipynb"), as_version=4)
    code_cells = sum(cell.cell_type == "code" for cell in notebook.cells)
    while True:
        state = page.evaluate("""() => {
            const prompts = [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell .jp-InputArea-prompt')]
                .map(p => p.textContent.trim());
            const s = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');
            return {done: prompts.filter(t => /^\\[\\d+\\]:$/.test(t)).length,
                    waiting: prompts.filter(t => t.includes('*')).length,
                    status: s && s.getAttribute('data-status')};
        }""")
        if state["done"] == code_cells and not state["waiting"] and state["status"] == "idle":
            return
        if time.monotonic() > deadline:
            raise RunFailed(f"Run All did not finish in {RUN_ALL_SECONDS} s: {state}, {code_cells} code cells")
        page.wait_for_timeout(500)
