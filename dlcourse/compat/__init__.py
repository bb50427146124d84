"""Helpers superseded by the student's own code, kept only so that notebooks already handed out still run.

Each module is named like its chapter (``dlcourse.compat.ch04_cnn``) and holds what a chapter's earlier releases
imported (complete training loops, oracles, the course's own chains of the student's pieces). The old import
paths still find them (a module ``__getattr__`` in the old module imports them from here on first use), so
``tests/test_released_notebooks.py`` keeps passing. Graded code never reaches them: the sandbox that runs a
submission has no ``dlcourse/compat/`` (importing it there fails), and the grader refuses a graded answer
whose source refers to ``dlcourse`` at all.
"""
