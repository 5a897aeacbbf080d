"""Agent sessions in the engine (``workload=sessions``): a session's turns become the request path's requests, and
the KV hierarchy's hit rate takes the place of ``prefix_cache_hit_rate``.

:func:`request_shape` runs right after validation, before the throughput is resolved: a turn is a request whose
input is the session's mean turn context (the roofline sizes its cache and prefill for it) and whose output is the
turn's, and the demand in turns per second follows from ``demand_sessions_per_day``. The stage :func:`residency`
runs first among the stages: the session's tokens, each tier's capacity per system, Che's characteristic time over
the whole hierarchy at full load, each tier's share and the hit rate (:mod:`economics.domain.sessions`).
The tiers' cost lines and the cost per session are stages of their own (:func:`economics.engine.stages.kv_tiers`,
:func:`economics.engine.stages.per_session`). Request rows are never touched.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from economics.domain import capacity as cap
from economics.domain import fleet, queueing
from economics.domain import sessions as ses
from economics.domain.formula import Formula
from economics.domain.sessions import TIERS, Tier
from economics.engine.stages import Columns, _any, column_or_nans
from economics.schema.outputs import RowWarning
from economics.schema.scenario import Workload

PER_USER_SPEED = "_output_tokens_per_s_per_user"
"""The resolved column holding the throughput estimate's per-user speed (NaN where measured)."""
KV_READ_SHARE = "_kv_read_bandwidth_utilization"
"""The resolved column holding the calibrated share of peak bandwidth the decode reads the KV cache at (session rows;
the KV factor of data/calibration.csv, else its bandwidth factor, as :class:`economics.engine.roofline.Roofline`)."""
CURVE_SPEED = "output_tokens_per_s_per_user_at_context"
"""The column holding a measured per-user speed read on its curve against context at the mean turn's context
(:func:`economics.engine.resolve.per_user_throughput`; absent or NaN without a curve)."""
REMOTE_SYSTEMS = "kv_remote_systems"
"""The systems a remote store is shared by: a fixed fleet's, or a sized fleet's before the store (pipeline)."""
REPLICA_FOR_KV = cap.REPLICA_FOR_MODEL.bind("kv_replica_accelerators", chip_memory_gb="accelerator_memory_gb")
REMOTE_SYSTEMS_FIXED = fleet.SYSTEMS.bind(REMOTE_SYSTEMS, accelerators="accelerator_count")
SHAPE = (ses.TURN_PAIRS, ses.HISTORY, ses.INPUT_PER_SESSION, ses.MEAN_TURN_INPUT, ses.MEAN_TURN_OUTPUT)


def session_rows(c: dict[str, Any]) -> Any:
    """The rows of ``c`` whose workload is sessions."""
    return np.asarray(c["workload"] == Workload.SESSIONS.value, dtype=bool)


def request_shape(c: dict[str, Any]) -> None:
    """A validated table's session rows as requests, in place: a turn's input (the mean turn context), its output,
    and the demand in turns per second. The stage :func:`residency` records the same formulas for ``explain``.
    """
    rows = session_rows(c)
    if not rows.any():
        return
    v = dict(c)
    for f in SHAPE:
        c[f.name] = np.where(rows, f.evaluate(v), c.get(f.name, np.nan))
        v[f.name] = c[f.name]
    for f in SHAPE[:3]:  # intermediates: the stage computes them again, with the others
        del c[f.name]
    c[ses.SLOWEST_CONTEXT] = np.where(rows, ses.LAST_TURN_CONTEXT.evaluate(v), np.nan)
    demand = rows & ~np.isnan(np.asarray(c["demand_sessions_per_day"], dtype=float))
    c["demand_requests_per_s"] = np.where(demand, ses.TURNS_PER_S.evaluate(v), c["demand_requests_per_s"])


def residency(x: Columns) -> None:
    """The session's tokens and the KV hierarchy's hit rate, tier by tier, on the session rows."""
    rows = x.sessions
    if not _any(rows):
        return
    v = x.v
    for f in (*SHAPE, ses.PREFIX_PER_SESSION, ses.FINAL_CONTEXT, ses.OUTPUT_PER_SESSION):
        x.calc(f, rows)
    x.calc(ses.TURNS_PER_S, rows & ~np.isnan(v["demand_sessions_per_day"]))
    hbm_free(x, rows)
    remote_share(x, rows)
    capacities = tier_tokens(x, rows)
    total = sum(capacities.values(), np.zeros(x.n))
    v["kv_prefix_held"] = ses.prefix_held(total, v["session_prefix_tokens"])
    folded = np.isnan(v["input_tokens_per_s_per_accelerator"])
    x.calc(ses.WORK_ALL_MISS, rows & ~folded)
    x.calc(ses.WORK_ALL_HIT, rows & ~folded)
    x.calc(ses.WORK_FOLDED, rows & folded)
    x.calc(ses.WORK_FOLDED_HIT, rows & folded)
    at = np.flatnonzero(rows)  # the bisection runs on the session rows only
    out = ses.tier_shares({t: c[at] for t, c in capacities.items()}, *(
        np.asarray(v[name], dtype=float)[at] for name in (
            "session_prefix_tokens", "seconds_between_turns", "history_tokens_per_session", "final_context_tokens",
            "kv_session_work_s_all_hit", "kv_session_work_s_all_miss")))
    for name, key in (("kv_characteristic_time_s", "characteristic_time_s"),
                      *((f"kv_prefix_in_{t}", f"prefix_in_{t}") for t in TIERS),
                      *((f"kv_history_in_{t}", f"history_in_{t}") for t in TIERS)):
        v[name] = np.full(x.n, np.nan)
        v[name][at] = out[key]
    _trace_solution(x, total)
    x.calc(ses.HIT_PROBABILITY, rows)
    x.calc(ses.SESSION_RATE, rows)
    x.calc(ses.HELD, rows & (v["kv_characteristic_time_s"] > 0))
    for f in (ses.CACHED, ses.PREFILL, ses.HIT_RATE, *ses.TIER_HIT_RATES.values(), ses.HIT_RATE_USED):
        x.calc(f, rows)


def hbm_free(x: Columns, rows: Any) -> None:
    """HBM per system left after the weights and the running batch (none counted without a per-user speed)."""
    v = x.v
    x.calc(cap.MODEL_WEIGHTS, rows)
    x.calc(REPLICA_FOR_KV, rows & np.isnan(v["kv_replica_accelerators"]))
    target = v["target_output_tokens_per_s_per_user"]
    # the estimate's speed is the mean turn's, above the target its slowest turn is held to; a measured throughput
    # is read at the target
    # a measured speed on a curve against context is read at the mean turn's context
    estimate = np.asarray(column_or_nans(v, PER_USER_SPEED, x.n), dtype=float)
    curve = np.asarray(column_or_nans(v, CURVE_SPEED, x.n), dtype=float)
    v["kv_per_user_speed"] = np.where(np.isnan(estimate), np.where(np.isnan(curve), target, curve), estimate)
    known = rows & ~np.isnan(v["kv_per_user_speed"]) & ~np.isnan(v["accelerator_memory_gb"])
    x.calc(ses.RUNNING_BATCH, known)
    x.calc(ses.HBM_FREE, known)
    x.calc(ses.HBM_NONE, rows & ~known)
    x.flag(RowWarning.NO_RUNNING_BATCH, rows & ~known)


def remote_share(x: Columns, rows: Any) -> None:
    """The remote store's share per system: over the fixed fleet's systems, or a sized fleet's before the store."""
    v = x.v
    remote = rows & (v["kv_remote_gb"] > 0)
    x.zeros(ses.NO_REMOTE_SHARE, where=lambda: rows & ~remote)
    if not _any(remote):
        return
    fixed = remote & ~np.isnan(v["accelerator_count"])
    x.calc(REMOTE_SYSTEMS_FIXED, fixed)
    sized = remote & ~fixed
    if x.trace is not None and sized[x.row]:
        x.trace.add(REMOTE_SYSTEMS, v[REMOTE_SYSTEMS], "system", "{systems_without_the_store}",
                    note="the fleet sized without the remote store; the store's hits shrink it, so each system's "
                         "share is at least this (a conservative share)",
                    systems_without_the_store=(v[REMOTE_SYSTEMS], "system"))
    x.calc(ses.REMOTE_SHARE, remote)


def tier_tokens(x: Columns, rows: Any) -> dict[Tier, Any]:
    """Each tier's capacity per system in tokens of KV; a tier slower to read than to prefill holds none."""
    v = x.v
    has_p = ~np.isnan(v["input_tokens_per_s_per_accelerator"])
    lower = [t for t in TIERS[1:] if _any(rows & (v[ses.TIER_GB[t]] > 0))]
    if lower:
        x.calc(ses.PREFILL_RATE, rows & has_p)
    out: dict[Tier, Any] = {}
    for t in TIERS:
        f = ses.TIERS_TOKENS[t]
        x.calc(f, rows)
        if t in lower:
            here = rows & (v[ses.TIER_GB[t]] > 0)
            x.calc(ses.LOAD_RATES[t], here)
            used = ses.tier_used(v[ses.TIER_READ[t]], v["kv_bytes_per_token"],
                                 np.where(has_p, v.get("kv_prefill_tokens_per_s_per_system", np.nan), np.nan))
            if x.trace is not None and here[x.row] and not used[x.row]:
                x.trace.add(f.name, np.zeros(x.n), "token", "0", note=f"the {t} tier loads slower than the system "
                            "prefills: recomputing is faster, so it holds nothing")
            v[f.name] = np.where(here & ~used, 0.0, v[f.name])
        out[t] = np.where(rows, v[f.name], 0.0)
    return out


def _trace_solution(x: Columns, total: Any) -> None:
    """The characteristic time (found by false position) in ``explain``: what it solves, with the capacities."""
    if x.trace is None or not x.sessions[x.row]:
        return
    v = x.v
    x.trace.add("kv_prefix_held", v["kv_prefix_held"], "-", "{hierarchy_tokens_per_system} >= {prefix_tokens}",
                note="1: the shared prefix is held once, at the top of the stack; 0: no room for it",
                hierarchy_tokens_per_system=(total, "token"), prefix_tokens=(v["session_prefix_tokens"], "token"))
    x.trace.add("kv_characteristic_time_s", v["kv_characteristic_time_s"], "s",
                "T_C solving kv_held_tokens_per_system = max(0, {hierarchy_tokens_per_system} - "
                "{session_prefix_tokens} x {kv_prefix_held})",
                note="Che's approximation: the LRU hierarchy's capacity for sessions' own KV (all tiers, less the "
                     "prefix held) holds exactly the idle contexts used within the last T_C seconds; found by "
                     "false position (kv_held_tokens_per_system below, at this T_C, equals that capacity)",
                hierarchy_tokens_per_system=(total, "token"),
                session_prefix_tokens=(v["session_prefix_tokens"], "token"),
                kv_prefix_held=(v["kv_prefix_held"], ""))


def speed(x: Columns) -> None:
    """The last turn's per-user speed and TTFT, and the mean turn's TTFT (session rows; after the residency)."""
    rows = x.sessions
    if not _any(rows):
        return
    v = x.v
    kv_read_share(x, rows)
    for f in (ses.LAST_TURN_CONTEXT, ses.LAST_TURN_HISTORY, ses.MEAN_TURN_HISTORY):
        x.calc(f, rows)
    known = rows & ~np.isnan(v["kv_per_user_speed"])
    curve = known & on_curve(v)
    x.calc(ses.LAST_TURN_CURVE_STEP, curve)
    x.calc(ses.LAST_TURN_STEP, known & ~curve)
    x.calc(ses.MIN_SPEED, known & (v["last_turn_decode_step_s"] > 0))
    x.calc(ses.REPLICA_PREFILL, rows)
    for loads in (ses.LAST_TURN_LOADS, ses.MEAN_TURN_LOADS):
        for t, f in loads.items():
            tier_load(x, f, rows, v[ses.TIER_GB[t]] > 0)
    queue(x, rows)
    x.calc(ses.LAST_TURN_TTFT, rows)
    x.calc(ses.MEAN_TURN_TTFT, rows)


def tier_load(x: Columns, load: Formula, rows: Any, held: Any) -> None:
    """A turn's time to load its context from one tier (``load``) on ``rows``: 0 where the tier has no capacity
    (``held`` false), a step saying why.
    """
    x.zeros(ses.NO_LOADS[load.name], where=lambda: rows & ~held)
    x.calc(load, rows & held)


QUEUE_BISECTIONS = 60
"""Halvings of the load fraction's bracket [0, 1] where the TTFT target binds (2^-60: below any printed digit)."""


def queue(x: Columns, rows: Any) -> None:
    """The wait for a prefill slot at ``ttft_percentile`` (M/G/c by Erlang C and Allen-Cunneen,
    :func:`economics.domain.queueing.wait_percentile_array`, as the planner), at the load agents are counted at: full
    load, or where the last turn's TTFT would then exceed ``ttft_target_s``, the highest share of it at which it
    does not (``slo_load_fraction``, by bisection: the wait grows with the load).
    """
    v = x.v
    x.calc(ses.PREFILL_SERVERS, rows)
    x.calc(ses.PREFILL_SERVICE, rows)
    v["slo_load_fraction"] = np.where(rows, 1.0, np.nan)
    x.calc(ses.PREFILL_LOAD, rows)
    v["prefill_wait_s"] = np.zeros(x.n)
    with np.errstate(all="ignore"):
        unqueued = np.asarray(ses.LAST_TURN_TTFT.evaluate(v), dtype=float)
    target = np.asarray(v["ttft_target_s"], dtype=float)
    full = _wait(v, v["prefill_utilization"])
    over = np.flatnonzero(rows & ~np.isnan(target) & (unqueued + full > target * (1 + 1e-12)))
    if over.size:
        room = target[over] - unqueued[over]
        lo, hi = np.zeros(over.size), np.ones(over.size)
        for _ in range(QUEUE_BISECTIONS):
            mid = 0.5 * (lo + hi)
            ok = _wait(v, mid * v["prefill_utilization"][over], over) <= room
            lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
        v["slo_load_fraction"][over] = np.where(room > 0, lo, 0.0)
        x.calc(ses.PREFILL_LOAD, rows)
        full = _wait(v, v["prefill_utilization"])
    if x.trace is not None and rows[x.row]:
        x.trace.add("slo_load_fraction", v["slo_load_fraction"], "-", "{fraction}", fraction=(
            v["slo_load_fraction"], "-"), note="1: full load (no TTFT target, or it holds there); else the highest "
            "share of full load at which ttft_last_turn_s at ttft_percentile is within ttft_target_s (bisection)")
    v["prefill_wait_s"] = np.where(rows & np.isfinite(full), full, np.nan)  # slots busy all the time: no finite wait
    _trace_wait(x)


def _wait(v: dict[str, Any], utilization: Any, at: Any = slice(None)) -> Any:
    """The wait for a prefill slot at ``ttft_percentile`` at ``utilization`` (the rows ``at``)."""
    col = {k: np.asarray(v[k], dtype=float)[at] for k in ("prefill_replicas", "prefill_service_s", "ttft_percentile")}
    with np.errstate(all="ignore"):
        return queueing.wait_percentile_array(col["prefill_replicas"], np.asarray(utilization, dtype=float),
                                              col["prefill_service_s"], col["ttft_percentile"], ses.SERVICE_CV2)


def _trace_wait(x: Columns) -> None:
    """The wait for a prefill slot in ``explain``, its one formula with the numbers."""
    if x.trace is None or not x.sessions[x.row]:
        return
    v = x.v
    c, u = np.asarray(v["prefill_replicas"], dtype=float), np.asarray(v["prefill_utilization"], dtype=float)
    erlang = queueing.erlang_c_array(np.maximum(c, 1.0), np.minimum(u, 1.0) * c)
    x.trace.add("prefill_wait_s", v["prefill_wait_s"], "s",
                "ln({erlang_c} / (1 - {ttft_percentile})) / ({prefill_replicas} x (1 - {prefill_utilization}) / "
                "{prefill_service_s}) x (1 + {service_cv2}) / 2",
                note="the wait for one of c prefill slots at the percentile p: M/G/c by Erlang C (the share of turns "
                     "that wait) and the Allen-Cunneen exponential tail, as the planner; 0 where fewer than 1 - p of "
                     "the turns wait (Erlang C <= 1 - p)",
                erlang_c=(erlang, ""), ttft_percentile=(v["ttft_percentile"], ""),
                prefill_replicas=(c, "replica"), prefill_utilization=(u, ""),
                prefill_service_s=(v["prefill_service_s"], "s"), service_cv2=(np.full(x.n, ses.SERVICE_CV2), ""))


def on_curve(v: dict[str, Any]) -> Any:
    """The rows whose per-user speed is read on a measured curve against context (long_context_*)."""
    n = len(v["workload"])
    return ~np.isnan(np.asarray(column_or_nans(v, CURVE_SPEED, n), dtype=float))


def kv_read_share(x: Columns, rows: Any) -> None:
    """The share of peak bandwidth the decode reads the KV cache at: the scenario's ``bandwidth_utilization``, else
    the roofline's calibrated one (:data:`KV_READ_SHARE`, set by :mod:`economics.engine.batch` as the roofline reads
    it).
    """
    v = x.v
    given = np.asarray(v["bandwidth_utilization"], dtype=float)
    calibrated = np.asarray(column_or_nans(v, KV_READ_SHARE, x.n), dtype=float)
    v["kv_bandwidth_utilization"] = np.where(rows, np.where(np.isnan(given), calibrated, given), np.nan)
    if x.trace is not None and rows[x.row]:
        x.trace.add("kv_bandwidth_utilization", v["kv_bandwidth_utilization"], "-", "{share}",
                    note="bandwidth_utilization as given" if not np.isnan(given[x.row]) else
                    "calibrated (data/calibration.csv): the share of peak bandwidth decode reads the KV cache at",
                    share=(v["kv_bandwidth_utilization"], "-"))


def streams(x: Columns) -> None:
    """Cost per M tokens by stream and the input:output ratio (session rows; after the unit costs): the device
    cost split by the device-time shares, the KV tiers' cost on the cached input.
    """
    rows = x.sessions
    if not _any(rows):
        return
    v = x.v
    x.calc(ses.INPUT_OUTPUT_RATIO, rows)
    x.calc(ses.DEVICE_COST, rows)
    shared = rows & ~np.isnan(v["input_time_share"])
    fresh = v["served_input_tokens_per_day"] - v["served_cached_input_tokens_per_day"]
    x.calc(ses.COST_PER_M_FRESH, shared & (fresh > 0))
    x.calc(ses.COST_PER_M_CACHED, rows & (v["served_cached_input_tokens_per_day"] > 0))
    x.calc(ses.COST_PER_M_IN, shared & (v["served_input_tokens_per_day"] > 0))
    x.calc(ses.COST_PER_M_OUT, rows & ~np.isnan(v["output_time_share"]))


def agents(x: Columns) -> None:
    """Agents held at the SLO (session rows; after the costs and the facility): Little's law over a session's
    duration, where the slowest turn meets ``target_output_tokens_per_s_per_user`` and ``ttft_target_s``.
    """
    rows = x.sessions
    if not _any(rows):
        return
    v = x.v
    target, ttft_target = v["target_output_tokens_per_s_per_user"], np.asarray(v["ttft_target_s"], dtype=float)
    fast = np.isnan(target) | (v["min_output_tokens_per_s_per_user"] >= target * (1 - 1e-12))
    prompt = np.isnan(ttft_target) | (v["ttft_last_turn_s"] <= ttft_target * (1 + 1e-12))
    met = rows & fast & prompt
    x.flag(RowWarning.SLO_NOT_MET, rows & ~met)
    ok = met & ~np.isnan(v["ttft_mean_turn_s"]) & ~np.isnan(v["kv_per_user_speed"])
    x.calc(ses.SESSION_DURATION, ok)
    x.calc(ses.AGENTS_PER_ACCELERATOR, ok)
    x.calc(ses.AGENTS, ok)
    x.calc(ses.AGENTS_PER_MW, ok & (v["facility_power_kw"] > 0))
    x.calc(ses.AGENTS_PER_USD_PER_HOUR, ok & (v["cost_usd_per_hour"] > 0))
    x.calc(ses.AGENTS_PER_RACK, ok & (np.asarray(column_or_nans(v, "racks", x.n), dtype=float) > 0))


PROFILE_COLUMNS = ("turn", "context_tokens", "output_tokens_per_s_per_user", "ttft_s")
"""The per-turn profile's columns: turn t (1-based), its context C_t [token], its per-user speed [token/s] and its
TTFT [s]."""


def turn_profile(v: dict[str, Any], row: int = 0) -> pd.DataFrame:
    """The speed across one session row: per turn, its context, per-user speed and TTFT (:data:`PROFILE_COLUMNS`).

    ``v`` is the working record of a computed table (:func:`economics.engine.pipeline.working_columns`), ``row``
    a session row of it. The same formulas as the last turn's outputs, at every turn: ``turn_decode_step_s`` at
    :math:`C_t` and ``turn_ttft_s`` at the turn's earlier context :math:`(t - 1)(u + o)`. A speed that is not known
    (no per-user speed, or a step that the figures given make non-positive) is NaN.
    """
    one = {k: (np.asarray(col)[row] if np.ndim(col) == 1 and len(col) > row else col) for k, col in v.items()}
    turns = np.arange(1.0, float(one["turns_per_session"]) + 1.0)
    context = ses.context_tokens(turns, one["session_prefix_tokens"], one["input_tokens_per_turn"],
                                 one["output_tokens_per_turn"])
    history = (turns - 1.0) * (one["input_tokens_per_turn"] + one["output_tokens_per_turn"])
    step_at = ses.TURN_STEP if np.isnan(float(one.get(CURVE_SPEED, np.nan))) else ses.TURN_CURVE_STEP
    step = np.asarray(step_at.evaluate(dict(one, turn_context_tokens=context)), dtype=float)
    loads = {f"kv_{t}_load_s": np.asarray(ses.TIER_LOAD.bind(
        "load", kv_prefix_in_tier=f"kv_prefix_in_{t}", kv_history_in_tier=f"kv_history_in_{t}",
        kv_tier_load_tokens_per_s=f"kv_{t}_load_tokens_per_s").evaluate(dict(one, turn_history_tokens=history)),
        dtype=float) if float(one[ses.TIER_GB[t]]) > 0 else np.zeros(turns.size) for t in TIERS[1:]}
    ttft = ses.TURN_TTFT.evaluate(dict(one, turn_history_tokens=history, **loads))
    return pd.DataFrame({"turn": turns.astype(int), "context_tokens": context,
                         "output_tokens_per_s_per_user": np.where(step > 0, 1.0 / np.where(step > 0, step, 1.0),
                                                                  np.nan),
                         "ttft_s": np.broadcast_to(np.asarray(ttft, dtype=float), turns.shape)})
