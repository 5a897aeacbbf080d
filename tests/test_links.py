"""Shareable links: round trip, and every kind of bad parameter reported by name without failing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

import economics
import economics.schema.validation
from economics.studies import planner
from economics.studies.links import decode_checked, decode_query, encode_query, query_string
from ui import links
from ui.format import usd_rate

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def test_round_trip_reproduces_the_scenario() -> None:
    base = economics.default_scenario()
    changed = base.model_copy(update={"accelerator": "b200", "electricity_usd_per_kwh": 0.123, "pue": 1.3,
                                      "accelerator_count": 64, "rent_includes_energy": False, "model": None})
    query = encode_query(changed, base)
    assert query == {"v": "1", "accelerator": "b200", "accelerator_count": "64", "rent_includes_energy": "false",
                     "electricity_usd_per_kwh": "0.123", "pue": "1.3", "model": ""}
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
    assert shown == usd_rate(expected["cost_usd_per_m_tokens"])  # the unit is in the KPI's label
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
    at.query_params["settings.open"] = "share"  # the share panel open: its link is drawn only then (ui.common.share)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["scenario"][key] == value  # the app's working scenario (ui/state.py), not a widget
    assert any("unknown parameter 'bogus'" in w.value for w in at.warning)
    assert any(f"{key}=" in c.value for c in at.code)  # the share link carries the value on


# --- issue 13: odd link inputs never raise; every bad parameter is named ---------------------------------

@pytest.mark.parametrize("params, expected_values, words", [
    ({"pue": []}, {}, "pue: no value given; the default is used"),
    ({"pue": [[]]}, {}, "pue: [] (list) is not a number"),
    ({"pue": None}, {"pue": None}, ""),
    ({"pue": 1.3}, {"pue": 1.3}, ""),
    ({"pue": b"1.3"}, {}, "pue: b'1.3' (bytes) is not a number"),
    ({"accelerator_count": "1_000"}, {}, "accelerator_count: '1_000' is not a number"),
    ({"accelerator_count": "\u0661\u0662"}, {}, "accelerator_count: '\u0661\u0662' is not a number"),
    ({"accelerator_count": "\uff11\uff12"}, {}, "is not a number"),
    ({"rent_includes_energy": "f"}, {"rent_includes_energy": False}, ""),
    ({"rent_includes_energy": "Y"}, {"rent_includes_energy": True}, ""),
    ({"electricity_usd_per_kwh": ""}, {"electricity_usd_per_kwh": 0.0806}, ""),  # empty = default, as in CSV
    ({"output_tokens_per_s_per_accelerator": ""}, {"output_tokens_per_s_per_accelerator": None}, ""),
    ({"v": []}, {}, "link version '' is not 1"),
    ({7: "x"}, {}, "unknown parameter '7' ignored"),
    ({"na\x1bme": "x"}, {}, "unknown parameter 'na\\x1bme' ignored"),
    ({"name": "a\x07b"}, {"name": "a\x07b"}, ""),  # kept as text; the page shows it as plain text
])
def test_odd_link_inputs_never_raise(params: dict[Any, Any], expected_values: dict[str, Any], words: str) -> None:
    values, warnings = decode_query(params)
    assert values == expected_values
    assert words in "\n".join(warnings)
    if not expected_values and words:
        assert warnings


def test_decoding_something_that_is_not_a_mapping_warns() -> None:
    for odd in (None, 5, "pue=1.2", [("pue", "1.2")]):
        values, warnings = decode_query(odd)  # type: ignore[arg-type]
        assert values == {} and warnings and "could not be read" in warnings[0]


def test_thousands_of_unknown_parameters_give_one_capped_warning() -> None:
    values, warnings = decode_query({f"junk{i}": "1" for i in range(10_000)} | {"pue": "1.2"})
    assert values == {"pue": 1.2}
    assert len(warnings) == 1 and "and 9,980 more unknown parameters ignored" in warnings[0]
    assert len(warnings[0]) < 1_000


def test_a_link_whose_values_are_invalid_together_falls_back_by_name() -> None:
    # sn40l has no published price: owning it cannot be costed, so the link's accelerator is not used
    values, warnings = decode_checked({"accelerator": "sn40l", "electricity_usd_per_kwh": "0.2"})
    assert values == {"electricity_usd_per_kwh": 0.2}
    assert any("accelerator_price_usd: not in the catalog for 'sn40l'" in w for w in warnings)
    assert any("the link's values that lead to it are not used" in w for w in warnings)
    economics.evaluate_scenario(economics.with_changes(economics.default_scenario(), **values))
    # a measured throughput emptied by the link: the model estimates it, or the link's value is dropped
    values, warnings = decode_checked({"output_tokens_per_s_per_accelerator": "", "model": "deepseek-v3"})
    economics.evaluate_scenario(economics.with_changes(economics.default_scenario(), **values))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.one_of(st.sampled_from([*economics.FIELDS, "v", "junk"]), st.text(max_size=5),
                                 st.integers()),
                       st.one_of(st.none(), st.integers(), st.floats(), st.booleans(), st.text(max_size=30),
                                 st.binary(max_size=5),
                                 st.lists(st.one_of(st.text(max_size=10), st.none(), st.lists(st.integers())),
                                          max_size=3)),
                       max_size=6))
def test_checked_decoding_never_raises_and_always_gives_a_valid_scenario(params: dict[Any, Any]) -> None:
    values, warnings = decode_checked(params)
    merged = economics.with_changes(economics.default_scenario(), **values)
    cols, problems = economics.schema.validation.validate(pd.DataFrame([merged]))
    assert problems == []
    assert all(isinstance(w, str) and w for w in warnings)


# --- the planner's settings in the full-state link (ui/links.py) -------------------------------------------------

PLAN_VALUES = {"plan_ttft_target_s": 0.75, "plan_ttft_percentile": 0.9, "plan_prefill_service_cv2": 0.0,
               "plan_demand_profile": "flat", "plan_max_racks": 0.0, "plan_capex_budget_usd": 2.5e7,
               "plan_objective": "npv", "plan_spares": False, "plan_allow_rent": False,
               "plan_max_pools": 5, "plan_min_rental_hours": 24.0, "plan_min_pool_systems": 2,
               "plan_accelerators": ("b200", "mi300x"), "plan_rent_tiers": "on_demand;reserved;spot",
               "plan_carbon_cap_tco2e_per_year": 1200.0, "plan_max_spot_share": 0.5}


def test_every_plan_setting_travels_in_the_link_and_back() -> None:
    defaults = links.default_settings()
    assert set(PLAN_VALUES) == {k for k in defaults if k.startswith("plan_")}  # every planner setting is here
    for name, value in PLAN_VALUES.items():
        assert value != defaults[name], name
        query = links.link_query(links.default_scenario(), {**defaults, name: value}, None)
        assert list(query) == ["v", f"settings.{name}"], query
        _, chosen, _, warnings = links.read_link(query)
        assert (chosen[name], warnings) == (value, []), (name, query)
    # zero racks is a limit (nothing on site), not "no limit": it stays 0, and empty stays empty
    assert links.link_query(links.default_scenario(), {**defaults, "plan_max_racks": 0.0}, None)[
        "settings.plan_max_racks"] == "0"
    assert links.read_link({"settings.plan_ttft_target_s": ""})[1]["plan_ttft_target_s"] is None


def test_plan_links_of_the_earlier_form_are_read() -> None:
    _, chosen, _, warnings = links.read_link({"plan.objective": "npv", "plan.accelerators": "b200,h200-sxm",
                                                "plan.ttft_target_s": "", "plan.spares": "false"})
    assert warnings == []
    assert (chosen["plan_objective"], chosen["plan_accelerators"]) == ("npv", ("b200", "h200-sxm"))
    assert chosen["plan_ttft_target_s"] is None and chosen["plan_spares"] is False
    assert links.plan_settings(chosen) == planner.PlanSettings(
        ttft_target_s=None, objective="npv", spares=False, demand_profile="diurnal")


@pytest.mark.parametrize("params, named", [
    ({"settings.plan_objective": "cheapest"}, "settings.plan_objective: 'cheapest' is not one of cost_per_day, npv"),
    ({"settings.plan_ttft_percentile": "1"}, "settings.plan_ttft_percentile: must be > 0 and < 1"),
    ({"settings.plan_max_racks": "-1"}, "settings.plan_max_racks: must be >= 0"),
    ({"settings.plan_prefill_service_cv2": ""}, "settings.plan_prefill_service_cv2: needs a value"),
    ({"settings.plan_spares": "perhaps"}, "settings.plan_spares: 'perhaps' is not true or false"),
    ({"settings.plan_demand_profile": "1 2"}, "settings.plan_demand_profile:"),
    ({"settings.plan_accelerators": "b200,h100-sx"}, "settings.plan_accelerators:"),
    ({"plan.colour": "red"}, "unknown parameter 'settings.plan_colour' ignored"),
])
def test_bad_plan_settings_are_named_and_left_at_the_default(params: dict[str, str], named: str) -> None:
    _, chosen, _, warnings = links.read_link(params)
    assert chosen == links.default_settings()
    assert len(warnings) == 1 and named in warnings[0], warnings


def _optional(values: Any) -> Any:
    return st.one_of(st.none(), values)


PLAN_SETTING_VALUES = st.fixed_dictionaries({
    "plan_ttft_target_s": _optional(st.floats(min_value=1e-6, max_value=3600)),
    "plan_ttft_percentile": st.floats(min_value=1e-6, max_value=0.999999),
    "plan_prefill_service_cv2": st.floats(min_value=0, max_value=10),
    "plan_demand_profile": st.one_of(st.sampled_from(["peak", "flat", "diurnal"]), st.lists(
        st.floats(min_value=0.01, max_value=100).map(lambda x: f"{x:.4g}"), min_size=24, max_size=24).map(" ".join)),
    "plan_max_racks": _optional(st.floats(min_value=0, max_value=1e6)),
    "plan_capex_budget_usd": _optional(st.floats(min_value=0, max_value=1e13)),
    "plan_objective": st.sampled_from(["cost_per_day", "npv"]),
    "plan_spares": st.booleans(), "plan_allow_rent": st.booleans(),
    "plan_accelerators": st.lists(st.sampled_from(economics.catalog.accelerator_ids()), unique=True, max_size=6
                                  ).map(tuple),
})


@settings(max_examples=40, deadline=None)
@given(PLAN_SETTING_VALUES)
def test_any_valid_plan_settings_come_back_from_the_link_exactly(values: dict[str, Any]) -> None:
    chosen = {**links.default_settings(), **values}
    query = links.link_query(links.default_scenario(), chosen, None)
    _, read, _, warnings = links.read_link(query)
    assert (read, warnings) == (chosen, [])
    links.plan_settings(read)  # and the planner accepts them


def test_a_named_profile_is_read_in_any_case_and_linked_in_one() -> None:
    _, chosen, _, warnings = links.read_link({"settings.plan_demand_profile": " Flat "})
    assert (chosen["plan_demand_profile"], warnings) == ("flat", [])
    assert links.link_query(links.default_scenario(), chosen, None)["settings.plan_demand_profile"] == "flat"


def test_a_link_naming_no_tariff_or_region_is_refused_by_name() -> None:
    # the hourly fields are checked as a table's cells are: an unknown id, or a value that is not 24 hours
    found, warnings = decode_query({"grid_region": "atlantis", "electricity_tariff": "0.074",
                                                            "demand_profile": "1;2", "grid_carbon_by_hour": "FR"})
    assert found == {}, found
    for field in ("grid_region", "electricity_tariff", "demand_profile", "grid_carbon_by_hour"):
        assert any(w.startswith(f"{field}:") for w in warnings), (field, warnings)
    assert any("atlantis" in w and "the default is used" in w for w in warnings), warnings
    # a catalog id in any case is read as the catalog's
    found, warnings = decode_query({"grid_region": "FR", "electricity_tariff": "DE-LU-Day-Ahead-2024"})
    assert found == {"grid_region": "fr", "electricity_tariff": "de-lu-day-ahead-2024"} and warnings == [], warnings


# --- issue 44: a link is read by the one value parser and the rules a table's rows are held to -------------------

@pytest.mark.parametrize("name, text, words", [
    ("electricity_usd_per_kwh_high", "0,5", "'0,5' is not a number [USD/kWh]"),  # was read as 5 USD/kWh
    ("electricity_usd_per_kwh_high", "1_0000", "'1_0000' is not a number"),
    ("electricity_usd_per_kwh_high", "\u0663", "'\u0663' is not a number"),  # Arabic-Indic 3
    ("electricity_usd_per_kwh_high", "\uff13", "'\uff13' is not a number"),  # full-width 3
    ("electricity_usd_per_kwh_high", "11", "must be >= 0 and <= 10 [USD/kWh], got 11"),  # the field's bounds
    ("pue_low", "0.5", "must be >= 1 and <= 5, got 0.5"),
    ("samples", "1_000", "'1_000' is not a number"),
    ("seed", "1,0", "'1,0' is not a number"),
])
def test_page_settings_are_read_by_the_value_parser_and_the_fields_bounds(name: str, text: str, words: str) -> None:
    _, chosen, _, warnings = links.read_link({f"settings.{name}": text})
    assert chosen[name] == links.default_settings()[name]
    assert len(warnings) == 1 and warnings[0].startswith(f"settings.{name}: ") and words in warnings[0], warnings
    assert warnings[0].endswith("; the default is used")


def test_a_range_end_reads_as_a_table_range_cell() -> None:
    _, chosen, _, warnings = links.read_link({"settings.electricity_usd_per_kwh_high": " 0.5 ",
                                              "settings.pue_low": "", "settings.samples": "1e3"})
    assert (chosen["electricity_usd_per_kwh_high"], chosen["pue_low"], chosen["samples"], warnings) == (
        0.5, None, 1000, [])


def test_a_demand_profile_is_checked_against_the_links_own_peak_to_average() -> None:
    # 20 hours at 1 and 4 at 9: mean (20 + 36) / 24 = 2.3333, busiest 9 / 2.3333 = 3.857 x the average; valid with
    # the link's peak_to_average of 4, whatever the order (it was checked against the default scenario's 2)
    day = " ".join(["1"] * 20 + ["9"] * 4)
    for query in ({"demand_profile": day, "peak_to_average": "4"}, {"peak_to_average": "4", "demand_profile": day}):
        found, warnings = decode_checked(query)
        assert (found, warnings) == ({"peak_to_average": 4.0, "demand_profile": day}, [])
        scenario, _, _, warnings = links.read_link(query)
        assert (scenario["demand_profile"], scenario["peak_to_average"], warnings) == (day, 4.0, [])
    found, warnings = decode_query({"demand_profile": day, "peak_to_average": "3"})
    assert found == {"peak_to_average": 3.0}
    assert warnings == ["demand_profile: its busiest hour is 3.857 x the average, above peak_to_average; raise "
                        "peak_to_average to at least that (the fleet is sized for it); the default is used"]


def test_a_diurnal_link_peaking_above_what_a_day_holds_is_refused_by_name() -> None:
    # a diurnal day's busiest hour holds at most the whole day: 24 x the average (the engine took the table down)
    query = {"demand_profile": "diurnal", "peak_to_average": "30", "electricity_tariff": "sce-tou-8-d-summer"}
    found, warnings = decode_checked(query)
    assert found == {"peak_to_average": 30.0, "electricity_tariff": "sce-tou-8-d-summer"}
    assert warnings == ["demand_profile: a 24-hour diurnal profile (demand_profile diurnal) must peak below 23.976 x "
                        "the average (0.999 x 24 hours), got 30; the default is used"]
    economics.evaluate_scenario(economics.with_changes(economics.default_scenario(), **found))


# ---------------------------------------------------------------- a link naming a stored version (scenario=NAME@V)


@pytest.fixture
def stored_q3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> links.Stored:
    """Version 1 of 'q3' in a SQLite store of its own (8 rented H100s at 2 USD/h), as the link module reads it."""
    from economics import store
    from economics.store.database import URL_VARIABLE

    monkeypatch.setenv(URL_VARIABLE, f"sqlite:///{tmp_path / 'store.sqlite'}")
    store.open_store().save_scenario("q3", {"accelerator": "h100-sxm", "ownership": "rent", "accelerator_count": 8,
                                            "rent_usd_per_accelerator_hour": 2,
                                            "output_tokens_per_s_per_accelerator": 1000}, saved_by="ana")
    return links.stored_version("q3")


def test_a_stored_version_s_link_round_trips(stored_q3: links.Stored) -> None:
    assert stored_q3.reference == "q3@1" and stored_q3.scenario["accelerator_count"] == 8
    edited = {**stored_q3.scenario, "accelerator_count": 16, "pue": 1.5}
    query = links.link_query(edited, links.default_settings(), None, stored_q3)
    # the version, then only the changes made since it (not every field that differs from the default)
    assert query == {"v": "1", "scenario": "q3@1", "accelerator_count": "16", "pue": "1.5"}
    link = links.read_whole_link(query)
    assert link.scenario == edited and link.stored == stored_q3 and link.warnings == []
    assert links.read_link(query)[0] == edited  # the four-part reading: the same scenario


def test_a_field_emptied_since_the_stored_version_stays_empty(stored_q3: links.Stored) -> None:
    edited = {**stored_q3.scenario, "output_tokens_per_s_per_accelerator": None}
    query = links.link_query(edited, links.default_settings(), None, stored_q3)
    assert query["output_tokens_per_s_per_accelerator"] == ""
    assert links.read_whole_link(query).scenario == edited


@pytest.mark.parametrize(("raw", "says"), [
    ("q3@2", "scenario: scenario 'q3': no version 2 (versions 1 to 1); the default scenario is used"),
    ("budget", "scenario: scenario 'budget': not in the store"),
    ("", "scenario: empty; the default scenario is used"),
    ("x" * 300, "scenario: longer than 220 characters; the default scenario is used"),
])
def test_a_stored_version_that_cannot_be_read_is_named(stored_q3: links.Stored, raw: str, says: str) -> None:
    link = links.read_whole_link({"scenario": raw, "pue": "1.5"})
    assert link.stored is None and link.scenario == {**links.default_scenario(), "pue": 1.5}
    assert any(w.startswith(says) for w in link.warnings), link.warnings


def test_a_repeated_stored_version_uses_the_last(stored_q3: links.Stored) -> None:
    link = links.read_whole_link({"scenario": ["nope", "q3@1"]})
    assert link.stored == stored_q3 and link.warnings == ["scenario: given 2 times; the last value is used"]


def test_without_a_store_the_link_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from economics.store.database import URL_VARIABLE

    monkeypatch.setenv(URL_VARIABLE, f"sqlite:///{tmp_path / 'none.sqlite'}")
    link = links.read_whole_link({"scenario": "q3@1"})
    assert link.stored is None and "there is no store yet" in link.warnings[0]
    assert not (tmp_path / "none.sqlite").exists()  # reading a link never creates a store


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.fixed_dictionaries({}, optional={
    "pue": st.floats(1.0, 5.0, allow_nan=False), "accelerator_count": st.integers(1, 100_000),
    "electricity_usd_per_kwh": st.floats(0.0, 1.0, allow_nan=False), "ownership": st.sampled_from(["own", "rent"]),
    "output_tokens_per_s_per_accelerator": st.one_of(st.none(), st.floats(1.0, 1e5, allow_nan=False)),
    "model": st.sampled_from([None, "llama-3.1-70b", "deepseek-v3"]),
    "name": st.text(alphabet="abcXYZ019-_", min_size=1, max_size=20)}))
def test_any_change_since_a_stored_version_round_trips(stored_q3: links.Stored, edits: dict[str, Any]) -> None:
    # whatever is changed after opening q3@1 (a field set, emptied or put back), the link reads back that scenario
    edited = {**stored_q3.scenario, **edits}
    query = links.link_query(edited, links.default_settings(), None, stored_q3)
    assert query["scenario"] == "q3@1"
    assert set(query) - {"v", "scenario"} == {k for k, v in edits.items() if v != stored_q3.scenario[k]}
    link = links.read_whole_link(query)
    assert link.stored == stored_q3
    assert link.scenario == edited or any("cannot be evaluated" in w for w in link.warnings), link.warnings
