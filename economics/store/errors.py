"""What the store refuses, each a :class:`~economics.schema.validation.InputError` (the CLI answers exit code 2 with its
message, the HTTP API its status in the error shape): the message names the object, its version and the field.
"""

from __future__ import annotations

from typing import Any

from economics.schema.validation import InputError


class StoreError(InputError):
    """A store operation refused; ``field`` and ``value`` name what was wrong where there is one."""

    def __init__(self, message: str, field: str | None = None, value: Any = None,
                 problems: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.field, self.value = field, value
        self.problems = problems if problems is not None else [
            {"row": None, "name": "", "field": field, "value": value, "message": message}]


class NotFound(StoreError):
    """No scenario, version, curve or study of that name in the store."""


class StaleVersion(StoreError):
    """A save based on a version that is no longer the newest: ``newer`` is the newest version's number."""

    def __init__(self, message: str, newer: int) -> None:
        super().__init__(message, "base_version", newer)
        self.newer = newer


class Conflict(StoreError):
    """An object that exists already and would be replaced (the store never replaces one silently)."""


class TooLarge(StoreError):
    """An object larger than the store's limit for its kind."""


class InvalidStored(StoreError):
    """A value read back (or about to be saved) that the scenario schema refuses: a row edited by hand, say."""


class StoreUnavailable(StoreError):
    """The database cannot be opened, reached or migrated (the message names its URL, never its password)."""
