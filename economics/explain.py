"""Derivations: every output written out with the scenario's numbers substituted.

The pipeline (:mod:`economics.pipeline`) records a :class:`Step` beside each quantity it computes, from the very
values it computes with, so the derivation cannot drift from the result. A step's formula is a template whose
``{term}`` placeholders are filled either with names (the symbolic line) or with the numbers and units (the
substituted line), e.g.::

    capital_usd_per_hour = accelerators x accelerator_price_usd x CRF(cost_of_capital, depreciation_years) / 8,760 h/y
                         = 64 x 30,000 USD x CRF(0.08, 5 year) 0.2505 1/year / 8,760 h/y = 54.89 USD/h
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_TERM = re.compile(r"\{(\w+)\}")


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
    """One derived quantity: its name, value, unit, the formula template and the terms it uses."""

    name: str
    value: float
    unit: str
    formula: str
    terms: dict[str, tuple[float, str]] = field(default_factory=dict)
    note: str = ""

    def symbolic(self) -> str:
        return _TERM.sub(lambda m: m.group(1), self.formula)

    def substituted(self) -> str:
        def fill(m: re.Match[str]) -> str:
            value, unit = self.terms[m.group(1)]
            return f"{format_number(value)} {unit}".rstrip()

        return _TERM.sub(fill, self.formula)

    def text(self) -> str:
        """``name = symbolic`` then ``= substituted = value unit`` on the next line."""
        result = f"{format_number(self.value)} {self.unit}".rstrip()
        pad = " " * len(self.name)
        line = f"{self.name} = {self.symbolic()}\n{pad} = {self.substituted()} = {result}"
        return f"{line}\n{pad}   ({self.note})" if self.note else line


class Trace:
    """Collects steps for one row (``row``) of a column-wise computation."""

    def __init__(self, row: int = 0) -> None:
        self.row = row
        self.steps: list[Step] = []

    def _at(self, value: Any) -> float:
        arr = np.asarray(value, dtype=float)
        return float(arr if arr.ndim == 0 else arr[self.row])

    def add(self, name: str, value: Any, unit: str, formula: str, note: str = "", **terms: tuple[Any, str]) -> None:
        """Record ``name = formula`` with ``terms`` mapping each placeholder to (value or array, unit)."""
        missing = set(_TERM.findall(formula)) - set(terms)
        if missing:
            raise KeyError(f"formula of {name} uses undefined terms {sorted(missing)}")
        self.steps.append(Step(name, self._at(value), unit, formula,
                               {k: (self._at(v), u) for k, (v, u) in terms.items()}, note))

    def text(self) -> str:
        return "\n".join(step.text() for step in self.steps)

    def step(self, name: str) -> Step:
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(name)
