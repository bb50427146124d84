"""Grading machines that cannot grade, simulated through ``AUTOGRADER_BWRAP`` (the bubblewrap the grader runs).

    env["AUTOGRADER_BWRAP"] = refusing_user_namespaces(folder)   # a container where userns are refused
    env["AUTOGRADER_BWRAP"] = hiding_a_package(folder, "matplotlib")  # the sandbox sees other packages

Both are small executables written into ``folder`` (mode 0755: an unprivileged account can run them).
"""
from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

# bubblewrap's own words where unprivileged user namespaces are refused (Debian's bubblewrap 0.8)
USERNS_REFUSED = "bwrap: setting up uid map: Permission denied"


def _executable(path: Path, text: str) -> str:
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


def refusing_user_namespaces(folder: Path) -> str:
    return _executable(folder / "bwrap-userns-refused", f"#!/bin/sh\necho '{USERNS_REFUSED}' >&2\nexit 1\n")


def hiding_a_package(folder: Path, module: str) -> str:
    """A bubblewrap that works, but whose sandboxes see an empty folder where ``module`` is installed."""
    location = os.path.dirname(importlib.util.find_spec(module).origin)
    return _executable(folder / f"bwrap-without-{module}", f"""#!/usr/bin/python3
import os, sys
args = sys.argv[1:]
end = args.index("--")  # the options end where the command begins
args[end:end] = ["--tmpfs", {location!r}]
os.execv({shutil.which("bwrap")!r}, ["bwrap", *args])
""")
