"""Run-wide set-up and checks of the test suite (fixtures live in tests/conftest.py)."""
import os
import sys

import pytest

# nbgrader shells out to alembic and jupyter, which live next to this interpreter: the Makefile puts
# that bin/ on PATH for `make test`; a bare `.venv/bin/python -m pytest ...` needs it too.
_BIN = os.path.dirname(sys.executable)
if _BIN not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = _BIN + os.pathsep + os.environ.get("PATH", "")

LOST_GROUP = pytest.StashKey[str]()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """``--dist loadgroup`` keeps each ``xdist_group`` on one worker, so an expensive module fixture (the
    graded class, the nbgrader course) is built once. Some pytest/pytest-xdist pairs drop the groups
    silently (pytest-xdist issue 1386): such a run fails each grouped test instead of building those
    fixtures on every worker."""
    if getattr(config.option, "loadgroup", False):
        for item in items:
            if item.get_closest_marker("xdist_group") and "@" not in item.nodeid:
                item.stash[LOST_GROUP] = ("pytest-xdist's --dist loadgroup lost this test's xdist_group: "
                                          "install the pytest and pytest-xdist pinned in requirements.txt")


def pytest_runtest_setup(item):
    if LOST_GROUP in item.stash:
        pytest.fail(item.stash[LOST_GROUP], pytrace=False)
