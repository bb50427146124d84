"""The grader reads each graded answer's source (``autograder.provenance``): honest NumPy passes, and every way a
submission can reach torch, the course's package or the interpreter's ways out is refused, naming the function and
the first offending reference. AST only: no sandbox, no grading."""
from __future__ import annotations

import copy
import functools
import re

import nbformat
import pytest

from autograder import provenance
from autograder.course import ROOT, Chapter, chapters, grade_id, graded_names, role, strip_solution_markers
from autograder.tests import cases

CH = "ch08_tricks"
NAME = "layernorm_backward"
HONEST = '''import numpy as np

def layernorm_backward(dy, x, gamma, eps=1e-5):
    x = np.asarray(x, dtype=float)
    s = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    xhat = (x - x.mean(axis=-1, keepdims=True)) / s
    g = dy * gamma
    dx = (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / s
    lead = tuple(range(x.ndim - 1))
    return dx, (dy * xhat).sum(axis=lead), dy.sum(axis=lead)
'''


def _notebook(chapter: str, replace: dict | None = None, append=()) -> nbformat.NotebookNode:
    """The chapter's source with its reference answers (``replace`` overriding some) and scratch cells appended,
    as ``sanitize`` hands it to the grader (tests and prose are not read)."""
    nb = copy.deepcopy(_source(chapter).source)
    for cell in nb.cells:
        if role(cell) == "solution":
            cell.source = (replace or {}).get(grade_id(cell), strip_solution_markers(cell.source))
    for code in append:
        cell = nbformat.v4.new_code_cell(code)
        cell.metadata["tags"] = ["scratch"]
        nb.cells.append(cell)
    return nb


def _notebook_with(nb, replace: dict) -> nbformat.NotebookNode:
    for cell in nb.cells:
        if role(cell) == "solution" and grade_id(cell) in replace:
            cell.source = replace[grade_id(cell)]
    return nb


@functools.cache
def _source(chapter: str) -> Chapter:
    return Chapter.load(chapter)  # read once for the module; copied before any change


def _refused(chapter: str, nb) -> dict[str, provenance.Refusal]:
    """What the grader refuses in ``nb``: read, as job.py reads it, after the sanitizer rebuilt it from the release."""
    from autograder.job import course_files
    from autograder.sanitize import sanitize
    notebook, _ = sanitize(nb, course_files(chapter)[1])
    return {r.name: r for r in provenance.refusals(notebook, chapter, graded_names(_source(chapter).source))}


def _body(lines: str, head: str = "") -> str:
    """A layernorm_backward whose body starts with ``lines`` (indented), then does the honest work."""
    honest = HONEST.split("def layernorm_backward(dy, x, gamma, eps=1e-5):\n")[1]
    return (f"import numpy as np\n{head}\ndef layernorm_backward(dy, x, gamma, eps=1e-5):\n"
            + "".join(f"    {line}\n" for line in lines.splitlines()) + honest)


@pytest.mark.parametrize("chapter", chapters())
def test_every_reference_is_numpy(chapter):
    assert _refused(chapter, _notebook(chapter)) == {}


def test_honest_variations_pass():
    """The proof suite's honest variations (noisy wrappers through globals(), seeds, scratch work with
    matplotlib) and a few honest habits: np.random.default_rng, builtins, functools, sys.stderr."""
    for name, (chapter, nb) in cases.honest().items():
        assert _refused(chapter, nb) == {}, name
    habits = _body("import functools, itertools, collections, math, sys\n"
                   "rng = np.random.default_rng(0)\n"
                   "print(len(x), sum(range(3)), max(1, 2), isinstance(x, np.ndarray), file=sys.stderr)\n"
                   "cache = functools.lru_cache(maxsize=None)(lambda n: math.factorial(n))\n"
                   "counts = collections.Counter(itertools.chain([1], [2]))\n"
                   "kind = type(x).__name__\n"
                   "name = getattr(x, 'shape')\n"
                   "from scipy.special import comb, gammaln as lg\n"
                   "ways = comb(5, 2, exact=True) + lg(3.0)",
                   head="from dataclasses import dataclass\n@dataclass\nclass Box:\n    value: float = 0.0\n")
    helper = "def _center(x):\n    return x - np.mean(x, axis=-1, keepdims=True)\n"
    experiments = ["import torch\nprint(torch.ones(2))\ntorch.backends.cudnn.deterministic = True\n",
                   "help(np.mean)\nwith open('notes.txt', 'w') as f:\n    f.write('x')\n"]
    assert _refused(CH, _notebook(CH, {NAME: habits}, [helper, *experiments])) == {}


def test_honest_classes_reuse_their_operators():
    """ch03: a scratch cell that adds a reflected operator to the student's Value and pokes at an instance."""
    scratch = "Value.__radd__ = Value.__add__\nv = Value(2.0)\nv.grad = 1.0\nprint(v.__class__.__name__, -v)\n"
    assert _refused("ch03_backprop", _notebook("ch03_backprop", append=[scratch])) == {}


# (what the answer cell holds, scratch cells, the reference named, the line it is on, in its cell or not)
EVASIONS = {
    "import in the function": (_body("import torch"), [], "`torch`", 4),
    "string-built import": (_body("t = __import__('to' + 'rch')"), [], "`__import__`", 4),
    "importlib": (_body("import importlib\nt = importlib.import_module('torch')"), [], "`importlib`", 4),
    "the course's package": (_body("from dlcourse.testing import check"), [], "`dlcourse.testing`", 4),
    "compat": (_body("import dlcourse.compat.ch08_tricks as c"), [], "`dlcourse.compat.ch08_tricks`", 4),
    "helper in another cell": (_body("dx = _grad(x)"), ["import torch\ndef _grad(x):\n    return torch.ones(3)\n"],
                               "`torch`", 3),
    "decorator": ("import numpy as np\nfrom functools import wraps\nimport torch\n@torch.no_grad()\n"
                  + HONEST.split("import numpy as np\n\n")[1], [], "`torch`", 4),
    "default argument": ("import numpy as np\nimport torch\ndef layernorm_backward(dy, x, gamma, eps=1e-5, t=torch):"
                         "\n    return t.ones(3)\n", [], "`torch`", 3),
    "class attribute": (_body("return _Tools.grad(x)"), ["import torch\nclass _Tools:\n    T = torch\n"], "`torch`", 3),
    "lambda": (_body("return _g(x)"), ["_g = lambda a: __import__('torch').ones(3)\n"], "`__import__`", 1),
    "walrus": (_body("return _t.ones(3)"), ["import torch\nprint((_t := torch))\n"], "`torch`", 2),
    "getattr with a built name": (_body("f = getattr(np, 'lo' + 'ad')"), [], "`getattr` with a computed name", 4),
    "numpy's way to sys": (_body("m = np.lib.utils.sys.modules['torch']"), [], "`.modules`", 4),
    "subclasses": (_body("c = ().__class__.__base__.__subclasses__()"), [], "`.__subclasses__`", 4),
    "function globals": (_body("g = np.mean.__globals__"), [], "`.__globals__`", 4),
    "alias of torch as np": (HONEST, ["import torch as np\n"], "`np` (torch)", 4),
    "global set by a function": (_body("return _t.ones(3)"),
                                 ["def _setup():\n    global _t\n    import torch as _t\n_setup()\n"], "`torch`", 3),
    "globals() in the function": (_body("t = globals()['torch']"), [], "`globals()`", 4),
    "vars of a module": (_body("f = vars(np)['mean']"), [], "`vars`", 4),
    "sys.modules": (_body("import sys\nt = sys.modules['torch']"), [], "`.modules`", 5),
    "frame walk": (_body("import sys\nf = sys._getframe(1).f_globals"), [], "`.f_globals`", 5),
    "pickle through numpy": (_body("t = np.load('x.npy', allow_pickle=True)"), [], "`.load`", 4),
    "the builtins module": (_body("import builtins"), [], "`builtins`", 4),
    "a star import": (_body("t = load('x.npy', allow_pickle=True)"), ["from numpy import *\n"], "`load` (numpy)", 4),
    "a builtin's module": (_body("b = print.__self__"), [], "`.__self__`", 4),
    "object.__getattribute__": (_body("f = object.__getattribute__(np, 'load')"), [], "`.__getattribute__`", 4),
    "getattr passed as a value": (_body("import functools\nf = functools.reduce(getattr, ['lib'], np)"), [],
                                  "`getattr` with a computed name", 5),
    "annotations evaluated by typing": (_body("import typing\nh = typing.get_type_hints(_f)"), [],
                                        "`.get_type_hints`", 5),
    "a traceback's frames": (_body("try:\n    1 / 0\nexcept Exception as e:\n    t = e.__traceback__"), [],
                             "`.__traceback__`", 7),
    "a metaclass": (_body("return _Shell()"), ["import torch\nclass _Meta(type):\n    T = torch\n"
                                               "class _Shell(metaclass=_Meta):\n    pass\n"], "`torch`", 3),
    "a global filled by a function": (_body("return _fns[0].ones(3)"),
                                      ["_fns = []\ndef _register(f):\n    _fns.append(f)\n"
                                       "import torch\n_register(torch)\n"], "`torch`", 5),
    "a class attribute set by a function": (_body("return _Tools.T.ones(3)"),
                                            ["class _Tools:\n    T = None\ndef _setup(m):\n    _Tools.T = m\n"
                                             "def _go():\n    import torch\n    _setup(torch)\n_go()\n"], "`torch`", 6),
    "a patch in the function": (_body("np.mean = lambda *a, **k: 0"), [], "a patch of `np.mean`", 4),
    "scipy's softmax": (_body("from scipy.special import softmax"), [], "`scipy.special`", 4),
    "scipy's module": (_body("import scipy.special as sp\nc = sp.comb(3, 2)"), [], "`scipy.special`", 4),
    "scipy's convolution": (_body("from scipy.signal import convolve2d"), [], "`scipy.signal`", 4),
    "a scipy name from a scratch cell": (_body("return _s(x)"), ["from scipy.special import logsumexp as _s\n"],
                                         "`_s` (scipy.special)", 4),
}


@pytest.mark.parametrize("evasion", sorted(EVASIONS))
def test_evasions_are_refused(evasion):
    answer, scratch, what, line = EVASIONS[evasion]
    refused = _refused(CH, _notebook(CH, {NAME: answer}, scratch))
    assert NAME in refused, f"{evasion}: not seen"
    finding = refused[NAME].finding
    assert finding.what == what and finding.line == line, (evasion, refused[NAME].message)
    message = refused[NAME].message
    verb = "holds" if what.startswith("a patch") else "refers to"
    assert message.startswith(f"`{NAME}` must be written in NumPy: it {verb} {what} (line {line} of ")
    assert ("of its cell" in message) == (finding.cell.grade_id == NAME), message
    assert finding.cell.kind == ("answer" if finding.cell.grade_id == NAME else "scratch")
    if evasion != "alias of torch as np":  # (every answer using np reaches torch then)
        assert set(refused) == {NAME}, "only what reaches it is refused"


TAMPERING = {
    "a patch of numpy": "import numpy as np\nnp.allclose = lambda *a, **k: True\n",
    "a patch through setattr": "import numpy\nsetattr(numpy, 'allclose', lambda *a, **k: True)\n",
    "forged observations": ("import sys\n_p = sys.modules['autograder.sandbox.protocol']\n_real = _p.reply\n"
                            "def _forged(ok, **fields):\n    fields.pop('observations', None)\n"
                            "    return _real(ok, **fields)\n_p.reply = _forged\n"),
    "the watch patched by a function": ("import dlcourse.testing as t\ndef _quiet():\n"
                                        "    t.Watch.observations = lambda self: {}\n_quiet()\n"),
    "exec": "exec('import torch')\n",
    "code nested beyond reading": "_deep = np" + ".T" * 20000 + "\n",
    "a class body": "import sys\nclass _Quiet:\n    sys.modules['dlcourse.testing'].Watch.observations = dict\n",
}


@pytest.mark.parametrize("attack", sorted(TAMPERING))
def test_top_level_tampering_refuses_every_answer(attack):
    refused = _refused(CH, _notebook(CH, append=[TAMPERING[attack]]))
    assert set(refused) == set(graded_names(Chapter.load(CH).source)), attack
    assert all(r.tampering for r in refused.values())
    (line,) = provenance.problem_lines(list(refused.values()))
    assert line.startswith("no answer is graded: the notebook's own code ") and "(scratch)" in line


def test_torch_answers_are_those_of_the_contract():
    """TORCH_ANSWERS is the syllabus's "(torch)" entries, each a graded name of its chapter; a NumPy answer that
    reaches one is still read."""
    syllabus = (ROOT.parent / "shared" / "SYLLABUS.md")
    text = syllabus.read_text() if syllabus.exists() else None
    if text is not None:
        declared = set(re.findall(r"\| `(\w+)\([^`]*\)` \(torch\)", text))
        assert declared == {n for names in provenance.TORCH_ANSWERS.values() for n in names}
    marked = {}  # the notebooks say it too: "**Exercise 12.1 (torch).** Write `build_digits_cnn()`"
    for chapter in chapters():
        text = "\n".join(c.source for c in Chapter.load(chapter).source.cells if c.cell_type == "markdown")
        names = set(re.findall(r"\*\*Exercise [\d.]+ \(torch\)\.\*\*[^`]*`(\w+)", text))
        if names:
            marked[chapter] = names
    assert marked == {chapter: set(names) for chapter, names in provenance.TORCH_ANSWERS.items()}
    for chapter, names in provenance.TORCH_ANSWERS.items():
        assert names <= set(graded_names(Chapter.load(chapter).source)), chapter
    given = copy.deepcopy(_notebook("ch04_cnn"))  # a torch model built by a given cell is no NumPy either
    given.cells.insert(next(i for i, c in enumerate(given.cells) if role(c) == "solution"),
                       nbformat.v4.new_code_cell("_model = nn.Linear(4, 4)\n"))
    given.cells.append(nbformat.v4.new_code_cell("def _helper(x):\n    return _model(x)\n"))
    given.cells[-1].metadata["tags"] = ["scratch"]
    refused = _refused("ch04_cnn", _notebook_with(given, {"conv2d": "def conv2d(X, W, b=None, stride=1, padding=0):"
                                                                    "\n    return _helper(X)\n"}))
    assert set(refused) == {"conv2d"} and "`nn` (torch)" in refused["conv2d"].message, refused
    cnn = Chapter.load("ch04_cnn")
    assert _refused("ch04_cnn", _notebook("ch04_cnn")) == {}
    sneaky = {"build_digits_cnn": "import torch\ndef build_digits_cnn(*args):\n    return torch.nn.Linear(64, 10)\n",
              "conv2d_backward": "def conv2d_backward(X, W, dY):\n    return build_digits_cnn(X, W, dY)\n"}
    refused = _refused("ch04_cnn", _notebook("ch04_cnn", sneaky))
    assert set(refused) == {"conv2d_backward"} and "`build_digits_cnn`" in refused["conv2d_backward"].message
    forging = {"build_digits_cnn": "import sys, torch\ndef build_digits_cnn():\n"
                                   "    sys.modules['autograder.sandbox.protocol'].reply = print\n"}
    refused = _refused("ch04_cnn", _notebook("ch04_cnn", forging))
    assert set(refused) == {"build_digits_cnn"} and refused["build_digits_cnn"].message.startswith(
        "`build_digits_cnn` may use torch, not the interpreter's ways out: it holds a patch of `sys.modules[")
    assert cnn is not None


def test_given_helpers_may_be_imported_again():
    """ch07's train_gin imports the helper its given cell imports; another name of that module is refused."""
    assert _refused("ch07_gnn", _notebook("ch07_gnn")) == {}
    other = "from dlcourse.widgets.ch07_gnn import ring_split as _r\n" + strip_solution_markers(
        next(c.source for c in Chapter.load("ch07_gnn").cells("solution") if grade_id(c) == "train_gin"))
    assert _refused("ch07_gnn", _notebook("ch07_gnn", {"train_gin": other})) == {}
    other = other.replace("from dlcourse.widgets.ch07_gnn import batch_graphs",
                          "from dlcourse.widgets.ch07_gnn import batch_graphs, something_else")
    assert "`dlcourse.widgets.ch07_gnn`" in _refused("ch07_gnn", _notebook("ch07_gnn", {"train_gin": other}))[
        "train_gin"].message


def test_a_test_cell_refers_to_the_names_it_loads():
    assert provenance.refers_to("x = layernorm_backward(1)\n# batchnorm_backward\n", {"layernorm_backward",
                                "batchnorm_backward"}) == {"layernorm_backward"}


def test_the_ch08_shortcut_is_refused_by_its_source():
    """The registered ch08 shortcut (torch autograd, the watch's report forged from inside the function) is refused
    where it is written, whatever the sandbox would report."""
    from autograder.tests import shortcuts
    entry = shortcuts.load()[CH]["torch_norm_backward_forged_watch"]
    refused = _refused(CH, _notebook(CH, entry["replace"], entry.get("append", [])))
    assert set(refused) == shortcuts.replaced(entry)
    assert all(r.message.endswith("it refers to `torch` (line 4 of its cell)") for r in refused.values())
