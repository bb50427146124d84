"""The sandbox: the student's code runs in its own process, behind the operating system's boundary.

The grader's side (trusted):

- ``client``: ``Sandbox``, what the grader uses: run a cell, call a graded function, run a driver;
- ``proxies``: ``RemoteFunction`` and ``Handle``, the student's functions and objects as the test cells see them;
- ``process``: the life cycle of one sandbox process and its environment;
- ``template``: warm starts, each sandbox forked from a template that has imported its chapter's libraries;
- ``isolation``: the operating-system boundary (bubblewrap, seccomp, a sized tmpfs) and ``probe()``;
- ``cgroups``: the kernel's bound on its memory (tmpfs, memfd and page cache included) and tasks.

Every bound of a sandbox is one frozen record, ``Limits``, declared in ``autograder/settings.py`` with every
other bound and switch of the grader.

Both sides: ``protocol`` (the table of requests) and ``wire`` (how a message is framed and encoded).

The sandbox's side (untrusted, the only grader code it can see): ``server`` and its ``policy``
(limits, capped output, the audit hook), ``template_server`` (the template, and the set-up of each
sandbox forked from it), and ``autograder/settings.py`` (the ``Limits`` it receives, read as the grader
reads them). This file is bound into the sandbox too: it imports nothing.
"""
