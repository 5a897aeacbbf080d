"""The board report in the screenshot gallery: the pages of the default scenario's report rendered to PNG
(pypdfium2, no browser needed) as docs/screenshots/report-<page>.png, beside the app's screenshots (docs/report.md)."""

from __future__ import annotations

import io

import pypdfium2

import economics
from economics.report import build
from tests.e2e.conftest import SCREENSHOTS


def test_report_pages_in_the_gallery() -> None:
    pdf = build.scenario_report(economics.default_scenario().model_dump())
    document = pypdfium2.PdfDocument(io.BytesIO(pdf))
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for old in SCREENSHOTS.glob("report-*.png"):
        old.unlink()
    for number in range(len(document)):
        path = SCREENSHOTS / f"report-{number + 1}.png"
        document[number].render(scale=1.5).to_pil().save(path)
        assert path.stat().st_size > 10_000
    assert 1 <= len(document) <= 3
