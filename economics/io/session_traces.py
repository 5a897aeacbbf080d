"""Bring your own sessions: ``import-sessions`` and :func:`import_sessions` (issue #39 item 6).

A session trace or a multi-turn benchmark's per-request record is read into sessions of turns, as recorded, and
summed up into one ``workload=sessions`` scenario row (docs/how-to/sessions.md, "Importing a trace"):

- ``turns_per_session`` = turns / sessions; ``turns_per_session_cv`` = their population standard deviation / mean;
- ``session_prefix_tokens`` (S): the blocks every session's first turn starts with (Mooncake ``hash_ids``) x the
  block size, or ``--session-prefix-tokens`` where the file records no blocks;
- ``input_tokens_per_turn`` = (new input tokens of every turn - sessions x S) / turns, a turn's new input being
  what it adds to the context (its message, a tool's output); ``output_tokens_per_turn`` = output tokens / turns;
- ``seconds_between_turns`` = the mean gap between a turn and the next turn of its session: from the end of the
  answer where the file records it (vLLM), else from the turn's start (Mooncake: the gap then includes the answer's
  own time, an upper bound of the idle time; said in the provenance);
- ``demand_sessions_per_day`` = (sessions - 1) / (last session's start - first session's start) x 86,400.

The formats (what is read, and the public description followed):

- ``mooncake``: the Mooncake trace's JSONL (https://github.com/kvcache-ai/Mooncake, FAST25-release/traces), one
  request a line: ``timestamp`` [ms], ``input_length``, ``output_length``, ``hash_ids`` (blocks of 512 tokens by
  default), and ``session_id`` joining the turns of one session (as NVIDIA AIPerf's and Dynamo's trace replay read it:
  https://docs.nvidia.com/aiperf/benchmark-modes/trace-replay-with-mooncake-traces). A turn's ``input_length`` is the
  tokens it adds; the replay accumulates the history. A line without ``session_id`` is a one-turn session.
- ``vllm-multi-turn``: the per-request JSON of vLLM's ``benchmarks/multi_turn/benchmark_serving_multi_turn.py
  --stats-json-output`` (https://github.com/vllm-project/vllm/tree/main/benchmarks/multi_turn): an array of
  records with ``conversation_id``, ``start_time_ms``, ``latency_ms``, ``input_num_turns`` (messages sent: 2k - 1
  at the k-th user turn), ``input_num_tokens`` (the whole context), ``output_num_tokens``, ``ttft_ms``, ``tpot_ms``.
  The measured TTFT and per-user speed (1,000 / TPOT) are kept per turn number (:attr:`SessionImport.profile`).
- ``sglang-multiturn``: the log SGLang's ``benchmark/hicache/bench_multiturn.py`` appends to ``--log-file``
  (:data:`SGLANG_SOURCE`), one JSON line per run (one request rate): ``timestamp`` (ISO), ``tag`` and ``summary``
  with ``total_requests``, ``request_rate`` [requests/s, the sender's pacing], ``average_ttft``, ``median_ttft``,
  ``p90_ttft``, ``average_latency``, ``median_latency``, ``p90_latency`` [s] and ``throughput`` [requests/s
  completed]. The log records no session shape: the run's ``--num-rounds``, ``--request-length`` and
  ``--output-length`` are asked for (:class:`RunShape`), as are the shared prefix and the gap between turns; the
  measured TTFT, latency and per-user speed go to the provenance (``measured_run``).

Every figure is held to the scenario field's bounds (:data:`economics.schema.scenario.FIELDS`) and refused naming the
file, the line or session, the field and the value. Files are read to the same size bound as ``import-benchmark``.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import pandas as pd

from economics.domain.formula import SECONDS_PER_DAY
from economics.io.benchmark_formats import BenchmarkError
from economics.io.benchmark_formats import number_cell as num
from economics.io.scenario_files import read_input_bytes
from economics.schema import user_curves
from economics.schema.scenario import FIELDS, Workload
from economics.schema.validation import InputError
from economics.schema.values import shown

__all__ = ["FORMATS", "SessionImport", "TraceFormat", "import_sessions"]


class TraceFormat(StrEnum):
    """A session file's format (``import-sessions --format``, the API's ``trace_format``): ``auto`` tells the others
    apart by content.

    >>> [f.value for f in TraceFormat]
    ['auto', 'mooncake', 'vllm-multi-turn', 'sglang-multiturn']
    """

    AUTO = "auto"
    MOONCAKE = "mooncake"
    VLLM_MULTI_TURN = "vllm-multi-turn"
    SGLANG_MULTITURN = "sglang-multiturn"


FORMATS = tuple(f.value for f in TraceFormat if f is not TraceFormat.AUTO)
"""The formats a file is read in (:class:`TraceFormat` but ``auto``)."""
MAX_FILE_BYTES = 64_000_000
"""The most bytes a trace file may have: read whole, its records parsed (memory stays well under 1 GB)."""
MAX_TURNS = 2_000_000
"""The most turns (lines or records) one import reads."""
MOONCAKE_BLOCK_TOKENS = 512
"""The tokens one Mooncake ``hash_ids`` block stands for (the trace's release notes; ``--block-tokens``)."""
SGLANG_SOURCE = ("https://github.com/sgl-project/sglang/blob/028e262d7b3a9ae432ec16b08b11ed618b7cfd20/benchmark/"
                 "hicache/bench_multiturn.py")
"""The version of SGLang's multi-turn benchmark whose log format ``sglang-multiturn`` follows."""
SGLANG_SUMMARY = ("total_requests", "request_rate", "average_ttft", "median_ttft", "p90_ttft", "average_latency",
                  "median_latency", "p90_latency", "throughput")
"""The keys of a bench_multiturn.py log line's ``summary``, every one required."""
ROW_FIELDS = ("turns_per_session", "turns_per_session_cv", "session_prefix_tokens", "input_tokens_per_turn",
              "output_tokens_per_turn", "seconds_between_turns", "demand_sessions_per_day")
"""The scenario fields an import fills."""


@dataclass
class Turn:
    """One turn as recorded: its start [s], the input tokens it adds, its output tokens, its end [s] if known."""

    start_s: float
    new_input: float
    output: float
    end_s: float | None
    where: str
    ttft_s: float | None = None
    per_user: float | None = None
    blocks: tuple[str, ...] | None = None  # the turn's hash_ids (Mooncake), None where the file has none


@dataclass
class Trace:
    """A file's sessions (id -> turns in order) and how it was read."""

    tool: str
    sessions: dict[str, list[Turn]] = field(default_factory=dict)
    gap_basis: str = ""


@dataclass(frozen=True)
class SessionImport:
    """The imported row (scenario columns), its provenance (file, SHA-256, tool, dates, how each field was found,
    the trace's own totals) and, for a benchmark with timings, the measured profile by turn number.
    """

    row: pd.DataFrame
    provenance: dict[str, Any]
    profile: pd.DataFrame


@dataclass(frozen=True)
class RunShape:
    """What SGLang's bench_multiturn.py ran with but does not log (its ``--num-rounds``, ``--request-length``,
    ``--output-length``) and which logged run to read (``run``: its line in the log, needed where it has several).
    """

    num_rounds: float | None = None
    request_length: float | None = None
    output_length: float | None = None
    run: int | None = None

    def given(self) -> dict[str, float]:
        """The flags given, by their command-line names."""
        named = {"--num-rounds": self.num_rounds, "--request-length": self.request_length,
                 "--output-length": self.output_length, "--run": self.run}
        return {k: float(v) for k, v in named.items() if v is not None}


def _number(rec: dict[str, Any], key: str, where: str, *, required: bool = True, low: float = 0.0) -> float | None:
    """A finite number >= ``low`` under ``key``, else a :class:`BenchmarkError` naming where, the field and value."""
    if key not in rec or rec[key] is None:
        if required:
            raise BenchmarkError(f"{where}: {key}: missing")
        return None
    v = rec[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)) or float(v) < low:
        raise BenchmarkError(f"{where}: {key}: {shown(str(v))} is not a number >= {num(low)}")
    return float(v)


def _session_id(rec: dict[str, Any], key: str, where: str) -> str | None:
    v = rec.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (str, int)) or str(v) == "":
        raise BenchmarkError(f"{where}: {key}: {shown(str(v))} is not a session id (text or a whole number)")
    return str(v)


def read_mooncake(data: bytes, name: str) -> Trace:
    """A Mooncake JSONL trace's sessions (module docstring), each line checked as it is read."""
    trace = Trace("mooncake", gap_basis="turn start to the next turn's start (the trace records arrivals only: "
                                        "the gap includes the answer's own time)")
    for n, line in enumerate(_text(data, name).splitlines(), start=1):
        if not line.strip():
            continue
        if n > MAX_TURNS:
            raise BenchmarkError(f"{shown(name)}: more than {MAX_TURNS:,} lines")
        where = f"{shown(name)}, line {n}"
        rec = _record(line, where)
        sid = _session_id(rec, "session_id", where) or f"line {n}"
        blocks = rec.get("hash_ids", [])
        if not isinstance(blocks, list):
            raise BenchmarkError(f"{where}: hash_ids: not a list of block ids")
        turn = Turn(float(_number(rec, "timestamp", where) or 0.0) / 1000.0,
                    float(_number(rec, "input_length", where, low=1.0) or 0.0),
                    float(_number(rec, "output_length", where, low=1.0) or 0.0), None, where,
                    blocks=tuple(str(b) for b in blocks) if "hash_ids" in rec else None)
        trace.sessions.setdefault(sid, []).append(turn)
    for turns in trace.sessions.values():
        turns.sort(key=lambda t: t.start_s)  # stable: a session's lines in file order where they start together
    return trace


def read_vllm_multi_turn(data: bytes, name: str) -> Trace:
    """The per-request stats of vLLM's multi-turn benchmark (module docstring): a turn's new input is its context
    less the previous turn's context and answer; a skipped turn (a failed request) is refused, naming the
    conversation.
    """
    trace = Trace("vllm-multi-turn", gap_basis="end of the answer (start_time_ms + latency_ms) to the next turn's "
                                               "start")
    try:
        records = json.loads(_text(data, name))
    except json.JSONDecodeError as exc:
        raise BenchmarkError(f"{shown(name)}: not JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise BenchmarkError(f"{shown(name)}: not a JSON array of request records (--stats-json-output)")
    if len(records) > MAX_TURNS:
        raise BenchmarkError(f"{shown(name)}: more than {MAX_TURNS:,} records")
    raw: dict[str, list[tuple[float, dict[str, Any], str]]] = {}
    for i, rec in enumerate(records, start=1):
        where = f"{shown(name)}, record {i}"
        sid = _session_id(rec, "conversation_id", where)
        if sid is None:
            raise BenchmarkError(f"{where}: conversation_id: missing")
        raw.setdefault(sid, []).append((float(_number(rec, "start_time_ms", where) or 0.0), rec, where))
    for sid, rows in raw.items():
        rows.sort(key=lambda r: r[0])
        turns, context, answer = [], 0.0, 0.0
        for k, (start_ms, rec, where) in enumerate(rows, start=1):
            messages = _number(rec, "input_num_turns", where, low=1.0)
            if messages != 2 * k - 1:
                raise BenchmarkError(f"{where}: input_num_turns: {num(messages)}, but this is turn {k} of conversation "
                                     f"{shown(sid)} ({2 * k - 1} messages expected): a turn is missing (a failed "
                                     "request?); the context growth cannot be read")
            full = float(_number(rec, "input_num_tokens", where, low=1.0) or 0.0)
            new = full - context - answer
            if new < 0:
                raise BenchmarkError(f"{where}: input_num_tokens: {num(full)} is less than the previous turn's context "
                                     f"and answer ({num(context + answer)}) in conversation {shown(sid)}: the history "
                                     "was cut; the session model needs every earlier turn in the context")
            out = float(_number(rec, "output_num_tokens", where, low=1.0) or 0.0)
            latency = float(_number(rec, "latency_ms", where) or 0.0)
            tpot = _number(rec, "tpot_ms", where, required=False)
            ttft = _number(rec, "ttft_ms", where, required=False)
            turns.append(Turn(start_ms / 1000.0, new, out, (start_ms + latency) / 1000.0, where,
                              None if ttft is None else ttft / 1000.0,
                              None if not tpot else 1000.0 / tpot))
            context, answer = full, out
        trace.sessions[sid] = turns
    return trace


@dataclass(frozen=True)
class SglangRun:
    """One run of SGLang's bench_multiturn.py as logged: its line, tag, date and checked summary figures."""

    line: int
    tag: str
    timestamp: str
    summary: dict[str, float]
    where: str


def read_sglang_multiturn(data: bytes, name: str, run: int | None) -> SglangRun:
    """The run ``run`` (a line number; may be left out where the log holds one run) of a bench_multiturn.py log
    (module docstring), its summary checked: every key present, a finite number >= 0, whole requests, and the mean
    latency not below the mean TTFT.
    """
    lines: dict[int, dict[str, Any]] = {}
    for n, line in enumerate(_text(data, name).splitlines(), start=1):
        if line.strip():
            rec = _record(line, f"{shown(name)}, line {n}")
            if not isinstance(rec.get("summary"), dict):
                raise BenchmarkError(f"{shown(name)}, line {n}: summary: missing (not a bench_multiturn.py log line)")
            lines[n] = rec
    if not lines:
        raise BenchmarkError(f"{shown(name)}: no runs in the file")
    listed = "; ".join(f"line {n}: tag {shown(str(r.get('tag', '')))}, request_rate "
                       f"{shown(str(r['summary'].get('request_rate')))}" for n, r in list(lines.items())[:20])
    if run is None and len(lines) > 1:
        raise BenchmarkError(f"{shown(name)}: {len(lines):,} runs logged ({listed}{'; ...' if len(lines) > 20 else ''})"
                             "; give --run N, the line of the run to read")
    n = run if run is not None else next(iter(lines))
    if n not in lines:
        raise BenchmarkError(f"--run {n}: {shown(name)} has no run on that line ({listed})")
    rec, where = lines[n], f"{shown(name)}, line {n}, summary"
    summary = {k: float(_number(rec["summary"], k, where) or 0.0) for k in SGLANG_SUMMARY}
    if summary["total_requests"] < 1 or not summary["total_requests"].is_integer():
        raise BenchmarkError(f"{where}: total_requests: {num(summary['total_requests'])} is not a whole number >= 1")
    if summary["average_latency"] < summary["average_ttft"]:
        raise BenchmarkError(f"{where}: average_latency: {num(summary['average_latency'])} s is less than "
                             f"average_ttft ({num(summary['average_ttft'])} s): a request ends after its first token")
    stamp = rec.get("timestamp", "")
    try:
        date = dt.datetime.fromisoformat(stamp).date().isoformat() if stamp != "" else ""
    except (TypeError, ValueError):
        raise BenchmarkError(f"{shown(name)}, line {n}: timestamp: {shown(str(stamp))} is not an ISO date and time") \
            from None
    return SglangRun(n, str(rec.get("tag", "")), date, summary, where)


def _sglang_shape(shape: RunShape, name: str) -> tuple[float, float, float]:
    """The rounds, request and output length the run used: asked for, as the log does not record them."""
    missing = [flag for flag, v in (("--num-rounds", shape.num_rounds), ("--request-length", shape.request_length),
                                    ("--output-length", shape.output_length)) if v is None]
    if missing:
        raise BenchmarkError(f"{shown(name)}: bench_multiturn.py's log records no rounds, request or output length; "
                             f"give {', '.join(missing)} as the run used them")
    return float(shape.num_rounds or 0), float(shape.request_length or 0), float(shape.output_length or 0)


def _text(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BenchmarkError(f"{shown(name)}: not UTF-8 text (byte {exc.start:,})") from None


def _record(line: str, where: str) -> dict[str, Any]:
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as exc:
        raise BenchmarkError(f"{where}: not a JSON object ({exc.msg})") from None
    if not isinstance(rec, dict):
        raise BenchmarkError(f"{where}: not a JSON object")
    return rec


def detect(data: bytes, name: str) -> str:
    """``vllm-multi-turn`` for a JSON array of records with ``conversation_id``, ``sglang-multiturn`` for JSON lines
    with a ``summary``, ``mooncake`` for JSON lines with ``input_length``; else a :class:`BenchmarkError` naming the
    file and the formats.
    """
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"[") and b"conversation_id" in head:
        return "vllm-multi-turn"
    if head.startswith(b"{") and b'"summary"' in head.split(b"\n", 1)[0]:
        return "sglang-multiturn"
    if head.startswith(b"{") and b"input_length" in head.split(b"\n", 1)[0]:
        return "mooncake"
    raise BenchmarkError(f"{shown(name)}: neither a Mooncake trace (JSON lines with input_length), vLLM's "
                         "multi-turn --stats-json-output (a JSON array with conversation_id) nor SGLang's "
                         "bench_multiturn.py log (JSON lines with a summary); give --format "
                         f"({', '.join(FORMATS)})")


def _shared_prefix(trace: Trace, block_tokens: float) -> tuple[float | None, str]:
    """S from the blocks every session's first turn starts with, capped by the shortest first turn."""
    firsts = [turns[0].blocks for turns in trace.sessions.values()]
    if len(firsts) < 2 or any(b is None for b in firsts):
        return None, ""
    common = 0
    while all(b is not None and len(b) > common and b[common] == firsts[0][common] for b in firsts):  # type: ignore[index]
        common += 1
    shortest = min(turns[0].new_input for turns in trace.sessions.values())
    value = min(common * block_tokens, shortest)
    capped = f", capped at the shortest first turn ({num(shortest)})" if value < common * block_tokens else ""
    return value, f"{common} hash_ids block(s) every session's first turn starts with x {num(block_tokens)} tokens" \
        + capped


def _figure(name: str, value: float, where: str) -> float:
    """``value`` held to the scenario field's bounds (the schema's one rule), else refused naming it."""
    spec = FIELDS[name]
    if not bool(spec.within(value)):
        origin = "given" if where.startswith("--") else "from the trace"  # a flag's value, or one the file gives
        raise BenchmarkError(f"{where}: {name}: {num(value)} {origin} is outside the field's bounds "
                             f"({spec.bounds_text()})")
    return value


def summarize(trace: Trace, name: str, sha256: str, prefix: float | None = None, gap: float | None = None,
              block_tokens: float = MOONCAKE_BLOCK_TOKENS) -> SessionImport:
    """One scenario row from a trace's sessions (module docstring), with its provenance."""
    sessions = list(trace.sessions.items())
    if not sessions:
        raise BenchmarkError(f"{shown(name)}: no sessions in the file")
    s, prefix_how = _session_prefix(trace, sessions, prefix, block_tokens, name)
    gaps = _turn_gaps(sessions, gap, name)
    counts = [len(t) for _, t in sessions]
    n, turns = len(sessions), float(sum(counts))
    new_input = sum(x.new_input for _, t in sessions for x in t)
    output = sum(x.output for _, t in sessions for x in t)
    mean_t = turns / n
    row: dict[str, Any] = {
        "turns_per_session": mean_t, "turns_per_session_cv": statistics.pstdev(counts) / mean_t,
        "session_prefix_tokens": s, "input_tokens_per_turn": (new_input - n * s) / turns,
        "output_tokens_per_turn": output / turns,
        "seconds_between_turns": statistics.fmean(gaps) if gaps else gap}
    how = {"session_prefix_tokens": prefix_how,
           "seconds_between_turns": f"mean of {len(gaps):,} gaps: {trace.gap_basis}" if gaps else "given"}
    row["demand_sessions_per_day"], how["demand_sessions_per_day"] = _session_rate(sessions)
    where = shown(name)
    for key, value in row.items():
        if value is not None:
            row[key] = _figure(key, float(value), where)
    contexts = sum(_session_input(t, s) for _, t in sessions)
    provenance = {
        "source_file": name, "source_sha256": sha256, "tool": trace.tool, "imported": dt.date.today().isoformat(),
        "run_date": "", "sessions": n, "turns": int(turns), "how": how,
        "trace_input_tokens_per_session": contexts / n,
        "note": "the row's input per session uses the mean new input, output and prefix per turn; the trace's own "
                "mean (trace_input_tokens_per_session) is each recorded turn's full context, summed"}
    out = pd.DataFrame([{"name": f"sessions from {name} (sha256 {sha256[:12]})", "workload": Workload.SESSIONS.value,
                         **row}])
    return SessionImport(out, provenance, _profile(trace))


def _session_prefix(trace: Trace, sessions: list[tuple[str, list[Turn]]], prefix: float | None,
                    block_tokens: float, name: str) -> tuple[float, str]:
    """S: the file's shared blocks or ``--session-prefix-tokens`` (one of them, never both), with how it was found;
    refused where a session's first turn is shorter.
    """
    found, basis = _shared_prefix(trace, block_tokens)
    if found is not None and prefix is not None:
        raise BenchmarkError(f"--session-prefix-tokens {num(prefix)}: the file's blocks give {num(found)} ({basis})")
    if found is None and prefix is None:
        raise BenchmarkError(f"{shown(name)}: session_prefix_tokens: the file records no shared blocks (hash_ids in "
                             "every session, two sessions or more); give --session-prefix-tokens N")
    s = float(found if found is not None else prefix)  # type: ignore[arg-type]
    for sid, t in sessions:
        if t[0].new_input < s:
            raise BenchmarkError(f"{t[0].where}: session {shown(sid)}: its first turn's input ({num(t[0].new_input)}) "
                                 f"is shorter than the shared prefix ({num(s)})")
    return s, basis or "given (--session-prefix-tokens)"


def _turn_gaps(sessions: list[tuple[str, list[Turn]]], gap: float | None, name: str) -> list[float]:
    """Each gap [s] between a turn (its end where recorded, else its start) and the next turn of its session;
    refused where a turn starts before the previous one ended, or where the file's gaps and
    ``--seconds-between-turns`` are both given or neither.
    """
    gaps = [b.start_s - (a.end_s if a.end_s is not None else a.start_s)
            for _, t in sessions for a, b in zip(t, t[1:], strict=False)]
    for (sid, t) in sessions:
        for a, b in zip(t, t[1:], strict=False):
            if b.start_s < (a.end_s if a.end_s is not None else a.start_s):
                raise BenchmarkError(f"{b.where}: session {shown(sid)}: starts before the previous turn ended")
    if gaps and gap is not None:
        raise BenchmarkError(f"--seconds-between-turns {num(gap)}: the file's turns give {num(statistics.fmean(gaps))}")
    if not gaps and gap is None:
        raise BenchmarkError(f"{shown(name)}: seconds_between_turns: no session has two turns; give "
                             "--seconds-between-turns S")
    return gaps


def _session_rate(sessions: list[tuple[str, list[Turn]]]) -> tuple[float | None, str]:
    """``demand_sessions_per_day`` from the sessions' starts, with how it was found (None where they start
    together: no span to read a rate from).
    """
    n = len(sessions)
    starts = sorted(t[0].start_s for _, t in sessions)
    span = starts[-1] - starts[0]
    if n >= 2 and span > 0:
        return (n - 1) / span * SECONDS_PER_DAY, (f"({n:,} sessions - 1) / {num(span)} s between the first and last "
                                                  "session's start x 86,400 s/day")
    return None, ("left empty: the sessions start together (no span to read a rate from); "
                  "give accelerator_count or demand_sessions_per_day")


def _session_input(turns: list[Turn], prefix: float) -> float:
    """A recorded session's input tokens: each turn's full context (the prefix and every earlier input and answer)."""
    total, context = 0.0, 0.0
    for t in turns:
        context += t.new_input
        total += context
        context += t.output
    return total


def _profile(trace: Trace) -> pd.DataFrame:
    """Measured TTFT [s] and per-user speed [token/s] by turn number (medians), where the file records them."""
    by_turn: dict[int, list[Turn]] = {}
    for turns in trace.sessions.values():
        for k, t in enumerate(turns, start=1):
            if t.ttft_s is not None or t.per_user is not None:
                by_turn.setdefault(k, []).append(t)
    rows = [{"turn": k, "requests": len(ts),
             "median_ttft_s": _median([t.ttft_s for t in ts]),
             "median_output_tokens_per_s_per_user": _median([t.per_user for t in ts])}
            for k, ts in sorted(by_turn.items())]
    return pd.DataFrame(rows, columns=["turn", "requests", "median_ttft_s", "median_output_tokens_per_s_per_user"])


def summarize_sglang(run: SglangRun, shape: RunShape, name: str, sha256: str, prefix: float | None,
                     gap: float | None) -> SessionImport:
    """One scenario row from a bench_multiturn.py run and the flags it ran with (module docstring): every client
    runs ``--num-rounds`` rounds, each adding ``--request-length`` tokens and answering ``--output-length``.
    """
    rounds, length, out = _sglang_shape(shape, name)
    if prefix is None:
        raise BenchmarkError(f"{shown(name)}: session_prefix_tokens: bench_multiturn.py samples every client's "
                             "prompt on its own and logs no shared prefix; give --session-prefix-tokens N (0 for none)")
    if gap is None:
        raise BenchmarkError(f"{shown(name)}: seconds_between_turns: bench_multiturn.py logs no turn timings (a "
                             "turn is sent as soon as its answer is in and the sender's pacing allows); give "
                             "--seconds-between-turns S")
    if length < prefix:
        raise BenchmarkError(f"--request-length {num(length)}: the first round's input is shorter than the shared "
                             f"prefix ({num(prefix)})")
    s, total = run.summary, run.summary["total_requests"]
    if total % rounds:
        raise BenchmarkError(f"{run.where}: total_requests: {num(total)} is not a whole number of sessions of "
                             f"--num-rounds {num(rounds)} (a failed request is left out of the log's summary)")
    row: dict[str, Any] = {
        "turns_per_session": rounds, "turns_per_session_cv": 0.0, "session_prefix_tokens": prefix,
        "input_tokens_per_turn": (rounds * length - prefix) / rounds, "output_tokens_per_turn": out,
        "seconds_between_turns": gap, "demand_sessions_per_day": s["throughput"] * SECONDS_PER_DAY / rounds}
    for key, value in row.items():
        row[key] = _figure(key, float(value), run.where)
    how = {"turns_per_session": f"--num-rounds {num(rounds)} (given): every client runs that many rounds, cv 0",
           "session_prefix_tokens": "given (--session-prefix-tokens)",
           "input_tokens_per_turn": f"({num(rounds)} rounds x --request-length {num(length)} - the prefix "
                                    f"{num(prefix)}) / {num(rounds)} rounds",
           "output_tokens_per_turn": f"--output-length {num(out)} (given; the benchmark ignores end-of-sequence)",
           "seconds_between_turns": "given (--seconds-between-turns)",
           "demand_sessions_per_day": f"throughput {num(s['throughput'])} requests/s x 86,400 s/day / "
                                      f"{num(rounds)} rounds"}
    provenance = {
        "source_file": name, "source_sha256": sha256, "tool": "sglang-multiturn", "format_source": SGLANG_SOURCE,
        "imported": dt.date.today().isoformat(), "run_date": run.timestamp, "run_line": run.line, "tag": run.tag,
        "sessions": int(total // rounds), "turns": int(total), "how": how,
        "trace_input_tokens_per_session": rounds * (rounds + 1) / 2 * length + rounds * (rounds - 1) / 2 * out,
        "measured_run": _sglang_measured(s, out),
        "note": "the log holds one summary per run: the rounds, lengths, shared prefix and gap are the flags given; "
                "a run with --sub-question-input-length (later rounds of another length) cannot be told from "
                "its log; no TTFT by turn; the measured figures are over all turns "
                "(measured_run) and are not put in the row, which prices the hardware you choose"}
    out_row = pd.DataFrame([{"name": f"sessions from {name} line {run.line} (sha256 {sha256[:12]})",
                             "workload": Workload.SESSIONS.value, **row}])
    return SessionImport(out_row, provenance, _profile(Trace("sglang-multiturn")))


def _sglang_measured(s: dict[str, float], out: float) -> dict[str, float | None]:
    """The run's measured figures [s, requests/s] and the per-user speed they give: the output tokens after the
    first over the mean time from the first token to the last (mean latency - mean TTFT; every answer is ``out``
    tokens long, so the mean of the differences is the difference of the means).
    """
    decode_s = s["average_latency"] - s["average_ttft"]
    speed = (out - 1) / decode_s if out > 1 and decode_s > 0 else None
    return {"request_rate_per_s": s["request_rate"], "throughput_requests_per_s": s["throughput"],
            "average_ttft_s": s["average_ttft"], "median_ttft_s": s["median_ttft"], "p90_ttft_s": s["p90_ttft"],
            "average_latency_s": s["average_latency"], "median_latency_s": s["median_latency"],
            "p90_latency_s": s["p90_latency"], "output_tokens_per_s_per_user": speed}


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


READERS = {"mooncake": read_mooncake, "vllm-multi-turn": read_vllm_multi_turn}


def import_sessions(file: str | Path | tuple[str, bytes], fmt: str = TraceFormat.AUTO,
                    session_prefix_tokens: float | None = None, seconds_between_turns: float | None = None,
                    block_tokens: float = MOONCAKE_BLOCK_TOKENS,
                    shape: RunShape | None = None) -> SessionImport:
    """A session trace or a multi-turn benchmark's per-request file or run log (a path, or a (name, bytes) pair) as
    one ``workload=sessions`` scenario row with its provenance (:class:`SessionImport`; the module docstring says
    how each field is found). Raises :class:`BenchmarkError` naming the file, the line or session, the field and
    value.

    What the file does not record is asked for by argument, never guessed: ``session_prefix_tokens`` where it has
    no shared blocks, ``seconds_between_turns`` where no session has two turns, ``shape`` (the run's rounds and
    lengths, and which run) for SGLang's log. An argument the file contradicts, or one its format has no use for,
    is refused.
    """
    name, data = file if isinstance(file, tuple) else (Path(file).name, _read(Path(file)))
    if len(data) > MAX_FILE_BYTES:
        raise BenchmarkError(f"{shown(name)}: {len(data):,} bytes, more than the {MAX_FILE_BYTES:,} a trace file may "
                             "have")
    if fmt not in tuple(TraceFormat):
        raise BenchmarkError(f"--format {shown(fmt)}: not one of {', '.join(TraceFormat)}")
    if not (block_tokens > 0 and math.isfinite(block_tokens)):
        raise BenchmarkError(f"--block-tokens {num(block_tokens)}: must be a number > 0")
    for flag, value in (("session_prefix_tokens", session_prefix_tokens),
                        ("seconds_between_turns", seconds_between_turns)):
        if value is not None:
            _figure(flag, value, f"--{flag.replace('_', '-')}")
    shape = shape or RunShape()
    kind = detect(data, name) if fmt == TraceFormat.AUTO else fmt
    _check_shape(shape, kind)
    if kind == "sglang-multiturn":
        run = read_sglang_multiturn(data, name, shape.run)
        return summarize_sglang(run, shape, name, user_curves.sha256_of(data), session_prefix_tokens,
                                seconds_between_turns)
    trace = READERS[kind](data, name)
    return summarize(trace, name, user_curves.sha256_of(data), session_prefix_tokens, seconds_between_turns,
                     block_tokens)


def _check_shape(shape: RunShape, kind: str) -> None:
    """The run flags held to the fields they fill (rounds a whole number), and refused for a format that records
    its own shape.
    """
    given = shape.given()
    if given and kind != "sglang-multiturn":
        raise BenchmarkError(f"{', '.join(given)}: for SGLang's bench_multiturn.py log only; a {kind} file records "
                             "its own turns and lengths")
    for flag, field_name in (("--num-rounds", "turns_per_session"), ("--request-length", "input_tokens_per_turn"),
                             ("--output-length", "output_tokens_per_turn")):
        if flag in given:
            _figure(field_name, given[flag], flag)
    for flag in ("--num-rounds", "--run"):
        if flag in given and not (given[flag] >= 1 and given[flag].is_integer()):
            raise BenchmarkError(f"{flag} {num(given[flag])}: must be a whole number >= 1")


def _read(path: Path) -> bytes:
    try:
        return read_input_bytes(str(path), MAX_FILE_BYTES)
    except InputError as exc:
        raise BenchmarkError(str(exc)) from None


def provenance_lines(result: SessionImport) -> Iterable[str]:
    """The provenance as lines a person reads (the CLI prints them; the app shows them)."""
    p = result.provenance
    yield f"{p['source_file']} (sha256 {p['source_sha256']}), {p['tool']}: {p['sessions']:,} sessions, " \
          f"{p['turns']:,} turns"
    for key, text in p["how"].items():
        yield f"{key}: {text}"
    yield f"the trace's own mean input per session: {num(p['trace_input_tokens_per_session'])} tokens"
    measured = p.get("measured_run")
    if measured:
        yield f"measured in the run (line {p['run_line']}, tag {shown(p['tag'])}): " + ", ".join(
            f"{k} {num(v)}" for k, v in measured.items() if v is not None)
        yield f"not determined: {p['note']}"
