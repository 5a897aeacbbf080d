"""User text shown as plain text inside Markdown-rendering elements (``st.warning``, ``st.error``, ``st.caption``).

Scenario and baseline names, link parameter names and values, file names and column names come from users. They
are never interpreted as Markdown: inside an inline code span CommonMark renders every character literally (no
links, no images, no emphasis, no autolinks, no HTML), so each piece of user text goes into one. A table of user
text for ``st.html`` (:func:`html_table`) escapes every cell instead: HTML that holds only text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Mapping, Sequence

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


def headed(title: str, *notes: str, level: int = 3) -> str:
    r"""A heading and the caption(s) under it as the text of one Markdown element: the heading at ``level`` (1 as
    ``st.title`` draws it, 2 ``st.header``, 3 ``st.subheader``) and each note a paragraph of small grey type, as
    ``st.caption`` writes it. The browser mounts and redraws every element on each switch and each run, and a
    heading element costs its renderer about three times a Markdown heading (docs/speed.md, ``decodelean`` and
    ``sidebar``). For the app's own words: user text goes in a caption of its own (:func:`plain`), as a code span
    inside the small-type directive is not guaranteed to stay literal; square brackets are escaped, as they would
    close the directive.

    >>> headed("Every other input", "Pick a section [any].")
    '### Every other input\n\n:small[:gray[Pick a section \\[any\\].]]'
    >>> headed("Cost per token", level=1)
    '# Cost per token'
    """
    lines = ["#" * level + " " + title]
    lines.extend(":small[:gray[" + note.replace("[", "\\[").replace("]", "\\]") + "]]" for note in notes)
    return "\n\n".join(lines)


def html_table(rows: Sequence[Mapping[str, object]], columns: Sequence[str],
               titles: Mapping[str, str] | None = None, figures: Collection[str] | None = None,
               wide: bool = False) -> str:
    """The rows as an HTML table for ``st.html``, every header and cell escaped so it shows as plain text.

    ``st.html`` draws a table without loading the interactive data grid ``st.dataframe`` needs (about 1.9 MB of
    script for each page load), which a list of names and dates does not need. Empty cells (None) stay empty. A
    column's header is its title (``titles``) or its name. Given ``figures`` (a result table), the table is laid out
    like a grid (:data:`TABLE_STYLE`: the page's width, a line under each row) and the ``figures`` columns are
    right-aligned (class ``figure``), so digits line up. ``wide`` (a result table of many columns): each cell on one
    line, a long one cut with an ellipsis and whole in its tooltip, and the table scrolls sideways, as a grid does
    (:data:`WIDE_STYLE`), rather than wrapping every cell into a tall narrow column.

    >>> html_table([{"name": "<b>q3</b>", "note": None}], ["name", "note"])
    '<table><thead><tr><th>name</th><th>note</th></tr></thead><tbody><tr><td>&lt;b&gt;q3&lt;/b&gt;</td><td></td></tr></tbody></table>'
    >>> html_table([{"n": 2}], ["n"], {"n": "Racks"}, {"n"})  # doctest: +ELLIPSIS
    '<style>...</style><table class="static-table"><thead><tr><th class="figure">Racks</th>...<td class="figure">2...'
    >>> html_table([{"n": "<i>" * 9}], ["n"], figures=(), wide=True)  # doctest: +ELLIPSIS
    '<style>...<div class="static-scroll"><table class="static-table wide">...<td title="&lt;i&gt;...<div>&lt;i...'
    """
    titles = titles or {}
    at = {c: ' class="figure"' if figures and c in figures else "" for c in columns}
    head = "".join(f"<th{at[c]}>{html.escape(titles.get(c, c))}</th>" for c in columns)
    body = "".join("<tr>" + "".join(_td(at[c], _cell(row.get(c)), wide) for c in columns) + "</tr>"
                   for row in rows)
    table = f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    if figures is None:
        return f"<table>{table}"
    if wide:
        return f'{TABLE_STYLE}{WIDE_STYLE}<div class="static-scroll"><table class="static-table wide">{table}</div>'
    return f'{TABLE_STYLE}<table class="static-table">{table}'


TABLE_STYLE = ("<style>table.static-table { width: 100%; border-collapse: collapse; font-size: 0.875rem; } "
               "table.static-table th, table.static-table td { text-align: left; padding: 0.3rem 0.5rem; "
               "border-bottom: 1px solid rgba(49, 51, 63, 0.1); vertical-align: top; } "
               "table.static-table th { font-weight: 400; color: rgba(49, 51, 63, 0.6); } "
               "table.static-table .figure { text-align: right; white-space: nowrap; }</style>")
"""A result table as the grid drew it: the page's width, small type, a line under each row, grey headers, figures
right-aligned on one line."""


WIDE_STYLE = ("<style>div.static-scroll { overflow-x: auto; } table.static-table.wide td { white-space: nowrap; } "
              "table.static-table.wide td > div { max-width: 16rem; overflow: hidden; text-overflow: ellipsis; }"
              "</style>")
"""A wide result table as the grid draws it: every cell on one line, a long one cut (its tooltip holds it whole),
the table scrolling sideways in the page's width."""


CUT_CHARS = 40
"""In a wide table, a cell of more characters is cut to :data:`WIDE_STYLE`'s width, whole in its tooltip."""


def _td(attrs: str, text: str, wide: bool) -> str:
    """A cell (its text already escaped); in a wide table, a long one cut and whole in its tooltip."""
    if wide and len(text) > CUT_CHARS:
        return f'<td{attrs} title="{text}"><div>{text}</div></td>'
    return f"<td{attrs}>{text}</td>"


def _cell(value: object) -> str:
    return "" if value is None else html.escape(str(value).replace("\r", " ").replace("\n", " "))
