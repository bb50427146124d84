"""Interactive widgets, one module per chapter, built on ``Explorer``."""
from .explorer import Explorer, missing_function_message

__all__ = ["Explorer", "missing_function_message"]
