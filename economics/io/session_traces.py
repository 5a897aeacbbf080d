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

__all__ = ["FORMATS", "SessionImport", "import_sessions"]
FORMATS = ("mooncake", "vllm-multi-turn")
"""The formats ``--format`` names; ``auto`` tells them apart by content."""
MAX_FILE_BYTES = 64_000_000
"""The most bytes a trace file may have: read whole, its records parsed (memory stays well under 1 GB)."""
MAX_TURNS = 2_000_000
"""The most turns (lines or records) one import reads."""
MOONCAKE_BLOCK_TOKENS = 512
"""The tokens one Mooncake ``hash_ids`` block stands for (the trace's release notes; ``--block-tokens``)."""
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
    """``vllm-multi-turn`` for a JSON array of records with ``conversation_id``, ``mooncake`` for JSON lines with
    ``input_length``; else a :class:`BenchmarkError` naming the file and the formats.
    """
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"[") and b"conversation_id" in head:
        return "vllm-multi-turn"
    if head.startswith(b"{") and b"input_length" in head.split(b"\n", 1)[0]:
        return "mooncake"
    raise BenchmarkError(f"{shown(name)}: neither a Mooncake trace (JSON lines with input_length) nor vLLM's "
                         "multi-turn --stats-json-output (a JSON array with conversation_id); give --format "
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
        raise BenchmarkError(f"{where}: {name}: {num(value)} from the trace is outside the field's bounds "
                             f"({spec.bounds_text()})")
    return value


def summarize(trace: Trace, name: str, sha256: str, prefix: float | None = None, gap: float | None = None,
              block_tokens: float = MOONCAKE_BLOCK_TOKENS) -> SessionImport:
    """One scenario row from a trace's sessions (module docstring), with its provenance."""
    sessions = list(trace.sessions.items())
    if not sessions:
        raise BenchmarkError(f"{shown(name)}: no sessions in the file")
    counts = [len(t) for _, t in sessions]
    n, turns = len(sessions), float(sum(counts))
    how: dict[str, str] = {}
    found, basis = _shared_prefix(trace, block_tokens)
    if found is not None and prefix is not None:
        raise BenchmarkError(f"--session-prefix-tokens {num(prefix)}: the file's blocks give {num(found)} ({basis})")
    if found is None and prefix is None:
        raise BenchmarkError(f"{shown(name)}: session_prefix_tokens: the file records no shared blocks (hash_ids in "
                             "every session, two sessions or more); give --session-prefix-tokens N")
    s = float(found if found is not None else prefix)  # type: ignore[arg-type]
    how["session_prefix_tokens"] = basis or "given (--session-prefix-tokens)"
    for sid, t in sessions:
        if t[0].new_input < s:
            raise BenchmarkError(f"{t[0].where}: session {shown(sid)}: its first turn's input ({num(t[0].new_input)}) "
                                 f"is shorter than the shared prefix ({num(s)})")
    new_input = sum(x.new_input for _, t in sessions for x in t)
    output = sum(x.output for _, t in sessions for x in t)
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
    mean_t = turns / n
    row: dict[str, Any] = {
        "turns_per_session": mean_t, "turns_per_session_cv": statistics.pstdev(counts) / mean_t,
        "session_prefix_tokens": s, "input_tokens_per_turn": (new_input - n * s) / turns,
        "output_tokens_per_turn": output / turns,
        "seconds_between_turns": statistics.fmean(gaps) if gaps else gap}
    how["seconds_between_turns"] = f"mean of {len(gaps):,} gaps: {trace.gap_basis}" if gaps else "given"
    starts = sorted(t[0].start_s for _, t in sessions)
    span = starts[-1] - starts[0]
    if n >= 2 and span > 0:
        row["demand_sessions_per_day"] = (n - 1) / span * SECONDS_PER_DAY
        how["demand_sessions_per_day"] = (f"({n:,} sessions - 1) / {num(span)} s between the first and last "
                                          "session's start x 86,400 s/day")
    else:
        row["demand_sessions_per_day"] = None
        how["demand_sessions_per_day"] = "left empty: the sessions start together (no span to read a rate from); " \
                                         "give accelerator_count or demand_sessions_per_day"
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


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


READERS = {"mooncake": read_mooncake, "vllm-multi-turn": read_vllm_multi_turn}


def import_sessions(file: str | Path | tuple[str, bytes], fmt: str = "auto", session_prefix_tokens: float | None = None,
                    seconds_between_turns: float | None = None,
                    block_tokens: float = MOONCAKE_BLOCK_TOKENS) -> SessionImport:
    """A session trace or a multi-turn benchmark's per-request file (a path, or a (name, bytes) pair) as one
    ``workload=sessions`` scenario row with its provenance (:class:`SessionImport`; the module docstring says how
    each field is found). Raises :class:`BenchmarkError` naming the file, the line or session, the field and value.

    What the file does not record is asked for by argument, never guessed: ``session_prefix_tokens`` where it has
    no shared blocks, ``seconds_between_turns`` where no session has two turns. An argument the file contradicts
    is refused.
    """
    name, data = file if isinstance(file, tuple) else (Path(file).name, _read(Path(file)))
    if len(data) > MAX_FILE_BYTES:
        raise BenchmarkError(f"{shown(name)}: {len(data):,} bytes, more than the {MAX_FILE_BYTES:,} a trace file may "
                             "have")
    if fmt != "auto" and fmt not in READERS:
        raise BenchmarkError(f"--format {shown(fmt)}: not one of auto, {', '.join(FORMATS)}")
    if not (block_tokens > 0 and math.isfinite(block_tokens)):
        raise BenchmarkError(f"--block-tokens {num(block_tokens)}: must be a number > 0")
    for flag, value in (("session_prefix_tokens", session_prefix_tokens),
                        ("seconds_between_turns", seconds_between_turns)):
        if value is not None:
            _figure(flag, value, f"--{flag.replace('_', '-')}")
    kind = detect(data, name) if fmt == "auto" else fmt
    trace = READERS[kind](data, name)
    return summarize(trace, name, user_curves.sha256_of(data), session_prefix_tokens, seconds_between_turns,
                     block_tokens)


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
