"""More memory or more accelerators? (#39 item 5): the study picks the cheaper option, worked by hand through the
engine; a larger target never makes an option cheaper per day; the CLI, the HTTP API and the Sessions page give it."""

from __future__ import annotations

import csv
import functools
import io
import json
import math
from pathlib import Path

import httpx
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import economics
from economics.cli import main
from economics.studies.kv_memory import COLUMNS, MIXES, KvMemoryStudy, KvOption, kv_memory_study
from economics.studies.links import encode_query
from tests.test_api import _cli
from tests.test_app import start
from tests.test_sessions_queue import wait_by_hand
from ui import format as fmt

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "example-kv-memory.csv"
# One turn a session (the slowest turn is the only one, so a per-user target of 1 token/s is met), given rates:
# 1,000 output and 10,000 input tokens/s per accelerator, 8 H100 (one system). At 1 token/s a user the running batch
# fills HBM (8,000 sequences x 1,600 tokens x 163,840 B = 2,097 GB > 8 x 80 x 0.9 = 576 GB): no HBM is left.
HAND: dict[str, object] = dict(
    workload="sessions", accelerator="h100-sxm", model="llama-3.1-70b", precision="fp8", turns_per_session=1,
    session_prefix_tokens=1000, input_tokens_per_turn=500, output_tokens_per_turn=100, seconds_between_turns=60,
    accelerator_count=8, output_tokens_per_s_per_accelerator=1000, input_tokens_per_s_per_accelerator=10_000,
    target_output_tokens_per_s_per_user=1, cost_of_capital=0, kv_host_read_gb_per_s=16.384,
    kv_host_memory_usd_per_gb=10, kv_ssd_read_gb_per_s=8.192, kv_ssd_usd_per_gb=0.5)


@functools.cache
def hand_study_of_8000() -> KvMemoryStudy:
    """The study of HAND for 8,000 agents, made once per test process for the two tests that read it (12 table
    evaluations, about 4 s of CPU; the study is a frozen record, and neither test changes its table)."""
    return kv_memory_study(HAND, 8000)


def test_the_study_picks_host_memory_over_more_accelerators_by_hand() -> None:
    # No memory: a session prefills its 1,500 tokens (0.15 accelerator-s) and decodes 100 (0.1 s): 0.25 s -> 4
    # sessions/s per accelerator; 8 prefill slots busy 32 x 0.15 / 8 = 0.6 of the time: Erlang C(8, 4.8) = 0.1395,
    # a P99 wait of ln(0.1395 / 0.01) / (8 x 0.4 / 0.15) = 0.12355 s (tests/test_sessions_queue.py); it lasts
    # 0.15 + 0.12355 (TTFT) + 100 / 1 + 60 = 160.27355 s: 4 x that = 641.09 agents per accelerator, x 8 = 5,128.8
    # held. Target 8,000.
    # Host: the 1,000-token prefix is 1,000 x 163,840 B = 0.164 GB, so 1 GB (the grid's first step) holds it: the
    # session prefills 500 tokens (0.05 s): 0.15 s -> 6.667 sessions/s; the slots are busy 1/3 of the time, Erlang
    # C(8, 2.667) = 0.0066 < 1 %: no wait at P99; TTFT 0.05 + 1,000 / (16.384e9 / 163,840 = 100,000 token/s) = 0.06 s;
    # 6.667 x 160.06 = 1,067.07 agents per accelerator, x 8 = 8,536.5 >= 8,000.
    # Its DRAM: 1 GB x 10 USD / 5 years (cost_of_capital 0: straight line) = 0.000228 USD/h.
    # SSD: 8.192e9 / 163,840 = 50,000 token/s, slower than the system's 80,000 token/s prefill: it holds nothing.
    # Remote: no read bandwidth or price given. Accelerators: ceil(8,000 / 641.09) = 13 -> whole systems of 8: 16,
    # whose 16 slots wait ln(C(16, 9.6) / 0.01) / (16 x 0.4 / 0.15) = 0.03356 s at P99.
    study = hand_study_of_8000()
    assert study.current["agents_at_slo"] == pytest.approx(8 * 4 * (0.15 + wait_by_hand(8, 0.6, 0.15) + 160),
                                                           rel=1e-12)
    assert study.current["agents_at_slo"] == pytest.approx(5128.75, abs=0.01)
    host, ssd, remote, more = study.rows[:4]
    assert (host.option, host.feasible, host.needed, host.added) == (KvOption.HOST, True, 1.0, 1.0)
    assert host.agents_at_slo == pytest.approx(8 * (1 / 0.15) * 160.06, rel=1e-12)
    assert host.kv_tiers_usd_per_hour == pytest.approx(10 / 5 / 8760, rel=1e-12)
    assert host.cost_usd_per_day == pytest.approx(study.current["cost_usd_per_day"] + 10 / 5 / 8760 * 24, rel=1e-12)
    assert not ssd.feasible and "loads slower than the system prefills" in ssd.reason
    assert not remote.feasible and "kv_remote_read_gb_per_s: needed with kv_remote_gb above 0" in remote.reason
    assert (more.feasible, more.needed, more.systems) == (True, 16.0, 2.0)
    assert more.agents_at_slo == pytest.approx(16 * 4 * (0.15 + wait_by_hand(16, 0.6, 0.15) + 160), rel=1e-12)
    # the same fleet with 1 GB more costs less a day and per session than a second system
    assert host.cost_usd_per_day < more.cost_usd_per_day and host.cost_usd_per_session < more.cost_usd_per_session
    assert study.cheapest == host and (host.rank, more.rank, ssd.rank) == (1, 3, None)
    assert "Cheapest: host" in study.why and study.table.columns.tolist() == list(COLUMNS)
    # a cost per session is the day's cost over the sessions served a day at full load: 6.667 x 8 x 86,400
    assert host.cost_usd_per_session == pytest.approx(host.cost_usd_per_day / (8 / 0.15 * 86_400), rel=1e-9)


def test_a_target_beyond_what_memory_can_reach_needs_more_systems() -> None:
    # every prefix found, the most a system holds is 8,536.5 agents: 9,000 needs a second system
    study = kv_memory_study(HAND, 9000)
    host, more = study.rows[0], study.rows[3]
    assert not host.feasible and host.reason.startswith("at most 8,537 agents")
    assert more.feasible and more.needed == 16 and study.cheapest == more


def test_a_decode_below_the_target_cannot_be_helped() -> None:
    # two turns at a 1 token/s target: the batch is sized for the mean turn, the last reads more KV and decodes
    # slower than the target; neither memory nor systems change it
    study = kv_memory_study(dict(HAND, turns_per_session=2), 10)
    assert not any(r.feasible for r in study.rows[:6])
    assert "below target_output_tokens_per_s_per_user" in study.rows[3].reason
    # a fleet of another accelerator has its throughput estimated, its batch sized so the last turn meets the target
    large = study.rows[6]
    assert study.cheapest == large and large.min_output_tokens_per_s_per_user >= 1


@pytest.mark.parametrize("bad, message", [(dict(HAND, workload="requests", turns_per_session=None), "workload"),
                                          (dict(HAND, seconds_between_turns=0), "seconds_between_turns")])
def test_a_row_the_study_does_not_take_is_named(bad: dict[str, object], message: str) -> None:
    bad = {k: v for k, v in bad.items() if v is not None}
    if message == "workload":
        bad = {k: v for k, v in bad.items() if not k.startswith(("session", "turns", "input_tokens_per_turn",
                                                                   "output_tokens_per_turn", "seconds", "kv_"))}
    with pytest.raises(ValueError, match=message):
        kv_memory_study(bad, 10)
    with pytest.raises(ValueError, match="agents"):
        kv_memory_study(HAND, math.nan)


@settings(max_examples=6, deadline=None)
@given(low=st.integers(1000, 12_000), more=st.integers(1, 6000))
def test_more_target_agents_never_makes_an_option_cheaper_per_day(low: int, more: int) -> None:
    a, b = kv_memory_study(HAND, low).rows, kv_memory_study(HAND, low + more).rows
    for small, large in zip(a, b, strict=True):
        if large.feasible:
            assert small.feasible and large.cost_usd_per_day >= small.cost_usd_per_day, small.option
            if small.option not in MIXES:  # a mix may trade its tier's GB for more systems
                assert large.needed >= small.needed


def test_the_cli_writes_the_options_table_and_says_why(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "hand.csv"
    pd.DataFrame([{"name": "hand", **HAND}]).to_csv(path, index=False)
    capsys.readouterr()
    assert main(["kv-memory", str(path), "--row", "hand", "--agents", "8000"]) == 0
    out, err = capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["option"] for r in rows] == ["host", "ssd", "remote", "accelerators", "host+accelerators",
                                           "ssd+accelerators", "large-memory accelerator"]
    assert (rows[0]["needed"], rows[0]["rank"], rows[3]["needed"]) == ("1.0", "1", "16.0")
    assert "Cheapest: host" in err
    doc = json.loads(_cli(capsys, "kv-memory", str(path), "--row", "hand", "--agents", "8000", "--format", "json"))
    assert doc["cheapest"] == "host" and doc["options"][1]["needed"] is None
    assert main(["kv-memory", str(path), "--row", "hand", "--agents", "0"]) == 2  # not a target
    bad = tmp_path / "bad.csv"
    pd.DataFrame([{"name": "bad", **HAND, "seconds_between_turns": 0}]).to_csv(bad, index=False)
    assert main(["kv-memory", str(bad), "--row", "bad", "--agents", "10"]) == 1
    assert "seconds_between_turns" in capsys.readouterr().err


def test_the_example_of_the_how_to(capsys: pytest.CaptureFixture[str]) -> None:
    # docs/how-to/sessions.md: 10,000 agents within a 1 s TTFT on 64 accelerators
    cheapest = {}
    for row in ("agent-h100", "agent-h100-host", "agent-b200", "agent-b200-host"):
        doc = json.loads(_cli(capsys, "kv-memory", str(EXAMPLE), "--row", row, "--agents", "10000", "--format",
                              "json"))
        cheapest[row] = doc["cheapest"]
    # a tier and more systems together hold what neither holds alone on H100 (docs/how-to/sessions.md's table)
    assert cheapest == {"agent-h100": "ssd+accelerators", "agent-h100-host": "ssd+accelerators", "agent-b200": "ssd",
                        "agent-b200-host": "host"}


def test_the_api_answers_as_the_cli(api: httpx.Client, capsys: pytest.CaptureFixture[str]) -> None:
    expected = _cli(capsys, "kv-memory", str(EXAMPLE), "--row", "agent-b200", "--agents", "10000")
    r = api.post("/v1/kv-memory", params={"row": "agent-b200", "agents": 10000, "format": "csv"},
                 content=EXAMPLE.read_bytes(), headers={"content-type": "text/csv"})
    assert r.status_code == 200 and r.text == expected
    r = api.post("/v1/kv-memory", params={"row": "agent-b200", "agents": 10000}, content=EXAMPLE.read_bytes(),
                 headers={"content-type": "text/csv"})
    assert r.status_code == 200 and r.json()["cheapest"] == "ssd" and "Cheapest: ssd" in r.json()["why"]
    r = api.post("/v1/kv-memory", params={"row": "agent-b200"}, content=EXAMPLE.read_bytes(),
                 headers={"content-type": "text/csv"})
    assert r.status_code == 422 and "agents" in r.text
    r = api.post("/v1/kv-memory", json={"scenarios": [{**HAND, "name": "x", "seconds_between_turns": 0}]},
                 params={"agents": 10})
    assert r.status_code == 422 and "seconds_between_turns" in r.json()["error"]["message"]


def test_the_sessions_page_shows_the_study() -> None:
    at = start("sessions", encode_query(economics.Scenario(**HAND), economics.default_scenario()))
    assert not at.error, [e.value for e in at.error]
    at.number_input(key="kv_memory_agents").set_value(8000).run()
    at.button(key="kv_memory_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    table = next(d.value for d in at.dataframe if "Rank" in d.value.columns or "rank" in d.value.columns)
    assert len(table) == 7 and "accelerator" in table.columns
    assert any("Cheapest: host" in t.value for t in at.text)
    # money a day in the schema's format for cost_usd_per_day (USD, as the KPIs write it: whole dollars from $1,000),
    # not a unit cost's cents: the large-memory option's 3,458.85 USD a day reads $3,459, never $3,458.85
    study = kv_memory_study(HAND, 8000)
    assert list(table["cost_usd_per_day"]) == [fmt.usd(v) for v in study.table["cost_usd_per_day"]]
    assert "$3,459" in list(table["cost_usd_per_day"])


def test_a_tier_and_more_systems_together_beat_either_alone() -> None:
    # Target 12,000. Host alone: at most 8,536.5 agents on 8 accelerators (every prefix found, see above): not enough.
    # More systems alone: 641.09 agents an accelerator with no memory (0.15 + W_99 of 0.1236 s TTFT), so 24
    # accelerators (3 systems, 727.7 USD a day). Together: a second system and 1 GB of host DRAM on each: 2 x 8,536.5
    # = 17,073 agents (its slots wait none: Erlang C(16, 5.33) is below 1 %), two systems' cost plus 2 GB of DRAM:
    # 485.1 USD a day, the cheapest.
    study = kv_memory_study(HAND, 12_000)
    host, more, mix = study.rows[0], study.rows[3], study.rows[4]
    assert not host.feasible and more.needed == 24
    assert (mix.option, mix.feasible, mix.needed, mix.accelerators) == (KvOption.HOST_AND_ACCELERATORS, True, 1.0, 16.0)
    assert mix.agents_at_slo == pytest.approx(2 * 8 * (1 / 0.15) * 160.06, rel=1e-12)
    two = economics.evaluate_scenario(dict(HAND, accelerator_count=16))["cost_usd_per_day"]
    assert mix.cost_usd_per_day == pytest.approx(two + 2 * 10 / 5 / 8760 * 24, rel=1e-12)
    assert study.cheapest == mix and mix.cost_usd_per_day < more.cost_usd_per_day
    assert "Cheapest: host+accelerators" in study.why


def test_the_large_memory_option_is_the_catalogs_largest_memory_accelerator() -> None:
    # owned: the roofline accelerators with a price and a power above the H100's 80 GB; the most memory is 288 GB,
    # and of those only the GB200's successor rack, gb300-nvl72, has a catalog price
    study = hand_study_of_8000()
    large = study.rows[6]
    assert large.option is KvOption.LARGE_MEMORY and large.accelerator == "gb300-nvl72"
    assert large.feasible and large.needed == 72 and large.agents_at_slo >= 8000
    assert economics.evaluate_scenario(dict(HAND, accelerator="gb300-nvl72", accelerator_count=72,
                                            output_tokens_per_s_per_accelerator=None,
                                            input_tokens_per_s_per_accelerator=None))[
        "cost_usd_per_day"] == pytest.approx(large.cost_usd_per_day, rel=1e-12)
