"""Display formatting for the app's pages and the board report, driven by the output schema
(:mod:`economics.schema.outputs`).

One rule for both, so a KPI reads the same on screen and on paper (:mod:`ui.format` re-exports it for the pages).
Presentation only: every number comes from the engine. Money is read like a finance report (``−$38.3 M``,
``$84.6 M``, ``$1,234``, ``$0.42``), fractions as percent, counts with thousands separators, booleans as ✓/✗ and an
empty value in words, never ``None``, ``nan`` or a 0 that means something else.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from economics.schema.outputs import OUTPUTS, DisplayFormat, OutputSpec

MINUS = "\u2212"  # the typographic minus of a finance report
EMPTY = "—"
SCALES = ((1e12, "T"), (1e9, "B"), (1e6, "M"))
_USD, _USD_RATE, _COUNT, _NUMBER, _PERCENT = (DisplayFormat.USD, DisplayFormat.USD_RATE, DisplayFormat.COUNT,
                                              DisplayFormat.NUMBER, DisplayFormat.PERCENT)
_WORDS = (DisplayFormat.TEXT, DisplayFormat.BOOL)
"""Members read per value as module names: a member read off its class costs about 170 ns against 15 ns
(``economics.schema.values._FLOAT`` says why)."""


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _sign(value: float, minus: str) -> str:
    return minus if value < 0 else ""


def usd(value: float | None, minus: str = MINUS) -> str:
    """Money as people read it: millions and billions with three significant digits, whole dollars from $1,000,
    cents from $1, two significant digits below $1.

    >>> usd(-38258302.4), usd(84599107.15), usd(1234.5), usd(12.5), usd(0.42), usd(0.0042), usd(0)
    ('−$38.3 M', '$84.6 M', '$1,234', '$12.50', '$0.42', '$0.0042', '$0')
    >>> usd(2.5e9), usd(None), usd(float("nan"))
    ('$2.50 B', '—', '—')
    """
    if not _finite(value):
        return EMPTY
    v = float(value)  # type: ignore[arg-type]
    a, s = abs(v), _sign(v, minus)
    for scale, suffix in SCALES:
        if a >= scale:
            return f"{s}${_sig3(a / scale)} {suffix}"
    if a >= 1000 or a == 0:
        return f"{s}${a:,.0f}"
    if a >= 1:
        return f"{s}${a:,.2f}"
    decimals = max(2, 1 - math.floor(math.log10(a)))
    return f"{s}${a:.{decimals}f}"


def usd_rate(value: float | None, minus: str = MINUS) -> str:
    """A price or unit cost: cents from $1, two significant digits below $1, thousands separators above.

    >>> usd_rate(0.4213), usd_rate(1.234), usd_rate(0.00421), usd_rate(12345.6), usd_rate(-0.5)
    ('$0.42', '$1.23', '$0.0042', '$12,345.60', '−$0.50')
    """
    if not _finite(value):
        return EMPTY
    v = float(value)  # type: ignore[arg-type]
    a, s = abs(v), _sign(v, minus)
    if a >= 1 or a == 0:
        return f"{s}${a:,.2f}"
    decimals = max(2, 1 - math.floor(math.log10(a)))
    return f"{s}${a:.{decimals}f}"


def _sig3(a: float) -> str:
    """Three significant digits for 1 <= a < 1000: 38.3, 84.6, 2.50, 120."""
    return f"{a:.2f}" if a < 10 else f"{a:.1f}" if a < 100 else f"{a:,.0f}"


def usd_per_m_tokens(value: float | None) -> str:
    """Cost per million tokens.

    >>> usd_per_m_tokens(0.42)
    '$0.42 / M tokens'
    """
    return f"{usd_rate(value)} / M tokens"


def percent(fraction: float | None, minus: str = MINUS) -> str:
    """A fraction shown as percent with one decimal.

    >>> percent(0.563), percent(-1.2473), percent(None)
    ('56.3 %', '−124.7 %', '—')
    """
    if not _finite(fraction):
        return EMPTY
    v = float(fraction) * 100  # type: ignore[arg-type]
    return f"{_sign(v, minus)}{abs(v):,.1f} %"


def count(value: float | None, minus: str = MINUS) -> str:
    """A whole number with thousands separators.

    >>> count(536), count(1234567.0), count(None)
    ('536', '1,234,567', '—')
    """
    if not _finite(value):
        return EMPTY
    v = float(value)  # type: ignore[arg-type]
    return f"{_sign(v, minus)}{abs(v):,.0f}"


def number(value: float | None, minus: str = MINUS) -> str:
    """About four significant digits, thousands separators, no exponent below a trillion.

    >>> number(61761922.3563), number(0.4317), number(12.3456), number(0.000123), number(1e13)
    ('61,761,922', '0.4317', '12.35', '0.000123', '1.000e+13')
    """
    if not _finite(value):
        return EMPTY
    v = float(value)  # type: ignore[arg-type]
    a, s = abs(v), _sign(v, minus)
    if a >= 1e12:
        return f"{s}{a:.3e}"
    if a >= 1000:
        return f"{s}{a:,.0f}"
    if a == 0:
        return "0"
    decimals = max(0, 3 - math.floor(math.log10(a)))
    return f"{s}{a:.{decimals}f}".rstrip("0").rstrip(".") if decimals else f"{s}{a:.0f}"


def months(value: float | None, minus: str = MINUS) -> str:
    """A duration in months with one decimal.

    >>> months(3.25), months(-12), months(None)
    ('3.2 months', '−12.0 months', '—')
    """
    if not _finite(value):
        return EMPTY
    v = float(value)  # type: ignore[arg-type]
    return f"{_sign(v, minus)}{abs(v):,.1f} months"


def words(value: Any) -> str:
    """Text as it is (empty: —).

    >>> words("memory"), words(""), words(None)
    ('memory', '—', '—')
    """
    return EMPTY if value is None or (isinstance(value, str) and not value) else str(value)


def yes_no(value: Any) -> str:
    """✓ or ✗ (empty: —).

    >>> yes_no(True), yes_no(False), yes_no(None)
    ('✓', '✗', '—')
    """
    if value is None:
        return EMPTY
    return "✓" if bool(value) else "✗"


FORMATTERS: dict[DisplayFormat, Callable[[Any], str]] = {
    DisplayFormat.USD: usd, DisplayFormat.USD_RATE: usd_rate, DisplayFormat.COUNT: count,
    DisplayFormat.NUMBER: number, DisplayFormat.PERCENT: percent, DisplayFormat.MONTHS: months,
    DisplayFormat.TEXT: words, DisplayFormat.BOOL: yes_no}
"""The text of a value in each display format: every :class:`~economics.schema.outputs.DisplayFormat` has one."""


def output(name: str, value: Any, spec: OutputSpec | None = None) -> str:
    """Any output by its display format in the output schema (``fmt``), with its unit where the format has none.

    >>> output("cost_usd_per_day", -38258302.4), output("utilization", 0.4317), output("feasible", False)
    ('−$38.3 M', '43.2 %', '✗')
    >>> output("facility_power_kw", 12345.678), output("accelerators", 536)
    ('12,346 kW', '536')
    """
    spec = spec or OUTPUTS[name]
    text = FORMATTERS[spec.fmt](value)
    if spec.fmt is _NUMBER and text != EMPTY and spec.unit not in ("-", ""):
        return f"{text} {spec.unit}"
    return text


def signed(change: float, shown: Callable[[float], str]) -> str:
    """A change with an ASCII sign (so ``st.metric`` colours it) and its size in a KPI's own format.

    >>> signed(-0.05, points), signed(1.5e6, usd)
    ('-5.0 pp', '+$1.50 M')
    """
    return f"{'-' if change < 0 else '+'}{shown(abs(change))}"


def points(share: float) -> str:
    """A difference of two shares in percentage points: ``0.05`` -> ``5.0 pp``."""
    return f"{share * 100:,.1f} pp"


def versus(change: str | None, same: bool) -> str | None:
    """A KPI's delta against the pinned baseline: ``same as baseline``, or the change with ``vs baseline``; None
    without a baseline figure.

    >>> versus("+$1.50 M", False), versus("+$0", True), versus(None, False)
    ('+$1.50 M vs baseline', 'same as baseline', None)
    """
    return None if change is None else "same as baseline" if same else f"{change} vs baseline"


def delta(name: str, current: Any, baseline: Any, spec: OutputSpec | None = None) -> str | None:
    """The change against the baseline for ``st.metric`` (an ASCII sign, so Streamlit colours it): money and counts
    in their own format, percentages in percentage points; None when either side is empty.

    >>> delta("gross_margin", 0.25, 0.30), delta("cost_usd_per_day", 2.5e6, 1e6), delta("accelerators", 512, 536)
    ('-5.0 pp', '+$1.50 M', '-24')
    """
    if not (_finite(current) and _finite(baseline)):
        return None
    spec = spec or OUTPUTS[name]
    unit = f" {spec.unit}" if spec.fmt is _NUMBER and spec.unit not in ("-", "") else ""
    return change(float(current) - float(baseline), _NUMBER if spec.fmt in _WORDS else spec.fmt, unit)


def change(difference: float, kind: DisplayFormat, unit: str = "") -> str:
    """A change with an ASCII sign in display format ``kind`` and ``unit`` after it: a change of a percentage in
    percentage points.

    >>> change(-0.05, DisplayFormat.PERCENT), change(1.5e6, DisplayFormat.USD), change(2, DisplayFormat.MONTHS)
    ('-5.0 pp', '+$1.50 M', '+2.0 months')
    """
    return signed(difference, points if kind is _PERCENT else lambda x: FORMATTERS[kind](x) + unit)


def delta_color(name: str, spec: OutputSpec | None = None) -> str:
    """``st.metric``'s colouring for an output: green when it moves the good way, grey when neutral."""
    better = (spec or OUTPUTS[name]).higher_is_better
    return "off" if better is None else "normal" if better else "inverse"


def magnitude_format(spec_fmt: DisplayFormat, values: list[float]) -> str:
    """A printf format for a table column (``st.column_config``): precision by the column's largest magnitude. The
    currency is in the column's header (sprintf would print a loss as ``$-495``).

    >>> usd, rate, count, number = DisplayFormat.USD, DisplayFormat.USD_RATE, DisplayFormat.COUNT, DisplayFormat.NUMBER
    >>> magnitude_format(usd, [1.5e7, 2.0]), magnitude_format(rate, [0.0123]), magnitude_format(count, [])
    ('%,.0f', '%.4f', '%,d')
    >>> magnitude_format(number, [0.43, 0.2]), magnitude_format(number, [61761922.3])
    ('%.3f', '%,.0f')
    """
    finite = [abs(v) for v in values if _finite(v)]
    top = max(finite) if finite else 0.0
    if spec_fmt is _COUNT:
        return "%,d"
    if top >= 100:
        return "%,.0f"
    if top >= 1 or spec_fmt is _USD or top == 0:
        return "%,.2f"
    return "%.4f" if spec_fmt is _USD_RATE else "%.3f"


SPEED = OutputSpec("output_tokens_per_s_per_accelerator", "token/s", "Output tokens/s per accelerator",
                   "Output throughput per accelerator at the interactivity target: measured, interpolated on a "
                   "measured curve, or estimated", fmt=_COUNT, higher_is_better=True)
"""The throughput the engine used (an input it fills when empty), shown as a KPI like an output."""


@dataclass(frozen=True)
class Kpi:
    """One KPI as a page draws it and the report prints it: title, value, change against the baseline."""

    title: str
    value: str
    change: str | None
    """``+$1.50 M vs baseline``, ``same as baseline``, or None without a baseline figure."""
    same: bool
    color: str
    """``st.metric``'s delta colouring (:func:`delta_color`; ``off`` when the same)."""
    help: str


def kpi(name: str, result: Mapping[str, Any], base: Mapping[str, Any] | None, title: str | None = None,
        value: str | None = None) -> Kpi:
    """The KPI of output ``name`` of an evaluated scenario: its label (with the unit for a plain number, which
    keeps the value short enough to read), its value in its display format (or ``value`` as given) and the change
    against the evaluated baseline ``base`` (percentage points for percentages).

    >>> k = kpi("gross_margin", {"gross_margin": 0.25}, {"gross_margin": 0.30})
    >>> k.title, k.value, k.change, k.color
    ('Gross margin', '25.0 %', '-5.0 pp vs baseline', 'normal')
    >>> k = kpi("facility_power_kw", {"facility_power_kw": 12345.6}, None)
    >>> k.title, k.value, k.change
    ('Facility power (provisioned) [kW]', '12,346', None)
    """
    spec = OUTPUTS.get(name) or (SPEED if name == SPEED.name else None)
    if spec is None:
        raise KeyError(name)
    numeric_unit = spec.fmt is _NUMBER and spec.unit not in ("-", "")
    shown = value if value is not None else number(result.get(name)) if numeric_unit else output(
        name, result.get(name), spec)
    if numeric_unit and title is None:
        title = f"{spec.label} [{spec.unit}]"
    change = delta(name, result.get(name), base.get(name), spec) if base is not None else None
    same = base is not None and result.get(name) == base.get(name)
    return Kpi(title or spec.label, shown, versus(change, same), same, "off" if same else delta_color(name, spec),
               f"{spec.description} [{spec.unit}]. Output `{name}`.")
