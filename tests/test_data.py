"""The course's data sets: made from what ships with installed packages, the same on every machine."""
from dlcourse.data import language_reference


def test_language_reference_splits_are_disjoint_ascii_and_fixed_by_seed():
    splits = language_reference()
    sizes = {name: len(text) for name, text in splits.items()}
    assert sizes["train"] > 250_000 and min(sizes["validation"], sizes["test"]) > 30_000, sizes
    assert all(text.isascii() for text in splits.values())
    assert splits == language_reference(0) and splits["validation"] != language_reference(1)["validation"]
    # held-out text comes from other topics: a long line of validation text is not in the training text
    lines = [line for line in splits["validation"].splitlines() if len(line) > 60]
    assert lines and sum(line in splits["train"] for line in lines) < 0.02 * len(lines)
