"""The limits of one sandbox: one frozen, typed record, built once at each front end and read everywhere.

``Limits.from_mapping`` accepts a mapping (a front end's ``--limits``, nbgrader's ``SandboxedExecute.limits``, a task's
``limits``), unknown keys refused; ``as_dict`` is what crosses into the sandbox's server.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

GiB, MiB = 1024 ** 3, 1024 ** 2


@dataclass(frozen=True)
class Limits:
    memory_bytes: int = 3 * GiB        # address space of the sandbox's process (torch alone maps ~0.7 GB)
    ram_bytes: int = 2 * GiB           # memory cgroup: resident memory, tmpfs, memfd and page cache together
    disk_bytes: int = 256 * MiB        # the one tmpfs that holds the work folder and /tmp
    tasks: int = 256                   # processes and threads (pids cgroup)
    cpu_seconds: int = 600             # the whole sandbox lifetime
    output_bytes: int = 2 * MiB        # what the student's code may print, in all
    # Time budgets count CPU seconds (user + system) of the sandbox's processes, their threads and children, so
    # that a notebook earns the same on an idle or a busy machine (``client.Sandbox.within``):
    cell_seconds: float = 60.0          # CPU seconds per test cell
    setup_seconds: float = 15.0         # CPU seconds per notebook cell run before the tests (they only define things)
    notebook_seconds: float = 300.0     # CPU seconds for one submission: its sandboxes (replays included) and the
    #                                     grading process's own work for it
    notebook_wall_seconds: float = 0.0  # WALL-clock seconds for one submission, what a sleeping or stuck notebook
    #                                     meets; 0 (the default): twice notebook_seconds. A stop by it while most of
    #                                     the time went waiting for a CPU is the machine's: graded again, then flagged
    audit_hook: bool = True            # off only in the tests that probe the OS boundary beneath it

    def __post_init__(self):
        if not self.notebook_wall_seconds:
            object.__setattr__(self, "notebook_wall_seconds", 2.0 * float(self.notebook_seconds))

    @classmethod
    def from_mapping(cls, values=None) -> Limits:
        """Limits from a mapping (or Limits); missing keys keep their defaults, unknown keys are an error."""
        if isinstance(values, Limits):
            return values
        values = dict(values or {})
        known = {f.name: f.type for f in fields(cls)}
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ValueError(f"unknown limit {unknown[0]!r} (known: {', '.join(sorted(known))})")
        defaults = cls()
        return cls(**{name: type(getattr(defaults, name))(value) for name, value in values.items()})

    def as_dict(self) -> dict:
        return asdict(self)

    def __getitem__(self, name: str):  # read like the mapping it replaces
        return getattr(self, name)
