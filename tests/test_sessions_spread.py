"""A spread of session lengths (issue #39 item 1): ``turns_per_session_cv`` and E[T^2] = mean^2 (1 + cv^2)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import economics
from economics.domain import sessions as ses
from economics.studies.session_shape import to_requests
from tests.test_sessions import AMPLE, ENGINE


def test_turn_pairs_by_hand() -> None:
    # mean 4 turns, cv 0.5: sd 2, E[T^2] = 2^2 + 4^2 = 20 = 16 x (1 + 0.25); E[T (T - 1)] = 20 - 4 = 16, not 4 x 3 = 12
    assert float(ses.turn_pairs_per_session(4, 0.5)) == 16.0
    assert float(ses.turn_pairs_per_session(4, 0.0)) == 12.0
    # history (500 + 100) x 16 / 2 = 4,800; input 4 x (1,000 + 500) + 4,800 = 10,800 (cv 0: 3,600 and 9,600)
    assert float(ses.history_tokens_per_session(4, 500, 100, 0.5)) == 4800.0
    assert float(ses.input_tokens_per_session(4, 1000, 500, 100, 0.5)) == 10_800.0


def test_the_mean_is_exact_for_a_two_point_mix() -> None:
    # half the sessions 2 turns, half 6: mean 4, sd 2, cv 0.5. Summed turn contexts, C_t = 1,000 + (t - 1) 600 + 500:
    # 2 turns: 1,500 + 2,100 = 3,600; 6 turns: 1,500 + 2,100 + 2,700 + 3,300 + 3,900 + 4,500 = 18,000; mean 10,800
    by_turns = {t: sum(float(ses.context_tokens(k, 1000, 500, 100)) for k in range(1, t + 1)) for t in (2, 6)}
    assert by_turns == {2: 3600.0, 6: 18_000.0}
    assert (by_turns[2] + by_turns[6]) / 2 == float(ses.input_tokens_per_session(4, 1000, 500, 100, 0.5))


def test_evaluate_reads_the_spread() -> None:
    r = economics.evaluate_scenario(dict(AMPLE, turns_per_session_cv=0.5))
    assert r["input_tokens_per_session"] == 10_800.0  # as worked above
    assert r["cached_input_tokens_per_session"] == pytest.approx(4000.0 + 4800.0, rel=1e-6)  # prefix + history
    # memory ample: the prefix (4 x 1,000) and the earlier turns (4,800) are found; only the new input is prefilled
    assert r["prefill_tokens_per_session"] == pytest.approx(2000.0, rel=1e-6)
    assert r["input_tokens_per_request"] == 2700.0  # a turn's mean context: 10,800 / 4
    text = economics.explain_text(dict(AMPLE, turns_per_session_cv=0.5))
    assert "= 4 ^ 2 x (1 + 0.5 ^ 2) - 4 = 16 turn^2" in text and "= (500 + 100) x 16 / 2 = 4,800 token" in text


@settings(max_examples=60, deadline=None)
@given(turns=st.floats(1.0, 1e4), cv=st.floats(0.0, 50.0), more=st.floats(0.0, 50.0),
       prefix=st.floats(0.0, 1e5), u=st.floats(1.0, 1e5), o=st.floats(1.0, 1e4))
def test_a_larger_cv_never_lowers_the_input(turns: float, cv: float, more: float, prefix: float, u: float,
                                            o: float) -> None:
    low = float(ses.input_tokens_per_session(turns, prefix, u, o, cv))
    high = float(ses.input_tokens_per_session(turns, prefix, u, o, cv + more))
    assert high >= low


def test_a_larger_cv_never_lowers_the_input_through_evaluate() -> None:
    got = [economics.evaluate_scenario(dict(ENGINE, turns_per_session_cv=cv))["input_tokens_per_session"]
           for cv in (0.0, 0.3, 1.0, 3.0)]
    assert got == sorted(got) and got[0] == 9600.0


@pytest.mark.parametrize("changes, message", [
    ({"workload": "requests", "turns_per_session": None, "session_prefix_tokens": None, "input_tokens_per_turn": None,
      "output_tokens_per_turn": None, "seconds_between_turns": None, "demand_sessions_per_day": None,
      "turns_per_session_cv": 0.5}, "turns_per_session_cv: applies to workload=sessions only"),
    ({"turns_per_session_cv": -0.1}, "turns_per_session_cv"),
    ({"turns_per_session_cv": 101}, "turns_per_session_cv"),
])
def test_bad_spread_names_the_field(changes: dict[str, object], message: str) -> None:
    with pytest.raises(economics.ScenarioError) as err:
        economics.evaluate_scenario({k: v for k, v in dict(ENGINE, **changes).items() if v is not None})
    assert message in str(err.value)


def test_switching_to_requests_sets_the_spread_to_zero() -> None:
    switched = to_requests(dict(ENGINE, turns_per_session_cv=0.5), economics.Scenario())
    assert switched.scenario.turns_per_session_cv == 0.0 and "turns_per_session_cv" in switched.origins
