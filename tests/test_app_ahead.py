"""The studies a session is likely to open next, made for its state once its run has ended (ui/ahead.py, issue #43):
they are the very entries the Cost, Fleet, Throughput and Uncertainty pages read, so a switch to one computes none
of them, and the pages show what they showed before."""

from __future__ import annotations

from streamlit.runtime import caching

from tests.test_app import set_field, start
from tests.test_app_plan import metric
from ui import ahead, planning
from ui import format as fmt

# app_latency's page-switch session (the Decode study's state), at an electricity price no other test draws, so
# every study of this state is new to the process's caches
QUERY = {"model": "minimax-m2", "precision": "fp8", "target_output_tokens_per_s_per_user": "100",
         "input_tokens_per_request": "10000", "output_tokens_per_request": "1000",
         "output_tokens_per_s_per_accelerator": "", "decode_accelerator": "sn50",
         "decode_output_tokens_per_s_per_accelerator": "763", "existing_accelerators": "2000",
         "demand_input_tokens_per_day": "", "demand_output_tokens_per_day": "20000000000",
         "electricity_usd_per_kwh": "0.0917"}
AHEAD = {"ui.studies.cost_curve", "ui.studies.margins", "ui.studies.hours_of", "ui.studies.compare_of",
         "ui.studies.compare_spec", "ui.studies.calibration", "ui.common._evaluate", "ui.studies.curve_of",
         "ui.studies.curve_specs", "ui.studies.tornado_of", "ui.studies.tornado_bars", "ui.studies.histogram_bins"}


def cached_bytes() -> dict[str, int]:
    """Bytes held by each ``st.cache_data`` function of the process (Streamlit's own statistics): an entry added
    shows as more bytes."""
    stats = caching.get_data_cache_stats_provider().get_stats()
    return {s.cache_name: s.byte_length for family in stats.values() for s in family}


def test_the_studies_made_ahead_are_the_ones_the_cost_and_fleet_pages_read() -> None:
    at = start("decode", QUERY)
    before = cached_bytes()
    made = ahead.make(at.session_state["scenario"], at.session_state["settings"])
    after = cached_bytes()
    assert made == 11  # the cost curve, the day, the margins, the comparison and its chart, the calibration report
    # (the process's: another test may have made it already), the Throughput page's curve, the Uncertainty page's
    # Monte Carlo, its paired rent draws, tornado and histogram
    assert {name for name in AHEAD if after.get(name, 0) > before.get(name, 0)} >= AHEAD - {"ui.common._evaluate",
                                                                                         "ui.studies.calibration"}
    shown = {}
    for page in ("fleet", "cost", "throughput", "uncertainty"):
        at.switch_page(f"ui/{page}.py").run()
        assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
        shown[page] = [h.value for h in at.html]  # its tables (static: short)
    # each page read what was made ahead: no study of either page added an entry
    now = cached_bytes()
    assert {name: now.get(name, 0) for name in AHEAD} == {name: after.get(name, 0) for name in AHEAD}
    # and drew it: the comparison's table and the published prices' margins, as a fresh session draws them
    fresh = start("fleet", QUERY)
    assert shown["fleet"] and [h.value for h in fresh.html] == shown["fleet"]


def test_a_state_the_engine_refuses_makes_nothing() -> None:
    # the pages show the error and draw no study: nothing is made ahead either
    at = set_field(start("cost"), "model", None)  # the default's throughput is its model's curve: none is left
    assert not at.metric and "output_tokens_per_s_per_accelerator" in str(at.error[0].value)
    assert ahead.make(at.session_state["scenario"], at.session_state["settings"]) == 0


def test_after_run_leaves_a_run_without_a_browser_alone() -> None:
    # streamlit.testing has no browser (no request headers): no worker is started for it
    start("cost", QUERY)
    assert not ahead._started


def test_the_plan_made_ahead_is_the_one_the_plan_page_reads() -> None:
    # a session on a linked state: the Plan page's plan of it made ahead (the worker does so once the session is
    # quiet), then a switch to Plan reads it, proven, with the settings' costs, and plans nothing anew
    at = start("decode", {**QUERY, "electricity_usd_per_kwh": "0.0919"})
    kept = ahead.plan(at.session_state["scenario"], at.session_state["settings"])
    assert kept is not None and not kept.pending and kept.costs is not None and kept.files
    plans = dict(planning.PLANS.plans)
    at.switch_page("ui/plan.py").run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert dict(planning.PLANS.plans) == plans and planning.PLANS.get(kept.key) is kept
    assert metric(at, "Cost per day") == fmt.usd(kept.proven()["summary"]["cost_usd_per_day"])
