"""Shareable links: round trip, and every kind of bad parameter reported by name without failing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

import economics
from economics.links import decode_query, encode_query, query_string
from ui.format import usd_per_m_tokens

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def test_round_trip_reproduces_the_scenario() -> None:
    base = economics.default_scenario()
    changed = base.model_copy(update={"accelerator": "b200", "electricity_usd_per_kwh": 0.123, "pue": 1.3,
                                      "accelerator_count": 64, "rent_includes_energy": False, "model": None})
    query = encode_query(changed, base)
    assert query == {"v": "1", "accelerator": "b200", "accelerator_count": "64", "rent_includes_energy": "false",
                     "electricity_usd_per_kwh": "0.123", "pue": "1.3"}
    values, warnings = decode_query(query, base)
    assert warnings == []
    assert economics.with_changes(base, **values) == changed.model_dump()
    assert len(query_string(encode_query(economics.preset_scenarios()[list(economics.preset_scenarios())[-1]][0],
                                         base))) < 2000


def test_bad_parameters_are_named_and_ignored() -> None:
    values, warnings = decode_query({
        "pue": "0.5", "colour": "red", "accelerator": "h100-sx", "electricity_usd_per_kwh": ["0.1", "0.2"],
        "ownership": "lease", "accelerator_count": "2.5", "demand_output_tokens_per_day": "inf",
        "name": "x" * 500, "v": "7", "rent_includes_energy": "maybe",
    })
    assert values == {"electricity_usd_per_kwh": 0.2}
    text = "\n".join(warnings)
    for expected in ("pue: must be >= 1 and <= 5, got 0.5; the default is used", "unknown parameter 'colour' ignored",
                     "accelerator: unknown id 'h100-sx'; did you mean 'h100-sxm'?",
                     "electricity_usd_per_kwh: given 2 times; the last value is used",
                     "ownership: 'lease' is not one of own, rent", "accelerator_count: must be a whole number",
                     "demand_output_tokens_per_day: inf is not a finite number",
                     "name: value longer than 200 characters ignored", "link version '7' is not 1",
                     "rent_includes_energy: 'maybe' is not true or false"):
        assert expected in text, expected


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from([*economics.FIELDS, "v", "junk"]),
                       st.one_of(st.text(max_size=30), st.lists(st.text(max_size=10), min_size=1, max_size=3)),
                       max_size=6))
def test_decoding_never_raises_and_keeps_only_valid_values(params: dict[str, Any]) -> None:
    values, warnings = decode_query(params)
    merged = economics.with_changes(economics.default_scenario(), **values)
    economics.Scenario.model_validate(merged)  # every kept value is valid together with the defaults
    assert all(isinstance(w, str) and w for w in warnings)


def test_app_opens_a_link_with_its_values_and_warns_on_bad_ones() -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["electricity_usd_per_kwh"] = "0.2"
    at.query_params["pue"] = "0.5"
    at.query_params["colour"] = "red"
    at.run()
    assert not at.exception
    expected = economics.evaluate_scenario(economics.with_changes(economics.default_scenario(),
                                                                  electricity_usd_per_kwh=0.2))
    shown = next(m.value for m in at.metric if m.label == "Cost per M tokens")
    assert shown == usd_per_m_tokens(expected["cost_usd_per_m_tokens"])
    warnings = [w.value for w in at.warning]
    assert any("pue: must be >= 1" in w for w in warnings)
    assert any("unknown parameter 'colour'" in w for w in warnings)


@pytest.mark.parametrize("page, params, key, value", [
    ("fleet.py", {"accelerator": "b200", "headroom": "0.2"}, "accelerator", "b200"),
    ("throughput.py", {"model": "llama-3.1-8b", "precision": "bf16"}, "model", "llama-3.1-8b"),
    ("decode.py", {"existing_accelerators": "512", "decode_accelerator": "h200-sxm"}, "existing_accelerators", 512),
])
def test_every_page_opens_its_link(page: str, params: dict[str, str], key: str, value: Any) -> None:
    at = AppTest.from_file(str(Path(APP).parent / "ui" / page), default_timeout=120)
    for k, v in params.items():
        at.query_params[k] = v
    at.query_params["bogus"] = "1"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state[key] == value
    assert any("unknown parameter 'bogus'" in w.value for w in at.warning)
    assert any(f"{key}=" in c.value for c in at.code)  # the share link carries the value on
