"""The app's state under ``streamlit.testing``: hostile links on every page (no exception, a warning naming each bad
parameter, user text never rendered as Markdown), navigation across every page without a value changing, and
links that reproduce every KPI and table on every page."""

from __future__ import annotations

import re
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

import economics
from economics import FIELDS, store
from tests.test_app import APP, EDITOR_PAGES, set_field, start
from ui import editor, links

LINK_PAGES = (*EDITOR_PAGES, "plan")  # every page that reads the link (the Data page shows catalogs only)
EVIL_NAME = "[Your session expired - sign in](https://evil.example)"
PIXEL = "![t](http://127.0.0.1:9/pixel.gif)"


def reported_links() -> list[tuple[dict[str, Any], list[str]]]:
    """(query, the parameter names a warning must name): the cases reported against the app, and their kin."""
    return [
        ({"baseline.accelerator": "sn50"}, []),
        ({"baseline.output_tokens_per_s_per_accelerator": ""}, []),
        ({"output_tokens_per_s_per_accelerator": "", "model": "deepseek-v3"}, []),
        ({"pue": "5"}, []),
        ({"accelerator": "sn50"}, []),
        ({"decode_accelerator": "sn50", "existing_accelerators": "64"}, []),
        ({EVIL_NAME: "1"}, ["evil.example"]),
        ({"baseline.name": PIXEL}, []),
        ({"name": PIXEL}, []),
        ({"v": "99"}, ["version"]),
        ({"scenario": PIXEL}, ["scenario"]),  # issue #45: a stored version that is not there, named as plain text
        ({"scenario": ["q3@1", "q3@999999999999"]}, ["scenario"]),
        ({"model": "gpt-17"}, ["model"]),
        ({"accelerator": "h100-sx"}, ["accelerator"]),
        ({"pue": ["1.2", "1.3"]}, ["pue"]),
        ({"electricity_usd_per_kwh": "x" * 5000}, ["electricity_usd_per_kwh"]),
        ({"settings.samples": "5"}, ["settings.samples"]),
        ({"settings.samples": "99999999"}, ["settings.samples"]),
        ({"settings.seed": "-1"}, ["settings.seed"]),
        ({"settings.compare": "b200,nope"}, ["settings.compare"]),
        ({"settings.pue_low": "abc"}, ["settings.pue_low"]),
        ({"settings.colour": "red"}, ["settings.colour"]),
        ({"settings.plan_objective": "cheapest"}, ["settings.plan_objective"]),
        ({"settings.plan_ttft_percentile": "1"}, ["settings.plan_ttft_percentile"]),
        ({"settings.plan_accelerators": "b200,[x](https://evil.example)"}, ["settings.plan_accelerators"]),
        ({"settings.plan_demand_profile": "1 2 3"}, ["settings.plan_demand_profile"]),
        ({"plan.max_racks": "-3"}, ["settings.plan_max_racks"]),
        ({"baseline.pue": "0.5"}, ["pue"]),
        # issue #44: a setting read by a second parser (0,5 opened as 5 USD/kWh), a diurnal day no hour can hold
        ({"settings.electricity_usd_per_kwh_high": "0,5"}, ["settings.electricity_usd_per_kwh_high"]),
        ({"demand_profile": "diurnal", "peak_to_average": "30", "electricity_tariff": "sce-tou-8-d-summer"},
         ["demand_profile"]),
    ]


def generated_links() -> list[tuple[dict[str, Any], list[str]]]:
    """Out of range below and above, and not a number, for every numeric field of the schema."""
    cases: list[tuple[dict[str, Any], list[str]]] = []
    for name, spec in FIELDS.items():  # out of range, and not a number, for every numeric field
        if not spec.kind.numeric:
            continue
        if spec.ge is not None or spec.gt is not None:
            low = (spec.ge if spec.ge is not None else spec.gt) or 0.0
            cases.append(({name: repr(float(low) - 1.0)}, [name]))
        if spec.le is not None:
            cases.append(({name: repr(float(spec.le) * 10 + 1)}, [name]))
        cases.append(({name: "nan"}, [name]))
    return cases


REPORTED = reported_links()
GENERATED = generated_links()


def _outside_code_spans(text: str) -> str:
    return re.sub(r"(`+)(.+?)\1", "", text, flags=re.S)


def assert_plain(at: AppTest) -> None:
    """No Markdown-rendering element holds a link or an image outside a code span."""
    for element in [*at.markdown, *at.caption, *at.warning, *at.error, *at.info, *at.success]:
        rest = _outside_code_spans(str(element.value))
        assert "](" not in rest and "evil.example" not in rest and "127.0.0.1:9" not in rest, element.value


def page_cases(page: str) -> list[tuple[dict[str, Any], list[str]]]:
    """The reported cases on every page; the generated ones dealt out over the pages, each run on exactly one (the
    parser itself meets every case on its own, below: a page adds the drawing of the warning and a run on the
    defaults, the same for every generated case)."""
    return REPORTED + GENERATED[LINK_PAGES.index(page)::len(LINK_PAGES)]


@pytest.mark.parametrize("page", LINK_PAGES)
def test_hostile_links_are_named_and_never_fatal(page: str) -> None:
    for query, named in page_cases(page):
        at = AppTest.from_file(APP, default_timeout=120)
        for name, value in query.items():
            at.query_params[name] = value
        if page != "cost":
            at.switch_page(f"ui/{page}.py")
        at.run()
        assert not at.exception, (page, query, [e.value for e in at.exception])
        warnings = " ".join(str(w.value) for w in at.warning)
        for name in named:
            assert name in warnings, (page, query, warnings)
        assert_plain(at)


def test_every_hostile_link_is_named_by_the_link_reader() -> None:
    # the reader every page calls first: it never raises, and its warnings name each bad parameter (a stored
    # version is looked up in an empty store here, so a reference to one is named as missing)
    for query, named in REPORTED + GENERATED:
        warnings = " ".join(links.read_whole_link(query, resolve=_nothing_stored).warnings)
        for name in named:
            assert name in warnings, (query, warnings)


def _nothing_stored(reference: str) -> links.Stored:
    raise store.StoreError(f"no stored scenario {reference!r}", "scenario", reference)


def test_every_case_is_checked_on_every_page_somewhere() -> None:
    assert len(GENERATED) > 100  # the schema gives three cases per numeric field
    dealt = [case for page in LINK_PAGES for case in page_cases(page)[len(REPORTED):]]
    assert len(dealt) == len(GENERATED) and all(case in dealt for case in GENERATED)


def state_after_edits(at: AppTest) -> None:
    """Edits including a value equal to a default (the electricity price set to its default again)."""
    set_field(at, "electricity_usd_per_kwh", "0.11")
    set_field(at, "electricity_usd_per_kwh", economics.default_scenario().electricity_usd_per_kwh)
    set_field(at, "accelerator_count", "512")
    set_field(at, "pue", "1.35")
    at.button(key="pin_baseline").click().run()
    set_field(at, "demand_output_tokens_per_day", "6e9")
    assert not at.exception and not at.error, [e.value for e in at.error]


def snapshot(at: AppTest) -> dict[str, Any]:
    return {"metrics": [(m.label, m.value, m.delta) for m in at.metric],
            "tables": [d.value.to_json(orient="records") for d in at.dataframe] + [h.value for h in at.html]}


def test_navigation_across_every_page_changes_no_value() -> None:
    at = start()
    state_after_edits(at)
    scenario, settings, baseline = (dict(at.session_state[k]) for k in ("scenario", "settings", "baseline"))
    query = dict(at.query_params)
    cost_page = snapshot(at)
    for page in [*LINK_PAGES[1:], "data", *reversed(LINK_PAGES)]:
        at.switch_page(f"ui/{page}.py").run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert at.session_state["scenario"] == scenario, page
        assert at.session_state["settings"] == settings and at.session_state["baseline"] == baseline, page
        if page != "data":
            assert dict(at.query_params) == query, page
    assert snapshot(at) == cost_page


def plan_edits_in_one_run(at: AppTest) -> None:
    """The Plan page's objective, rack limit and first price edit made as edits before one rerun are: one run, one
    plan solved for the three (each a run of its own solved a plan for each, seconds of CPU apiece, of states the
    test never reads)."""
    if "electricity_usd_per_kwh" not in {w.key for w in at.text_input}:
        at.pills(key=editor.SECTION_KEY).set_value(editor.section("electricity_usd_per_kwh")).run()
    at.selectbox(key="plan_objective").set_value("npv")
    at.text_input(key="plan_max_racks").set_value("40")
    at.text_input(key="electricity_usd_per_kwh").set_value("0.12").run()
    settings, scenario = at.session_state["settings"], at.session_state["scenario"]
    assert (settings["plan_objective"], settings["plan_max_racks"]) == ("npv", 40.0), settings
    assert scenario["electricity_usd_per_kwh"] == 0.12, scenario


@pytest.mark.parametrize("page", LINK_PAGES)
def test_a_link_reproduces_every_kpi_and_table(page: str) -> None:
    at = start(page)
    if page == "decode":
        at.button(key="load_example").click().run()
        at.text_input(key="decode_accelerator_price_usd").set_value("45000").run()
    if page == "sessions":  # a request scenario has no session KPIs: switch it first
        at.button(key="switch_to_sessions").click().run()
    if page == "plan":
        at.button(key="plan_example").click().run()
        plan_edits_in_one_run(at)
    else:
        set_field(at, "electricity_usd_per_kwh", "0.12")
    if page != "scenarios":
        at.button(key="pin_baseline").click().run()
    set_field(at, "accelerator", "h200-sxm")
    set_field(at, "electricity_usd_per_kwh", economics.default_scenario().electricity_usd_per_kwh)  # = default
    set_field(at, "name", PIXEL)
    assert not at.exception
    shown = snapshot(at)
    query = {str(k): str(v) for k, v in dict(at.query_params).items()}
    again = start(page, query)
    assert again.session_state["scenario"] == at.session_state["scenario"]
    assert again.session_state["baseline"] == at.session_state["baseline"]
    assert again.session_state["settings"] == at.session_state["settings"]
    assert shown["metrics"] or page == "scenarios"
    assert snapshot(again) == shown
    assert_plain(again)


def test_the_link_is_the_whole_state() -> None:
    scenario = {**links.default_scenario(), "pue": 1.4, "accelerator_count": None}
    settings = {**links.default_settings(), "samples": 2000, "compare": ("b200",), "plan_ttft_target_s": 1.5,
                "plan_accelerators": (), "plan_objective": "npv", "plan_spares": False, "plan_max_racks": 8.0,
                "plan_demand_profile": " ".join(["1"] * 23 + ["4"])}
    query = links.link_query(scenario, settings, {**links.default_scenario(), "name": PIXEL})
    read = links.read_link(query)
    assert read == (scenario, settings, {**links.default_scenario(), "name": PIXEL}, [])


def test_a_link_the_engine_could_not_compute_opens_with_its_value_named() -> None:
    # issue #44: diurnal at peak_to_average 30 with a tariff showed "This app has encountered an error"; a range end
    # of 0,5 opened as 5 USD/kWh
    at = AppTest.from_file(APP, default_timeout=120)
    for name, value in {"demand_profile": "diurnal", "peak_to_average": "30",
                        "electricity_tariff": "sce-tou-8-d-summer",
                        "settings.electricity_usd_per_kwh_high": "0,5"}.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    warnings = " ".join(str(w.value) for w in at.warning)
    assert "demand_profile: a 24-hour diurnal profile (demand_profile diurnal) must peak below 23.976" in warnings
    assert "settings.electricity_usd_per_kwh_high: '0,5' is not a number" in warnings
    scenario, settings = at.session_state["scenario"], at.session_state["settings"]
    assert (scenario["demand_profile"], scenario["peak_to_average"]) == ("flat", 30.0)
    assert settings["electricity_usd_per_kwh_high"] is None
