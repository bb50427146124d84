"""What the student waits for: from moving a widget's control to the new picture on the screen.

    python -m benchmarks.widget_latency                          # every chapter, 2 cores, then 1 CPU
    python -m benchmarks.widget_latency --cpus 2 --chapters ch09_hopfield
    python -m benchmarks.widget_latency --strict                 # exit 1 when a budget is missed

For each chapter the reference notebook (the release with the solutions filled in) is opened in
JupyterLab in a real headless Chromium (Debian's ``/usr/bin/chromium``, driven by Python playwright;
``playwright install`` is never needed) and run top to bottom. JupyterLab keeps its default
settings and the course's configuration (``jupyter-config/``: no busy favicon), as a student has
them (the browser tests attach and paint every cell; here off-screen cells are not painted,
``windowingMode`` "contentVisibility"). Then:

* **first display**: every widget cell is run again (Ctrl+Enter); timed from the key press to the
  new widget's picture painted (module-level caches are warm, the widget's own work is counted);
* **updates**: every control of every widget (``dlcourse.widgets.Explorer``) is moved ``--moves``
  times (sliders: one arrow-key step, dropdowns and radio buttons: the next option, toggles and
  checkboxes: flipped), one move at a time; each move is timed in the page from the input event
  (``keydown``/``pointerdown``/``input``, capture phase) to the widget's ``<img>`` getting its new
  ``src`` (a MutationObserver), decoded, and a frame painted after it (``requestAnimationFrame``).
  A move that changes only the readout is timed to the readout's change; a move after which the kernel
  goes idle with nothing drawn changed (a slider past its last effect) is counted, not timed.

Each run starts and ends with two calibration widgets that do almost nothing (a readout; one line
moved on fixed axes): their medians are the floor any widget pays on this machine and browser, and
show whether the machine was slower than usual during the run (it varies by a third from hour to hour).

Runs twice: with JupyterLab and its kernels on 2 cores, and under ``taskset -c 0`` (one CPU, like
Binder). The browser always runs on every core. Budgets (issue 17): per widget median <= 100 ms
and worst <= 300 ms on 2 cores, median <= 200 ms on 1 CPU; first display <= 1 s after its cell runs.
``python -m benchmarks.chapter_budgets`` keeps the Python-only render times as a diagnostic.
Results: ``benchmarks/results/widget_latency.json`` (and a timestamped copy).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from .browser import CHROMIUM
from .common import (
    RESULTS,
    ROOT,
    chapters_option,
    machine,
    print_load_warning,
    selected_chapters,
    setup_process_env,
    table,
    write_json,
)

BUDGET_MEDIAN_MS = {2: 100.0, 1: 200.0}
BUDGET_WORST_MS = {2: 300.0}
BUDGET_FIRST_MS = 1000.0
UPDATE_TIMEOUT_MS = 10_000
READOUT_GRACE_MS = 1500  # a move whose picture does not change: timed to the readout after this wait

EXPLORERS = ".jp-NotebookPanel .jupyter-widgets.explorer"

# Installed once per page: window.__latency.arm(root) starts a measurement on one explorer, and
# window.__latency.pending is a promise of its result.
LATENCY_JS = r"""
() => {
  if (window.__latency) return;
  const painted = () => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
  const pictureOf = root => root.querySelector('img.explorer-picture');
  const readoutOf = root => root.lastElementChild;
  window.__latency = {
    arm(root, timeoutMs, graceMs) {
      const img = pictureOf(root), readout = readoutOf(root);
      const state = {t0: null, srcAt: null, readoutAt: null};
      const events = ['keydown', 'pointerdown', 'mousedown', 'input', 'change'];
      const onInput = () => { if (state.t0 === null) state.t0 = performance.now(); };
      events.forEach(e => root.addEventListener(e, onInput, true));
      const oldSrc = img ? img.getAttribute('src') : null;
      const oldText = readout ? readout.textContent : null;
      this.pending = new Promise(resolve => {
        let finished = false, grace = null;
        const finish = (kind, at) => {
          if (finished) return;
          finished = true;
          observer.disconnect(); kernel.disconnect(); clearTimeout(timer); clearTimeout(grace);
          events.forEach(e => root.removeEventListener(e, onInput, true));
          resolve({kind, ms: state.t0 === null || at === null ? null : at - state.t0,
                   started: state.t0 !== null});
        };
        const observer = new MutationObserver(() => {
          if (state.t0 === null) return;
          if (img && state.srcAt === null && img.getAttribute('src') !== oldSrc) {
            state.srcAt = performance.now();
            img.decode().catch(() => null).then(painted).then(() => finish('picture', performance.now()));
          }
          if (readout && state.readoutAt === null && readout.textContent !== oldText) {
            state.readoutAt = performance.now();
            if (state.srcAt === null) {
              grace = setTimeout(() => { if (state.srcAt === null) finish('readout', state.readoutAt); },
                                 graceMs);
            }
          }
        });
        observer.observe(root, {subtree: true, childList: true, attributes: true, characterData: true,
                                attributeFilter: ['src']});
        if (readout) observer.observe(readout, {subtree: true, childList: true, characterData: true});
        // the kernel went busy and idle again without a new picture: the move changed nothing drawn
        const indicator = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');
        let sawBusy = false;
        const kernel = new MutationObserver(() => {
          if (state.t0 === null || finished) return;
          const status = indicator.getAttribute('data-status');
          if (status === 'busy') sawBusy = true;
          else if (status === 'idle' && sawBusy && state.srcAt === null) {
            setTimeout(() => {
              if (state.srcAt === null) finish(state.readoutAt === null ? 'unchanged' : 'readout', state.readoutAt);
            }, 1000);  // a picture decoded after the idle status still counts
          }
        });
        if (indicator) kernel.observe(indicator, {attributes: true, attributeFilter: ['data-status']});
        const timer = setTimeout(() => finish('timeout', null), timeoutMs);
      });
      return true;
    },
    // first display: the next explorer to appear in this cell, its picture painted
    armCell(cell, timeoutMs) {
      const old = new Set(cell.querySelectorAll('.explorer'));
      const state = {t0: null};
      const onKey = () => { if (state.t0 === null) state.t0 = performance.now(); };
      document.addEventListener('keydown', onKey, true);
      this.pending = new Promise(resolve => {
        let finished = false;
        const finish = (kind, at) => {
          if (finished) return;
          finished = true;
          observer.disconnect(); clearTimeout(timer);
          document.removeEventListener('keydown', onKey, true);
          resolve({kind, ms: state.t0 === null || at === null ? null : at - state.t0, started: state.t0 !== null});
        };
        const check = () => {
          if (state.t0 === null) return;
          for (const root of cell.querySelectorAll('.explorer')) {
            if (old.has(root)) continue;
            // a view that could not be made (ipywidgets' empty error box): no picture will ever come
            if (root.querySelector('.jupyter-widgets-error-widget')) { finish('broken view', null); return; }
            const img = pictureOf(root);
            if (img && img.getAttribute('src')) {
              observer.disconnect();
              img.decode().catch(() => null).then(painted).then(() => finish('picture', performance.now()));
              return;
            }
          }
        };
        const observer = new MutationObserver(check);
        observer.observe(cell, {subtree: true, childList: true, attributes: true, attributeFilter: ['src']});
        const timer = setTimeout(() => finish('timeout', null), timeoutMs);
      });
      return true;
    },
  };
}
"""


def install(page) -> None:
    page.evaluate(LATENCY_JS)


def _result(page) -> dict:
    return page.evaluate("() => window.__latency.pending")


# ------------------------------------------------------------------ moving controls

def controls_of(root) -> list[tuple[str, object]]:
    """The controls of an explorer's view, in order: (kind, locator)."""
    found = []
    for kind, selector in (("slider", ".widget-slider .noUi-handle"),
                           ("dropdown", ".widget-dropdown select"),
                           ("toggle buttons", ".widget-toggle-buttons"),
                           ("radio buttons", ".widget-radio-box"),
                           ("checkbox", ".widget-checkbox input"),
                           ("toggle", "button.widget-toggle-button")):
        items = root.locator(selector)
        for i in range(items.count()):
            item = items.nth(i)
            if kind == "slider" and i > 0 and item.evaluate(
                    "(h, prev) => h.closest('.noUi-target') === prev.closest('.noUi-target')",
                    items.nth(i - 1).element_handle()):
                continue  # the second handle of a range slider
            disabled = "e => !!(e.disabled || e.getAttribute('disabled') !== null || e.closest('.mod-disabled'))"
            if item.evaluate(disabled):
                continue
            found.append((kind, item))
    return found


def move(kind: str, control, direction: dict) -> bool:
    """One move of a control; False when it cannot move (then nothing was sent)."""
    if kind == "slider":
        now, lo, hi = (control.get_attribute(a) for a in ("aria-valuenow", "aria-valuemin", "aria-valuemax"))
        try:
            now, lo, hi = float(now), float(lo), float(hi)
        except (TypeError, ValueError):
            now, lo, hi = 0.0, 0.0, 1.0
        if hi <= lo:
            return False
        step = direction.setdefault("step", 1)
        if (step > 0 and now >= hi) or (step < 0 and now <= lo):
            direction["step"] = step = -step
        control.focus()
        control.press("ArrowRight" if step > 0 else "ArrowLeft")
        return True
    if kind == "dropdown":
        values = control.evaluate("s => [...s.options].filter(o => !o.disabled).map(o => o.value)")
        if len(values) < 2:
            return False
        current = control.input_value()
        i = values.index(current) if current in values else -1
        control.select_option(values[(i + 1) % len(values)])
        return True
    if kind in ("toggle buttons", "radio buttons"):
        options = control.locator("button:not(.mod-active)" if kind == "toggle buttons" else "input:not(:checked)")
        if not options.count():
            return False
        options.first.click()
        return True
    control.click()
    return True


def time_moves(page, root, kind: str, control, moves: int) -> list[dict]:
    """``moves`` single moves of one control, each waited for; their timings."""
    out, direction = [], {}
    handle = root.element_handle()
    for _ in range(moves):
        page.evaluate("([r, t, g]) => window.__latency.arm(r, t, g)", [handle, UPDATE_TIMEOUT_MS, READOUT_GRACE_MS])
        if not move(kind, control, direction):
            page.evaluate("() => window.__latency.pending = null")
            break
        result = _result(page)
        out.append(result)
        if result["kind"] in ("timeout", "unchanged"):
            break  # the next move would likely change nothing either
    return out


def measure_widget(page, root, moves: int, all_controls: bool = True) -> dict:
    """Move the controls of one explorer view; median and worst of the timed moves (ms)."""
    root.scroll_into_view_if_needed()
    controls = controls_of(root)
    if not all_controls:
        controls = controls[:1]
    times, kinds, problems = [], {}, []
    for index, (kind, control) in enumerate(controls):
        for r in time_moves(page, root, kind, control, moves):
            kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
            if r["kind"] == "unchanged":
                continue  # the kernel answered, nothing drawn changed (a slider past its last effect)
            if r["kind"] == "timeout" or r["ms"] is None:
                problems.append(f"control {index} ({kind}): no new picture or readout in "
                                f"{UPDATE_TIMEOUT_MS / 1000:.0f} s" if r["started"] else
                                f"control {index} ({kind}): the move produced no input event")
            else:
                times.append(r["ms"])
    return summary(times) | {"controls": len(controls), "kinds": kinds, "problems": problems}


def summary(times: list[float]) -> dict:
    return {"moves": len(times), "median_ms": round(statistics.median(times), 1) if times else None,
            "worst_ms": round(max(times), 1) if times else None,
            "times_ms": [round(t, 1) for t in times]}


def first_displays(page) -> list[dict]:
    """Run each widget cell again; from the key press to its widget's picture painted."""
    # the cells, fixed before any runs again (a cell being re-run has no widget for a moment)
    cells = page.locator(".jp-NotebookPanel .jp-CodeCell:has(.jupyter-widgets.explorer)").element_handles()
    out = []
    for i, cell in enumerate(cells):
        try:
            cell.scroll_into_view_if_needed(timeout=10_000)
            cell.query_selector(".jp-InputArea-prompt").click(timeout=10_000)  # select the cell (command mode)
            page.evaluate("([c, t]) => window.__latency.armCell(c, t)", [cell, 60_000])
            page.keyboard.press("Control+Enter")
            result = _result(page)
        except Exception as exc:  # noqa: BLE001 - playwright's errors: report, go on with the next cell
            result = {"ms": None, "kind": f"error: {type(exc).__name__}: {str(exc)[:120]}"}
        out.append({"cell": i, "ms": None if result["ms"] is None else round(result["ms"], 1),
                     "kind": result["kind"]})
        # wait for the kernel to be idle again (a cell may do more after its widget is shown)
        page.wait_for_function(
            """() => { const s = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');
                       return s && s.getAttribute('data-status') === 'idle'; }""", timeout=60_000)
    return out


def measure_chapter(page, moves: int, all_controls: bool = True, first: bool = True) -> dict:
    """Every explorer of an opened, fully run notebook."""
    install(page)
    roots = page.locator(EXPLORERS)
    names = [n.strip() for n in roots.evaluate_all(
        "rs => rs.map(r => { const b = r.querySelector(':scope > .widget-html b'); return b ? b.textContent : ''; })")]
    cells = roots.evaluate_all("""rs => {
        const cells = [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell')]
            .filter(c => c.querySelector('.jupyter-widgets.explorer'));
        return rs.map(r => cells.indexOf(r.closest('.jp-CodeCell'))); }""")
    shown = roots.evaluate_all("rs => rs.map(r => !!r.querySelector('img.explorer-picture[src]'))")
    widgets = []
    for i in range(roots.count()):
        entry = {"widget": i, "title": names[i] if i < len(names) else "", "cell": cells[i] if i < len(cells) else None,
                 "picture": shown[i] if i < len(shown) else False}
        entry.update(measure_widget(page, roots.nth(i), moves, all_controls))
        widgets.append(entry)
    return {"widgets": widgets, "first_display": first_displays(page) if first else []}


# ------------------------------------------------------------------ budgets, report

def flags_for(cpus: int, chapter: str, result: dict) -> list[str]:
    flags = []
    if result.get("error"):
        return [f"{chapter}: {result['error']}"]
    for w in result["widgets"]:
        name = f"{chapter} widget {w['widget']} ({w['title'][:40]})"
        if not w.get("picture", True):  # its moves can only be timed to the readout
            flags.append(f"{name}: no picture shown after Run All (a view that failed, or a render error)")
        median_budget, worst_budget = BUDGET_MEDIAN_MS.get(cpus), BUDGET_WORST_MS.get(cpus)
        if w["median_ms"] is None:
            flags.append(f"{name}: nothing timed ({'; '.join(w['problems'][:2]) or 'no controls'})")
            continue
        if median_budget and w["median_ms"] > median_budget:
            flags.append(f"{name}: median {w['median_ms']:.0f} ms > {median_budget:.0f} ms on {cpus} CPU(s)")
        if worst_budget and w["worst_ms"] > worst_budget:
            flags.append(f"{name}: worst {w['worst_ms']:.0f} ms > {worst_budget:.0f} ms on {cpus} CPU(s)")
        for problem in w["problems"][:2]:
            flags.append(f"{name}: {problem}")
    for f in result.get("first_display", []):
        if f["ms"] is None or f["ms"] > BUDGET_FIRST_MS:
            shown = f"never ({f['kind']})" if f["ms"] is None else f"{f['ms']:.0f} ms"
            flags.append(f"{chapter} widget cell {f['cell']}: first display {shown} > {BUDGET_FIRST_MS:.0f} ms "
                         f"on {cpus} CPU(s)")
    return flags


def print_report(runs: list[dict]) -> None:
    rows = []
    for run in runs:
        for chapter, result in run["chapters"].items():
            firsts = {f["cell"]: f["ms"] for f in result.get("first_display", [])}
            for w in result.get("widgets", []):
                rows.append([run["cpus"], chapter, w["widget"], w["title"][:38], w["moves"],
                             w["median_ms"], w["worst_ms"], firsts.get(w.get("cell", w["widget"]), "-")])
            if result.get("error"):
                rows.append([run["cpus"], chapter, "-", result["error"][:60], "-", "-", "-", "-"])
    print("\nEnd-to-end widget latency in JupyterLab + Chromium: control moved -> new picture painted (ms)")
    print(table(rows, ["cpus", "chapter", "#", "widget", "moves", "median", "worst", "first"]))
    print(f"  budgets: median <= {BUDGET_MEDIAN_MS[2]:.0f} ms and worst <= {BUDGET_WORST_MS[2]:.0f} ms on 2 cores, "
          f"median <= {BUDGET_MEDIAN_MS[1]:.0f} ms on 1 CPU, first display <= {BUDGET_FIRST_MS:.0f} ms\n"
          "  (first: the widget's cell run again, from the key press to its picture painted)")
    flags = [f for run in runs for f in run["flags"]]
    for run in runs:
        medians = [" / ".join(f"{w['title'].split(': ', 1)[-1]} {w['median_ms']} ms" for w in c.get("widgets", []))
                   or c.get("error", "-") for c in run.get("calibration", [])]
        print(f"  calibration on {run['cpus']} CPU(s), two widgets that do almost nothing (median, at the start "
              f"and at the end): {'; then '.join(medians)}")
    print("\nFlags:" if flags else "\nNo budget exceeded.")
    for f in flags:
        print(f"  {f}")


def budget_figures(runs: list[dict], every: list[str]) -> dict[str, str]:
    """The budgets table's figures (benchmarks.budgets): the worst widget of each budget, per run."""
    figures = {}
    for run in runs:
        widgets = [(c.split("_")[0], w) for c, r in run["chapters"].items() for w in r.get("widgets", [])
                   if w.get("median_ms") is not None]
        if not widgets:
            continue
        chapters = sorted({c for c, _ in widgets})
        where = (f"{len(widgets)} widget{'s' if len(widgets) > 1 else ''} of "
                 + (f"{len(chapters)} chapters" if len(run["chapters"]) == len(every) else ", ".join(chapters)))
        floor = [w["median_ms"] for c in run.get("calibration", []) for w in c.get("widgets", [])
                 if w.get("median_ms") is not None]
        where += f"; calibration floor {min(floor):.0f}–{max(floor):.0f} ms" if floor else ""
        failed = [c.split("_")[0] for c, r in run["chapters"].items() if r.get("error")]
        where += f"; not measured: {', '.join(failed)}" if failed else ""

        def worst(key):
            chapter, w = max(widgets, key=lambda cw: cw[1][key])
            return f"at most {w[key]:.0f} ms ({chapter}, {w['title'][:40]!r}; {where})"
        if run["cpus"] == 2:
            figures["widget_median"], figures["widget_worst"] = worst("median_ms"), worst("worst_ms")
        elif run["cpus"] == 1:
            figures["widget_median_1cpu"] = worst("median_ms")
    firsts = [(c.split("_")[0], run["cpus"], f["ms"]) for run in runs for c, r in run["chapters"].items()
              for f in r.get("first_display", [])]
    if firsts:
        never = [f"{c} on {cpus} CPU(s)" for c, cpus, ms in firsts if ms is None]
        chapter, cpus, ms = max(((c, cpus, ms) for c, cpus, ms in firsts if ms is not None),
                                key=lambda f: f[2], default=(None, None, None))
        shown = [f"at most {ms:.0f} ms ({chapter} on {cpus} CPU(s))"] if ms is not None else []
        figures["widget_first"] = "; ".join(shown + ([f"never shown: {', '.join(never)}"] if never else []))
    return figures


def markdown(data: dict) -> str:
    """The results as a Markdown table (for docs/widget-latency.md): one row per widget, every run side by side."""
    runs = data["runs"]
    head = ["chapter", "widget"]
    for r in runs:
        head += [f"{r['cpus']} CPU median / worst ms", f"{r['cpus']} CPU first ms"]
    rows = {}
    for r in runs:
        for chapter, result in r["chapters"].items():
            firsts = {f["cell"]: f["ms"] for f in result.get("first_display", [])}
            for w in result.get("widgets", []):
                row = rows.setdefault((chapter, w["widget"]), {"title": w["title"]})
                row[r["cpus"]] = (w["median_ms"], w["worst_ms"], firsts.get(w.get("cell", w["widget"])))

    def ms(v):
        return "-" if v is None else f"{v:.0f}"
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (chapter, _), row in rows.items():
        cells = [chapter.split("_")[0], row["title"][:48] or "-"]
        for r in runs:
            median_ms, worst_ms, first_ms = row.get(r["cpus"], (None, None, None))
            cells += [f"{ms(median_ms)} / {ms(worst_ms)}", ms(first_ms)]
        lines.append("| " + " | ".join(cells) + " |")
    for i, title in enumerate(("calibration: readout only", "calibration: one line on fixed axes")):
        cells = ["-", f"{title} (start → end of the run)"]
        for r in runs:
            medians = [c["widgets"][i]["median_ms"] if len(c.get("widgets", [])) > i else None
                       for c in r.get("calibration", [])]
            cells += [" → ".join(ms(m) for m in medians) or "-", "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# Two widgets that do (almost) nothing, measured at the start and at the end of every run: what any
# update costs on this machine and browser, whatever the widget (the page, the comm, the kernel's
# status messages, decoding and painting a picture). Their medians say how far a widget is from it,
# and whether the machine was slower than usual during the run.
CALIBRATION = "calibration"
CALIBRATION_CELLS = [
    """import numpy as np
import ipywidgets as w
from matplotlib.figure import Figure
from dlcourse.widgets.explorer import Explorer
from dlcourse.widgets.picture import LiveFigure, kept_figure

x = np.linspace(0, 10, 200)

def _one_line_figure():
    live = LiveFigure(Figure(figsize=(9, 3.3)))
    live.ax = live.figure.subplots()
    live.ax.set(xlim=(0, 10), ylim=(-1.1, 1.1))
    live.line, = live.changes(live.ax.plot([], []))
    return live

def render_one_line(k, cache=None):
    live = kept_figure(cache, _one_line_figure)
    live.new_background("axes")
    live.line.set_data(x, np.sin(x + k / 5))
    return live, f"k = {k}"
""",
    'Explorer(lambda k: (None, f"k = {k}"), {"k": w.IntSlider(0, min=0, max=40)}, title="calibration: readout only")',
    'Explorer(render_one_line, {"k": w.IntSlider(0, min=0, max=40)}, title="calibration: one line on fixed axes")',
]
CALIBRATION_MOVES = 10


def _calibration_notebook():
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CALIBRATION_CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return notebook


def run(cpus: int, chapters: list[str], moves: int, all_controls: bool, on_chapter=None) -> dict:
    import tempfile
    from pathlib import Path

    import nbformat
    from playwright.sync_api import sync_playwright

    from autograder import submissions

    from .browser import CHROMIUM_ARGS, Lab, open_and_run

    results, calibration = {}, []
    with tempfile.TemporaryDirectory(prefix="latency-") as tmp:
        root, home = Path(tmp) / "root", Path(tmp) / "home"
        home.mkdir()
        for name in chapters + [CALIBRATION]:
            path = root / name / f"{name}.ipynb"
            path.parent.mkdir(parents=True)
            nbformat.write(_calibration_notebook() if name == CALIBRATION else submissions.reference(name), str(path))
        prefix = ["taskset", "-c", "0"] if cpus == 1 else []
        lab = Lab(root, home, prefix=prefix, default_windowing=True).start()  # the student's JupyterLab settings
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)

                def measure(name: str) -> dict:
                    page = browser.new_page(viewport={"width": 1400, "height": 1000}, device_scale_factor=1)
                    try:
                        open_and_run(page, lab, name)
                        page.wait_for_timeout(500)
                        if name == CALIBRATION:
                            return measure_chapter(page, CALIBRATION_MOVES, first=False)
                        return measure_chapter(page, moves, all_controls)
                    except BaseException as exc:
                        if isinstance(exc, KeyboardInterrupt):
                            raise
                        return {"error": f"{type(exc).__name__}: {str(exc)[:300]}", "widgets": []}
                    finally:
                        page.close()
                        lab.shutdown_kernels()

                for name in [CALIBRATION] + chapters + [CALIBRATION]:
                    print(f"[latency] {cpus} CPU(s): {name} ...", file=sys.stderr, flush=True)
                    result = measure(name)
                    if name == CALIBRATION:
                        calibration.append(result)
                    else:
                        results[name] = result
                    for w in result.get("widgets", []):
                        print(f"[latency]   {cpus} CPU(s) {name} widget {w['widget']} {w['title'][:40]!r}: "
                              f"median {w['median_ms']} ms, worst {w['worst_ms']} ms", file=sys.stderr, flush=True)
                    if result.get("error"):
                        print(f"[latency]   {name}: {result['error']}", file=sys.stderr, flush=True)
                    if on_chapter is not None and name != CALIBRATION:
                        on_chapter(cpus, results)
                browser.close()
        finally:
            lab.stop()
    flags = [f for chapter, result in results.items() for f in flags_for(cpus, chapter, result)]
    return {"cpus": cpus, "chapters": results, "calibration": calibration, "flags": flags}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.widget_latency", description=__doc__.split("\n")[0])
    chapters_option(parser)
    parser.add_argument("--cpus", default="2,1", help="runs to make: 2 (two cores), 1 (taskset -c 0); default 2,1")
    parser.add_argument("--moves", type=int, default=3, help="moves per control (default 3)")
    parser.add_argument("--first-control", action="store_true", help="move only the first control of each widget")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a budget is missed")
    parser.add_argument("--output", default="widget_latency",
                        help="results under benchmarks/results/<OUTPUT>.json (default widget_latency)")
    parser.add_argument("--markdown", action="store_true",
                        help="print the last results (benchmarks/results/<OUTPUT>.json) as a Markdown table")
    args = parser.parse_args(argv)
    if args.markdown:
        import json
        print(markdown(json.loads((RESULTS / f"{args.output}.json").read_text())))
        return 0

    setup_process_env()
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    selected = selected_chapters(parser, args.chapters)
    if not os.path.isfile(CHROMIUM):
        print(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)", file=sys.stderr)
        return 1 if args.strict else 0

    start_machine = machine()
    started = time.monotonic()
    runs: list[dict] = []

    def save(cpus=None, partial=None):  # after every chapter: an interrupted run keeps what it measured
        current = runs + ([{"cpus": cpus, "chapters": partial, "flags": [], "partial": True}] if partial else [])
        write_json(args.output, {
            "machine": machine(), "machine_at_start": start_machine, "seconds": round(time.monotonic() - started, 1),
            "budgets": {"median_ms": BUDGET_MEDIAN_MS, "worst_ms": BUDGET_WORST_MS,
                        "first_display_ms": BUDGET_FIRST_MS},
            "moves_per_control": args.moves, "controls": "first" if args.first_control else "all", "runs": current},
            stamp=partial is None)

    for c in args.cpus.split(","):
        if c.strip():
            runs.append(run(int(c), selected, args.moves, not args.first_control, on_chapter=save))
    print_report(runs)
    print_load_warning()
    save()
    print(f"\nresults: benchmarks/results/{args.output}.json")
    if args.output == "widget_latency":  # the budgets table's figures; another --output is an experiment
        from . import budgets
        budgets.record("widget_latency", budget_figures(runs, selected_chapters(parser, "")), argv)
    return 1 if args.strict and any(run["flags"] for run in runs) else 0


if __name__ == "__main__":
    raise SystemExit(main())
