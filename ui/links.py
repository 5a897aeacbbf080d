"""Shareable links for the pages: the scenario in the URL query (economics.links does the encoding and checking).

Pages call :func:`restore` before drawing their widgets (a link's values seed the widgets once per session, and
bad parameters are reported, never fatal) and :func:`share` after computing (the query follows the inputs, and
the full link is shown to copy).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import streamlit as st

import economics
from economics.links import BASELINE_PREFIX, decode_query, encode_query, query_string, split_baseline


def restore(widget_fields: Iterable[str]) -> dict[str, Any]:
    """Seed this page's widgets from the link on the session's first run; return the link's other fields."""
    if "_link_values" not in st.session_state:
        params, pinned = split_baseline({k: st.query_params.get_all(k) for k in st.query_params})
        values, warnings = decode_query(params, economics.default_scenario())
        if pinned is not None:
            baseline_values, baseline_warnings = decode_query(pinned, economics.default_scenario())
            warnings += [f"baseline: {w}" for w in baseline_warnings]
            st.session_state["baseline"] = economics.with_changes(economics.default_scenario(), **baseline_values)
        st.session_state["_link_values"] = values
        st.session_state["_link_warnings"] = warnings
        for name in widget_fields:
            if name in values:
                st.session_state[name] = values[name]
    for warning in st.session_state["_link_warnings"]:
        st.warning(f"Link: {warning}")
    fields = set(widget_fields)
    return {k: v for k, v in st.session_state["_link_values"].items() if k not in fields}


def share(scenario: dict[str, Any]) -> None:
    """Keep the URL query in step with the scenario and show the link to copy."""
    query = encode_query(scenario, economics.default_scenario())
    if st.session_state.get("baseline") is not None:
        pinned = encode_query(st.session_state["baseline"], economics.default_scenario())
        query.update({BASELINE_PREFIX + k: v for k, v in pinned.items()})
    st.query_params.from_dict(query)
    base_url = (st.context.url or "").split("?")[0]
    with st.expander("Share this scenario"):
        st.caption("The link holds every input that differs from the default scenario; opening it reproduces "
                   "these results.")
        st.code(f"{base_url}?{query_string(query)}", language=None)


def seed(defaults: dict[str, Any], zero_when_empty: Iterable[str] = ()) -> None:
    """Give each widget key its starting value once per session (a link's values, set by :func:`restore`, win).

    ``zero_when_empty`` lists number widgets that show an empty field (no limit, no target, estimate) as 0: an
    empty value from a link becomes 0 there.
    """
    for key in zero_when_empty:
        if key in st.session_state and st.session_state[key] is None:
            st.session_state[key] = 0.0
    for key, value in defaults.items():
        st.session_state.setdefault(key, value)
