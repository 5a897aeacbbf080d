"""The board report typeset: charts rendered to SVG by Vega-Lite (vl-convert), the document by Typst.

Both are embedded engines with their own fonts (Typst's are compiled in, and system fonts are ignored), so a report
builds the same on any machine, with no browser. Typst's own fonts (Libertinus Serif, New Computer Modern, DejaVu
Sans Mono) cover Latin, Greek and Cyrillic only: a name in Chinese, Japanese, Korean, Arabic, Devanagari, Thai or
with an emoji printed as empty boxes. The fonts of :data:`FONT_DIRS` (Debian's Noto, Noto CJK, Noto Color Emoji and
GNU Unifont, installed by ``make fonts``) are added, never the rest of the system's, and Typst embeds the glyphs it
uses in the PDF: the file reads the same anywhere. The content reaches Typst as one JSON document through
``sys.inputs`` and is placed by the template as text, never read as markup: a scenario named ``#import "x": *``
prints as those characters; its bidirectional overrides and isolates are removed (a right-to-left override would
print the rest of a name reversed).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
from collections.abc import Mapping
from importlib import resources
from typing import Any

from economics.schema.values import without_bidi_controls

TEMPLATE = "template.typ"
"""The Typst template, package data of :mod:`economics.report`."""
CHART_WIDTH, CHART_HEIGHT = 250, 120
"""A chart's plot area in CSS pixels (Vega-Lite's unit); the template scales it to half the page's width."""
MAX_TEXT_CHARS = 200_000
"""A derivation or a note longer than this is cut (the report evaluates one scenario: it never is)."""
FONT_DIRS = ("/usr/share/fonts/truetype/noto", "/usr/share/fonts/opentype/noto", "/usr/share/fonts/opentype/unifont")
"""Where Debian's fonts-noto-core (the world's scripts), fonts-noto-cjk, fonts-noto-color-emoji and fonts-unifont
(every other character of the Basic Multilingual Plane, the last resort) put their files. Typst takes a glyph from
the first of its fonts that has it; ``TOKEN_ECONOMICS_REPORT_FONTS`` (folders separated by ``:``) replaces these."""
FONTS_VARIABLE = "TOKEN_ECONOMICS_REPORT_FONTS"


class ReportError(RuntimeError):
    """The report could not be typeset (the message says why): a fault of ours, not of the input."""


def _plain(value: Any) -> Any:
    """A value as JSON has it: numpy numbers as floats and ints, NaN and infinities as null."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str):
        return without_bidi_controls(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return None if str(value) in ("<NA>", "NaT", "nan") else str(value)


def _records(rows: Any) -> list[dict[str, Any]]:
    """A dataset (a DataFrame or a list of records) as JSON-ready records."""
    if hasattr(rows, "to_dict"):
        rows = rows.to_dict(orient="records")
    return [_plain(r) for r in rows]


def svg(spec: Mapping[str, Any], datasets: Mapping[str, Any] | None = None, width: int = CHART_WIDTH,
        height: int = CHART_HEIGHT) -> str:
    """One chart (a spec of :mod:`economics.report.charts`, with its datasets and any given here) as SVG.

    Parameters
    ----------
    spec
        The Vega-Lite spec the app draws.
    datasets
        Named datasets to add to the spec's own.
    width, height
        The plot area in CSS pixels.

    Returns
    -------
    str
        The SVG document.
    """
    import vl_convert  # the report extra, imported when a report is made (the command line imports this module)

    data = {**spec.get("datasets", {}), **(datasets or {})}
    full = {**spec, "datasets": {k: _records(v) for k, v in data.items()}, "width": width, "height": height,
            "config": {"font": "Libertinus Serif", "view": {"stroke": None}, "legend": {"orient": "bottom"}}}
    return str(vl_convert.vegalite_to_svg(full))


def font_dirs() -> list[str]:
    """The folders of :data:`FONT_DIRS` (or of ``TOKEN_ECONOMICS_REPORT_FONTS``) that exist here."""
    given = os.environ.get(FONTS_VARIABLE)
    return [d for d in (given.split(os.pathsep) if given else FONT_DIRS) if d and os.path.isdir(d)]


def _text(value: str) -> str:
    return value if len(value) <= MAX_TEXT_CHARS else value[:MAX_TEXT_CHARS] + "…"


def pdf(content: Mapping[str, Any], when: dt.datetime) -> bytes:
    """The report as PDF bytes from its content (title, KPIs, charts as SVG, assumptions, tornado, link,
    derivation; see :func:`economics.report.build.content`), dated ``when`` (the document's metadata too, so the
    same content and date give the same bytes).

    Raises
    ------
    ReportError
        Typst refused the document.
    """
    import typst  # the report extra, as vl_convert above

    data = _plain({**content, "derivation": _text(str(content.get("derivation", "")))})
    template = resources.files("economics.report").joinpath(TEMPLATE).read_bytes()
    try:
        # the stub types the source (bytes here) and the font folders (str) with one type variable: a stub's limit
        return bytes(typst.compile(template, sys_inputs={"report": json.dumps(data, allow_nan=False)},  # type: ignore[misc]
                                   ignore_system_fonts=True, font_paths=font_dirs(), timestamp=int(when.timestamp())))
    except (RuntimeError, ValueError) as exc:  # the compiler's diagnostics, as one message
        raise ReportError(f"the report could not be typeset: {str(exc)[:500]}") from None
