"""A student's work survives updates: ``make lab`` opens ``work/``, the student's own copy of ``course/``.

A course repository (a clone of this one) and a student's clone of it: the student's ``work/`` is made
by ``make work`` (which ``make lab`` runs), then edited; ``make release``, a ``git pull`` of a new
release that changes a chapter and adds one, ``make work`` again and ``make clean`` leave it untouched,
and only the new chapter is added.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys

import nbformat
import pytest

from autograder.course import ROOT

GIT_ENV = {"GIT_AUTHOR_NAME": "course", "GIT_AUTHOR_EMAIL": "course@example.org", "GIT_COMMITTER_NAME": "course",
           "GIT_COMMITTER_EMAIL": "course@example.org", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
CHAPTER = "ch01_perceptron"
NEW = "ch99_later"
pytestmark = pytest.mark.xdist_group("work-folder")  # one clone, its tests in order on one worker
ANSWER = "def perceptron_predict(X, w, b):\n    return np.sign(X @ w + b)  # the student's answer\n"


def run(cwd, *args, **env):
    """A command in ``cwd``, in this environment as it is (no install: DLCOURSE_EXISTING_ENV=1)."""
    environment = {k: v for k, v in os.environ.items() if k not in ("WORK", "MAKEFLAGS", "MFLAGS")}
    environment.update(GIT_ENV, DLCOURSE_EXISTING_ENV="1",
                       PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""), **env)
    done = subprocess.run(list(args), cwd=cwd, env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(args)}: {done.stdout[-1500:]}{done.stderr[-1500:]}"
    return done.stdout


def notebook(root, chapter=CHAPTER):
    return root / chapter / f"{chapter}.ipynb"


def snapshot(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def clones(tmp_path_factory):
    """(the course's repository, a student's clone of it with work/ made and edited, the edited work/)."""
    base = tmp_path_factory.mktemp("updates")
    upstream, student = base / "upstream", base / "student"
    run(base, "git", "clone", "--quiet", str(ROOT), str(upstream))
    run(base, "git", "clone", "--quiet", str(upstream), str(student))
    made = run(student, "make", "work")
    assert f"work/{CHAPTER}: new chapter" in made
    assert snapshot(student / "work") == snapshot(student / "course"), "work/ is not a copy of course/"
    nb = nbformat.read(str(notebook(student / "work")), as_version=4)  # the student answers and saves
    answer = next(c for c in nb.cells if c.cell_type == "code" and "raise NotImplementedError" in c.source)
    answer.source = ANSWER
    nbformat.write(nb, str(notebook(student / "work")))
    (student / "work" / CHAPTER / "my-notes.txt").write_text("mine")
    return upstream, student, snapshot(student / "work")


def test_work_is_ignored_by_git_and_opened_by_make_lab(clones):
    _, student, _ = clones
    assert run(student, "git", "status", "--porcelain") == "", "work/ shows in git status"
    assert "!! work/" in run(student, "git", "status", "--porcelain", "--ignored")
    lab = run(student, "make", "-n", "lab")
    assert f'--ServerApp.root_dir="{student / "work"}"' in lab, lab
    assert "jupyter-config/student" in lab, "make lab is not the student's lab"
    elsewhere = run(student, "make", "-n", "lab", "WORK=/tmp/elsewhere")
    assert '--ServerApp.root_dir="/tmp/elsewhere"' in elsewhere
    assert "jupyter-config/student" not in run(student, "make", "-n", "lab-instructor")


def test_make_release_leaves_work_untouched(clones):
    _, student, edited = clones
    before = snapshot(student / "work")
    run(student, "make", "release")
    assert snapshot(student / "work") == before
    run(student, "make", "work")
    assert snapshot(student / "work") == before
    assert {k: before[k] for k in edited} == edited


def test_a_pull_brings_a_new_chapter_and_keeps_the_students_work(clones):
    upstream, student, edited = clones
    changed = nbformat.read(str(notebook(upstream / "course")), as_version=4)  # the course's next release
    changed.cells.append(nbformat.v4.new_markdown_cell("An erratum."))
    nbformat.write(changed, str(notebook(upstream / "course")))
    new = notebook(upstream / "course", NEW)
    new.parent.mkdir()
    shutil.copy(notebook(upstream / "course"), new)
    run(upstream, "git", "add", "-A")
    run(upstream, "git", "commit", "--quiet", "-m", "next release: an erratum in ch01, a new chapter")

    run(student, "git", "pull", "--quiet", "--no-rebase")
    assert "An erratum." in notebook(student / "course").read_text()
    assert snapshot(student / "work") == edited, "the pull changed the student's work"
    added = run(student, "make", "work")
    assert f"work/{NEW}: new chapter" in added and f"work/{CHAPTER}" not in added
    now = snapshot(student / "work")
    assert now[f"{NEW}/{NEW}.ipynb"] == new.read_bytes()
    assert {k: v for k, v in now.items() if not k.startswith(NEW)} == edited


def test_no_make_target_deletes_work(clones):
    _, student, edited = clones
    for line in (ROOT / "Makefile").read_text().splitlines():
        if line.startswith("\t") and "rm " in line:
            assert "WORK" not in line and "work" not in line.split("rm ", 1)[1], line
    before = snapshot(student / "work")
    assert {k: v for k, v in before.items() if k in edited} == edited
    run(student, "make", "clean")
    assert snapshot(student / "work") == before


def test_make_check_finds_the_notebook_in_work(clones, tmp_path):
    """make check with no argument checks the notebook saved last in work/; CHAPTER= names one there
    (a stand-in python prints what the grader would have been asked to check)."""
    _, student, _ = clones
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python").write_text('#!/bin/sh\necho "checking with: $*"\n')
    (fake / "python").chmod(stat.S_IRWXU)
    os.utime(notebook(student / "work"))  # saved last
    default = run(student, "make", "check", f"BIN={fake}")
    assert f"checking with: -m autograder check work/{CHAPTER}/{CHAPTER}.ipynb" in default, default
    named = run(student, "make", "check", f"BIN={fake}", "CHAPTER=ch02_universal_approximation")
    assert "check work/ch02_universal_approximation/ch02_universal_approximation.ipynb" in named, named
