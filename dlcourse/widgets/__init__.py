"""Interactive widgets, one module per chapter, named like the chapter's folder (``ch04_cnn``), built on
``Explorer``.

Notebooks released before 28 Nov 2026 import a chapter's widgets by its number alone
(``from dlcourse.widgets.ch04 import ...``); ``_ChapterNumber`` resolves that name to the chapter's module,
so a notebook already in a student's hands keeps working (``tests/test_released_notebooks.py``).

Imported in an IPython kernel, the package sets IPython's handler of ``NameError`` (``show_missing_names``):
a widget's cell run before the cell that defines its function says so in one line, not a traceback."""
import importlib
import importlib.abc
import importlib.util
import pkgutil
import re
import sys

from .explorer import (
    Explorer,
    RenderCache,
    cached,
    frozen,
    missing_function_message,
    missing_name_line,
    readout,
    show_missing_names,
)

__all__ = ["Explorer", "RenderCache", "cached", "frozen", "missing_function_message", "missing_name_line", "readout",
           "show_missing_names"]

show_missing_names()  # in a kernel: a widget's cell run before its function's cell says so in one line


class _ChapterNumber(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``dlcourse.widgets.chNN`` is the module ``dlcourse.widgets.chNN_<topic>`` itself (one module object)."""

    def find_spec(self, fullname, path=None, target=None):
        package, _, short = fullname.rpartition(".")
        if package != __name__ or not re.fullmatch(r"ch\d\d", short):
            return None
        names = [m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith(short + "_")]
        return importlib.util.spec_from_loader(fullname, self, origin=names[0]) if len(names) == 1 else None

    def create_module(self, spec):
        return importlib.import_module(f"{__name__}.{spec.origin}")

    def exec_module(self, module):
        pass  # the chapter's module has run already


sys.meta_path.append(_ChapterNumber())
