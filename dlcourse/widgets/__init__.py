"""Interactive widgets, one module per chapter, built on ``Explorer``."""
from .explorer import Explorer, RenderCache, cached, frozen, missing_function_message

__all__ = ["Explorer", "RenderCache", "cached", "frozen", "missing_function_message"]
