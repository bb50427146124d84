"""Any input is data: text from a student, a folder name or a message, made safe to write anywhere.

``scrub``/``scrubbed``: every lone surrogate written as ``\\udXXX`` (encodable as UTF-8, never raising);
``verbatim``: plain text as escaped HTML; ``template``: the autoescaping templates of ``autograder/templates/``.
The lowest layer of the grader's outputs: it imports no other module of ``autograder``.
"""
from __future__ import annotations

from pathlib import Path
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


_TEMPLATES = []


def verbatim(text) -> Markup:
    """Plain text as HTML (a name, a check's message): escaped, line breaks kept, never read as markdown
    or math; in a ``verbatim`` span, so that a reader (or a test) can tell quoted text from markup."""
    text = str(escape(scrub(str(text)))).replace("\r", "").replace("\n", "<br>")
    return Markup(f'<span class="verbatim">{text}</span>')


def template(name: str):
    """A template of ``autograder/templates/``, autoescaping: anything not marked safe is escaped."""
    if not _TEMPLATES:
        import jinja2
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                                 autoescape=True, trim_blocks=True, lstrip_blocks=True,
                                 undefined=jinja2.StrictUndefined)
        env.filters.update(verbatim=verbatim, g=lambda x: format(x, "g"), percent=lambda x: f"{100 * x:.0f}%")
        _TEMPLATES.append(env)
    return _TEMPLATES[0].get_template(name)
