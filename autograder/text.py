"""Any input is data: the text and escaping helpers every output of the grader uses.

Names, notebook text and messages may hold any code point. Lone surrogates (undecodable bytes of a file
name, ``"\\ud800"`` in a notebook's JSON or an exception message) are written as ``\\udXXX`` text, never
raised on (``scrub``); a name or a message is one line in a log (``log_text``, ``folder_id``); CSV cells
that a spreadsheet would read as a formula are neutralised (``csv_cell``); markup for a browser goes
through a whitelist sanitizer (``clean_html``), and plain text shown in a page is escaped (``verbatim``).

This module imports nothing of the grader: every layer may use it.
"""
from __future__ import annotations

import os
from typing import Any

from markupsafe import Markup, escape


def scrub(text: str) -> str:
    """``text`` with every lone surrogate written as ``\\udXXX``: encodable as UTF-8, never raising."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def scrubbed(value: Any) -> Any:
    """A copy of a result (dicts, lists, strings...) whose strings all encode as UTF-8."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrubbed(k): scrubbed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(scrubbed(v) for v in value)
    return value


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def log_text(text: str) -> str:
    """``text`` on one line: control and format characters, line and paragraph separators and lone
    surrogates written as ``\\n``, ``\\x1b``, ``\\u2028``, ``\\udcff``..., so that a name or a message
    cannot start a forged log line, move the cursor or reorder the text."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape", "backslashreplace").decode("ascii")
                   for ch in text)


def folder_id(name: str) -> str:
    """A file or folder name as the one-line text every output uses (student id, CSV, gradebook, feedback
    folder, log): undecodable bytes as ``\\xNN`` (``os.fsdecode`` would make them lone surrogates, which no
    output can encode), control and format characters escaped as in ``log_text``."""
    return log_text(os.fsencode(name).decode("utf-8", "backslashreplace"))


def csv_cell(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text: one that would start a formula gets a leading quote (OWASP)."""
    if isinstance(value, str):
        value = scrub(value)
        if value.startswith(FORMULA_STARTS):
            return "'" + value
    return value


# Markup allowed in feedback: what markdown and the grader's own tables produce, nothing that runs.
SAFE_TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "dd", "del", "details", "div", "dl", "dt", "em",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "kbd", "li", "ol", "p", "pre", "s", "samp", "span",
    "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul"})
_HEADING = ["id"]
SAFE_ATTRIBUTES = {
    "a": ["href", "title", "class"], "abbr": ["title"], "div": ["class"], "span": ["class"], "pre": ["class"],
    "code": ["class"], "td": ["style", "colspan", "rowspan"], "th": ["style", "colspan", "rowspan"],
    "ol": ["start"], **{f"h{i}": _HEADING for i in range(1, 7)}}
SAFE_PROTOCOLS = ("http", "https", "mailto")
_CLEANER = []


def clean_html(text) -> str:
    """Sanitize markup for the feedback: whitelisted tags, no attribute or URL that runs script, no style
    but text alignment. Other tags are dropped (their text stays, escaped), comments too."""
    if not _CLEANER:
        import bleach
        from bleach.css_sanitizer import CSSSanitizer
        _CLEANER.append(bleach.Cleaner(tags=SAFE_TAGS, attributes=SAFE_ATTRIBUTES, protocols=SAFE_PROTOCOLS,
                                       strip=True, strip_comments=True,
                                       css_sanitizer=CSSSanitizer(allowed_css_properties=["text-align"])))
    text = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
    return _CLEANER[0].clean(scrub(text))


def verbatim(text) -> Markup:
    """Plain text as HTML (a name, a check's message): escaped, line breaks kept, never read as markdown
    or math; in a ``verbatim`` span, so that a reader (or a test) can tell quoted text from markup."""
    text = str(escape(scrub(str(text)))).replace("\r", "").replace("\n", "<br>")
    return Markup(f'<span class="verbatim">{text}</span>')


def one_block(markup: str) -> str:
    """A template's output as one line: a raw HTML block of markdown ends at a blank line. Text from the
    submission holds no line break by then (``verbatim`` writes ``<br>``): every one left is the template's."""
    return markup.replace("\n", "")
