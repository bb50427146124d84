"""The feedback a student receives, opened in a real (headless) Chromium (issue 11, finding 10).

One feedback page is generated the way the grader writes it (``autograder.feedback.feedback_html``)
for a submission whose scratch markdown, free-response answers and exception messages carry
markup and script (``autograder.tests.cases.xss_notebook``). In the browser: headings,
paragraphs, tables and code render (no literal ``<h1``, ``<p>`` or ``</`` in the page's text,
code cells and the grader's quotes of messages, which are text by design, aside), and
nothing the student wrote ran (no script, event handler or
``javascript:`` link; no dialog; the title unchanged), and the page's Content-Security-Policy
stops an event handler and an inline script added after the sanitizer. When Debian's MathJax is installed
(``apt-get install libjs-mathjax``) the page's MathJax address is served from it and the
math must come out typeset; without it that one check is skipped (the page never reaches the
network in this test). A screenshot goes to tests/screenshots/feedback.png.

    pytest -m browser tests/test_feedback_browser.py     # a missing Chromium skips
    REQUIRE_BROWSER=1 ...                                 # a missing Chromium fails
"""
from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlparse

import pytest

from autograder.course import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
MATHJAX = Path("/usr/share/javascript/mathjax")  # Debian's libjs-mathjax (2.7.x), served for the CDN address
SCREENSHOTS = ROOT / "tests" / "screenshots"
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


def _unavailable(reason: str):
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail(f"REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def feedback_page(tmp_path_factory) -> Path:
    from autograder.feedback import feedback_html
    from autograder.tests import cases
    from autograder.tests.test_outputs import fake_result
    chapter = cases._hostile_chapter()
    page = feedback_html(fake_result(cases.xss_notebook(chapter), message=cases.XSS_MESSAGE))
    path = tmp_path_factory.mktemp("feedback") / f"{chapter}.html"
    path.write_text(page, encoding="utf-8")
    return path


def _serve_offline(route):
    """MathJax's CDN address from the local copy when there is one; every other request refused."""
    url = urlparse(route.request.url)
    if url.scheme == "file":
        return route.continue_()
    marker = "/ajax/libs/mathjax/"
    if MATHJAX.is_dir() and marker in url.path:
        rest = url.path.split(marker, 1)[1].split("/", 1)[1]  # drop the version
        rest = "unpacked/latest.js" if rest == "latest.js" else rest  # it loads MathJax.js beside it
        local = (MATHJAX / rest).resolve()
        if local.is_file() and MATHJAX.resolve() in local.parents:
            return route.fulfill(path=str(local))
    return route.abort()


def test_feedback_renders_and_runs_nothing_a_student_wrote(feedback_page, playwright):
    if not Path(CHROMIUM).is_file():
        _unavailable(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    dialogs = []
    browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
    try:
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        refused = []
        page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
        page.route("**/*", _serve_offline)
        page.goto(feedback_page.as_uri(), wait_until="load", timeout=30_000)
        title = page.title()
        typeset = None
        if MATHJAX.is_dir():
            page.wait_for_function("() => document.querySelectorAll('.mjx-chtml').length > 0",
                                   timeout=20_000)
            typeset = page.evaluate("() => document.querySelectorAll('.mjx-chtml').length")
        page.screenshot(path=str(SCREENSHOTS / "feedback.png"), full_page=False)
        markdown = page.eval_on_selector_all(".jp-RenderedMarkdown", "els => els.map(e => e.innerText)")
        # what is left on screen once code and the grader's quoted messages (text by design) are hidden
        page.add_style_tag(content=".verbatim, .jp-InputArea-editor { display: none !important }")
        shown = page.evaluate("() => document.body.innerText")
        state = page.evaluate("""() => ({
            pwned: window.__pwned === undefined ? null : String(window.__pwned),
            title: document.title,
            h1: document.querySelectorAll('h1').length,
            h2: document.querySelectorAll('h2').length,
            p: document.querySelectorAll('.jp-RenderedMarkdown p').length,
            th: document.querySelectorAll('th').length,
            code: document.querySelectorAll('.highlight pre').length,
            scripts: [...document.scripts].map(s => s.src || s.type || 'inline'),
            handlers: [...document.querySelectorAll('*')].flatMap(
                e => [...e.attributes].filter(a => a.name.startsWith('on')).map(a => e.tagName + ' ' + a.name)),
            links: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))
                .filter(h => !/^(https?:|mailto:|#)/.test(h)),
            dangerous: document.querySelectorAll('iframe, object, embed, form, svg, img, math').length,
            bodyShown: getComputedStyle(document.body).display !== 'none',
        })""")
        # the second line: markup that got past the sanitizer still would not run (the page's CSP)
        page.evaluate("""() => {
            document.body.insertAdjacentHTML('beforeend', '<img src="x" onerror="window.__csp = 1">');
            const s = document.createElement('script');
            s.textContent = 'window.__csp = 2';
            document.body.appendChild(s);
        }""")
        page.wait_for_timeout(300)
        csp = page.evaluate("() => window.__csp === undefined ? null : window.__csp")
    finally:
        browser.close()

    literal = [tag for tag in ("<h1", "<h2", "<p>", "</", "<b>", "<table") if tag in shown]
    assert not literal, f"literal markup shown on the page: {literal}"
    text = "\n".join(markdown)
    assert len(markdown) > 10 and "Feedback:" in text and "Scratch notes" in text
    assert state["h1"] >= 2 and state["h2"] >= 1 and state["p"] >= 5 and state["th"] >= 3 and state["code"] >= 1, state
    # nothing the student wrote ran
    assert state["pwned"] is None and not dialogs, (state["pwned"], dialogs)
    assert state["title"] == title and "pwned" not in title
    assert not state["handlers"] and not state["links"] and state["dangerous"] == 0, state
    # scripts: the template's own (require.js and MathJax from their CDN, MathJax's config, mermaid's loader),
    # and MathJax's math/tex holders; nothing else
    own = [s for s in state["scripts"] if not (s.startswith("https://cdnjs.cloudflare.com/ajax/libs/")
                                               or s == "module" or s.startswith(("text/x-mathjax-config", "math/tex")))]
    assert not own, own
    assert state["bodyShown"], "a student's <style> hid the page"
    assert csp is None and len(refused) >= 2, (csp, refused)
    if typeset is None:
        print("math: Debian's libjs-mathjax is not installed, typesetting not checked")
    else:
        assert typeset > 10, typeset
