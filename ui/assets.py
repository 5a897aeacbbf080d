"""Streamlit's page, told which of its frontend's pieces the first page draws (issue #43, the cold start).

Streamlit's frontend loads the code of each kind of element (a KPI, a text box, a select box...) the first time a run
sends one: the browser only then fetches that piece of JavaScript and the pieces it imports, compiles them and draws.
On a cold start that came after the Cost page's first KPI had arrived (its run done): 37 small files, so the KPI
waited for them, while from the page's load to the KPI's arrival the browser sat idle waiting for the server's first
run. :class:`FirstPageChunks` adds to Streamlit's page a short script that, once the page has loaded, names those
pieces as ``<link rel="modulepreload">``, so the browser fetches and compiles them while the first run is under way.
Once loaded, not before: as plain links in the page's head they took 6-connection slots ahead of the frontend's own
requests and the websocket opened 0.3-0.8 s later at load 15-18 (docs/speed.md). Nothing else about the page
changes, and a piece the page never draws is never run.

The same middleware adds :data:`STILL_STYLE`, a style sheet that keeps Streamlit's marking of a running page but
draws it without motion: the previous run's output still dims 0.5 s into a run (Streamlit's own delay, so a short
run never flickers) but in one step instead of a 1 s fade, and the spinner and the loading placeholders stand still.
A fade restyles every dimmed element each frame: a Plan edit's renderer CPU before its KPI was 0.79x (median of 5
pairs at load 4-10) and an edit's whole page settled in 0.52-0.77x the time on Cost, Fleet and Throughput; switches,
where nothing fades, are unchanged (docs/speed.md, the ``switch2`` entry).

The pieces are Streamlit's own files (content-hashed names, under its static folder), found by the name of the
element's component (:data:`FIRST_ELEMENTS`) and followed through their static imports, so a Streamlit upgrade that
renames the hashes needs no change here; a name that no longer matches a file names nothing.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable, MutableMapping
from pathlib import Path
from typing import Any

import streamlit

STATIC_JS = Path(streamlit.__file__).parent / "static" / "static" / "js"
"""Streamlit's frontend code, as its server serves it under ``./static/js/``."""
FIRST_ELEMENTS = ("Metric", "TextInput", "Selectbox", "ButtonGroup", "Button")
"""The kinds of element the Cost page sends with its KPIs and its sidebar (``st.metric``, ``st.text_input``,
``st.selectbox``, ``st.pills``/``st.segmented_control`` and ``st.button``), as Streamlit's frontend names their
code; headings, captions, notes and columns are in its main file."""
_IMPORT = re.compile(r'(?:\bfrom|\bimport)\s*"\./([\w.$-]+\.js)"')
_HEAD_END = b"</head>"

STILL_STYLE = (
    b"<style>"
    # the previous run's elements, marked stale by Streamlit (an element container's data-stale; an expander's header
    # and border have no mark, so theirs hold only while a run is under way): Streamlit's delay, no fade
    b'[data-stale="true"],[data-test-script-state="running"] [data-testid="stExpander"] :is(details,summary)'
    b"{transition-duration:0s!important}"
    # st.spinner's icon (its text says what runs) and the placeholders of elements whose code is loading
    b'[data-testid="stSpinnerIcon"],[data-testid="stSkeleton"],[data-testid="stAppSkeleton"],'
    b'[data-testid="stAppSkeleton"] *{animation:none!important}'
    b"</style>\n"
)
"""Streamlit's page's style for a running page without motion: stale output dims at once, indicators stand still.
Selected by Streamlit's test ids and marks (``data-stale``, ``data-test-script-state``), not by its generated class
names, which change with each build."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]


STREAMLIT_PAGE = STATIC_JS.parent.parent / "index.html"
"""The page Streamlit's server answers at ``/`` and at every page's path."""


def _imports(name: str) -> list[str]:
    """The files a piece of Streamlit's frontend imports statically (``import ... from "./x.js"``)."""
    return _IMPORT.findall((STATIC_JS / name).read_text(encoding="utf-8"))


def _closure(names: Iterable[str], known: set[str]) -> list[str]:
    """These files and every file they import, directly or not, in the order first reached; not followed into
    ``known`` files (the page's own, whose imports the page names already)."""
    seen: dict[str, None] = {}
    todo = list(names)
    while todo:
        name = todo.pop(0)
        if name not in seen and name not in known and (STATIC_JS / name).is_file():
            seen[name] = None
            todo += _imports(name)
    return list(seen)


def element_files(elements: Iterable[str] = FIRST_ELEMENTS) -> list[str]:
    """The file of each named element's code (``Metric.<hash>.js``), then all they import that Streamlit's page does
    not name already (the page names its own code and every file that imports, as ``modulepreload`` links).

    Parameters
    ----------
    elements
        Names of element components as Streamlit's frontend names their files (:data:`FIRST_ELEMENTS`).

    Returns
    -------
    list[str]
        File names under :data:`STATIC_JS`, each once, the elements' own first.

    Examples
    --------
    >>> files = element_files(["Metric"])
    >>> files[0].startswith("Metric.") and len(files) > 1
    True
    """
    own = [path.name for element in elements for path in sorted(STATIC_JS.glob(f"{element}.*.js"))
           if re.fullmatch(rf"{element}\.[\w-]+\.js", path.name)]
    named = set(re.findall(r'\./static/js/([\w.$-]+\.js)"', STREAMLIT_PAGE.read_text(encoding="utf-8")))
    return _closure(own, named)


def preload_script(files: Iterable[str]) -> bytes:
    """The page's script that, once the page has loaded, adds a ``modulepreload`` link for each file (names under
    ``./static/js/``, relative as the page's own links are, so they hold under a base URL path).

    Parameters
    ----------
    files
        File names under :data:`STATIC_JS` (:func:`element_files`).

    Returns
    -------
    bytes
        One ``<script>`` element and a line break, ASCII.

    Examples
    --------
    >>> script = preload_script(["Metric.x1.js", "a.y2.js"])
    >>> script.startswith(b'<script>addEventListener("load",') and b'["Metric.x1.js","a.y2.js"]' in script
    True
    """
    names = json.dumps(list(files), separators=(",", ":"))
    return (f'<script>addEventListener("load",()=>{{for(const f of {names}){{const l=document.createElement("link");'
            f'l.rel="modulepreload";l.crossOrigin="";l.href="./static/js/"+f;document.head.append(l)}}}})</script>\n'
            ).encode()


def with_script(page: bytes, script: bytes) -> bytes:
    """Streamlit's page with ``script`` before ``</head>``; the page unchanged if it has no head.

    Parameters
    ----------
    page
        The HTML page as served.
    script
        What to add (:func:`preload_script`).

    Returns
    -------
    bytes
        The page with the script at the end of its head.

    Examples
    --------
    >>> with_script(b"<html><head><title>t</title></head></html>", b"<script></script>")
    b'<html><head><title>t</title><script></script></head></html>'
    """
    at = page.find(_HEAD_END)
    return page if at < 0 else page[:at] + script + page[at:]


class FirstPageChunks:
    """ASGI middleware (``st.App(middleware=...)``): Streamlit's HTML page (``/`` and every page's path) answered
    :func:`with_script` with :func:`preload_script` of :func:`element_files` and :data:`STILL_STYLE`; every other
    answer passed through untouched (a ``HEAD`` request's headers too: the length they give is the file's).

    Parameters
    ----------
    app
        The rest of the server (Streamlit's own middleware and routes).
    """

    def __init__(self, app: Any) -> None:
        # Built with the server's app, as it starts and before its lifespan's preload (ui/memory.py) takes the
        # interpreter: found at the first page's request, the files' reading held that answer up 0.3 s at load 18.
        self.app, self.script = app, preload_script(element_files()) + STILL_STYLE

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        held: list[Message] = []
        body: list[bytes] = []

        async def hold_html(message: Message) -> None:
            if message["type"] == "http.response.start":
                if not _is_html(message) or message["status"] != 200:
                    await send(message)
                    return
                held.append(message)
                return
            if not held:
                await send(message)
                return
            body.append(message.get("body", b""))
            if not message.get("more_body", False):
                await _send_page(send, held[0], _added(held[0], b"".join(body), self.script))

        await self.app(scope, receive, hold_html)


def _is_html(start: Message) -> bool:
    """Whether a response's start says its body is an HTML page."""
    return any(name.lower() == b"content-type" and value.startswith(b"text/html") for name, value in start["headers"])


def _added(start: Message, page: bytes, script: bytes) -> bytes:
    """:func:`with_script` on the page as sent: a gzip-encoded page (Streamlit compresses it at every page's path but
    ``/`` when the browser accepts gzip, which every browser does) is opened, added to and compressed again; a page
    in another encoding is left as it is."""
    encoding = next((value for name, value in start["headers"] if name.lower() == b"content-encoding"), b"identity")
    if encoding == b"identity":
        return with_script(page, script)
    if encoding == b"gzip":
        return gzip.compress(with_script(gzip.decompress(page), script), mtime=0)
    return page


async def _send_page(send: Any, start: Message, page: bytes) -> None:
    """The held response's start with the new length (and no validators of the file's bytes), then the page."""
    headers = [(name, value) for name, value in start["headers"]
               if name.lower() not in (b"content-length", b"etag", b"last-modified")]
    await send({**start, "headers": [*headers, (b"content-length", str(len(page)).encode())]})
    await send({"type": "http.response.body", "body": page, "more_body": False})
