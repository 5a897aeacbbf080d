r"""What the commands print: user text never reaches a terminal as control sequences.

One rule, one function (:func:`economics.schema.values.escape_for_terminal`): control characters and bidirectional
overrides are written as ``\xNN`` / ``\uNNNN`` (a line break stays one). Reports for people (``explain``, the
uncertainty and sweep summaries, the study text) are always escaped, wherever they go; data (CSV, JSON) written to
standard output is escaped when standard output is a terminal and kept exact when it is a file or a pipe, so a
saved table round-trips. Messages on standard error go through the CLI's ``say``, one escaped line each.
"""

from __future__ import annotations

import codecs
import sys
from typing import IO, Any

from economics.schema.values import escape_for_terminal


def is_terminal(stream: Any) -> bool:
    """Whether ``stream`` is a terminal (a stream without ``isatty`` is not)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def report(text: str, stream: IO[str] | None = None) -> None:
    """A report for people on ``stream`` (standard output by default), escaped."""
    (stream or sys.stdout).write(escape_for_terminal(text))


def data(text: str, stream: IO[str] | None = None) -> None:
    """Data (CSV, JSON) on ``stream`` (standard output by default): exact, or escaped on a terminal."""
    out = stream or sys.stdout
    out.write(escape_for_terminal(text) if is_terminal(out) else text)


class EscapingSink:
    """A binary stream over a terminal's byte stream: the UTF-8 text written is escaped on its way, decoded
    incrementally (a character split across two writes is escaped whole).
    """

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def write(self, data: bytes) -> int:
        """Escape and pass on ``data``; returns its length, as a binary stream does."""
        self.raw.write(escape_for_terminal(self.decoder.decode(bytes(data))).encode("utf-8"))
        return len(data)

    def flush(self) -> None:
        """Pass on what is pending (an unfinished character waits for its last bytes)."""
        self.raw.flush()

    def writable(self) -> bool:
        """A binary sink is writable."""
        return True

    @property
    def closed(self) -> bool:
        """Never closed by a writer: standard output outlives the command."""
        return False


def table_sink() -> IO[bytes] | None:
    """Standard output as a binary stream for a table writer: escaped when it is a terminal; None when standard
    output has no byte stream (the writer then writes into memory first).
    """
    raw = getattr(sys.stdout, "buffer", None)
    if raw is None:
        return None
    return EscapingSink(raw) if is_terminal(sys.stdout) else raw  # type: ignore[return-value]
