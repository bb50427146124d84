"""nbgrader's exchange, through its own extension point (``c.ExchangeFactory``): a ``collect`` that never
follows a symbolic link, and the exchange a ``make grade`` run's formgrader sees.

nbgrader's ``ExchangeCollect`` copies each submission out of the exchange's inbound folder with
``shutil.copytree``, which copies a link as its target's content: a student who submits a link to
``solutions/<ch>/<ch>.ipynb`` (or to any file the instructor can read) would hand in that file.
``LinkRefusingCollect`` (``c.ExchangeFactory.collect``, set by ``autograder.nbgrader_settings``) copies
the same files under the same rules (``CourseDirectory.ignore``, ``include``, ``max_file_size``,
``max_dir_size``) but opens every folder and file relative to its parent with O_NOFOLLOW, so a link,
even one swapped in while collecting, is refused with a warning naming it: a linked submission folder
is not collected at all, a linked file or folder inside one is left out.
"""
from __future__ import annotations

import fnmatch
import os
import stat

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.list import ExchangeList

CLOEXEC = getattr(os, "O_CLOEXEC", 0)
DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | CLOEXEC
FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | CLOEXEC  # O_NONBLOCK: a FIFO cannot stall the copy


def copy_without_links(src: str, dest: str, *, exclude=(), include=None, max_file_size=None, refuse=print) -> None:
    """Copy the folder ``src`` to ``dest`` (created), never following a link; ``refuse(what)`` for each one
    left out. ``exclude``/``include``: name globs; ``max_file_size``: in kB (nbgrader's options)."""
    try:
        top = os.open(src, DIRECTORY)
    except OSError as exc:
        refuse(f"{src}: {'a symbolic link' if os.path.islink(src) else os.strerror(exc.errno)}: not collected")
        return
    try:
        _copy_folder(top, src, dest, list(exclude), include, max_file_size, refuse)
    finally:
        os.close(top)


def _copy_folder(folder: int, shown: str, dest: str, exclude, include, max_file_size, refuse) -> None:
    os.makedirs(dest, exist_ok=True)
    for name in sorted(os.listdir(folder)):
        where = os.path.join(shown, name)
        if any(fnmatch.fnmatch(name, glob) for glob in exclude):
            continue
        kind = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
        if stat.S_ISLNK(kind):
            refuse(f"{where} is a symbolic link: not collected")
        elif stat.S_ISDIR(kind):
            try:
                inner = os.open(name, DIRECTORY, dir_fd=folder)
            except OSError:
                refuse(f"{where} could not be opened as a folder (a link swapped in?): not collected")
                continue
            try:
                _copy_folder(inner, where, os.path.join(dest, name), exclude, include, max_file_size, refuse)
            finally:
                os.close(inner)
        elif stat.S_ISREG(kind):
            if include and not any(fnmatch.fnmatch(name, glob) for glob in include):
                continue
            _copy_file(folder, name, where, os.path.join(dest, name), max_file_size, refuse)
        else:
            refuse(f"{where} is not a regular file: not collected")


def _copy_file(folder: int, name: str, where: str, dest: str, max_file_size, refuse) -> None:
    try:
        fd = os.open(name, FILE, dir_fd=folder)
    except OSError:
        refuse(f"{where} could not be opened without following a link: not collected")
        return
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            refuse(f"{where} is not a regular file: not collected")
            return
        if max_file_size and info.st_size > 1000 * max_file_size:
            refuse(f"{where} is too large (see CourseDirectory.max_file_size): not collected")
            return
        with open(dest, "wb") as out:
            while chunk := f.read(1 << 20):
                out.write(chunk)
    os.utime(dest, ns=(info.st_atime_ns, info.st_mtime_ns))


class LinkRefusingCollect(ExchangeCollect):
    """nbgrader's collect, copying each submission with ``copy_without_links``."""

    def do_copy(self, src, dest, log=None):
        if os.path.islink(src):
            self.log.warning("%s is a symbolic link: not collected", src)
            return
        if self.get_size(src) > 1000 * self.coursedir.max_dir_size:  # as nbgrader's own do_copy
            self.log.error("Directory size is too big")
            raise RuntimeError(f"Directory size of {src} is too big")
        copy_without_links(src, dest, exclude=self.coursedir.ignore, include=self.coursedir.include,
                           max_file_size=self.coursedir.max_file_size,
                           refuse=lambda what: self.log.warning("%s", what))


class ReleasedChapters(ExchangeList):
    """The exchange as the formgrader of a ``make grade`` run sees it (``make formgrader OUT=...``).

    Such a run has no exchange: the chapters were released as ``course/`` (``make release``) and handed
    out another way. Listing them as released keeps the formgrader from calling them "draft" and from
    warning that the exchange is missing; releasing or collecting stays the hub's job."""

    def start(self):
        from .course import chapters, release_path
        return [{"course_id": self.coursedir.course_id, "assignment_id": chapter, "status": "released",
                 "path": str(release_path(chapter).parent), "notebooks": []}
                for chapter in chapters() if release_path(chapter).is_file()]
