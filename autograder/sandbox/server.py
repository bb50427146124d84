"""The server: the sandboxed process that runs the student's code and answers the grader's requests.

It is started by ``client.Sandbox`` (``process``) inside the operating system's
sandbox (``isolation``: namespaces, uid 65534, a read-only view of the Python
runtime only, a seccomp filter); it never decides a score. It runs the
notebook's given and student cells, then serves the requests of ``protocol``
(call a graded function, read an attribute of a returned object, ...) over a
socket, replying with plain data (``wire``).

Before any student code runs it sets its own rules (``policy``: limits, capped
output, the audit hook) and starts watching threads (``dlcourse.testing.sandbox_monitors``).
It imports only ``protocol``, ``wire``, ``policy`` and ``settings`` (its ``Limits``, received as the grader
sent them) of the grader: those, with this file and the packages' ``__init__``, are all of the grader the
sandbox can see (``isolation.SERVER_MODULES``).
"""
from __future__ import annotations

import json
import os
import socket
import sys
import traceback

from ..settings import GRADER, Limits
from . import policy, protocol, wire


class Server:
    """Serves the trusted grader's requests; re-entrant for callbacks into the grader."""

    def __init__(self, sock: socket.socket, watch_class):
        self.sock, self.reader = sock, wire.Reader(sock)
        self.Watch = watch_class
        self.namespace = {"__name__": "__main__", "__builtins__": __builtins__}
        self.objects: dict[int, object] = {}
        self.ids: dict[int, int] = {}
        self.next_id = 1
        self.handlers = {protocol.EXEC: self.exec_cell, protocol.CALL: self.call, protocol.GETATTR: self.getattr,
                         protocol.OPERATOR: self.operator, protocol.ISINSTANCE: self.isinstance,
                         protocol.RUN: self.run_driver, protocol.RELEASE: self.release}

    # -- encoding ----------------------------------------------------------
    def _register(self, obj) -> dict:
        rid = self.ids.get(id(obj))
        if rid is None or self.objects.get(rid) is not obj:
            rid, self.next_id = self.next_id, self.next_id + 1
            self.objects[rid], self.ids[id(obj)] = obj, rid
        return wire.ref(rid, type(obj).__name__)

    def encoder(self):
        return wire.Encoder(self._register)

    def decoder(self, buffers):
        return wire.Decoder(buffers, on_ref=lambda rid, _t: self.objects[rid],
                            on_callback=self._callback, on_global=lambda name: self.namespace[name])

    def _callback(self, cid: int):
        def call_grader(*args, **kwargs):
            enc = self.encoder()
            reply = self.request(protocol.request(protocol.CALLBACK, id=cid, args=enc(list(args)),
                                                  kwargs=enc(kwargs)), enc)
            if not reply["ok"]:
                raise RuntimeError(f"the test's function raised {reply['error']}")
            return reply["value"]
        return call_grader

    # -- messaging ---------------------------------------------------------
    def request(self, message, enc) -> dict:
        wire.send(self.sock, message, enc)
        while True:
            header, buffers = wire.recv(self.reader)
            if protocol.is_reply(header):
                dec = self.decoder(buffers)
                if header.get("ok"):
                    header["value"] = dec(header.get("value"))
                return header
            self.serve(header, buffers)

    def serve(self, header, buffers) -> None:
        """Answer one request of the grader (a failure of the student's code is an error reply)."""
        enc = self.encoder()
        try:
            dec = self.decoder(buffers)
            op = protocol.operation(header, protocol.SANDBOX)
            if op is None:
                answer = protocol.reply(False, error={"type": "ProtocolError",
                                                      "message": f"unknown op {header.get('op')!r}"})
            else:
                answer = self.handlers[op](header, dec, enc)
            wire.send(self.sock, {**answer, "n": header.get("n")}, enc)
        except BaseException as exc:
            if isinstance(exc, (EOFError, wire.WireError, BrokenPipeError)):
                raise
            wire.send(self.sock, protocol.reply(False, error=_describe(exc), n=header.get("n")), self.encoder())

    def loop(self) -> None:
        while True:
            try:
                header, buffers = wire.recv(self.reader)
            except (EOFError, ConnectionError):
                return
            self.serve(header, buffers)

    # -- the operations (protocol.OPERATIONS served by the sandbox) ----------
    def exec_cell(self, header, dec, enc) -> dict:
        code, name = header["code"], header.get("name", "cell")
        try:
            exec(compile(code, f"<{name}>", "exec"), self.namespace)
            error = None
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt included
            error = _describe(exc)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        return protocol.reply(True, error=error)

    def call(self, header, dec, enc) -> dict:
        target = dec(header["target"])
        args, kwargs = dec(header.get("args", [])), dec(header.get("kwargs", {}))
        monitors = header.get("monitors") or []
        watch = self.Watch.for_monitors(monitors)
        try:
            value = _watched(watch, monitors, target, args, kwargs)
        except BaseException as exc:  # noqa: BLE001 - the watch's verdict comes first (the grader judges it)
            return protocol.reply(False, error=_describe(exc), observations=watch.observations())
        after = [[key, enc(a)] for key, a in [*enumerate(args), *kwargs.items()] if _changed(a, dec.received(a))]
        return protocol.reply(True, value=enc(value), after=after, observations=watch.observations())

    def getattr(self, header, dec, enc) -> dict:
        return protocol.reply(True, value=enc(getattr(dec(header["obj"]), header["name"])))

    def operator(self, header, dec, enc) -> dict:
        return protocol.reply(True, value=enc(protocol.OPERATORS[header["name"]](*dec(header["args"]))))

    def isinstance(self, header, dec, enc) -> dict:
        return protocol.reply(True, value=isinstance(dec(header["obj"]), dec(header["cls"])))

    def run_driver(self, header, dec, enc) -> dict:
        """A test's driver called with the student's pieces as arguments: a function of a module of
        ``protocol.DRIVERS`` (by name), or, while the grader still allows it, one defined from its source."""
        module, name = header.get("module"), header["name"]
        if module is not None:
            if not (isinstance(module, str) and module.startswith(protocol.DRIVERS + ".")):
                raise ValueError(f"drivers come from {protocol.DRIVERS}")
            import importlib
            driver = getattr(importlib.import_module(module), name)
        else:
            scope = {"__name__": "__driver__", "__builtins__": __builtins__}
            exec(compile(header["source"], "<driver>", "exec"), scope)
            driver = scope[name]
        args, kwargs = dec(header.get("args", [])), dec(header.get("kwargs", {}))
        monitors = header.get("monitors") or []
        watch = self.Watch.for_monitors(monitors)
        try:
            value = _watched(watch, monitors, driver, args, kwargs)
        except BaseException as exc:  # noqa: BLE001 - as for a call
            return protocol.reply(False, error=_describe(exc), observations=watch.observations())
        return protocol.reply(True, value=enc(value), observations=watch.observations())

    def release(self, header, dec, enc) -> dict:
        self.objects.clear()
        self.ids.clear()
        return protocol.reply(True, value=None)


def _watched(watch, monitors, target, args, kwargs):
    """``target(*args, **kwargs)`` under ``watch`` when there are monitors to satisfy (a call or a driver alike)."""
    if not monitors:
        return target(*args, **kwargs)
    with watch:
        return target(*args, **kwargs)


def _changed(value, received) -> bool:
    """Whether the grader's copy of this argument must be made what it is now: an array unlike what arrived
    (``received``: its shape, dtype and bytes; None for one that did not come in the request), a Generator."""
    import numpy as np
    if isinstance(value, np.random.Generator):
        return True
    return isinstance(value, np.ndarray) and received != (value.shape, value.dtype.str, value.tobytes())


def _describe(exc: BaseException) -> dict:
    text = str(exc)
    if len(text) > GRADER.sandbox_error_chars:
        text = text[:GRADER.sandbox_error_chars] + "…"
    return {"type": type(exc).__name__, "message": text}


def serve(sock: socket.socket, limits: Limits, nproc: int | None = None) -> None:
    """Become the sandbox: capped output, watched threads, limits, the audit hook, then answer requests."""
    workdir = os.getcwd()
    policy.capture_output(workdir, limits.output_bytes)
    from dlcourse.testing import sandbox_monitors
    try:
        with sandbox_monitors() as watch_class:
            policy.apply_limits(limits, nproc)
            if limits.audit_hook:  # off only in the tests that probe the OS boundary beneath it
                policy.install_audit_hook(workdir, watch_class.hook_functions())
            Server(sock, watch_class).loop()
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
    finally:
        os._exit(0)


def main() -> None:
    """The sandbox process (started by ``process.Process``, inside bubblewrap)."""
    config = json.loads(os.environ.pop(protocol.CONFIG_VARIABLE))
    sock = socket.socket(fileno=int(config["fd"]))
    import numpy  # noqa: F401 - preload what every chapter uses, before the policy
    for name in config.get("preload", []):
        __import__(name)
    serve(sock, Limits.from_wire(config["limits"]), config.get("nproc"))


if __name__ == "__main__":
    main()
