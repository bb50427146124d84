"""How a grading result is worded, wherever a student or an instructor reads it.

One home for the words of results: a function not written yet, points, exercise names, what a
check's or a test cell's status is called, and the rows of a check table. The test cells
(``dlcourse.testing``), the self-check in the kernel (``dlcourse.selfcheck``), the command line's
table (``autograder.check``), the feedback pages (``autograder.feedback``) and the class report
(``autograder.report``) all word a result from here.

The table rows are made from the grader's result as JSON (``SubmissionResult.to_json(summary=True)``,
what ``python -m autograder check --json`` prints): the kernel reads that wire, so it is the one input.
Plain data and strings only: no markup, no import of the grader.
"""
from __future__ import annotations

NOT_WRITTEN = "not written yet (the function still raises NotImplementedError)"
HIDDEN, PUBLIC = "hidden", "public"         # a check's kind
PASSED, FAILED = "✔", "✘"                   # a check's mark in the feedback
STOPPED = "the test cell stopped"           # a test cell that failed outside any check
REFUSED = "not graded"                      # a test cell of an answer the grader refuses to grade (its source)
HAND_GRADED = "graded by hand"
TO_BE_HAND_GRADED = "to be graded by hand"
FREE_RESPONSE = "free response"
TEST_PREFIX = "test_"                       # a test cell's grade_id is its exercise's name after this


def points(x: float) -> str:
    """Points as people write them: 2, 0.5, 1.33."""
    return f"{x:g}" if abs(x - round(x)) < 1e-9 else f"{x:.2f}"


def score(value: float, maximum: float) -> str:
    """``1.5/2``"""
    return f"{points(value)}/{points(maximum)}"


def exercise_name(grade_id: str) -> str:
    """The exercise a test cell grades: its grade_id without ``test_``."""
    grade_id = str(grade_id)
    return grade_id[len(TEST_PREFIX):] if grade_id.startswith(TEST_PREFIX) else grade_id


def not_written(message) -> bool:
    """The message of a check on a function that still raises NotImplementedError (a blank, not a mistake)."""
    return str(message or "").startswith(NOT_WRITTEN)


def friendly(message) -> str:
    """A check's or a cell's message as the student reads it (a bare ``NotImplementedError`` in words)."""
    if not message:
        return ""
    return NOT_WRITTEN if str(message).strip() == "NotImplementedError" else str(message)


def check_kind(hidden: bool) -> str:
    return HIDDEN if hidden else PUBLIC


def failures(cell: dict) -> list[dict]:
    """What went wrong in one test cell: each failing check (``kind``: hidden check or check, its
    ``description`` and ``message``), then why the cell stopped, if it did (``kind`` alone, or with a message)."""
    out = [{"kind": "hidden check" if check.get("hidden") else "check", "hidden": bool(check.get("hidden")),
            "description": str(check.get("description", "")), "message": friendly(check.get("message"))}
           for check in cell.get("checks") or [] if not check.get("passed")]
    if cell.get("refused"):
        out.append({"kind": REFUSED, "hidden": False, "description": "", "message": str(cell["refused"])})
    if cell.get("error"):
        out.append({"kind": STOPPED, "hidden": False, "description": "", "message": friendly(cell["error"])})
    elif (cell.get("status") or "ok") != "ok":
        out.append({"kind": str(cell["status"]), "hidden": False, "description": "", "message": ""})
    return out


def failure_line(failure: dict) -> str:
    """One failure as a line of text: ``hidden check: description — message``."""
    text = failure["kind"] + (f": {failure['description']}" if failure["description"] else "")
    if failure["message"]:
        text += (" — " if failure["description"] else ": ") + failure["message"]
    return text


def rows(result: dict) -> list[dict]:
    """The rows of a check table, one per test cell: exercise, score, checks passed, what failed."""
    out = []
    for cell in result.get("cells") or []:
        checks = cell.get("checks") or []
        value, maximum = float(cell.get("score") or 0.0), float(cell.get("points") or 0.0)
        out.append({"exercise": exercise_name(cell.get("grade_id", "")), "score": score(value, maximum),
                    "full": value >= maximum - 1e-9, "passed": f"{sum(bool(c.get('passed')) for c in checks)}"
                    f"/{len(checks)}", "failures": failures(cell)})
    return out


def totals(result: dict) -> dict:
    """The table's last row: the automatically graded score, and the points left to a person."""
    given = {"score": 0.0, "points": 0.0, "manual_points": 0.0, **(result.get("totals") or {})}
    manual = given["manual_points"]
    return {"score": score(given["score"], given["points"]),
            "manual": f"plus {points(manual)} points of written answers, {HAND_GRADED}" if manual else ""}


def row_not_written(row: dict) -> bool:
    """Every failure of a row is a function not written yet (a blank, not a mistake)."""
    return bool(row["failures"]) and all(not_written(f["message"]) for f in row["failures"])


def row_state(row: dict) -> str:
    """What a row of the check table comes to, in a few words: ``ok``, ``not written yet``, ``2 checks
    fail``, ``the test cell stopped``."""
    if row["full"]:
        return "ok"
    if row_not_written(row):
        return "not written yet"
    failing = sum(f["kind"] in ("check", "hidden check") for f in row["failures"])
    words = [f"{failing} check{'s' if failing != 1 else ''} fail{'s' if failing == 1 else ''}"] if failing else []
    stopped = [f for f in row["failures"] if f["kind"] not in ("check", "hidden check")]
    if stopped:
        kind = stopped[0]["kind"]
        words.append(kind if kind in (STOPPED, REFUSED) else f"the test cell: {kind}")
    return "; ".join(words)


def short_row(row: dict, name_width: int = 0) -> str:
    """A row of the check table in one line: ``exercise  score  passed  state`` (``row_state``)."""
    return f"{row['exercise']:<{name_width}}  {row['score']:>9}  {row['passed']:>6}  {row_state(row)}".rstrip()


def text_row(row: dict, name_width: int = 0, width: int = 100) -> list[str]:
    """A row of the check table as text: ``exercise  score  passed ok``, then each failure on its own
    wrapped line (``✗ hidden check: ...``). The command line's table and a test cell's text output."""
    import textwrap
    mark = "ok" if row["full"] else ""
    lines = [f"{row['exercise']:<{name_width}}  {row['score']:>9}  {row['passed']} {mark}".rstrip()]
    lines += [textwrap.fill(f"✗ {failure_line(f)}", width, initial_indent="    ", subsequent_indent="        ")
              for f in row["failures"]]
    return lines
