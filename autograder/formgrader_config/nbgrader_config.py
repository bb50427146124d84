"""What the formgrader of a `make grade` run adds to the run's own OUT/nbgrader_config.py.

`make formgrader OUT=...` puts this folder on JUPYTER_CONFIG_PATH (the run's own config, in OUT, is read
after it). A run keeps its graded notebooks in OUT/autograded/ and has no exchange: its submissions are
those notebooks, and its chapters are listed as released (course/), not as "draft" with a warning that
the exchange is missing.
"""
c = get_config()  # noqa: F821  (provided by nbgrader)
c.CourseDirectory.submitted_directory = "autograded"
c.ExchangeFactory.list = "autograder.nbgrader_exchange.ReleasedChapters"
