"""The hours of a day: demand, price and grid-intensity profiles as 24 values, hour 0 to hour 23 (local time).

A profile is written as a word or as 24 numbers separated by spaces, commas or semicolons, read by the value parser
every cell goes through. Demand profiles are relative (scaled to mean 1: the shares of the average load); price and
intensity profiles are absolute (USD/kWh, gCO2e/kWh). The engine holds hourly columns with the hours on the first
axis, shape (24, rows), so that they broadcast with its ordinary columns (:mod:`economics.domain.formula`). This
module sits below the domain, beside the value parser, so that validation reads profiles with the same rules.
"""

from __future__ import annotations

import re

import numpy as np

from economics.schema import values

HOURS = 24
"""Hours of a day: the length of every profile (the formulas' HOURS_PER_DAY is this number)."""
DIURNAL_PEAK_HOUR = 14
"""The busiest hour of the built-in diurnal shape (early afternoon, local time)."""
DIURNAL_MAX_PEAK = HOURS * 0.999
"""A diurnal day's ``peak_to_average`` must stay below this: its busiest hour can hold at most the whole day's
demand (24 x the average), which the smooth shape reaches only in the limit."""


def diurnal_problem(peak_to_average: float) -> str | None:
    """Why a diurnal day cannot peak at ``peak_to_average`` x the average (None when it can): the one rule
    validation refuses a row by and the shape below is built under.

    >>> diurnal_problem(4.0) is None, diurnal_problem(30.0)
    (True, 'peak_to_average: a 24-hour diurnal profile (demand_profile diurnal) must peak below 23.976 x the \
average (0.999 x 24 hours), got 30')
    """
    if peak_to_average < DIURNAL_MAX_PEAK:
        return None
    return (f"peak_to_average: a 24-hour diurnal profile (demand_profile diurnal) must peak below "
            f"{DIURNAL_MAX_PEAK:g} x the average (0.999 x 24 hours), got {peak_to_average:g}")


def hour_values(field: str, text: str) -> np.ndarray:
    """The 24 numbers of ``text`` (hour 0 first), each read by the value parser; a clear message naming ``field``
    otherwise.

    >>> hour_values("electricity_tariff", "0.05 " * 8 + "0.12 " * 16)[[0, 8]].tolist()
    [0.05, 0.12]
    >>> hour_values("electricity_tariff", "1 2 3")
    Traceback (most recent call last):
    ...
    ValueError: electricity_tariff: '1 2 3' is not 24 numbers (got 3 values)
    """
    parts = [p for p in re.split(r"[\s,;]+", text.strip()) if p]
    if len(parts) != HOURS:
        raise ValueError(f"{field}: '{text[:60]}' is not 24 numbers (got {len(parts)} values)")
    try:  # the value parser every file goes through (2_5000 or non-ASCII digits are refused here too)
        x = np.array([float(values.number(p)) for p in parts])  # type: ignore[arg-type]
    except ValueError as exc:
        raise ValueError(f"{field}: {exc}") from None
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{field}: the 24 values must be finite, got '{text[:60]}'")
    return x


def demand_profile(profile: str, peak_to_average: float, field: str = "demand_profile") -> np.ndarray:
    r"""The 24 hourly multipliers of the average demand.

    * ``peak``: every hour at ``peak_to_average`` (the engine's sizing: the fleet carries the peak all day);
    * ``flat``: every hour at the average;
    * ``diurnal``: a smooth day, :math:`x_h \propto e^{b \cos(2 \pi (h - 14) / 24)}` (a von Mises shape) scaled
      to mean 1, with ``b`` chosen so that the busiest hour is ``peak_to_average`` x the average;
    * 24 numbers: relative load per hour 0..23, scaled to mean 1.

    >>> demand_profile("peak", 2.0)[:3].tolist()
    [2.0, 2.0, 2.0]
    >>> x = demand_profile("diurnal", 2.0); round(float(x.mean()), 9), round(float(x.max()), 6), int(x.argmax())
    (1.0, 2.0, 14)
    >>> demand_profile(" ".join(["1"] * 12 + ["3"] * 12), 1.0)[[0, 23]].tolist()
    [0.5, 1.5]
    """
    name = profile.strip().lower()
    if name == "peak":
        return np.full(HOURS, float(peak_to_average))
    if name == "flat":
        return np.ones(HOURS)
    if name == "diurnal":
        return _diurnal(float(peak_to_average))
    count = len([p for p in re.split(r"[\s,;]+", profile.strip()) if p])
    if count != HOURS:
        raise ValueError(f"{field}: '{profile[:60]}' is not peak, flat, diurnal or 24 numbers (got {count} values)")
    x = hour_values(field, profile)
    if np.any(x < 0) or not np.any(x > 0):
        raise ValueError(f"{field}: the 24 values must be >= 0 and not all 0, got '{profile[:60]}'")
    if not 1e-300 < x.max() < 1e306:  # loads near the float limits: scaled by the busiest first, so that their sum
        x = x / x.max()               # does not overflow to infinity nor their mean underflow to 0 (5e-324 / 24)
    return x / x.mean()


def _diurnal(peak_to_average: float) -> np.ndarray:
    theta = 2.0 * np.pi * (np.arange(HOURS) - DIURNAL_PEAK_HOUR) / HOURS
    problem = diurnal_problem(peak_to_average)
    if problem is not None:
        raise ValueError(problem)

    def shape(b: float) -> np.ndarray:
        y = np.exp(b * (np.cos(theta) - 1.0))
        return y / y.mean()

    lo, hi = 0.0, 1.0
    while shape(hi).max() < peak_to_average:
        hi *= 2.0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if shape(mid).max() < peak_to_average else (lo, mid)
    return shape((lo + hi) / 2.0)
