"""course/ is generated from solutions/, is fresh, and gives nothing away; sources are stored clean."""
import re

import pytest

from autograder import release
from autograder.course import (
    COURSE,
    HIDDEN_BEGIN,
    HIDDEN_END,
    ROOT,
    SOLUTION_REGION,
    Chapter,
    chapters,
    grade_id,
    read,
    release_path,
    role,
    source_path,
    split_hidden,
)

CHAPTERS = chapters()
SYLLABUS = ROOT.parent / "shared" / "SYLLABUS.md"
ALL_IDS = ["ch01_perceptron", "ch02_universal_approximation", "ch03_backprop", "ch04_cnn", "ch05_rnn",
           "ch06_transformers", "ch07_gnn", "ch08_tricks", "ch09_hopfield", "ch10_optimization", "ch11_diffusion",
           "ch12_capstone", "ch13_generalization"]


def test_every_chapter_of_the_syllabus_exists():
    assert [c for c in ALL_IDS if c in CHAPTERS] == CHAPTERS, "unexpected chapter folder"
    missing = [c for c in ALL_IDS if c not in CHAPTERS]
    assert not missing, f"chapters without a notebook: {missing}"


def test_course_is_a_fresh_release(tmp_path):
    fresh = tmp_path / "course"
    release.generate(fresh)
    assert release.differences(COURSE, fresh) == [], "course/ is stale or hand-edited: run `make release`"


def syllabus_names(chapter: str) -> list[str]:
    text = SYLLABUS.read_text()
    if f"## {chapter}" not in text:  # beyond the syllabus (ch12_capstone): its contract is in solutions/README.md
        return []
    section = text.split(f"## {chapter}")[1].split("\n## ")[0]
    names = []
    for row in re.findall(r"^\| `([^`]+)`(?: / `([^`]+)`)? \|", section, re.M):
        for cell in row:
            if cell:
                names.append(re.match(r"(?:class )?([A-Za-z_]\w*)", cell).group(1))
    return names


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_graded_names_follow_the_syllabus(chapter):
    if not SYLLABUS.exists():
        pytest.skip("../shared/SYLLABUS.md is not beside this checkout")
    source = read(source_path(chapter))
    solutions = [grade_id(c) for c in source.cells if role(c) == "solution"]
    tests = [grade_id(c) for c in source.cells if role(c) == "tests"]
    for name in syllabus_names(chapter):
        assert solutions.count(name) == 1, f"{name} must be defined in exactly one solution cell"
        assert f"test_{name}" in tests, f"{name} has no test cell test_{name}"
        cell = next(c for c in source.cells if grade_id(c) == name)
        assert re.search(rf"^(def|class) {name}\b", cell.source, re.M), f"cell {name} does not define {name}"
    answers = [c for c in source.cells if role(c) == "answer"]
    assert answers, "every chapter has a free-response question graded by hand"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_sources_are_stored_clean(chapter):
    nb = read(source_path(chapter))
    assert nb.metadata["kernelspec"]["name"] == "python3"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, "outputs must be stripped"
    for cell in Chapter.load(chapter).cells("tests"):
        public, hidden = split_hidden(cell.source)
        assert "with check(" in public, f"{grade_id(cell)} has no public check"
        assert hidden, f"{grade_id(cell)} has no hidden checks"


def secret_lines(chapter: str) -> set[str]:
    """Lines of solution regions and hidden tests that appear nowhere else in the source."""
    nb = read(source_path(chapter))
    secret, public = set(), set()
    for cell in nb.cells:
        text = cell.source
        hidden_parts = re.findall(rf"{re.escape(HIDDEN_BEGIN)}(.*?)(?:{re.escape(HIDDEN_END)}|\Z)", text, re.S)
        solution_parts = [m.group(1) for m in SOLUTION_REGION.finditer(text + "\n")]
        for part in hidden_parts + solution_parts:
            secret.update(line.strip() for line in part.splitlines())
        stripped = SOLUTION_REGION.sub("", text + "\n")
        public.update(line.strip() for line in split_hidden(stripped)[0].splitlines())
    return {s for s in secret - public if len(s) > 20 and not s.startswith("#")}


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_release_reveals_no_solution_or_hidden_test(chapter):
    text = release_path(chapter).read_text()
    released = {line.strip() for cell in read(release_path(chapter)).cells for line in cell.source.splitlines()}
    leaked = sorted(secret_lines(chapter) & released)
    assert not leaked, f"course/{chapter} reveals: {leaked[:3]}"
    assert "BEGIN HIDDEN TESTS" not in text and "BEGIN SOLUTION" not in text


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_helper_package_holds_no_solution(chapter):
    """Three consecutive lines of a reference solution never appear in dlcourse/."""
    package = "\n".join(p.read_text() for p in (ROOT / "dlcourse").rglob("*.py"))
    package_lines = [line.strip() for line in package.splitlines()]
    joined = "\n".join(package_lines)
    for cell in Chapter.load(chapter).cells("solution"):
        for region in SOLUTION_REGION.finditer(cell.source + "\n"):
            lines = [line.strip() for line in region.group(1).splitlines()
                     if line.strip() and not line.strip().startswith(("#", '"""', "return"))]
            for i in range(len(lines) - 2):
                window = "\n".join(lines[i:i + 3])
                if len(window) > 60:
                    assert window not in joined, f"dlcourse/ contains the solution of {grade_id(cell)}"
