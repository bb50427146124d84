"""The feedback page of one submission: the one renderer every front end uses.

``make grade`` and ``make feedback``/``make export`` (``outputs.publish``) and nbgrader's
``generate_feedback`` (``nbgrader_feedback``) write their pages with ``feedback_html`` /
``html_page``; ``nbgrader autograde`` (``nbgrader_plugin``) and OUT/autograded put the same verdict
under each test cell (``verdict_output``). Pages come from autoescaping templates (``templates/``),
student markup goes through the whitelist sanitizer (``text.clean_html``), and a Content-Security-Policy
lets only the template's own scripts run. The words of a result come from ``dlcourse.vocabulary``.

Render what differs: a page is nbconvert's HTML of the notebook, and nbconvert renders each cell on
its own (its template's cell loop concatenates them; its markup and its one whole-page pass, which marks
input and output areas focusable, are local to a cell), a code cell's code apart from its outputs. So
``html_page`` renders only the pieces (a cell; or a code cell's code, its outputs) it has not rendered
before (in this process, keyed by their content and the notebook's metadata) and puts the page together
from the page's frame and those pieces: the chapter's prose, given cells and test code are rendered once
per process, not once per student; a student's answers and verdicts are what is rendered for each.
``whole_page`` renders the notebook in one piece; a test finds both pages identical, byte for byte.
The pieces of a chapter's released notebook (all but a student's answers and verdicts) are kept across runs
by content (``release_pieces``, in ``course_cache``): a grading run renders only what its students wrote.
"""
from __future__ import annotations

import collections
import copy
import functools
import hashlib
import json
import re
import secrets
from pathlib import Path

import nbformat
from markupsafe import Markup

from dlcourse import vocabulary

from . import course_cache
from .course import grade_id, read, release_path, role, split_hidden
from .result import CellVerdict, HandGrade, SubmissionResult
from .text import clean_html, one_block, scrub, verbatim

# ------------------------------------------------------------------ templates (autograder/templates/)

_TEMPLATES = []


def template(name: str):
    """A template of ``autograder/templates/``, autoescaping: anything not marked safe is escaped. Its words
    come from ``vocabulary`` (a global of every template)."""
    if not _TEMPLATES:
        import jinja2
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                                 autoescape=True, trim_blocks=True, lstrip_blocks=True,
                                 undefined=jinja2.StrictUndefined)
        env.filters.update(verbatim=verbatim, g=lambda x: format(x, "g"), percent=lambda x: f"{100 * x:.0f}%")
        env.globals.update(vocabulary=vocabulary)
        _TEMPLATES.append(env)
    return _TEMPLATES[0].get_template(name)


# ------------------------------------------------------------------ the pieces of a page

def verdict_output(verdict: CellVerdict) -> nbformat.NotebookNode:
    """A test cell's output: the verdict on it, each check (hidden ones too, never their code) as a table,
    and as text (the command line's row of ``vocabulary.text_row``)."""
    html = one_block(template("feedback_checks.html.j2").render(cell=verdict))
    row = vocabulary.rows({"cells": [verdict.to_json()]})[0]
    return nbformat.v4.new_output("display_data", data={"text/html": html,
                                                        "text/plain": "\n".join(vocabulary.text_row(row))})


def hand_grade_cell(hand: HandGrade, points: float | None = None) -> nbformat.NotebookNode:
    """The markdown cell put under a hand-graded cell of a feedback page (both doors): the grader's comment,
    and with ``points`` the hand score too."""
    return nbformat.v4.new_markdown_cell(one_block(template("feedback_comment.html.j2").render(
        hand=hand, points=points)))


def summary_markdown(result: SubmissionResult) -> str:
    """The summary at the top of the feedback: one raw HTML block (valid markdown, never read as markdown or
    math), every text from the submission escaped."""
    totals = result.totals()
    return one_block(template("feedback_summary.html.j2").render(result=result, total=totals.score,
                                                                maximum=totals.maximum))


def autograded_notebook(result: SubmissionResult) -> nbformat.NotebookNode | None:
    """The graded notebook: the student's cells, test cells with their public part and the verdicts; what the
    student wrote and every output already through the course's sanitizer (``safe_notebook``)."""
    if not result.notebook_json:
        return None
    nb = nbformat.reads(result.notebook_json, as_version=4)
    verdicts = {c.grade_id: c for c in result.cells}
    for cell in nb.cells:
        if role(cell) == "tests":
            public, _ = split_hidden(cell.source)
            cell.source = public.rstrip() + "\n# (hidden checks of this cell ran in the grader)"
            verdict = verdicts.get(grade_id(cell))
            if verdict:
                cell.outputs = [verdict_output(verdict)]
    return safe_notebook(nb, result.assignment)


# ------------------------------------------------------------------ a graded notebook any viewer may show

SAFE_MARKDOWN = "dlcourse-markdown"  # the class of the one HTML block a student's markdown cell becomes
SAFE_IMAGES = ("image/png", "image/jpeg")
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")


@functools.lru_cache(maxsize=32)
def _release_cells(chapter: str) -> tuple[frozenset, frozenset]:
    """The text of every markdown cell, and of every code cell, of the chapter's release: what no student wrote."""
    try:
        cells = read(release_path(chapter)).cells
    except (OSError, ValueError):
        return frozenset(), frozenset()
    return (frozenset(c.source for c in cells if c.cell_type == "markdown"),
            frozenset(c.source for c in cells if c.cell_type == "code"))


def safe_markdown(source: str, limit: int | None = None) -> str | None:
    """A student's markdown as one HTML block that every viewer shows as it is: rendered as markdown (math stays
    TeX text, typeset by the viewer's MathJax), through ``clean_html``'s whitelist, on one line inside one
    ``<div>`` (a blank line would end the block, and a markdown viewer would read the rest as markdown again).
    None when it renders to more than ``limit`` characters (checked before the sanitizer spends work on it)."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune
    if limit is not None and len(source) > limit:  # its HTML is longer still: not rendered at all
        return None
    html = markdown2html_mistune(scrub(source))
    if limit is not None and len(html) > limit:
        return None
    html = clean_html(html)
    return f'<div class="{SAFE_MARKDOWN}">' + html.replace("\r", "").replace("\n", "&#10;") + "</div>"


def _safe_output(output) -> nbformat.NotebookNode | None:
    """An output every viewer may show: text as text, HTML through ``clean_html``, PNG and JPEG images as
    base64 data; anything else (JavaScript, SVG, markdown, LaTeX, widgets...) left out."""
    kind = output.get("output_type")
    if kind == "stream":
        return nbformat.v4.new_output("stream", name="stdout" if output.get("name") != "stderr" else "stderr",
                                      text=str(output.get("text", "")))
    if kind == "error":
        return nbformat.v4.new_output("error", ename=str(output.get("ename", "")),
                                      evalue=str(output.get("evalue", "")),
                                      traceback=[str(line) for line in output.get("traceback") or []])
    if kind not in ("display_data", "execute_result"):
        return None
    data, kept = output.get("data") or {}, {}
    if isinstance(data.get("text/plain"), (str, list)):
        kept["text/plain"] = "".join(data["text/plain"])
    if isinstance(data.get("text/html"), (str, list)):
        kept["text/html"] = clean_html("".join(data["text/html"]))
    for mime in SAFE_IMAGES:
        if isinstance(data.get(mime), str) and _BASE64.fullmatch(data[mime]):
            kept[mime] = data[mime]
    if not kept:
        return None
    if kind == "execute_result":
        return nbformat.v4.new_output(kind, data=kept, execution_count=output.get("execution_count"))
    return nbformat.v4.new_output(kind, data=kept)


def safe_notebook(nb: nbformat.NotebookNode, chapter: str) -> nbformat.NotebookNode:
    """``nb`` (in place) as a graded notebook that no viewer has to be trusted with (OUT/autograded,
    nbgrader's grading/autograded, the formgrader's view of them, JupyterLab): every markdown cell that is not
    the release's own (a free-response answer, scratch notes) as ``safe_markdown``'s HTML block, and every output
    through ``_safe_output``. An answer left as handed out stays as it is (nbgrader scores it 0 by its checksum).
    The HTML a notebook's markdown renders to is bounded (``sanitize.BOUNDS.rendered_chars``): a cell past it is
    shown as a one-line note."""
    from .sanitize import BOUNDS
    released, code = _release_cells(chapter)
    left, code_left = BOUNDS.rendered_chars, BOUNDS.shown_code_chars
    for cell in nb.cells:
        if cell.cell_type == "markdown" and cell.source not in released:
            html = safe_markdown(cell.source, left)
            if html is None:  # this cell and every one after it: rendering stops at the limit
                html = (f'<div class="{SAFE_MARKDOWN}"><p><em>(not shown: the notebook\'s markdown renders to more '
                        f"than the limit of {BOUNDS.rendered_chars} characters of HTML)</em></p></div>")
                left = 0
            left -= len(html)
            cell.source = html
            cell.pop("attachments", None)
        elif cell.cell_type == "code":
            if cell.source not in code and role(cell) != "tests":
                if len(cell.source) > code_left:
                    cell.source = (cell.source[:max(code_left, 0)] + f"\n# ... {len(cell.source) - max(code_left, 0)} "
                                   f"more characters graded, not shown: more than the limit of "
                                   f"{BOUNDS.shown_code_chars} characters of code shown")
                code_left -= len(cell.source)
            if cell.get("outputs"):
                cell.outputs = [out for out in map(_safe_output, cell.outputs) if out is not None]
    return nb


def feedback_notebook(result: SubmissionResult, graded: nbformat.NotebookNode | None = None
                      ) -> nbformat.NotebookNode:
    """What the feedback page shows: the summary, then the graded notebook, each comment from the formgrader
    under its cell. ``graded``: the graded notebook as OUT/autograded holds it (made from the result's own
    notebook when not given)."""
    result = result.scrubbed()
    nb = copy.deepcopy(graded) if graded is not None else autograded_notebook(result) or nbformat.v4.new_notebook()
    for index in reversed(range(len(nb.cells))):
        hand = result.hand.get(grade_id(nb.cells[index]) or "")
        if hand is not None and hand.comment:
            nb.cells.insert(index + 1, hand_grade_cell(hand))
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(summary_markdown(result)))
    return nb


def feedback_html(result: SubmissionResult, graded: nbformat.NotebookNode | None = None) -> str:
    """The feedback page of one submission (``feedback_notebook`` as a page)."""
    return html_page(feedback_notebook(result, graded))


# ------------------------------------------------------------------ nbconvert, with our sanitizer and policy

_EXPORTER = []


def _exporter():
    """nbconvert's HTML exporter, its ``clean_html`` filter replaced by ours.

    With ``sanitize_html`` nbconvert escapes every tag outside a short list (so headings and
    paragraphs showed as literal ``<h1 ...>`` and ``<p>``); ours renders markdown, tables and
    code and still drops whatever could run (scripts, event handlers, ``javascript:`` links,
    styles, iframes, forms). Math stays TeX text, typeset by MathJax (its Safe extension on).
    The sanitizer remembers what it cleaned (a pure function): a test cell's code, highlighted, is cleaned
    once, not once per student.
    """
    if not _EXPORTER:  # building the exporter (templates, filters) costs more than using it
        from nbconvert import HTMLExporter
        exporter = HTMLExporter(sanitize_html=True, exclude_input_prompt=True, exclude_output_prompt=True)
        exporter.register_filter("clean_html", functools.lru_cache(maxsize=CACHED_PIECES)(clean_html))
        _EXPORTER.append(exporter)
        _EXPORTER.append(content_security_policy(exporter.from_notebook_node(nbformat.v4.new_notebook())[0]))
    return _EXPORTER[0]


def content_security_policy(template_page: str) -> str:
    """A second line behind the sanitizer: the page runs only the template's own scripts.

    Scripts load only from the origins the template names (MathJax, require.js); inline scripts
    run only if they hash to one of the template's own; so an event handler, ``javascript:`` link
    or ``<script>`` that got past ``clean_html`` would still not run. ``'unsafe-eval'`` is for
    MathJax 2, which evaluates its configuration block. No plugins, frames, forms or ``<base>``."""
    import base64
    import re
    from urllib.parse import urlparse
    origins, hashes = set(), set()
    for attrs, body in re.findall(r"<script([^>]*)>(.*?)</script>", template_page, re.S):
        src = re.search(r'src="([^"]+)"', attrs)
        if src:
            url = urlparse(src.group(1))
            origins.add(f"{url.scheme}://{url.netloc}")
            continue
        kind = re.search(r'type="([^"]*)"', attrs)
        if kind is None or kind.group(1) in ("module", "text/javascript", "application/javascript"):
            digest = base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode()
            hashes.add(f"'sha256-{digest}'")
    return (f"script-src {' '.join(sorted(origins | hashes))} 'unsafe-eval'; object-src 'none'; "
            "frame-src 'none'; base-uri 'none'; form-action 'none'")


def _nbconvert(nb: nbformat.NotebookNode) -> str:
    return _exporter().from_notebook_node(nb)[0]


def _with_policy(page: str) -> str:
    policy = Markup('<meta http-equiv="Content-Security-Policy" content="{}">').format(_EXPORTER[1])
    return scrub(page.replace("<head>", "<head>" + str(policy), 1))


def whole_page(nb: nbformat.NotebookNode) -> str:
    """A notebook as the feedback's page, rendered in one piece: nbconvert's HTML, markup through
    ``clean_html``, the CSP."""
    return _with_policy(_nbconvert(nb))


# ------------------------------------------------------------------ render what differs

# Between the cells of one render: nbconvert writes a raw cell's text as it is, and nothing a student
# wrote can hold this (drawn afresh by each process); a render whose pieces do not add up is not used.
_MARK = f"dlcourse-cell-{secrets.token_hex(16)}"
# Where a code cell's outputs begin (nbconvert's lab template): a test cell's code is the same for every
# student, its verdict is not, so the two are rendered (and kept) apart. A student's text cannot hold this
# string as markup: a code cell's text is highlighted and escaped, and the outputs come after it (a piece
# where it is not found exactly once is not used: the page is rendered whole).
_OUTPUTS = '<div class="jp-Cell-outputWrapper">'
_ANY_OUTPUT = nbformat.v4.new_output("display_data", data={"text/plain": "-"})
CACHED_PIECES = 4096  # pieces kept rendered: every cell of the course, and a class's worth of answers
RENDERED = collections.Counter()  # pieces rendered by nbconvert, and pieces taken as rendered before ("reused")
_FRAMES: dict[str, tuple[str, str]] = {}
_PIECES: collections.OrderedDict[str, str] = collections.OrderedDict()


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8",
                                                                                       "surrogatepass")).hexdigest()


def _notebook(metadata, cells) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(metadata=copy.deepcopy(metadata), cells=cells)


def _frame(metadata) -> tuple[str, str] | None:
    """(what comes before the first cell, what comes after the last) of a page with this metadata."""
    key = _digest(metadata)
    if key not in _FRAMES:
        parts = _nbconvert(_notebook(metadata, [nbformat.v4.new_raw_cell(_MARK)])).split(_MARK)
        if len(parts) != 2:
            return None
        _FRAMES[key] = (parts[0], parts[1])
    return _FRAMES[key]


def _parts(cell) -> list[tuple[str, nbformat.NotebookNode]]:
    """What a cell's HTML is made of, each as (which part of its render, the cell to render): a code cell
    with outputs is its code (rendered with a stand-in output, up to where the outputs begin) then its
    outputs (rendered without the code, from there on); any other cell is its whole render."""
    if cell.cell_type != "code" or not cell.get("outputs"):
        return [("whole", cell)]
    code = copy.deepcopy(cell)
    code.outputs = [_ANY_OUTPUT]
    outputs = nbformat.v4.new_code_cell(outputs=copy.deepcopy(cell.outputs),
                                        metadata={"transient": {"remove_source": True}})
    outputs.id = _digest(outputs.outputs)[:32]  # its own (the cell's is in the code's part), the same each time
    return [("code", code), ("outputs", outputs)]


def _cut(part: str, html: str) -> str | None:
    if part == "whole":
        return html
    if html.count(_OUTPUTS) != 1:
        return None
    at = html.index(_OUTPUTS)
    return html[:at] if part == "code" else html[at:]


def _pieces(nb: nbformat.NotebookNode, frame: tuple[str, str]) -> list[str] | None:
    """The HTML of each part of each cell, the parts not rendered before rendered together in one call."""
    context = _digest(nb.metadata)
    parts = [part for cell in nb.cells for part in _parts(cell)]
    keys = [_digest([context, part, cell]) for part, cell in parts]
    todo = {key: part for key, part in zip(keys, parts) if key not in _PIECES}
    if todo:
        cells = []
        for _, cell in todo.values():
            cells += [cell, nbformat.v4.new_raw_cell(_MARK)]
        page = _nbconvert(_notebook(nb.metadata, cells[:-1]))
        head, tail = frame
        if not (page.startswith(head) and page.endswith(tail)):
            return None
        htmls = page[len(head):len(page) - len(tail)].split(_MARK)
        if len(htmls) != len(todo):
            return None
        for (key, (part, _)), html in zip(todo.items(), htmls):
            piece = _cut(part, html)
            if piece is None:
                return None
            _PIECES[key] = piece
    RENDERED.update(rendered=len(todo), reused=len(keys) - len(todo))
    pieces = []
    for key in keys:
        _PIECES.move_to_end(key)
        pieces.append(_PIECES[key])
    while len(_PIECES) > CACHED_PIECES:
        _PIECES.popitem(last=False)
    return pieces


def html_page(nb: nbformat.NotebookNode) -> str:
    """A notebook as the feedback's page, the same as ``whole_page(nb)`` byte for byte, each cell's prose, code
    and outputs rendered once per process (``nbgrader generate_feedback`` writes its pages with it too)."""
    frame = _frame(nb.metadata)
    pieces = _pieces(nb, frame) if frame is not None else None
    if pieces is None:
        return whole_page(nb)
    return _with_policy(frame[0] + "".join(pieces) + frame[1])


# ------------------------------------------------------------------ a chapter's release, kept by content

_HERE = Path(__file__).parent
_RENDERER = [_HERE / "feedback.py", _HERE / "text.py", *sorted((_HERE / "templates").glob("*"))]


def release_pieces(chapter: str) -> int:
    """Put the pieces of ``chapter``'s released notebook, as every page shows them (its prose, given cells, test
    cells' public code), in this process's cache: read from ``course_cache``, or rendered and kept there.
    Keyed by the release, the renderer's code and its libraries' versions. Returns how many were added."""
    from .sanitize import sanitize
    release = read(release_path(chapter))
    name = "pieces-" + course_cache.digest(
        chapter, nbformat.writes(release), *course_cache.sources(*_RENDERER),
        *course_cache.versions("nbconvert", "bleach", "pygments", "mistune", "beautifulsoup4", "jinja2", "nbformat")
    ) + ".json"
    kept = course_cache.load(name)
    if kept is not None:
        try:
            entry = json.loads(kept)
            _FRAMES.update({key: tuple(frame) for key, frame in entry["frames"].items()})
            for key, html in entry["pieces"].items():
                _PIECES.setdefault(key, html)
            return len(entry["pieces"])
        except (ValueError, KeyError, TypeError):
            pass  # unreadable: made anew
    notebook, _ = sanitize(release, release)
    stand_ins = [CellVerdict(grade_id(c), 0.0, 0.0) for c in notebook.cells if role(c) == "tests"]
    nb = autograded_notebook(SubmissionResult("", chapter, chapter, cells=stand_ins,
                                              notebook_json=nbformat.writes(notebook)))
    frame = _frame(nb.metadata)
    if frame is None or _pieces(nb, frame) is None:
        return 0
    context = _digest(nb.metadata)
    keys = [_digest([context, part, cell]) for c in nb.cells for part, cell in _parts(c) if part != "outputs"]
    pieces = {key: _PIECES[key] for key in keys if key in _PIECES}
    course_cache.save(name, json.dumps({"frames": {context: list(frame)}, "pieces": pieces}).encode("utf-8"))
    return len(pieces)
