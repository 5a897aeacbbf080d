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

from economics.domain import capacity as cap
from economics.domain import fleet
from economics.domain import sessions as ses
from economics.domain.sessions import TIERS, Tier
from economics.engine.stages import Columns, _any
from economics.outputs import RowWarning
from economics.scenario import Workload

PER_USER_SPEED = "_output_tokens_per_s_per_user"
"""The resolved column holding the throughput estimate's per-user speed (NaN where measured)."""
REMOTE_SYSTEMS = "kv_remote_systems"
"""The systems a remote store is shared by: a fixed fleet's, or a sized fleet's before the store (pipeline)."""
REPLICA_FOR_KV = cap.REPLICA_FOR_MODEL.bind("kv_replica_accelerators", chip_memory_gb="accelerator_memory_gb")
REMOTE_SYSTEMS_FIXED = fleet.SYSTEMS.bind(REMOTE_SYSTEMS, accelerators="accelerator_count")
SHAPE = (ses.INPUT_PER_SESSION, ses.MEAN_TURN_INPUT, ses.MEAN_TURN_OUTPUT)


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
    del c[ses.INPUT_PER_SESSION.name]  # an intermediate: the stage computes it again, with the others
    demand = rows & ~np.isnan(np.asarray(c["demand_sessions_per_day"], dtype=float))
    c["demand_requests_per_s"] = np.where(demand, ses.TURNS_PER_S.evaluate(v), c["demand_requests_per_s"])


def residency(x: Columns) -> None:
    """The session's tokens and the KV hierarchy's hit rate, tier by tier, on the session rows."""
    rows = x.sessions
    if not _any(rows):
        return
    v = x.v
    for f in (*SHAPE, ses.PREFIX_PER_SESSION, ses.HISTORY, ses.FINAL_CONTEXT, ses.OUTPUT_PER_SESSION):
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
    estimate = np.asarray(v.get(PER_USER_SPEED, np.full(x.n, np.nan)), dtype=float)
    v["kv_per_user_speed"] = np.where(np.isnan(target), estimate, target)
    known = rows & ~np.isnan(v["kv_per_user_speed"]) & ~np.isnan(v["accelerator_memory_gb"])
    x.calc(ses.RUNNING_BATCH, known)
    x.calc(ses.HBM_FREE, known)
    x.calc(ses.HBM_NONE, rows & ~known)
    x.flag(RowWarning.NO_RUNNING_BATCH, rows & ~known)


def remote_share(x: Columns, rows: Any) -> None:
    """The remote store's share per system: over the fixed fleet's systems, or a sized fleet's before the store."""
    v = x.v
    remote = rows & (v["kv_remote_gb"] > 0)
    v["kv_remote_gb_per_system"] = np.zeros(x.n)
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
    """The characteristic time, found by bisection, in ``explain``: what it solves, with the capacities."""
    if x.trace is None or not x.sessions[x.row]:
        return
    v = x.v
    x.trace.add("kv_prefix_held", v["kv_prefix_held"], "-", "{hierarchy_tokens_per_system} >= {prefix_tokens}",
                note="1: the shared prefix is held once, at the top of the stack; 0: no room for it",
                hierarchy_tokens_per_system=(total, "token"), prefix_tokens=(v["session_prefix_tokens"], "token"))
    x.trace.add("kv_characteristic_time_s", v["kv_characteristic_time_s"], "s",
                "T_C solving kv_held_tokens_per_system = {history_capacity}",
                note="Che's approximation: the LRU hierarchy's capacity for sessions' own KV (all tiers, less the "
                     "prefix) holds exactly the idle contexts used within the last T_C seconds; found by bisection",
                history_capacity=(np.maximum(0.0, total - v["session_prefix_tokens"] * v["kv_prefix_held"]), "token"))
