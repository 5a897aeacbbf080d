"""The app's state: one working scenario, the page settings and a baseline, owned by the app, not by widgets.

Streamlit drops a widget's entry from ``st.session_state`` whenever a run does not draw that widget (as on another
page), so nothing here lives under a widget key. The scenario is a plain dict under ``SCENARIO``, the settings under
``SETTINGS``, the baseline under ``BASELINE``. Widgets get a key of their own, set from the state just before they
are drawn (:mod:`ui.editor`), and their ``on_change`` callback writes the edit back through :func:`apply` (every
edit is parsed and checked by the same code as a link, so the scenario is always valid). :func:`begin` runs first
on every page: on a session's first run it reads the link. :func:`sync_url` writes the URL from the state once per
run: when the page draws its editor (after its KPIs, :mod:`ui.editor`), or when the run ends if it drew none (the
router), so the URL is always the whole state and pages come and go without touching a value. It is not written
first because the browser redraws the page when the URL changes: written first, that redraw came before the new
KPIs.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import streamlit as st

import economics
from economics.engine.measured import scenario_configuration
from economics.studies.links import decode_query
from ui import links

SCENARIO, SETTINGS, BASELINE, STORED = "scenario", "settings", "baseline", "stored"
NOTICES, ERRORS, READY = "_link_warnings", "_edit_errors", "_state_ready"
SYNC, STARTED = "_sync_url", "_run_started_s"


def begin() -> None:
    """Read the link once per session; this run's page keeps the URL in step with the state (:func:`sync_url`)."""
    ss = st.session_state
    if READY not in ss:
        params = {k: st.query_params.get_all(k) for k in st.query_params}
        link = links.read_whole_link(params)
        ss[SCENARIO], ss[SETTINGS], ss[BASELINE], ss[STORED] = link.scenario, link.settings, link.baseline, link.stored
        ss[NOTICES], ss[ERRORS] = link.warnings, []
        ss[READY] = True
    ss[SYNC], ss[STARTED] = True, time.perf_counter()


def seconds_since_start() -> float:
    """Seconds since this run's page called :func:`begin` (0 if it has not)."""
    started = st.session_state.get(STARTED)
    return 0.0 if started is None else time.perf_counter() - started


def sync_url() -> None:
    """Once per run of a page that called :func:`begin` (later calls do nothing): write the URL query from the
    state, if it differs."""
    ss = st.session_state
    if not ss.pop(SYNC, False):
        return
    query = links.link_query(ss[SCENARIO], ss[SETTINGS], ss[BASELINE], ss.get(STORED))
    if st.query_params.to_dict() != query:
        st.query_params.from_dict(query)


def scenario() -> dict[str, Any]:
    """The working scenario (a copy: edit it with :func:`apply`)."""
    return dict(st.session_state[SCENARIO])


def settings() -> dict[str, Any]:
    return dict(st.session_state[SETTINGS])


def baseline() -> dict[str, Any] | None:
    pinned = st.session_state.get(BASELINE)
    return None if pinned is None else dict(pinned)


def model() -> economics.Scenario:
    return economics.Scenario.model_validate(st.session_state[SCENARIO])


def apply(changes: Mapping[str, Any]) -> None:
    """Apply already parsed field values to the working scenario (changing an accelerator empties its catalog
    figures, as :func:`economics.with_changes` does); refused with an error naming the field if the result is not a
    valid scenario. Any edit retires the link's warnings: the URL no longer holds what they were about."""
    st.session_state[NOTICES] = []
    try:
        updated = economics.with_changes(model(), **changes)
        updated.update(_described_edit(st.session_state[SCENARIO], updated, changes))
        st.session_state[SCENARIO] = economics.Scenario.model_validate(updated).model_dump()
    except ValueError as exc:
        lines = str(exc).splitlines()
        st.session_state[ERRORS].append(f"{', '.join(changes)}: {' '.join(x.strip() for x in lines[1:3])}; "
                                        f"not applied")


EDITED = "edited from: "


def _described_edit(before: Mapping[str, Any], after: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """What an edit also changes so the scenario says what it now is: a preset edited for the first time is named
    ``edited from: <preset>`` (its note no longer describes it), and a throughput typed in records the
    configuration it was measured for (``throughput_measured_for``), so a later change of accelerator, model or
    precision is flagged instead of silently keeping it; an emptied figure forgets it."""
    extra: dict[str, Any] = {}
    name = str(before.get("name") or "")
    changed = any(after.get(k) != v for k, v in before.items() if k != "name")
    if changed and "name" not in changes and name in set(economics.catalog.presets()["name"]) and (
            not name.startswith(EDITED)):
        extra["name"] = (EDITED + name)[:200]
    field = "output_tokens_per_s_per_accelerator"
    if field in changes and "throughput_measured_for" not in changes:
        extra["throughput_measured_for"] = None if after.get(field) is None else scenario_configuration(after)
    return extra


def edit_text(changes: Mapping[str, str]) -> None:
    """Apply fields given as text (a widget's value), parsed and checked like a link's parameters."""
    values, warnings = decode_query(dict(changes), model())
    if warnings:
        st.session_state[NOTICES] = []
        st.session_state[ERRORS].extend(w.replace("; the default is used", "; not applied") for w in warnings)
        return
    apply(values)


def set_setting(name: str, value: Any) -> None:
    st.session_state[NOTICES] = []
    st.session_state[SETTINGS] = {**st.session_state[SETTINGS], name: value}


def error(message: str) -> None:
    st.session_state[ERRORS].append(message)


def pin_baseline() -> None:
    st.session_state[BASELINE] = scenario()


def clear_baseline() -> None:
    st.session_state[BASELINE] = None


def stored() -> links.Stored | None:
    """The stored scenario version the working scenario was opened from or last saved as (None: none); the link
    names it (``scenario=NAME@VERSION``) and the next save is based on it."""
    found = st.session_state.get(STORED)
    return found if isinstance(found, links.Stored) else None


def set_stored(version: links.Stored | None) -> None:
    st.session_state[STORED] = version


def replace(new_scenario: Mapping[str, Any], from_store: links.Stored | None = None) -> None:
    """Replace the whole working scenario (a preset, an example study, a stored version ``from_store``: the link
    then names that version, or no longer names one)."""
    st.session_state[NOTICES] = []
    st.session_state[SCENARIO] = economics.Scenario.model_validate(dict(new_scenario)).model_dump()
    st.session_state[STORED] = from_store
