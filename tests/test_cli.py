"""The command line, run as a user runs it: ``python -m economics ...`` in a subprocess."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import economics

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "economics", *args], cwd=ROOT, input=stdin, capture_output=True,
                          timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def write(tmp_path: Path, text: str, name: str = "in.csv") -> str:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


@pytest.fixture(scope="module")
def template() -> subprocess.CompletedProcess[str]:
    """``python -m economics template``, run once: the tests that read the template only read its output."""
    return cli("template")


def test_template_round_trips_through_evaluate(tmp_path: Path, template: subprocess.CompletedProcess[str]) -> None:
    t = template
    assert t.returncode == 0
    comments = [line for line in t.stdout.splitlines() if line.startswith("#")]
    assert any(line.startswith("# electricity_usd_per_kwh: [USD/kWh] >= 0 and <= 10;") for line in comments)
    header = next(csv.reader(line for line in io.StringIO(t.stdout) if not line.startswith("#")))
    assert header == list(economics.FIELDS)
    out = tmp_path / "out.csv"
    e = cli("evaluate", write(tmp_path, t.stdout), "-o", str(out))
    assert e.returncode == 0, e.stderr
    rows = list(csv.DictReader(out.read_text(encoding="utf-8").splitlines()))
    assert len(rows) == 1 and rows[0]["valid"] == "True"
    expected = economics.evaluate_scenario(economics.default_scenario())["cost_usd_per_m_tokens"]
    assert float(rows[0]["cost_usd_per_m_tokens"]) == pytest.approx(expected, rel=1e-12)


def test_schema_is_json_with_units_and_bounds() -> None:
    s = cli("schema")
    assert s.returncode == 0
    schema = json.loads(s.stdout)
    price = schema["properties"]["electricity_usd_per_kwh"]
    assert price["minimum"] == 0 and price["maximum"] == 10 and price["unit"] == "USD/kWh"
    pue = schema["properties"]["pue"]
    assert {"type": "number", "minimum": 1, "maximum": 5} in pue["anyOf"] and "Power usage" in pue["description"]
    assert set(schema["properties"]) == set(economics.FIELDS)


def test_partly_invalid_file_exits_1_and_still_writes_valid_rows(tmp_path: Path) -> None:
    src = write(tmp_path, "name,accelerator_count,output_tokens_per_s_per_accelerator\ngood,8,1000\nbad,-1,1000\n")
    out, report = tmp_path / "out.json", tmp_path / "errors.csv"
    e = cli("evaluate", src, "-o", str(out), "--format", "json", "--errors", str(report))
    assert e.returncode == 1
    assert "row 2 (bad): accelerator_count: must be >= 1" in e.stderr
    records = json.loads(out.read_text())
    assert [r["valid"] for r in records] == [True, False]
    assert records[0]["cost_usd_per_m_tokens"] > 0 and records[1]["cost_usd_per_m_tokens"] is None
    errors = list(csv.DictReader(report.read_text(encoding="utf-8").splitlines()))
    assert errors[0]["row"] == "2" and errors[0]["field"] == "accelerator_count" and errors[0]["value"] == "-1"


@pytest.mark.parametrize("content, words", [
    ("", "empty file"),
    ("name,acelerator\nx,h100-sxm\n", "unknown columns: 'acelerator' (did you mean 'accelerator'?)"),
])
def test_unusable_input_exits_2_naming_the_problem(tmp_path: Path, content: str, words: str) -> None:
    e = cli("evaluate", write(tmp_path, content))
    assert e.returncode == 2
    assert words in e.stderr


def test_binary_input_exits_2() -> None:
    e = cli("evaluate", "-", stdin=b"\x00\x01\x02PK\x03\x04")
    assert e.returncode == 2 and "binary" in e.stderr


def test_stdin_to_stdout_and_formula_cells_neutralised() -> None:
    e = cli("evaluate", "-", stdin=b"name,accelerator_count,output_tokens_per_s_per_accelerator\n"
                                   b"\"=HYPERLINK(\"\"http://x\"\")\",8,1000\n")
    assert e.returncode == 0, e.stderr
    row = next(csv.DictReader(io.StringIO(e.stdout)))
    assert row["name"].startswith("'=")


def test_explain_by_name_and_number(tmp_path: Path) -> None:
    src = write(tmp_path, "name,accelerator_count,output_tokens_per_s_per_accelerator,cost_of_capital,"
                          "accelerator_price_usd\nfleet-a,8,1000,0.08,30000\n")
    e = cli("explain", src, "--row", "fleet-a")
    assert e.returncode == 0, e.stderr
    assert "= 8 x 30,000 x 0.250456 / 8,760 = 6.862 USD/h" in e.stdout  # CRF(8 %, 5 y) = 0.250456
    assert "accelerator_power_kw = 1.275 kW   (catalog h100-sxm:" in e.stdout
    assert "electricity_usd_per_kwh = 0.0806 USD/kWh   (default:" in e.stdout
    assert cli("explain", src, "--row", "1").stdout == e.stdout
    missing = cli("explain", src, "--row", "fleet-b")
    assert missing.returncode == 2 and "did you mean 'fleet-a'?" in missing.stderr


# The public contract's names (DESIGN "One scenario, three spellings"), kept here so the suite reads nothing
# outside the repository; ../shared/checks/contract.py checks the same by hand.
CONTRACT_INPUTS = (  # noqa: SIM905 - one readable block of names
    "name accelerator model accelerator_count ownership rent_usd_per_accelerator_hour accelerator_price_usd "
    "accelerator_power_kw depreciation_years cost_of_capital electricity_usd_per_kwh pue facility_cooling "
    "colocation_usd_per_kw_month input_tokens_per_request output_tokens_per_request prefix_cache_hit_rate "
    "output_tokens_per_s_per_accelerator input_tokens_per_s_per_accelerator target_output_tokens_per_s_per_user "
    "demand_input_tokens_per_day demand_output_tokens_per_day peak_to_average price_usd_per_m_input_tokens "
    "price_usd_per_m_cached_input_tokens price_usd_per_m_output_tokens decode_accelerator decode_accelerator_count "
    "decode_output_tokens_per_s_per_accelerator"
).split()
CONTRACT_OUTPUTS = (  # noqa: SIM905 - one readable block of names
    "cost_usd_per_hour cost_usd_per_day cost_usd_per_m_tokens cost_usd_per_m_input_tokens "
    "cost_usd_per_m_output_tokens revenue_usd_per_day cost_profit_margin gross_margin utilization accelerators "
    "systems racks it_power_kw facility_power_kw feasible infeasible_reason"
).split()


def test_the_cli_speaks_the_contract(tmp_path: Path, template: subprocess.CompletedProcess[str]) -> None:
    header_line = [line for line in template.stdout.splitlines() if not line.startswith("#")][0]
    columns = header_line.split(",")
    assert [f for f in CONTRACT_INPUTS if f not in columns] == []
    src = write(tmp_path, "name,accelerator_count,output_tokens_per_s_per_accelerator\nfleet-a,8,1000\n")
    header = cli("evaluate", src).stdout.splitlines()[0].split(",")
    assert [f for f in CONTRACT_OUTPUTS if f not in header] == []


def test_retrofit_explain_prints_how_each_option_is_computed(tmp_path: Path) -> None:
    study = tmp_path / "study.csv"
    study.write_text("name,accelerator,output_tokens_per_s_per_accelerator,input_tokens_per_s_per_accelerator,"
                     "input_tokens_per_request,output_tokens_per_request,accelerators_per_replica,"
                     "round_to_whole_systems,peak_to_average,existing_accelerators,demand_output_tokens_per_day,"
                     "demand_growth_per_year,horizon_years,accelerator_price_usd,price_usd_per_m_output_tokens,"
                     "price_usd_per_m_input_tokens\n"
                     "hand,h100-sxm,1000,1e7,100,1000,1,false,1,4,6e8,0.5,3,30000,2,0\n")
    out = cli("retrofit", str(study), "--row", "hand", "--explain")
    assert out.returncode == 0, out.stderr
    for option in ("status quo", "more of the same", "more of the same, as demand grows"):
        assert f"\n{option}: " in "\n" + out.stdout
    assert out.stdout.count("npv_vs_status_quo_usd = sum of the present values") == 2  # not for the status quo
    # the fixed fleet's shortfall is said on stderr, year by year (4 / 6.9445 = 57.6 % of year 1)
    assert "note: status quo cannot serve the whole demand: served year 1 57.6 %" in out.stderr


def test_a_diurnal_day_no_hour_can_hold_is_a_named_invalid_row_and_the_others_are_written(tmp_path: Path) -> None:
    # issue #44: diurnal at peak_to_average 30 (a day's busiest hour holds at most 24 x the average) with a tariff
    # in the table made every command exit 3 and write nothing; now the row is refused by name, the rest computed
    path = write(tmp_path, "name,accelerator_count,output_tokens_per_s_per_accelerator,demand_output_tokens_per_day,"
                 "demand_profile,peak_to_average,electricity_tariff\n"
                 "ok,8,1000,1e9,flat,2,\n"
                 "bad,8,1000,1e9,diurnal,30,sce-tou-8-d-summer\n"
                 "tariff,8,1000,1e9,diurnal,3,sce-tou-8-d-summer\n")
    message = ("row 2 (bad): peak_to_average: a 24-hour diurnal profile (demand_profile diurnal) must peak below "
               "23.976 x the average (0.999 x 24 hours), got 30")
    out = tmp_path / "out.csv"
    e = cli("evaluate", path, "-o", str(out))
    assert e.returncode == 1 and message in e.stderr, e.stderr
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [(r["name"], r["valid"]) for r in rows] == [("ok", "True"), ("bad", "False"), ("tariff", "True")]
    for command in (["explain", path, "--row", "bad"], ["uncertainty", path, "--row", "bad", "--default-ranges"],
                    ["sweep", path, "--row", "bad", "--grid", "pue=1.1,1.2"]):
        r = cli(*command)
        assert r.returncode == 1 and message in r.stderr, (command, r.stderr)
    assert cli("explain", path, "--row", "tariff").returncode == 0
