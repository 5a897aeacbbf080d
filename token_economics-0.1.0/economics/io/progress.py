"""A terminal progress line for long evaluations: rows done, the share of the file read and the elapsed time,
redrawn in place on a terminal and silent otherwise.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import IO


def progress_text(rows: int, fraction: float | None, seconds: float) -> str:
    """One progress line: rows, rows/s, percent and time left (when the share of the file read is known).

    >>> progress_text(250_000, 0.25, 2.0)
    '[#####               ]  25%  250,000 rows  125,000 rows/s  ETA 6 s'
    >>> progress_text(1000, None, 0.0)
    '1,000 rows'
    """
    rate = rows / seconds if seconds > 0 else 0.0
    if fraction is None or seconds <= 0:
        return f"{rows:,} rows" + (f"  {rate:,.0f} rows/s" if rate else "")
    done = min(max(fraction, 0.0), 1.0)
    eta = seconds * (1 - done) / done if done > 0 else float("inf")
    bar = "#" * round(done * 20)
    left = f"ETA {eta:,.0f} s" if math.isfinite(eta) else "ETA -"
    return f"[{bar:<20}] {done:4.0%}  {rows:,} rows  {rate:,.0f} rows/s  {left}"


def terminal_progress(out: IO[str]) -> Callable[[int, float | None], None] | None:
    """A progress callback drawing one self-overwriting line on ``out`` when it is a terminal; None otherwise (a
    pipe or a file gets no progress, so logs stay clean).
    """
    if not (hasattr(out, "isatty") and out.isatty()):
        return None
    start = time.monotonic()

    def show(rows: int, fraction: float | None) -> None:
        out.write("\r" + progress_text(rows, fraction, time.monotonic() - start) + "\x1b[K")
        out.flush()

    return show


def end_progress(out: IO[str]) -> None:
    """Finish a progress line (a newline) when ``out`` is a terminal."""
    if hasattr(out, "isatty") and out.isatty():
        out.write("\n")
