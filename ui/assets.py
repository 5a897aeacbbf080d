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
The same script names the pieces the other pages draw on their first view and the Cost page does not
(:data:`LATER_ELEMENTS`) once the first run has finished and the browser is idle: a first switch to the Plan page
fetched them during its run (up to 7 files, while the server's run held the interpreter), and drew its file uploader,
selections and download buttons only once they had come (docs/speed.md, the ``switch9`` entry).

The same middleware adds :data:`STILL_STYLE`, a style sheet that keeps Streamlit's marking of a running page but
draws it without motion: the previous run's output still dims 0.5 s into a run (Streamlit's own delay, so a short
run never flickers) but in one step instead of a 1 s fade, and the spinner and the loading placeholders stand still.
A fade restyles every dimmed element each frame: a Plan edit's renderer CPU before its KPI was 0.79x (median of 5
pairs at load 4-10) and an edit's whole page settled in 0.52-0.77x the time on Cost, Fleet and Throughput; switches,
where nothing fades, are unchanged (docs/speed.md, the ``switch2`` entry). The step is not a transition either (one
of no length still started per element at every run's start, and the browser painted about twice as much before an
edit's KPI: the ``pages7`` entry).
Its last rule wraps a KPI's description line (an estimate's range: :func:`ui.common.metric`) within the KPI's width
instead of cutting it to one line.

:class:`HeldPageFiles` answers the files Streamlit's page names, and those pieces, from memory, with the headers and
bytes Streamlit's server sends: its own answers hand the interpreter's lock to a worker thread about ten times a file,
each hand-over waiting while the server's preload of the first page (ui/memory.py) holds it, so the page's 62 files
took CPU and time from the preload the first KPI waits for (docs/speed.md, the ``cold3`` entry).

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
from starlette.responses import FileResponse
from streamlit import config
from streamlit.web import bootstrap
from streamlit.web.server.starlette.starlette_server_config import (
    SESSION_COOKIE_NAME,
    STATIC_ASSET_CACHE_MAX_AGE_SECONDS,
)

STATIC_JS = Path(streamlit.__file__).parent / "static" / "static" / "js"
"""Streamlit's frontend code, as its server serves it under ``./static/js/``."""
FIRST_ELEMENTS = ("Metric", "TextInput", "Selectbox", "ButtonGroup", "Button")
"""The kinds of element the Cost page sends with its KPIs and its sidebar (``st.metric``, ``st.text_input``,
``st.selectbox``, ``st.pills``/``st.segmented_control`` and ``st.button``), as Streamlit's frontend names their
code; headings, captions, notes and columns are in its main file."""
LATER_ELEMENTS = ("NumberInput", "Multiselect", "FileUploader", "DownloadButton")
"""The kinds of element the other pages draw on their first view that the Cost page does not (``st.number_input``:
the Decode page's draws and seed, the Plan page's settings; ``st.multiselect``: Fleet's and Plan's accelerators;
``st.file_uploader`` and ``st.download_button``: Plan's), loaded once the first run has finished. The Data page's
data grid is not among them: 1.5 MB of script for one page, whose switch meets its target without it."""
_IMPORT = re.compile(r'(?:\bfrom|\bimport)\s*"\./([\w.$-]+\.js)"')
_PAGE_FILE = re.compile(r'"\./(static/[\w./$-]+\.(?:js|css|woff2))"')
_HEAD_END = b"</head>"

STILL_STYLE = (
    b"<style>"
    # the previous run's elements, marked stale by Streamlit (an element container's data-stale): dimmed to Streamlit's
    # stale opacity (its theme's opacities.stale, 0.33) 0.5 s into a run (Streamlit's delay), in one step and with no
    # CSS transition at all: a transition of no length waiting out that delay, one per element, still about doubled
    # the browser's painting before an edit's KPI (docs/speed.md, pages7). The delay is an animation of a custom
    # property, which the browser runs on the page's own thread and which changes nothing on screen until it ends.
    # While an element is shown full screen (Streamlit then hides the page's scroll bar on the body, and dims nothing)
    # the rule after it holds instead: Streamlit's own opacity, its delay, no fade
    b"@keyframes st-stale{to{--st-stale:.33}}"
    b'body:not([style*="overflow: hidden"]) [data-stale="true"]{transition:none!important;'
    b"opacity:var(--st-stale,1)!important;animation:st-stale 0s .5s forwards}"
    # an expander's header and border have no mark, so theirs hold only while a run is under way
    b'[data-stale="true"],[data-test-script-state="running"] [data-testid="stExpander"] :is(details,summary)'
    b"{transition-duration:0s!important}"
    # st.spinner's icon (its text says what runs) and the placeholders of elements whose code is loading
    b'[data-testid="stSpinnerIcon"],[data-testid="stSkeleton"],[data-testid="stAppSkeleton"],'
    b'[data-testid="stAppSkeleton"] *{animation:none!important}'
    # a KPI's description line (an estimate's range, ui.common.metric) on a line of its own under the value and the
    # change, wrapped within the KPI's width as the caption under it was (not cut to one line), and sized out of the
    # KPI's own width (contain), so the row keeps its layout
    b':has(>[data-testid="stMetricDeltaDescription"]){flex-wrap:wrap}'
    b'[data-testid="stMetricDeltaDescription"]{contain:inline-size;flex:1 0 100%}'
    b'[data-testid="stMetricDeltaDescription"],[data-testid="stMetricDeltaDescription"] *'
    b"{white-space:normal!important;overflow:visible!important;text-overflow:clip!important}"
    b"</style>\n"
)
"""Streamlit's page's style for a running page without motion: stale output dims at once, indicators stand still;
and a KPI's description line wraps within the KPI's width (Streamlit cuts it to one line with an ellipsis: the full
text only on hover). Selected by Streamlit's test ids and marks (``data-stale``, ``data-test-script-state``), not by
its generated class names, which change with each build."""

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


def element_files(elements: Iterable[str] = FIRST_ELEMENTS, loaded: Iterable[str] = ()) -> list[str]:
    """The file of each named element's code (``Metric.<hash>.js``), then all they import that Streamlit's page does
    not name already (the page names its own code and every file that imports, as ``modulepreload`` links), nor
    ``loaded``.

    Parameters
    ----------
    elements
        Names of element components as Streamlit's frontend names their files (:data:`FIRST_ELEMENTS`).
    loaded
        Files named already (the first page's, for :data:`LATER_ELEMENTS`), not listed again.

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
    return _closure(own, named | set(loaded))


def later_files() -> list[str]:
    """:func:`element_files` of :data:`LATER_ELEMENTS`, without the first page's.

    Examples
    --------
    >>> later = later_files()
    >>> later[0].startswith("NumberInput.") and not set(later) & set(element_files())
    True
    """
    return element_files(LATER_ELEMENTS, element_files())


def preload_script(files: Iterable[str], later: Iterable[str] = ()) -> bytes:
    """The page's script that, once the page has loaded, adds a ``modulepreload`` link for each of ``files`` (names
    under ``./static/js/``, relative as the page's own links are, so they hold under a base URL path); and for each of
    ``later`` once the app's first run has finished (its root's ``data-test-script-state`` going from ``running`` to
    ``notRunning``) and the browser is idle (``requestIdleCallback``, where the browser has it).

    Parameters
    ----------
    files
        File names under :data:`STATIC_JS` (:func:`element_files`).
    later
        File names under :data:`STATIC_JS` (:func:`later_files`).

    Returns
    -------
    bytes
        One ``<script>`` element and a line break, ASCII.

    Examples
    --------
    >>> script = preload_script(["Metric.x1.js", "a.y2.js"], ["NumberInput.z3.js"])
    >>> script.startswith(b'<script>addEventListener("load",') and b'["Metric.x1.js","a.y2.js"]' in script
    True
    >>> b'["NumberInput.z3.js"]' in script and b"requestIdleCallback" in script
    True
    """
    names, after = (json.dumps(list(f), separators=(",", ":")) for f in (files, later))
    return ('<script>addEventListener("load",()=>{const add=fs=>{for(const f of fs){const l=document.createElement('
            '"link");l.rel="modulepreload";l.crossOrigin="";l.href="./static/js/"+f;document.head.append(l)}};'
            f'add({names});const later={after};if(!later.length)return;'
            'const idle=window.requestIdleCallback||(f=>setTimeout(f,1));'
            'const o=new MutationObserver(rs=>{if(rs.some(r=>r.oldValue==="running"&&r.target.getAttribute('
            'r.attributeName)==="notRunning")){o.disconnect();idle(()=>add(later))}});o.observe(document.body,'
            '{subtree:true,attributes:true,attributeOldValue:true,attributeFilter:["data-test-script-state"]})})'
            '</script>\n').encode()


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
        self.app, self.script = app, preload_script(element_files(), later_files()) + STILL_STYLE

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


IMMUTABLE = f"public, immutable, max-age={STATIC_ASSET_CACHE_MAX_AGE_SECONDS}"
"""The ``Cache-Control`` Streamlit's server gives every file of its static folder but its HTML page and manifest (their
names carry a hash of their content)."""
Header = tuple[bytes, bytes]
_NOT_PLAIN = (b"range", b"if-range", b"if-none-match", b"if-modified-since")


def page_files() -> list[str]:
    """The files Streamlit's page names under its static folder (its code, style sheet and font), then the first
    page's element code (:func:`element_files`): what a browser fetches before and during a cold start's first run;
    then the other pages' (:func:`later_files`), fetched once that run has finished, while the server may be making
    the page's studies ahead (ui/ahead.py).

    Returns
    -------
    list[str]
        Paths under Streamlit's static folder (``static/js/...``), each once, the page's own first.

    Examples
    --------
    >>> files = page_files()
    >>> files[0].startswith("static/") and f"static/js/{element_files()[0]}" in files
    True
    """
    named = _PAGE_FILE.findall(STREAMLIT_PAGE.read_text(encoding="utf-8"))
    return list(dict.fromkeys([*named, *(f"static/js/{name}" for name in [*element_files(), *later_files()])]))


def held_answer(path: Path) -> tuple[list[Header], bytes]:
    """A static file's answer to a plain GET as Streamlit's server gives it: Starlette's file response headers (type,
    length, last modified, entity tag, byte ranges accepted) with Streamlit's ``Cache-Control`` for a content-hashed
    file (:data:`IMMUTABLE`), and the file's bytes.

    Parameters
    ----------
    path
        A file under Streamlit's static folder, not its HTML page nor its manifest.

    Returns
    -------
    tuple[list[Header], bytes]
        The answer's headers (lower-case names, as ASGI sends them) and body.
    """
    response = FileResponse(path, stat_result=path.stat())
    response.headers["Cache-Control"] = IMMUTABLE  # as Streamlit's static files' handler sets it
    return list(response.raw_headers), path.read_bytes()


class HeldPageFiles:
    """ASGI middleware (``st.App(middleware=...)``): the files of :func:`page_files` answered from memory to a plain
    GET (:func:`_plain`), with the headers and bytes Streamlit's server sends (:func:`held_answer`); every other request
    passed through.

    Why (issue #43, the cold start): Streamlit's server answers a static file with Starlette's file response, which
    looks the file up, opens it, reads it in 64 kB pieces and closes it each on a worker thread, and listens for the
    client leaving on another task: about ten hand-overs of the interpreter's lock a file. On a cold start the page's
    62 files are asked for while the lifespan's preload (ui/memory.py) holds that lock with the first page's imports,
    so each hand-over waits for it and the files' CPU (0.18 s for the first fetch of the 62 on an idle server, 0.08 s
    once warm) is taken from the preload the first KPI waits for. From memory an answer is two messages on the event
    loop. The files are Streamlit's own, named by a hash of their content: they do not change while it runs.

    Parameters
    ----------
    app
        The rest of the server (Streamlit's own middleware and routes).
    """

    def __init__(self, app: Any) -> None:
        # Read as the server starts (2.5 MB, before the preload starts): found at the first request instead, a file's
        # read would wait for the preload's lock or block the event loop on a cold disk.
        # Streamlit registers the types of its files (a script as application/javascript) as its lifespan starts,
        # after the middleware is built: registered here first, so that the held answers carry the same.
        bootstrap._initialize_mimetypes()
        base = (config.get_option("server.baseUrlPath") or "").strip("/")
        prefix = f"/{base}" if base else ""
        folder = STREAMLIT_PAGE.parent
        self.app = app
        self.held = {f"{prefix}/{name}": held_answer(folder / name) for name in page_files()}

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        held = self.held.get(scope.get("path", "")) if _plain(scope) else None
        if held is None:
            await self.app(scope, receive, send)
            return
        headers, body = held
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})


def _plain(scope: Scope) -> bool:
    """Whether a request asks for a whole file as it is: an HTTP GET without a byte range or a condition (answered by
    Streamlit's server: a part, or 304 Not Modified) and without Streamlit's session cookie (whose middleware renews it
    on every answer)."""
    if scope["type"] != "http" or scope.get("method") != "GET":
        return False
    cookie = SESSION_COOKIE_NAME.encode()
    return not any(name in _NOT_PLAIN or (name == b"cookie" and cookie in value) for name, value in scope["headers"])
