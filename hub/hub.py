"""A real JupyterHub for a demo class of this course, on one Linux machine, run as root.

    python hub/hub.py up      # make hub:      stand it up (refused in one line if one it made is running)
    python hub/hub.py down    # make hub-stop: stop it and remove exactly what `up` made
    python hub/hub.py status  # what the state file records

`up` lists everything it will make before making anything, and records each thing in the state file
(``$HUB_DIR/state.json``) before making it, so that `down` removes exactly those (also after an `up` that
failed half-way) and touches nothing else:

- accounts (useradd, a random password set by chpasswd): an instructor and two students, each with a
  home folder of mode 0700; the hub's group ``instructors`` (the instructor) lives in the hub's database;
- ``$HUB_DIR`` (default /srv/dlcourse-hub), which must not exist yet, and everything in it:
  ``venv/`` the class's environment (Debian's python3.11, the lock's pins, taken from this checkout's .venv:
  root's read-only files hard-linked, the rest copied; pip instead when .venv cannot serve; the course's
  package dlcourse installed non-editable: no grader, no solutions/ in it), ``venv/etc/jupyter/nbgrader_config.py`` the
  hub's global nbgrader config, ``exchange/`` nbgrader's exchange (mode 1777), ``student-config/`` the
  students' lab (nbgrader's instructor parts disabled and locked), ``hub-state/`` (mode 0700: the hub's
  database, cookie secret, log; the instructor's and students' passwords);
- the instructor's course: a copy of this checkout in the instructor's home (mode 0700), with ch01
  released to the exchange;
- processes: jupyterhub (as root), which starts configurable-http-proxy and the users' servers.

The course id is said once, in autograder/nbgrader_settings.py: the global config is generated from it,
and the instructor's copy configures its own from the same file. Options (environment variables, or make
variables of the same name): HUB_DIR, HUB_IP (127.0.0.1), HUB_PORT (8000), HUB_ACCOUNT_PREFIX (dlc-),
HUB_PYTHON (/usr/bin/python3.11), TORCH_INDEX, HUB_RELEASE (ch01_perceptron; empty: nothing released).
"""
from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import sysconfig
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HUB_DIR = Path(os.environ.get("HUB_DIR") or "/srv/dlcourse-hub")
STATE = HUB_DIR / "state.json"
CONFIG = ROOT / "hub" / "jupyterhub_config.py"
PREFIX = os.environ.get("HUB_ACCOUNT_PREFIX") or "dlc-"
PYTHON = os.environ.get("HUB_PYTHON") or "/usr/bin/python3.11"
TORCH_INDEX = os.environ.get("TORCH_INDEX", "https://download.pytorch.org/whl/cpu")
RELEASE = os.environ.get("HUB_RELEASE", "ch01_perceptron")
# nbgrader's instructor parts, off and locked for students (as binder/postBuild does for Binder's users)
INSTRUCTOR_PLUGINS = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list",
                      "@jupyter/nbgrader:create-assignment")
INSTRUCTOR_SERVER_EXTENSIONS = ("nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list")


STARTED = time.monotonic()


def say(text: str) -> None:
    print(f"hub: [{time.monotonic() - STARTED:4.0f} s] {text}", flush=True)


def refuse(text: str) -> None:
    print(f"make hub: {text}", file=sys.stderr, flush=True)
    sys.exit(2)


def run(*argv, check=True, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True, **kwargs)
    if check and done.returncode:
        raise RuntimeError(f"{' '.join(map(str, argv))} failed ({done.returncode}):\n{done.stdout[-3000:]}"
                           f"\n{done.stderr[-3000:]}")
    return done


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# what each recorded process's command line holds: a pid reused by another program is never signalled
COMMAND_OF = {"make hub": "hub.py", "jupyterhub": "jupyterhub", "configurable-http-proxy": "configurable-http-proxy"}


def alive(pid: int | None, what: str | None = None) -> bool:
    if not pid:
        return False
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False
    return what is None or COMMAND_OF.get(what, what) in command


def read_state() -> dict | None:
    try:
        return json.loads(STATE.read_text())
    except (OSError, ValueError):
        return None


def write_state(state: dict) -> None:
    tmp = STATE.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=1))
    tmp.chmod(0o600)
    tmp.replace(STATE)


def traversable_by_all(path: str) -> str | None:
    """The first folder on the way to ``path`` that other accounts cannot enter, if any."""
    current = "/"
    for part in Path(os.path.realpath(path)).parts[1:-1]:
        current = os.path.join(current, part)
        if not os.stat(current).st_mode & stat.S_IXOTH:
            return current
    return None


def readable_by_others(path: Path) -> bool:
    return traversable_by_all(str(path / "x")) is None and bool(os.stat(path).st_mode & stat.S_IROTH)


# ---------------------------------------------------------------------------------------------------- up

def plan() -> dict:
    names = {"instructor": f"{PREFIX}instructor", "students": [f"{PREFIX}student1", f"{PREFIX}student2"]}
    ip = os.environ.get("HUB_IP") or "127.0.0.1"
    port = int(os.environ.get("HUB_PORT") or 8000)
    instructor_home = Path("/home") / names["instructor"]
    return {
        "hub_dir": str(HUB_DIR), "checkout": str(ROOT), "ip": ip, "port": port,
        "url": f"http://{'127.0.0.1' if ip in ('0.0.0.0', '') else ip}:{port}",
        "hub_api_port": free_port(), "proxy_api_port": free_port(),
        "venv": str(HUB_DIR / "venv"), "exchange": str(HUB_DIR / "exchange"),
        "student_config": str(HUB_DIR / "student-config"), "hub_state": str(HUB_DIR / "hub-state"),
        "global_nbgrader_config": str(HUB_DIR / "venv" / "etc" / "jupyter" / "nbgrader_config.py"),
        "instructor": names["instructor"], "students": names["students"], "group": "instructors",
        "course_copy": str(instructor_home / "dlcourse"),
        "proxy_command": shutil.which("configurable-http-proxy"),
        "release": RELEASE, "course_id": course_id(),
        # filled in as things are made: what `down` removes
        "accounts": [], "folders": [], "processes": {},
    }


def check_prerequisites(state: dict) -> None:
    if os.geteuid() != 0:
        refuse("run it as root (it makes accounts, and the hub logs them in with PAM)")
    if not sys.platform.startswith("linux"):
        refuse("Linux only")
    old = read_state()
    if old is not None:
        running = [f"{what} {pid}" for what, pid in old.get("processes", {}).items() if alive(pid, what)]
        if running:
            refuse(f"a hub it made is already running ({', '.join(running)}; {old.get('url')}): make hub-stop first")
        refuse(f"{STATE} records a hub that is not running: make hub-stop removes what it made, then make hub")
    if HUB_DIR.exists():
        refuse(f"{HUB_DIR} exists and holds no hub of make hub's: HUB_DIR=<a new folder> (it is made and removed)")
    if not state["proxy_command"]:
        refuse("configurable-http-proxy is not installed: npm install -g configurable-http-proxy")
    if not os.access(PYTHON, os.X_OK):
        refuse(f"{PYTHON} is missing: apt-get install python3.11 python3.11-venv (or HUB_PYTHON=<a python3.11>)")
    blocked = traversable_by_all(PYTHON)
    if blocked:
        refuse(f"{PYTHON} lies in {blocked}, which the class's accounts cannot enter: HUB_PYTHON=<another>")
    for name in [state["instructor"], *state["students"]]:
        try:
            pwd.getpwnam(name)
            refuse(f"the account {name} exists already (not made by make hub): HUB_ACCOUNT_PREFIX=<another>")
        except KeyError:
            pass
        if Path("/home", name).exists():
            refuse(f"/home/{name} exists already: HUB_ACCOUNT_PREFIX=<another>")
    with socket.socket() as s:
        try:
            s.bind((state["ip"], state["port"]))
        except OSError as error:
            refuse(f"{state['ip']}:{state['port']} is taken ({error.strerror}): HUB_PORT=<another>")
    if not shutil.which("bwrap"):
        say("note: bubblewrap is not installed: the instructor cannot autograde here (apt-get install bubblewrap)")


def announce(state: dict) -> None:
    say("making, and recording in " + str(STATE) + " for make hub-stop:")
    say(f"  accounts: {state['instructor']} (hub group {state['group']}), {', '.join(state['students'])} "
        "(home folders of mode 0700)")
    say(f"  folders:  {HUB_DIR} (venv/, exchange/ mode 1777, student-config/, hub-state/ mode 0700), "
        f"{state['course_copy']} (the instructor's copy of the course)")
    say(f"  config:   {state['global_nbgrader_config']} (course id and exchange for everybody), "
        f"/home/{state['instructor']}/.jupyter/nbgrader_config.py (CourseDirectory.root)")
    say(f"  processes: jupyterhub on {state['url']}, configurable-http-proxy ({state['proxy_command']}), "
        "the users' servers")


def make_account(state: dict, name: str) -> str:
    state["accounts"].append(name)  # recorded first: down removes it even if what follows fails
    write_state(state)
    run("useradd", "--create-home", "--shell", "/bin/bash", "--comment", "dlcourse hub (make hub)", name)
    password = secrets.token_urlsafe(12)
    run("chpasswd", input=f"{name}:{password}\n")
    home = Path(pwd.getpwnam(name).pw_dir)
    home.chmod(0o700)
    # a terminal in the lab is a login shell (bash -l), whose /etc/profile resets PATH: the class's environment
    # first again (nbgrader, jupyter, python), as the servers have it
    with open(home / ".profile", "a") as profile:
        profile.write(f'\n# make hub: the class\'s environment first (nbgrader, jupyter, python)\n'
                      f'PATH="{HUB_DIR / "venv" / "bin"}:$PATH"\n')
    account = pwd.getpwnam(name)
    os.chown(home / ".profile", account.pw_uid, account.pw_gid)
    return password


def as_user(name: str, *argv, cwd: str, env: dict | None = None) -> subprocess.CompletedProcess:
    account = pwd.getpwnam(name)
    environment = {"HOME": account.pw_dir, "USER": name, "LOGNAME": name, "LANG": "C.UTF-8",
                   "PATH": f"{HUB_DIR / 'venv' / 'bin'}:/usr/local/bin:/usr/bin:/bin", **(env or {})}
    return run("runuser", "-u", name, "--", "/usr/bin/env", "-i", *(f"{k}={v}" for k, v in environment.items()),
               *argv, cwd=cwd)


def build_environment(state: dict) -> None:
    """The class's environment: the learner's packages (what Binder installs) and jupyterhub
    (jupyterhub-singleuser) at requirements.lock's versions, and the course's package installed non-editable
    from a copy of its sources (the checkout is left untouched). Copied from this environment (.venv, which
    make setup installed from the lock) when it can serve, else installed by pip."""
    venv = Path(state["venv"])
    started = time.monotonic()
    reason = why_not_copied()
    if reason is None:
        say("  copying the learner's packages and jupyterhub from this environment (make setup installed them "
            f"from the lock: {sys.prefix}); not its test tools, not its editable dlcourse")
        run(PYTHON, "-m", "venv", "--without-pip", venv)
        copy_packages(venv)
    else:
        say(f"  installing with pip ({reason})")
        run(PYTHON, "-m", "venv", venv)
        install_packages(venv)
    say(f"  the learner's packages: {time.monotonic() - started:.0f} s")
    # dlcourse alone, as a wheel built here: the grader (autograder/) stays out of the students' reach, and with
    # it the self-check, which would fail here without solutions/ (the notebook then says the grader is not there)
    source = HUB_DIR / "build" / "course-package"
    source.mkdir(parents=True)
    shutil.copy2(ROOT / "pyproject.toml", source / "pyproject.toml")
    shutil.copytree(ROOT / "dlcourse", source / "dlcourse", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    say("  the course's package dlcourse, not editable (not its grader: no solutions, no hidden tests)")
    wheels = HUB_DIR / "build" / "wheel"
    run(sys.executable, "-m", "pip", "--disable-pip-version-check", "wheel", "--no-deps", "--no-build-isolation",
        "--wheel-dir", wheels, source)
    run(venv / "bin" / "python", "-m", "pip", "--disable-pip-version-check", "install", "--no-deps", "--no-index",
        "--no-compile", *wheels.glob("dlcourse-*.whl"))
    (venv / "bin" / "dlcourse-check").unlink(missing_ok=True)  # the grader's command: not the students'
    shutil.rmtree(HUB_DIR / "build")
    say("  byte-compiling what is not yet")
    run(venv / "bin" / "python", "-m", "compileall", "-q", "-j", "0", venv / "lib", check=False)
    # the course's JupyterLab settings for everybody (as make setup and Binder install them); not student/
    etc = venv / "etc" / "jupyter"
    for item in (ROOT / "jupyter-config").iterdir():
        if item.name in ("student", "README.md"):
            continue
        if item.is_dir():
            shutil.copytree(item, etc / item.name, dirs_exist_ok=True)
        else:
            shutil.copy2(item, etc / item.name)
    run(venv / "bin" / "python", "-c", "import matplotlib.pyplot", env={**os.environ, "MPLBACKEND": "Agg",
                                                                      "MPLCONFIGDIR": str(HUB_DIR / "build-mpl")})
    shutil.rmtree(HUB_DIR / "build-mpl", ignore_errors=True)
    # root's, read-only for everybody else: linked files are (see copy_packages), copies were made so; the folders
    for folder, _, _ in os.walk(venv):
        os.chmod(folder, 0o755)
    leaks = [str(p) for p in [*(venv / "bin").iterdir(), *venv.glob("lib/python*/site-packages/*.pth"),
                              *venv.glob("lib/python*/site-packages/*.dist-info/direct_url.json")]
             if p.is_file() and not p.is_symlink() and any(
                 text.encode() in p.read_bytes() for text in {str(ROOT), sys.prefix, os.path.realpath(sys.prefix)})]
    if leaks:
        raise RuntimeError(f"the class's environment points into {ROOT} or {sys.prefix}: {leaks[:5]}")


def learner_packages() -> set[str]:
    """The learner's packages (Binder's: binder/resolve.py's DIRECT) and jupyterhub, with all they need, the
    extras they ask for too (nbconvert's bleach[css]: tinycss2), by canonical name, from this environment's
    metadata."""
    from importlib.metadata import distribution

    from packaging.markers import default_environment
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    sys.path.insert(0, str(ROOT / "binder"))
    from resolve import DIRECT
    seen: dict[str, set[str]] = {}
    todo = [(canonicalize_name(name), "") for name in (*DIRECT, "jupyterhub")]
    while todo:
        name, extra = todo.pop()
        if extra in seen.setdefault(name, set()):
            continue
        seen[name].add(extra)
        for text in distribution(name).requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({**default_environment(), "extra": extra}):
                todo += [(canonicalize_name(requirement.name), e) for e in ("", *requirement.extras)]
    return set(seen)


def why_not_copied() -> str | None:
    """None when this environment's packages can be copied as they are: a virtualenv of the same Python
    (version, ABI) as HUB_PYTHON, holding each learner's package at the lock's version."""
    from importlib.metadata import PackageNotFoundError, version

    from packaging.version import Version
    if sys.prefix == sys.base_prefix:
        return f"{sys.executable} is not a virtualenv's"
    probe = "import sys, sysconfig; print(sys.version_info[:2], sysconfig.get_config_var('SOABI'))"
    theirs = run(PYTHON, "-c", probe).stdout.strip()
    ours = f"{sys.version_info[:2]} {sysconfig.get_config_var('SOABI')}"
    if theirs != ours:
        return f"{PYTHON} is {theirs}, this environment's Python {ours}"
    sys.path.insert(0, str(ROOT / "binder"))
    from resolve import lock
    pins = lock()
    try:
        names = learner_packages()
    except PackageNotFoundError as missing:
        return f"{missing} is not installed here: make setup"
    for name in sorted(names):
        try:
            installed = Version(version(name))
        except PackageNotFoundError:
            return f"{name} is not installed here: make setup"
        if name in pins and installed.public != Version(pins[name]).public:
            return f"{name} is {installed} here, {pins[name]} in requirements.lock: make setup"
    return None


def copy_packages(venv: Path) -> None:
    """Every file each learner's package installed (its RECORD), and pip, linked or copied into the new virtualenv
    at the same place; the scripts' first line pointed at the new environment's python, as pip writes it."""
    from importlib.metadata import distribution
    prefix = os.path.realpath(sys.prefix)
    files = []
    for name in sorted(learner_packages() | {"pip"}):
        dist = distribution(name)
        for file in dist.files or []:
            relative = os.path.relpath(os.path.realpath(dist.locate_file(file)), prefix)
            if relative.startswith(".."):
                raise RuntimeError(f"{name}'s {file} lies outside {prefix}")
            files.append(relative)
    # each file hard-linked where it is root's and read-only for other accounts (the students' environment then
    # costs no copy, and removing it frees nothing of .venv); copied otherwise, and always bin/ and etc/, which
    # are changed below (a link would change .venv's file too); nothing here ever writes to a linked file
    for relative in files:
        source, target = os.path.join(prefix, relative), venv / relative
        try:
            info = os.stat(source, follow_symlinks=False)
        except FileNotFoundError:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists() or target.is_symlink():
            continue
        shared = (stat.S_ISREG(info.st_mode) and info.st_uid == 0 and not info.st_mode & 0o022
                  and info.st_mode & 0o004 and not relative.startswith(("bin/", "etc/")))
        if shared:
            try:
                os.link(source, target)
                continue
            except OSError:  # another file system, or links refused: a copy
                pass
        shutil.copy2(source, target, follow_symlinks=False)
        if not os.path.islink(target):
            mode = info.st_mode & 0o777
            os.chmod(target, (mode | 0o644 | (0o111 if mode & 0o100 else 0)) & ~0o022)
    python = f"#!{venv / 'bin' / 'python'}".encode()
    olds = {f"#!{where}/bin/python".encode() for where in (sys.prefix, prefix)}
    for script in (venv / "bin").iterdir():
        if script.is_file() and not script.is_symlink():
            text = script.read_bytes()
            first, newline, rest = text.partition(b"\n")
            if first.split(b" ")[0].rstrip(b"0123456789.") in olds:  # '#!<prefix>/bin/python3.11 -E' too
                script.write_bytes(python + newline + rest)


def install_packages(venv: Path) -> None:
    """The pip route (an environment that cannot be copied): the lock's pins, torch from TORCH_INDEX."""
    pip = [venv / "bin" / "python", "-m", "pip", "--disable-pip-version-check", "install", "--progress-bar", "off",
           "--no-compile"]  # byte-compiled once at the end, on every core
    lock = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        line = line.split("#")[0].strip()
        if "==" in line:
            lock[line.split("==")[0].strip().lower()] = line.split(";")[0].split("==")[1].strip()
    if TORCH_INDEX:
        say(f"  torch {lock['torch']} from {TORCH_INDEX}")
        run(*pip, "--no-deps", "--index-url", TORCH_INDEX, f"torch=={lock['torch']}")
    sys.path.insert(0, str(ROOT / "binder"))
    from resolve import DIRECT  # the learner's packages (what Binder installs)
    wanted = [*DIRECT, "jupyterhub"]
    say(f"  {', '.join(wanted)} and what they need, at requirements.lock's versions")
    run(*pip, "-c", ROOT / "requirements.lock", *(f"{name}=={lock[name.lower()]}" for name in wanted))


def course_id() -> str:
    """autograder/nbgrader_settings.py's COURSE_ID: the one place the course id is said."""
    sys.path.insert(0, str(ROOT))
    from autograder.nbgrader_settings import COURSE_ID
    return COURSE_ID


def write_global_nbgrader_config(state: dict) -> None:
    """The hub's nbgrader config for every server: the course id generated from the course's own settings and
    the exchange. The instructor's copy configures its own course id from the same file."""
    Path(state["global_nbgrader_config"]).write_text(
        '"""The hub\'s nbgrader config, for every server of the class. Generated by make hub (hub/hub.py):\n'
        'the course id is autograder/nbgrader_settings.py\'s COURSE_ID, the value the instructor\'s course\n'
        'directory configures from the same file; change it there, then make hub-stop and make hub."""\n'
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.course_id = {state['course_id']!r}\n"
        f"c.Exchange.root = {state['exchange']!r}\n")


def write_student_config(state: dict) -> None:
    """jupyter-config/student/ with the instructor parts also locked (jupyter labextension lock writes the
    same key), on the students' JUPYTER_CONFIG_PATH."""
    target = Path(state["student_config"])
    shutil.copytree(ROOT / "jupyter-config" / "student", target)
    page = target / "labconfig" / "page_config.json"
    config = json.loads(page.read_text())
    config.setdefault("disabledExtensions", {}).update({p: True for p in INSTRUCTOR_PLUGINS})
    config["lockedExtensions"] = {p: True for p in INSTRUCTOR_PLUGINS}
    page.write_text(json.dumps(config, indent=2) + "\n")
    server = target / "jupyter_server_config.json"
    config = json.loads(server.read_text())
    config.setdefault("ServerApp", {}).setdefault("jpserver_extensions", {}).update(
        {e: False for e in INSTRUCTOR_SERVER_EXTENSIONS})
    server.write_text(json.dumps(config, indent=2) + "\n")


def copy_course(state: dict) -> None:
    """The instructor's course directory: this checkout's files (tracked and new, not ignored ones), owned
    by the instructor in a home folder of mode 0700; its nbgrader config is the course's own."""
    name = state["instructor"]
    account = pwd.getpwnam(name)
    copy = Path(state["course_copy"])
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True)
    listed = [f for f in files.stdout.split("\0") if f] if files.returncode == 0 else None
    if listed is None:  # not a git checkout: the folders of the course
        listed = [str(p.relative_to(ROOT)) for top in ("solutions", "course", "autograder", "dlcourse", "tools")
                  for p in (ROOT / top).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
        listed += ["nbgrader_config.py", "pyproject.toml", "Makefile", "requirements.txt", "requirements.lock"]
    for relative in listed:
        source = ROOT / relative
        if source.is_file() and not source.is_symlink():
            (copy / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / relative)
    jupyter = Path(account.pw_dir) / ".jupyter"
    jupyter.mkdir()
    (jupyter / "nbgrader_config.py").write_text(
        "# The instructor's nbgrader config (written by make hub): the formgrader's course directory.\n"
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.root = {str(copy)!r}\n")
    for path in [copy, jupyter, *copy.rglob("*"), *jupyter.rglob("*")]:
        os.chown(path, account.pw_uid, account.pw_gid, follow_symlinks=False)
    copy.chmod(0o700)


def instructor_env(state: dict) -> dict:
    """What the instructor's server (and commands run as the instructor) see beyond the hub's defaults."""
    return {"PYTHONPATH": state["course_copy"], "DLCOURSE_EXISTING_ENV": "1", "MPLBACKEND": "Agg"}


def release(state: dict) -> None:
    if not state["release"]:
        return
    for verb in (("generate_assignment", state["release"], "--force"), ("release_assignment", state["release"])):
        say(f"  nbgrader {' '.join(verb)} (as {state['instructor']})")
        as_user(state["instructor"], str(Path(state["venv"]) / "bin" / "nbgrader"), *verb, cwd=state["course_copy"],
                env=instructor_env(state))


def start_hub(state: dict) -> None:
    hub_state = Path(state["hub_state"])
    log = open(hub_state / "jupyterhub.log", "ab")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_", "PYTHON"))}
    env["DLCOURSE_HUB_STATE"] = str(STATE)
    proc = subprocess.Popen([str(Path(sys.executable).parent / "jupyterhub"), "-f", str(CONFIG)], cwd=hub_state,
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                            start_new_session=True)
    state["processes"]["jupyterhub"] = proc.pid
    write_state(state)
    deadline = time.monotonic() + 90
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyterhub exited ({proc.returncode}): {hub_state / 'jupyterhub.log'}:\n"
                               + (hub_state / "jupyterhub.log").read_text()[-3000:])
        try:
            with urllib.request.urlopen(f"{state['url']}/hub/api/", timeout=2) as reply:
                if reply.status == 200:
                    break
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"jupyterhub did not answer on {state['url']} in 90 s: {hub_state / 'jupyterhub.log'}")
        time.sleep(0.5)
    try:
        state["processes"]["configurable-http-proxy"] = int((hub_state / "jupyterhub-proxy.pid").read_text())
    except (OSError, ValueError):
        pass
    write_state(state)


def up() -> int:
    started = time.monotonic()
    os.umask(0o022)  # what it makes is readable by the class's accounts (the homes and hub-state/ are made 0700)
    state = plan()
    check_prerequisites(state)
    announce(state)
    HUB_DIR.mkdir(parents=True, mode=0o755)
    HUB_DIR.chmod(0o755)  # the class's accounts reach venv/, exchange/ and student-config/ through it
    state["folders"].append(str(HUB_DIR))
    state["processes"]["make hub"] = os.getpid()  # a second make hub meanwhile is refused; hub-stop stops it
    write_state(state)
    try:
        hub_state = Path(state["hub_state"])
        hub_state.mkdir(mode=0o700)
        exchange = Path(state["exchange"])
        exchange.mkdir()
        exchange.chmod(0o1777)  # nbgrader's exchange: world-writable, with the sticky bit
        say("making the class's environment (Debian's python3.11, the lock's pins)")
        build_environment(state)
        write_global_nbgrader_config(state)
        write_student_config(state)
        passwords = {}
        for name in [state["instructor"], *state["students"]]:
            passwords[name] = make_account(state, name)
        state["folders"].append(state["course_copy"])
        write_state(state)
        copy_course(state)
        release(state)
        (hub_state / "passwords.json").write_text(json.dumps(passwords, indent=1))
        (hub_state / "passwords.json").chmod(0o600)
        say(f"starting jupyterhub on {state['url']}")
        start_hub(state)
        del state["processes"]["make hub"]  # done: its pid may be another program's from now on
        write_state(state)
    except Exception as error:  # noqa: BLE001 - every failure: one message, then what was made is removed
        print(f"make hub: FAILED: {error}", file=sys.stderr, flush=True)
        say("removing what it made (as make hub-stop would)")
        down()
        return 1
    bad = readable_by_others(ROOT) and readable_by_others(ROOT / "solutions")
    say(f"ready in {time.monotonic() - started:.0f} s: {state['url']} "
        "(make hub-stop stops it and removes all of the above)")
    say(f"  instructor: {state['instructor']}  password: {passwords[state['instructor']]}  "
        f"(group {state['group']}; the formgrader: {state['url']}/user/{state['instructor']}/formgrader)")
    for name in state["students"]:
        say(f"  student:    {name}  password: {passwords[name]}")
    say(f"  passwords also in {hub_state / 'passwords.json'} (root only); log: {hub_state / 'jupyterhub.log'}")
    if bad:
        say(f"  warning: this checkout ({ROOT}) and its solutions/ are readable by every account, the students' "
            "too: on a real class keep the clone in a folder of mode 0700 (docs/jupyterhub.md)")
    return 0


# -------------------------------------------------------------------------------------------------- down

def stop_process(pid: int, what: str) -> None:
    if not alive(pid, what if what in COMMAND_OF else None):
        return
    say(f"stopping {what} ({pid})")
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    while alive(pid) and time.monotonic() < deadline:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.2)
    if alive(pid):
        os.kill(pid, signal.SIGKILL)


def processes_of(uid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def down() -> int:
    started = time.monotonic()
    state = read_state()
    if state is None:
        print(f"make hub-stop: no hub of make hub's ({STATE} is missing): nothing to do", file=sys.stderr)
        return 0
    if os.geteuid() != 0:
        print("make hub-stop: run it as root", file=sys.stderr)
        return 2
    # a make hub still making things first; the hub stops the users' servers and the proxy itself
    # (cleanup_servers, cleanup_proxy); the proxy is stopped here too if it outlived the hub
    for what in ("make hub", "jupyterhub", "configurable-http-proxy"):
        pid = state.get("processes", {}).get(what)
        if pid and pid != os.getpid():  # (make hub removing what it made after a failure)
            stop_process(pid, what)
    for name in reversed(state.get("accounts", [])):
        try:
            uid = pwd.getpwnam(name).pw_uid
        except KeyError:
            continue
        for pid in processes_of(uid):  # a kernel or terminal the hub left behind: that account's own
            stop_process(pid, f"{name}'s process")
        say(f"removing the account {name} and its home folder")
        subprocess.run(["userdel", "--remove", name], capture_output=True, text=True)
        home = Path("/home") / name
        if home.exists() and home.stat().st_uid == uid:
            shutil.rmtree(home, ignore_errors=True)
    for folder in reversed(state.get("folders", [])):
        if Path(folder).exists():
            say(f"removing {folder}")
            # rm rather than shutil.rmtree: the environment's tens of thousands of files go faster
            subprocess.run(["rm", "-rf", "--one-file-system", "--", folder], capture_output=True)
    if STATE.exists():  # HUB_DIR not recorded (a failure before it was)
        STATE.unlink()
    say(f"stopped; everything make hub made is removed ({time.monotonic() - started:.0f} s)")
    return 0


def status() -> int:
    state = read_state()
    if state is None:
        print("no hub of make hub's")
        return 1
    running = {what: pid for what, pid in state.get("processes", {}).items() if alive(pid, what)}
    print(json.dumps({**state, "running": running}, indent=1))
    return 0


if __name__ == "__main__":
    verbs = {"up": up, "down": down, "status": status}
    if len(sys.argv) != 2 or sys.argv[1] not in verbs:
        sys.exit(f"usage: {sys.argv[0]} up|down|status")
    sys.exit(verbs[sys.argv[1]]())
