"""Data page: the catalogs behind every default, each figure with its source, date and confidence."""

from __future__ import annotations

import streamlit as st

from economics import catalog
from economics.sources import Table, with_source_links

st.title("Data and sources")
st.caption("Every number in data/ carries its source, the source's date and a confidence tag: listed (datasheet, "
           "official list), vendor claim, secondary (press, analysts, third-party benchmarks) or estimate (ours; "
           "the note says how). The link column opens each row's source; source_date is the source's date, or the "
           "month it was read for an undated page.")

LINK = {"link": st.column_config.LinkColumn("link", help="Opens the source cited in the source column",
                                             display_text=r"https?://(?:www\.)?([^/]+)")}


def show(table: Table, hide_index: bool = False) -> None:
    """One catalog with its sources as clickable links (the link text is the site's domain, plain text), the link
    column placed just before the source text so it is on screen without scrolling."""
    linked = with_source_links(table)
    columns = [c for c in linked.columns if c != "link"]
    at = columns.index("source") if "source" in columns else len(columns)
    st.dataframe(linked[[*columns[:at], "link", *columns[at:]]], hide_index=hide_index, width="stretch",
                 column_config=LINK)


tabs = st.tabs(["Accelerators", "Models", "Measured speeds", "Measured curves", "Defaults", "API prices",
                "Calibration"])
with tabs[0]:
    ids = catalog.accelerator_ids()
    chosen = st.selectbox("Accelerator", ["all", *ids], key="data_accelerator")
    figures = catalog.accelerator_figures()
    if chosen != "all":
        figures = figures[figures["accelerator"] == chosen]
    confidence = st.multiselect("Confidence", list(catalog.CONFIDENCE_TAGS), default=list(catalog.CONFIDENCE_TAGS),
                                key="data_confidence")
    show(figures[figures["confidence"].isin(confidence)], hide_index=True)
with tabs[1]:
    st.caption("KV-cache bytes per token are computed from the architecture (BF16), not typed in.")
    show(catalog.models())
with tabs[2]:
    show(catalog.throughput_claims())
with tabs[3]:
    show(catalog.throughput_curves(), hide_index=True)
with tabs[4]:
    show(catalog.defaults())
with tabs[5]:
    show(catalog.api_prices(), hide_index=True)
with tabs[6]:
    st.caption("Fitted by `python -m economics calibrate --write`; `python -m economics calibrate` prints predicted "
               "vs measured for every point.")
    show(catalog.calibration())
