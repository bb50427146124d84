"""Every plausible mistake is also caught where students meet the tests: in their own kernel.

`test_grading.py` proves three mistakes per function through `make grade`; this runs *all* of
them, one at a time, in the student's setting (public and hidden checks in one process).
"""
import pytest

from autograder.course import Chapter, chapters, grade_id
from autograder.quickcheck import run_test_cell
from autograder.reference import namespace
from autograder.tests.mutants import integration, load

CASES = [(chapter, function, mistake) for chapter in chapters()
         for function, wrong in load(chapter).items() for mistake in wrong]


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
               for cell, entries in integration(chapter).items() for function, mistake in entries]


@pytest.mark.parametrize("chapter, cell, function, mistake", INTEGRATION,
                         ids=[f"{c[:4]}-{cell}-{f}-{m}" for c, cell, f, m in INTEGRATION])
def test_a_wrong_piece_fails_the_integration_check(chapter, cell, function, mistake, test_sources):
    """An integration check passes for the reference and fails when one piece it uses is subtly wrong."""
    ns = namespace(chapter, {function: load(chapter)[function][mistake]})
    assert run_test_cell(ns, test_sources[chapter][cell]) is not None, \
        f"{chapter}: {cell} passes with the mistake {mistake!r} in {function}"


@pytest.mark.parametrize("chapter", chapters())
def test_reference_passes_every_test_cell(chapter, test_sources):
    ns = namespace(chapter)
    for gid, source in test_sources[chapter].items():
        assert run_test_cell(ns, source) is None, f"{chapter}: the reference fails {gid}"
