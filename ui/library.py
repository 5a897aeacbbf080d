"""Library page: save the working scenario to the store, browse and search the stored ones, open a version, compare
two versions side by side with their KPIs, delete with confirmation.

A thin view over :mod:`economics.store` (the database of ``TOKEN_ECONOMICS_DATABASE_URL``, default a SQLite file in
your data directory); nothing here computes. Names, notes and projects are user text: shown as plain text.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

import economics
from economics import store
from ui import common, editor, state
from ui.text import plain

BASE = "_library_base"  # (name, version) the working scenario was opened from or last saved as
LISTED = 200
# (a comment, not a docstring: Streamlit's magic would draw a bare string on the page)

common.page_start()
editor.sidebar("Working scenario", ("name", "accelerator", "ownership"))
editor.show_messages()
st.title("Library")
st.caption("Scenarios saved with every version (who, when, what changed), in "
           f"{plain(store.database.shown_url(store.database_url()))}.")


def given_fields(scenario: dict[str, Any]) -> dict[str, Any]:
    """The working scenario's fields that differ from the default scenario (what a link holds)."""
    default = economics.default_scenario().model_dump()
    return {k: v for k, v in scenario.items() if k != "name" and v is not None and v != default.get(k)}


def save(name: str, note: str, project: str) -> None:
    base = st.session_state.get(BASE)
    try:
        stored = store.open_store()
        latest = [s for s in stored.list_scenarios(search=name, limit=LISTED) if s.name == name]
        version = base[1] if base and base[0] == name else (None if not latest else 0)
        saved = stored.save_scenario(name, given_fields(state.scenario()), version, note, store.current_user(),
                                     project or None)
    except store.StoreError as exc:
        st.session_state["_library_message"] = ("error", str(exc))
        return
    st.session_state[BASE] = (saved.name, saved.version)
    st.session_state["_library_message"] = ("success", f"Saved {saved.reference}")


with st.form("library_save"):
    st.subheader("Save the working scenario")
    name = st.text_input("Name", value=str(state.scenario().get("name") or "scenario"), max_chars=200)
    note = st.text_input("What changed (note)", max_chars=2000)
    project = st.text_input("Project", max_chars=100)
    if st.form_submit_button("Save"):
        save(name.strip(), note, project.strip())
message = st.session_state.pop("_library_message", None)
if message:
    (st.error if message[0] == "error" else st.success)(plain(message[1]))

try:
    opened = store.existing_store()
except store.StoreError as exc:
    st.error(plain(str(exc)))
    st.stop()
if opened is None:
    st.info("No store yet: save a scenario to create it.")
    st.stop()

search = st.text_input("Search names and projects", key="library_search")
total = opened.count_scenarios(search)
rows = opened.list_scenarios(search, limit=LISTED)
st.caption(f"{total:,} scenarios" + (f"; the first {LISTED:,} by name shown" if total > LISTED else ""))
st.dataframe([r.as_json() for r in rows], hide_index=True, width="stretch")
if not rows:
    st.stop()
chosen = st.selectbox("Scenario", [r.name for r in rows], key="library_scenario")
history = opened.history(chosen)
st.dataframe([{"version": v.version, "saved_by": v.saved_by, "saved_at": v.saved_at, "note": v.note,
               "changed": ", ".join(c["field"] for c in v.changes)} for v in history], hide_index=True,
             width="stretch")
numbers = [v.version for v in history]
version = st.selectbox("Version", numbers, key="library_version")
if st.button("Open this version as the working scenario", key="library_open"):
    found = opened.scenario(chosen, version)
    state.replace({**economics.default_scenario().model_dump(), **found.scenario()})
    st.session_state[BASE] = (found.name, found.version)
    st.success(plain(f"Opened {found.reference}"))

if len(numbers) > 1:
    st.subheader("Compare two versions")
    a = st.selectbox("Version A", numbers, index=1, key="library_a")
    b = st.selectbox("Version B", numbers, index=0, key="library_b")
    compared = store.compare(opened.scenario(chosen, a), opened.scenario(chosen, b))
    st.dataframe(compared.fields, hide_index=True, width="stretch")
    st.dataframe([{k: v for k, v in row.items() if k != "output"} for row in compared.kpis], hide_index=True,
                 width="stretch")

with st.expander("Delete this scenario"):
    sure = st.checkbox(f"Delete every version of '{plain(chosen)}' for good", key="library_sure")
    if st.button("Delete", key="library_delete", disabled=not sure):
        count = opened.delete_scenario(chosen)
        st.session_state.pop(BASE, None)
        st.session_state["_library_message"] = ("success", f"Deleted {chosen} ({count} versions)")
        st.rerun()
