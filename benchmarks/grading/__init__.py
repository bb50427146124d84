"""Our class grader (``python -m autograder grade``) against its limits: bare code, stock nbgrader, Dask.

    python -m benchmarks.grading --dask                      # 10 students x every chapter (make benchmark)
    python -m benchmarks.grading --students 4 --chapters ch01_perceptron,ch06_transformers --dask   # quick
    python -m benchmarks.grading --students 3 --no-stock --check-determinism --sequential
    python -m benchmarks.grading large-class --sizes 30,300,1000   # a large class of one chapter (large_class)

1. A synthetic class is built with ``autograder.submissions`` (``--students`` per chapter; the
   kind of each submission follows a fixed cycle of 20): 9 correct (the reference), 6 partial
   (the reference with 1-2 answers replaced by a plausible mistake of
   ``autograder/tests/mutants/<chapter>.py``), 2 untouched releases (blank work), and 3 broken ones:
   invalid JSON, a scratch cell ``while True: pass``, a scratch cell ``os._exit(1)``.
2. Ours: ``python -m autograder grade CLASS OUT --jobs <nproc>`` as a subprocess (the whole
   command: jobs, gradebook, feedback, CSVs); ``--sequential`` adds a ``--jobs 1`` run. Where each
   notebook's time went is read from its result (``SubmissionResult.timings``): the grader's
   **overhead** is a job's wall time minus its notebook cells and its checks' calls in the sandbox.
3. Bare: each chapter's reference notebook, the same cells and test cells, in one plain ``python``
   process (``bare``); ours / bare is our job on the reference against it.
4. Stock nbgrader, sequential, on the same files, every notebook of the class (measured, never
   extrapolated): a temporary course (``source/`` = a copy of ``solutions/<chapter>``,
   ``submitted/<student>/<chapter>/``, its own gradebook), ``nbgrader generate_assignment <ch> --force``
   then ``nbgrader autograde <ch> --force --ExecutePreprocessor.timeout=60`` (``Execute.allow_errors``
   as in the course's nbgrader_config.py). The scores of the reference and blank notebooks are
   compared cell by cell with stock's gradebook.
5. ``--dask``: the class again on a Dask cluster whose scheduler and workers are processes of their
   own (``dask scheduler``, ``dask worker``: ``cluster``), with 1, then 2 workers; the speed-up, and
   their tests.csv against the local run's.
6. ``--check-determinism``: a small class graded with ``--jobs 1`` and ``--jobs 2`` must give
   the same OUT/tests.csv.

Budgets (issue 28; ``tables``): overhead <= 0.3 s per notebook (median, every chapter); ours >= 6x
stock sequential nbgrader (2 cores); ours <= 1.3x bare; identical scores on reference and blank work.

One module per job: ``class_builder`` (the synthetic class), ``ours`` (our grader, determinism),
``overhead`` (per-chapter phases from the results), ``bare`` (the limit), ``stock`` (stock nbgrader,
its scores), ``cluster`` (a Dask cluster of processes), ``tables`` (the tables and budget lines),
``large_class`` (``large-class``: classes of 30, 300 and 1,000 notebooks of one chapter, issue 40), and
``__main__`` (the options, in that order).

Results: ``benchmarks/results/grading.json`` (and a timestamped copy).
"""
