"""Agent sessions (#39, items 3 and 4): speed across a session, cost by stream and agents at an SLO, worked by hand
through the engine, with the properties the profile must keep."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import economics
from economics.domain.formula import reevaluate
from economics.engine.batch import session_profile
from tests.test_sessions import AMPLE, ENGINE, NO_MEMORY

# AMPLE with the KV read at half the H100's 3.35 TB/s: 1.675e12 B/s.
HALF = dict(AMPLE, bandwidth_utilization=0.5)


def test_a_four_turn_sessions_speed_by_hand() -> None:
    # C_t = 1,000 + (t - 1) x 600 + 500 = 1,500, 2,100, 2,700, 3,300; the mean turn C = 9,600 / 4 = 2,400 runs at
    # the 20 token/s target: a 0.05 s step. The running batch is 1,000 / 20 = 50 sequences per accelerator, each
    # reading 163,840 B x (C_t - 2,400) more: turn 4, 50 x 163,840 x 900 = 7.3728e9 B / 1.675e12 B/s = 0.0044016 s
    # -> step 0.0544016 s, 18.3818 token/s; turn 1, -0.0044016 -> 0.0455984 s, 21.9306 token/s; turns 2, 3 at
    # -+0.0014672 s: 0.0485328 s (20.6046) and 0.0514672 s (19.4298).
    p = session_profile(HALF)
    assert p["turn"].tolist() == [1, 2, 3, 4]
    assert p["context_tokens"].tolist() == [1500.0, 2100.0, 2700.0, 3300.0]
    assert p["output_tokens_per_s_per_user"].tolist() == pytest.approx([21.9306, 20.6046, 19.4298, 18.3818], abs=1e-4)
    r = economics.evaluate_scenario(HALF)
    assert r["min_output_tokens_per_s_per_user"] == pytest.approx(1 / (0.05 + 50 * 163_840 * 900 / 1.675e12), rel=1e-12)
    assert r["min_output_tokens_per_s_per_user"] == p["output_tokens_per_s_per_user"].iloc[-1]
    # the slowest turn is below the 20 token/s target: no agents at this SLO, and the row says why
    assert r.get("agents_at_slo") is None and "misses the SLO" in r["warnings"]


def test_ttft_by_hand_with_nothing_held() -> None:
    # no memory: each turn prefills its whole context on one accelerator's 10,000 token/s (replica of 1):
    # 1,500 / 10,000 = 0.15 s ... 3,300 / 10,000 = 0.33 s, after the P99 wait for one of the 8 prefill slots,
    # 0.33990 s (worked in tests/test_sessions_queue.py)
    wait = 0.3398951408437844
    p = session_profile(NO_MEMORY)
    assert p["ttft_s"].tolist() == pytest.approx([wait + t for t in (0.15, 0.21, 0.27, 0.33)], rel=1e-12)
    assert economics.evaluate_scenario(NO_MEMORY)["ttft_last_turn_s"] == pytest.approx(wait + 0.33, rel=1e-12)


def test_a_hit_below_hbm_costs_its_load_time() -> None:
    # everything in the host tier (no HBM left at 1 token/s a user, see NO_MEMORY) read at 16.384 GB/s: 16.384e9 /
    # 163,840 = 100,000 token/s (above the system's 80,000 prefill: worth reading). Turn 4: its 500 new tokens
    # prefilled on the replica (500 / 10,000 = 0.05 s) and 1,000 + 1,800 = 2,800 found in host, loaded in 0.028 s
    r = economics.evaluate_scenario(dict(NO_MEMORY, kv_host_memory_gb_per_system=100_000, kv_host_read_gb_per_s=16.384,
                                         kv_host_memory_usd_per_gb=0))
    assert r["kv_hit_rate_host"] == pytest.approx(r["kv_hit_rate"], rel=1e-12) and r["kv_hit_rate"] > 0.79
    assert r["ttft_last_turn_s"] == pytest.approx(0.05 + 2800 / 100_000, rel=1e-9)


def test_agents_at_the_slo_by_hand() -> None:
    # One turn: C = 1,500 at the 20 token/s target (the slowest turn is the only one: the SLO holds). The prefix is
    # held in HBM: 500 fresh tokens, 0.05 s of TTFT. Work a session: 500 / 10,000 + 100 / 1,000 = 0.15
    # accelerator-s -> 6.6667 sessions/s per accelerator at full load. Duration 0.05 + 100 / 20 + 60 = 65.05 s.
    # Little's law: 6.6667 x 65.05 = 433.667 agents per accelerator, x 8 = 3,469.33 held.
    r = economics.evaluate_scenario(dict(AMPLE, turns_per_session=1, ttft_target_s=0.1))
    assert r["ttft_last_turn_s"] == pytest.approx(0.05, rel=1e-12)
    assert r["agents_per_accelerator"] == pytest.approx(20 / 3 * 65.05, rel=1e-9)
    assert r["agents_at_slo"] == pytest.approx(8 * 20 / 3 * 65.05, rel=1e-9)
    # the identities: per MW x facility MW, per USD/h x USD/h, per rack x racks are the agents held
    assert r["agents_per_mw"] * r["facility_power_kw"] / 1000 == pytest.approx(r["agents_at_slo"], rel=1e-12)
    assert r["agents_per_usd_per_hour"] * r["cost_usd_per_hour"] == pytest.approx(r["agents_at_slo"], rel=1e-12)
    assert r["agents_per_rack"] * r["racks"] == pytest.approx(r["agents_at_slo"], rel=1e-12)
    # a TTFT target below the 0.05 s: no agents
    tight = economics.evaluate_scenario(dict(AMPLE, turns_per_session=1, ttft_target_s=0.04))
    assert tight.get("agents_at_slo") is None and "misses the SLO" in tight["warnings"]


def test_cost_by_stream_adds_up_to_the_cost_per_day() -> None:
    # fresh, cached and output tokens at their stream's cost add up to the day's cost; the cached stream carries the
    # tiers' cost (host: 2,000 GB x 5 USD/GB over 5 years straight line = 0.228311 USD/h), a hit no device time
    r = economics.evaluate_scenario(dict(AMPLE, kv_host_memory_gb_per_system=2000, kv_host_memory_usd_per_gb=5,
                                         cost_of_capital=0, price_usd_per_m_input_tokens=3,
                                         price_usd_per_m_cached_input_tokens=0.3, price_usd_per_m_output_tokens=15))
    fresh = r["served_input_tokens_per_day"] - r["served_cached_input_tokens_per_day"]
    total = (r["cost_usd_per_m_fresh_input_tokens"] * fresh + r["cost_usd_per_m_cached_input_tokens"]
             * r["served_cached_input_tokens_per_day"] + r["cost_usd_per_m_output_tokens"]
             * r["served_output_tokens_per_day"]) / 1e6
    assert total == pytest.approx(r["cost_usd_per_day"], rel=1e-12)
    assert r["cost_usd_per_m_cached_input_tokens"] == pytest.approx(
        10_000 / 5 / 8760 * 24 / r["served_cached_input_tokens_per_day"] * 1e6, rel=1e-9)
    assert (r["cost_usd_per_m_input_tokens"] * r["served_input_tokens_per_day"] + r["cost_usd_per_m_output_tokens"]
            * r["served_output_tokens_per_day"]) / 1e6 == pytest.approx(r["cost_usd_per_day"], rel=1e-12)
    # revenue: fresh at 3, cached at 0.3, output at 15 USD/M
    revenue = (fresh * 3 + r["served_cached_input_tokens_per_day"] * 0.3 + r["served_output_tokens_per_day"] * 15) / 1e6
    assert r["revenue_usd_per_day"] == pytest.approx(revenue, rel=1e-12)
    assert r["input_output_ratio"] == 24.0  # 9,600 / 400
    assert r["cost_usd_per_session"] * r["sessions_served_per_day"] == pytest.approx(r["cost_usd_per_day"], rel=1e-12)


def test_request_rows_have_none_of_the_new_outputs() -> None:
    r = economics.evaluate_scenario(dict(accelerator_count=8, output_tokens_per_s_per_accelerator=1000,
                                         input_tokens_per_s_per_accelerator=10_000))
    for name in ("min_output_tokens_per_s_per_user", "ttft_last_turn_s", "agents_at_slo", "agents_per_mw",
                 "cost_usd_per_m_fresh_input_tokens", "cost_usd_per_m_cached_input_tokens", "input_output_ratio"):
        assert r.get(name) is None, name
    with pytest.raises(economics.ScenarioError, match="ttft_target_s"):
        economics.evaluate_scenario(dict(accelerator_count=8, output_tokens_per_s_per_accelerator=1000,
                                         ttft_target_s=1))


@pytest.mark.parametrize("scenario", [HALF, NO_MEMORY, dict(AMPLE, turns_per_session=1, ttft_target_s=0.1)])
def test_every_new_line_reevaluates_to_its_value(scenario: dict[str, object]) -> None:
    trace = economics.explain_scenario(scenario)
    names = {step.name for step in trace.steps if step.checked}
    assert {"min_output_tokens_per_s_per_user", "ttft_last_turn_s", "cost_usd_per_m_output_tokens"} <= names
    for step in trace.steps:
        if step.checked:
            assert reevaluate(step.substituted) == pytest.approx(step.value, rel=1e-3, abs=1e-9), step.name


@settings(max_examples=25, deadline=None)
@given(turns=st.integers(1, 12), prefix=st.integers(0, 4000), u=st.integers(1, 3000), o=st.integers(1, 1000),
       host=st.sampled_from([0.0, 50.0, 100_000.0]))
def test_speed_never_rises_and_ttft_never_falls_with_the_turn(turns: int, prefix: int, u: int, o: int,
                                                              host: float) -> None:
    scenario = dict(ENGINE, turns_per_session=turns, session_prefix_tokens=prefix, input_tokens_per_turn=u,
                    output_tokens_per_turn=o, kv_host_memory_gb_per_system=host, kv_host_read_gb_per_s=400,
                    kv_host_memory_usd_per_gb=0)
    p = session_profile(scenario)
    speed, ttft = p["output_tokens_per_s_per_user"].to_numpy(), p["ttft_s"].to_numpy()
    known = speed[~(speed != speed)]
    assert all(b <= a * (1 + 1e-12) for a, b in zip(known, known[1:], strict=False))
    assert all(b >= a * (1 - 1e-12) for a, b in zip(ttft, ttft[1:], strict=False))


@settings(max_examples=20, deadline=None)
@given(turns=st.integers(2, 40), prefix=st.integers(0, 20_000), u=st.integers(100, 5000), o=st.integers(50, 800),
       target=st.sampled_from([10.0, 20.0, 40.0, 80.0]), accelerator=st.sampled_from(["h100-sxm", "b200"]))
def test_an_estimated_throughput_holds_the_slowest_turn_to_the_target(turns: int, prefix: int, u: int, o: int,
                                                                       target: float, accelerator: str) -> None:
    # the roofline's batch search holds the last turn (the longest context) to the per-user target, so wherever
    # the estimate exists the decode SLO is met: the mean turn runs faster, and agents at the SLO are counted
    scenario = {k: v for k, v in ENGINE.items() if k not in ("output_tokens_per_s_per_accelerator",
                                                             "input_tokens_per_s_per_accelerator")}
    scenario.update(accelerator=accelerator, turns_per_session=turns, session_prefix_tokens=prefix,
                    input_tokens_per_turn=u, output_tokens_per_turn=o, target_output_tokens_per_s_per_user=target)
    try:
        r = economics.evaluate_scenario(scenario)
    except economics.ScenarioError:
        return  # the target is out of reach of this hardware even at batch 1 (the estimate says so)
    if not r["feasible"]:
        return
    assert r["min_output_tokens_per_s_per_user"] >= target * (1 - 1e-9)
    assert r["output_tokens_per_s_per_user"] >= r["min_output_tokens_per_s_per_user"]
    assert r["agents_per_accelerator"] is not None and r["agents_per_accelerator"] > 0
    assert session_profile(scenario)["output_tokens_per_s_per_user"].min() >= target * (1 - 1e-9)


def test_the_examples_estimated_rows_meet_the_slo_and_count_their_agents() -> None:
    from pathlib import Path

    import pandas as pd

    path = Path(__file__).resolve().parents[1] / "docs" / "example-sessions.csv"
    out = economics.evaluate(pd.read_csv(path, comment="#"))
    # a target of 20 tokens/s per user: the last turn (43,500 tokens of context) at or above it on every row
    assert (out["min_output_tokens_per_s_per_user"] >= 20).all()
    assert (out["output_tokens_per_s_per_user"] > out["min_output_tokens_per_s_per_user"]).all()
    # agents_per_mw x facility MW = the agents held (the identity the issue asks for)
    for _, r in out.iterrows():
        assert r["agents_per_mw"] * r["facility_power_kw"] / 1000 == pytest.approx(r["agents_at_slo"], rel=1e-12)
