"""User text shown as plain text inside Markdown-rendering elements (``st.warning``, ``st.error``, ``st.caption``).

Scenario and baseline names, link parameter names and values, file names and column names come from users. They
are never interpreted as Markdown: inside an inline code span CommonMark renders every character literally (no
links, no images, no emphasis, no autolinks, no HTML), so each piece of user text goes into one.
"""

from __future__ import annotations

import re

MAX_CHARS = 300


def plain(text: object, max_chars: int = MAX_CHARS) -> str:
    """``text`` as a Markdown code span that renders literally, whatever it holds (backticks included).

    The fence is one backtick longer than the longest run of backticks inside (CommonMark 6.1); newlines become
    spaces (a code span is one line) and the text is cut at ``max_chars``.

    >>> plain("[x](https://evil.example)")
    '`[x](https://evil.example)`'
    >>> plain("a `b` c")
    '``a `b` c``'
    >>> plain("`edge")
    '`` `edge ``'
    >>> plain("")
    '` `'
    """
    s = str(text).replace("\r", " ").replace("\n", " ")
    if len(s) > max_chars:
        s = s[:max_chars] + "..."
    if not s.strip():
        return "` `"
    runs = [len(r) for r in re.findall(r"`+", s)]
    fence = "`" * (max(runs, default=0) + 1)
    if s.startswith("`") or s.endswith("`"):
        s = f" {s} "
    return f"{fence}{s}{fence}"
