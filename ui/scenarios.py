"""Scenarios page: upload a CSV of scenarios, see the validation report, compare the results, download them.

A thin view: reading, validation and evaluation are :mod:`economics` functions; downloads neutralise spreadsheet
formulas. Upload size is limited in .streamlit/config.toml (server.maxUploadSize) and rows by ``ROW_LIMIT``.
"""

from __future__ import annotations

import altair as alt
import streamlit as st

import economics
from economics.io.documents import template_text
from economics.io.scenario_files import to_csv_text, to_json_text
from economics.io.tables import excel_bytes, read_table
from economics.schema.outputs import names
from ui import common, editor
from ui.text import plain

ROW_LIMIT = 100_000
PROGRESS_BYTES = 1_000_000  # uploads larger than this (about 10,000 rows) show a progress bar while read
# (a comment, not a docstring: Streamlit's magic would draw a bare string on the page)
UPLOAD_LIMIT_MB = st.get_option("server.maxUploadSize")
KEY_COLUMNS = ["name", "accelerator", "decode_accelerator", "ownership", *names("key"), "infeasible_reason"]

common.page_start()
editor.sidebar("Working scenario", ("name", "accelerator", "ownership"))
editor.show_messages()
st.title("Scenarios")
st.caption(f"Upload a CSV of scenarios, one per row, columns named after the scenario fields (download the "
           f"template). Up to {UPLOAD_LIMIT_MB} MB and {ROW_LIMIT:,} rows; invalid rows are listed with the field "
           f"and value at fault, and the valid ones are computed.")
st.download_button("Download the CSV template", template_text(), file_name="scenarios-template.csv",
                   mime="text/csv", key="download_template")

upload = st.file_uploader("Scenario CSV", type=["csv", "txt"], key="scenario_csv")
if upload is None:
    st.info("No file yet: the template holds every field with its unit, bounds and default, and the default "
            "scenario as a first row.")
    st.stop()

reading = st.progress(0.0, text="Reading the file") if upload.size > PROGRESS_BYTES else None


def show_reading(rows: int, share: float | None) -> None:
    if reading is not None:
        reading.progress(min(share or 0.0, 1.0), text=f"Read {rows:,} rows")


try:  # the row limit is enforced while reading: a file over it is refused before the rest is parsed
    table = read_table(upload.getvalue(), max_rows=ROW_LIMIT, progress=show_reading)
except economics.InputError as error:
    st.error(f"{plain(upload.name)}: {plain(str(error), max_chars=2000)} (the app takes at most {ROW_LIMIT:,} rows; "
             f"`python -m economics evaluate` streams files of any size)")
    st.stop()
if reading is not None:
    reading.empty()

with st.status(f"Evaluating {len(table):,} scenarios", expanded=False) as status:
    results, report = economics.evaluate_with_report(table)
    status.update(label=f"Evaluated {len(table):,} scenarios", state="complete")

valid = int(results["valid"].sum())
st.metric("Valid scenarios", f"{valid:,} of {len(results):,}")
if len(report):
    st.subheader("Validation report")
    st.error(f"{len(results) - valid:,} row(s) invalid; they are listed here, left out of the results and their "
             "downloads, and downloadable on their own below, as given, with the reason.")
    st.dataframe(report, hide_index=True, width="stretch", key="validation_report")

shown = results[results["valid"]]
if len(shown):
    st.subheader("Results")
    common.show_table(shown, key="results_table", columns=KEY_COLUMNS, money=False)  # sortable by its numbers
    chart = shown[["name", "cost_usd_per_m_tokens", "feasible"]].dropna(subset=["cost_usd_per_m_tokens"]).head(50)
    chart = chart.assign(fit=["fits" if bool(f) else "does not fit" for f in chart["feasible"].fillna(False)])
    st.altair_chart(alt.Chart(chart).mark_bar().encode(
        x=alt.X("cost_usd_per_m_tokens:Q", title="Cost [USD per M tokens]"), y=alt.Y("name:N", sort="x", title=None),
        color=alt.Color("fit:N", title="Facility", scale=alt.Scale(domain=["fits", "does not fit"],
                                                                    range=["#4c78a8", "#d62728"])),
        tooltip=["name:N", alt.Tooltip("cost_usd_per_m_tokens:Q", format=",.4f")]), width="stretch")

st.subheader("Download")
invalid = results[~results["valid"]]
cols = st.columns(4 if len(invalid) else 3)
# each file is built when its button is clicked, not on upload (Streamlit calls the function then); the results
# files hold the valid rows the page shows, the invalid rows go in a file of their own with their reasons
cols[0].download_button("Results (CSV)", lambda: to_csv_text(shown), file_name="results.csv", mime="text/csv",
                        key="download_csv")
cols[1].download_button("Results (Excel)", lambda: excel_bytes(shown)[0], file_name="results.xlsx",
                        mime="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                        key="download_xlsx")
cols[2].download_button("Results (JSON)", lambda: to_json_text(shown), file_name="results.json",
                        mime="application/json", key="download_json")
if len(invalid):
    cols[3].download_button(f"Invalid rows (CSV, {len(invalid):,})", lambda: to_csv_text(invalid),
                            file_name="invalid-rows.csv", mime="text/csv", key="download_invalid")
