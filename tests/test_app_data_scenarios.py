"""The Data and Scenarios pages under ``streamlit.testing`` (uploads themselves are driven in the browser tests)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

import economics
from economics.io.scenario_files import to_excel_bytes
from economics.io.tables import read_table

ROOT = Path(__file__).resolve().parents[1]


def test_data_page_lists_every_catalog_with_sources() -> None:
    at = AppTest.from_file(str(ROOT / "ui" / "data.py"), default_timeout=60)
    at.run()
    assert not at.exception
    assert len(at.dataframe) == 1  # only the open tab's table is built
    accelerators = at.dataframe[0].value
    assert {"source", "source_date", "confidence"} <= set(accelerators.columns)
    at.selectbox(key="data_accelerator").set_value("h100-sxm").run()
    assert set(at.dataframe[0].value["accelerator"]) == {"h100-sxm"}
    for tab in ("Models", "Measured speeds", "Measured curves", "Defaults", "API prices", "Calibration"):
        at.session_state["data_tab"] = tab
        at.run()
        # the curves tab leads with its sources, newest first (how old each front is), then every point
        tables = {"Measured curves": 2, "Calibration": 3}.get(tab, 1)
        assert not at.exception and len(at.dataframe) == tables, tab
        table = at.dataframe[-1].value
        assert len(table) > 0 and "source" in table.columns, tab
        if tab == "Measured curves":
            by_source = at.dataframe[0].value
            assert {"source", "curves", "oldest", "newest"} <= set(by_source.columns)
            assert by_source["newest"].tolist() == sorted(by_source["newest"], reverse=True)
        if tab == "Calibration":  # the factors, the range an estimate carries, the leave-one-out errors (by family,
            # model and published table)
            ranges = at.dataframe[1].value
            assert {"scope", "ratio_p10", "ratio_p90", "source"} <= set(ranges.columns)
            assert {"unseen", "nvidia-hopper"} <= set(ranges["scope"])
            assert {"family", "model", "source"} == set(at.dataframe[2].value["kind"])


def test_data_page_shows_the_tpu_trainium_and_lpx_rows_with_their_sources() -> None:
    # #40 item 5's families: each accelerator's figures on the Data page, every row with its source, a link to it,
    # the date and a confidence tag; the vendor's own figures labelled as such (Groq 3 LPX: vendor claim)
    at = AppTest.from_file(str(ROOT / "ui" / "data.py"), default_timeout=60)
    at.run()
    for accelerator in ("tpu-v6e", "tpu7x", "trainium2", "trainium3", "groq3-lpx"):
        at.selectbox(key="data_accelerator").set_value(accelerator).run()
        rows = at.dataframe[0].value
        assert not at.exception and len(rows) >= 10 and set(rows["accelerator"]) == {accelerator}, accelerator
        assert rows["link"].str.startswith("https://").all() and (rows["source"].str.len() > 0).all(), accelerator
        assert (rows["source_date"].str.len() > 0).all() and rows["confidence"].isin(list(
            economics.catalog.CONFIDENCE_TAGS)).all(), accelerator
        assert "bandwidth_tb_per_s" in set(rows["field"]) and {"memory_gb", "sram_gb"} & set(rows["field"]), accelerator
    assert "vendor claim" in set(rows["confidence"])  # groq3-lpx, the last
    # the Trainium2 measured run is in the measured speeds with its source
    at.session_state["data_tab"] = "Measured speeds"
    at.run()
    claims = at.dataframe[-1].value
    trn = claims[claims["accelerator"] == "trainium2"]
    assert len(trn) >= 1 and trn["link"].str.startswith("https://").all()


def test_scenarios_page_offers_the_template_and_states_limits() -> None:
    at = AppTest.from_file(str(ROOT / "ui" / "scenarios.py"), default_timeout=60)
    at.run()
    assert not at.exception
    assert any("100,000 rows" in c.value and "50 MB" in c.value for c in at.caption)
    assert any("template" in i.value for i in at.info)
    # the title comes first: no stray text (a bare string Streamlit's magic would draw) above it
    assert next(iter(at.main.children.values())).type == "title"
    assert not any("Uploads larger" in m.value for m in at.markdown)


def test_excel_export_neutralises_formulas() -> None:
    import io

    from openpyxl import load_workbook

    df = read_table(b"name,accelerator_count,output_tokens_per_s_per_accelerator\n=1+1,8,1000\n", fmt="csv")
    book = load_workbook(io.BytesIO(to_excel_bytes(economics.evaluate(df))))
    sheet = book["results"]
    header = [c.value for c in sheet[1]]
    assert sheet.cell(row=2, column=header.index("name") + 1).value == "'=1+1"
