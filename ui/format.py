"""Display formatting for the pages: the rule lives in :mod:`economics.report.format`, shared with the board report
so a KPI reads the same on screen and on paper; re-exported here under the names the pages use."""

from __future__ import annotations

from economics.report.format import (
    EMPTY,
    FORMATTERS,
    MINUS,
    SCALES,
    SPEED,
    Kpi,
    count,
    delta,
    delta_color,
    kpi,
    magnitude_format,
    number,
    output,
    percent,
    points,
    signed,
    usd,
    usd_per_m_tokens,
    usd_rate,
    versus,
    yes_no,
)

__all__ = ["EMPTY", "FORMATTERS", "MINUS", "SCALES", "SPEED", "Kpi", "count", "delta", "delta_color", "kpi",
           "magnitude_format", "number", "output", "percent", "points", "signed", "usd", "usd_per_m_tokens",
           "usd_rate", "versus", "yes_no"]
