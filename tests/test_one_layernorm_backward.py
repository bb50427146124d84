"""Issue 42: one layernorm_backward for the course. ch06 (§ 6.3, where it is derived), ch08 (the normalisation chapter)
and ch12 (the capstone) ask for it with one contract, `layernorm_backward(dy, x, gamma, eps=1e-5)` -> `(dx, dgamma,
dbeta)`, `x`, `dy` (..., D), `dgamma`, `dbeta` summed over every leading axis: the answer a student wrote once, pasted
as it is (with the `standardize_backward` it calls, ch06's intermediate step), passes every chapter's checks."""
import inspect

import pytest

CHAPTERS = ("ch06_transformers", "ch08_tricks", "ch12_capstone")
# the test cells of each chapter that call layernorm_backward, and those run here (public and hidden): the function's
# own check, and in ch08 and ch12 the loop's step-by-step check (ch06's loop and the held-out checks make the same
# calls through the same loops: left out here for time)
USES = {
    "ch06_transformers": {"test_layernorm_backward", "test_train_char_model", "test_char_transformer"},
    "ch08_tricks": {"test_layernorm_backward", "test_train_digits", "test_digits_heldout", "test_digits_recipe"},
    "ch12_capstone": {"test_layernorm_backward", "test_train_capstone", "test_capstone_heldout"},
}
RUN = {"ch06_transformers": ("test_layernorm_backward",),
       "ch08_tricks": ("test_layernorm_backward", "test_train_digits"),
       "ch12_capstone": ("test_layernorm_backward", "test_train_capstone")}


def _solutions(chapter: str) -> dict[str, str]:
    from autograder.course import Chapter, grade_id, strip_solution_markers
    return {grade_id(c): strip_solution_markers(c.source) for c in Chapter.load(chapter).cells("solution")}


def _answer(chapter: str) -> str:
    """What a student pastes: the chapter's layernorm_backward, after the standardize_backward it calls (if any)."""
    solutions = _solutions(chapter)
    answer = solutions["layernorm_backward"]
    if "standardize_backward(" in answer:
        answer = solutions["standardize_backward"] + "\n\n" + answer
    return answer


def _tests(chapter: str) -> dict[str, str]:
    from autograder.course import Chapter, grade_id
    return {grade_id(c): c.source for c in Chapter.load(chapter).cells("tests")}


@pytest.fixture(scope="module")
def signatures():
    from autograder.reference import namespace
    return {chapter: inspect.signature(namespace(chapter)["layernorm_backward"]) for chapter in CHAPTERS}


def test_the_three_chapters_ask_for_one_signature(signatures):
    """Same parameters in the same places, of the same kinds, with the same defaults (the first three may be spelled
    dY, X: every check passes them by position), and eps by that name (checks pass it by keyword)."""
    shapes = {chapter: [(p.kind, p.default) for p in sig.parameters.values()] for chapter, sig in signatures.items()}
    assert len({tuple(s) for s in shapes.values()}) == 1, shapes
    assert all(list(sig.parameters)[3:] == ["eps"] for sig in signatures.values()), signatures
    assert shapes["ch06_transformers"][3][1] == 1e-5


def test_the_checks_that_call_layernorm_backward_are_known():
    """A new check calling layernorm_backward must be added to USES (and to RUN if it is quick)."""
    for chapter in CHAPTERS:
        uses = {gid for gid, source in _tests(chapter).items() if "layernorm_backward" in source}
        assert uses == USES[chapter], chapter


@pytest.mark.parametrize(("source", "target"), [(s, t) for s in CHAPTERS for t in CHAPTERS if s != t])
def test_each_chapters_layernorm_backward_passes_the_other_chapters_checks(source, target):
    """The reference of `source`, pasted into `target`'s layernorm_backward cell unchanged, passes (public and hidden,
    in the student's kernel) target's check of layernorm_backward and, in ch08 and ch12, of the loop that calls it
    (each chapter's own reference is proven by its quickcheck); ch06's
    standardize_backward, pasted into ch08, passes ch08's check of it."""
    from autograder.quickcheck import run_test_cell
    from autograder.reference import namespace
    replace = {"layernorm_backward": _answer(source)}
    if "standardize_backward" in _solutions(target) and "standardize_backward" in _solutions(source):
        replace["standardize_backward"] = _solutions(source)["standardize_backward"]
    ns = namespace(target, replace)
    tests = _tests(target)
    cells = RUN[target] + (("test_standardize_backward",) if "standardize_backward" in replace else ())
    failures = {gid: run_test_cell(ns, tests[gid]) for gid in cells}
    assert failures == dict.fromkeys(cells), (source, target, failures)


def test_the_standardize_backward_of_chapter_6_and_8_is_one_function():
    """ch08 asks for ch06's standardize_backward as it is: the same cell, the same checks (ch08's batch norm uses its
    axis=0)."""
    assert _solutions("ch06_transformers")["standardize_backward"] == _solutions("ch08_tricks")["standardize_backward"]
    ch06, ch08 = (_tests(chapter)["test_standardize_backward"] for chapter in ("ch06_transformers", "ch08_tricks"))
    assert ch06 == ch08
    assert "standardize_backward(dy * gamma, x, eps, axis=0)" in _solutions("ch08_tricks")["batchnorm_backward"]
