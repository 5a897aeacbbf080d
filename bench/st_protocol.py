"""The browser's side of Streamlit's websocket protocol, for bench/server_load.py: the messages a Streamlit page
sends (``BackMsg``) and what it keeps from the messages it receives (``ForwardMsg``), with the protobuf classes of
the installed ``streamlit.proto`` package.

Read from the installed Streamlit 1.67 (its server, ``streamlit/web/server/starlette/starlette_websocket.py``, and
its frontend bundle) rather than from documentation:

* The socket is ``ws://HOST:PORT/_stcore/stream`` with the subprotocols ``streamlit`` and an XSRF token (the
  frontend puts ``PLACEHOLDER_AUTH_TOKEN`` there when it has no token; a third entry would ask to resume a
  session). Every frame is a binary, serialized protobuf.
* Nothing runs until the page asks: it sends ``BackMsg.rerun_script``, a ``ClientState`` with the URL's query
  string, the page's script hash (empty on the first run: the server picks the default page), every widget state
  the page holds, the hashes of the messages it has cached and some browser facts (``context_info``).
* Each run answers with ``new_session``, ``navigation`` (the page's script hash, sent back on every later run),
  ``delta`` messages (one element each, at ``metadata.delta_path``), ``page_info_changed`` when the app writes the
  URL's query (the browser's URL changes, and the next rerun carries it) and ``script_finished``.
* A widget's state is keyed by the element's ``id`` (``$$ID-<hash>-<key>`` for a keyed widget) and typed by the
  element: a text input holds ``string_value`` (the text), a selectbox ``string_value`` (the shown option), pills
  ``string_array_value``, a checkbox ``bool_value``, a number input ``double_value`` or ``int_value``. The page
  seeds each widget's state from its element (``value`` when ``set_value`` is true, else ``default``), sends all of
  them on every rerun (a widget the finished run did not draw is forgotten) and buttons only when clicked.
* Deltas the server marks ``cacheable`` are kept by hash; a later run may send a ``ref_hash`` to one the page
  listed as cached, and the page forgets a message not used for ``max_cached_message_age`` runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

STREAM_PATH = "/_stcore/stream"
SUBPROTOCOLS = ("streamlit", "PLACEHOLDER_AUTH_TOKEN")  # what the frontend offers when it holds no XSRF token
ERROR_ALERT = 1  # Alert.Format.ERROR
FINISHED_FOR_GOOD = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR)
TRIGGERS = {"button", "download_button", "chat_input", "menu_button", "page_link", "link_button"}


def widget_key(widget_id: str) -> str:
    """The user key of a keyed widget's id (``$$ID-<hash>-<key>``), else the id itself.

    >>> widget_key("$$ID-21805f119570480dbdb28c2cb443926e-electricity_usd_per_kwh")
    'electricity_usd_per_kwh'
    """
    parts = widget_id.split("-", 2)
    return parts[2] if widget_id.startswith("$$ID-") and len(parts) == 3 else widget_id


def string_state(widget_id: str, value: str | None) -> WidgetState:
    """A widget state holding text, as a text input or a selectbox sends it (no value when None)."""
    state = WidgetState(id=widget_id)
    if value is not None:
        state.string_value = value
    return state


def seeded_state(kind: str, element: Any, previous: WidgetState | None) -> WidgetState | None:
    """The state the page holds for a widget element just drawn: the element's value if the server set it, else
    what the page held, else the element's default; None for a trigger or a widget kind not modelled here."""
    if kind in TRIGGERS or not element.id:
        return None
    if previous is not None and not element.set_value:
        return previous
    if kind in ("text_input", "text_area"):
        return string_state(element.id, _text_value(element))
    if kind == "selectbox":
        return string_state(element.id, _selectbox_value(element))
    if kind == "checkbox":
        return WidgetState(id=element.id, bool_value=element.value if element.set_value else element.default)
    if kind == "button_group":
        return _button_group_state(element)
    if kind == "number_input":
        return _number_state(element)
    return None


def _text_value(element: Any) -> str | None:
    if element.set_value:
        return str(element.value) if element.HasField("value") else None
    return str(element.default) if element.HasField("default") else None


def _selectbox_value(element: Any) -> str | None:
    if element.set_value:
        return str(element.raw_value) if element.HasField("raw_value") else None
    if element.HasField("default") and 0 <= element.default < len(element.options):
        return str(element.options[element.default])
    return None


def _button_group_state(element: Any) -> WidgetState:
    state = WidgetState(id=element.id)
    values = (list(element.raw_values) if element.set_value
              else [element.options[i].content for i in element.default if 0 <= i < len(element.options)])
    state.string_array_value.data.extend(values)
    return state


def _number_state(element: Any) -> WidgetState:
    state = WidgetState(id=element.id)
    source = "value" if element.set_value else "default"
    if element.HasField(source):
        number = getattr(element, source)
        if element.data_type == element.INT:
            state.int_value = int(number)
        else:
            state.double_value = float(number)
    return state


@dataclass
class Seen:
    """What one received message changed: its type, the metrics it drew (label -> value text), an exception or
    error alert it drew, and whether it ended a run."""

    kind: str
    metrics: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    finished: bool = False


@dataclass
class Mirror:
    """What a browser tab keeps of its session: the page's script hash, the URL's query, every widget state and the
    cached messages; it builds the tab's rerun requests and reads the server's messages."""

    url: str = ""
    page_script_hash: str = ""
    query_string: str = ""
    widgets: dict[str, WidgetState] = field(default_factory=dict)
    drawn: set[str] = field(default_factory=set)  # widget ids drawn by the run under way
    unmodelled: set[str] = field(default_factory=set)  # widget kinds drawn whose state is not seeded here
    cache: dict[str, tuple[ForwardMsg, int]] = field(default_factory=dict)  # hash -> (message, run it was last used)
    max_cache_age: int = 2
    runs: int = 0
    session_id: str = ""

    def widget_id(self, key: str) -> str | None:
        """The id of the keyed widget ``key`` the page holds, if any."""
        return next((wid for wid in self.widgets if widget_key(wid) == key), None)

    def rerun(self, changes: Mapping[str, WidgetState] | None = None) -> bytes:
        """A serialized ``rerun_script`` request, as the page sends it after the given widget states changed."""
        self.widgets.update(changes or {})
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self.query_string
        state.page_script_hash = self.page_script_hash
        state.widget_states.widgets.extend(self.widgets.values())
        state.cached_message_hashes.extend(self.cache)
        info = state.context_info
        info.timezone, info.timezone_offset, info.locale = "UTC", 0, "en-US"
        info.url, info.is_embedded, info.color_scheme = self.url, False, "light"
        return msg.SerializeToString()

    def read(self, data: bytes) -> Seen:
        """Parse one received frame and keep what the page would keep from it."""
        msg = ForwardMsg()
        msg.ParseFromString(data)
        if msg.WhichOneof("type") == "ref_hash":
            cached = self.cache.get(msg.ref_hash)
            if cached is None:
                return Seen("ref_hash", error=f"ref_hash {msg.ref_hash} to a message not cached")
            resolved = ForwardMsg()
            resolved.CopyFrom(cached[0])
            resolved.metadata.CopyFrom(msg.metadata)
            self.cache[msg.ref_hash] = (cached[0], self.runs)
            msg = resolved
        if msg.metadata.cacheable and msg.hash:
            self.cache[msg.hash] = (msg, self.runs)
        return self._apply(msg)

    def _apply(self, msg: ForwardMsg) -> Seen:
        kind = msg.WhichOneof("type") or ""
        seen = Seen(kind)
        if kind == "new_session":
            self._run_started(msg)
        elif kind == "navigation" and msg.navigation.page_script_hash:
            self.page_script_hash = msg.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query_string = msg.page_info_changed.query_string
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            self._element(msg.delta.new_element, seen)
        elif kind == "script_finished":
            seen.finished = True
            if msg.script_finished in FINISHED_FOR_GOOD:
                self._run_finished()
        return seen

    def _run_started(self, msg: ForwardMsg) -> None:
        self.runs += 1
        self.drawn = set()
        self.session_id = msg.new_session.initialize.session_id or self.session_id
        if msg.new_session.config.max_cached_message_age > 0:
            self.max_cache_age = msg.new_session.config.max_cached_message_age
        if msg.new_session.page_script_hash and not self.page_script_hash:
            self.page_script_hash = msg.new_session.page_script_hash

    def _element(self, element: Element, seen: Seen) -> None:
        kind = element.WhichOneof("type") or ""
        body: Any = getattr(element, kind) if kind else None
        widget_id: str = getattr(body, "id", "") if body is not None else ""
        if kind == "metric":
            seen.metrics[element.metric.label] = element.metric.body
        elif kind == "exception":
            seen.error = f"exception {element.exception.type}: {element.exception.message[:200]}"
        elif kind == "alert" and element.alert.format == ERROR_ALERT:
            seen.error = f"error alert: {element.alert.body[:200]}"
        elif widget_id:
            state = seeded_state(kind, body, self.widgets.get(widget_id))
            if state is not None:
                self.widgets[widget_id] = state
                self.drawn.add(widget_id)
            elif kind not in TRIGGERS:
                self.unmodelled.add(kind)

    def _run_finished(self) -> None:
        """A run that ended for good: widgets it did not draw are forgotten, and so are stale cached messages."""
        self.widgets = {wid: state for wid, state in self.widgets.items() if wid in self.drawn}
        self.cache = {h: (m, run) for h, (m, run) in self.cache.items() if self.runs - run < self.max_cache_age}
