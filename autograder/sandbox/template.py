"""Warm starts: each sandbox is forked from a template process that has already imported its libraries.

A grading process keeps, per set of preloaded modules (a chapter's), one ``Template``: a child process
running ``template_server`` that imports numpy, the chapter's heavy modules (torch, matplotlib, ...) and the
server, and never runs student code. ``Template.spawn`` asks it for a sandbox: it forks, and the fork
gets its own namespaces, root, sized tmpfs, cgroups, uid, capabilities and seccomp filter before the
student's first line (``template_server`` says how), so a sandbox starts in milliseconds instead of
seconds. Nothing of a student's is ever sent to a template: only limits, environment, layout, filter.

``template(preload, env, warm)`` is the per-process cache (``MAX_TEMPLATES`` of them, least recently used first
out): a template serves every sandbox whose preload it has imported; made for a class (``warm``), it imports
every chapter's libraries once, so one template per grading process serves the whole class.
Where no template can be made or used (``AUTOGRADER_WARM=0``, the unsafe mode, a failed check of the
template), ``process.Process`` starts the sandbox cold through bubblewrap, with the same bounds.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time

from ..errors import GraderError
from ..settings import GRADER, WARM
from . import isolation, protocol

MAX_TEMPLATES = GRADER.templates             # per grading process (declared in autograder/settings.py)
READY_SECONDS = GRADER.template_ready_seconds  # a template's imports (torch) on a busy machine
SPAWN_SECONDS = GRADER.spawn_seconds           # a sandbox's set-up, fork to ready
BASES = ("/tmp", "/mnt", "/run", "/var/tmp")  # where a sandbox's new root is built, in its own mount namespace
# (its command line, which its sandboxes show too, names the server: what a sweep for leftover sandboxes looks for)
TEMPLATE = ("import sys; sys.path.insert(0, {!r}); import autograder.sandbox.server; "
            "from autograder.sandbox.template_server import main; main()")


class TemplateError(GraderError):
    """No sandbox could be forked from the template (the grader then starts one cold)."""


MAX_FAILURES = GRADER.warm_failures  # failed warm starts after which this process starts its sandboxes cold
failures: list[str] = []   # why warm starts failed in this process


def enabled() -> bool:
    """Whether to fork sandboxes from templates: unless ``AUTOGRADER_WARM=0`` or they keep failing here."""
    return WARM.on() and len(failures) < MAX_FAILURES


class WarmProcess:
    """A forked sandbox as ``process.Process`` handles it (the part of ``subprocess.Popen`` it uses)."""

    def __init__(self, template: Template, pid: int):
        self.template, self.pid, self.returncode = template, pid, None

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            try:
                status = self.template.wait(self.pid, 3600 if timeout is None else timeout)
            except TemplateError:  # the template is gone: its sandboxes died with it (PR_SET_PDEATHSIG)
                status = -signal.SIGKILL
            if status is None:
                raise subprocess.TimeoutExpired(f"sandbox {self.pid}", timeout)
            self.returncode = status
        return self.returncode


class Template:
    """One template process (``template_server``) and its control socket."""

    def __init__(self, preload: tuple, env: dict):
        self.preload = tuple(preload)
        self.lock = threading.Lock()
        self.sent = 0  # requests sent
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        config = {"fd": theirs.fileno(), "preload": list(self.preload)}
        env = {**env, protocol.CONFIG_VARIABLE: json.dumps(config)}
        try:
            self.proc = subprocess.Popen([sys.executable, "-I", "-c", TEMPLATE.format(isolation.ROOT)], cwd="/",
                                         env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, pass_fds=[theirs.fileno()],
                                         start_new_session=True)
        except OSError as exc:
            self.sock.close()
            raise TemplateError(f"the template could not be started ({exc})") from None
        finally:
            theirs.close()
        try:
            answer = self._receive(READY_SECONDS)
        except TemplateError:
            self.close()
            raise
        if not answer.get("ready"):
            self.close()
            raise TemplateError(f"the template could not be made: {answer.get('error')}")

    def _receive(self, seconds: float) -> dict:
        if not select.select([self.sock], [], [], seconds)[0]:
            raise TemplateError("the template did not answer in time")
        data = self.sock.recv(1 << 20)
        if not data:
            raise TemplateError("the template ended")
        try:
            return json.loads(data)
        except ValueError:
            raise TemplateError("the template answered something else than its protocol") from None

    def _ask(self, request: dict, seconds: float, fds=()) -> dict:
        """Its answer to ``request`` (numbered: a late answer to an earlier request is skipped)."""
        end = time.monotonic() + seconds
        with self.lock:
            self.sent += 1
            try:
                socket.send_fds(self.sock, [json.dumps({**request, "n": self.sent}).encode()], list(fds))
                while True:
                    answer = self._receive(max(end - time.monotonic(), 0))
                    if answer.get("n") == self.sent:
                        return answer
            except OSError as exc:
                raise TemplateError(f"the template is gone ({exc})") from None

    def alive(self) -> bool:
        return self.proc.poll() is None

    def spawn(self, sock_fd: int, request: dict) -> WarmProcess:
        """A sandbox serving on ``sock_fd`` (its end of the socket pair), set up as ``request`` says."""
        answer = self._ask({"op": "spawn", "timeout": SPAWN_SECONDS, "base": _base(request["layout"]),
                            "root": isolation.ROOT, "inside": isolation.INSIDE, "workdir": isolation.WORKDIR,
                            "seccomp": isolation.seccomp_program().hex(), **request}, SPAWN_SECONDS + 5, [sock_fd])
        if "pid" not in answer:
            raise TemplateError(f"the sandbox could not be forked: {answer.get('error')}")
        return WarmProcess(self, int(answer["pid"]))

    def wait(self, pid: int, seconds: float):
        return self._ask({"op": "wait", "pid": pid, "timeout": seconds}, seconds + 5).get("status")

    def close(self) -> None:
        self.sock.close()
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def _base(layout: list[dict]) -> str:
    """A folder to build the new root on that hides no source of the layout."""
    sources = [step["source"] for step in layout if "source" in step]
    for base in BASES:
        if os.path.isdir(base) and not any(s == base or s.startswith(base + "/") for s in sources):
            return base
    raise TemplateError("no folder to build a sandbox's root on")


_cache: dict[tuple, Template] = {}
_cache_lock = threading.Lock()


def template(preload: tuple, env: dict, warm: tuple = ()) -> Template:
    """This process's template for ``preload``: a live one that has imported at least those modules (the most
    recently used), or a new one importing ``preload`` and then ``warm`` (``Task.warm``: the other modules the
    run's chapters preload, so that it serves them all). The least recently used beyond ``MAX_TEMPLATES`` is
    closed."""
    wanted = set(preload)
    with _cache_lock:
        for key in [key for key, found in _cache.items() if not found.alive()]:
            _cache.pop(key).close()
        key = next((key for key in reversed(_cache) if wanted <= set(key)), None)
        if key is None:
            key = tuple(preload) + tuple(m for m in dict.fromkeys(warm) if m not in wanted)
            found = Template(key, env)
        else:
            found = _cache.pop(key)
        _cache[key] = found
        while len(_cache) > MAX_TEMPLATES:
            _cache.pop(next(iter(_cache))).close()
        return found


@atexit.register
def close_all() -> None:
    with _cache_lock:
        while _cache:
            _cache.popitem()[1].close()
