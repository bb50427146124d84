"""Every plausible mistake is proven to lose points, once: through `make grade` or in the kernel.

`test_grading.py` grades three mistakes per function, and one per integration check, through the
real `make grade` (`cases.mutant_groups`); this runs every other one, one at a time, in the
student's setting (public and hidden checks in one process, as in their kernel).
"""
import pytest

from autograder.course import Chapter, chapters, grade_id
from autograder.quickcheck import run_test_cell
from autograder.reference import namespace
from autograder.tests.cases import proven_by_grading
from autograder.tests.mutants import integration, load

GRADED = proven_by_grading()
CASES = [(chapter, function, mistake) for chapter in chapters()
         for function, wrong in load(chapter).items() for mistake in wrong
         if (chapter, function, mistake, f"test_{function}") not in GRADED]


@pytest.fixture(scope="module")
def test_sources():
    return {chapter: {grade_id(c): c.source for c in Chapter.load(chapter).cells("tests")} for chapter in chapters()}


@pytest.mark.parametrize("chapter, function, mistake", CASES, ids=[f"{c[:4]}-{f}-{m}" for c, f, m in CASES])
def test_mistake_fails_its_test_cell(chapter, function, mistake, test_sources):
    code = load(chapter)[function][mistake]
    try:
        ns = namespace(chapter, {function: code})
    except Exception:  # noqa: BLE001 - a mistake that does not even define the function is caught anyway
        return
    assert run_test_cell(ns, test_sources[chapter][f"test_{function}"]) is not None, \
        f"{chapter}: the mistake {mistake!r} in {function} passes every check"


INTEGRATION = [(chapter, cell, function, mistake) for chapter in chapters()
               for cell, entries in integration(chapter).items() for function, mistake in entries
               if (chapter, function, mistake, cell) not in GRADED]


@pytest.mark.parametrize("chapter, cell, function, mistake", INTEGRATION,
                         ids=[f"{c[:4]}-{cell}-{f}-{m}" for c, cell, f, m in INTEGRATION])
def test_a_wrong_piece_fails_the_integration_check(chapter, cell, function, mistake, test_sources):
    """An integration check passes for the reference and fails when one piece it uses is subtly wrong."""
    ns = namespace(chapter, {function: load(chapter)[function][mistake]})
    assert run_test_cell(ns, test_sources[chapter][cell]) is not None, \
        f"{chapter}: {cell} passes with the mistake {mistake!r} in {function}"


def test_every_mistake_is_proven_somewhere():
    """Nothing falls between the two proofs: each mistake, and each INTEGRATION entry, is in one of them."""
    graded = {(c, f, m, cell) for c, f, m, cell in GRADED}
    kernel = {(c, f, m, f"test_{f}") for c, f, m in CASES} | {(c, f, m, cell) for c, cell, f, m in INTEGRATION}
    wanted = {(c, f, m, f"test_{f}") for c in chapters() for f, wrong in load(c).items() for m in wrong}
    wanted |= {(c, f, m, cell) for c in chapters() for cell, entries in integration(c).items() for f, m in entries}
    assert wanted == graded | kernel and not graded & kernel
    assert {cell for c in chapters() for cell in integration(c)} == \
        {cell for c, f, m, cell in graded if cell != f"test_{f}"}, "an integration check without a graded mistake"


@pytest.mark.parametrize("chapter", chapters())
def test_reference_passes_every_test_cell(chapter, test_sources):
    ns = namespace(chapter)
    for gid, source in test_sources[chapter].items():
        assert run_test_cell(ns, source) is None, f"{chapter}: the reference fails {gid}"
