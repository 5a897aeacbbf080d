"""Remember what a deterministic step over one-row columns wrote, per value of the columns it read.

A step such as one scenario's validation reads some of its columns (which depends on their values: a session field
is read only on a session row) and writes some. Run once on columns that record every read, the step is known to
give the same writes for any columns whose recorded fields hold the same values: a deterministic step reading the
same values takes the same branches, reads the same fields and computes the same results. So the writes are
remembered per set of fields read and per value of those fields, and a later scenario that differs only in fields
the step never read (a price, for the validation) takes them back without running the step.

Only the step's reads of its columns are recorded: whatever else it reads (the catalogs) must be fixed for the
process, and a caller leaves out a run that read anything that may change (a loaded curve file).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

SEEN_AT_MOST = 1024
"""Remembered runs held before starting again (the app's scenarios differ in a few values at a time)."""


class Recording(dict[str, Any]):
    """Columns that record every field looked up (``[]``, ``get``, ``in``); a step that walks all of them (keys,
    items, a copy) has read everything, and ``whole`` says so.
    """

    def __init__(self, columns: Mapping[str, Any]) -> None:
        super().__init__(columns)
        self.read: dict[str, None] = {}
        self.whole = False

    def __getitem__(self, name: str) -> Any:  # noqa: D105
        self.read[name] = None
        return super().__getitem__(name)

    def get(self, name: str, default: Any = None) -> Any:  # noqa: D102
        self.read[name] = None
        return super().get(name, default)

    def __contains__(self, name: object) -> bool:  # noqa: D105
        self.read[str(name)] = None
        return super().__contains__(name)

    def _all(self) -> None:
        self.whole = True

    def __iter__(self) -> Any:  # noqa: D105
        self._all()
        return super().__iter__()

    def keys(self) -> Any:  # noqa: D102
        self._all()
        return super().keys()

    def items(self) -> Any:  # noqa: D102
        self._all()
        return super().items()

    def values(self) -> Any:  # noqa: D102
        self._all()
        return super().values()

    def copy(self) -> dict[str, Any]:  # noqa: D102
        self._all()
        return dict(super().items())


def value_key(value: Any) -> tuple[type, Any]:
    """A value as a key that tells apart what ``==`` equates but a step may not: 1, 1.0 and True (their types),
    0.0 and -0.0 (their signs).

    >>> value_key(0.0) == value_key(-0.0), value_key(1) == value_key(1.0), value_key("a") == value_key("a")
    (False, False, True)
    """
    if type(value) is float and value == 0.0:
        return float, math.copysign(1.0, value)
    return type(value), value


class ReadMemo:
    """The writes of recorded runs, per set of fields read and per the values (of ``given``, the values the columns
    were built from) of those fields.
    """

    def __init__(self) -> None:
        self._seen: dict[tuple[str, ...], dict[tuple[Any, ...], dict[str, np.ndarray]]] = {}
        self._count = 0

    def find(self, given: Mapping[str, Any]) -> dict[str, np.ndarray] | None:
        """The remembered writes of a run whose read fields hold these values (copies), or None."""
        for fields, runs in list(self._seen.items()):  # a snapshot: another thread may start again meanwhile
            found = runs.get(tuple([value_key(given.get(f)) for f in fields]))
            if found is not None:
                return {name: column.copy() for name, column in found.items()}
        return None

    def keep(self, given: Mapping[str, Any], before: Mapping[str, Any], after: Recording) -> None:
        """Remember the run that turned ``before`` into ``after`` (the recording it ran on), unless it read every
        column or took one away. The written columns are kept as copies: the caller goes on to change its own.
        """
        if after.whole or not all(dict.__contains__(after, name) for name in before):
            return
        written = {name: column for name, column in dict.items(after) if before.get(name) is not column}
        if not all(type(column) is np.ndarray for column in written.values()):
            return  # a table's categorical: not a one-row step's
        written = {name: column.copy() for name, column in written.items()}
        if self._count >= SEEN_AT_MOST:
            self._seen, self._count = {}, 0
        fields = tuple(after.read)
        self._seen.setdefault(fields, {})[tuple([value_key(given.get(f)) for f in fields])] = written
        self._count += 1
