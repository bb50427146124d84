"""Before a class is graded, on both doors (``make grade`` and ``nbgrader autograde``): can a working
sandbox start here, and does it see the packages the chapters import, as the grader does?

If not, the fault is the machine's, not the students': grading stops before the first notebook with
one line saying why (``EnvironmentProblem``), instead of giving every student 0 for "limits reached".

    check(["ch01_perceptron"])   # None, or raises EnvironmentProblem(one line)
"""
from __future__ import annotations

import ast
import functools
import importlib.metadata

from .course import read, release_path, role
from .errors import EnvironmentProblem
from .job import PRELUDE
from .sandbox.client import Sandbox, SandboxError
from .sandbox.isolation import probe
from .settings import BWRAP

HEADER = "environment error, no notebook graded"
# what bubblewrap says where unprivileged user namespaces are refused (a container's seccomp profile,
# kernel.unprivileged_userns_clone=0, user.max_user_namespaces=0, an AppArmor restriction)
USERNS_SIGNS = ("namespace", "uid map", "operation not permitted", "unshare", "clone", "setuid")
WAY_OUT = ("grade on a host or VM that allows them, the hub keeping the exchange: Dask workers there "
           "(make grade ... SCHEDULER=tcp://host:8786), or a clone of the course there")


def sandbox_or_refusal(unsafe: bool, unsafe_switch: str) -> str | None:
    """The one rule of every door: None where a sandbox can be made here; else why not, when grading without
    one was asked for (``unsafe``); else ``EnvironmentProblem`` (the line says how to ask: ``unsafe_switch``)."""
    reason = probe()
    if reason is not None and not unsafe:
        raise EnvironmentProblem(no_sandbox_line(reason, unsafe_switch))
    return reason


def no_sandbox_line(reason: str, unsafe_switch: str) -> str:
    """The line for ``sandbox.isolation.probe()``'s reason: the missing capability and the way out;
    ``unsafe_switch``: how this door grades without a sandbox anyway."""
    anyway = f"to grade without one anyway (the students' code unconfined), pass {unsafe_switch}"
    if any(sign in reason.lower() for sign in USERNS_SIGNS):
        return (f"{HEADER}: this machine refuses the unprivileged user namespaces the sandbox needs "
                f"({reason}); {WAY_OUT}; or {anyway}")
    return f"{HEADER}: no sandbox for the students' code can be made here: {reason}; {anyway}"


def chapter_imports(chapters) -> list[str]:
    """The import statements of the given (read-only) code cells of these chapters, as released."""
    found = {"import dlcourse.testing"}
    for chapter in chapters:
        for cell in read(release_path(chapter)).cells:
            if cell.cell_type != "code" or role(cell) != "given":
                continue
            try:
                body = ast.parse(cell.source).body
            except SyntaxError:
                continue
            found.update(ast.unparse(node) for node in body if isinstance(node, (ast.Import, ast.ImportFrom)))
    return sorted(found)


VERSIONS = '''
def _preflight_versions(names):
    import sys
    return {name: str(getattr(sys.modules.get(name), "__version__", "")) for name in names}
'''


def _grader_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return ""


def check(chapters, unsafe: bool = False, unsafe_switch: str = "UNSAFE=1 (--unsafe-no-isolation)",
          scheduler: str | None = None) -> None:
    """Start one sandbox, run a trivial cell and the chapters' imports in it, compare package versions.

    ``unsafe``: no sandbox can be made and the instructor asked to grade anyway (the same check runs in
    the plain child process that then runs the students' code). ``scheduler``: a Dask scheduler whose
    workers grade; the check runs on one of them (they need sandboxes, the instructor's machine does
    not). Raises ``EnvironmentProblem``."""
    chapters = tuple(sorted(set(chapters)))
    if scheduler:
        from distributed import Client
        with Client(scheduler, timeout="30s") as client:
            problem = client.submit(check_here, chapters, False, pure=False).result()
        problem = problem and f"{problem} (on a Dask worker of {scheduler}, which must be able to make sandboxes)"
    else:
        problem = check_here(chapters, unsafe)
    if problem:
        raise EnvironmentProblem(problem.format(unsafe_switch=unsafe_switch))


def check_here(chapters: tuple, unsafe: bool) -> str | None:
    """The problem found on this machine (the line, with ``{unsafe_switch}`` to fill), or None."""
    return _check(tuple(chapters), unsafe, BWRAP.value())


@functools.lru_cache(maxsize=8)  # once per process and environment: the tests grade many classes
def _check(chapters: tuple, unsafe: bool, bwrap: str) -> str | None:
    try:
        reason = sandbox_or_refusal(unsafe, "{unsafe_switch}")
    except EnvironmentProblem as exc:
        return str(exc)
    imports = chapter_imports(chapters)
    modules = sorted({line.split()[1].split(".")[0] for line in imports} - {"math", "dlcourse"})
    box = Sandbox(unsafe=reason is not None)
    try:
        box.start()
        for name, code in (("prelude", PRELUDE), ("a trivial cell", "x = 1 + 1"),
                           ("the chapters' imports", "\n".join(imports)), ("versions", VERSIONS)):
            error = box.run_cell(code, f"pre-flight: {name}", 120)
            if error:
                return (f"{HEADER}: a sandbox started here fails {name} ({error['type']}: {error['message']}): "
                        "the packages it sees differ from the grader's")
        theirs = box.function("_preflight_versions")(modules)
    except SandboxError as exc:
        return (f"{HEADER}: a sandbox started here ended before running any student's code ({exc}): its Python "
                "or the packages it sees differ from the grader's")
    finally:
        box.close()
    differ = [f"{name} {theirs.get(name) or '?'} in the sandbox, {_grader_version(name)} in the grader"
              for name in modules if theirs.get(name) != _grader_version(name)]
    if differ:
        return f"{HEADER}: the sandbox and the grader see different packages ({'; '.join(differ)})"
    return None
