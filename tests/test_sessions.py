"""Agent sessions (#39): the session's tokens, KV residency in an exclusive LRU hierarchy (Che's approximation),
worked by hand, and the properties the model must keep (more memory never hurts)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from economics.domain import sessions as s
from economics.domain.formula import reevaluate
from economics.domain.sessions import TIERS, Tier

# The session: 4 turns, a 1,000-token shared prefix, 500 new input and 100 output tokens a turn.
T, S, U, OUT = 4.0, 1000.0, 500.0, 100.0
INPUT = 9600.0    # 4 x 1,000 + (0 + 1 + 2 + 3) x 600 + 4 x 500 = 4,000 + 3,600 + 2,000
PREFIX = 4000.0   # 4 turns x 1,000
HISTORY = 3600.0  # (0 + 1 + 2 + 3) x (500 + 100)
FINAL = 2400.0    # 4 x (500 + 100): the session's own KV after its last turn


def shares(hbm: float = 0.0, host: float = 0.0, ssd: float = 0.0, remote: float = 0.0, gap: float = 60.0,
           w_hit: float = 10.0, w_miss: float = 10.0) -> dict[str, np.ndarray]:
    caps = {Tier.HBM: hbm, Tier.HOST: host, Tier.SSD: ssd, Tier.REMOTE: remote}
    return s.tier_shares({t: np.array([float(c)]) for t, c in caps.items()}, np.array([S]), np.array([gap]),
                         np.array([HISTORY]), np.array([FINAL]), np.array([w_hit]), np.array([w_miss]))


def cached(out: dict[str, np.ndarray]) -> float:
    return float(PREFIX * out["prefix_held"][0] + HISTORY * out["hit"][0])


def test_the_session_reads_9600_tokens() -> None:
    assert [float(s.context_tokens(t, S, U, OUT)) for t in (1, 2, 3, 4)] == [1500.0, 2100.0, 2700.0, 3300.0]
    assert float(s.input_tokens_per_session(T, S, U, OUT)) == INPUT
    assert float(s.history_tokens_per_session(T, U, OUT)) == HISTORY
    # the closed form is the sum of the turns' contexts for any length
    for turns in range(1, 30):
        by_turn = sum(float(s.context_tokens(t, S, U, OUT)) for t in range(1, turns + 1))
        assert float(s.input_tokens_per_session(turns, S, U, OUT)) == by_turn


def test_ample_memory_recomputes_only_the_new_input() -> None:
    # every idle context and the prefix held: cached 4,000 + 3,600 = 7,600, recomputed 9,600 - 7,600 = 2,000
    # (the 4 x 500 new tokens); kv_hit_rate = 7,600 / 9,600 = 0.791667
    out = shares(host=1e15)
    assert out["prefix_held"][0] == 1.0
    assert out["hit"][0] == pytest.approx(1.0, abs=1e-12)
    assert INPUT - cached(out) == pytest.approx(2000.0, abs=1e-6)
    assert cached(out) / INPUT == pytest.approx(0.791667, abs=5e-7)
    assert out["prefix_in_host"][0] == 1.0 and out["history_in_host"][0] == pytest.approx(1.0)


def test_no_memory_beyond_the_running_batch_recomputes_everything() -> None:
    # no tier holds anything, not even the prefix (the shared prefix cache is off): 9,600 prefilled
    out = shares()
    assert out["prefix_held"][0] == 0.0 and out["hit"][0] == 0.0 and out["characteristic_time_s"][0] == 0.0
    assert INPUT - cached(out) == INPUT


def test_two_tiers_worked_by_hand() -> None:
    # A fixed rate of 0.1 session/s (10 s of work a session, hit or miss), idle gaps exponential with mean 60 s.
    # HBM sized so that T_C = 60 ln 2 s: p = 1 - e^-ln2 = 0.5; held = 0.1 x (3,600 x 60 x 0.5 + 2,400 x 60 ln 2)
    #   = 0.1 x (108,000 + 99,813.18) = 20,781.32 tokens, + the 1,000-token prefix on top = 21,781.32 in HBM.
    # HBM + host sized so that T_C = 60 ln 4 s: p = 1 - 1/4 = 0.75; held = 0.1 x (3,600 x 60 x 0.75 + 2,400 x 60 ln 4)
    #   = 0.1 x (162,000 + 199,626.35) = 36,162.64 tokens: the host adds 36,162.64 - 20,781.32 = 15,381.32.
    # Stack property: HBM holds p = 0.5 of the history, host the next 0.75 - 0.5 = 0.25.
    # kv_hit_rate_hbm = (4,000 + 3,600 x 0.5) / 9,600 = 0.604167; kv_hit_rate_host = 3,600 x 0.25 / 9,600 = 0.09375
    # kv_hit_rate = 0.697917; prefill = 9,600 - 4,000 - 2,700 = 2,900 tokens
    hbm_history = 0.1 * (3600 * 60 * 0.5 + 2400 * 60 * math.log(2))
    both_history = 0.1 * (3600 * 60 * 0.75 + 2400 * 60 * math.log(4))
    out = shares(hbm=hbm_history + S, host=both_history - hbm_history)
    assert hbm_history == pytest.approx(20781.32, abs=0.01) and both_history == pytest.approx(36162.64, abs=0.01)
    assert out["characteristic_time_s"][0] == pytest.approx(60 * math.log(4), rel=1e-12)
    assert out["history_in_hbm"][0] == pytest.approx(0.5, rel=1e-12)
    assert out["history_in_host"][0] == pytest.approx(0.25, rel=1e-12)
    assert out["prefix_in_hbm"][0] == 1.0 and out["prefix_in_host"][0] == 0.0
    hbm_rate = (PREFIX * out["prefix_in_hbm"][0] + HISTORY * out["history_in_hbm"][0]) / INPUT
    host_rate = (PREFIX * out["prefix_in_host"][0] + HISTORY * out["history_in_host"][0]) / INPUT
    assert hbm_rate == pytest.approx(0.604167, abs=5e-7)
    assert host_rate == pytest.approx(0.09375, rel=1e-12)
    assert cached(out) / INPUT == pytest.approx(0.697917, abs=5e-7)
    assert INPUT - cached(out) == pytest.approx(2900.0, rel=1e-12)


def test_the_characteristic_time_holds_what_the_capacity_holds() -> None:
    # the root: the tokens held at T_C (Little's law) equal the capacity, at the rate the hits give
    tc = float(s.characteristic_time_s(30_000.0, 45.0, HISTORY, FINAL, 6.0, 14.0))
    p = float(s.hit_probability(tc, 45.0))
    rate = float(s.session_rate(p, 6.0, 14.0))
    assert float(s.held_tokens(rate, tc, 45.0, HISTORY, FINAL)) == pytest.approx(30_000.0, rel=1e-12)


def test_a_prefix_larger_than_the_memory_is_not_held() -> None:
    out = shares(hbm=999.0)
    assert out["prefix_held"][0] == 0.0
    assert 0.0 < out["hit"][0] < 1.0  # the sessions' own KV still uses the 999 tokens


def test_a_tier_slower_than_prefill_is_not_used() -> None:
    # Llama 3.1 70B at BF16: 327,680 B a token. 64 GB/s loads 195,313 token/s, 1 GB/s 3,052: against a system's
    # prefill of 20,000 token/s the first is worth reading, the second is not; an unknown prefill rate uses both.
    assert s.tier_used(np.array([64.0, 1.0]), 327_680.0, 20_000.0).tolist() == [True, False]
    assert s.tier_used(np.array([64.0, 1.0]), 327_680.0, np.nan).tolist() == [True, True]


def test_the_tier_formulas_render_and_reevaluate() -> None:
    values = {"prefix_tokens_per_session": PREFIX, "history_tokens_per_session": HISTORY,
              "input_tokens_per_session": INPUT, "kv_prefix_in_hbm": 1.0, "kv_history_in_hbm": 0.5}
    f = s.TIER_HIT_RATES[Tier.HBM]
    assert f.symbolic() == ("(prefix_tokens_per_session x kv_prefix_in_hbm + history_tokens_per_session x "
                            "kv_history_in_hbm) / input_tokens_per_session")
    line = f.substituted(values)
    assert line == "(4,000 x 1 + 3,600 x 0.5) / 9,600"
    assert reevaluate(line) == pytest.approx(float(f.evaluate(values)))
    p_line = s.HIT_PROBABILITY.substituted({"kv_characteristic_time_s": 60 * math.log(2), "seconds_between_turns": 60})
    assert reevaluate(p_line) == pytest.approx(0.5, abs=1e-6)


CAP = st.floats(0.0, 2e5, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(caps=st.tuples(CAP, CAP, CAP, CAP), tier=st.sampled_from(TIERS), more=st.floats(1.0, 1e5),
       gap=st.floats(1.0, 3600.0), w_hit=st.floats(0.1, 50.0), extra=st.floats(0.0, 50.0))
def test_more_memory_in_any_tier_never_lowers_the_hit_rate(caps: tuple[float, ...], tier: Tier, more: float,
                                                            gap: float, w_hit: float, extra: float) -> None:
    before = dict(zip([t.value for t in TIERS], caps, strict=True))
    after = dict(before, **{tier.value: before[tier.value] + more})
    a = shares(**before, gap=gap, w_hit=w_hit, w_miss=w_hit + extra)
    b = shares(**after, gap=gap, w_hit=w_hit, w_miss=w_hit + extra)
    assert cached(b) >= cached(a) * (1 - 1e-12)  # hit rate up, so prefill tokens (input - cached) down
    for out in (a, b):
        found = sum(out[f"history_in_{t}"][0] for t in TIERS)
        assert found == pytest.approx(out["hit"][0], abs=1e-12)
        assert all(out[f"history_in_{t}"][0] >= 0 for t in TIERS)
        assert sum(out[f"prefix_in_{t}"][0] for t in TIERS) == out["prefix_held"][0]


# --- through the engine: evaluate and explain ---
# Llama 3.1 70B at FP8 on H100 (8 per system, 80 GB each): 163,840 B of KV a token (2 x 80 layers x 8 heads x 128 x 1);
# measured 1,000 output and 10,000 input tokens/s per accelerator; 8 accelerators = one system.
ENGINE: dict[str, object] = dict(
    workload="sessions", accelerator="h100-sxm", model="llama-3.1-70b", precision="fp8", turns_per_session=4,
    session_prefix_tokens=1000, input_tokens_per_turn=500, output_tokens_per_turn=100, seconds_between_turns=60,
    accelerator_count=8, output_tokens_per_s_per_accelerator=1000, input_tokens_per_s_per_accelerator=10_000,
    target_output_tokens_per_s_per_user=20, demand_sessions_per_day=100_000)
AMPLE = dict(ENGINE, kv_host_memory_gb_per_system=100_000, kv_host_read_gb_per_s=400, kv_host_memory_usd_per_gb=0)
# At 1 token/s a user, the running batch at full load is 1,000 x 8 / 1 = 8,000 sequences of 2,400 + 100 tokens:
# 8,000 x 2,500 x 163,840 B = 3,277 GB, far beyond the 8 x 80 x 0.9 = 576 GB: no HBM is left for idle sessions.
NO_MEMORY = dict(ENGINE, target_output_tokens_per_s_per_user=1)


def test_evaluate_the_hand_worked_session_with_ample_memory() -> None:
    import economics

    r = economics.evaluate_scenario(AMPLE)
    assert r["input_tokens_per_session"] == 9600.0
    assert r["prefill_tokens_per_session"] == pytest.approx(2000.0, abs=1e-6)
    assert r["cached_input_tokens_per_session"] == pytest.approx(7600.0, abs=1e-6)
    assert r["kv_hit_rate"] == pytest.approx(0.791667, abs=5e-7)
    assert r["prefix_cache_hit_rate"] == r["kv_hit_rate"]
    tiers = sum(r[f"kv_hit_rate_{t}"] for t in TIERS)
    assert tiers == pytest.approx(r["kv_hit_rate"], rel=1e-12)
    # a turn is a request: 9,600 / 4 = 2,400 tokens in, 100 out; 100,000 sessions x 4 turns a day
    assert r["input_tokens_per_request"] == 2400.0 and r["output_tokens_per_request"] == 100.0
    assert r["served_input_tokens_per_day"] == pytest.approx(100_000 * 9600.0)
    assert r["sessions_served_per_day"] == pytest.approx(100_000.0)
    # prefill work: 100,000 x 9,600 x (1 - 0.791667) / 10,000 = 20,000 accelerator-s; decode 100,000 x 400 / 1,000
    # = 40,000: 60,000 accelerator-s a day
    assert r["work_accelerator_s_per_day"] == pytest.approx(60_000.0, rel=1e-9)


def test_no_memory_beyond_the_running_batch_prefills_every_token() -> None:
    import economics

    r = economics.evaluate_scenario(NO_MEMORY)
    assert r["kv_hbm_free_gb_per_system"] == 0.0
    assert r["prefill_tokens_per_session"] == 9600.0 and r["kv_hit_rate"] == 0.0
    assert r["cached_input_tokens_per_session"] == 0.0


def test_explain_shows_the_worked_session() -> None:
    import economics

    text = economics.explain_text(AMPLE)
    assert "= 4 x (1,000 + 500) + 3,600 = 9,600 token" in text
    assert "= (500 + 100) x 12 / 2 = 3,600 token" in text and "= 4 ^ 2 x (1 + 0 ^ 2) - 4 = 12 turn^2" in text
    assert "prefill_tokens_per_session = input_tokens_per_session - cached_input_tokens_per_session" in text
    assert "= 9,600 - 7,600 = 2,000 token" in text
    assert "kv_hit_rate = cached_input_tokens_per_session / input_tokens_per_session" in text
    assert "= 7,600 / 9,600 = 0.7917" in text
    none = economics.explain_text(NO_MEMORY)
    assert "= 9,600 - 0 = 9,600 token" in none
    assert "= 0 token >= 1,000 token = 0" in none  # the prefix cache is off: no memory holds it


@pytest.mark.parametrize("scenario", [AMPLE, NO_MEMORY, dict(AMPLE, kv_host_memory_gb_per_system=2000,
                                                              kv_ssd_gb_per_system=4000, kv_ssd_read_gb_per_s=1,
                                                              kv_ssd_usd_per_gb=0.1, kv_remote_gb=50_000,
                                                              kv_remote_read_gb_per_s=50,
                                                              kv_remote_usd_per_gb_month=0.02)])
def test_every_session_line_reevaluates_to_its_value(scenario: dict[str, object]) -> None:
    import economics

    trace = economics.explain_scenario(scenario)
    checked = [step for step in trace.steps if step.checked]
    assert any(step.name == "kv_history_hit" for step in checked)
    for step in checked:
        assert reevaluate(step.substituted) == pytest.approx(step.value, rel=1e-3, abs=1e-9), step.name


def test_a_slow_ssd_tier_is_not_read() -> None:
    # 1 GB/s loads 1e9 / 163,840 = 6,104 token/s, below the system's 80,000 token/s prefill: it holds nothing
    import economics

    r = economics.evaluate_scenario(dict(NO_MEMORY, kv_ssd_gb_per_system=4000, kv_ssd_read_gb_per_s=1,
                                         kv_ssd_usd_per_gb=0))
    assert r["kv_hit_rate_ssd"] == 0.0 and r["kv_hit_rate"] == 0.0
    assert "holds nothing" in economics.explain_text(dict(NO_MEMORY, kv_ssd_gb_per_system=4000,
                                                          kv_ssd_read_gb_per_s=1, kv_ssd_usd_per_gb=0))


def test_the_tiers_cost_lines_are_in_the_hourly_cost() -> None:
    # host: 1 system x 2,000 GB x 5 USD/GB, straight line over 5 years: 10,000 / 5 / 8,760 = 0.228311 USD/h
    # remote: 50,000 GB x 0.02 USD/GB-month x 12 / 8,760 = 1.369863 USD/h
    import economics
    from economics.schema.outputs import cost_parts

    r = economics.evaluate_scenario(dict(AMPLE, kv_host_memory_gb_per_system=2000, kv_host_memory_usd_per_gb=5,
                                         kv_remote_gb=50_000, kv_remote_read_gb_per_s=50,
                                         kv_remote_usd_per_gb_month=0.02, cost_of_capital=0, depreciation_years=5))
    assert r["kv_host_usd_per_hour"] == pytest.approx(10_000 / 5 / 8760, rel=1e-12)
    assert r["kv_remote_usd_per_hour"] == pytest.approx(50_000 * 0.02 * 12 / 8760, rel=1e-12)
    assert r["kv_tiers_usd_per_hour"] == pytest.approx(10_000 / 5 / 8760 + 50_000 * 0.02 * 12 / 8760, rel=1e-12)
    assert sum(r[name] for name in cost_parts()) == pytest.approx(r["cost_usd_per_hour"], rel=1e-12)


@pytest.mark.parametrize("changes", [{}, {"demand_sessions_per_day": None},
                                     {"accelerator_count": None, "demand_sessions_per_day": 2e6},
                                     {"demand_sessions_per_day": 1e8}])
def test_cost_per_session_times_sessions_served_is_the_cost_per_day(changes: dict[str, object]) -> None:
    import economics

    r = economics.evaluate_scenario({k: v for k, v in dict(AMPLE, **changes).items() if v is not None})
    assert r["cost_usd_per_session"] * r["sessions_served_per_day"] == pytest.approx(r["cost_usd_per_day"], rel=1e-12)


def test_request_rows_have_no_session_outputs() -> None:
    import economics

    r = economics.evaluate_scenario(dict(accelerator_count=8, output_tokens_per_s_per_accelerator=1000))
    assert r["workload"] == "requests" and r["kv_tiers_usd_per_hour"] == 0.0
    assert r["cost_usd_per_session"] is None and r["kv_hit_rate"] is None


@pytest.mark.parametrize("changes, message", [
    ({"turns_per_session": None}, "turns_per_session: needed when workload=sessions"),
    ({"prefix_cache_hit_rate": 0.5}, "prefix_cache_hit_rate: with workload=sessions it follows from the session"),
    ({"demand_requests_per_s": 3}, "demand_requests_per_s: with workload=sessions the demand is "
                                   "demand_sessions_per_day"),
    ({"kv_ssd_gb_per_system": 100}, "kv_ssd_read_gb_per_s: needed with kv_ssd_gb_per_system above 0"),
    ({"workload": "requests"}, "turns_per_session: applies to workload=sessions only"),
    ({"decode_accelerator": "b200"}, "decode_accelerator: workload=sessions is computed for aggregated serving"),
    ({"model": None}, "model: needed when workload=sessions"),
    ({"workload": "session"}, "workload: 'session' is not one of requests, sessions"),
])
def test_bad_session_input_names_the_field(changes: dict[str, object], message: str) -> None:
    import economics

    with pytest.raises(economics.ScenarioError) as err:
        economics.evaluate_scenario({k: v for k, v in dict(ENGINE, **changes).items() if v is not None})
    assert message in str(err.value)


def test_a_table_of_sessions_and_requests_reports_the_bad_row_and_computes_the_others() -> None:
    import pandas as pd

    import economics

    rows = pd.DataFrame([AMPLE, dict(accelerator_count=8, output_tokens_per_s_per_accelerator=1000),
                         dict(AMPLE, seconds_between_turns=0)])
    out = economics.evaluate(rows)
    assert out["valid"].tolist() == [True, True, False]
    assert "seconds_between_turns: must be > 0" in out.loc[2, "error"]
    assert out.loc[0, "kv_hit_rate"] == pytest.approx(0.791667, abs=5e-7)
    assert pd.isna(out.loc[1, "kv_hit_rate"])
    one = economics.evaluate_scenario(AMPLE)
    assert out.loc[0, "cost_usd_per_session"] == pytest.approx(one["cost_usd_per_session"], rel=1e-12)


GB = st.floats(0.0, 5000.0, allow_nan=False)


@settings(max_examples=30, deadline=None)
@given(host=GB, ssd=GB, remote=st.floats(0.0, 50_000.0), tier=st.sampled_from(["accelerator_memory_gb",
                                                                               "kv_host_memory_gb_per_system",
                                                                               "kv_ssd_gb_per_system", "kv_remote_gb"]),
       more=st.floats(1.0, 5000.0), sized=st.booleans(), gap=st.floats(5.0, 3600.0))
def test_more_memory_never_lowers_the_hit_rate_nor_raises_prefill_or_cost(
        host: float, ssd: float, remote: float, tier: str, more: float, sized: bool, gap: float) -> None:
    import economics

    base = dict(ENGINE, target_output_tokens_per_s_per_user=5, seconds_between_turns=gap, accelerator_memory_gb=80,
                kv_host_memory_gb_per_system=host, kv_host_read_gb_per_s=64, kv_host_memory_usd_per_gb=0,
                kv_ssd_gb_per_system=ssd, kv_ssd_read_gb_per_s=14, kv_ssd_usd_per_gb=0, kv_remote_gb=remote,
                kv_remote_read_gb_per_s=50, kv_remote_usd_per_gb_month=0, demand_sessions_per_day=3e6)
    if sized:
        base.pop("accelerator_count")
    a = economics.evaluate_scenario(base)
    b = economics.evaluate_scenario(dict(base, **{tier: float(base[tier]) + more}))  # type: ignore[arg-type]
    assert b["kv_hit_rate"] >= a["kv_hit_rate"] * (1 - 1e-12)
    assert b["prefill_tokens_per_session"] <= a["prefill_tokens_per_session"] * (1 + 1e-12)
    assert b["cost_usd_per_session"] <= a["cost_usd_per_session"] * (1 + 1e-12)


def test_the_studies_not_built_for_sessions_yet_refuse_them_by_name() -> None:
    from economics.studies.interactivity import interactivity_curve

    # the planner takes sessions (tests/test_plan_sessions.py); the decode study does not yet
    with pytest.raises(ValueError, match="workload: the decode study does not take sessions yet"):
        interactivity_curve(AMPLE)


def test_a_remote_store_is_shared_over_the_fleet_it_serves() -> None:
    # fixed fleet: 16 accelerators = 2 systems, so 50,000 GB is 25,000 GB a system; sized: the systems of the fleet
    # sized without the store (here the same demand on one system's worth of work), each row on its own in a table
    import pandas as pd

    import economics

    remote = dict(NO_MEMORY, kv_remote_gb=50_000, kv_remote_read_gb_per_s=50, kv_remote_usd_per_gb_month=0)
    fixed = economics.explain_scenario(dict(remote, accelerator_count=16))
    assert fixed.step("kv_remote_gb_per_system").value == 25_000.0
    sized = {k: v for k, v in remote.items() if k != "accelerator_count"}
    without = economics.evaluate_scenario({k: v for k, v in sized.items() if k != "kv_remote_gb"})
    trace = economics.explain_scenario(sized)
    assert trace.step("kv_remote_systems").value == without["systems"]
    assert trace.step("kv_remote_gb_per_system").value == 50_000 / without["systems"]
    table = economics.evaluate(pd.DataFrame([AMPLE, sized, dict(remote, accelerator_count=16)]))
    assert table["valid"].all()
    assert table.loc[1, "kv_hit_rate"] == pytest.approx(economics.evaluate_scenario(sized)["kv_hit_rate"], rel=1e-12)
    assert table.loc[1, "kv_hit_rate_remote"] > 0
