"""Integration-check drivers, one module per chapter folder: run where the student's code runs."""
