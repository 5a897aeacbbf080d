"""The Sessions page under ``streamlit.testing``: switching the workload gives a valid scenario and says where each
value came from; the issue's hand-worked 4-turn session; an edit moves the KPIs; bad input names the field; moving
to another page and back changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

import economics
from economics.studies.links import encode_query
from tests.test_app import metric_value, start
from tests.test_sessions import AMPLE


def hand_worked() -> AppTest:
    """The issue's session: 4 turns, 1,000-token prefix, 500 in and 100 out a turn, 100,000 GB of host memory."""
    query = encode_query(economics.Scenario(**AMPLE), economics.default_scenario())
    return start("sessions", query)


def table(at: AppTest, column: str) -> Any:
    """The table with this column."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_switching_to_sessions_gives_a_valid_scenario_and_names_each_values_origin() -> None:
    at = start("sessions")
    assert at.session_state["scenario"]["workload"] == "requests"
    assert any("prices single requests" in i.value for i in at.info)
    at.button(key="switch_to_sessions").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    scenario = at.session_state["scenario"]
    economics.evaluate_scenario(scenario)  # valid: raises otherwise
    assert scenario["workload"] == "sessions" and scenario["turns_per_session"] == 21
    origins = table(at, "from").set_index("field")["from"]
    assert "AA-AgentPerf" in origins["output_tokens_per_turn"]
    assert origins["session_prefix_tokens"].startswith("example value: assumption")
    # the default's 5e9 output tokens a day as sessions: 5,000,000,000 / (21 x 150) = 1,587,301.6 sessions a day
    assert scenario["demand_sessions_per_day"] == pytest.approx(5e9 / (21 * 150), rel=1e-15)
    assert metric_value(at, "Sessions served [session/day]") == "1,587,302"
    assert at.query_params["workload"] == "sessions"  # the link carries it
    at.button(key="switch_to_requests").click().run()
    assert not at.exception and at.session_state["scenario"]["turns_per_session"] is None
    economics.evaluate_scenario(at.session_state["scenario"])


def test_the_hand_worked_session_shows_9600_tokens_and_a_hit_rate_of_0_79167() -> None:
    at = hand_worked()
    assert not at.error, [e.value for e in at.error]
    # 4 x 1,000 + (0 + 1 + 2 + 3) x 600 + 4 x 500 = 9,600 input tokens; cached 4,000 + 3,600 = 7,600;
    # kv_hit_rate = 7,600 / 9,600 = 0.791667 (shown 79.2 %); prefilled 9,600 - 7,600 = 2,000
    assert metric_value(at, "Input tokens per session [token]") == "9,600"
    assert metric_value(at, "KV hit rate") == "79.2 %"
    assert metric_value(at, "Prefilled tokens per session [token]") == "2,000"
    where = table(at, "share")
    shares = dict(zip(where.iloc[:, 0], where.iloc[:, 2], strict=True))
    found = sum(v for k, v in shares.items() if not k.startswith("Recomputed"))  # HBM first, then host DRAM
    assert found == pytest.approx(0.791667, abs=5e-7) and shares["Host DRAM"] > 0
    assert shares["Recomputed (prefilled again)"] == pytest.approx(2000 / 9600, abs=1e-9)
    # input : output = 9,600 / (4 x 100) = 24 : 1
    assert any("= 24 : 1" in c.value for c in at.caption)
    assert len(at.get("vega_lite_chart")) == 2  # the context per turn, the speed across the session
    profile = table(at, "ttft_s")  # C_t = 1,000 + (t - 1) x 600 + 500, the profile economics.session_profile gives
    assert profile["context_tokens"].tolist() == [1500.0, 2100.0, 2700.0, 3300.0]
    assert profile["ttft_s"].tolist() == economics.session_profile(AMPLE)["ttft_s"].tolist()


def test_an_edit_moves_the_kpis() -> None:
    at = hand_worked()
    at.text_input(key="turns_per_session").set_value("5").run()
    # 5 x 1,500 + 600 x 5 x 4 / 2 = 7,500 + 6,000 = 13,500
    assert metric_value(at, "Input tokens per session [token]") == "13,500"


@pytest.mark.parametrize("field, value", [("seconds_between_turns", "0"), ("turns_per_session", "abc")])
def test_bad_input_names_the_field_and_keeps_the_scenario(field: str, value: str) -> None:
    at = hand_worked()
    before = dict(at.session_state["scenario"])
    at.text_input(key=field).set_value(value).run()
    assert not at.exception
    assert any(field in e.value for e in at.error), [e.value for e in at.error]
    assert at.session_state["scenario"] == before


def test_a_scenario_the_engine_refuses_is_named_on_the_page() -> None:
    at = hand_worked()
    at.text_input(key="kv_ssd_gb_per_system").set_value("100").run()  # an SSD tier without its bandwidth or price
    assert not at.exception
    assert any("kv_ssd_read_gb_per_s: needed with kv_ssd_gb_per_system above 0" in e.value for e in at.error)


def test_moving_to_another_page_and_back_changes_nothing() -> None:
    at = hand_worked()
    scenario, query = dict(at.session_state["scenario"]), dict(at.query_params)
    shown = [(m.label, m.value) for m in at.metric]
    for page in ("cost", "fleet", "throughput", "sessions"):
        at.switch_page(f"ui/{page}.py").run()
        assert not at.exception, page
        assert at.session_state["scenario"] == scenario and dict(at.query_params) == query, page
    assert [(m.label, m.value) for m in at.metric] == shown


@pytest.mark.parametrize("page", ["cost", "fleet", "decode", "plan", "throughput", "uncertainty", "scenarios"])
def test_every_page_takes_a_session_scenario_without_a_traceback(page: str) -> None:
    # the Throughput page's curve study refused sessions with a ValueError that reached the user as a traceback
    at = hand_worked()
    at.switch_page(f"ui/{page}.py").run()
    assert not at.exception, (page, [e.value for e in at.exception])
