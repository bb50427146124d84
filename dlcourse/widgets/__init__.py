"""Interactive widgets, one module per chapter, built on ``Explorer``."""
from .explorer import Explorer, RenderCache, cached, missing_function_message

__all__ = ["Explorer", "RenderCache", "cached", "missing_function_message"]
