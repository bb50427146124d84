"""nbgrader configuration for plain nbgrader commands run from the repository root.

    source .venv/bin/activate                      # nbgrader from the course's environment, on PATH
    nbgrader generate_assignment ch01_perceptron   # solutions/ -> course/
    nbgrader autograde ch01_perceptron             # grading/submitted -> grading/autograded
    nbgrader generate_feedback ch01_perceptron     # -> grading/feedback
    nbgrader export                                # -> grades.csv

The settings themselves (course id, stubs, ignored files, the link-refusing collect) live in
autograder/nbgrader_settings.py, shared with `make release`, `make grade`'s OUT folder and the
benchmarks; this file adds the repository's folders.

`make grade` (autograder/) is the hardened class grader; it shares this layout. `nbgrader autograde`
(and the formgrader's autograde button) use it too: the students' code runs in the same sandbox and the
tests are decided in the grader (autograder/nbgrader_plugin.py, plugged in below), so the scores equal
`make grade`'s. Stock nbgrader's in-kernel execution (the student's code can change its own verdict) only
with DLCOURSE_STOCK_AUTOGRADE=1. `nbgrader collect` follows no symbolic link (autograder/nbgrader_exchange.py)
and `nbgrader generate_feedback` writes the course's sanitised page (autograder/nbgrader_feedback.py).

Each sandbox's bounds (autograder/settings.py; `make grade LIMITS=...` for make grade), by name:
    c.SandboxedExecute.limits = {"cell_seconds": 25, "ram_bytes": 1_000_000_000}
or on the command line: nbgrader autograde ... --SandboxedExecute.limits cell_seconds=25
"""
import os

from autograder.nbgrader_plugin import configure as use_the_sandboxed_grader
from autograder.nbgrader_settings import configure

c = get_config()  # noqa: F821  (provided by nbgrader)

ROOT = os.path.dirname(os.path.abspath(__file__))
# gitignored, absent in a fresh clone; the gradebook, hand grades and submissions: the instructor's only
os.makedirs(os.path.join(ROOT, "grading"), mode=0o700, exist_ok=True)

configure(c, ROOT, source="solutions", db_url="sqlite:///" + os.path.join(ROOT, "grading", "gradebook.db"))
use_the_sandboxed_grader(c)  # nbgrader autograde grades in the sandbox; generate_feedback: the course's page
c.CourseDirectory.release_directory = "course"
c.CourseDirectory.submitted_directory = os.path.join("grading", "submitted")
c.CourseDirectory.autograded_directory = os.path.join("grading", "autograded")
c.CourseDirectory.feedback_directory = os.path.join("grading", "feedback")
c.CourseDirectory.solution_directory = os.path.join("grading", "source_solutions")
c.Execute.timeout = 300  # stock nbgrader only (DLCOURSE_STOCK_AUTOGRADE=1)
# Late submissions: nbgrader records how late (duedate in the gradebook: `nbgrader db assignment add
# <id> --duedate=...`); the default plugin takes no points off. Collecting again keeps the newest one.
