"""Issue 40, finding 5: every bound and switch of the grader is declared once (``autograder/settings.py``), typed,
with its unit, default and meaning; the sandbox receives the same typed ``Limits`` the grader reads; ``--help``
and docs/limits.md's tables are generated from the declarations; and what an unprivileged run cannot enforce is
said in one line on every door (make grade, make check, nbgrader autograde). Each test takes well under a second.
"""
from __future__ import annotations

import ast
import dataclasses
import json
import logging
import os
import re
import resource

import pytest

from autograder import settings
from autograder.course import ROOT
from autograder.settings import GRADER, SUBMISSION, SWITCHES, Limits

DOCS = ROOT / "docs" / "limits.md"


def test_the_docs_tables_are_generated_from_the_declarations():
    text = DOCS.read_text(encoding="utf-8")
    assert text == settings.with_tables(text), (
        "docs/limits.md's settings tables differ from autograder/settings.py: run "
        "`.venv/bin/python -m autograder.settings docs/limits.md`")
    block = text.partition(settings.BEGIN)[2].partition(settings.END)[0]
    for record in (Limits(), GRADER, SUBMISSION):
        for f in dataclasses.fields(record):
            row = next((line for line in block.splitlines() if line.startswith(f"| `{f.name}` |")), None)
            assert row is not None and f.metadata["unit"] in row and f.metadata["meaning"][:30] in row, f.name
    assert all(f"`{switch.variable}`" in block for switch in SWITCHES)
    # the check can fail: a default changed by hand in the table is found
    tampered = text.replace("| `cell_seconds` | 60 s |", "| `cell_seconds` | 90 s |")
    assert tampered != text and settings.with_tables(tampered) != tampered


@pytest.mark.parametrize("verb", [["grade"], ["check"], ["grade-one"]])
def test_help_lists_every_limit_with_its_default_unit_and_meaning(verb, capsys):
    from autograder.__main__ import parser
    with pytest.raises(SystemExit):
        parser().parse_args([*verb, "--help"])
    shown = capsys.readouterr().out
    defaults = Limits()
    for name in Limits.names():
        f = next(f for f in dataclasses.fields(Limits) if f.name == name)
        line = next((line for line in shown.splitlines() if line.startswith(f"  {name} ")), "")
        assert f.metadata["unit"] in line and " ".join(f.metadata["meaning"].split()[:3]) in line, (name, line)
    assert re.search(r"^  cell_seconds +60 s +CPU seconds ", shown, re.M), shown
    assert re.search(r"^  ram_bytes +2 GiB +bytes ", shown, re.M) and defaults.ram_bytes == 2 * 1024 ** 3
    assert "audit_hook" not in shown  # a switch of the proof suite, not a bound


def test_limits_are_parsed_once_and_cross_the_boundary_as_themselves():
    limits = Limits.parse("cell_seconds=25,ram_bytes=1e9 memory_bytes=none")
    assert limits == Limits(cell_seconds=25.0, ram_bytes=10 ** 9, memory_bytes=None)
    assert isinstance(limits.ram_bytes, int) and isinstance(limits.cell_seconds, float)
    assert limits.notebook_wall_seconds == 2 * limits.notebook_seconds
    sent = json.loads(json.dumps(limits.to_wire()))  # as the sandbox's configuration carries it
    assert Limits.from_wire(sent) == limits
    wire = Limits().to_wire()
    for bad in ({}, {**wire, "extra": 1}, {k: v for k, v in wire.items() if k != "output_bytes"},
                {**wire, "tasks": 1.5}, {**wire, "tasks": True}, {**wire, "ram_bytes": None},
                {**wire, "audit_hook": 1}, {**wire, "cell_seconds": "60"}):
        with pytest.raises(ValueError):
            Limits.from_wire(bad)
    for text, said in (("ram=1", "'ram' is not a limit"), ("ram_bytes=none", "give ram_bytes=<number>"),
                       ("cell_seconds=0", "a limit is a positive number")):
        with pytest.raises(ValueError, match=said):
            Limits.parse(text)


def _rlimits_in_a_child(limits: Limits) -> dict:
    """What ``policy.apply_limits`` (the sandbox's side) sets, read in a forked child."""
    from autograder.sandbox import policy
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            policy.apply_limits(limits)
            got = {name: resource.getrlimit(getattr(resource, name))[0]
                   for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE")}
            os.write(write, json.dumps(got).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        got = json.loads(f.read())
    os.waitpid(pid, 0)
    return got


def test_the_sandbox_side_reads_the_typed_limits_and_none_is_no_cap():
    """The server's policy reads the same attributes as the grader: a limit's value is set as the kernel's
    limit, ``None`` leaves it uncapped (no silent 0), and printed output is capped at ``output_bytes`` only."""
    from autograder.sandbox import policy
    before = {name: resource.getrlimit(getattr(resource, name))[0] for name in ("RLIMIT_AS", "RLIMIT_FSIZE")}
    capped = _rlimits_in_a_child(Limits(cpu_seconds=7, output_bytes=12_345))
    assert capped["RLIMIT_CPU"] == 7 and capped["RLIMIT_FSIZE"] == 12_345
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    assert capped["RLIMIT_AS"] == (Limits().memory_bytes if hard == resource.RLIM_INFINITY
                                   else min(Limits().memory_bytes, hard))
    free = _rlimits_in_a_child(Limits(memory_bytes=None, cpu_seconds=None, output_bytes=None))
    assert free["RLIMIT_AS"] == before["RLIMIT_AS"] and free["RLIMIT_FSIZE"] == before["RLIMIT_FSIZE"]
    assert free["RLIMIT_CPU"] == resource.getrlimit(resource.RLIMIT_CPU)[0]
    assert policy.CappedOutput(None).cap is None and policy.CappedOutput(Limits().output_bytes).cap == 2 * 1024 ** 2


PRESENTATION = {"FIRST_LINE_CHARS"}  # how much of a cell's first line names it: wording, not a bound
CHANNEL = {"AUTOGRADER_SANDBOX"}     # protocol.CONFIG_VARIABLE: how the grader hands a sandbox its configuration
BOUND_NAME = re.compile(r"^(MAX_\w+|\w+_(SECONDS|BYTES|CHARS|SHARE|MARGIN|LIMIT|TIMEOUT))$")


def _numeric_literal(node) -> bool:
    allowed = (ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop, ast.Dict, ast.Tuple, ast.Load)
    return all(isinstance(n, allowed) for n in ast.walk(node)) and any(
        isinstance(n, ast.Constant) and type(n.value) in (int, float) for n in ast.walk(node))


def found_elsewhere(root=ROOT) -> list[str]:
    """Bounds (a MAX_*, *_SECONDS, *_BYTES ... name given a number) and environment switches (AUTOGRADER_*,
    DLCOURSE_* read) declared in a grader module other than settings.py."""
    found = []
    for path in sorted((root / "autograder").rglob("*.py")):
        if "tests" in path.relative_to(root).parts or path.name == "settings.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(target, ast.Name) and BOUND_NAME.match(target.id) and \
                            target.id not in PRESENTATION and _numeric_literal(node.value):
                        found.append(f"{path.relative_to(root)}:{node.lineno} {target.id}")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value not in CHANNEL and \
                    re.fullmatch(r"(AUTOGRADER|DLCOURSE)_[A-Z_]+", node.value):
                found.append(f"{path.relative_to(root)}:{node.lineno} {node.value}")
    return found


def test_no_bound_or_switch_is_declared_outside_settings(tmp_path):
    found = found_elsewhere()
    assert not found, f"declare these in autograder/settings.py (typed, with unit, default, meaning): {found}"
    # the scan can fail: a literal bound and a switch read in a module of the grader are found
    (tmp_path / "autograder").mkdir()
    (tmp_path / "autograder" / "late.py").write_text(
        'import os\nREADY_SECONDS = 120\nMAX_REPLY = 8 * 1024 ** 2\nON = os.environ.get("AUTOGRADER_FAST")\n')
    assert [line.split()[-1] for line in found_elsewhere(tmp_path)] == ["READY_SECONDS", "MAX_REPLY",
                                                                        "AUTOGRADER_FAST"]


MISSING = ("no memory cgroup (cannot be written here: Permission denied): memory is bounded by ...",
           "no pids cgroup (no cgroup v1 hierarchy for it here): tasks are bounded by ...")


@pytest.fixture
def unprivileged(monkeypatch):
    """A machine where the grader may write no cgroup (two controllers missing)."""
    from autograder.sandbox import cgroups
    monkeypatch.setattr(cgroups, "missing", lambda: MISSING)
    return f"LIMITED: {'; '.join(MISSING)}"


class _Stop(Exception):
    pass


def _stop(*args, **kwargs):
    raise _Stop


def test_make_check_says_limited_in_one_line(unprivileged, monkeypatch, capsys):
    from autograder import check
    monkeypatch.setattr(check, "probe", lambda: None)
    monkeypatch.setattr(check, "grade_submission", _stop)
    with pytest.raises(_Stop):
        check.check(ROOT / "course" / "ch01_perceptron" / "ch01_perceptron.ipynb")
    said = [line for line in capsys.readouterr().err.splitlines() if "LIMITED" in line]
    assert said == [f"check: {unprivileged}"], said


def test_make_grade_says_limited_in_one_line(unprivileged, monkeypatch, tmp_path):
    from autograder import classroom
    from autograder.errors import UsageError
    monkeypatch.setattr(classroom, "sandbox_or_refusal", lambda *args: None)
    (tmp_path / "class").mkdir()
    with pytest.raises(UsageError, match="nothing to grade"):  # the line comes before any notebook
        classroom.grade_class(str(tmp_path / "class"), str(tmp_path / "out"), jobs=1)
    said = [line for line in (tmp_path / "out" / "grading.log").read_text().splitlines() if "LIMITED" in line]
    assert len(said) == 1 and said[0].endswith(unprivileged), said


def test_nbgrader_autograde_says_limited_in_one_line(unprivileged, monkeypatch, caplog):
    import nbformat

    from autograder import nbgrader_plugin
    from autograder.course import chapters
    monkeypatch.setattr(nbgrader_plugin, "sandbox_or_refusal", lambda *args: None)
    monkeypatch.setattr(nbgrader_plugin, "prepare_worker", lambda: None)
    monkeypatch.setattr(nbgrader_plugin, "grade_submission", _stop)
    monkeypatch.setattr(nbgrader_plugin, "_WARM", [])
    step = nbgrader_plugin.SandboxedExecute(limits={"cell_seconds": 25})
    assert step.parsed_limits == Limits(cell_seconds=25.0)
    step.log = logging.getLogger("autograde-settings-test")
    info = {"nbgrader": {"assignment": chapters()[0], "student": "alice", "notebook": chapters()[0]}}
    with caplog.at_level(logging.WARNING, logger="autograde-settings-test"), pytest.raises(_Stop):
        step.preprocess(nbformat.v4.new_notebook(), info)
    said = [r.getMessage() for r in caplog.records if "LIMITED" in r.getMessage()]
    assert said == [unprivileged], said
