"""Binder (binder/postBuild): nbgrader's lab extension keeps only what works without a course's exchange.

Issue 38, finding 7: Binder kept nbgrader's Assignment List, and then its "Nbgrader" menu, a menu of blank entries
once the plugins behind them are off (seen in Chromium: File Edit View Run Kernel Nbgrader ..., five empty items).
Every plugin of the installed extension but Validate is disabled and locked, and so are its server extensions."""
from __future__ import annotations

import re
import shlex

from autograder.course import ROOT
from benchmarks.binder import LEARNER_OFF, LEARNER_ON  # the one list; the Binder rehearsal checks the built image

KEPT = {p for p in LEARNER_ON if p.startswith("@")}  # the Validate button: no exchange needed


def _post_build_commands() -> list[list[str]]:
    text = (ROOT / "binder" / "postBuild").read_text().replace("\\\n", " ")
    return [shlex.split(line, comments=True) for line in text.splitlines() if line.strip() and not line.startswith("#")]


def _installed_plugins() -> set[str]:
    import sys
    from pathlib import Path
    static = Path(sys.prefix, "share", "jupyter", "labextensions", "@jupyter", "nbgrader", "static")
    found = {m for js in static.glob("*.js") for m in re.findall(r'"(@jupyter/nbgrader:[a-z-]+)"', js.read_text())}
    assert found, f"nbgrader's lab extension is not installed under {static}"
    return found


def test_binder_turns_off_every_nbgrader_part_that_needs_a_course():
    commands = _post_build_commands()
    said = {verb: {word for c in commands if c[:3] == ["jupyter", "labextension", verb] for word in c[3:]
                   if not word.startswith("-")} for verb in ("disable", "lock")}
    wanted = _installed_plugins() - KEPT
    assert "@jupyter/nbgrader:menu" in wanted and "@jupyter/nbgrader:assignment-list" in wanted
    assert wanted == {p for p in LEARNER_OFF if p.startswith("@")}, "benchmarks.binder's LEARNER_OFF is incomplete"
    assert wanted <= said["disable"] and wanted <= said["lock"], (wanted - said["disable"], wanted - said["lock"])
    assert not KEPT & (said["disable"] | said["lock"])
    servers = {word for c in commands if c[:4] == ["jupyter", "server", "extension", "disable"] for word in c[4:]}
    assert {"nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list",
            "nbgrader.server_extensions.assignment_list"} <= servers
    assert {p for p in LEARNER_OFF if not p.startswith("@")} <= servers
    assert not {p for p in LEARNER_ON if not p.startswith("@")} & servers
