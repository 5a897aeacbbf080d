"""The board report on the pages: each of the Cost, Fleet, Sessions, Decode and Plan pages prepares its PDF on
request and then offers it for download; an edit takes the download away until the report is prepared again."""

from __future__ import annotations

import pytest
from streamlit.runtime.memory_media_file_storage import _calculate_file_id
from streamlit.testing.v1 import AppTest

from tests.test_app import set_field, start
from ui.report import REPORT


def opened(page: str) -> AppTest:
    at = start(page)
    if page == "decode":
        at.button(key="load_example").click().run()
    if page == "plan":
        at.button(key="plan_example").click().run()
    if page == "sessions":
        at.button(key="switch_to_sessions").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("page", ["cost", "fleet", "sessions", "decode", "plan"])
def test_the_page_offers_its_report_as_pdf(page: str) -> None:
    at = opened(page)
    assert not [b for b in at.get("download_button") if b.proto.id.endswith("report_pdf")]  # only on request
    at.button(key="report_prepare").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    pdf = at.session_state[REPORT][1]
    assert pdf.startswith(b"%PDF")
    button = next(b for b in at.get("download_button") if b.proto.id.endswith("report_pdf"))
    assert button.proto.label == "Download report (PDF)"
    # the button serves those very bytes: Streamlit names a download by a hash of its bytes
    media = button.proto.url.rsplit("/", 1)[-1].split(".")[0]
    assert media == _calculate_file_id(pdf, "application/pdf", f"report-{_name(at)}.pdf")


def _name(at: AppTest) -> str:
    name = str(at.session_state["scenario"]["name"])
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in name)[:60]


def test_an_edit_takes_the_download_away() -> None:
    at = opened("cost")
    at.button(key="report_prepare").click().run()
    assert [b for b in at.get("download_button") if b.proto.id.endswith("report_pdf")]
    set_field(at, "electricity_usd_per_kwh", "0.2")
    assert not [b for b in at.get("download_button") if b.proto.id.endswith("report_pdf")]
