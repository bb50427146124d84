"""``nbgrader collect`` against what students can write into the exchange (issue 38, findings 1, 2 and 6).

One real ``nbgrader collect``, run as the unprivileged instructor (tests/test_lifecycle.py's account), on
an inbound folder written as nbgrader's ``submit`` writes it, each submission folder owned by its author's
own account (made with useradd for the test, removed after it):

- dlct-bob submits; then dlct-alice writes a newer folder named after him, holding the blank release
  (finding 1): it is not collected, and bob's own older one is;
- dlct-carol submits five sparse files of 95 MB each (a few KB on disk), dlct-dave a FIFO, a socket and
  a device in a newer submission, and a folder's name is not nbgrader's (finding 2): each is left out with a
  warning naming it; dave's older submission and the rest of the class are collected, exit status 0;
- s1001, whose account is dlct-erin (``LinkRefusingCollect.owners``), submits with a ``timestamp.txt``
  set back a day, then rewrites the notebook in place (which changes no folder's ctime) (finding 6):
  the collected ``timestamp.txt`` is the time of that rewrite, the claim kept in ``timestamp_claimed.txt``.

The lifecycle (tests/test_lifecycle.py) carries the lateness on through ``nbgrader autograde`` into the
gradebook: bob's forged ``timestamp.txt`` there does not make him on time.
"""
from __future__ import annotations

import datetime
import logging
import os
import pwd
import re
import secrets
import stat
import subprocess
import time
from pathlib import Path

import nbformat
import pytest

from autograder import submissions
from autograder.nbgrader_exchange import CLAIMED, TIME_FORMAT, LinkRefusingCollect
from tests.helpers import shared_folder
from tests.test_lifecycle import CHAPTER, COURSE, instructor_account, nbgrader

pytestmark = [pytest.mark.xdist_group("collect")]  # one worker: the accounts and the collect are made once

ACCOUNTS = ("dlct-alice", "dlct-bob", "dlct-carol", "dlct-dave", "dlct-erin")
NOTEBOOK = f"{CHAPTER}.ipynb"


def _utc_now(shift: float = 0.0) -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None) + datetime.timedelta(seconds=shift)


def submit(inbound: Path, student: str, account: str, files: dict[str, bytes], claimed: datetime.datetime,
           build=None) -> Path:
    """A submission folder as nbgrader's ``submit`` leaves it, written by ``account``; ``build(folder)``
    adds what a student could add by hand before it is handed over."""
    stamp = claimed.strftime(TIME_FORMAT)
    folder = inbound / f"{student}+{CHAPTER}+{stamp}+{secrets.token_hex(16)}"
    folder.mkdir()
    for name, content in {**files, "timestamp.txt": stamp.encode(),
                          "submission_secret.txt": secrets.token_hex(64).encode()}.items():
        (folder / name).write_bytes(content)
        (folder / name).chmod(0o644)
    if build:
        build(folder)
    folder.chmod(0o777)
    uid = pwd.getpwnam(account).pw_uid
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, uid, uid, follow_symlinks=False)
    return folder


def _notebook(nb) -> bytes:
    return nbformat.writes(nb).encode()


def _sparse(folder: Path) -> None:
    for i in range(5):
        with open(folder / f"data{i}.bin", "wb") as f:
            f.write(b"x" * 4096)
            f.truncate(95_000_000)  # 95 MB apparent, a few KB on disk


def _specials(folder: Path) -> None:
    os.mkfifo(folder / "pipe")
    os.mknod(folder / "socket", 0o600 | stat.S_IFSOCK)
    os.mknod(folder / "null", 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # (where a student could make one)


@pytest.fixture(scope="module")
def accounts():
    assert os.geteuid() == 0, "submissions owned by several accounts: run as root (as make test on CI does)"
    made = []
    try:
        for name in ACCOUNTS:
            try:
                pwd.getpwnam(name)
            except KeyError:
                subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                               check=True, capture_output=True)
                made.append(name)
        yield ACCOUNTS
    finally:
        for name in made:
            subprocess.run(["userdel", name], capture_output=True)


@pytest.fixture(scope="module")
def collected(accounts):
    with shared_folder("dlcourse-collect-") as tmp:
        yield _collect(tmp)


def _collect(tmp: Path) -> dict:
    account, uid = instructor_account(tmp)
    exchange, instructor = tmp / "exchange", tmp / "instructor"
    inbound = exchange / COURSE / "inbound"
    inbound.mkdir(parents=True)
    instructor.mkdir()
    exchange.chmod(0o777)
    (instructor / "nbgrader_config.py").write_text(
        "from autograder.nbgrader_settings import configure\n"
        "c = get_config()\n"
        f"configure(c, {str(instructor)!r})\n"
        f"c.Exchange.root = {str(exchange)!r}\n"
        "c.LinkRefusingCollect.owners = {'s1001': 'dlct-erin'}\n")
    for path in (exchange / COURSE, inbound, instructor, instructor / "nbgrader_config.py"):
        os.chown(path, uid, uid)
    inbound.chmod(0o733)  # as nbgrader's release_assignment makes it: students cannot list it

    reference, blank = _notebook(submissions.reference(CHAPTER)), _notebook(submissions.untouched(CHAPTER))
    now = _utc_now()
    # finding 6 first, so that its folder's ctime is well before the rewrite below
    erin = submit(inbound, "s1001", "dlct-erin", {NOTEBOOK: blank}, _utc_now(-86400))
    bob = submit(inbound, "dlct-bob", "dlct-bob", {NOTEBOOK: reference}, now)
    forged = submit(inbound, "dlct-bob", "dlct-alice", {NOTEBOOK: blank}, now + datetime.timedelta(minutes=1))
    alice = submit(inbound, "dlct-alice", "dlct-alice", {NOTEBOOK: reference}, now)
    carol = submit(inbound, "dlct-carol", "dlct-carol", {NOTEBOOK: reference}, now, build=_sparse)
    dave_before = submit(inbound, "dlct-dave", "dlct-dave", {NOTEBOOK: blank}, _utc_now(-10))
    dave = submit(inbound, "dlct-dave", "dlct-dave", {NOTEBOOK: reference}, now, build=_specials)
    unnamed = inbound / f"dlct-alice+{CHAPTER}+not a time"
    unnamed.mkdir()
    os.chown(unnamed, pwd.getpwnam("dlct-alice").pw_uid, -1)

    time.sleep(max(0.0, 0.5 - (_utc_now() - now).total_seconds()))
    rewritten = time.time()
    with open(erin / NOTEBOOK, "r+b") as f:  # in place: the folder's ctime stays that of the submission
        f.write(reference)
        f.truncate()
    erin_folder_ctime = os.stat(erin).st_ctime

    done = nbgrader("collect", CHAPTER, cwd=instructor, home=instructor, account=account, check=False)
    return {"done": done, "log": done.stdout + done.stderr, "submitted": instructor / "submitted",
            "bob": bob, "forged": forged, "alice": alice, "carol": carol, "dave": dave, "dave_before": dave_before,
            "erin": erin, "unnamed": unnamed, "rewritten": rewritten, "erin_folder_ctime": erin_folder_ctime,
            "reference": reference, "blank": blank}


def _collected(c: dict, student: str) -> Path:
    return c["submitted"] / student / CHAPTER


def test_a_submission_in_a_classmates_name_is_not_collected(collected):
    """Finding 1: alice's folder named after bob is refused with a warning naming it and its owner; bob's own
    older submission is collected, not hidden by the forged newer one."""
    c = collected
    assert c["done"].returncode == 0, c["log"][-3000:]
    assert (_collected(c, "dlct-bob") / NOTEBOOK).read_bytes() == c["reference"]
    forged = re.escape(c["forged"].name)
    assert re.search(rf"{forged}: names dlct-bob but is owned by dlct-alice.*: not collected", c["log"]), c["log"]
    assert re.search(rf"not collected: .*{forged} \(names dlct-bob", c["log"])  # and in the closing summary
    assert (_collected(c, "dlct-alice") / NOTEBOOK).read_bytes() == c["reference"]
    # a student id that is not an account name, mapped by LinkRefusingCollect.owners: collected
    assert (_collected(c, "s1001") / NOTEBOOK).is_file()


def test_one_submission_does_not_stop_the_collect(collected):
    """Finding 2: sparse files past max_dir_size, a FIFO, a socket and a device, a name nbgrader cannot parse: each
    folder left out with a warning naming it; the rest of the class is collected, exit status 0."""
    c = collected
    assert c["done"].returncode == 0 and "Traceback" not in c["log"], c["log"][-3000:]
    assert sorted(p.name for p in c["submitted"].iterdir()) == ["dlct-alice", "dlct-bob", "dlct-dave", "s1001"]
    assert re.search(rf"{re.escape(c['carol'].name)}: larger than CourseDirectory.max_dir_size", c["log"])
    assert re.search(rf"{re.escape(c['dave'].name)}: holds what is not a regular file \(null: a device, pipe: a "
                     r"FIFO, socket: a socket\)", c["log"]), c["log"]
    assert re.search(rf"{re.escape(c['unnamed'].name)}: not a submission folder's name", c["log"])
    # dave's newest folder is refused: his earlier one is collected, nothing of the refused one
    dave = _collected(c, "dlct-dave")
    assert (dave / NOTEBOOK).read_bytes() == c["blank"] and not (dave / "pipe").exists()
    assert not list(c["submitted"].glob("*/.collecting-*"))


def test_the_submission_time_is_one_a_student_cannot_set_back(collected):
    """Finding 6: the collected timestamp.txt is the latest ctime of the folder and of every file in it (the
    notebook rewritten in place after the folder was made), the student's own kept as timestamp_claimed.txt."""
    from nbgrader.utils import parse_utc
    c = collected
    erin = _collected(c, "s1001")
    assert c["erin_folder_ctime"] < c["rewritten"] - 0.2  # the folder's ctime alone would miss the rewrite
    trusted = parse_utc((erin / "timestamp.txt").read_text())
    rewritten = datetime.datetime.fromtimestamp(c["rewritten"], datetime.timezone.utc).replace(tzinfo=None)
    assert trusted >= rewritten - datetime.timedelta(seconds=0.05), (trusted, rewritten)  # (ctime: a coarse clock)
    claimed = (c["erin"] / "timestamp.txt").read_text()
    assert (erin / CLAIMED).read_text() == claimed and parse_utc(claimed) < trusted - datetime.timedelta(hours=23)
    assert re.search(rf"{re.escape(c['erin'].name)}: submitted at .*but its timestamp.txt claims", c["log"])
    assert (erin / NOTEBOOK).read_bytes() == c["reference"]
    # an honest submission: its claim is its time, give or take the submit itself; no warning
    alice = _collected(c, "dlct-alice")
    gap = parse_utc((alice / "timestamp.txt").read_text()) - parse_utc((alice / CLAIMED).read_text())
    assert -datetime.timedelta(seconds=1) < gap < datetime.timedelta(seconds=30)  # (ctime: a coarse clock)
    assert not re.search(rf"{re.escape(c['alice'].name)}: submitted at", c["log"])


def test_the_owner_check_can_be_turned_off(tmp_path, monkeypatch, caplog):
    """``c.ExchangeCollect.check_owner = False``: where every submission belongs to one account (a service
    account), a folder named after a student who owns nothing is collected; by default it is not."""
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config
    inbound = tmp_path / "exchange" / COURSE / "inbound"
    inbound.mkdir(parents=True)
    folder = inbound / f"zed-nobody+{CHAPTER}+{_utc_now().strftime(TIME_FORMAT)}+{secrets.token_hex(4)}"
    folder.mkdir()
    (folder / NOTEBOOK).write_text("{}")
    monkeypatch.setattr(LinkRefusingCollect, "_duedate", lambda self: None)  # no gradebook needed here
    results = {}
    for check in (True, False):
        config = Config()
        config.ExchangeCollect.check_owner = check
        coursedir = CourseDirectory(root=str(tmp_path / f"course-{check}"), course_id=COURSE,
                                    assignment_id=CHAPTER)
        collect = LinkRefusingCollect(coursedir=coursedir, authenticator=None, root=str(tmp_path / "exchange"),
                                      config=config)
        collect.log = logging.getLogger(f"collect-{check}")
        with caplog.at_level(logging.INFO):
            collect.start()
        results[check] = (tmp_path / f"course-{check}" / "submitted" / "zed-nobody" / CHAPTER / NOTEBOOK).is_file()
    assert results == {True: False, False: True}
    assert "names zed-nobody but is owned by" in caplog.text
