"""A per-user speed that falls with context (#39, item 3): the decode accelerator's two published points (763
tokens/s per user at 10,000 input tokens, "more than 450" at a long context) as a curve whose step is linear in the
context, read at a request's input, along a session's turns and in the decode study."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import economics
from economics.domain.capacity import speed_at_context
from economics.engine.batch import session_profile
from economics.studies import retrofit
from economics.studies.retrofit import OptionKind

CURVE = {"measured_speed_context_tokens": 10_000, "long_context_tokens": 100_000,
         "long_context_output_tokens_per_s_per_user": 450}
# a dataflow rack measured per user: 16 users on a replica of 16 chips
RACK = {"accelerator": "h200-sxm", "model": "minimax-m2", "precision": "fp8", "accelerator_count": 16,
        "measured_output_tokens_per_s_per_user": 763, "concurrent_users_per_replica": 16,
        "accelerators_per_replica": 16, "output_tokens_per_request": 1000}


def _sn50_preset() -> economics.Scenario:
    return next(s for name, (s, _) in economics.preset_scenarios().items() if "SN50" in name)


def test_the_curve_by_hand() -> None:
    # step(C) = 1/763 + (1/450 - 1/763) (C - 10,000) / 90,000: at 55,000, 0.00131062 + 0.5 x 0.00091160 = 0.00176642 s
    # -> 566.117 token/s; at the points themselves the measured speeds come back
    assert float(speed_at_context(55_000, 763, 10_000, 450, 100_000)) == pytest.approx(
        1 / (1 / 763 + 0.5 * (1 / 450 - 1 / 763)), rel=1e-12)
    assert float(speed_at_context(55_000, 763, 10_000, 450, 100_000)) == pytest.approx(566.117, abs=1e-3)
    assert float(speed_at_context(10_000, 763, 10_000, 450, 100_000)) == pytest.approx(763, rel=1e-12)
    assert float(speed_at_context(100_000, 763, 10_000, 450, 100_000)) == pytest.approx(450, rel=1e-12)


def test_a_request_is_priced_at_its_context() -> None:
    # 55,000 input tokens: 566.117 token/s a user x 16 users / 16 chips = 566.117 token/s per accelerator, where the
    # flat figure gave 763
    flat = economics.evaluate_scenario(dict(RACK, input_tokens_per_request=55_000))
    r = economics.evaluate_scenario(dict(RACK, input_tokens_per_request=55_000, **CURVE))
    assert flat["output_tokens_per_s_per_accelerator"] == pytest.approx(763, rel=1e-12)
    assert r["output_tokens_per_s_per_user_at_context"] == pytest.approx(566.117, abs=1e-3)
    assert r["output_tokens_per_s_per_accelerator"] == pytest.approx(r["output_tokens_per_s_per_user_at_context"])
    assert r["cost_usd_per_m_tokens"] > flat["cost_usd_per_m_tokens"]
    text = economics.explain_text(dict(RACK, input_tokens_per_request=55_000, **CURVE))
    assert "output_tokens_per_s_per_user_at_context" in text and "long_context_tokens" in text


@settings(max_examples=30, deadline=None)
@given(st.floats(1_000, 90_000), st.floats(1_000, 90_000))
def test_a_longer_context_never_decodes_faster(a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    v = [economics.evaluate_scenario(dict(RACK, input_tokens_per_request=c, **CURVE))[
        "output_tokens_per_s_per_accelerator"] for c in (lo, hi)]
    assert v[1] <= v[0] * (1 + 1e-12)


SESSION = dict(RACK, workload="sessions", turns_per_session=10, session_prefix_tokens=5_000,
               input_tokens_per_turn=4_000, output_tokens_per_turn=1_000, seconds_between_turns=30,
               input_tokens_per_s_per_accelerator=20_000, **CURVE)
SESSION.pop("output_tokens_per_request")


def test_a_sessions_later_turns_decode_slower() -> None:
    # C_t = 5,000 + (t - 1) x 5,000 + 4,000: 9,000 ... 54,000; the mean turn 31,500. Each turn reads the curve at its
    # context; the mean step is the mean context's (the step is linear), so the throughput is the curve at 31,500.
    p = session_profile(SESSION)
    speeds = p["output_tokens_per_s_per_user"].tolist()
    assert speeds == pytest.approx([float(speed_at_context(c, 763, 10_000, 450, 100_000))
                                    for c in p["context_tokens"]], rel=1e-12)
    assert all(later < earlier for earlier, later in zip(speeds, speeds[1:], strict=False))
    r = economics.evaluate_scenario(SESSION)
    assert r["min_output_tokens_per_s_per_user"] == pytest.approx(speeds[-1], rel=1e-12)
    mean_step = sum(1 / s for s in speeds) / len(speeds)
    assert r["output_tokens_per_s_per_user_at_context"] == pytest.approx(1 / mean_step, rel=1e-12)
    assert r["output_tokens_per_s_per_user_at_context"] == pytest.approx(
        float(speed_at_context(31_500, 763, 10_000, 450, 100_000)), rel=1e-12)


@pytest.mark.parametrize(("changes", "field", "words"), [
    ({"long_context_tokens": 100_000}, "measured_speed_context_tokens", "needs all of"),
    (dict(CURVE, long_context_tokens=5_000), "long_context_tokens", "must be longer"),
    (dict(CURVE, long_context_output_tokens_per_s_per_user=800), "long_context_output_tokens_per_s_per_user",
     "at most that"),
    (dict(CURVE, long_context_tokens=11_000, long_context_output_tokens_per_s_per_user=10),
     "long_context_output_tokens_per_s_per_user", "zero decode step"),
    (dict(CURVE, output_tokens_per_s_per_accelerator=500), "long_context_tokens", "applies to a measured per-user"),
])
def test_a_curve_that_cannot_be_read_is_refused_naming_the_field(changes: dict, field: str, words: str) -> None:
    with pytest.raises(economics.ScenarioError) as e:
        economics.evaluate_scenario(dict(RACK, input_tokens_per_request=20_000, **changes))
    assert field in str(e.value) and words in str(e.value)


def test_the_sn50_preset_carries_the_published_curve_and_says_the_assumed_length() -> None:
    s = _sn50_preset()
    assert (s.measured_speed_context_tokens, s.long_context_tokens, s.long_context_output_tokens_per_s_per_user) == (
        10_000, 100_000, 450)
    note = next(n for name, (_, n) in economics.preset_scenarios().items() if "SN50" in name)
    assert "assumption" in note and "nextplatform.com/a/4092613" in note
    # at its own 10,000 input tokens the preset reads the stated 763 exactly: its figures are unchanged
    assert economics.evaluate_scenario(s)["decode_output_tokens_per_s_per_accelerator"] == pytest.approx(763)


def test_the_decode_study_prices_the_decode_pool_at_the_context() -> None:
    # the preset at 50,000 input tokens, its decode pool balanced to the 4 H200s' prefill: the same pool serves
    # 582.827 / 763 of the output the flat 763 figure claimed, 1 / (1/763 + (1/450 - 1/763) x 40,000 / 90,000) =
    # 582.827 token/s a user, so each token costs more
    s = _sn50_preset()
    base = {"existing_accelerators": 4, "demand_input_tokens_per_day": 1e9, "demand_output_tokens_per_day": 1e8,
            "input_tokens_per_request": 50_000, "decode_accelerator_count": None}
    rows = {}
    for curve in (True, False):
        changes = base if curve else dict(base, **dict.fromkeys(CURVE))
        res = retrofit.analyse(s.model_copy(update=changes))
        rows[curve] = next(r for r in res.rows if r["option"] is OptionKind.ADD_DECODE)
    assert rows[True]["decode_accelerators"] == rows[False]["decode_accelerators"]
    ratio = rows[True]["capacity_output_tokens_per_year"] / rows[False]["capacity_output_tokens_per_year"]
    assert ratio == pytest.approx(582.827 / 763, abs=1e-5)
    assert rows[True]["levelized_cost_usd_per_m_tokens"] > rows[False]["levelized_cost_usd_per_m_tokens"]
