"""Derivations: every output written out with the scenario's numbers substituted.

The engine's stages evaluate :class:`~economics.domain.formula.Formula` definitions over whole columns; given a
:class:`Trace` they also record, for one row, the formula's symbolic line and the same expression with that row's
numbers, from the very values they compute with. The printed arithmetic is therefore the computed arithmetic, e.g.::

    capital_usd_per_hour = accelerators x accelerator_price_usd x crf / 8,760 h/year
                         = 64 x 30,000 x 0.250456 / 8,760 = 54.89 USD/h
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from economics.domain.formula import Formula

_TERM = re.compile(r"\{(\w+)\}")
_NUMBER = re.compile(r"-?[0-9][0-9,]*(\.[0-9]+)?(e[-+]?[0-9]+)?")


def format_number(x: float) -> str:
    """A number for people: thousands separators, about four significant digits, no scientific notation
    below a trillion.

    >>> format_number(30000.0), format_number(0.25045645), format_number(1234567.891), format_number(0.0)
    ('30,000', '0.2505', '1,234,568', '0')
    >>> format_number(2.5e-7)
    '2.5e-07'
    """
    if not math.isfinite(x):
        return "n/a"
    ax = abs(x)
    if 1e-4 <= ax < 999.95:  # four significant digits, trailing zeros dropped (the common case, kept fast)
        return f"{x:.4g}"
    if x == 0:
        return "0"
    if ax >= 1e15 or ax < 1e-4:
        return f"{x:.4g}"
    return f"{x:,.0f}"


@dataclass
class Step:
    """One derived quantity: name, value, unit, its symbolic and substituted lines, and a note.

    ``checked`` steps come from a :class:`~economics.domain.formula.Formula`: their substituted line is plain arithmetic
    that re-evaluates to the value (see :func:`economics.domain.formula.reevaluate`).
    """

    name: str
    value: float
    unit: str
    symbolic: str
    substituted: str
    note: str = ""
    checked: bool = False

    def result(self) -> str:
        """The value as printed, with its unit (none for ``-``)."""
        return f"{format_number(self.value)} {self.unit if self.unit != '-' else ''}".rstrip()

    def text(self) -> str:
        """``name = symbolic`` then ``= substituted = value unit`` on the next line."""
        pad = " " * len(self.name)
        if self.symbolic == self.substituted or _NUMBER.fullmatch(self.substituted):
            line = f"{self.name} = {self.symbolic} = {self.result()}"
        else:
            line = f"{self.name} = {self.symbolic}\n{pad} = {self.substituted} = {self.result()}"
        return f"{line}\n{pad}   ({self.note})" if self.note else line


class Trace:
    """Collects steps for one row (``row``) of a column-wise computation."""

    def __init__(self, row: int = 0) -> None:
        self.row = row
        self.steps: list[Step] = []

    def _at(self, value: Any) -> float:
        arr = np.asarray(value, dtype=float)
        return float(arr if arr.ndim == 0 else arr[self.row])

    def record(self, formula: Formula, values: Mapping[str, Any], result: Any, note: str = "") -> None:
        """Record ``formula`` for this row: its symbols, the row's numbers (from ``values``, the columns it was
        evaluated on) and its ``result`` column.
        """
        self.steps.append(Step(formula.name, self._at(result), formula.unit, formula.symbolic(),
                               formula.substituted(values, self.row), note or formula.note, checked=True))

    def add(self, name: str, value: Any, unit: str, formula: str, note: str = "", **terms: tuple[Any, str]) -> None:
        """Record a step from a template whose ``{term}`` placeholders map to (value or array, unit) in
        ``terms`` (used for steps that are lookups or searches rather than one arithmetic expression).
        """
        missing = set(_TERM.findall(formula)) - set(terms)
        if missing:
            raise KeyError(f"formula of {name} uses undefined terms {sorted(missing)}")
        values = {k: (self._at(v), u) for k, (v, u) in terms.items()}
        symbolic = _TERM.sub(lambda m: m.group(1), formula)
        substituted = _TERM.sub(lambda m: f"{format_number(values[m.group(1)][0])} {values[m.group(1)][1]}".rstrip(),
                                formula)
        self.steps.append(Step(name, self._at(value), unit, symbolic, substituted, note))

    def text(self) -> str:
        """Every step's :meth:`Step.text`, one after the other, in the order they were recorded."""
        return "\n".join(step.text() for step in self.steps)

    def step(self, name: str) -> Step:
        """The last step that computed ``name``."""
        for s in reversed(self.steps):
            if s.name == name:
                return s
        raise KeyError(name)
