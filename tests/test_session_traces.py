"""Bring your own sessions (issue #39 item 6): a Mooncake trace, vLLM's multi-turn benchmark stats and SGLang's
multi-turn benchmark log as a session row, with provenance; the imported row evaluated end to end; bad input named
by file, line or session, field, value. The fixtures (tests/fixtures/sessions/) were written by hand from the
formats' documented fields; SGLang's (sglang_multiturn_metrics.jsonl) from the log line that
https://github.com/sgl-project/sglang/blob/028e262d7b3a9ae432ec16b08b11ed618b7cfd20/benchmark/hicache/bench_multiturn.py
writes per run (its ``tag`` says so too).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import httpx
import pandas as pd
import pytest

import economics
from economics.io import session_traces as st
from economics.io.benchmark_formats import BenchmarkError
from tests.test_api import _cli
from tests.test_sessions import ENGINE

HERE = Path(__file__).parent / "fixtures" / "sessions"
MOONCAKE = HERE / "mooncake_sessions.jsonl"
VLLM = HERE / "vllm_multi_turn_stats.json"
SGLANG = HERE / "sglang_multiturn_metrics.jsonl"
SHAPE = st.RunShape(num_rounds=5, request_length=512, output_length=64, run=2)
SESSION_FIELDS = ("turns_per_session", "session_prefix_tokens", "input_tokens_per_turn", "output_tokens_per_turn",
                  "seconds_between_turns", "demand_sessions_per_day")


def test_mooncake_trace_by_hand() -> None:
    r = st.import_sessions(MOONCAKE)
    row = r.row.iloc[0]
    # sessions a, b, c with 2, 4, 3 turns: mean 3; population sd sqrt(((2-3)^2 + (4-3)^2 + 0) / 3) = sqrt(2/3)
    assert row["workload"] == "sessions" and row["turns_per_session"] == 3.0
    assert row["turns_per_session_cv"] == pytest.approx((2 / 3) ** 0.5 / 3, rel=1e-12)  # 0.272166
    # every first turn starts with block 0 (then 1, 3, 4 differ): 1 block x 512 tokens
    assert row["session_prefix_tokens"] == 512.0
    # new input: a 1,012 + 400; b 712 + 3 x 300; c 812 + 2 x 200 = 4,236; less 3 x 512 = 2,700; / 9 turns = 300
    assert row["input_tokens_per_turn"] == 300.0
    assert row["output_tokens_per_turn"] == 100.0  # 9 x 100 / 9
    # arrival gaps: a 30; b 20, 30, 30; c 30, 40: 180 / 6 = 30 s
    assert row["seconds_between_turns"] == 30.0
    # starts at 0, 60, 120 s: (3 - 1) / 120 s x 86,400 = 1,440 sessions a day
    assert row["demand_sessions_per_day"] == pytest.approx(1440.0, rel=1e-12)
    p = r.provenance
    assert p["source_file"] == MOONCAKE.name and p["tool"] == "mooncake"
    assert p["source_sha256"] == hashlib.sha256(MOONCAKE.read_bytes()).hexdigest()
    assert p["sessions"] == 3 and p["turns"] == 9 and "includes the answer's own time" in p["how"][
        "seconds_between_turns"]
    # the trace's own contexts: a 1,012 + 1,512; b 712 + 1,112 + 1,512 + 1,912; c 812 + 1,112 + 1,412 = 11,108 / 3
    assert p["trace_input_tokens_per_session"] == pytest.approx(11_108 / 3, rel=1e-12)
    assert r.profile.empty  # a trace records no timings


def test_vllm_multi_turn_stats_by_hand() -> None:
    r = st.import_sessions(VLLM, session_prefix_tokens=1000)
    row = r.row.iloc[0]
    # CONV_ID_1 3 turns, CONV_ID_2 2 turns: mean 2.5, sd 0.5, cv 0.2
    assert row["turns_per_session"] == 2.5 and row["turns_per_session_cv"] == pytest.approx(0.2, rel=1e-12)
    # new input = context - the previous context and answer: 1,200, 1,600 - 1,300 = 300, 2,000 - 1,700 = 300 and
    # 1,200, 300: 3,300 less 2 x 1,000 = 1,300 / 5 turns = 260
    assert row["session_prefix_tokens"] == 1000.0 and row["input_tokens_per_turn"] == 260.0
    assert row["output_tokens_per_turn"] == 100.0
    # idle gaps from the end of the answer: 8.0 - 3.0, 15.0 - 10.0, 13.0 - 6.0 = 5, 5, 7 s: mean 17 / 3
    assert row["seconds_between_turns"] == pytest.approx(17 / 3, rel=1e-12)
    assert row["demand_sessions_per_day"] == pytest.approx(28_800.0, rel=1e-12)  # 1 / (4 - 1) s x 86,400
    # measured by turn: TTFT medians (50, 40) -> 45 ms, (60, 80) -> 70 ms, 70 ms; per-user 1,000 / TPOT
    prof = r.profile
    assert prof["turn"].tolist() == [1, 2, 3] and prof["requests"].tolist() == [2, 2, 1]
    assert prof["median_ttft_s"].tolist() == pytest.approx([0.045, 0.07, 0.07])
    assert prof["median_output_tokens_per_s_per_user"].tolist() == pytest.approx([50.0, 45.0, 40.0])
    assert r.provenance["tool"] == "vllm-multi-turn"


def test_the_imported_row_evaluates_to_its_cost_per_session() -> None:
    row = st.import_sessions(MOONCAKE).row.iloc[0].to_dict()
    hardware = {k: v for k, v in ENGINE.items() if k not in SESSION_FIELDS}
    scenario = {**hardware, **{k: row[k] for k in (*SESSION_FIELDS, "turns_per_session_cv", "workload")}}
    scenario["demand_sessions_per_day"] = row["demand_sessions_per_day"]
    r = economics.evaluate_scenario(scenario)
    # E[T(T-1)] = 9 (1 + 2/27) - 3 = 20/3; history 400 x 20/3 / 2 = 4,000/3; input 3 x (512 + 300) + 4,000/3
    assert r["input_tokens_per_session"] == pytest.approx(2436 + 4000 / 3, rel=1e-12)  # 3,769.33
    assert r["cost_usd_per_session"] == pytest.approx(r["cost_usd_per_day"] / r["sessions_served_per_day"], rel=1e-12)
    assert r["cost_usd_per_session"] > 0


def test_the_row_writes_and_reads_back_through_the_scenario_schema(tmp_path: Path) -> None:
    from economics.io.scenario_files import to_csv_text

    path = tmp_path / "row.csv"
    path.write_text(to_csv_text(st.import_sessions(MOONCAKE).row))
    table = pd.read_csv(path)
    hardware = {k: v for k, v in ENGINE.items() if k not in SESSION_FIELDS}
    for k, v in hardware.items():
        table[k] = v
    out = economics.evaluate(table)
    assert out["valid"].tolist() == [True], out.get("error")


def _bytes(lines: list[dict[str, object]]) -> tuple[str, bytes]:
    return "t.jsonl", "\n".join(json.dumps(x) for x in lines).encode()


GOOD = {"timestamp": 0, "input_length": 600, "output_length": 10, "hash_ids": [0], "session_id": "s"}


@pytest.mark.parametrize("lines, message", [
    ([GOOD, dict(GOOD, input_length=-5)], "t.jsonl, line 2: input_length: -5 is not a number >= 1"),
    ([GOOD, dict(GOOD, timestamp="soon")], "t.jsonl, line 2: timestamp: soon is not a number >= 0"),
    ([GOOD, {k: v for k, v in GOOD.items() if k != "output_length"}], "t.jsonl, line 2: output_length: missing"),
    ([GOOD, dict(GOOD, session_id=[1])], "t.jsonl, line 2: session_id: [1] is not a session id"),
    ([GOOD, dict(GOOD, hash_ids=7)], "t.jsonl, line 2: hash_ids: not a list"),
    ([GOOD, dict(GOOD, session_id="t")],
     "seconds_between_turns: no session has two turns; give --seconds-between-turns"),
    ([GOOD, dict(GOOD, timestamp=1000)], "session_prefix_tokens: the file records no shared blocks"),
])
def test_bad_trace_names_file_line_field_and_value(lines: list[dict[str, object]], message: str) -> None:
    with pytest.raises(BenchmarkError) as err:
        st.import_sessions(_bytes(lines))
    assert message in str(err.value)


def test_a_figure_outside_the_schema_bounds_is_refused_by_the_schema() -> None:
    # two sessions 1 ms apart, one turn each: (2 - 1) / 0.001 s x 86,400 = 86.4 million a day: within 1e12; but a
    # gap of 2e7 s is beyond seconds_between_turns' bound (<= 10,000,000)
    lines = [dict(GOOD, session_id="x"), dict(GOOD, session_id="x", timestamp=2e10), dict(GOOD, session_id="y")]
    with pytest.raises(BenchmarkError) as err:
        st.import_sessions(_bytes(lines))
    assert "seconds_between_turns: 20000000 from the trace is outside the field's bounds (> 0 and <= 10,000,000)" \
        in str(err.value)


def test_vllm_missing_turn_and_cut_history_are_named() -> None:
    records = json.loads(VLLM.read_text())
    skipped = [r for r in records if not (r["conversation_id"] == "CONV_ID_1" and r["input_num_turns"] == 3)]
    with pytest.raises(BenchmarkError) as err:
        st.import_sessions(("v.json", json.dumps(skipped).encode()), session_prefix_tokens=1000)
    assert "input_num_turns: 5, but this is turn 2 of conversation CONV_ID_1 (3 messages expected)" in str(err.value)
    cut = [dict(r, input_num_tokens=900) if r["input_num_turns"] == 5 else r for r in records]
    with pytest.raises(BenchmarkError) as err:
        st.import_sessions(("v.json", json.dumps(cut).encode()), session_prefix_tokens=1000)
    assert "input_num_tokens: 900 is less than the previous turn's context and answer (1700)" in str(err.value)
    with pytest.raises(BenchmarkError) as err:
        st.import_sessions(VLLM)
    assert "give --session-prefix-tokens N" in str(err.value)


def test_size_bound_before_parsing_and_unknown_format() -> None:
    with pytest.raises(BenchmarkError) as err:
        st.import_sessions(("big.jsonl", b" " * (st.MAX_FILE_BYTES + 1)))
    assert "more than the 64,000,000 a trace file may have" in str(err.value)
    with pytest.raises(BenchmarkError) as err:
        st.import_sessions(("x.csv", b"a,b\n1,2\n"))
    assert "x.csv: neither a Mooncake trace" in str(err.value)


def test_a_flag_the_file_contradicts_is_refused() -> None:
    with pytest.raises(BenchmarkError) as err:
        st.import_sessions(MOONCAKE, session_prefix_tokens=100)
    assert "--session-prefix-tokens 100: the file's blocks give 512" in str(err.value)


def test_cli_and_http_api_give_the_same_row(api: httpx.Client, capsys: pytest.CaptureFixture[str],
                                             tmp_path: Path) -> None:
    prov = tmp_path / "prov.json"
    text = _cli(capsys, "import-sessions", str(VLLM), "--session-prefix-tokens", "1000", "--provenance", str(prov))
    assert text.splitlines()[0].startswith("name,workload,turns_per_session,turns_per_session_cv")
    record = json.loads(prov.read_text())
    assert record["source_sha256"] == hashlib.sha256(VLLM.read_bytes()).hexdigest()
    assert record["measured_by_turn"][1]["median_ttft_s"] == pytest.approx(0.07)
    r = api.post("/v1/import-sessions", params={"session_prefix_tokens": 1000, "format": "csv"},
                 files={"files": (VLLM.name, VLLM.read_bytes())})
    assert r.status_code == 200, r.text
    assert r.text == text
    bad = api.post("/v1/import-sessions", files={"files": (VLLM.name, VLLM.read_bytes())})
    assert bad.status_code == 422 and "give --session-prefix-tokens N" in bad.json()["error"]["message"]


def test_sglang_multiturn_log_by_hand() -> None:
    r = st.import_sessions(SGLANG, session_prefix_tokens=100, seconds_between_turns=2.0, shape=SHAPE)
    row = r.row.iloc[0]
    # line 2: 40 requests / 5 rounds = 8 sessions of 5 turns each (every client runs every round: cv 0)
    assert row["workload"] == "sessions" and row["turns_per_session"] == 5.0 and row["turns_per_session_cv"] == 0.0
    # new input: 5 rounds x 512 = 2,560 a session, less the 100-token prefix: 2,460 / 5 = 492 a turn
    assert row["session_prefix_tokens"] == 100.0 and row["input_tokens_per_turn"] == 492.0
    assert row["output_tokens_per_turn"] == 64.0 and row["seconds_between_turns"] == 2.0
    # throughput 1.6 requests/s x 86,400 s/day / 5 rounds = 27,648 sessions a day
    assert row["demand_sessions_per_day"] == pytest.approx(27_648.0, rel=1e-12)
    p = r.provenance
    assert p["tool"] == "sglang-multiturn" and p["sessions"] == 8 and p["turns"] == 40 and p["run_line"] == 2
    assert p["run_date"] == "2026-12-01" and p["format_source"] == st.SGLANG_SOURCE
    assert p["source_sha256"] == hashlib.sha256(SGLANG.read_bytes()).hexdigest()
    # contexts: turn k reads k x 512 + (k - 1) x 64: 512 x 15 + 64 x 10 = 7,680 + 640 = 8,320
    assert p["trace_input_tokens_per_session"] == 8320.0
    # per-user speed: 63 tokens after the first over 2.25 - 0.25 = 2 s mean decode time = 31.5 tokens/s
    m = p["measured_run"]
    assert m["output_tokens_per_s_per_user"] == 31.5 and m["median_ttft_s"] == 0.2 and m["p90_ttft_s"] == 0.4
    assert "--sub-question-input-length" in p["note"] and r.profile.empty  # no TTFT by turn in the log
    assert any(line.startswith("not determined:") for line in st.provenance_lines(r))


def _sglang(summary: dict[str, object], shape: st.RunShape = SHAPE) -> st.SessionImport:
    lines = SGLANG.read_text().splitlines()
    rec = json.loads(lines[1])
    rec["summary"] = {**rec["summary"], **summary}
    data = (lines[0] + "\n" + json.dumps(rec) + "\n").encode()
    return st.import_sessions(("s.jsonl", data), session_prefix_tokens=0, seconds_between_turns=1.0, shape=shape)


@pytest.mark.parametrize("summary, shape, message", [
    ({"average_ttft": -0.5}, SHAPE, "s.jsonl, line 2, summary: average_ttft: -0.5 is not a number >= 0"),
    ({"throughput": "fast"}, SHAPE, "s.jsonl, line 2, summary: throughput: fast is not a number >= 0"),
    ({"throughput": 0}, SHAPE, "demand_sessions_per_day: 0 from the trace is outside the field's bounds"),
    ({"total_requests": 38}, SHAPE, "s.jsonl, line 2, summary: total_requests: 38 is not a whole number of sessions "
                                    "of --num-rounds 5"),
    ({"average_latency": 0.1}, SHAPE, "average_latency: 0.1 s is less than average_ttft (0.25 s)"),
    ({}, st.RunShape(5, 512, 64), "2 runs logged (line 1: tag"),
    ({}, st.RunShape(5, 512, 64, run=3), "--run 3: s.jsonl has no run on that line"),
    ({}, st.RunShape(5, None, None, run=2), "records no rounds, request or output length; give --request-length, "
                                            "--output-length"),
    ({}, st.RunShape(2.5, 512, 64, run=2), "--num-rounds 2.5: must be a whole number >= 1"),
    ({}, st.RunShape(5, 0, 64, run=2),
     "--request-length: input_tokens_per_turn: 0 given is outside the field's bounds"),
])
def test_bad_sglang_log_names_file_line_field_and_value(summary: dict[str, object], shape: st.RunShape,
                                                        message: str) -> None:
    with pytest.raises(BenchmarkError) as err:
        _sglang(summary, shape)
    assert message in str(err.value)


def test_sglang_asks_for_what_its_log_lacks_and_run_flags_are_refused_elsewhere() -> None:
    with pytest.raises(BenchmarkError) as err:
        st.import_sessions(SGLANG, seconds_between_turns=2.0, shape=SHAPE)
    assert "logs no shared prefix; give --session-prefix-tokens N (0 for none)" in str(err.value)
    with pytest.raises(BenchmarkError) as err:
        st.import_sessions(SGLANG, session_prefix_tokens=0, shape=SHAPE)
    assert "logs no turn timings" in str(err.value)
    with pytest.raises(BenchmarkError) as err:
        st.import_sessions(MOONCAKE, shape=st.RunShape(num_rounds=5))
    assert "--num-rounds: for SGLang's bench_multiturn.py log only; a mooncake file" in str(err.value)


def test_sglang_cli_and_http_api_give_the_same_row(api: httpx.Client,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    text = _cli(capsys, "import-sessions", str(SGLANG), "--session-prefix-tokens", "100", "--seconds-between-turns",
                "2", "--num-rounds", "5", "--request-length", "512", "--output-length", "64", "--run", "2")
    assert text.splitlines()[1].endswith(",sessions,5.0,0.0,100.0,492.0,64.0,2.0,27648.0")
    params = {"session_prefix_tokens": 100, "seconds_between_turns": 2, "num_rounds": 5, "request_length": 512,
              "output_length": 64, "run": 2}
    r = api.post("/v1/import-sessions", params={**params, "format": "csv"},
                 files={"files": (SGLANG.name, SGLANG.read_bytes())})
    assert r.status_code == 200, r.text
    assert r.text == text
    j = api.post("/v1/import-sessions", params=params, files={"files": (SGLANG.name, SGLANG.read_bytes())}).json()
    assert j["provenance"]["measured_run"]["output_tokens_per_s_per_user"] == 31.5
    bad = api.post("/v1/import-sessions", params={**params, "run": 3},
                   files={"files": (SGLANG.name, SGLANG.read_bytes())})
    assert bad.status_code == 422 and "--run 3" in bad.json()["error"]["message"]
