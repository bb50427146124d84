"""Fixtures shared by the test files."""
import os

import matplotlib
import pytest

matplotlib.use("Agg")  # the widget tests draw figures off screen


@pytest.fixture(scope="session")
def playwright():
    """One Playwright session per test process: its sync API allows only one at a time, and every
    browser test (tests/test_*browser.py, one xdist group) launches its Chromium from it."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("REQUIRE_BROWSER") == "1":
            pytest.fail("REQUIRE_BROWSER=1 but Python playwright is not installed", pytrace=False)
        pytest.skip("Python playwright is not installed")
    with sync_playwright() as session:
        yield session


@pytest.fixture(scope="module")
def ref(request):
    """The reference solutions of the chapter a ``tests/test_widgets_<chapter>.py`` module is about."""
    from autograder.reference import load

    return load(request.module.__name__.split("test_widgets_", 1)[1])  # "ch01_perceptron"
