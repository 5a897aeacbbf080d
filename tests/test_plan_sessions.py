"""The planner takes agent sessions as demand (issue #39 item 5): the engine's request stream of the session, each
pool at its own KV hit rate, the host/SSD tiers in each system's cost, the remote store a line of the fleet, and
sessions served and the cost of one in the plan.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

import economics
from economics.studies import planner
from economics.studies.planner import Candidate, PlanSettings
from tests.test_api import _cli
from tests.test_sessions import AMPLE

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "example-sessions.csv"

# The hand-worked session of issue #39: 4 turns, a 1,000-token prefix, 500 new and 100 output tokens a turn: 9,600
# input tokens a session (4 x 1,000 + (0+1+2+3) x 600 + 4 x 500), so a turn is a request of 9,600 / 4 = 2,400 input
# and 100 output tokens. Costs: capital only, 0 % over one year.
SESSION = dict(AMPLE, accelerator_count=None, demand_sessions_per_day=86_400, kv_host_memory_gb_per_system=100,
               kv_host_memory_usd_per_gb=3.65, cost_of_capital=0, depreciation_years=1,
               maintenance_fraction_per_year=0, electricity_usd_per_kwh=0, colocation_usd_per_kw_month=0,
               facility_capex_usd_per_kw=0, software_usd_per_accelerator_year=0)
FLAT = PlanSettings(demand_profile="flat", spares=False, max_pools=1)


def box(**kw: object) -> Candidate:
    """A one-accelerator system of 3,650 USD prefilling 1,000 and decoding 200 tokens/s, at 20 tokens/s a user."""
    base: dict[str, object] = dict(name="box", ownership="own", accelerator="h100-sxm", accelerators_per_system=1,
                                   system_power_kw=1.0, price_usd_per_system=3650.0,
                                   input_tokens_per_s_per_system=1000.0, output_tokens_per_s_per_system=200.0,
                                   output_tokens_per_s_per_user=20.0, accelerators_per_replica=1,
                                   roles=("aggregated",))
    return Candidate(**{**base, **kw})  # type: ignore[arg-type]


def test_a_hand_worked_plan_of_sessions() -> None:
    # 86,400 sessions a day x 4 turns / 86,400 s = 4 turns (requests) a second, flat over the day.
    # The box finds 7,600 of a session's 9,600 input tokens cached (kv_hit_rate 7,600 / 9,600, the ample-memory
    # case), so a turn prefills 2,400 x 2,000 / 9,600 = 500 tokens: 500 / 1,000 = 0.5 s of prefill and
    # 100 / 200 = 0.5 s of decode, 1 turn a second a system -> 4 systems.
    # A system: 3,650 USD / 365 days = 10 USD a day; its host tier 100 GB x 3.65 USD/GB = 365 USD, 1 USD a day.
    # 4 x (10 + 1) = 44 USD a day for 86,400 sessions: 44 / 86,400 = 0.000509259 USD a session.
    r = planner.plan(SESSION, FLAT, [box(kv_hit_rate=7600 / 9600)])
    assert r.feasible, r.reason
    assert r.plan[["name", "role", "systems"]].values.tolist() == [["box", "aggregated", 4]]
    assert r.plan["capex_usd"].iloc[0] == pytest.approx(4 * (3650 + 365))
    assert r.summary["cost_usd_per_day"] == pytest.approx(44.0, rel=1e-12)
    assert r.summary["sessions_per_day"] == pytest.approx(86_400.0, rel=1e-12)
    assert r.summary["cost_usd_per_session"] == pytest.approx(44 / 86_400, rel=1e-12)
    assert r.summary["tokens_per_day"] == pytest.approx(86_400 * (9600 + 400), rel=1e-12)
    # 4 turns a second is 4 x 3,600 / 4 = 3,600 sessions in every hour
    assert r.hours["sessions_per_hour"].tolist() == pytest.approx([3600.0] * 24, rel=1e-12)
    assert r.candidates["kv_hit_rate"].iloc[0] == pytest.approx(7600 / 9600)


def test_a_remote_store_is_a_line_of_the_fleet_not_of_a_pool() -> None:
    # 1,000 GB at 0.73 USD/GB-month: 730 USD a month x 12 / 8,760 h = 1 USD/h, 24 USD a day on top of the 44
    s = dict(SESSION, kv_remote_gb=1000, kv_remote_read_gb_per_s=10, kv_remote_usd_per_gb_month=0.73)
    r = planner.plan(s, FLAT, [box(kv_hit_rate=7600 / 9600)])
    assert r.summary["kv_remote_usd_per_day"] == pytest.approx(24.0, rel=1e-12)
    assert r.summary["cost_usd_per_day"] == pytest.approx(44.0 + 24.0, rel=1e-12)
    assert float(r.plan["cost_usd_per_day"].sum()) == pytest.approx(44.0, rel=1e-12)
    assert r.summary["cost_usd_per_session"] == pytest.approx(68 / 86_400, rel=1e-12)


def test_planning_sessions_is_planning_the_request_stream_the_engine_makes_of_them() -> None:
    # no KV tier priced, one candidate given with its measured rates: the engine's hit rate on it, its mean turn
    # and its turns a second, planned as requests, give the same plan to the cent
    s = dict(SESSION, kv_host_memory_gb_per_system=0, kv_host_read_gb_per_s=None, kv_host_memory_usd_per_gb=None,
             demand_sessions_per_day=500_000)
    cand = box(accelerators_per_system=8, accelerators_per_replica=8, input_tokens_per_s_per_system=80_000.0,
               output_tokens_per_s_per_system=8_000.0, price_usd_per_system=200_000.0, system_power_kw=10.0)
    engine = economics.evaluate_scenario(dict(s, output_tokens_per_s_per_accelerator=1000,
                                              input_tokens_per_s_per_accelerator=10_000, accelerators_per_replica=8))
    assert 0 < engine["kv_hit_rate"] < 1
    requests = {k: v for k, v in s.items() if k not in (
        "workload", "turns_per_session", "session_prefix_tokens", "input_tokens_per_turn", "output_tokens_per_turn",
        "seconds_between_turns", "demand_sessions_per_day", "kv_host_memory_gb_per_system",
        "kv_host_read_gb_per_s", "kv_host_memory_usd_per_gb")}
    requests.update(input_tokens_per_request=engine["input_tokens_per_request"],
                    output_tokens_per_request=engine["output_tokens_per_request"],
                    prefix_cache_hit_rate=engine["kv_hit_rate"], demand_requests_per_s=engine["demand_requests_per_s"])
    for settings in (PlanSettings(spares=False), PlanSettings(demand_profile="diurnal", ttft_target_s=2.0)):
        a, b = planner.plan(s, settings, [cand]), planner.plan(requests, settings, [cand])
        assert a.feasible and b.feasible
        assert a.candidates["kv_hit_rate"].iloc[0] == engine["kv_hit_rate"]
        assert a.plan["systems"].tolist() == b.plan["systems"].tolist()
        assert a.summary["cost_usd_per_day"] == pytest.approx(b.summary["cost_usd_per_day"], rel=1e-12)
        assert a.summary["tokens_per_day"] == pytest.approx(b.summary["tokens_per_day"], rel=1e-12)
        assert a.hours["requests_per_s"].tolist() == pytest.approx(b.hours["requests_per_s"].tolist(), rel=1e-12)


def test_more_host_memory_never_needs_more_systems() -> None:
    # the catalog's H100 at the ample case's shape: with a host tier it finds more of each turn cached (the
    # engine's residency), so at a free tier the plan needs no more systems and costs no more
    s = dict(AMPLE, accelerator_count=None, output_tokens_per_s_per_accelerator=None,
             input_tokens_per_s_per_accelerator=None, demand_sessions_per_day=2_000_000)
    none = dict(s, kv_host_memory_gb_per_system=0, kv_host_read_gb_per_s=None, kv_host_memory_usd_per_gb=None)
    a = planner.plan(none, PlanSettings(), accelerators=["h100-sxm"])
    b = planner.plan(s, PlanSettings(), accelerators=["h100-sxm"])
    assert a.feasible and b.feasible
    assert b.candidates["kv_hit_rate"].iloc[0] >= a.candidates["kv_hit_rate"].iloc[0]
    assert b.plan["systems"].sum() <= a.plan["systems"].sum()
    assert b.summary["cost_usd_per_session"] <= a.summary["cost_usd_per_session"] * (1 + 1e-12)


def test_sessions_are_planned_on_aggregated_pools_and_need_their_demand() -> None:
    r = planner.plan(SESSION, FLAT, [box(roles=("aggregated", "prefill", "decode"), kv_hit_rate=0.5)])
    assert r.plan["role"].tolist() == ["aggregated"]
    assert "decode: workload=sessions is planned on aggregated pools only" in r.candidates["left_out"].iloc[0]
    with pytest.raises(ValueError, match="demand_sessions_per_day: give the demand"):
        planner.plan(dict(SESSION, demand_sessions_per_day=None, accelerator_count=8), FLAT, [box()])
    # a candidate given without a catalog id: its memory (the residency) is unknown, said by name
    r = planner.plan(SESSION, FLAT, [box(accelerator="")])
    assert not r.feasible
    assert "the KV residency needs the candidate's memory" in r.candidates["left_out"].iloc[0]


def test_the_cli_and_the_api_plan_the_example_sessions(api: httpx.Client,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # docs/example-sessions.csv's B200 row with a host tier, on the catalog's H100 and B200
    out = json.loads(_cli(capsys, "plan", str(EXAMPLE), "--row", "agent-b200-host", "--accelerators",
                          "h100-sxm,b200"))
    assert out["feasible"] is True and out["summary"]["sessions_per_day"] == pytest.approx(1_000_000.0)
    engine = economics.evaluate_scenario({**_row(EXAMPLE, "agent-b200-host")})
    # the plan's one pool is the B200 at the engine's hit rate on it; its cost per session the plan's cost / 1e6
    pool = out["plan"][0]
    assert pool["accelerator"] == "b200" and pool["role"] == "aggregated"
    hit = {c["name"]: c["kv_hit_rate"] for c in out["candidates"]}
    assert hit["b200 own"] == pytest.approx(engine["kv_hit_rate"], rel=1e-12)
    assert out["summary"]["cost_usd_per_session"] == pytest.approx(out["summary"]["cost_usd_per_day"] / 1e6)
    # the plan is the engine's fleet for the row (92 owned B200 systems, no spare needed), so it costs the same
    assert pool["systems"] == engine["systems"] == 92 and pool["spares"] == 0
    assert out["summary"]["cost_usd_per_session"] == pytest.approx(engine["cost_usd_per_session"], rel=1e-9)
    r = api.post("/v1/plan", params={"row": "agent-b200-host", "accelerators": "h100-sxm,b200"},
                 files={"scenarios": ("s.csv", EXAMPLE.read_bytes())})
    assert r.status_code == 200, r.text
    doc = r.json()
    doc.pop("version")
    assert doc == out


def _row(path: Path, name: str) -> dict[str, str]:
    """One row of a docs CSV (its comment lines skipped), its empty cells left out."""
    import csv

    lines = [ln for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]
    row = next(r for r in csv.DictReader(lines) if r["name"] == name)
    return {k: v for k, v in row.items() if v != ""}


def test_the_plan_page_plans_a_session_scenario_and_says_its_cost_per_session() -> None:
    from economics.studies.links import encode_query
    from tests.test_app import start
    from tests.test_app_plan import expected_plan, metric
    from ui import format as fmt

    s = dict(SESSION, output_tokens_per_s_per_accelerator=None, input_tokens_per_s_per_accelerator=None,
             demand_sessions_per_day=1_000_000)
    at = start("plan", encode_query(economics.Scenario(**s), economics.default_scenario()))
    assert not at.error, [e.value for e in at.error]
    want = expected_plan(economics.Scenario(**s).model_dump())["summary"]
    assert metric(at, "Cost per day") == fmt.usd(want["cost_usd_per_day"])
    said = [c.value for c in at.caption if c.value.startswith("Agent sessions:")]
    assert said == [f"Agent sessions: {fmt.count(1_000_000)} a day at {fmt.usd_rate(want['cost_usd_per_session'])} "
                    "a session (the cost per day / sessions a day)."]
