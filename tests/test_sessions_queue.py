"""A turn's TTFT includes the wait for a prefill slot (#39, item 3): the planner's M/G/c model at the load agents are
counted at, worked by hand with Erlang C written out as its sums; agents at the highest load the TTFT target
allows."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import economics
from economics.engine.batch import session_profile
from tests.test_sessions import NO_MEMORY


def erlang_c_by_sums(c: int, a: float) -> float:
    """Erlang C from its definition: B = (a^c / c!) / sum_k<=c a^k / k!, C = B / (1 - rho (1 - B))."""
    b = (a ** c / math.factorial(c)) / sum(a ** k / math.factorial(k) for k in range(c + 1))
    return b / (1 - a / c * (1 - b))


def wait_by_hand(c: int, rho: float, service_s: float, p: float = 0.99) -> float:
    """ln(C / (1 - p)) / (c (1 - rho) / S) x (1 + 1) / 2, 0 where C <= 1 - p."""
    erlang = erlang_c_by_sums(c, rho * c)
    return 0.0 if erlang <= 1 - p else math.log(erlang / (1 - p)) / (c * (1 - rho) / service_s)


def test_the_wait_for_a_prefill_slot_by_hand() -> None:
    # NO_MEMORY: 8 replicas of 1 H100 (8 prefill slots). A session prefills 9,600 tokens (0.96 s at 10,000 token/s)
    # and decodes 400 (0.4 s at 1,000): 1.36 s, so at full load 8 x 4 / 1.36 = 23.53 turns/s arrive; the mean turn
    # prefills (500 + 1,000 + 900) / 10,000 = 0.24 s: rho = 23.53 x 0.24 / 8 = 0.96 / 1.36 = 0.70588, a = 5.647.
    # Erlang C(8, 5.647) = 0.28003; W_99 = ln(0.28003 / 0.01) / (8 x 0.29412 / 0.24) = 0.33990 s. The last turn
    # prefills its 3,300 tokens in 0.33 s: TTFT 0.66990 s; the profile adds the same wait to every turn.
    rho = 0.96 / 1.36
    wait = wait_by_hand(8, rho, 0.24)
    assert erlang_c_by_sums(8, 8 * rho) == pytest.approx(0.28003, abs=1e-5) and wait == pytest.approx(0.33990, abs=1e-5)
    r = economics.evaluate_scenario(NO_MEMORY)
    assert r["prefill_wait_s"] == pytest.approx(wait, rel=1e-9)
    assert r["ttft_last_turn_s"] == pytest.approx(wait + 0.33, rel=1e-9)
    assert r["slo_load_fraction"] == 1.0
    assert session_profile(NO_MEMORY)["ttft_s"].tolist() == pytest.approx([wait + t for t in (0.15, 0.21, 0.27, 0.33)],
                                                                          rel=1e-9)
    text = economics.explain_text(NO_MEMORY)
    assert "prefill_wait_s = ln(erlang_c / (1 - ttft_percentile))" in text and "ln(0.28 / (1 - 0.99))" in text


def test_a_lower_percentile_waits_less() -> None:
    # at P90: ln(0.28003 / 0.1) / 9.8039 = 0.10503 s
    r = economics.evaluate_scenario(dict(NO_MEMORY, ttft_percentile=0.9))
    assert r["prefill_wait_s"] == pytest.approx(wait_by_hand(8, 0.96 / 1.36, 0.24, 0.9), rel=1e-9)
    assert r["prefill_wait_s"] == pytest.approx(0.10503, abs=1e-5)


def test_agents_are_counted_at_the_highest_load_the_ttft_target_allows() -> None:
    # HAND: one turn of 1,500 tokens prefilled in 0.15 s, decoded at 1 token/s; at full load 4 sessions/s per
    # accelerator, rho = 32 x 0.15 / 8 = 0.6, W_99 = 0.12356 s: TTFT 0.27356 s. A target of 0.2 s leaves 0.05 s to
    # wait: the load falls to the share l where W(l x 0.6) = 0.05, and agents = 8 x 4 x l x (0.2 + 100 + 60).
    from tests.test_kv_memory import HAND  # here: test_kv_memory imports this module's hand-worked wait
    full = economics.evaluate_scenario(HAND)
    assert full["ttft_last_turn_s"] == pytest.approx(0.15 + wait_by_hand(8, 0.6, 0.15), rel=1e-9)
    r = economics.evaluate_scenario(dict(HAND, ttft_target_s=0.2))
    share = r["slo_load_fraction"]
    assert 0 < share < 1
    assert wait_by_hand(8, 0.6 * share, 0.15) == pytest.approx(0.05, abs=1e-9)
    assert r["ttft_last_turn_s"] == pytest.approx(0.2, abs=1e-9)
    assert r["agents_at_slo"] == pytest.approx(8 * 4 * share * (r["ttft_last_turn_s"] + 100 + 60), rel=1e-9)
    # a target the prefill alone cannot meet holds no agents, and says why
    none = economics.evaluate_scenario(dict(HAND, ttft_target_s=0.1))
    assert none.get("agents_at_slo") is None and "misses the SLO" in none["warnings"]


@settings(max_examples=25, deadline=None)
@given(st.floats(0.16, 0.5), st.floats(0.16, 0.5))
def test_a_looser_ttft_target_never_holds_fewer_agents(a: float, b: float) -> None:
    from tests.test_kv_memory import HAND

    lo, hi = sorted((a, b))
    held = [economics.evaluate_scenario(dict(HAND, ttft_target_s=t))["agents_at_slo"] for t in (lo, hi)]
    assert held[1] >= held[0] * (1 - 1e-9)


def test_ttft_percentile_on_a_request_row_is_refused_by_name() -> None:
    row = {"accelerator": "h100-sxm", "model": "llama-3.1-70b", "precision": "fp8", "accelerator_count": 8,
           "ttft_percentile": 0.9}
    with pytest.raises(economics.ScenarioError, match="ttft_percentile: applies to workload=sessions only"):
        economics.evaluate_scenario(row)
