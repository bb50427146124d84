"""nbgrader configuration for plain nbgrader commands run from the repository root.

    nbgrader generate_assignment ch01_perceptron   # solutions/ -> course/
    nbgrader autograde ch01_perceptron             # grading/submitted -> grading/autograded
    nbgrader generate_feedback ch01_perceptron     # -> grading/feedback
    nbgrader export                                # -> grades.csv

`make grade` (autograder/) is the hardened class grader; it shares this layout. `nbgrader autograde`
(and the formgrader's autograde button) use it too: the students' code runs in the same sandbox and the
tests are decided in the grader (autograder/nbgrader_plugin.py), so the scores equal `make grade`'s.
Stock nbgrader's in-kernel execution (the student's code can change its own verdict) only with
DLCOURSE_STOCK_AUTOGRADE=1.
"""
import os

c = get_config()  # noqa: F821  (provided by nbgrader)

ROOT = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(ROOT, "grading"), exist_ok=True)  # gitignored: absent in a fresh clone

c.CourseDirectory.course_id = "dlcourse"
c.CourseDirectory.root = ROOT
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "course"
c.CourseDirectory.submitted_directory = os.path.join("grading", "submitted")
c.CourseDirectory.autograded_directory = os.path.join("grading", "autograded")
c.CourseDirectory.feedback_directory = os.path.join("grading", "feedback")
c.CourseDirectory.solution_directory = os.path.join("grading", "source_solutions")
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(ROOT, "grading", "gradebook.db")
# Only the notebook travels with an assignment; authoring notes stay behind.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "README.md"]

c.ClearSolutions.code_stub = {
    "python": "# YOUR CODE HERE\nraise NotImplementedError()",
}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.ClearSolutions.enforce_metadata = True
c.ClearHiddenTests.enforce_metadata = True

c.Execute.timeout = 300  # stock nbgrader only (DLCOURSE_STOCK_AUTOGRADE=1)
c.Execute.allow_errors = True

# Late submissions: nbgrader records how late (duedate in the gradebook: `nbgrader db assignment add
# <id> --duedate=...`); the default plugin takes no points off. Collecting again keeps the newest one.
from autograder.nbgrader_plugin import configure  # noqa: E402

configure(c)
