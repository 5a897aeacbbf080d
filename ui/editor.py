"""The scenario editor: every field of the working scenario, reachable on every page.

A page lists its key fields; they are drawn in the sidebar, and every other field is one click away in a grouped
section (Hardware, Facility and power, Finance, Workload and model, Demand, Prices). Labels, units, help and bounds
come from the scenario schema (:data:`economics.FIELDS`); catalog entries are shown by name with the id in the help;
an empty field is shown empty, with what empty means as the placeholder (the catalog figure and its confidence, "no
limit", "estimated"...), never as a 0.

Each widget's key is the field name. Just before a widget is drawn its key is set from the working scenario, and
its ``on_change`` callback parses the new value with the link's parser and writes it back (:mod:`ui.state`), so
the scenario, not the widget, holds the value.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Hashable, Sequence
from functools import cache
from typing import Any, NoReturn

import streamlit as st

from economics import FIELDS, catalog
from economics.schema.scenario import show_value
from economics.schema.values import FieldKind
from ui import state
from ui.text import headed, plain

SECTIONS: dict[str, tuple[str, ...]] = {
    "Hardware": ("scenario", "hardware", "disaggregation", "rent"),
    "Facility and power": ("facility", "carbon"),
    "Finance": ("finance",),
    "Workload and model": ("workload", "throughput", "sessions"),
    "Demand": ("demand",),
    "Prices": ("prices",),
}
SECTION_OF_FIELD = {"existing_accelerators": "Hardware", "new_accelerator": "Hardware",
                    "existing_book_value_usd": "Finance", "horizon_years": "Finance",
                    "residual_value_fraction": "Finance", "lease_rate_per_year": "Finance",
                    "rent_change_per_year": "Prices", "token_price_change_per_year": "Prices",
                    "demand_growth_per_year": "Demand", "fast_tier_min_tokens_per_s_per_user": "Prices",
                    "fast_tier_price_multiplier": "Prices", "name": "Hardware"}
LABELS = {  # where the schema's description does not make a form label
    "name": "Scenario name", "accelerator": "Accelerator", "ownership": "Ownership (own or rent)",
    "model": "Model", "precision": "Precision (weights and compute)", "kv_cache_precision": "KV-cache precision",
    "weight_precision": "Weight precision (empty = precision)",
    "compute_precision": "Compute precision (empty = precision)",
    "speculative_draft_tokens": "Speculative draft tokens per step [token]",
    "speculative_acceptance_rate": "Draft acceptance rate",
    "decode_accelerator": "Decode accelerator", "new_accelerator": "New-generation accelerator",
    "existing_accelerators": "Existing fleet [accelerator]", "accelerator_cooling": "Cooling the hardware needs",
    "decode_accelerator_cooling": "Cooling the decode hardware needs", "system_form": "System form",
    "facility_cooling": "Facility cooling", "pue": "PUE (facility power / IT power)",
    "fast_tier_price_multiplier": "Fast-tier price multiplier", "peak_to_average": "Peak / average load",
    "headroom": "Headroom on top of the peak", "idle_power_fraction": "Idle power share",
    "liquid_cooling_share": "Liquid-cooled share (hybrid facility)",
    "prefix_cache_hit_rate": "Prefix-cache hit rate", "cost_of_capital": "Cost of capital [1/year]",
    "memory_utilization": "Memory used for weights and KV cache", "rent_includes_energy": "Rent includes power",
    "round_to_whole_systems": "Buy whole systems", "allow_liquid_retrofit": "Allow a liquid-cooling retrofit",
    "rent_tier": "Rent tier", "electricity_tariff": "Electricity price by hour (tariff id or 24 prices)",
    "grid_region": "Grid region", "grid_carbon_by_hour": "Grid intensity by hour (24 values) [gCO2e/kWh]",
    "demand_profile": "Demand over the day (flat, diurnal or 24 loads)",
}
ID_FIELDS = {"accelerator": "accelerator", "decode_accelerator": "accelerator", "new_accelerator": "accelerator",
             "model": "model"}
CHOICE_WORDS = {"own": "own (capital, energy, facility, operations)", "rent": "rent (hourly rent)",
                "air_or_liquid": "air or liquid", "on_demand": "on demand",
                "reserved": "reserved (term, paid every hour)", "spot": "spot (interruptible)"}


def section(field: str) -> str:
    """The editor section a field belongs to.

    >>> section("pue"), section("horizon_years"), section("model")
    ('Facility and power', 'Finance', 'Workload and model')
    """
    if field in SECTION_OF_FIELD:
        return SECTION_OF_FIELD[field]
    return next(name for name, groups in SECTIONS.items() if FIELDS[field].group in groups)


def label(field: str) -> str:
    """The form label: the schema's, or a clearer one where the description does not make one."""
    return LABELS.get(field, FIELDS[field].label)


@cache
def _names(kind: str) -> dict[str, str]:
    table = catalog.models() if kind == "model" else catalog.accelerators()
    return {str(i): str(n) if isinstance(n, str) and n else str(i) for i, n in table["name"].items()}


def _ids(kind: str) -> list[str]:
    return list(catalog.models().index) if kind == "model" else catalog.accelerator_ids()


def help_text(field: str, value: Any = None) -> str:
    """Description, unit, bounds and the field's name (the CSV column and link parameter); the catalog id."""
    spec = FIELDS[field]
    parts = [spec.description.rstrip(".") + "."]
    if spec.unit and spec.unit != "-":
        parts.append(f"Unit: {spec.unit}.")
    if spec.bounds_text():
        parts.append(f"Allowed: {spec.bounds_text()}.")
    if field in ID_FIELDS and value:
        parts.append(f"Catalog id: `{value}`.")
    if spec.default_source:
        parts.append(f"Default from data/{spec.default_source}.")
    parts.append(f"Field `{field}`.")
    return " ".join(parts)


def catalog_figure(field: str, scenario: dict[str, Any]) -> tuple[float, str] | None:
    """(value, confidence) of the catalog figure an empty catalog field takes, or None when there is none."""
    spec = FIELDS[field]
    if not spec.catalog_field or not spec.catalog_id or not scenario.get(spec.catalog_id):
        return None
    return _catalog_figure(spec.catalog_field, str(scenario[spec.catalog_id]))


@cache
def _catalog_figure(catalog_field: str, accelerator: str) -> tuple[float, str] | None:
    """(value, confidence) of an accelerator's catalog figure: the catalog is read once, so this is too."""
    if accelerator not in catalog.accelerator_ids():
        return None
    value = catalog.accelerator_record(accelerator).get(catalog_field)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(float(value)):
        return None
    source = catalog.accelerator_source(accelerator, catalog_field) or {}
    return float(value), source.get("confidence", "")


def empty_means(field: str, scenario: dict[str, Any]) -> str:
    """The placeholder of an empty field: what the engine does without it."""
    spec = FIELDS[field]
    if spec.catalog_field:
        figure = catalog_figure(field, scenario)
        if figure is not None:
            unit = f" {spec.unit}" if spec.unit and spec.unit != "-" else ""
            return f"empty: catalog {show_value(figure[0])}{unit} ({figure[1] or 'unrated'})"
        if not scenario.get(spec.catalog_id or "accelerator"):
            return "empty: no decode pool"
        return "empty: not in the catalog; enter a figure"
    found = re.search(r"empty = ([^;(]+)", spec.description)
    return f"empty: {found.group(1).strip().rstrip('.')}" if found else "empty"


def shown(field: str, value: Any) -> str:
    """A number as typed into a text box: thousands separators, no exponent below 10^15, exact otherwise.

    >>> shown("demand_output_tokens_per_day", 1e10), shown("electricity_usd_per_kwh", 0.0806), shown("pue", None)
    ('10,000,000,000', '0.0806', '')
    >>> shown("accelerator_count", 512), shown("output_tokens_per_s_per_accelerator", 2700.72)
    ('512', '2,700.72')
    """
    if value is None:
        return ""
    v = float(value)
    if v.is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    whole, _, frac = repr(v).partition(".")
    if "e" in repr(v) or not frac:
        return repr(v)
    return f"{int(whole):,}.{frac}" if whole not in ("-0",) else f"-0.{frac}"


def _changed(field: str) -> None:
    """on_change: the widget's value, as text, goes through the link's parser into the working scenario."""
    raw = st.session_state.get(field)
    spec = FIELDS[field]
    if raw is None:
        text = ""
    elif spec.kind is FieldKind.BOOL:
        text = "true" if raw else "false"
    elif spec.kind.numeric:
        text = str(raw).strip().replace(",", "").replace("_", "").replace("$", "").replace(" ", "")
    else:
        text = str(raw)
    if text.strip() == "" and not spec.optional and spec.kind is not FieldKind.STR:
        state.error(f"{field}: needs a value (only optional fields may be empty); not applied")
        return
    state.edit_text({field: text})


def field_widget(field: str) -> None:
    """Draw one field's widget, its key set from the working scenario just before."""
    spec = FIELDS[field]
    scenario = st.session_state[state.SCENARIO]
    value = scenario[field]
    common: dict[str, Any] = {"key": field, "on_change": _changed, "args": (field,),
                              "help": help_text(field, value)}
    if field in ID_FIELDS:
        kind = ID_FIELDS[field]
        names = _names(kind)
        options: list[Any] = ([None] if spec.optional else []) + _ids(kind)
        if value not in options:
            options.append(value)
        st.session_state[field] = value
        st.selectbox(label(field), options, format_func=_id_words(names, empty_means(field, scenario)), **common)
    elif spec.kind is FieldKind.CHOICE:
        options = ([None] if spec.optional else []) + list(spec.choices)
        st.session_state[field] = value
        st.selectbox(label(field), options, format_func=_choice_words(empty_means(field, scenario)), **common)
    elif spec.kind is FieldKind.BOOL:
        st.session_state[field] = bool(value)
        st.checkbox(label(field), **common)
    elif spec.kind is FieldKind.STR:
        st.session_state[field] = "" if value is None else str(value)
        st.text_input(label(field), max_chars=spec.max_length, **common)
    else:
        st.session_state[field] = shown(field, value)
        st.text_input(label(field), placeholder=empty_means(field, scenario) if spec.optional else None, **common)


def _id_words(names: dict[str, str], empty: str) -> Callable[[Any], str]:
    return lambda v: empty if v is None else names.get(str(v), str(v))


def _choice_words(empty: str) -> Callable[[Any], str]:
    return lambda v: empty if v is None else CHOICE_WORDS.get(str(v), str(v))


SECTION_KEY = "editor_section"
PICK_A_SECTION = "Pick a section to edit the rest of the scenario."
"""The note under the sidebar's "Every other input" while no section is picked."""
LAST_DRAWN = "_editor_last_drawn"
KPI_PAUSE_S = 0.025
"""The least a rerun of the same page waits between sending its KPIs and drawing the inputs again [s]: about what
the browser takes to draw the KPIs (see :meth:`Sidebar._let_the_kpis_draw`)."""
RUN_START_REDRAW_S = 0.06
"""The inputs of a rerun are not sent before this long after the run started [s]: about what the browser takes to
redraw the previous page when a run starts, on the 2-core development machine under some load (half that when
quiet)."""
FIRST_RUN_PAUSE_S = 0.2
"""How long a session's first page with KPIs waits between sending them and drawing the rest [s] (a cold start: the
browser has the KPI's code, preloaded by ui/assets.py, but not the charts' and tables'): about what the browser takes
to draw the KPIs then, 0.05 s quiet and 0.16 s at a load of 15-20 on the 2-core development machine (docs/speed.md)."""


def kpi_pause_s(previous: Hashable | None, drawn: Hashable, *, browser: bool, pause_s: float, redraw_s: float,
                since_start_s: float) -> float:
    """How long a run waits after its KPIs before drawing the inputs (:meth:`Sidebar._let_the_kpis_draw`) [s].

    Parameters
    ----------
    previous
        What the session's last page with KPIs drew (its heading and key fields), None if none yet.
    drawn
        The same for this run's page.
    browser
        Whether the session is a browser's (a run without one, as under AppTest, never waits).
    pause_s, redraw_s
        The page's least pause and how long after the run's start its inputs may come [s].
    since_start_s
        Seconds since this run's page started.

    Returns
    -------
    float
        :data:`FIRST_RUN_PAUSE_S` on a session's first page with KPIs, ``max(pause_s, redraw_s - since_start_s)``
        on a rerun of the same page, 0 on a switch to another page or without a browser.

    Examples
    --------
    >>> kpi_pause_s(None, "cost", browser=True, pause_s=0.025, redraw_s=0.06, since_start_s=1.5) == FIRST_RUN_PAUSE_S
    True
    >>> kpi_pause_s("cost", "cost", browser=True, pause_s=0.1, redraw_s=0.5, since_start_s=0.25)
    0.25
    >>> kpi_pause_s("fleet", "cost", browser=True, pause_s=0.1, redraw_s=0.5, since_start_s=0.25)
    0.0
    """
    if not browser:
        return 0.0
    if previous is None:
        return FIRST_RUN_PAUSE_S
    return max(pause_s, redraw_s - since_start_s) if previous == drawn else 0.0


def sidebar(heading: str, key_fields: Sequence[str], before: Callable[[], None] | None = None) -> None:
    """The page's key fields in the sidebar, then every other field by section. The URL is written from the state
    first (:func:`ui.state.sync_url`): a page draws its editor right after its KPIs."""
    state.sync_url()
    with st.sidebar:
        st.markdown(headed(heading, level=2))  # st.header's level; a Markdown heading costs the browser a third
        if before is not None:
            before()
        for field in key_fields:
            field_widget(field)
        picked = st.session_state.get("_editor_section_value")
        st.markdown(headed("Every other input", *([] if picked else [PICK_A_SECTION])))  # one element, not two
        st.session_state[SECTION_KEY] = picked
        chosen = st.pills("Section", list(SECTIONS), key=SECTION_KEY, on_change=_section_changed,
                          label_visibility="collapsed",
                          help="Every scenario field is here; the page's key fields are above")
        if chosen is None:
            return
        rest = [f for f in FIELDS if section(f) == chosen and f not in key_fields]
        for field in rest:
            field_widget(field)


class Sidebar:
    """A page's editor (:func:`sidebar`), drawn once, when first called. A page calls it right after its KPIs, so an
    edit's new KPIs reach the browser before the unchanged inputs are drawn again (the sidebar is a container of its
    own: drawing it later moves nothing on screen), and :meth:`stop` instead of ``st.stop()``, so the inputs are
    there to fix whatever stopped the page."""

    def __init__(self, heading: str, key_fields: Sequence[str], before: Callable[[], None] | None = None, *,
                 pause_s: float = KPI_PAUSE_S, redraw_s: float = RUN_START_REDRAW_S, title: str | None = None,
                 intro: str | None = None) -> None:
        self.heading, self.key_fields, self.before, self.drawn = heading, key_fields, before, False
        self.pause_s, self.redraw_s = pause_s, redraw_s
        self.title, self.intro, self.top = title, intro, None if title is None else st.container()

    def __call__(self) -> None:
        if not self.drawn:
            self.drawn = True
            self._let_the_kpis_draw()
            if self.top is not None:
                self.above()
            sidebar(self.heading, self.key_fields, self.before)

    def above(self) -> Any:
        """The page's top, above its KPIs: one container reserved when the page starts (a page given a ``title``),
        its title and intro (one Markdown element: :func:`ui.text.headed`) and :func:`show_messages` drawn into it at
        the first call, which :meth:`__call__` makes right after the KPIs; a page adds what else sits above its KPIs
        (a note, the baseline's buttons) with ``with side.above():``. Every message a run sends before its KPIs
        delays them (Streamlit flushes one at a time, 5 ms apart) and the top would be three to six (docs/speed.md);
        drawn later it is one, in the same place on screen, and the browser keeps the previous run's top in it until
        then (a container replacing one keeps its children), so nothing blinks."""
        if self.top is None:
            raise AssertionError("above() on a page whose Sidebar was given no title")
        if self.title is not None:
            title, self.title = self.title, None
            with self.top:
                # each paragraph of the intro a note of its own: a small-type directive cannot span paragraphs (the
                # Decode page's price and speed notes showed its brackets, in full-size type)
                st.markdown(headed(title, *(self.intro.split("\n\n") if self.intro else []), level=1))
                show_messages()
        return self.top

    def _let_the_kpis_draw(self) -> None:
        """On a rerun of the same page in a browser, wait a moment after the KPIs before the rest is sent. The
        browser redraws the page once for each batch of messages it has queued, and a rerun starts with two
        redraws of the whole previous page (the run starting), during which the server has sent everything:
        without the pause the new KPIs land in one large batch with every input, chart and table, and show only
        when all of it is drawn. With it they come alone, in a small batch drawn at once; the inputs (unchanged
        after an edit) and the rest follow. The pause lasts until the browser is likely done with the run-start
        redraws (:data:`RUN_START_REDRAW_S` after the run started, so a page whose KPIs took long to compute waits
        less), and at least :data:`KPI_PAUSE_S`; a page whose previous run leaves more to redraw sets longer ones
        (``pause_s``, ``redraw_s``: the Decode page). The server is idle meanwhile (the sleep holds no lock), so nothing
        else waits.

        A session's first page with KPIs (a cold start) waits :data:`FIRST_RUN_PAUSE_S` there too, for another
        reason: its browser has not yet loaded the code of the charts and tables drawn after the KPIs (1-4 MB, loaded
        when the first of each kind arrives), and when those arrived before the KPIs were drawn, the KPIs were drawn
        only with them, 1.2-13.9 s later under load (docs/speed.md). A page switch or a run without a browser
        (AppTest) does not pause."""
        drawn = (self.heading, tuple(self.key_fields))
        previous = st.session_state.get(LAST_DRAWN)
        st.session_state[LAST_DRAWN] = drawn
        wait = kpi_pause_s(previous, drawn, browser=bool(st.context.headers), pause_s=self.pause_s,
                           redraw_s=self.redraw_s, since_start_s=state.seconds_since_start())
        if wait > 0:
            time.sleep(wait)

    def stop(self) -> NoReturn:
        self()
        st.stop()
        raise AssertionError("st.stop() returned")  # pragma: no cover (st.stop ends the run)


def _section_changed() -> None:
    st.session_state["_editor_section_value"] = st.session_state.get(SECTION_KEY)


def show_messages() -> None:
    """The link's warnings (until the first edit) and the edits that were refused, as plain text."""
    for warning in st.session_state.get(state.NOTICES, []):
        st.warning(f"Link: {plain(warning)}", icon=":material/link_off:")
    errors = st.session_state.get(state.ERRORS, [])
    for message in errors:
        st.error(plain(message))
    st.session_state[state.ERRORS] = []
