"""Saving the working scenario to the store (:mod:`economics.store`): the Library page's form and the Cost page's
"Save to library" are this one form, one save and one set of messages.

A scenario is stored as the fields a CSV row needs to be it: those that differ from the scenario schema's own
defaults (an empty cell's meaning), so ``--scenario NAME@VERSION`` in the CLI, the HTTP API and the app read the
same scenario. The save is based on the version the working scenario was opened from or last saved as
(:func:`ui.state.stored`): a save after someone else's is refused naming the newer version, never lost.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

import economics
from economics import store
from ui import links, state
from ui.text import plain

MESSAGE = "_library_message"


def stored_fields(scenario: dict[str, Any]) -> dict[str, Any]:
    """The scenario's fields that differ from the scenario schema's defaults (its name apart: the store names it).

    >>> stored_fields({**economics.Scenario().model_dump(), "name": "x", "pue": 1.4})
    {'pue': 1.4}
    """
    empty = economics.Scenario().model_dump()
    return {k: v for k, v in scenario.items() if k != "name" and v != empty.get(k)}


def save(name: str, note: str, project: str = "") -> None:
    """Save the working scenario as the next version of ``name``; the outcome is shown by :func:`show_message`."""
    opened = state.stored()
    base = opened.version if opened is not None and opened.name == name else None
    try:
        saved = store.open_store().save_scenario(name, stored_fields(state.scenario()), base, note,
                                                 store.current_user(), project or None)
        state.set_stored(links.stored_version(saved.reference))  # as a link will read it after a restart
    except store.StoreError as exc:
        st.session_state[MESSAGE] = ("error", str(exc))
        return
    st.session_state[MESSAGE] = ("success", f"Saved {saved.reference}")


def show_message() -> None:
    """The last save's (or delete's) outcome, once, as plain text."""
    message = st.session_state.pop(MESSAGE, None)
    if message:
        (st.error if message[0] == "error" else st.success)(plain(message[1]))


def form(key: str, with_project: bool = True, message: bool = True) -> None:
    """The save form: name (the stored version's, else the scenario's), a note saying what changed, a project; then
    the last save's outcome, unless ``message`` is False (the caller shows it with :func:`show_message`)."""
    opened = state.stored()
    with st.form(key):
        name = st.text_input("Name", value=opened.name if opened else str(state.scenario().get("name") or "scenario"),
                             max_chars=200)  # no key: it follows the version opened
        note = st.text_input("What changed (note)", max_chars=2000, key=f"{key}_note")
        project = st.text_input("Project", max_chars=100, key=f"{key}_project") if with_project else ""
        if st.form_submit_button("Save"):
            save(name.strip(), note, project.strip())
            if state.stored() is not opened:  # saved: run again, so the link names the new version
                st.rerun()
    if message:
        show_message()
