"""Benchmark scripts (not timed tests): ``python -m benchmarks.chapter_budgets``, ``python -m benchmarks.grading``.

Both print a table and write JSON to ``benchmarks/results/`` (gitignored); ``make benchmark``
runs both. See each module's docstring for its options.
"""
