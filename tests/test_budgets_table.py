"""docs/budgets.md is what benchmarks.budgets renders from the benchmarks' last figures, every row measured."""
from __future__ import annotations

import json

from benchmarks import budgets


def test_budgets_page_is_rendered_from_the_measured_files():
    assert budgets.DOC.read_text() == budgets.render(), \
        "docs/budgets.md differs from benchmarks/measured/*.json: run python -m benchmarks.budgets"


def test_every_budget_row_has_a_measurement_with_its_date_and_command():
    measured = budgets.measured_figures()
    rows = {row: benchmark for row, _, _, benchmark in budgets.ROWS}
    for row, benchmark in rows.items():
        entry = measured.get(benchmark, {}).get(row)
        assert entry, f"{row}: no figures in benchmarks/measured/{benchmark}.json"
        for field in ("measured", "command", "when"):
            assert entry.get(field, "").strip(), f"{row}: {field} is empty"
    for benchmark, entries in measured.items():
        stale = sorted(row for row in entries if rows.get(row) != benchmark)
        assert not stale, f"benchmarks/measured/{benchmark}.json: not rows of this benchmark: {stale}"


def test_a_run_replaces_the_rows_it_measured_and_keeps_the_others(tmp_path, monkeypatch):
    monkeypatch.setattr(budgets, "MEASURED", tmp_path / "measured")
    monkeypatch.setattr(budgets, "DOC", tmp_path / "budgets.md")
    budgets.MEASURED.mkdir()
    old = {"measured": "old", "command": "python -m benchmarks.grading", "when": "1 Jan 2026",
           "source": "README, 1 Jan 2026"}
    (budgets.MEASURED / "grading.json").write_text(json.dumps({"grading_overhead": old, "grading_bare": old}))
    budgets.record("grading", {"grading_overhead": "0.10 s"}, ["--students", "2"], conditions="quiet")
    entries = json.loads((budgets.MEASURED / "grading.json").read_text())
    assert entries["grading_bare"] == old
    new = entries["grading_overhead"]
    assert new["measured"] == "0.10 s" and new["command"] == "python -m benchmarks.grading --students 2"
    assert "source" not in new and new["conditions"] == "quiet"
    page = budgets.DOC.read_text()
    assert page == budgets.render()
    assert "| 0.10 s | `python -m benchmarks.grading --students 2`, " in page
    assert "from the README, 1 Jan 2026" in page and "not measured yet" in page


def test_the_large_class_table_has_a_column_per_size_and_the_ratio():
    entry = {"measured": "x", "command": "python -m benchmarks.grading large-class --sizes 30,300",
             "when": "1 Jan 2026", "sizes": [30, 300], "by_size": {"30": 1.5, "300": 1.8}, "unit": "s", "ratio": 1.2,
             "ratio_of": "seconds_per_notebook"}
    text = budgets.large_class_table({"large_class_seconds": entry})
    assert "| measure | 30 notebooks | 300 notebooks | 300 / 30 |" in text
    assert "| grading, per notebook | 1.5 s | 1.8 s | ×1.2 (per notebook) |" in text
    assert "| gradebook.db | – | – | – |" in text
    assert budgets.large_class_table({}) == ""
