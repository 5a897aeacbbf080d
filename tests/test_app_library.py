"""The Library page under ``streamlit.testing``: save the working scenario twice, find it, compare the two versions
with their KPIs, open the first, delete with confirmation (a SQLite store in a temporary folder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from economics.store.database import URL_VARIABLE
from tests.test_app import set_field, start


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
