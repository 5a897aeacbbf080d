"""Data page: the catalogs behind every default, each figure with its source, date and confidence."""

from __future__ import annotations

import streamlit as st

from economics import catalog

st.title("Data and sources")
st.caption("Every number in data/ carries its source, the source's date and a confidence tag: listed (datasheet, "
           "official list), vendor claim, secondary (press, analysts, third-party benchmarks) or estimate (ours; "
           "the note says how).")

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
    st.dataframe(figures[figures["confidence"].isin(confidence)], hide_index=True, width="stretch")
with tabs[1]:
    st.caption("KV-cache bytes per token are computed from the architecture (BF16), not typed in.")
    st.dataframe(catalog.models(), width="stretch")
with tabs[2]:
    st.dataframe(catalog.throughput_claims(), width="stretch")
with tabs[3]:
    st.dataframe(catalog.throughput_curves(), hide_index=True, width="stretch")
with tabs[4]:
    st.dataframe(catalog.defaults(), width="stretch")
with tabs[5]:
    st.dataframe(catalog.api_prices(), hide_index=True, width="stretch")
with tabs[6]:
    st.caption("Fitted by `python -m economics calibrate --write`; `python -m economics calibrate` prints predicted "
               "vs measured for every point.")
    st.dataframe(catalog.calibration(), width="stretch")
