"""The pinned environment is described once, and every description agrees."""
import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^\s*-?\s*([A-Za-z0-9_.\-]+)==([^\s#]+)")


def pins(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        match = PIN.match(line)
        if match:
            found[match.group(1).lower()] = match.group(2).split("+")[0]
    return found


def test_environment_yml_pins_equal_requirements():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    yml = {m.group(1).lower(): m.group(2) for m in (PIN.match(line) for line in pip_section) if m}
    assert yml == pins(ROOT / "requirements.txt")
    assert "python=3.11" in env["dependencies"]


def test_binder_pins_are_a_subset_of_requirements():
    binder, main = pins(ROOT / "binder" / "requirements.txt"), pins(ROOT / "requirements.txt")
    assert binder, "binder/requirements.txt pins nothing"
    assert {k: main.get(k) for k in binder} == binder
    for needed in ("torch", "jupyterlab", "nbgrader", "ipywidgets", "numpy", "matplotlib"):
        assert needed in binder
    assert "+cpu" in (ROOT / "binder" / "requirements.txt").read_text(), "Binder must use the CPU build of torch"
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"


def test_lock_agrees_with_direct_pins():
    lock, main = pins(ROOT / "requirements.lock"), pins(ROOT / "requirements.txt")
    assert {k: lock.get(k) for k in main} == main


def test_installed_versions_are_the_pinned_ones():
    from importlib.metadata import version
    for name, pinned in pins(ROOT / "requirements.txt").items():
        assert version(name).split("+")[0] == pinned, name


def test_binder_hides_instructor_tools():
    post_build = (ROOT / "binder" / "postBuild").read_text()
    for plugin in ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list",
                   "@jupyter/nbgrader:create-assignment", "nbgrader.server_extensions.formgrader"):
        assert plugin in post_build
    assert "matplotlib.pyplot" in post_build  # font cache at image time
    assert "OMP_NUM_THREADS=1" in (ROOT / "binder" / "start").read_text()


def test_the_course_jupyter_configuration_is_installed():
    """make setup (and Binder's postBuild) copy jupyter-config/ into the environment's etc/jupyter, where
    JupyterLab reads it: what it disables (the busy favicon: README, "Widget latency") is disabled."""
    from jupyterlab_server.config import get_static_page_config

    course = json.loads((ROOT / "jupyter-config" / "labconfig" / "page_config.d" / "dlcourse.json").read_text())
    wanted = course["disabledExtensions"]
    disabled = get_static_page_config(level="all").get("disabledExtensions", {})
    assert {name: disabled.get(name) for name in wanted} == wanted, "run make setup: jupyter-config/ is not installed"
    assert 'cp -r jupyter-config/. "$prefix/etc/jupyter/"' in (ROOT / "binder" / "postBuild").read_text()
