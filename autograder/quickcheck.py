"""A fast, in-process check for authors: ``python -m autograder quickcheck ch01_perceptron``.

Runs every test cell (public and hidden) in one Python process, the way a
student's kernel would, against: the reference (must pass), the release stubs
(must fail) and each plausible mistake (``autograder.mistakes.load``: the test
cell of the mutated function must fail). The real proof goes through
``make grade`` (autograder/tests/test_grading.py) and the kernel suite
(autograder/tests/test_mistakes_in_kernel.py); this is the author's loop.
"""
from __future__ import annotations

import time

from IPython.core.inputtransformer2 import TransformerManager

from dlcourse.vocabulary import TEST_PREFIX, exercise_name

from .course import Chapter, grade_id
from .mistakes import integration, load
from .reference import namespace

_python = TransformerManager().transform_cell


def run_test_cell(ns: dict, source: str) -> str | None:
    """None when the cell passes, else the reason."""
    try:
        exec(compile(_python(source), "<test cell>", "exec"), dict(ns))
    except BaseException as exc:  # noqa: BLE001 - report whatever the cell raised
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    return None


def main(chapter: str) -> int:
    tests = {grade_id(c): c.source for c in Chapter.load(chapter).cells("tests")}
    failures = 0
    ref = namespace(chapter)
    for gid, source in tests.items():
        start = time.perf_counter()
        reason = run_test_cell(ref, source)
        took = time.perf_counter() - start
        print(f"reference  {gid:40s} {'PASS' if reason is None else 'FAIL ' + reason}  ({took:.2f}s)")
        failures += reason is not None
    names = [exercise_name(gid) for gid in tests if gid.startswith(TEST_PREFIX)]
    stubs = namespace(chapter, {name: f"def {name}(*a, **k):\n    raise NotImplementedError()\n" for name in names})
    for gid, source in tests.items():
        reason = run_test_cell(stubs, source)
        if reason is None:
            print(f"stub       {gid:40s} PASSES (it must fail)")
            failures += 1
    mistakes = load(chapter)
    for function, wrong in mistakes.items():
        if f"test_{function}" not in tests:
            print(f"mutants    no test cell test_{function}")
            failures += 1
            continue
        if len(wrong) < 3:
            print(f"mutants    {function}: only {len(wrong)} plausible mistakes (need 3)")
            failures += 1
        for name, code in wrong.items():
            try:
                ns = namespace(chapter, {function: code})
            except Exception as exc:  # noqa: BLE001
                print(f"mutant     {function}/{name}: does not even run ({exc!r})")
                continue
            reason = run_test_cell(ns, tests[f"test_{function}"])
            print(f"mutant     {function + '/' + name:40s} {'caught: ' + reason[:90] if reason else 'NOT CAUGHT'}")
            failures += reason is None
    for cell, entries in integration(chapter).items():
        if cell not in tests:
            print(f"integration no test cell {cell}")
            failures += 1
            continue
        for function, name in entries:
            code = mistakes.get(function, {}).get(name)
            if code is None:
                print(f"integration {cell}: no mutant {function}/{name}")
                failures += 1
                continue
            reason = run_test_cell(namespace(chapter, {function: code}), tests[cell])
            print(f"integration {cell} with {function + '/' + name:30s} "
                  f"{'caught: ' + reason[:80] if reason else 'NOT CAUGHT'}")
            failures += reason is None
    print("OK" if not failures else f"{failures} problem(s)")
    return 1 if failures else 0
