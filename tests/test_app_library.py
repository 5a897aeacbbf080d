"""The Library page under ``streamlit.testing``: save the working scenario twice, find it, compare the two versions
with their KPIs, open the first, delete with confirmation (a SQLite store in a temporary folder)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import economics
from economics import store
from economics.store.database import URL_VARIABLE
from tests.test_app import set_field, start
from ui import links


def test_save_browse_compare_open_and_delete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(URL_VARIABLE, f"sqlite:///{tmp_path / 'store.sqlite'}")
    at = start("library", {"name": "q3", "accelerator": "h100-sxm", "ownership": "rent", "accelerator_count": "8",
                           "rent_usd_per_accelerator_hour": "2", "output_tokens_per_s_per_accelerator": "1000"})
    assert any("No store yet" in i.value for i in at.info)
    at.button[0].click().run()  # the form's Save
    assert not at.exception and any("Saved q3@1" in s.value for s in at.success), [s.value for s in at.success]
    set_field(at, "accelerator_count", "16")
    at.button[0].click().run()
    assert any("Saved q3@2" in s.value for s in at.success), [e.value for e in at.error]
    kpis = at.dataframe[-1].value
    hourly = kpis[kpis["label"].str.startswith("Cost per hour")].iloc[0]
    assert (hourly["a"], hourly["b"], hourly["difference"]) == (16.0, 32.0, 16.0)  # 8 then 16 x 2 USD/h
    at.selectbox(key="library_version").set_value(1).run()
    at.button(key="library_open").click().run()
    assert at.session_state["scenario"]["accelerator_count"] == 8
    at.checkbox(key="library_sure").check().run()
    at.button(key="library_delete").click().run()
    assert not at.exception and any("Deleted q3 (2 versions)" in s.value for s in at.success)


def _submit(at: AppTest, form: str) -> AppTest:
    """Press the Save button of the form ``form`` (the Cost page's or the Library page's); the Cost page's panel
    is drawn only open, so it is opened first (the page setting ``open``, as a click on it sets it)."""
    if form == "cost_save" and "save" not in at.session_state["settings"]["open"]:
        assert not [b for b in at.button if b.form_id == form or form in str(b.id)]  # closed: no form drawn
        at.session_state["settings"] = {**at.session_state["settings"], "open": ("save",)}
        at.run()
    next(b for b in at.button if b.form_id == form or form in str(b.id)).click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


RENTED = {"name": "q3", "accelerator": "h100-sxm", "ownership": "rent", "accelerator_count": "8",
          "rent_usd_per_accelerator_hour": "2", "output_tokens_per_s_per_accelerator": "1000"}


def test_the_cost_page_saves_and_the_link_names_the_version_after_a_restart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(URL_VARIABLE, f"sqlite:///{tmp_path / 'store.sqlite'}")
    at = _submit(start("cost", RENTED), "cost_save")
    assert any("Saved q3@1" in s.value for s in at.success), [e.value for e in at.error]
    assert at.query_params["scenario"] == "q3@1"
    # the working scenario is version 1 as stored: no changes (beside it, the save panel left open)
    assert set(at.query_params) == {"v", "scenario", "settings.open"} and at.query_params["settings.open"] == "save"
    set_field(at, "accelerator_count", "16")
    assert (at.query_params["scenario"], at.query_params["accelerator_count"]) == ("q3@1", "16")  # changed since
    at = _submit(at, "cost_save")  # based on version 1: saved as version 2
    assert any("Saved q3@2" in s.value for s in at.success), [e.value for e in at.error]
    assert at.query_params["scenario"] == "q3@2" and "accelerator_count" not in at.query_params
    # a new session (a restarted server reads the same store file): the link opens version 1, with a change
    again = start("cost", {"v": "1", "scenario": "q3@1", "pue": "1.5"})
    opened = again.session_state["scenario"]
    assert (opened["accelerator_count"], opened["rent_usd_per_accelerator_hour"], opened["pue"]) == (8, 2.0, 1.5)
    assert again.session_state["stored"].reference == "q3@1" and not again.session_state["_link_warnings"]
    # 8 GPUs x 2 USD/h = 16 USD/h (rented, energy in the rent): the KPIs of version 1, not of version 2 (32 USD/h)
    assert again.session_state["scenario"]["ownership"] == "rent"
    assert economics.evaluate_scenario(opened)["cost_usd_per_hour"] == pytest.approx(16.0)


def test_a_link_to_a_missing_version_is_named_and_the_default_used(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(URL_VARIABLE, f"sqlite:///{tmp_path / 'store.sqlite'}")
    _submit(start("cost", RENTED), "cost_save")
    at = start("cost", {"v": "1", "scenario": "q3@7"})
    assert at.session_state["scenario"] == links.default_scenario() and at.session_state["stored"] is None
    text = " ".join(w.value for w in at.warning)
    assert "scenario: scenario 'q3': no version 7 (versions 1 to 1); the default scenario is used" in text, text


def test_a_scenario_saved_in_the_app_is_the_one_the_cli_reads(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # The app's default scenario (Llama 3.1 70B at FP8) differs from an empty CSV row's (no model, BF16): the store
    # keeps what differs from the empty row, so --scenario q3 reads the app's scenario, model and precision included.
    monkeypatch.setenv(URL_VARIABLE, f"sqlite:///{tmp_path / 'store.sqlite'}")
    at = _submit(start("cost"), "cost_save")
    name = at.session_state["stored"].name
    stored = store.resolve(name)
    assert (stored.fields or {})["model"] == "llama-3.1-70b" and stored.fields["precision"] == "fp8"
    app = economics.evaluate_scenario(at.session_state["scenario"])
    cli = economics.evaluate_scenario(stored.scenario())
    assert cli["cost_usd_per_m_tokens"] == app["cost_usd_per_m_tokens"]


def test_a_new_session_lists_a_page_of_plain_text_rows_and_reads_no_versions(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    monkeypatch.setenv(URL_VARIABLE, url)
    fields = {k: v for k, v in RENTED.items() if k != "name"}
    store.open_store(url).save_versions([(f"s{i:02d}", fields) for i in range(60)], saved_by="<b>ana</b>",
                                        project="<i>fy26</i>")
    at = start("library")
    # 60 scenarios, 50 a page: 2 pages; the first lists s00..s49 as a plain HTML table, user text escaped
    assert any(c.value.startswith("60 scenarios; 50 a page") for c in at.caption), [c.value for c in at.caption]
    table = at.html[0].value
    assert table.count("<tr>") == 51 and "<td>s00</td>" in table and "<td>s49</td>" in table
    assert "<td>&lt;i&gt;fy26&lt;/i&gt;</td>" in table and "<td>&lt;b&gt;ana&lt;/b&gt;</td>" in table
    assert "<b>" not in table and "<i>" not in table
    # no scenario chosen yet: no versions read, nothing to open, compare or delete
    assert at.selectbox(key="library_scenario").value is None and not at.dataframe
    assert "library_version" not in {s.key for s in at.selectbox} and "library_open" not in {b.key for b in at.button}
    at.number_input(key="library_page").set_value(2).run()  # the second page: s50..s59
    table = at.html[0].value
    assert table.count("<tr>") == 11 and "<td>s50</td>" in table and "<td>s59</td>" in table
    at.selectbox(key="library_scenario").set_value("s55").run()  # chosen: its one version is read and listed
    assert at.dataframe[0].value["version"].tolist() == [1] and at.selectbox(key="library_version").value == 1
