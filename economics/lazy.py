"""A module imported on its first attribute, for a command or a path that most runs never take (issue #43)."""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """The module ``name``, imported when an attribute of it is first read (then Python keeps it in ``sys.modules``).

    A caller names it under ``if TYPE_CHECKING:`` too, as an ordinary import, so that mypy checks its uses and the
    import contracts (``lint-imports``) see the dependency; at run time the name is this object instead.

    >>> import sys
    >>> sys.modules.pop("colorsys", None) and None
    >>> colors = LazyModule("colorsys")
    >>> "colorsys" in sys.modules
    False
    >>> colors.rgb_to_hsv(1.0, 0.0, 0.0), "colorsys" in sys.modules
    ((0.0, 1.0, 1.0), True)
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        """The module's attribute ``attr``, the module imported first (once: Python keeps it)."""
        return getattr(importlib.import_module(self._name), attr)
