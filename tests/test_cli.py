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


def test_template_round_trips_through_evaluate(tmp_path: Path) -> None:
    t = cli("template")
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
    assert "= 8 x 30,000 USD x CRF(0.08 1/year, 5 year) 0.2505 1/year / 8,760 h/year = 6.862 USD/h" in e.stdout
    assert "accelerator_power_kw = 1.275 kW   (catalog h100-sxm:" in e.stdout
    assert "electricity_usd_per_kwh = 0.0806 USD/kWh   (default:" in e.stdout
    assert cli("explain", src, "--row", "1").stdout == e.stdout
    missing = cli("explain", src, "--row", "fleet-b")
    assert missing.returncode == 2 and "did you mean 'fleet-a'?" in missing.stderr


def test_contract_check_passes_for_the_foundation() -> None:
    check = ROOT.parent / "shared" / "checks" / "contract.py"
    if not check.exists():
        pytest.fail(f"contract check not found at {check}")
    r = subprocess.run([sys.executable, str(check)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    foundation_missing = [line for line in r.stdout.splitlines() if "missing:" in line and "(foundation)" in line]
    assert not foundation_missing, r.stdout
