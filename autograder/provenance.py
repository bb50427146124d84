"""Whether each graded answer is the student's own NumPy, decided from its source in the grader (AST only).

The from-scratch watch (``dlcourse.testing.Watch``) runs in the student's process and reports back what it saw, so
a submission can forge its report. This check does not rest on that process: the trusted grader reads the code the
sandbox will run (the given cells, the student's answers and scratch cells of the sanitized notebook), and for
each graded name of the chapter follows every global name its code refers to, in any cell, transitively. A
graded name is refused (``refusals``) when what it reaches leaves what a NumPy answer may use:

- modules: ``ALLOWED_MODULES`` only (numpy, math and a few harmless ones), and the ``ALLOWED_NAMES`` of a few
  others imported by name (``from scipy.special import comb``); ``sys`` only for
  ``SYS_ATTRIBUTES`` (``sys.stderr`` for a debugging print); torch, ``dlcourse`` (but the helpers a given cell
  hands out), os, importlib, ... refused;
- builtins: ``SAFE_BUILTINS`` (and the exceptions); ``__import__``, ``exec``, ``eval``, ``compile``, ``open``,
  ``globals``/``vars``/``locals`` refused; ``getattr``/``setattr``/``delattr`` only called with a literal name;
- attributes: no dunder but ``SAFE_DUNDERS``, none of ``ESCAPE_ATTRIBUTES`` (the ways out of the
  language: ``modules``, ``f_globals``, ``__subclasses__``, ...) or ``NUMPY_DOORS`` (pickle's ``load``, ...);
- no patching: a store into an attribute of a module (``np.add = ...``) refuses the function that does it; done
  by the notebook's own top-level code (or a way out used there), it refuses every graded name.

Names the contract declares torch (``TORCH_ANSWERS``) are not refused for torch; reached from a NumPy answer,
they are read like any other code. Honest code (every reference solution, the proof suite's honest variations)
passes: ``autograder/tests/test_provenance.py``.
"""
from __future__ import annotations

import ast
import builtins
import functools
from dataclasses import dataclass

from .course import grade_id, role

# The graded names the contract (SYLLABUS.md, "(torch)") declares torch: their own torch use is not refused.
TORCH_ANSWERS = {"ch04_cnn": frozenset({"build_digits_cnn"})}

ALLOWED_MODULES = frozenset({
    "numpy", "math", "cmath", "random", "itertools", "functools", "collections", "typing", "dataclasses",
    "heapq", "bisect", "copy", "numbers", "fractions", "statistics", "string", "enum", "abc", "warnings", "time", "re",
    "matplotlib"})
# Names of other modules an answer may import by name (``from scipy.special import comb``): arithmetic no exercise
# asks the student to write (softmax, logsumexp, expit and the like are exercises, so they are not here).
ALLOWED_NAMES = {"scipy.special": frozenset({
    "comb", "binom", "perm", "factorial", "factorial2", "gamma", "gammaln", "beta", "betaln", "erf", "erfc",
    "erfinv", "erfcinv"})}
SYS_ATTRIBUTES = frozenset({"stdout", "stderr", "float_info", "int_info", "maxsize", "version", "version_info",
                            "getrecursionlimit", "setrecursionlimit"})
TORCH = ("torch",)
# A store into an attribute of these is a patch (what answers run, the course's checks, the sandbox's own watch);
# into another module's (torch.backends..., pandas' options) it is an experiment's setting.
PATCHABLE = ALLOWED_MODULES | {"sys", "builtins", "dlcourse", "autograder", "threading", "_thread", "importlib"}
SAFE_BUILTINS = frozenset({
    "abs", "all", "any", "ascii", "bin", "bool", "bytearray", "bytes", "callable", "chr", "classmethod", "complex",
    "dict", "dir", "divmod", "enumerate", "filter", "float", "format", "frozenset", "hasattr", "hash", "hex", "id",
    "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max", "min", "next", "object", "oct", "ord",
    "pow", "print", "property", "range", "repr", "reversed", "round", "set", "slice", "sorted", "staticmethod",
    "str", "sum", "super", "tuple", "type", "zip", "memoryview", "NotImplemented", "Ellipsis", "None", "True",
    "False", "__name__", "get_ipython", "display"}) | frozenset(
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException))
NAMED_ATTRIBUTE = frozenset({"getattr", "setattr", "delattr"})  # allowed only called with a literal name
SAFE_DUNDERS = frozenset({"__init__", "__new__", "__name__", "__qualname__", "__doc__", "__module__", "__class__",
                          "__len__", "__call__", "__array__", "__array_priority__", "__eq__", "__ne__", "__lt__",
                          "__le__", "__gt__", "__ge__", "__hash__", "__repr__", "__str__", "__format__", "__bool__",
                          "__float__", "__int__", "__index__", "__iter__", "__next__", "__getitem__", "__setitem__",
                          "__contains__", "__enter__", "__exit__", "__wrapped__", "__annotations__"}) | frozenset(
    f"__{prefix}{op}__" for op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "and", "or",
                                   "xor", "lshift", "rshift", "divmod") for prefix in ("", "r", "i")) | frozenset(
    {"__neg__", "__pos__", "__abs__", "__invert__", "__round__"})  # what honest classes define and reuse
ESCAPE_ATTRIBUTES = frozenset({  # the interpreter's ways to any module or namespace
    "modules", "meta_path", "path_hooks", "path_importer_cache", "import_module", "reload", "find_spec",
    "_getframe", "currentframe", "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "gi_frame", "gi_code",
    "cr_frame", "cr_code", "ag_frame", "tb_frame", "tb_next", "settrace", "setprofile", "get_type_hints",
    "ForwardRef", "_eval_type", "func_globals", "sys", "builtins", "importlib"})
NUMPY_DOORS = frozenset({  # numpy's (and matplotlib's) doors to pickle, C, files, other modules
    "load", "loads", "ctypeslib", "f2py", "distutils", "testing", "_pytesttester", "lookfor", "switch_backend",
    "read_array", "open_memmap"})
# (any other builtin not SAFE_BUILTINS, e.g. open: refused in answers, allowed in the notebook's own scratch code)
ESCAPE_NAMES = frozenset({"__import__", "exec", "eval", "compile", "globals", "vars", "locals", "__builtins__",
                          "__build_class__", "__loader__", "__spec__"})
ESCAPE_MODULES = frozenset({"importlib", "builtins", "ctypes", "gc", "inspect", "pickle", "marshal", "runpy",
                            "pkgutil", "zipimport", "_imp", "_frozen_importlib", "code", "codeop"})
MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "add", "__setitem__"})


@dataclass(frozen=True)
class Cell:
    """A code cell the sandbox runs: ``kind`` given (the release's), answer or scratch (the student's)."""
    index: int
    kind: str
    grade_id: str | None
    code: str

    @property
    def label(self) -> str:
        return f"cell {self.index} ({self.grade_id or self.kind})"


@dataclass(frozen=True)
class Finding:
    what: str      # "`torch`", "`.__globals__`", "a patch of `np.add`"
    cell: Cell
    line: int
    via: tuple = ()  # the names it was reached through

    def where(self, home: Cell | None) -> str:
        place = "its cell" if home is not None and self.cell == home else self.cell.label
        through = f", reached through {' → '.join(f'`{n}`' for n in self.via)}" if self.via else ""
        return f"line {self.line} of {place}{through}"


@dataclass(frozen=True)
class Refusal:
    """A graded name whose code leaves NumPy, and the first reference that does."""
    name: str
    finding: Finding
    tampering: bool = False  # found in the notebook's own top-level code: every graded name is refused
    home: Cell | None = None  # the answer cell of ``name``
    torch_allowed: bool = False  # a TORCH_ANSWERS name: refused for a way out, not for torch

    @property
    def message(self) -> str:
        """One line: the function, and the first offending reference with where it is."""
        found = self.finding
        verb = "holds" if found.what.startswith("a patch") else "refers to"
        if self.tampering:
            return f"`{self.name}` is not graded: the notebook's own code {verb} {found.what} ({found.where(None)})"
        head = "may use torch, not the interpreter's ways out" if self.torch_allowed else "must be written in NumPy"
        return f"`{self.name}` {head}: it {verb} {found.what} ({found.where(self.home)})"


@functools.lru_cache(maxsize=4096)
def _python(source: str) -> str:
    from IPython.core.inputtransformer2 import TransformerManager
    try:
        return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - the sandbox reports it
        return source


def cells_of(notebook) -> list[Cell]:
    """The code cells the sandbox runs (as ``job.sandbox_cells``), in order, as Python."""
    out = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code" or role(cell) in ("tests", "demo"):
            continue
        kind = "answer" if role(cell) == "solution" else \
            "scratch" if "scratch" in cell.metadata.get("tags", []) else "given"
        out.append(Cell(index, kind, grade_id(cell), _python(cell.source)))
    return out


@dataclass
class _Binding:
    kind: str            # "module", "helper" (what a given cell hands out), "code"
    cell: Cell
    node: ast.AST
    module: str = ""     # for "module": the module's dotted name (and the imported name, for from-imports)
    keys: tuple = ()     # for "code" statements under a top-level loop over literal names: {loop var: names}


def _root(node: ast.AST) -> ast.Name | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call, ast.Starred)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node if isinstance(node, ast.Name) else None


def _is_globals_call(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
        node.func.id in ("globals", "vars", "locals") and not node.args


def _top(module: str) -> str:
    return module.split(".")[0]


class _Notebook:
    def __init__(self, cells: list[Cell]):
        self.cells = cells
        self.bindings: dict[str, list[_Binding]] = {}
        self.wildcard: list[_Binding] = []  # top-level stores into globals() by a computed name
        self.given_imports: set[tuple[str, str]] = set()
        self.trees: dict[Cell, ast.Module] = {}
        for cell in cells:
            tree = _parsed(cell.code)
            if tree is None:
                continue  # it does not run: it binds nothing
            self.trees[cell] = tree
            self._collect(cell, tree.body, {})
            if cell.kind != "given":  # a function's ``global name``: the name is bound to what the function does
                for stmt in tree.body:
                    for name in _declared_global(stmt):
                        self._bind(name, _Binding("code", cell, stmt))
        self._mutating_calls()

    def _mutating_calls(self) -> None:
        """A student function or class that changes what a global holds (``_fns.append(arg)``, ``_obj.x = arg``, also
        through the functions it calls) binds that global to every top-level statement referring to it: what it is
        called with may end up there."""
        defs: dict[str, list] = {}
        for name, bindings in self.bindings.items():
            for b in bindings:
                if b.kind == "code" and isinstance(b.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    defs.setdefault(name, []).append(b.node)
        mutated = {name: set().union(*(_mutated_globals(n) for n in nodes)) for name, nodes in defs.items()}
        calls = {name: set().union(*(_names(n) for n in nodes)) & defs.keys() for name, nodes in defs.items()}
        changed = True
        while changed:
            changed = False
            for name in defs:
                for callee in calls[name]:
                    if not mutated[callee] <= mutated[name]:
                        mutated[name] |= mutated[callee]
                        changed = True
        for cell, tree in self.trees.items():
            if cell.kind == "given":
                continue
            for stmt in tree.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
                    continue
                for name in _names(stmt) & defs.keys():
                    for changed_global in mutated[name]:
                        self._bind(changed_global, _Binding("code", cell, stmt))

    def _bind(self, name: str, binding: _Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)

    # ---------------------------------------------------------------- what each top-level statement binds
    def _collect(self, cell: Cell, body, keys: dict) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self._bind(stmt.name, _Binding(self._given_kind(stmt) if cell.kind == "given" else "code", cell, stmt))
                continue
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                self._collect_import(cell, stmt)
                continue
            inner = dict(keys)
            if isinstance(stmt, (ast.For, ast.AsyncFor)) and isinstance(stmt.target, ast.Name) and \
                    isinstance(stmt.iter, (ast.List, ast.Tuple, ast.Set)) and \
                    all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in stmt.iter.elts):
                inner[stmt.target.id] = tuple(e.value for e in stmt.iter.elts)
            kind = self._given_kind(stmt) if cell.kind == "given" else "code"
            for name in self._stored(stmt, inner):
                binding = _Binding(kind, cell, stmt, keys=tuple(inner.items()))
                if name is None:
                    self.wildcard.append(binding)
                else:
                    self._bind(name, binding)
            for field in ("body", "orelse", "finalbody"):
                self._collect(cell, getattr(stmt, field, []) or [], inner)
            for handler in getattr(stmt, "handlers", []) or []:
                self._collect(cell, handler.body, inner)
            for case in getattr(stmt, "cases", []) or []:
                self._collect(cell, case.body, inner)

    def _given_kind(self, stmt) -> str:
        """What a given cell's definition or statement is: a helper the course hands out, or code to read when an
        answer reaches it because it uses torch (a model built in a given cell is no NumPy)."""
        torch_names = {name for name, bindings in self.bindings.items() for b in bindings
                       if b.kind == "module" and b.cell.kind == "given" and _top(b.module.partition(":")[0]) in TORCH}
        return "code" if _names(stmt) & torch_names else "helper"

    def _collect_import(self, cell: Cell, stmt) -> None:
        for alias in stmt.names:
            if isinstance(stmt, ast.Import):
                module = alias.name if alias.asname else _top(alias.name)
                name = alias.asname or _top(alias.name)
            else:
                module = "." * stmt.level + (stmt.module or "")
                name = alias.asname or alias.name
                if cell.kind == "given":
                    self.given_imports.add((module, alias.name))
            binding = _Binding("module", cell, stmt, module=module if isinstance(stmt, ast.Import)
                               else f"{module}:{alias.name}")
            if alias.name == "*":
                self.wildcard.append(binding)  # every global name may come from it
            else:
                self._bind(name, binding)

    def _stored(self, stmt, keys: dict) -> list:
        """The global names one top-level statement (its own header, not its nested body) stores into; None
        for a store by a computed name (``globals()[name] = ...``)."""
        header = [stmt] if not hasattr(stmt, "body") else \
            [getattr(stmt, f) for f in ("target", "iter", "test", "items", "subject") if getattr(stmt, f, None)]
        header = [n for part in header for n in (part if isinstance(part, list) else [part])]
        names: list = []
        for part in header:
            for node in ast.walk(part):
                target = None
                if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                    names.append(node.id)
                elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
                    target = node
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                        node.func.attr in MUTATORS:
                    target = node.func.value
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                        node.func.id in ("setattr", "delattr") and node.args:
                    target = node.args[0]
                if target is None:
                    continue
                if isinstance(target, ast.Subscript) and _is_globals_call(target.value) or \
                        isinstance(node, ast.Call) and _is_globals_call(target):
                    key = target.slice if isinstance(target, ast.Subscript) else None
                    names += list(self._keys(key, keys)) if key is not None and self._keys(key, keys) else [None]
                    continue
                root = _root(target)
                if root is not None:
                    names.append(root.id)
        return names

    @staticmethod
    def _keys(key, keys: dict) -> tuple:
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return (key.value,)
        if isinstance(key, ast.Name) and key.id in keys:
            return tuple(keys[key.id])
        return ()

    # ---------------------------------------------------------------- reading a graded name's code
    def first_finding(self, name: str, exempt: frozenset) -> Finding | None:
        """The first reference out of NumPy that ``name``'s code reaches, or None."""
        return _Reader(self, exempt, name).resolve(name, None, 0, ())

    def tampering(self) -> Finding | None:
        """A patch of a module or a way out of the language in the student's own top-level code, or None."""
        for cell, tree in self.trees.items():
            if cell.kind == "given":
                continue
            reader = _Reader(self, frozenset(), None, escapes_only=True)
            for stmt in tree.body:
                found = reader.visit(stmt, cell, (), {}, [], True)
                if found is not None:
                    return found
        return None


class _Reader:
    """Walks code with its scopes; a global name is followed to every binding the notebook gives it.

    ``escapes_only``: reading the notebook's own top-level code (and what it calls), where torch and the like
    are an experiment's business: only a way out of the language or a patch counts there."""

    def __init__(self, notebook: _Notebook, exempt: frozenset, graded: str | None, escapes_only: bool = False):
        self.nb, self.exempt, self.graded, self.escapes_only = notebook, exempt, graded, escapes_only
        self.seen: set[int] = set()

    def found(self, what: str, cell, line, via, escape: bool) -> Finding | None:
        """A finding, unless only escapes count and this is not one."""
        if cell is None or (self.escapes_only and not escape):
            return None
        return Finding(what, cell, line, via)

    # -- following global names
    def resolve(self, name: str, cell: Cell | None, line: int, via: tuple) -> Finding | None:
        bindings = self.nb.bindings.get(name, [])
        if not bindings and name in ESCAPE_NAMES:
            return self.found(f"`{name}`", cell, line, via, True)
        if not bindings and hasattr(builtins, name) and name not in SAFE_BUILTINS:
            return self.found(f"`{name}`", cell, line, via, False)
        for binding in bindings + self.nb.wildcard:
            found = self.binding(name, binding, cell, line, via)
            if found is not None:
                return found
        return None

    def binding(self, name: str, binding: _Binding, cell, line, via) -> Finding | None:
        if binding.kind == "helper":
            return None
        if binding.kind == "module":
            return self.module(name, binding, cell, line, via)
        if id(binding.node) in self.seen:
            return None
        self.seen.add(id(binding.node))
        if name in self.exempt and name == self.graded and not via:
            return None
        deeper = via + (name,) if (name != self.graded or via) and cell is not None else via
        top = not isinstance(binding.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))
        return self.visit(binding.node, binding.cell, deeper, dict(binding.keys), [], top)

    def module(self, name: str, binding: _Binding, cell, line, via) -> Finding | None:
        module, _, imported = binding.module.partition(":")
        imported = name if imported == "*" else imported  # from module import *: this name of it
        top = _top(module)
        if binding.cell.kind == "given" and top not in TORCH:
            return None  # what the course hands out: numpy, its helpers
        if imported and (module, imported) in self.nb.given_imports and top not in TORCH:
            return None  # the same helper a given cell imports
        if top in ALLOWED_MODULES and not module.startswith(".") and imported not in ESCAPE_ATTRIBUTES | NUMPY_DOORS:
            return None
        if imported in ALLOWED_NAMES.get(module, ()):
            return None  # from scipy.special import comb
        if top == "sys" and (not imported or imported in SYS_ATTRIBUTES):
            return None  # its attributes are checked where they are read (SYS_ATTRIBUTES)
        shown = f"`{name}`" if name == top else f"`{name}` ({module})"
        return self.found(shown, cell, line, via, top in ESCAPE_MODULES or imported in ESCAPE_ATTRIBUTES)

    # -- reading code
    def visit(self, node, cell, via, keys, scopes, top) -> Finding | None:
        """``top``: a top-level statement (where ``globals()[name]`` with literal names is a binding's business)."""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            outer: list = [] if isinstance(node, ast.Lambda) else list(node.decorator_list)
            if isinstance(node, ast.ClassDef):
                outer += node.bases + [k.value for k in node.keywords]
            else:
                args = node.args
                outer += args.defaults + [d for d in args.kw_defaults if d is not None]
                outer += [a.annotation for a in args.args + args.posonlyargs + args.kwonlyargs
                          + [args.vararg, args.kwarg] if a is not None and a.annotation is not None]
                if getattr(node, "returns", None) is not None:
                    outer.append(node.returns)
            for child in outer:
                found = self.visit(child, cell, via, keys, scopes, top)
                if found is not None:
                    return found
            is_class = isinstance(node, ast.ClassDef)
            if self.escapes_only and top and not is_class and all(c for _, c in scopes):
                return None  # a top-level function's body runs when it is called: read where it is reached
            scope = (_locals(node), is_class)
            inner_top = top and is_class and self.escapes_only  # a top-level class's body runs where it stands
            for child in (node.body if isinstance(node.body, list) else [node.body]):
                found = self.visit(child, cell, via, keys, scopes + [scope], inner_top)
                if found is not None:
                    return found
            return None
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            scope = (_locals(node), False)
            for child in ast.iter_child_nodes(node):
                found = self.visit(child, cell, via, keys, scopes + [scope], top)
                if found is not None:
                    return found
            return None
        found = self.check(node, cell, via, keys, scopes, top)
        if found is not None:
            return found
        if top and isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.target, ast.Name) and \
                isinstance(node.iter, (ast.List, ast.Tuple, ast.Set)) and \
                all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.iter.elts):
            keys = {**keys, node.target.id: tuple(e.value for e in node.iter.elts)}  # for name in [literal names]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and self._is_sys(node.value, scopes):
            return None  # sys.<attribute>: checked
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in NAMED_ATTRIBUTE \
                and not self._local(node.func.id, scopes):
            children = node.args + [k.value for k in node.keywords]
        elif _globals_use(node):
            children = [] if not isinstance(node, ast.Call) else node.args[1:]  # its names: checked
        else:
            children = list(ast.iter_child_nodes(node))
        for child in children:
            found = self.visit(child, cell, via, keys, scopes, top)
            if found is not None:
                return found
        return None

    def _local(self, name: str, scopes) -> bool:
        for index in range(len(scopes) - 1, -1, -1):
            names, is_class = scopes[index]
            if is_class and index != len(scopes) - 1:
                continue
            if name in names:
                return True
        return False

    def _is_sys(self, name: ast.Name, scopes) -> bool:
        if self._local(name.id, scopes):
            return False
        return any(b.kind == "module" and b.module == "sys" for b in self.nb.bindings.get(name.id, []))

    def check(self, node, cell, via, keys, scopes, top) -> Finding | None:
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and not self._local(node.id, scopes):
            if node.id in NAMED_ATTRIBUTE:
                return self.found(f"`{node.id}` with a computed name", cell, line, via, node.id != "getattr")
            if node.id in ESCAPE_NAMES and node.id not in self.nb.bindings:
                return self.found(f"`{node.id}`", cell, line, via, True)
            if self._is_sys(node, scopes):
                return self.found(f"`{node.id}`", cell, line, via, False)
            return self.resolve(node.id, cell, line, via)
        if isinstance(node, ast.Attribute):
            attr = node.attr
            if _escaping(attr):
                return self.found(f"`.{attr}`", cell, line, via, True)
            if attr in NUMPY_DOORS:
                return self.found(f"`.{attr}`", cell, line, via, False)
            if isinstance(node.value, ast.Name) and self._is_sys(node.value, scopes) and attr not in SYS_ATTRIBUTES:
                return self.found(f"`{node.value.id}.{attr}`", cell, line, via, False)
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                patched = self._patched_module(node.value, scopes)
                if patched is not None:
                    return self.found(f"a patch of `{ast.unparse(node)}`", cell, line, via, True)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in NAMED_ATTRIBUTE \
                and not self._local(node.func.id, scopes):
            name = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                return self.found(f"`{node.func.id}` with a computed name", cell, line, via, node.func.id != "getattr")
            attr = name.value
            if _escaping(attr):
                return self.found(f"`{node.func.id}(..., {attr!r})`", cell, line, via, True)
            if attr in NUMPY_DOORS:
                return self.found(f"`{node.func.id}(..., {attr!r})`", cell, line, via, False)
            if node.func.id != "getattr" and node.args and self._patched_module(node.args[0], scopes) is not None:
                return self.found(f"a patch of `{ast.unparse(node.args[0])}.{attr}`", cell, line, via, True)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                module = alias.name if isinstance(node, ast.Import) else "." * node.level + (node.module or "")
                imported = "" if isinstance(node, ast.Import) else alias.name
                if imported and (module, imported) in self.nb.given_imports and _top(module) not in TORCH:
                    continue
                if _top(module) in ESCAPE_MODULES or imported in ESCAPE_ATTRIBUTES:
                    return self.found(f"`{module}`", cell, line, via, True)
                if _top(module) == "sys" and (not imported or imported in SYS_ATTRIBUTES):
                    continue
                if imported in ALLOWED_NAMES.get(module, ()):
                    continue
                if _top(module) not in ALLOWED_MODULES or module.startswith(".") or imported in NUMPY_DOORS:
                    return self.found(f"`{module}`", cell, line, via, False)
        if _globals_use(node):
            call = node.value if isinstance(node, ast.Subscript) else node.func.value
            if not top:
                return self.found(f"`{call.func.id}()`", cell, line, via, True)
            key = node.slice if isinstance(node, ast.Subscript) else (node.args[0] if node.args else None)
            names = _Notebook._keys(key, keys) if key is not None else ()
            if any(n.startswith("__") for n in names):
                return self.found(f"`{names[0]}`", cell, line, via, True)
            if isinstance(node, ast.Call) and node.func.attr not in ("get", "setdefault", "pop") or not names:
                return self.found(f"`{call.func.id}()` by a computed name", cell, line, via,
                                  isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load))
            if isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load):
                return None  # a binding of these names: read where they are reached
            for name in names:
                found = self.resolve(name, cell, line, via)
                if found is not None:
                    return found
        return None

    def _patched_module(self, target, scopes) -> str | None:
        """The module of PATCHABLE whose attribute, or an attribute's attribute, a store into ``target`` changes."""
        root = _root(target)
        if root is None or self._local(root.id, scopes):
            return None
        for binding in self.nb.bindings.get(root.id, []):
            if binding.kind == "module":
                module = binding.module.partition(":")[0] or root.id
                if _top(module) in PATCHABLE:
                    return module
        return None


def _escaping(attr: str) -> bool:
    """An attribute that leads out of the language: one of ESCAPE_ATTRIBUTES, or a dunder not SAFE_DUNDERS."""
    return attr in ESCAPE_ATTRIBUTES or (attr.startswith("__") and attr not in SAFE_DUNDERS)


def _globals_use(node) -> bool:
    """``globals()[key]`` or ``globals().method(...)`` (also vars(), locals())."""
    return (isinstance(node, ast.Subscript) and _is_globals_call(node.value)) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is_globals_call(node.func.value))


def _depth(code: str) -> int:
    """How deeply a cell's syntax tree nests (0 when it does not parse)."""
    try:
        stack, deepest = [(ast.parse(code), 1)], 0
    except (SyntaxError, ValueError):
        return 0
    except (RecursionError, MemoryError):
        return 1 << 30  # deeper than the parser goes
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack += [(child, depth + 1) for child in ast.iter_child_nodes(node)]
    return deepest


def _names(node) -> set[str]:
    """Every name a piece of code loads."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


@functools.lru_cache(maxsize=4096)
def _parsed(code: str) -> ast.Module | None:
    """A cell's syntax tree (shared, never changed: the given cells of a class are parsed once), None if invalid."""
    try:
        return ast.parse(code)
    except SyntaxError:
        return None


def _declared_global(stmt) -> tuple[str, ...]:
    """The names a function inside this top-level statement declares ``global``."""
    return tuple(name for n in ast.walk(stmt) if isinstance(n, ast.Global) for name in n.names)


def _mutated_globals(node) -> set[str]:
    """The global names whose contents a definition changes: stores into their items or attributes, their
    mutating methods, setattr on them (every name bound anywhere inside it counts as its own)."""
    nodes = list(ast.walk(node))
    own = {n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    own |= {a.arg for n in nodes if isinstance(n, ast.arguments)
            for a in n.args + n.posonlyargs + n.kwonlyargs + [x for x in (n.vararg, n.kwarg) if x is not None]}
    declared = {name for n in nodes if isinstance(n, ast.Global) for name in n.names}
    found = set()
    for n in nodes:
        target = None
        if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store, ast.Del)):
            target = n.value
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in MUTATORS:
            target = n.func.value
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("setattr", "delattr") \
                and n.args:
            target = n.args[0]
        root = _root(target) if target is not None else None
        if root is not None and (root.id not in own or root.id in declared):
            found.add(root.id)
    return found


def _locals(node) -> set[str]:
    """The names local to a function, lambda, class body or comprehension (not its nested scopes')."""
    names: set[str] = set()
    declared: set[str] = set()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = node.args
        names |= {a.arg for a in args.args + args.posonlyargs + args.kwonlyargs}
        names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        body = node.body if isinstance(node.body, list) else [node.body]
    elif isinstance(node, ast.ClassDef):
        body = node.body
    else:
        body = [g.target for g in node.generators]
        names |= {n.id for g in body for n in ast.walk(g) if isinstance(n, ast.Name)}
        return names
    stack = list(body)
    while stack:
        child = stack.pop()
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(child.name)
            stack += child.decorator_list
            continue
        if isinstance(child, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            stack += [n.value for n in ast.walk(child) if isinstance(n, ast.NamedExpr)]
            names |= {n.target.id for n in ast.walk(child) if isinstance(n, ast.NamedExpr)}
            continue
        if isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
            names.add(child.id)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            names |= {a.asname or a.name.split(".")[0] for a in child.names}
        elif isinstance(child, ast.ExceptHandler) and child.name:
            names.add(child.name)
        elif isinstance(child, ast.Global):
            declared |= set(child.names)
        elif isinstance(child, (ast.MatchAs, ast.MatchStar)) and child.name:
            names.add(child.name)
        stack += list(ast.iter_child_nodes(child))
    return names - declared


def refusals(notebook, chapter: str, graded) -> list[Refusal]:
    """The graded names of ``chapter`` (``graded``, in order) that the notebook's code refuses, each with its
    first offending reference; every one of them when the notebook's own top-level code tampers."""
    cells = cells_of(notebook)
    try:
        return _refusals(cells, chapter, graded)
    except (RecursionError, MemoryError) as exc:  # code nested far deeper than any honest answer: not read
        student = [c for c in cells if c.kind != "given"] or [Cell(0, "scratch", None, "")]
        where = max(student, key=lambda c: _depth(c.code))
        found = Finding(f"code nested too deeply to be read ({type(exc).__name__})", where, 1)
        return [Refusal(name, found, True) for name in graded]


def _refusals(cells: list[Cell], chapter: str, graded) -> list[Refusal]:
    nb = _Notebook(cells)
    homes = {c.grade_id: c for c in cells if c.kind == "answer"}
    exempt = TORCH_ANSWERS.get(chapter, frozenset())
    tampered = nb.tampering()
    if tampered is not None:
        return [Refusal(name, tampered, True) for name in graded]
    out = []
    for name in graded:
        found = nb.first_finding(name, exempt) if name not in exempt else \
            _Reader(nb, frozenset(), name, escapes_only=True).resolve(name, None, 0, ())  # torch, but no way out
        if found is not None:
            out.append(Refusal(name, found, False, homes.get(name), name in exempt))
    return out


def refers_to(source: str, names) -> set[str]:
    """Which of ``names`` a test cell's source refers to (as a name it loads)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        import re
        return {n for n in names if re.search(rf"\b{re.escape(n)}\b", source)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in names}


def problem_lines(refused: list[Refusal]) -> list[str]:
    """One line per refused name (one line in all when the notebook's own code tampers)."""
    if refused and refused[0].tampering:
        first = refused[0]
        verb = "holds" if first.finding.what.startswith("a patch") else "refers to"
        return [f"no answer is graded: the notebook's own code {verb} {first.finding.what} "
                f"({first.finding.where(None)})"]
    return [r.message for r in refused]
