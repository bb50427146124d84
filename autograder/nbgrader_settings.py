"""The course's nbgrader settings, in one place.

Every nbgrader run of this project gets them from ``configure``: the shipped ``nbgrader_config.py``
(plain ``nbgrader`` commands and the formgrader from the repository root), ``make release``
(autograder/release.py), the ``nbgrader_config.py`` a grading run writes into its OUT folder
(autograder/outputs.py) and the stock-nbgrader benchmark (benchmarks/grading/stock.py). The hardened
autograde is plugged in apart, by the two configuration files (``autograder.nbgrader_plugin.configure``):
these settings import nothing of the grader.
"""
from __future__ import annotations

import os

COURSE_ID = "dlcourse"
# Only the notebook travels with an assignment; authoring notes stay behind.
IGNORE = [".ipynb_checkpoints", "*.pyc", "__pycache__", "README.md"]
CODE_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
TEXT_STUB = "YOUR ANSWER HERE"
# The formgrader's submission page: nbgrader's, with MathJax from the server and student ids escaped
FORMGRADE_TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "formgrader_config", "templates")


def nbgrader_formgrader_templates() -> str:
    """nbgrader's own formgrader templates (``nbgrader.server_extensions.formgrader.handlers.template_path``),
    found without importing the formgrader (tornado and the rest)."""
    import importlib.util
    package = importlib.util.find_spec("nbgrader").submodule_search_locations[0]
    return os.path.join(package, "server_extensions", "formgrader", "templates")


def configure(c, root, *, source: str = "solutions", db_url: str | None = None) -> None:
    """Set the course's nbgrader settings on ``c`` (``get_config()`` or a ``traitlets.config.Config``).

    ``root``: the course directory; ``source``: its folder of source assignments (relative to ``root``,
    or absolute); ``db_url``: the gradebook (default ``<root>/gradebook.db``).
    """
    c.CourseDirectory.course_id = COURSE_ID
    c.CourseDirectory.root = str(root)
    c.CourseDirectory.source_directory = str(source)
    c.CourseDirectory.db_url = db_url or "sqlite:///" + os.path.join(str(root), "gradebook.db")
    c.CourseDirectory.ignore = list(IGNORE)
    c.ClearSolutions.code_stub = {"python": CODE_STUB}
    c.ClearSolutions.text_stub = TEXT_STUB
    c.ClearSolutions.enforce_metadata = True
    c.ClearHiddenTests.enforce_metadata = True
    c.Execute.allow_errors = True  # stock nbgrader only: a failing cell is a verdict, not the end of the run
    # nbgrader collect copies no symbolic link out of the exchange (as its target's content, stock nbgrader would)
    c.ExchangeFactory.collect = "autograder.nbgrader_exchange.LinkRefusingCollect"
    # The formgrader renders a submission with nbconvert's HTMLExporter and its 'formgrade' template; the course's
    # overrides (autograder/formgrader_config/templates/formgrade/) come first and extend nbgrader's, which
    # extra_template_paths makes reachable as 'formgrade/...'. Other templates (nbgrader's 'feedback') are untouched.
    c.HTMLExporter.extra_template_basedirs = [FORMGRADE_TEMPLATES, nbgrader_formgrader_templates()]
    c.HTMLExporter.extra_template_paths = [nbgrader_formgrader_templates()]
