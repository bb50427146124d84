"""Shared helper code for the course notebooks: checks, widgets, data.

It never contains reference solutions: every widget takes the student's own
functions as arguments and says what is missing when one is not written yet.
"""
__version__ = "0.1.0"
