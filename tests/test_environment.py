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


def binder_resolve():
    import importlib.util
    spec = importlib.util.spec_from_file_location("binder_resolve", ROOT / "binder" / "resolve.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_binder_installs_only_locked_versions():
    """Every package Binder installs (the learner's packages and everything they depend on, read from the
    installed metadata) is pinned in binder/requirements.txt, at requirements.lock's version; CPU torch."""
    resolve = binder_resolve()
    text = (ROOT / "binder" / "requirements.txt").read_text()
    binder = {resolve.canonical(k): v for k, v in pins(ROOT / "binder" / "requirements.txt").items()}
    lock = {resolve.canonical(k): v for k, v in pins(ROOT / "requirements.lock").items()}
    installed = resolve.closure()
    assert len(installed) > 50 and not installed - set(binder), f"unpinned on Binder: {sorted(installed - set(binder))}"
    assert {k: lock.get(k) for k in binder} == binder, "a Binder pin differs from requirements.lock"
    main = pins(ROOT / "requirements.txt")
    for needed in resolve.DIRECT:
        assert binder[needed] == main[needed], needed
    assert text == resolve.requirements(), "binder/requirements.txt is stale: python binder/resolve.py"
    assert "torch==" + main["torch"] + "+cpu" in text and resolve.CPU_INDEX in text, "Binder must use CPU torch"
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"


def test_make_check_on_binder_installs_nothing():
    """On Binder (binder/start sets DLCOURSE_EXISTING_ENV=1 and WORK=course) make check uses the image's
    environment as it is: no virtualenv, no pip; it checks the notebook in course/."""
    import os
    import shutil
    import subprocess

    start = (ROOT / "binder" / "start").read_text()
    assert "export DLCOURSE_EXISTING_ENV=1 WORK=course" in start
    env = {**os.environ, "DLCOURSE_EXISTING_ENV": "1", "WORK": "course"}
    done = subprocess.run(["make", "-n", "check", "CHAPTER=ch01_perceptron"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "pip" not in done.stdout and "venv" not in done.stdout.replace(os.path.dirname(shutil.which("python3")), "")
    python = os.path.join(os.path.dirname(shutil.which("python3")), "python")
    assert f"{python} -m autograder check" in done.stdout, done.stdout
    assert "course/ch01_perceptron/ch01_perceptron.ipynb" in done.stdout, done.stdout


def test_lock_agrees_with_direct_pins():
    lock, main = pins(ROOT / "requirements.lock"), pins(ROOT / "requirements.txt")
    assert {k: lock.get(k) for k in main} == main


def test_installed_versions_are_the_pinned_ones():
    from importlib.metadata import version
    for name, pinned in pins(ROOT / "requirements.txt").items():
        assert version(name).split("+")[0] == pinned, name


def test_binder_hides_instructor_tools():
    post_build = (ROOT / "binder" / "postBuild").read_text()  # nbgrader's parts: tests/test_binder_nbgrader.py
    for plugin in ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list",
                   "@jupyter/nbgrader:create-assignment", "nbgrader.server_extensions.formgrader"):
        assert plugin in post_build
    assert "matplotlib.pyplot" in post_build  # font cache at image time
    assert "OMP_NUM_THREADS=1" in (ROOT / "binder" / "start").read_text()


def test_the_course_jupyter_configuration_is_installed():
    """make setup (and Binder's postBuild) copy jupyter-config/ into the environment's etc/jupyter, where
    JupyterLab reads it: what it disables (the busy favicon: docs/widget-latency.md) is disabled."""
    from jupyterlab_server.config import get_static_page_config

    course = json.loads((ROOT / "jupyter-config" / "labconfig" / "page_config.d" / "dlcourse.json").read_text())
    wanted = course["disabledExtensions"]
    disabled = get_static_page_config(level="all").get("disabledExtensions", {})
    assert {name: disabled.get(name) for name in wanted} == wanted, "run make setup: jupyter-config/ is not installed"
    assert 'cp -r jupyter-config/. "$prefix/etc/jupyter/"' in (ROOT / "binder" / "postBuild").read_text()


def test_binder_tells_its_users_to_download_their_work(tmp_path):
    """In a Binder session (BINDER_REPO_URL set) binder/start puts the note beside the chapters, in
    course/ where the session opens; a rehearsal outside Binder leaves course/ as it is."""
    import os
    import shutil
    import subprocess

    shutil.copytree(ROOT / "binder", tmp_path / "binder")
    (tmp_path / "course").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "BINDER_REPO_URL"}
    subprocess.run(["bash", str(tmp_path / "binder" / "start"), "true"], env=env, check=True, timeout=30)
    assert not list((tmp_path / "course").iterdir())
    env["BINDER_REPO_URL"] = "https://github.com/dlcourse/dlcourse"
    done = subprocess.run(["bash", str(tmp_path / "binder" / "start"), "sh", "-c", "echo $WORK"], env=env,
                          check=True, timeout=30, capture_output=True, text=True)
    assert done.stdout.strip() == "course"
    note = (tmp_path / "course" / "DOWNLOAD-YOUR-WORK.md").read_text()
    assert "Download" in note and "deleted" in note
