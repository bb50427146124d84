"""Plausible mistakes of every chapter, one file ``<chapter>.py`` each: their format and loader are
``autograder/mistakes.py`` (re-exported here for the proof suite)."""
from autograder.mistakes import MistakeDoesNotApply, Swap, integration, load, swap

__all__ = ["MistakeDoesNotApply", "Swap", "integration", "load", "swap"]
