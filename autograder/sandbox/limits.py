"""Each sandbox's limits: ``Limits`` is declared, with every other bound and switch of the grader, in
``autograder/settings.py``; this name stays for the modules that import it from here."""
from __future__ import annotations

from ..settings import GiB, Limits, MiB

__all__ = ["GiB", "Limits", "MiB"]
