"""The submissions the grader's own suite grades: attacks, honest variations, broken notebooks, mistakes.

Each builder returns a notebook (or raw text) built on the release the way a
student's file would be. ``test_grading.py`` grades them all in one real
``make grade`` run and checks what each earned.
"""
from __future__ import annotations

import copy
from collections import defaultdict

import nbformat

from autograder.course import chapters, grade_id, graded_names, read, role, source_path
from autograder.provenance import TORCH_ANSWERS
from autograder.submissions import filled, reference, untouched
from autograder.tests import boundary_attacks

# ------------------------------------------------------------------ tampering
# Every attack starts from the untouched release: it must earn no more than it (0).

PATCH_COMPARATORS = """
import numpy as np, builtins
import dlcourse.testing as t
np.allclose = lambda *a, **k: True
np.array_equal = lambda *a, **k: True
np.testing.assert_allclose = lambda *a, **k: None
t.assert_close = t.assert_equal = t.assert_shape = t.assert_unchanged = lambda *a, **k: None
t.check.__exit__ = lambda self, *exc: True
builtins.isinstance = lambda *a: True
class _Never(Exception): pass
builtins.AssertionError = _Never
"""

INTERPRETER_HOOKS = """
import sys
sys.excepthook = lambda *a: None
try:
    sys.settrace(lambda *a: None)
except Exception:
    pass
try:
    get_ipython().set_custom_exc((Exception,), lambda *a, **k: None)
except Exception:
    pass
import atexit
atexit.register(lambda: print("all tests passed"))
"""

READ_SOLUTIONS = """
import glob, json, os
found = []
for pattern in ["/work/main/solutions/*/*.ipynb", "../../solutions/*/*.ipynb", os.path.expanduser("~/*"),
                "/tmp/*", "/work/*/*"]:
    try:
        found += glob.glob(pattern)
    except Exception:
        pass
for path in found:
    try:
        nb = json.load(open(path))
    except Exception:
        continue
    for cell in nb.get("cells", []):
        src = "".join(cell.get("source", ""))
        if "BEGIN SOLUTION" in src:
            exec(src.replace("### BEGIN SOLUTION", "").replace("### END SOLUTION", ""), globals())
import autograder.reference as r
globals().update(vars(r.load(__import__("os").path.basename(__import__("os").getcwd()))))
"""

ESCAPE_SANDBOX = """
import os, signal
for attempt in (lambda: os.system("cp -r /work/main/solutions /tmp/stolen"),
                lambda: os.kill(os.getppid(), signal.SIGKILL),
                lambda: __import__("subprocess").run(["sh", "-c", "echo pwned > /tmp/pwned"]),
                lambda: __import__("ctypes").CDLL(None),
                lambda: open("/work/main/grading/gradebook.db", "rb").read(),
                lambda: __import__("socket").create_connection(("127.0.0.1", 22))):
    try:
        attempt()
    except Exception:
        pass
"""

EXIT_KERNEL = "import os\nos._exit(0)\n"
HANG_KERNEL = "while True:\n    pass\n"
FLOOD_OUTPUT = ("import sys\nfor _ in range(200000):\n    sys.stdout.write('x' * 100 + '\\n')\n"
                "    print('PASSED', file=sys.stderr)\n")

ALWAYS_EQUAL = '''
class _Anything:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __bool__(self): return True
    def __float__(self): return 0.0
    def __getattr__(self, name): return self
    def __call__(self, *a, **k): return self
    def __iter__(self): return iter([self, self, self])
    def __len__(self): return 3
    def __getitem__(self, i): return self
    def __array__(self, *a, **k):
        import numpy as np
        return np.zeros(3)
'''


def _scratch(nb, code, at_end=True):
    nb = copy.deepcopy(nb)
    cell = nbformat.v4.new_code_cell(code)
    nb.cells.insert(len(nb.cells) if at_end else 0, cell)
    return nb


def _edit_tests(chapter, how):
    nb = copy.deepcopy(untouched(chapter))
    cells = []
    for cell in nb.cells:
        if role(cell) == "tests":
            if how == "empty":
                cell.source = "pass"
            elif how == "delete":
                continue
            elif how == "relabel":
                cell.metadata["nbgrader"].update(grade=False, solution=True, locked=False)
                cell.source = "pass"
            elif how == "points":
                cell.metadata["nbgrader"]["points"] = 1000
                cell.source = "assert True"
            elif how == "fake_outputs":
                cell.outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": "1000"},
                                                       execution_count=1)]
        cells.append(cell)
    nb.cells = cells
    if how == "forged":
        forged = nbformat.v4.new_code_cell("pass")
        forged.metadata["nbgrader"] = {"grade": True, "grade_id": "test_bonus", "locked": True, "points": 100,
                                       "schema_version": 3, "solution": False, "task": False}
        nb.cells.append(forged)
    return nb


def _always_equal(chapter):
    replace = {}
    for name in graded_names(read(source_path(chapter))):
        replace[name] = ALWAYS_EQUAL + f"\ndef {name}(*args, **kwargs):\n    return _Anything()\n{name}_ = {name}\n"
    return filled(chapter, replace, answers=None)


def _trivial(chapter):
    """Every graded name answers trivially: a constant 0, or its first argument, in turns."""
    bodies = ["return 0", "return args[0] if args else None"]
    replace = {name: f"def {name}(*args, **kwargs):\n    {bodies[i % 2]}\n"
               for i, name in enumerate(graded_names(read(source_path(chapter))))}
    return filled(chapter, replace, answers=None)


def attacks() -> dict[str, tuple[str, object]]:
    """name -> (chapter, notebook). Spread over the chapters so every chapter is attacked."""
    chs = chapters()
    pick = lambda i: chs[i % len(chs)]  # noqa: E731
    return {
        "patch_comparators": (pick(0), _scratch(untouched(pick(0)), PATCH_COMPARATORS, at_end=False)),
        "patch_comparators_late": (pick(1), _scratch(untouched(pick(1)), PATCH_COMPARATORS)),
        "interpreter_hooks": (pick(2), _scratch(untouched(pick(2)), INTERPRETER_HOOKS, at_end=False)),
        "read_solutions": (pick(3), _scratch(untouched(pick(3)), READ_SOLUTIONS)),
        "escape_sandbox": (pick(4), _scratch(untouched(pick(4)), ESCAPE_SANDBOX)),
        "exit_kernel": (pick(5), _scratch(untouched(pick(5)), EXIT_KERNEL)),
        "hang_kernel": (pick(6), _scratch(untouched(pick(6)), HANG_KERNEL)),
        "flood_output": (pick(7), _scratch(untouched(pick(7)), FLOOD_OUTPUT)),
        "empty_test_cells": (pick(0), _edit_tests(pick(0), "empty")),
        "delete_test_cells": (pick(1), _edit_tests(pick(1), "delete")),
        "relabel_test_cells": (pick(2), _edit_tests(pick(2), "relabel")),
        "inflate_points": (pick(3), _edit_tests(pick(3), "points")),
        "fake_outputs": (pick(4), _edit_tests(pick(4), "fake_outputs")),
        "forged_graded_cell": (pick(5), _edit_tests(pick(5), "forged")),
        **{f"always_equal_results_{ch}": (ch, _always_equal(ch)) for ch in chs},
        **{f"trivial_answers_{ch}": (ch, _trivial(ch)) for ch in chs},
        **boundary_attacks.attacks(),
    }


# ------------------------------------------------------------------ honest variations
# Each starts from the reference: it must earn exactly what the reference earns.

NOISY = """
import functools, sys, warnings
def _noisy(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        print("calling", f.__name__)
        print("debug output on stderr", file=sys.stderr)
        warnings.warn("a warning from the student's function")
        return f(*args, **kwargs)
    return wrapper
for _name in {names!r}:
    _f = globals().get(_name)
    if callable(_f) and not isinstance(_f, type):
        globals()[_name] = _noisy(_f)
"""

GLOBAL_SEED = "import random\nimport numpy as np\nnp.random.seed(1234)\nrandom.seed(99)\n"
SCRATCH_WORK = ("import math, itertools, collections\nimport numpy as np\nimport matplotlib.pyplot as plt\n"
                "plt.plot(np.arange(5))\nplt.show()\nscratch = [math.sqrt(i) for i in range(10)]\nscratch\n")
LONG_OUTPUT = "for i in range(100000):\n    print('line', i)\n"
RAISING_SCRATCH = "1 / 0\n"


def honest() -> dict[str, tuple[str, object]]:
    chs = chapters()
    out = {}
    for i, chapter in enumerate(chs):
        # the noisy loop wraps the NumPy answers: one variable bound in turn to a torch answer and to NumPy ones
        # makes each of them reach torch as provenance reads code (its documented limit)
        names = [n for n in graded_names(read(source_path(chapter))) if n not in TORCH_ANSWERS.get(chapter, ())]
        variant = ["noisy", "seed_and_scratch", "long_output"][i % 3]
        nb = reference(chapter)
        if variant == "noisy":
            nb = _scratch(nb, NOISY.format(names=names))
        elif variant == "seed_and_scratch":
            nb = _scratch(_scratch(nb, GLOBAL_SEED, at_end=False), SCRATCH_WORK)
            nb = _scratch(nb, RAISING_SCRATCH)
        else:
            nb = _scratch(nb, LONG_OUTPUT)
            nb.cells.append(nbformat.v4.new_markdown_cell("My notes: *scratch* markdown."))
        out[f"{variant}_{chapter}"] = (chapter, nb)
    return out


# ------------------------------------------------------------------ broken submissions

def broken() -> dict[str, tuple[str, object]]:
    chs = chapters()
    a, b = chs[0], chs[1 % len(chs)]
    last_a, last_b = graded_names(read(source_path(a)))[-1], graded_names(read(source_path(b)))[-1]
    # the process dies in the student's NumPy (a read far outside an array: SIGSEGV); os._exit would be refused
    # before it ran (autograder.provenance)
    crash_in_function = filled(a, {last_a: f"import numpy as np\ndef {last_a}(*a, **k):\n    return np.lib."
                                           "stride_tricks.as_strided(np.zeros(1), (10 ** 9,), (10 ** 7,)).sum()\n"})
    hang_in_function = filled(b, {last_b: f"def {last_b}(*a, **k):\n    while True:\n        pass\n"})
    return {
        "invalid_json": (a, '{"cells": [ this is not json'),
        "not_a_notebook": (b, '{"hello": "world"}'),
        "crash_in_function": (a, crash_in_function),
        "hang_in_function": (b, hang_in_function),
        "memory_hog": (a, _scratch(reference(a), "hog = bytearray(50 * 1024 ** 3)\n")),
    }


# ------------------------------------------------------------------ plausible mistakes

def _names_in(code: str, names: set[str]) -> set[str]:
    import ast
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in names} | \
        {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name in names}


def mutant_groups(per_function: int = 3, per_integration_check: int = 1
                  ) -> list[tuple[str, dict[str, str], list[tuple[str, str, str]]]]:
    """The mistakes proven through `make grade`, as submissions carrying several at once.

    The first ``per_function`` mistakes of each function, and the first ``per_integration_check``
    of each integration check's INTEGRATION list (every other one is proven in the kernel suite,
    test_mistakes_in_kernel.py, which runs what this leaves out).
    Returns (chapter, {function: code}, [(function, mistake, test cell)]) per submission: each
    label names a test cell the mistake must lose points in (its own, or the integration check).
    Two mistakes share a submission only when neither the mistaken code nor the test cells of one
    mention the other function, so each test cell still sees exactly one mistake.
    """
    from autograder.course import Chapter
    from autograder.tests.mutants import integration, load
    groups = []
    for chapter in chapters():
        source = Chapter.load(chapter)
        names = set(graded_names(source.source))
        tests = {grade_id(c): c.source for c in source.cells("tests")}
        extra = defaultdict(list)  # (function, mistake) -> the integration cells it must fail
        for cell, entries in integration(chapter).items():
            for entry in entries[:per_integration_check]:
                extra[entry].append(cell)
        pending = [(f, m, code) for f, wrong in load(chapter).items()
                   for i, (m, code) in enumerate(wrong.items()) if i < per_function or (f, m) in extra]
        chapter_groups: list[dict] = []
        for function, mistake, code in pending:
            cells = [f"test_{function}", *extra[(function, mistake)]]
            touches = (_names_in(code, names) | set().union(*(_names_in(tests.get(c, ""), names) for c in cells))) \
                - {function}
            for group in chapter_groups:
                clash = function in group["functions"] or touches & group["functions"] or \
                    any(function in t for t in group["touches"]) or set(cells) & group["cells"]
                if not clash:
                    break
            else:
                group = {"functions": set(), "touches": [], "replace": {}, "labels": [], "cells": set()}
                chapter_groups.append(group)
            group["functions"].add(function)
            group["touches"].append(touches)
            group["cells"].update(cells)
            group["replace"][function] = code
            group["labels"] += [(function, mistake, cell) for cell in cells]
        groups += [(chapter, g["replace"], g["labels"]) for g in chapter_groups]
    return groups


def proven_by_grading() -> set[tuple[str, str, str, str]]:
    """(chapter, function, mistake, test cell) of every label `make grade`'s proof checks."""
    return {(chapter, *label) for chapter, _, labels in mutant_groups() for label in labels}



# ------------------------------------------------------------------ hostile inputs (issue 11: findings 5, 7, 9, 10)
# Not notebooks that attack the checks, but names, links and text that attack the grader's
# outputs: keyed by (student folder name, chapter) as written on disk, graded in the same
# `make grade` run. Symbolic links are never followed (graded as the untouched release);
# lone surrogates, formula-like names, forged log lines and markup in a student's cells must
# neither crash, nor leak into a spreadsheet formula, a second log line or a running script.

FORGED_LOG_LINE = "2026-01-01 00:00:00,000 INFO graded every notebook: all full marks"
FORMULA_NAMES = ("=1+1", "-1+1", "@SUM(1;1)")
XSS_MARKDOWN = (
    "# Scratch <b>notes</b>\n\n"
    "<script>window.__pwned = 'script'; document.title = 'pwned';</script>\n\n"
    "<img src=\"x\" onerror=\"window.__pwned = 'onerror'; document.title = 'pwned'\">\n\n"
    "<svg onload=\"window.__pwned = 'svg'\"><circle r=\"4\"/></svg>\n\n"
    "<iframe srcdoc=\"<script>parent.__pwned = 'iframe'</script>\"></iframe>\n\n"
    "[a link](javascript:window.__pwned='link') and <a href=\"javascript:window.__pwned='a'\">another</a>\n\n"
    "<style>body { display: none }</style>\n\n"
    "<form action=\"https://example.invalid\"><input name=\"q\"></form>\n\n"
    "| a | b |\n|---|---|\n| 1 | $x^2$ |\n"
)
XSS_MESSAGE = "<img src=x onerror=\"window.__pwned = 'message'\"><script>window.__pwned = 'message'</script>"


def _hostile_chapter() -> str:
    return chapters()[0]


def xss_notebook(chapter: str) -> nbformat.NotebookNode:
    """The reference, plus markup that would run script if the feedback rendered it as it is: in scratch
    markdown cells, in the free-response answers, and in the message of an exception a scratch cell raises."""
    nb = filled(chapter, answers=XSS_MARKDOWN)
    nb.cells.append(nbformat.v4.new_markdown_cell(XSS_MARKDOWN))
    nb.cells.append(nbformat.v4.new_code_cell(f"raise ValueError({XSS_MESSAGE!r})"))
    return nb


def surrogate_notebook(chapter: str) -> str:
    """The reference as raw JSON whose strings hold lone surrogates (``"\\ud800"`` spelled out in the JSON):
    in a markdown cell, a free-response answer, and the messages of exceptions raised by a scratch cell and by
    a graded function's own scratch copy."""
    nb = filled(chapter, answers="An answer \ud800 with a lone surrogate.")
    nb.cells.append(nbformat.v4.new_markdown_cell("Notes \udfff\ud83d: lone surrogates <b>and</b> markup."))
    nb.cells.append(nbformat.v4.new_code_cell("raise ValueError(chr(0xD800) + ' and \\udcff in a message')"))
    import json
    return json.dumps(nb)  # ensure_ascii: the surrogates are written as \ud800 escapes, as a JSON file may


def surrogate_message_notebook(chapter: str) -> nbformat.NotebookNode:
    """A graded function that raises with a lone surrogate and markup in its message: the message reaches
    the check results, the feedback, the report and the log."""
    last = graded_names(read(source_path(chapter)))[-1]
    return filled(chapter, {last: f"def {last}(*args, **kwargs):\n"
                                  f"    raise ValueError(chr(0xDCFF) + {XSS_MESSAGE!r})\n"})


def hostile_inputs() -> dict[tuple[str, str], object]:
    """(student folder name, chapter) -> notebook, raw text, ``Link`` or ``Renamed`` (see write_class)."""
    from autograder.submissions import Link, Renamed
    a = _hostile_chapter()
    cases = {
        # finding 7: links to the solutions, through /proc, to a classmate; at the notebook, folder, student
        ("link-solutions", a): Link(str(source_path(a))),
        ("link-proc-cwd", a): Link(f"/proc/self/cwd/solutions/{a}/{a}.ipynb"),
        ("link-classmate", a): Link(f"../../reference/{a}/{a}.ipynb"),
        ("link-assignment", a): Link(f"../reference/{a}", at="assignment"),
        ("link-student", a): Link("reference", at="student"),
        # finding 5: lone surrogates in the notebook, in messages, in a folder name and a file name
        ("surrogate-text", a): surrogate_notebook(a),
        ("surrogate-message", a): surrogate_message_notebook(a),
        ("surrogate-folder-\udcff", a): reference(a),          # the folder name holds the byte 0xff
        ("surrogate-file", a): Renamed("mine-\udcfe.ipynb", reference(a)),
        # finding 9: names a spreadsheet would run, names that forge a log line
        **{(name, a): untouched(a) for name in FORMULA_NAMES},
        (f"eve\x1b[2K\r\n{FORGED_LOG_LINE}\u2028\u202e", a): untouched(a),
        # finding 10: markup and script in what a student wrote
        ("xss-feedback", a): xss_notebook(a),
    }
    return cases
