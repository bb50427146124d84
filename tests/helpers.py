"""Small helpers shared by the tests: the widget tests (their fixtures are in tests/conftest.py), shared folders."""
import ast
import contextlib
import inspect
import shutil
import statistics
import tempfile
from pathlib import Path

import pytest


def code_cell_trees(nb):
    """(cell, its parsed source) for each code cell of a notebook that is Python (magics are skipped)."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            yield cell, ast.parse(cell.source)
        except SyntaxError:
            continue


def counting(fn):
    """``fn`` with a list ``.calls`` that grows by one per call (a new function object each time)."""
    def wrapper(*args, **kwargs):
        wrapper.calls.append(args)
        return fn(*args, **kwargs)
    wrapper.calls = []
    return wrapper


def stub(*args, **kwargs):
    """A student's function not written yet."""
    raise NotImplementedError()


def student_functions(factory):
    """The names of the student's functions a widget factory takes (its keyword-only parameters
    without a default)."""
    return [name for name, p in inspect.signature(factory).parameters.items()
            if p.kind is p.KEYWORD_ONLY and p.default is p.empty]


def needs(factory, ref, **replace):
    """The keyword arguments of ``factory``: its student functions taken from the reference solutions
    ``ref``, some replaced (by a stub, a counting wrapper...), and the extra arguments in ``replace``."""
    given = {name: getattr(ref, name) for name in student_functions(factory) if name not in replace}
    return {**given, **replace}


def build(factory, ref, **replace):
    """The widget ``factory`` builds from the reference solutions (see ``needs``)."""
    return factory(**needs(factory, ref, **replace))


def move(widget, **values):
    """Set the widget's controls to ``values`` (in order) and return its readout."""
    for name, value in values.items():
        widget.controls[name].value = value
    return widget.readout.value


def assert_names_missing(widget, name):
    """The widget's readout says that the student's function ``name`` is not written yet."""
    text = widget.readout.value
    assert "not written yet" in text and f"<b>{name}</b>" in text, text
    # the message comes right under the controls, not under an empty picture, and in glyphs every font has
    assert widget.output.layout.display == "none", "the message sits under the empty picture's box"
    assert not [c for c in text if 0x2600 <= ord(c) <= 0x27BF or ord(c) >= 0x1F000], f"an emoji in {text!r}"


def assert_each_missing_is_named(factory, ref, controls=None, **extra):
    """Built with each of its student functions in turn replaced by a stub (and ``controls`` then
    set to the values given), the widget names that function in its readout."""
    for name in student_functions(factory):
        if name in extra:  # data the widget shows (a record, a trained model), not a function
            continue
        widget = build(factory, ref, **{name: stub}, **extra)
        for control, value in (controls or {}).items():
            widget.controls[control].value = value
        assert_names_missing(widget, name)


def missing_function_test(factory, names=None, **extra):
    """A test, parametrized over ``names`` (default: every student function of ``factory``): the widget
    built with that function replaced by a stub names it in its readout."""
    @pytest.mark.parametrize("missing", list(names or student_functions(factory)))
    def test(ref, missing):
        assert_names_missing(build(factory, ref, **{missing: stub}, **extra), missing)
    return test


def assert_picture_is_current(widget, max_changed=0.002):
    """The picture a live figure sent (its kept background and redrawn artists) is the figure drawn
    whole now: no artist changed without being marked as changing, no stale background. Pixels may
    differ where a changing artist is drawn over a static one it lies under (order): at most
    ``max_changed`` of them. A pixel differs when a channel is off by more than 2 levels: the on-top
    layer (``live.on_top``) is laid over in floating point, Agg blends in integers."""
    import numpy as np

    from dlcourse.widgets.picture import LiveFigure

    live = widget.cache.figure if widget.cache is not None else None
    assert isinstance(live, LiveFigure), "this widget's render does not keep a LiveFigure"
    layered = live.pixels().copy()
    for artist in live.changing + live.on_top_artists:
        artist.set_animated(False)
    try:
        live.canvas.draw()
        whole = np.asarray(live.canvas.buffer_rgba()).copy()
    finally:
        for artist in live.changing + live.on_top_artists:
            artist.set_animated(True)
        live.canvas.draw()  # the background again, as the live figure kept it (not counted as one of its draws)
        live._background = live.canvas.copy_from_bbox(live.figure.bbox)
    assert_text_alternative_is_current(widget)
    changed = np.any(np.abs(layered.astype(np.int16) - whole) > 2, axis=2).mean()
    assert changed <= max_changed, (f"{changed:.2%} of the pixels differ from the figure drawn whole: an artist "
                                    f"changed without being marked with live.changes(), or the background is stale")


def assert_text_alternative_is_current(widget):
    """The picture's text alternative (its ``tooltip``: the image's title) says what the figure shows
    and what the readout says now."""
    from dlcourse.widgets.explorer import plain_text
    from dlcourse.widgets.picture import describe_figure

    words = widget.picture.tooltip or ""
    shows = describe_figure(widget.last_figure)
    assert shows and shows in words, f"the picture's text alternative {words!r} does not say what it shows"
    assert plain_text(widget.readout.value) in words, f"{words!r} is not the readout's {widget.readout.value!r}"


def assert_live_through_every_control(widget, max_full_draws=None):
    """Move each control of a widget whose render keeps a LiveFigure (sliders to their ends and back,
    every option of a dropdown or radio, checkboxes both ways) and check the picture after each move
    with ``assert_picture_is_current``; with ``max_full_draws``, that no more whole draws were made."""
    for control in widget.controls.values():
        start = control.value
        if hasattr(control, "options"):
            values = [option[1] if isinstance(option, tuple) else option for option in list(control.options)[:4]]
        elif isinstance(start, bool):
            values = [not start]
        elif hasattr(control, "min") and hasattr(control, "max"):
            values = [control.min, control.max]
        else:
            values = []
        for value in values + [start]:
            control.value = value
            assert_picture_is_current(widget)
    if max_full_draws is not None:
        draws = widget.cache.figure.full_draws
        assert draws <= max_full_draws, f"{draws} whole draws of the figure, expected at most {max_full_draws}"


def median_update_ms(widget):
    """The median of the widget's render times, in ms, over moves of every control (a slider to its ends and
    middle, a menu through every option, a checkbox both ways) and back."""
    times = []
    for control in widget.controls.values():
        original = control.value
        if isinstance(original, bool):
            values = [not original]
        elif hasattr(control, "options"):
            values = [option[1] if isinstance(option, tuple) else option for option in control.options]
        else:
            values = [control.min, type(original)((control.min + control.max) / 2), control.max]
        for value in values + [original]:
            control.value = value
            times.append(widget.last_render_seconds)
    return 1000 * statistics.median(times)


@contextlib.contextmanager
def shared_folder(prefix: str):
    """A fresh folder under /tmp that other accounts can traverse (pytest's own tmp folders are 0700), removed after."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    tmp.chmod(0o755)
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def first_failure(ns: dict, source: str) -> str | None:
    """The first failing check of a test cell run in a kernel-like scope, in full ("description: reason"), or None."""
    from autograder.quickcheck import _python
    from dlcourse.testing import CheckFailed
    try:
        exec(compile(_python(source), "<test cell>", "exec"), dict(ns))
    except CheckFailed as failed:
        return f"{failed.description}: {failed.reason}"
    except Exception as exc:  # noqa: BLE001 - outside every check: still a failure
        return f"{type(exc).__name__}: {exc}"
    return None


def release_cell(chapter: str, grade_id: str) -> str:
    """The source of the cell ``grade_id`` as the student receives it (course/, the release)."""
    import nbformat

    from autograder.course import grade_id as gid
    from autograder.course import release_path
    release = nbformat.read(str(release_path(chapter)), as_version=4)
    return next(c.source for c in release.cells if gid(c) == grade_id)


def public_checks_missed(chapter: str, catches: dict) -> dict:
    """Issue 42: the public checks the student sees (the release's ``test_<function>`` cells) pass for the reference;
    returns the ``{(function, mistake): words}`` of ``catches`` they miss, as {"function/mistake": first failure or
    None}: a plausible mistake (``autograder/tests/mutants``) none of them fails, or whose first failure does not
    contain ``words`` (None: any failure will do)."""
    from autograder.reference import namespace
    from autograder.tests.mutants import load
    mistakes = load(chapter)
    cells = {f: release_cell(chapter, f"test_{f}") for f in {f for f, _ in catches}}
    assert all("### BEGIN HIDDEN TESTS" not in c for c in cells.values())
    reference = namespace(chapter)
    assert {f: first_failure(reference, cell) for f, cell in cells.items()} == dict.fromkeys(cells)
    missed = {}
    for (function, mistake), words in catches.items():
        failure = first_failure(namespace(chapter, {function: mistakes[function][mistake]}), cells[function])
        if failure is None or (words is not None and words not in failure):
            missed[f"{function}/{mistake}"] = failure
    return missed


def inside_details(source: str, formula: str) -> bool:
    """Every occurrence of ``formula`` in ``source`` lies between a <details> and its </details> (issue 42: a
    derived formula is printed only in a collapsed hint)."""
    position = source.find(formula)
    while position != -1:
        opened, closed = source.rfind("<details>", 0, position), source.rfind("</details>", 0, position)
        if opened == -1 or closed > opened:
            return False
        position = source.find(formula, position + 1)
    return True


def assert_only_in_hints(chapter: str, results, old_printed=()):
    """Issue 42: in ``chapter``'s release, each derived formula of ``results`` is printed, and only inside
    collapsed <details> hints; each of ``old_printed`` (forms the chapter used to print) nowhere else either.
    Returns the release notebook."""
    import nbformat

    from autograder.course import release_path
    release = nbformat.read(str(release_path(chapter)), as_version=4)
    for formula in results:
        cells = [c.source for c in release.cells if formula in c.source]
        assert cells, formula
        for source in cells:
            assert inside_details(source, formula), (formula, source[:200])
    for formula in old_printed:
        assert all(inside_details(c.source, formula) for c in release.cells), formula
    return release
