"""Where a catalog figure comes from, as a link a reader can open.

Every row of data/*.csv has a ``source`` text that names the document and carries its URL (or, for an estimate,
says how it was derived). These pure functions pull the URL out of that text so the Data page can show it as a
link and the tests can check that every row has one.
"""

from __future__ import annotations

import re

import pandas as pd

Table = pd.DataFrame
"""A catalog table (the UI imports this name instead of pandas)."""

URL_PATTERN = re.compile(r"https?://[^\s;()<>\"'\[\]{}]+")
"""An http(s) URL inside free text: runs to the first space, semicolon, bracket or quote."""


def source_urls(text: str) -> list[str]:
    """Every http(s) URL in ``text``, in order, without trailing punctuation (``.`` ``,`` ``:``).

    Special cases: no URL gives ``[]``; a comma inside a URL is kept (``/h100,but-...``), one at its end is not.
    Reference: RFC 3986 (URI syntax), restricted to the characters our source texts use.

    >>> source_urls("NVIDIA H100 datasheet https://www.nvidia.com/en-us/data-center/h100/, read 2026-11")
    ['https://www.nvidia.com/en-us/data-center/h100/']
    >>> source_urls("press (https://a.example/x ; https://b.example/y).")
    ['https://a.example/x', 'https://b.example/y']
    >>> source_urls("own estimate")
    []
    """
    return [m.group(0).rstrip(".,:") for m in URL_PATTERN.finditer(text or "")]


def first_url(text: str) -> str:
    """The first URL in ``text``, or ``""`` when there is none (see :func:`source_urls`).

    >>> first_url("Verda blog https://verda.com/blog/gb300-nvl72-architecture")
    'https://verda.com/blog/gb300-nvl72-architecture'
    >>> first_url("derived: 1.2 kW x 72")
    ''
    """
    urls = source_urls(text)
    return urls[0] if urls else ""


def with_source_links(table: pd.DataFrame, column: str = "source") -> pd.DataFrame:
    """A copy of ``table`` with a ``link`` column: the first URL of each row's ``column`` text ("" if none).

    >>> with_source_links(pd.DataFrame({"source": ["x https://a.example/p", "own estimate"]}))["link"].tolist()
    ['https://a.example/p', '']
    """
    out = table.copy()
    if column in out.columns:
        out["link"] = out[column].astype(str).map(first_url)
    return out
