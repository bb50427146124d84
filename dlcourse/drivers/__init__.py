"""Drivers of the integration checks, one module per chapter (named like the chapter's folder).

A driver is the function a test cell hands to ``dlcourse.testing.in_student_process``: it runs where
the student's code runs (under the grader: in the sandbox, which imports it from here by module and
name), uses the student's pieces it is given and returns plain data. Drivers are public helper code:
no hidden check, threshold or secret data lives here; the verdict stays in the test cell.
"""
