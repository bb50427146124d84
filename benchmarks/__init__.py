"""Benchmark scripts (not timed tests), each ``python -m benchmarks.<name> [--help]``, all run by ``make benchmark``.

- ``chapter_budgets``: every chapter's run time and peak memory, the Python render time of its widgets;
- ``grading``: the class grader's throughput against stock nbgrader (a package: one module per job);
- ``widget_latency``: widget latency end to end in JupyterLab in a real browser;
- ``binder``: Binder rehearsed (a clean environment from binder/ alone, every chapter on 1 CPU, 2 GB).

Each prints a table and writes JSON to ``benchmarks/results/`` (gitignored); ``common`` holds what
they share (environment, chapter selection, tables, results). Each also records the figures of the
budgets table in ``benchmarks/measured/<benchmark>.json`` (committed), from which ``budgets``
renders ``docs/budgets.md``.
"""
