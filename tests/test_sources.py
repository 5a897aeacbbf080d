"""Every figure in data/ cites a source a reader can open, or (an estimate) says how it was derived.

The rules are checked here with the test's own patterns, independently of ``economics.catalog.sources``, and the Data
page is
checked to show every row's first URL as a link.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from economics import catalog
from economics.catalog.sources import first_url, source_urls

ROOT = Path(__file__).resolve().parents[1]
DATA_FILES = sorted((ROOT / "data").glob("*.csv"))
MY_FILES = ("accelerators.csv", "defaults.csv", "presets.csv", "api_prices.csv", "electricity_tariffs.csv",
            "grid_carbon.csv")
URL = re.compile(r"https?://\S+")
DERIVATION = re.compile(r"\b(derived|derivation|assumption|assumed)\b", re.IGNORECASE)
DATE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])(-\d{2})?$")
BANNED = (
    re.compile(r"reference notes", re.IGNORECASE),
    re.compile(r"published-figures", re.IGNORECASE),
    re.compile(r"\.\./"),
    re.compile(r"file://"),
    # an absolute path on a machine (not the path part of a URL): /work/..., /home/..., ~/...
    re.compile(r"(?<![\w.:/-])(?:~|/(?:work|home|tmp|mnt|Users|var|opt|root|srv))/"),
)
TEXT_COLUMNS = ("source", "note", "method")


def read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def row_problems(row: pd.Series) -> list[str]:
    """What is wrong with one row's citation ([] when nothing)."""
    problems = []
    source = row.get("source", "")
    texts = " ".join(str(row.get(c, "")) for c in TEXT_COLUMNS)
    if row.get("confidence") not in catalog.CONFIDENCE_TAGS:
        problems.append(f"confidence {row.get('confidence')!r} is not one of {catalog.CONFIDENCE_TAGS}")
    if not DATE.match(str(row.get("source_date", ""))):
        problems.append(f"source_date {row.get('source_date')!r} is not YYYY-MM")
    derivation = DERIVATION.search(texts) or str(row.get("method", "")).strip()  # calibration.csv: how it was fitted
    if not URL.search(source) and not (row.get("confidence") == "estimate" and derivation):
        problems.append(f"source {source!r} has no http(s) URL and is not an estimate that states its derivation")
    problems += [f"mentions {p.pattern!r}: {texts[:120]!r}" for p in BANNED if p.search(texts)]
    return problems


@pytest.mark.parametrize("path", DATA_FILES, ids=lambda p: p.name)
def test_every_row_cites_an_openable_source_or_a_derivation(path: Path) -> None:
    table = read(path)
    assert {"confidence", "source", "source_date"} <= set(table.columns), path.name
    failures = [f"{path.name} row {i + 2}: {p}" for i, row in table.iterrows() for p in row_problems(row)]
    assert not failures, f"{len(failures)} problem(s):\n" + "\n".join(failures[:40])


@pytest.mark.parametrize("name", MY_FILES)
def test_every_estimate_states_how_it_was_derived(name: str) -> None:
    table = read(ROOT / "data" / name)
    estimates = table[table["confidence"] == "estimate"]
    lacking = [i + 2 for i, row in estimates.iterrows()
               if not DERIVATION.search(" ".join(str(row.get(c, "")) for c in TEXT_COLUMNS))]
    assert not lacking, f"{name}: estimate rows without 'derived'/'assumption' in source or note: {lacking}"


def test_the_rules_catch_what_they_should() -> None:
    ok = pd.Series({"confidence": "listed", "source": "NVIDIA page https://www.nvidia.com/x", "source_date": "2024-03"})
    assert row_problems(ok) == []
    derived = pd.Series({"confidence": "estimate", "source": "own", "source_date": "2026-06",
                         "note": "derived: 10.2 kW / 8"})
    assert row_problems(derived) == []
    for bad in ({**ok, "source": "NVIDIA datasheet"},                          # no URL
                {**ok, "confidence": "estimate", "source": "own estimate"},     # estimate without derivation
                {**ok, "source": "notes /work/shared/x.md https://a.b/c"},      # local path
                {**ok, "source": "project reference notes https://a.b/c"},      # the notes file
                {**ok, "source": "see ../shared/reference https://a.b/c"},
                {**ok, "source_date": "Jan 2024"},
                {**ok, "confidence": "rumour"}):
        assert row_problems(pd.Series(bad)), bad


def test_url_extraction_by_hand() -> None:
    # A comma inside a URL stays, trailing punctuation and the closing bracket do not.
    text = ("Intel pricing (as reported, e.g. https://y-ic.de/news/gaudi3-slower-than-h100,but-at-a-lower-cost.html), "
            "and https://www.theregister.com/2024/04/09/intel_gaudi_ai_accelerator/.")
    assert source_urls(text) == ["https://y-ic.de/news/gaudi3-slower-than-h100,but-at-a-lower-cost.html",
                                 "https://www.theregister.com/2024/04/09/intel_gaudi_ai_accelerator/"]
    assert first_url("own estimate; derived: 3 x 2") == ""


def test_the_figures_that_move_the_answer_cite_urls() -> None:
    must = [("h100-sxm", "price_usd"), ("gb200-nvl72", "price_usd"), ("gb200-nvl72", "system_price_usd"),
            ("gb200-nvl72", "system_power_kw"), ("gb200-nvl72", "power_kw")]
    must += [(a, "rent_usd_per_hour") for a in ("a100-sxm", "h100-sxm", "h200-sxm", "b200", "gb200-nvl72",
                                                "mi300x", "mi325x", "mi355x")]
    for accelerator, field in must:
        row = catalog.accelerator_source(accelerator, field)
        assert row is not None and URL.search(row["source"]), (accelerator, field, row)
    for parameter in ("liquid_retrofit_usd_per_mw", "liquid_newbuild_usd_per_mw", "colocation_usd_per_kw_month",
                      "electricity_usd_per_kwh", "pue"):
        assert URL.search(catalog.default_source(parameter)["source"]), parameter


def test_no_preset_prices_hardware_at_zero() -> None:
    presets = read(ROOT / "data" / "presets.csv")
    price_columns = [c for c in presets.columns if c.endswith("price_usd")]
    assert price_columns
    for column in price_columns:
        zero = presets[presets[column].str.strip().isin({"0", "0.0"})]
        assert zero.empty, f"{column} is 0 in preset(s) {list(zero['name'])}"


def test_every_accelerator_states_its_interconnect() -> None:
    table = catalog.accelerators()
    assert {"a100-40gb", "l40s", "h20", "gaudi3", "mi355x"} <= set(table.index)
    assert set(table["interconnect"]) <= {"nvlink", "infinity-fabric", "pcie", "ethernet", "groq-c2c", "rdu-link",
                                         "ici", "neuronlink"}
    assert (table["interconnect_gb_per_s"] > 0).all() and (table["interconnect_latency_us"] > 0).all()
    # NVLink 4 is 900 GB/s both directions, so 450 GB/s per direction; PCIe Gen4 x16 is 64 GB/s -> 32.
    assert table.loc["h100-sxm", "interconnect_gb_per_s"] == 450
    assert table.loc["l40s", "interconnect_gb_per_s"] == 32
    # MI355X: 7 Infinity Fabric links x 153.6 GB/s = 1,075.2 GB/s both directions -> 537.6 per direction.
    assert table.loc["mi355x", "interconnect_gb_per_s"] == pytest.approx(7 * 153.6 / 2)


def test_data_page_links_every_source() -> None:
    at = AppTest.from_file(str(ROOT / "ui" / "data.py"), default_timeout=60)
    at.run()
    frames = []
    for tab in ("Accelerators", "Models", "Measured speeds", "Measured curves", "Defaults", "API prices",
                "Calibration"):
        at.session_state["data_tab"] = tab  # the page builds the open tab's table only (lazy tabs)
        at.run()
        # the curves tab leads with its sources by date (no source column of its own), then every point
        # the calibration tab adds the ranges an estimate carries and the leave-one-out errors
        assert not at.exception and len(at.dataframe) == {"Measured curves": 2, "Calibration": 3}.get(tab, 1), tab
        frames.extend(list(at.dataframe) if tab == "Calibration" else [at.dataframe[-1]])
    for frame in frames:
        shown = frame.value
        assert "link" in shown.columns and "source" in shown.columns
        with_url = shown["source"].astype(str).str.contains("http")
        assert (shown.loc[with_url, "link"].str.startswith("http")).all()
        assert (shown["link"] == shown["source"].astype(str).map(lambda s: (URL.findall(s) or [""])[0]
                                                                 .rstrip(".,:);"))).all()
