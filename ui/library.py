"""Library page: save the working scenario to the store, browse and search the stored ones, open a version, compare
two versions side by side with their KPIs, delete with confirmation.

A thin view over :mod:`economics.store` (the database of ``TOKEN_ECONOMICS_DATABASE_URL``, default a SQLite file in
your data directory); nothing here computes. Names, notes and projects are user text: shown as plain text. Every
query is bounded: the list is read a page of :data:`LISTED` scenarios at a time (with a count), and a scenario's
newest :data:`VERSIONS` versions, so the page opens as fast with ten thousand scenarios as with ten.

Opening the page draws only what the listing needs: the page's rows as a plain HTML table (not the interactive data
grid, whose script the browser would load on every page load), and the save form behind a button (drawn when it is
opened). A scenario's versions, compare and delete are read and drawn once a scenario is chosen.
"""

from __future__ import annotations

import math

import streamlit as st

from economics import store
from ui import common, editor, links, saving, state
from ui.text import html_table, plain

LISTED = 50
VERSIONS = 200
COLUMNS = ("name", "project", "latest_version", "saved_by", "saved_at")
TABLE_PX = 420
# (a comment, not a docstring: Streamlit's magic would draw a bare string on the page)


def open_version(name: str, version: int) -> None:
    """Make the stored version the working scenario; the link then names it (``scenario=NAME@VERSION``)."""
    try:
        found = links.stored_version(f"{name}@{version}")
    except (store.StoreError, ValueError) as exc:
        st.error(plain(str(exc), 1000))
        return
    state.replace(found.scenario, from_store=found)
    st.session_state[saving.MESSAGE] = ("success", f"Opened {found.reference}")
    st.rerun()  # the sidebar and the link were drawn before the button: run again to show the version opened


def compare_versions(opened: store.Store, name: str, numbers: list[int]) -> None:
    """Two versions side by side: the fields that differ, then each KPI with its difference (b - a)."""
    st.subheader("Compare two versions")
    a = st.selectbox("Version A", numbers, index=1, key="library_a")
    b = st.selectbox("Version B", numbers, index=0, key="library_b")
    try:
        compared = store.compare(opened.scenario(name, a), opened.scenario(name, b))
    except store.StoreError as exc:
        st.error(plain(str(exc), 1000))
        return
    st.dataframe(compared.fields, hide_index=True, width="stretch")
    st.dataframe([{k: v for k, v in row.items() if k != "output"} for row in compared.kpis], hide_index=True,
                 width="stretch")


def listing(opened: store.Store) -> list[store.ScenarioSummary]:
    """The stored scenarios matching the search, a page of :data:`LISTED` at a time."""
    search = st.text_input("Search names and projects", key="library_search")
    total = opened.count_scenarios(search)
    pages = max(1, math.ceil(total / LISTED))
    number = st.number_input(f"Page (of {pages:,})", min_value=1, max_value=pages, value=1, step=1,
                             key="library_page") if pages > 1 else 1
    rows = opened.list_scenarios(search, limit=LISTED, offset=(int(number) - 1) * LISTED)
    st.caption(f"{total:,} scenarios" + (f"; {LISTED:,} a page, by name: turn the page or search to reach any"
                                         if pages > 1 else ""))
    if rows:
        with st.container(height=TABLE_PX):  # scrolls within, as a grid would: the chooser stays near
            st.html(html_table([r.as_json() for r in rows], COLUMNS))
    return rows


@st.fragment
def browse(opened: store.Store) -> None:
    """The listing, then the chosen scenario's history, open, compare and delete: a fragment, so a search, a page
    turn or a choice of versions runs this part again, not the whole page (opening and deleting run the whole page).
    The scenario the working scenario was opened from or saved as is chosen when listed; else none until picked."""
    rows = listing(opened)
    if not rows:
        return
    names = [r.name for r in rows]
    current = state.stored()
    chosen = st.selectbox("Scenario", names, key="library_scenario", placeholder="Choose one to see its versions",
                          index=names.index(current.name) if current and current.name in names else None)
    if chosen is None:
        return
    history = opened.history(chosen, limit=VERSIONS)
    show_history(chosen, history)
    numbers = [v.version for v in history]
    version = st.selectbox("Version", numbers, key="library_version")
    if st.button("Open this version as the working scenario", key="library_open"):
        open_version(chosen, version)
    if len(numbers) > 1:
        compare_versions(opened, chosen, numbers)
    delete(opened, chosen, current)


def show_history(name: str, history: list[store.VersionInfo]) -> None:
    """A scenario's newest versions: who saved each, when, the note and the fields it changed."""
    st.dataframe([{"version": v.version, "saved_by": v.saved_by, "saved_at": v.saved_at, "note": v.note,
                   "changed": ", ".join(c["field"] for c in v.changes)} for v in history], hide_index=True,
                 width="stretch")
    if history and history[0].version > VERSIONS:
        st.caption(f"The newest {VERSIONS:,} of {history[0].version:,} versions; `--scenario {name}@N` opens any in "
                   "the CLI.")


def delete(opened: store.Store, chosen: str, current: links.Stored | None) -> None:
    """Delete every version of the scenario, once confirmed."""
    with st.expander("Delete this scenario"):
        sure = st.checkbox(f"Delete every version of '{plain(chosen)}' for good", key="library_sure")
        if st.button("Delete", key="library_delete", disabled=not sure):
            try:
                count = opened.delete_scenario(chosen)
            except store.StoreError as exc:  # deleted by someone else a moment ago
                st.error(plain(str(exc)))
                return
            if current is not None and current.name == chosen:
                state.set_stored(None)
            st.session_state[saving.MESSAGE] = ("success", f"Deleted {chosen} ({count} versions)")
            st.rerun()


common.page_start()
editor.sidebar("Working scenario", ("name", "accelerator", "ownership"))
editor.show_messages()
st.title("Library")
st.caption("Scenarios saved with every version (who, when, what changed), in "
           f"{plain(store.database.shown_url(store.database_url()))}.")
with st.popover("Save the working scenario"):  # its form is drawn when opened, not on every page load
    saving.form("library_save", message=False)
saving.show_message()  # outside the popover: seen once it has closed

try:
    opened = store.existing_store()
except store.StoreError as exc:
    st.error(plain(str(exc)))
    st.stop()
if opened is None:
    st.info("No store yet: save a scenario to create it.")
    st.stop()

browse(opened)
