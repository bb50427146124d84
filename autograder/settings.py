"""Every bound and switch of the grader, declared once: typed, with its unit, default and a one-line meaning.

- ``Limits``: each sandbox's bounds, the ones an instructor or a learner sets by name (``make grade LIMITS=...``,
  ``--limits`` of ``grade``, ``check`` and ``grade-one``, ``c.SandboxedExecute.limits`` for ``nbgrader
  autograde``). Parsed once at the front end (``Limits.parse`` for text, ``Limits.from_mapping`` for a mapping),
  carried in each ``Task``, and sent into the sandbox as itself (``to_wire`` / ``from_wire``): the sandbox's
  server reads the same typed attributes as the grader. ``None`` means "no cap", said so, never a silent 0.
- ``GraderBounds`` (``GRADER``): the grader's own fixed bounds (message sizes, waits, caches); not settable.
- ``SubmissionBounds`` (``SUBMISSION``): what the student wrote is bounded before any work is spent on it.
- ``SWITCHES``: the environment variables the grader reads.

``python -m autograder grade --help`` lists the limits (``limits_help``), and ``docs/limits.md``'s tables are
generated from these declarations (``python -m autograder.settings docs/limits.md`` rewrites them; a test fails
when they disagree). This module imports only the standard library: the sandbox's server reads it too
(``sandbox.isolation.SERVER_MODULES``).
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, fields

GiB, MiB, KiB = 1024 ** 3, 1024 ** 2, 1024


def _declare(default, unit: str, meaning: str, kind: type | None = None, enforced: str = "",
             unprivileged: str = "", factory=None):
    """A field with its declaration: ``unit``, ``meaning`` (one line), ``kind`` (int, float or bool: what a
    value given by name is read as), and for a sandbox's limit, what ``enforced`` it and what bounds it instead
    where a cgroup cannot be used (``unprivileged``; empty: the same)."""
    metadata = {"unit": unit, "meaning": meaning, "kind": kind or type(default), "enforced": enforced,
                "unprivileged": unprivileged}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


# ----------------------------------------------------------------------------- each sandbox's limits

@dataclass(frozen=True)
class Limits:
    """The limits of one sandbox: one frozen, typed record, built once at each front end and read everywhere,
    on both sides of the sandbox's boundary."""
    memory_bytes: int | None = _declare(
        3 * GiB, "bytes", "address space of the sandbox's process (torch alone maps ~0.7 GB); None: no cap",
        int, "RLIMIT_AS")
    ram_bytes: int = _declare(
        2 * GiB, "bytes", "resident memory, tmpfs, memfd and page cache of a sandbox together (all sandboxes of a "
        "run together: at most class_ram_share of the machine's RAM)", int, "a memory cgroup per sandbox",
        "address space (memory_bytes) and the tmpfs's size only: memfd pages and page cache are not counted")
    disk_bytes: int = _declare(
        256 * MiB, "bytes", "the one tmpfs that holds the work folder and /tmp; nothing reaches the host's disk",
        int, "a sized tmpfs (bwrap --size)")
    tasks: int = _declare(
        256, "tasks", "processes and threads of a sandbox", int, "a pids cgroup per sandbox",
        "RLIMIT_NPROC, which the kernel counts per user (the tasks that user already runs, plus this)")
    cpu_seconds: int | None = _declare(
        600, "CPU seconds", "CPU time of the sandbox's process over its whole life; None: no cap", int, "RLIMIT_CPU")
    output_bytes: int | None = _declare(
        2 * MiB, "bytes", "what the student's code may print, in all, and the size of one file it writes; "
        "None: no cap", int, "a capped stdout and stderr, RLIMIT_FSIZE")
    # Time budgets count CPU seconds (user + system) of the sandbox's processes, their threads and children, so
    # that a notebook earns the same on an idle or a busy machine (``client.Sandbox.within``):
    cell_seconds: float = _declare(
        60.0, "CPU seconds", "the CPU time of one test cell: past it the cell is stopped", float,
        "the sandbox's CPU time (its cpuacct cgroup), read every cpu_reading_seconds",
        "counted from the sandbox's processes in /proc (a process that ends without being waited for by another "
        "of them is not counted)")
    setup_seconds: float = _declare(
        15.0, "CPU seconds", "the CPU time of one notebook cell run before the tests (they only define things)",
        float,
        "as cell_seconds", "as cell_seconds")
    notebook_seconds: float = _declare(
        300.0, "CPU seconds", "the CPU time of one submission: its sandboxes (replays included) and the grading "
        "process's own work for it", float, "as cell_seconds", "as cell_seconds")
    notebook_wall_seconds: float | None = _declare(
        None, "seconds", "the wall-clock time of one submission, each cell's deadline too: what a sleeping or stuck "
        "notebook meets; None: twice notebook_seconds. A notebook stopped by it while most of its time went waiting "
        "for a CPU is graded again, then flagged as the machine's fault", float,
        "every request ends by it; a grading process still busy hard_limit_margin_seconds past twice it is killed")
    audit_hook: bool = _declare(
        True, "on/off", "the sandbox's audit hook (clear messages for what the OS refuses anyway); off only in "
        "the tests that probe the OS boundary beneath it", bool, "sys.addaudithook")

    def __post_init__(self):
        if not self.notebook_wall_seconds:
            object.__setattr__(self, "notebook_wall_seconds", 2.0 * float(self.notebook_seconds))

    # -- the front ends: values given by name, the others their defaults
    @classmethod
    def names(cls) -> list[str]:
        """The limits set by name (``audit_hook`` is a switch of the proof suite, not a bound)."""
        return [f.name for f in fields(cls) if f.name != "audit_hook"]

    @classmethod
    def from_mapping(cls, values=None) -> Limits:
        """Limits from a mapping (or Limits); missing keys keep their defaults, unknown keys are an error; each
        value read as its declared kind (``None`` kept where it means no cap)."""
        if isinstance(values, Limits):
            return values
        values = dict(values or {})
        declared = {f.name: f for f in fields(cls)}
        unknown = sorted(set(values) - set(declared))
        if unknown:
            raise ValueError(f"unknown limit {unknown[0]!r} (known: {', '.join(sorted(declared))})")
        return cls(**{name: _read(declared[name], value) for name, value in values.items()})

    @classmethod
    def parse(cls, text: str) -> Limits:
        """``"cell_seconds=120 ram_bytes=4e9"`` (spaces or commas): the named limits, the others their defaults;
        ``none`` for a limit that may have no cap. ValueError says what is wrong, in one line."""
        declared = {f.name: f for f in fields(cls) if f.name in cls.names()}
        values = {}
        for item in text.replace(",", " ").split():
            name, _, number = item.partition("=")
            if name not in declared:
                raise ValueError(f"{name!r} is not a limit (limits: {', '.join(cls.names())})")
            if number.strip().lower() == "none" and _optional(declared[name]):
                values[name] = None
                continue
            try:
                value = float(number)
            except ValueError:
                raise ValueError(f"{item!r}: give {name}=<number>") from None
            if not value > 0:
                raise ValueError(f"{item!r}: a limit is a positive number")
            values[name] = value
        return cls.from_mapping(values)

    # -- across the sandbox's boundary: the same record on both sides
    def to_wire(self) -> dict:
        """Plain JSON values, every limit named (what the sandbox's server receives)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_wire(cls, data: dict) -> Limits:
        """The record ``to_wire`` sent: every limit present, each of its declared kind, nothing else."""
        declared = {f.name: f for f in fields(cls)}
        if not isinstance(data, dict) or set(data) != set(declared):
            raise ValueError(f"limits on the wire must name exactly {', '.join(declared)}")
        for name, value in data.items():
            kind = declared[name].metadata["kind"]
            ok = (value is None and _optional(declared[name])) or (
                isinstance(value, bool) if kind is bool else
                isinstance(value, kind) or (kind is float and isinstance(value, int)))
            if not ok or (kind is not bool and isinstance(value, bool)):
                raise ValueError(f"limit {name}: {value!r} is not {kind.__name__}")
        return cls(**data)


def unprivileged(name: str) -> str:
    """What bounds limit ``name`` where its cgroup cannot be used (an unprivileged run), as declared."""
    return next(f.metadata["unprivileged"] for f in fields(Limits) if f.name == name)


def _optional(f) -> bool:
    """Whether ``None`` is a value of this limit (no cap), as its annotation says."""
    return "None" in str(f.type)


def _read(f, value):
    if value is None and _optional(f):
        return None
    kind = f.metadata["kind"]
    return float(value) if kind is float else bool(value) if kind is bool else int(float(value))


# ----------------------------------------------------------------------------- the grader's own bounds

@dataclass(frozen=True)
class GraderBounds:
    """The grader's own bounds: fixed, far beyond any honest notebook's needs."""
    reply_header_bytes: int = _declare(8 * MiB, "bytes", "a sandbox's reply, its JSON part (far more than any "
                                       "check needs)")
    reply_bytes: int = _declare(128 * MiB, "bytes", "a sandbox's reply with its arrays")
    wire_message_bytes: int = _declare(512 * MiB, "bytes", "any message on a sandbox's socket, by default")
    decode_depth: int = _declare(100, "levels", "nesting of a decoded message")
    decode_nodes: int = _declare(1_000_000, "nodes", "values one decoded message may build")
    decode_bytes: int = _declare(256 * MiB, "bytes", "what one decoded message may allocate")
    error_message_chars: int = _declare(2000, "characters", "an error message of the student's code, as the "
                                        "grader keeps it")
    sandbox_error_chars: int = _declare(500, "characters", "an exception's text as the sandbox sends it")
    check_message_chars: int = _declare(1000, "characters", "a check's message, as the grader keeps it")
    notebook_bytes: int = _declare(20 * MiB, "bytes", "a submitted file is read up to this, before any work is "
                                   "spent on it")
    cpu_reading_seconds: float = _declare(0.25, "seconds", "between two readings of a sandbox's CPU time while a "
                                          "reply is awaited")
    busy_share: float = _declare(0.5, "share", "a wall-clock stop is the machine's when this share of the "
                                 "notebook's time was run-queue wait")
    class_ram_share: float = _declare(0.75, "share", "of the machine's RAM, for all the sandboxes of one grading "
                                      "session together")
    hard_limit_margin_seconds: float = _declare(120.0, "seconds", "a grading process still busy this long past "
                                                "twice notebook_wall_seconds is killed (sandbox starts, feedback)")
    stop_seconds: float = _declare(10.0, "seconds", "for an idle grading process to end by itself")
    ahead_idle_seconds: float = _declare(300.0, "seconds", "a sandbox forked ahead that no notebook takes by then "
                                         "is ended")
    templates: int = _declare(2, "templates", "warm templates kept per grading process: a chapter's and the "
                              "previous one's")
    template_ready_seconds: float = _declare(120.0, "seconds", "a template's imports (torch) on a busy machine")
    spawn_seconds: float = _declare(30.0, "seconds", "a sandbox's set-up from a template, fork to ready")
    warm_failures: int = _declare(2, "failures", "failed warm starts after which a grading process starts its "
                                  "sandboxes cold")


GRADER = GraderBounds()


@dataclass(frozen=True)
class SubmissionBounds:
    """What the student wrote is bounded before any later step (the sandbox, the feedback, markdown rendering, the
    HTML sanitizer, the formgrader) spends work on it: far beyond any honest notebook, so that the slowest
    notebook costs at most its own budget. Each bound that cuts something says so in the notebook's notes."""
    cell_chars: dict = _declare(None, "characters", "of one cell the student wrote (answer or added), by cell type: "
                                "the rest is neither graded nor shown", dict,
                                factory=lambda: {"markdown": 20_000, "code": 100_000, "raw": 20_000})
    student_chars: int = _declare(400_000, "characters", "of all the student's cells of a notebook together")
    added_cells: int = _declare(300, "cells", "cells the student added that are kept (run, shown, stored); an "
                                "honest notebook adds a few dozen")
    cells_read: int = _declare(1_000, "cells", "of a submitted notebook read at all, of those with a grade_id and "
                               "of the others each (a release has fewer than 100)")
    rendered_chars: int = _declare(100_000, "characters", "of HTML the student's markdown renders to, all cells "
                                   "together: a cell past it is shown as a one-line note")
    shown_code_chars: int = _declare(30_000, "characters", "of the student's code the pages show (all of it is "
                                     "graded): a cell past it shows its first part and a one-line note")


SUBMISSION = SubmissionBounds()


# ----------------------------------------------------------------------------- switches

@dataclass(frozen=True)
class Switch:
    """An environment variable the grader reads: ``on`` unless set to "0" (default on), or only when "1"."""
    variable: str
    default: bool
    meaning: str

    def on(self) -> bool:
        value = os.environ.get(self.variable)
        if value is None:
            return self.default
        return value != "0" if self.default else value == "1"


@dataclass(frozen=True)
class PathSwitch:
    """An environment variable that names a program; empty: looked up on PATH."""
    variable: str
    meaning: str

    def value(self) -> str:
        return os.environ.get(self.variable, "")


WARM = Switch("AUTOGRADER_WARM", True, "sandboxes forked from a warm template (0: every sandbox started cold "
              "through bubblewrap)")
AHEAD = Switch("AUTOGRADER_AHEAD", True, "the next sandbox forked while a notebook is graded (0: each when it is "
               "needed)")
STOCK_AUTOGRADE = Switch("DLCOURSE_STOCK_AUTOGRADE", False, "1: nbgrader autograde runs nbgrader's own in-kernel "
                         "Execute (the student's code can change its own verdicts: not trusted)")
BWRAP = PathSwitch("AUTOGRADER_BWRAP", "the bubblewrap program to use (default: bwrap on PATH)")
SWITCHES = (WARM, AHEAD, STOCK_AUTOGRADE, BWRAP)


# ----------------------------------------------------------------------------- generated text

def _shown(value, unit: str) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, dict):
        return ", ".join(f"{k} {_shown(v, unit)}" for k, v in value.items())
    if unit == "bytes":
        for size, name in ((GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
            if value >= size and value % size == 0:
                return f"{value // size} {name}"
        return f"{value} B"
    if "seconds" in unit:
        return f"{value:g} s"
    if unit == "share":
        return f"{value:g}"
    return f"{value:,}".replace(",", " ") if isinstance(value, int) else f"{value:g}"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|")


def _default(record, f) -> str:
    if f.name == "notebook_wall_seconds":
        return "2 × notebook_seconds"
    return _shown(getattr(record, f.name), f.metadata["unit"])


def limits_help(width: int = 110) -> str:
    """The limits, for ``--help`` of the verbs that take ``--limits``: name, default, unit, meaning."""
    import textwrap
    lines = textwrap.wrap('limits (--limits "NAME=VALUE ...", make grade/check LIMITS="..."; the others keep their '
                          'defaults; NAME=none where a limit may have no cap):', width)
    lines.append(f"  {'NAME':<22} {'DEFAULT':<21} {'UNIT':<12} MEANING (none: no cap)")
    defaults = Limits()
    for f in fields(Limits):
        if f.name in Limits.names():
            head = f"  {f.name:<22} {_default(defaults, f):<21} {f.metadata['unit']:<12} "
            lines += textwrap.wrap(f.metadata["meaning"], width, initial_indent=head,
                                   subsequent_indent=" " * len(head)) or [head]
    return "\n".join(lines)


def markdown_tables() -> str:
    """docs/limits.md's tables: each sandbox's limits, the grader's own bounds, the submission's, the switches."""
    out = ["| limit | default | unit | meaning | enforced by | without a cgroup (unprivileged) |",
           "|---|---|---|---|---|---|"]
    defaults = Limits()
    for f in fields(Limits):
        m = f.metadata
        out.append(f"| `{f.name}` | {_default(defaults, f)} | {m['unit']} | {_cell(m['meaning'])} | "
                   f"{_cell(m['enforced'])} | {_cell(m['unprivileged'] or 'the same')} |")
    for title, record in (("the grader's own bound (fixed)", GRADER), ("what the student wrote (fixed)", SUBMISSION)):
        out += ["", f"| {title} | default | unit | meaning |", "|---|---|---|---|"]
        for f in fields(record):
            m = f.metadata
            out.append(f"| `{f.name}` | {_shown(getattr(record, f.name), m['unit'])} | {m['unit']} | "
                       f"{_cell(m['meaning'])} |")
    out += ["", "| environment variable | default | meaning |", "|---|---|---|"]
    for switch in SWITCHES:
        default = ("1" if switch.default else "unset") if isinstance(switch, Switch) else "unset"
        out.append(f"| `{switch.variable}` | {default} | {_cell(switch.meaning)} |")
    return "\n".join(out)


BEGIN = ("<!-- settings tables: generated from autograder/settings.py by "
         "`python -m autograder.settings docs/limits.md` -->")
END = "<!-- end of the settings tables -->"


def with_tables(text: str) -> str:
    """``text`` (docs/limits.md) with the part between BEGIN and END made the generated tables."""
    head, begin, rest = text.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"no {BEGIN!r} ... {END!r} block")
    return f"{head}{BEGIN}\n{markdown_tables()}\n{END}{tail}"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m autograder.settings docs/limits.md   (rewrites its settings tables)")
    path = sys.argv[1]
    with open(path, encoding="utf-8") as f:
        old = f.read()
    new = with_tables(old)
    if new != old:
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)
    print(f"{path}: settings tables {'rewritten' if new != old else 'already up to date'}")
