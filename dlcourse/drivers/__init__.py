"""Drivers of the integration checks, one module per chapter folder (``ch03_backprop.py``, ...).

A driver is the function a test cell passes to ``dlcourse.testing.in_student_process``: it runs where
the student's code runs, calls the student's pieces it is given, and returns plain data (numbers,
lists, dicts, NumPy arrays). It holds no check, threshold or secret data: the verdict is computed in
the test cell, from what the driver returns. Each imports what it needs in its own body.
"""
