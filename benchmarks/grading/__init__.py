"""Throughput of the class grader (``python -m autograder grade``) against stock nbgrader.

    python -m benchmarks.grading                                  # 40 students x every chapter
    python -m benchmarks.grading --students 40 --stock-sample 3 --chapters ch02_universal_approximation,ch04_cnn
    python -m benchmarks.grading --students 3 --stock-sample 1 --check-determinism --sequential

1. A synthetic class is built with ``autograder.submissions`` (``--students`` per chapter; the
   kind of each submission follows a fixed cycle of 20): 9 correct (the reference), 6 partial
   (the reference with 1-2 answers replaced by a plausible mistake of
   ``autograder/tests/mutants/<chapter>.py``), 2 untouched releases (stubs), and 3 broken ones:
   invalid JSON, a scratch cell ``while True: pass``, a scratch cell ``os._exit(1)``.
2. Ours: ``python -m autograder grade CLASS OUT --jobs <nproc>`` as a subprocess (the whole
   command: jobs, gradebook, feedback, CSVs); ``--sequential`` adds a ``--jobs 1`` run.
3. Stock nbgrader, sequential, on the same files: a temporary course (``source/`` = a copy of
   ``solutions/<chapter>``, ``submitted/<student>/<chapter>/``, its own gradebook),
   ``nbgrader generate_assignment <ch> --force`` then
   ``nbgrader autograde <ch> --force --ExecutePreprocessor.timeout=60`` (``Execute.allow_errors``
   as in the course's nbgrader_config.py). ``--stock-sample K`` grades only K students per
   chapter, chosen across kinds (correct, partial, untouched, hang, exit, json, then again)
   and extrapolates: nbgrader's fixed start-up + the mean per-notebook time x the class size
   (per-notebook times come from nbgrader's timestamped log).
4. Per-notebook overhead of ours: a sandbox started and a trivial cell run, with no preload
   and with the chapter's preload; and the phases of ``grade_submission`` for a correct
   notebook, cold (a fresh process) and warm (the second notebook of that process).
5. ``--check-determinism``: a small class graded with ``--jobs 1`` and ``--jobs 2`` must give
   the same OUT/tests.csv.

One module per job: ``class_builder`` (the synthetic class), ``ours`` (our grader, determinism),
``stock`` (stock nbgrader), ``overhead`` (per-notebook costs of ours), ``report`` (the tables), and
``__main__`` (the options, in that order).

Results: ``benchmarks/results/grading.json`` (and a timestamped copy).
"""
