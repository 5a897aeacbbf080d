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
