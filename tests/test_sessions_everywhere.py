"""Agent sessions every way in (#39): the command line (``evaluate``, ``explain`` with every session line
substituted), the HTTP API (``/v1/evaluate``, ``/v1/explain``), Python and a link, on the example of
docs/example-sessions.csv (a coding-agent session on H100 and B200, with and without a host-memory tier)."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import httpx
import pandas as pd
import pytest

import economics
from economics.domain import sessions as ses
from economics.domain.formula import Formula, reevaluate
from economics.studies.links import decode_query, encode_query
from economics.studies.session_shape import to_requests, to_sessions
from tests.test_api import _cli
from tests.test_sessions import AMPLE

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "example-sessions.csv"
CSV = "text/csv"


def session_formulas() -> set[str]:
    """The name of every formula of economics.domain.sessions (the lines explain writes for a session)."""
    names: set[str] = set()
    for value in vars(ses).values():
        for f in (value.values() if isinstance(value, dict) else [value]):
            if isinstance(f, Formula):
                names.add(f.name)
    return names


def rows() -> pd.DataFrame:
    return economics.evaluate(pd.read_csv(EXAMPLE, comment="#")).set_index("name")


def test_the_example_says_which_is_cheaper_per_session_and_why() -> None:
    out = rows()
    assert out["valid"].all()
    # same session on both: 21 x (9,000 + 1,500) + 1,650 x 21 x 20 / 2 = 220,500 + 346,500 = 567,000 tokens
    assert (out["input_tokens_per_session"] == 567_000.0).all()
    # B200 is cheaper per session than H100, with or without the host tier
    assert out.loc["agent-b200", "cost_usd_per_session"] < out.loc["agent-h100", "cost_usd_per_session"]
    assert out.loc["agent-b200-host", "cost_usd_per_session"] < out.loc["agent-h100-host", "cost_usd_per_session"]
    for gpu in ("h100", "b200"):  # the host tier finds context HBM lost over a 60 s gap, so less is prefilled
        without, host = out.loc[f"agent-{gpu}"], out.loc[f"agent-{gpu}-host"]
        assert host["kv_hit_rate"] > without["kv_hit_rate"] and host["kv_hit_rate_host"] > 0
        assert host["prefill_tokens_per_session"] < without["prefill_tokens_per_session"]
        assert host["kv_tiers_usd_per_hour"] > 0 and without["kv_tiers_usd_per_hour"] == 0
        assert host["cost_usd_per_session"] < without["cost_usd_per_session"]
        # the identity that holds a session's cost to the day's
        assert host["cost_usd_per_session"] * host["sessions_served_per_day"] == pytest.approx(
            host["cost_usd_per_day"], rel=1e-12)


def test_the_cli_evaluates_the_example_as_python_does(capsys: pytest.CaptureFixture[str]) -> None:
    text = _cli(capsys, "evaluate", str(EXAMPLE))
    table = {r["name"]: r for r in csv.DictReader(io.StringIO(text))}
    python = rows()
    for name, row in table.items():
        assert row["valid"] in ("True", "true")
        assert float(row["cost_usd_per_session"]) == pytest.approx(python.loc[name, "cost_usd_per_session"],
                                                                   rel=1e-12)
        assert float(row["kv_hit_rate"]) == pytest.approx(python.loc[name, "kv_hit_rate"], rel=1e-12)


@pytest.mark.parametrize("row", ["agent-h100", "agent-b200-host"])
def test_explain_substitutes_every_session_line(capsys: pytest.CaptureFixture[str], row: str) -> None:
    text = _cli(capsys, "explain", str(EXAMPLE), "--row", row)
    scenario = pd.read_csv(EXAMPLE, comment="#").set_index("name").loc[row].dropna().to_dict()
    trace = economics.explain_scenario({"name": row, **scenario})
    wanted = session_formulas()
    shown = [s for s in trace.steps if s.name in wanted]
    assert {"input_tokens_per_session", "kv_hit_rate", "prefill_tokens_per_session", "kv_history_hit",
            "cost_usd_per_session", "sessions_served_per_day"} <= {s.name for s in shown}
    for step in shown:
        # substituted: numbers only, no symbol left (a symbol has an underscore: kv_hit_rate, turns_per_session)
        assert not re.search(r"[a-z]+_[a-z_]+", step.substituted), (step.name, step.substituted)
        assert f"{step.name} = " in text and step.substituted in text, step.name
        if step.checked:
            assert reevaluate(step.substituted) == pytest.approx(step.value, rel=1e-3, abs=1e-9), step.name


def test_explain_shows_the_hand_worked_session(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "hand.csv"
    pd.DataFrame([{"name": "hand", **AMPLE}]).to_csv(path, index=False)
    text = _cli(capsys, "explain", str(path), "--row", "hand")
    assert "= 4 x (1,000 + 500) + 3,600 = 9,600 token" in text
    assert "= (500 + 100) x 12 / 2 = 3,600 token" in text and "= 4 ^ 2 x (1 + 0 ^ 2) - 4 = 12 turn^2" in text
    assert "= 9,600 - 7,600 = 2,000 token" in text and "= 7,600 / 9,600 = 0.7917" in text


def test_the_api_evaluates_and_explains_a_session_row_as_the_cli(
        api: httpx.Client, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "cli.csv"
    assert _cli(capsys, "evaluate", str(EXAMPLE), "-o", str(out)) == ""
    r = api.post("/v1/evaluate", params={"format": "csv"}, content=EXAMPLE.read_bytes(),
                 headers={"content-type": CSV})
    assert r.status_code == 200 and r.content == out.read_bytes()
    expected = _cli(capsys, "explain", str(EXAMPLE), "--row", "agent-b200-host")
    r = api.post("/v1/explain", params={"format": "text", "row": "agent-b200-host"}, content=EXAMPLE.read_bytes(),
                 headers={"content-type": CSV})
    assert r.status_code == 200 and r.text == expected
    assert "kv_hit_rate = cached_input_tokens_per_session / input_tokens_per_session" in r.text


def test_a_bad_session_row_is_named_by_the_api(api: httpx.Client) -> None:
    bad = {**AMPLE, "name": "bad", "seconds_between_turns": 0}
    r = api.post("/v1/evaluate", json={"scenarios": [{**AMPLE, "name": "ok"}, bad]})
    assert r.status_code == 422
    doc = r.json()
    (p,) = doc["error"]["problems"]
    assert (p["row"], p["name"], p["field"], p["value"]) == (2, "bad", "seconds_between_turns", 0)
    assert "seconds_between_turns: must be > 0" in p["message"]
    assert [r["name"] for r in doc["results"]] == ["ok"]
    assert doc["results"][0]["kv_hit_rate"] == pytest.approx(0.791667, abs=5e-7)  # 7,600 / 9,600


@pytest.mark.parametrize("scenario", [AMPLE, dict(AMPLE, kv_ssd_gb_per_system=4000, kv_ssd_read_gb_per_s=14,
                                                   kv_ssd_usd_per_gb=0.1, kv_remote_gb=50_000,
                                                   kv_remote_read_gb_per_s=50, kv_remote_usd_per_gb_month=0.02)])
def test_a_session_scenario_round_trips_through_a_link(scenario: dict[str, object]) -> None:
    s = economics.Scenario(**scenario)
    query = encode_query(s, economics.default_scenario())
    assert query["workload"] == "sessions" and query["turns_per_session"] == "4"
    values, warnings = decode_query({k: v for k, v in query.items() if k != "v"}, economics.default_scenario())
    assert warnings == []
    again = economics.Scenario.model_validate(economics.with_changes(economics.default_scenario(), **values))
    assert again == s
    assert economics.evaluate_scenario(again)["kv_hit_rate"] == economics.evaluate_scenario(s)["kv_hit_rate"]


def test_switching_keeps_given_session_figures_and_back_again_is_valid() -> None:
    given = economics.Scenario(**AMPLE)
    switched = to_sessions(given)
    assert switched.scenario == given and switched.origins == {"workload": "switched to sessions"}
    back = to_requests(given, economics.default_scenario()).scenario
    assert back.workload == "requests" and back.kv_host_memory_gb_per_system == 0.0
    economics.evaluate_scenario(back)
    economics.evaluate_scenario(to_sessions(back).scenario)


def test_the_profile_is_the_same_from_python_the_cli_and_the_api(
        api: httpx.Client, capsys: pytest.CaptureFixture[str]) -> None:
    row = pd.read_csv(EXAMPLE, comment="#").set_index("name").loc["agent-b200-host"].dropna().to_dict()
    table = economics.session_profile(row)
    # 21 turns; C_t = 9,000 + (t - 1) x 1,650 + 1,500: 10,500 at the first, 10,500 + 20 x 1,650 = 43,500 at the last
    assert table["turn"].tolist() == list(range(1, 22))
    assert table["context_tokens"].iloc[[0, -1]].tolist() == [10_500.0, 43_500.0]
    # the last row is the last turn's outputs: the evaluation's minimum speed and last TTFT
    out = rows().loc["agent-b200-host"]
    assert table["output_tokens_per_s_per_user"].iloc[-1] == pytest.approx(out["min_output_tokens_per_s_per_user"],
                                                                           rel=1e-12)
    assert table["ttft_s"].iloc[-1] == pytest.approx(out["ttft_last_turn_s"], rel=1e-12)
    expected = _cli(capsys, "session-profile", str(EXAMPLE), "--row", "agent-b200-host")
    assert expected.splitlines()[0] == "turn,context_tokens,output_tokens_per_s_per_user,ttft_s"
    assert len(expected.splitlines()) == 22
    r = api.post("/v1/session-profile", params={"row": "agent-b200-host", "format": "csv"},
                 content=EXAMPLE.read_bytes(), headers={"content-type": CSV})
    assert r.status_code == 200 and r.text == expected
    doc = api.post("/v1/session-profile", params={"row": "agent-b200-host"}, content=EXAMPLE.read_bytes(),
                   headers={"content-type": CSV}).json()
    assert [t["context_tokens"] for t in doc["turns"]] == table["context_tokens"].tolist()


def test_a_request_row_has_no_profile_and_says_which_field(
        api: httpx.Client, capsys: pytest.CaptureFixture[str]) -> None:
    requests = Path(__file__).resolve().parent.parent / "docs" / "example.csv"
    with pytest.raises(economics.ScenarioError, match="workload: the per-turn profile is of workload=sessions"):
        economics.session_profile(economics.default_scenario())
    from economics.cli import main
    assert main(["session-profile", str(requests), "--row", "1"]) == 1
    assert "row 1 (worked-example): workload: the per-turn profile" in capsys.readouterr().err
    r = api.post("/v1/session-profile", params={"row": "1"}, content=requests.read_bytes(),
                 headers={"content-type": CSV})
    assert r.status_code == 422
    (p,) = r.json()["error"]["problems"]
    assert (p["row"], p["name"], p["field"], p["value"]) == (1, "worked-example", "workload", "requests")
