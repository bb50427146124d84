"""The grader, the course package and the benchmarks are layers: every import of ``autograder/``,
``dlcourse/``, ``benchmarks/`` and ``tests/``, the function-local ones included, parsed with ``ast``
(nothing imported), forms no cycle, and no production module imports a proof suite (``autograder/tests/``,
``tests/``)."""
from __future__ import annotations

import ast
import functools
from pathlib import Path

from autograder.course import ROOT

PACKAGES = ("autograder", "dlcourse", "benchmarks", "tests")
TESTS = ("autograder.tests", "tests")  # the proof suites; benchmarks are production: they import no test


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> its file, for every module of PACKAGES (a package is its ``__init__.py``)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ``known`` that the module ``name`` imports anywhere in its text (at the top, in a
    function, under ``if TYPE_CHECKING``): ``from a.b import c`` names ``a.b.c`` when that is a module,
    else ``a.b``; relative imports resolved against the module's package."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets += [f"{base}.{alias.name}" for alias in node.names]
    found = set()
    for target in targets:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)
    return found


@functools.cache  # parsed once for the tests that read it
def graph(root: Path = ROOT) -> dict[str, set[str]]:
    known = modules(root)
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def _production(name: str) -> bool:
    return not any(name == suite or name.startswith(suite + ".") for suite in TESTS)


def test_no_import_cycle():
    edges = graph()
    assert len(edges) > 40 and "autograder.job" in edges["autograder.classroom"]  # the parse sees real imports
    found = cycles(edges)
    assert not found, "import cycles: " + "; ".join(
        " <-> ".join(f"{m} (-> {', '.join(sorted(edges[m] & set(c)))})" for m in c) for c in found)


def test_no_production_module_imports_the_proof_suite():
    edges = graph()
    bad = sorted(f"{name} -> {target}" for name, targets in edges.items() if _production(name)
                 for target in targets if not _production(target))
    assert not bad, bad


def test_the_parse_finds_function_local_imports_and_cycles(tmp_path):
    """The checks can fail: a cycle closed only by a function-local relative import, and a production
    module importing a test module, are both found."""
    for package in PACKAGES:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "autograder" / "tests").mkdir()
    (tmp_path / "autograder" / "tests" / "__init__.py").write_text("")
    (tmp_path / "autograder" / "tests" / "helpers.py").write_text("")
    (tmp_path / "autograder" / "low.py").write_text("def f():\n    from . import high\n")
    (tmp_path / "autograder" / "high.py").write_text("from .low import f\nfrom autograder.tests.helpers import x\n")
    (tmp_path / "dlcourse" / "alone.py").write_text("import autograder.low\n")
    edges = graph(tmp_path)
    assert edges["autograder.high"] == {"autograder.low", "autograder.tests.helpers"}
    assert edges["dlcourse.alone"] == {"autograder.low"}
    assert cycles(edges) == [["autograder.high", "autograder.low"]]
