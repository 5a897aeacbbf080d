"""Data page: the catalogs behind every default, each figure with its source, date and confidence."""

from __future__ import annotations

import streamlit as st

from economics import catalog
from economics.catalog.sources import Table, with_source_links

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


def accelerators() -> None:
    ids = catalog.accelerator_ids()
    chosen = st.selectbox("Accelerator", ["all", *ids], key="data_accelerator")
    figures = catalog.accelerator_figures()
    if chosen != "all":
        figures = figures[figures["accelerator"] == chosen]
    confidence = st.multiselect("Confidence", list(catalog.CONFIDENCE_TAGS), default=list(catalog.CONFIDENCE_TAGS),
                                key="data_confidence")
    show(figures[figures["confidence"].isin(confidence)], hide_index=True)


def models() -> None:
    st.caption("KV-cache bytes per token are computed from the architecture (BF16), not typed in.")
    show(catalog.models())


def calibration() -> None:
    st.caption("Fitted by `python -m economics calibrate --write`; `python -m economics calibrate` prints predicted "
               "vs measured for every point.")
    show(catalog.calibration())
    st.subheader("How far an estimate can be from a measurement")
    st.caption("measured / estimated at P10, P50 and P90 on points the fit never saw: each fitted family's points "
               "of every published table predicted with that table left out of the fit (every table weighing the "
               "same) and its blind points, and (unseen) every family's points with that family left out. An "
               "estimate's range is its figure times these ratios. Rebuilt by `python -m economics calibrate "
               "--ranges --write`; docs/estimates.md gives the validation on points added afterwards.")
    show(catalog.estimate_ranges().reset_index())
    st.caption("The error per accelerator family, per model and per published table, left out of the fit:")
    show(catalog.leave_out_errors(), hide_index=True)


def curves() -> None:
    st.caption("By source, newest first: how old each published front is. Below, every measured point with its "
               "source. Your own runs: the Throughput page, or `import-benchmark` then `--curves`.")
    st.dataframe(catalog.curve_sources(), hide_index=True, width="stretch", key="curve_sources")
    show(catalog.throughput_curves(), hide_index=True)


TABS = {
    "Accelerators": accelerators, "Models": models, "Measured speeds": lambda: show(catalog.throughput_claims()),
    "Measured curves": curves,
    "Defaults": lambda: show(catalog.defaults()), "API prices": lambda: show(catalog.api_prices(), hide_index=True),
    "Calibration": calibration,
}
# Only the open tab's table is built and sent (a tab opened reruns the page): a visit to the page no longer ships
# every catalog to the browser.
for tab, draw in zip(st.tabs(list(TABS), key="data_tab", on_change="rerun"), TABS.values(), strict=True):
    if tab.open:
        with tab:
            draw()
