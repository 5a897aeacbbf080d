"""The board report: a PDF of one to three pages whose text is the engine's own figures (KPIs, assumptions with
their sources, version and date), from the command line and the API; user text is never read as Typst markup."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from pathlib import Path

import pypdf
import pytest

import economics
from economics.cli import main
from economics.engine.batch import as_scenario, evaluate_scenario
from economics.report import build, figures, kpis
from economics.report import format as fmt

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
WHEN = dt.datetime(2026, 12, 3, 12, 0, tzinfo=dt.UTC)


def text_of(pdf: bytes) -> str:
    """The PDF's text with all whitespace removed (Typst wraps long cells anywhere a space is)."""
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    return re.sub(r"\s+", "", "".join(p.extract_text() for p in reader.pages))


def pages(pdf: bytes) -> int:
    return len(pypdf.PdfReader(io.BytesIO(pdf)).pages)


def squeezed(s: str) -> str:
    return re.sub(r"\s+", "", s)


def row(path: Path, name: str) -> dict[str, str]:
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    return {k: v for k, v in next(r for r in rows if r["name"] == name).items() if v != "" and k in economics.FIELDS}


@pytest.fixture(scope="module")
def default_report() -> bytes:
    return build.scenario_report(economics.default_scenario().model_dump(), when=WHEN)


def test_the_default_report_is_one_to_three_pages_with_version_and_date(default_report: bytes) -> None:
    assert default_report.startswith(b"%PDF") and 1 <= pages(default_report) <= 3
    text = text_of(default_report)
    assert "2026-12-03" in text and squeezed(f"token-economics {economics.__version__}") in text
    assert squeezed(economics.default_scenario().name) in text


def test_every_kpi_is_the_engine_figure_as_the_page_formats_it(default_report: bytes) -> None:
    result = evaluate_scenario(economics.default_scenario())
    text = text_of(default_report)
    for name in [n for r in kpis.COST_ROWS for n in r]:
        shown = kpis.stated(name, result) or fmt.kpi(name, result, None).value
        assert squeezed(shown) in text, name
    # worked by hand from the default scenario's outputs: 312 accelerators, $10,688 a day
    assert result["accelerators"] == 312 and "312" in text and "$10,688" in text


def test_each_assumption_and_its_source_is_printed(default_report: bytes) -> None:
    text = text_of(default_report)
    found = figures.assumptions(economics.default_scenario().model_dump())
    assert len(found) >= 5
    for a in found:
        assert squeezed(a["source"]) in text and a["date"] in text and a["confidence"] in text
        for i in a["inputs"]:
            assert squeezed(i["input"]) in text and squeezed(i["value"]) in text, i


def test_the_baseline_deltas_are_printed() -> None:
    s = economics.default_scenario().model_dump()
    base = {**s, "name": "cheaper power", "electricity_usd_per_kwh": 0.04}
    pdf = build.scenario_report(s, base, when=WHEN)
    result, before = evaluate_scenario(as_scenario(s)), evaluate_scenario(as_scenario(base))
    change = fmt.kpi("cost_usd_per_day", result, before).change
    assert change is not None and change.endswith("vs baseline") and squeezed(change) in text_of(pdf)
    assert "cheaperpower" in text_of(pdf)


def test_a_name_is_text_never_typst_markup() -> None:
    name = '#import "x": * $ *_ \\ ] #set page(width: 1cm) <l> @r `c`'
    pdf = build.scenario_report({**economics.default_scenario().model_dump(), "name": name}, when=WHEN)
    assert squeezed(name) in text_of(pdf) and 1 <= pages(pdf) <= 3


def test_the_decode_example_report() -> None:
    scenario = row(DOCS / "retrofit-example.csv", "retrofit-example")
    pdf = build.decode_report(scenario, when=WHEN)
    assert pdf.startswith(b"%PDF") and 1 <= pages(pdf) <= 3
    # the fan (each option's NPV to date, P10-P90 of the draws) in place of the point cumulative cash flow
    assert "NPVofaddingdecode" in text_of(pdf) and "NPVtodatevsstatusquo" in text_of(pdf)
    # led by the odds, the Decode page's default draws (2,000 from seed 0): the same headline the study gives
    from economics.studies.retrofit_odds import odds

    found = odds(scenario, samples=build.ODDS_SAMPLES, seed=0)
    assert squeezed(found.headline()) in text_of(pdf) and "(bestin" in text_of(pdf)
    for note in found.assumptions():
        assert squeezed(note)[:40] in text_of(pdf)
    # every decode accelerator of the catalog, side by side (none is studied in this hand study but its h200-sxm)
    assert "Decodeaccelerators,oddsofbeingbest:sn40l:none(noprice)" in text_of(pdf)
    assert "groq3-lpx:none(noprice)" in text_of(pdf)


@pytest.mark.parametrize("spec, data", [
    ("cashflow_spec", {"flows": [{"option": "more of the same, as demand grows", "year": 0, "vs_status_quo_usd": 1.0,
                                 "cumulative_vs_status_quo_usd": 1.0}]}),
    ("fan_spec", {"fan": [{"option": "more of the same, as demand grows", "year": 0, "npv_to_date_usd_p10": -1.0,
                           "npv_to_date_usd_p50": 0.0, "npv_to_date_usd_p90": 1.0}]})])
def test_the_decode_charts_legend_names_each_option_whole(spec: str, data: dict[str, object]) -> None:
    import vl_convert

    from economics.report import charts

    svg = vl_convert.vegalite_to_svg({**getattr(charts, spec)(), "datasets": data})
    # the SVG's text elements as drawn: Vega-Lite's default cut it at 160 px ("more of the same, as demand gr…")
    assert "more of the same, as demand grows" in re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def test_the_decode_worked_example_report_has_the_refresh_and_the_lpx() -> None:
    from tests.test_retrofit_odds import EXAMPLE

    text = text_of(build.decode_report(EXAMPLE, when=WHEN))
    assert "Whentoreplacethefleet:NPVbyyearskept(best:after" in text
    assert "sn50:bestin" in text and "groq3-lpx:none(noprice)" in text


def test_the_plan_example_report_from_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "plan.pdf"
    code = main(["report", str(DOCS / "plan-example.csv"), "--row", "worked-plan", "--kind", "plan",
                 "--candidates", str(DOCS / "plan-candidates.csv"), "--baseline", "worked-plan-peaks", "-o", str(out)])
    pdf = out.read_bytes()
    assert code == 0 and pdf.startswith(b"%PDF") and 1 <= pages(pdf) <= 3
    assert "Costperday" in text_of(pdf) and "vsbaseline" in text_of(pdf)


def test_the_command_line_cost_report_by_number(tmp_path: Path) -> None:
    out = tmp_path / "r.pdf"
    assert main(["report", str(DOCS / "example.csv"), "--row", "number:1", "-o", str(out)]) == 0
    result = evaluate_scenario(as_scenario(row(DOCS / "example.csv", "worked-example")))
    assert squeezed(fmt.kpi("cost_usd_per_m_tokens", result, None).value) in text_of(out.read_bytes())


def test_exit_codes_for_a_bad_row_and_a_bad_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("name,pue\nbroken,-3\n", encoding="utf-8")
    assert main(["report", str(bad), "--row", "broken", "-o", str(tmp_path / "x.pdf")]) == 1
    assert main(["report", str(DOCS / "example.csv"), "--row", "nope", "-o", str(tmp_path / "x.pdf")]) == 2
    assert main(["report", str(DOCS / "example.csv"), "--row", "worked-example", "-o",
                 str(tmp_path / "missing" / "x.pdf")]) == 2
    assert main(["report", str(DOCS / "example.csv"), "--row", "worked-example", "-o", str(tmp_path)]) == 2
    assert not (tmp_path / "x.pdf").exists()
    assert "Traceback" not in capsys.readouterr().err


def test_a_day_with_a_tariff_and_carbon_reports_the_energy_and_carbon_panel() -> None:
    # the Cost page's panel: each of its KPIs as the page formats it, the reserved tier's lines, the hourly chart
    scenario = {**economics.default_scenario().model_dump(), "electricity_tariff": "sce-tou-8-d-summer",
                "grid_region": "fr", "carbon_usd_per_tonne": 100.0, "ownership": "rent", "rent_tier": "reserved"}
    result = evaluate_scenario(economics.Scenario.model_validate(scenario))
    assert build.day_matters(result) and not build.day_matters(evaluate_scenario(economics.default_scenario()))
    pdf = build.scenario_report(scenario, when=WHEN)
    assert 1 <= pages(pdf) <= 3
    text = text_of(pdf)
    for name in [n for r in kpis.DAY_ROWS for n in r] + list(kpis.TIER_ROWS["reserved"]):
        shown = kpis.stated(name, result) or fmt.kpi(name, result, None).value
        assert squeezed(shown) in text, name
    assert squeezed("The day hour by hour") in text


def test_every_script_a_name_can_hold_is_printed() -> None:
    # Typst's own fonts have no CJK, Devanagari, Thai, Ethiopic or emoji glyph: such a name printed as empty boxes
    # (pypdf reads a box back as a blank). With the fonts of document.FONT_DIRS each piece prints as itself
    pieces = ["数据中心", "서울", "東京ラボ", "🚀", "ภาษา", "አማርኛ", "Ελλάδα", "Київ"]
    shaped = ["مركز", "हिन्दी"]  # read back in their visual order (right to left; a vowel sign before its consonant)
    pdf = build.scenario_report({**economics.default_scenario().model_dump(), "name": " ".join(pieces + shaped)},
                                when=WHEN)
    text = text_of(pdf)
    assert [p for p in pieces if p not in text] == []
    assert [p for p in shaped if not set(p) <= set(text)] == []


def test_bidi_overrides_and_isolates_are_removed_from_user_text() -> None:
    # a right-to-left override (U+202E) printed the rest of the name reversed ("fleet-gpj.exe" as "exe.jpg-teelf");
    # isolates (U+2066-U+2069) likewise steer the text; the letters stay, in the order they were typed
    name = "fleet\u202egpj.exe \u2066isolated\u2069 \u202bembedded\u202c"
    base = {**economics.default_scenario().model_dump(), "name": "pinned\u202eenilesab"}
    pdf = build.scenario_report({**economics.default_scenario().model_dump(), "name": name}, base, when=WHEN)
    raw = "".join(p.extract_text() for p in pypdf.PdfReader(io.BytesIO(pdf)).pages)
    assert not set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069") & set(raw)
    assert "fleetgpj.exe" in text_of(pdf) and "isolated" in text_of(pdf) and "pinnedenilesab" in text_of(pdf)


@pytest.mark.parametrize("url", ["javascript:alert(document.cookie)", "file:///etc/passwd", "data:text/html,x",
                                 "https://", "http://host/\nnext line", "localhost:8501", ""])
def test_the_app_url_must_be_an_http_address(url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # before, --app-url javascript:... was printed as the report's link
    out = tmp_path / "r.pdf"
    capsys.readouterr()
    assert main(["report", str(DOCS / "example.csv"), "--row", "worked-example", "-o", str(out),
                 "--app-url", url]) == 2
    err = capsys.readouterr().err
    assert "argument --app-url: must be an http:// or https:// address with a host" in err and not out.exists()
    with pytest.raises(ValueError, match="http:// or https://"):
        figures.app_link(economics.default_scenario().model_dump(), app_url=url)


def test_an_http_app_url_is_the_reports_link(tmp_path: Path) -> None:
    out = tmp_path / "r.pdf"
    assert main(["report", str(DOCS / "example.csv"), "--row", "worked-example", "-o", str(out),
                 "--app-url", "HTTPS://tco.example.com/app/"]) == 0
    assert "HTTPS://tco.example.com/app/?" in text_of(out.read_bytes())


def test_a_plan_report_names_the_pools_it_buys_or_rents(tmp_path: Path) -> None:
    # the worked plan of docs/how-to/plan.md: 2 GPU prefill systems (16 accelerators, 1 rack) at 212.65 USD/day each
    # = 425.30 USD/day, and 2 ASIC decode systems (32 accelerators, 2 racks) at 170.12 = 340.24 USD/day, both
    # owned: capex 2 x 200,000 = 400,000 and 2 x 160,000 = 320,000 USD. Before, the report gave only the totals
    out = tmp_path / "plan.pdf"
    assert main(["report", str(DOCS / "plan-example.csv"), "--row", "worked-plan", "--kind", "plan",
                 "--candidates", str(DOCS / "plan-candidates.csv"), "-o", str(out)]) == 0
    text = text_of(out.read_bytes())
    assert "Thepoolstheplanbuysorrents" in text
    assert "gpu-own—prefillbuys2161" in text and "$400,000$425.30100.0%" in text
    assert "asic-own—decodebuys2322" in text and "$320,000$340.2478.1%" in text
    rows = kpis.pool_rows({"plan": [{"name": "spot-gpu", "ownership": "rent", "tier": "spot", "role": "decode",
                                     "systems": 3}]})
    assert rows[0]["ownership"] == "rents (spot)" and rows[0]["systems"] == "3" and rows[0]["capex_usd"] == "—"


def test_the_sessions_report_prints_the_pages_kpis_and_charts(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.pdf"
    path = DOCS / "example-sessions.csv"
    assert main(["report", str(path), "--row", "agent-b200-host", "--kind", "sessions", "--baseline", "agent-b200",
                 "-o", str(out)]) == 0
    pdf = out.read_bytes()
    assert pdf.startswith(b"%PDF") and 1 <= pages(pdf) <= 5
    text = text_of(pdf)
    rows = list(csv.DictReader(line for line in path.open(encoding="utf-8") if not line.startswith("#")))
    scenario = {k: v for k, v in next(r for r in rows if r["name"] == "agent-b200-host").items()
                if v != "" and k in economics.FIELDS}
    result = evaluate_scenario(as_scenario(scenario))
    # 21 x (9,000 + 1,500) + 1,650 x 21 x 20 / 2 = 567,000 input tokens a session, as the page prints it
    assert "567,000" in text
    for name in [n for r in kpis.SESSION_ROWS for n in r]:
        shown = kpis.stated(name, result) or fmt.kpi(name, result, None).value
        assert squeezed(shown) in text, name
    for title in ("Wherethesession'sinputtokensarefound", "Thecontexteachturnreads", "Speedacrossthesession"):
        assert title in text
    assert "vsbaseline" in text and "Agentsessions" in text
    # a request row has no session: the row and the field named, no PDF written
    assert main(["report", str(DOCS / "example.csv"), "--row", "1", "--kind", "sessions", "-o",
                 str(tmp_path / "r.pdf")]) == 1
    assert "row 1 (worked-example): workload: the per-turn profile is of workload=sessions" in capsys.readouterr().err
    assert not (tmp_path / "r.pdf").exists()
