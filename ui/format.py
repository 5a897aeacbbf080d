"""Display formatting for the pages (presentation only; every number comes from :mod:`economics`)."""

from __future__ import annotations

import math


def usd(value: float) -> str:
    """Dollars with enough decimals to show two significant digits below $1.

    >>> usd(1234.5)
    '$1,234.50'
    >>> usd(0.42)
    '$0.42'
    >>> usd(0.0042)
    '$0.0042'
    """
    if not math.isfinite(value):
        return "n/a"
    if value == 0 or abs(value) >= 1:
        return f"${value:,.2f}"
    decimals = max(2, 1 - math.floor(math.log10(abs(value))))
    return f"${value:,.{decimals}f}"


def usd_per_m_tokens(value: float) -> str:
    """Cost per million tokens.

    >>> usd_per_m_tokens(0.42)
    '$0.42 / M tokens'
    """
    return f"{usd(value)} / M tokens"


def usd_per_hour(value: float) -> str:
    """Cost per hour.

    >>> usd_per_hour(12.5)
    '$12.50 / h'
    """
    return f"{usd(value)} / h"


def percent(fraction: float) -> str:
    """A fraction shown as percent.

    >>> percent(0.563)
    '56.3 %'
    """
    if not math.isfinite(fraction):
        return "n/a"
    return f"{fraction * 100:.1f} %"
