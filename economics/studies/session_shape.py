"""Turning a scenario into an agent-session scenario (``workload=sessions``) and back, saying where each value
comes from: what the app's Sessions page does when the user switches the workload.

A session row takes its request shape, prefix cache hit rate and demand from the session
(:mod:`economics.schema.validation_sessions`), so switching must also empty the request demand and put the request shape
back at its defaults, or the row would be refused. Session fields the scenario already has are kept; empty ones get
the example coding-agent shape below, or (for the demand) the scenario's own request demand in sessions.

The example shape follows Artificial Analysis' AA-AgentPerf methodology
(https://artificialanalysis.ai/methodology/agentperf, read 2026-12): real multi-turn coding-agent trajectories whose
input sequence length has a mean of about 27K tokens and whose output per turn has a median of about 150 tokens.
The split of the 27K mean into a shared prefix, turns and new input per turn, and the idle time between turns, are
assumptions chosen to meet it: with T = 21 turns, S = 9,000, u = 1,500 and o = 150, a turn's mean context is
S + u + (T - 1)(u + o) / 2 = 9,000 + 1,500 + 20 x 1,650 / 2 = 27,000 tokens.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from economics.domain.formula import HOURS_PER_DAY
from economics.schema.outputs import label
from economics.schema.scenario import FIELDS, Scenario, Workload, with_changes
from economics.schema.validation_sessions import (
    REQUEST_DEMAND,
    REQUEST_SHAPE,
    SESSION_DEFAULTED,
    SESSION_ONLY,
    SESSION_SHAPE,
    SESSION_SPREAD,
    TIERS,
)

AGENTPERF = "https://artificialanalysis.ai/methodology/agentperf"
EXAMPLE: dict[str, tuple[float, str]] = {
    "turns_per_session": (21, "assumption, chosen with the prefix and new input to give the source's mean context"),
    "session_prefix_tokens": (9_000, "assumption (system prompt and tool definitions)"),
    "input_tokens_per_turn": (1_500, "assumption (tool output a turn adds)"),
    "output_tokens_per_turn": (150, f"AA-AgentPerf's median output per turn, about 150 tokens ({AGENTPERF})"),
    "seconds_between_turns": (20, "assumption (tool run time between an answer and the next turn)"),
}
"""The example coding-agent session: each value and where it comes from. Its mean turn context is 27,000 tokens,
AA-AgentPerf's stated mean input (about 27K)."""
EXAMPLE_MODEL = "llama-3.1-70b"
EXAMPLE_SESSIONS_PER_DAY = 100_000.0
"""Sessions a day when the scenario has neither a request demand nor a fixed fleet (an assumption)."""


@dataclass(frozen=True)
class Switched:
    """A scenario switched to another workload, and one line per field it changed saying why (plain text)."""

    scenario: Scenario
    changes: dict[str, Any]
    origins: dict[str, str]


def to_sessions(scenario: Scenario | Mapping[str, Any]) -> Switched:
    """The scenario as agent sessions: its session fields kept where given, the example shape where empty, the
    request demand turned into sessions a day, the request shape at its defaults.

    Parameters
    ----------
    scenario : a valid scenario (a model or its fields)

    Returns
    -------
    Switched
        The new scenario (valid for ``workload=sessions``), the changes, and per changed field where its value came
        from.

    >>> s = to_sessions(Scenario(model="llama-3.1-70b", demand_output_tokens_per_day=3.15e9))
    >>> s.scenario.turns_per_session, s.scenario.demand_sessions_per_day, s.scenario.demand_output_tokens_per_day
    (21.0, 1000000.0, None)
    >>> s.origins["demand_sessions_per_day"]
    'from the request demand: 3,150,000,000 output tokens/day / (21 turns x 150 tokens a turn)'
    """
    base = scenario if isinstance(scenario, Scenario) else Scenario.model_validate(dict(scenario))
    changes: dict[str, Any] = {"workload": Workload.SESSIONS.value}
    origins: dict[str, str] = {"workload": "switched to sessions"}
    for field in SESSION_SHAPE:
        if getattr(base, field) is None:
            changes[field], origins[field] = EXAMPLE[field]
            origins[field] = "example value: " + origins[field]
    if base.model is None:
        changes["model"], origins["model"] = EXAMPLE_MODEL, "example model (a session's KV size needs one)"
    if base.decode_accelerator is not None:
        changes["decode_accelerator"] = None
        origins["decode_accelerator"] = "emptied: sessions are computed for aggregated serving only so far"
    if base.demand_sessions_per_day is None:
        _session_demand(base, changes, origins)
    for field in REQUEST_DEMAND:
        if getattr(base, field) is not None:
            changes[field], origins[field] = None, "emptied: a session row's demand is demand_sessions_per_day"
    for field in REQUEST_SHAPE:
        if getattr(base, field) != FIELDS[field].default:
            changes[field] = FIELDS[field].default
            origins[field] = "back to its default: a session sets it (its turns, the computed KV hit rate)"
    return Switched(Scenario.model_validate(with_changes(base, **changes)), changes, origins)


def _session_demand(base: Scenario, changes: dict[str, Any], origins: dict[str, str]) -> None:
    """demand_sessions_per_day from the request demand's output tokens, or the example when there is none and the
    fleet is not fixed.
    """
    shape = with_changes(base, **changes)
    turns, out = shape["turns_per_session"], shape["output_tokens_per_turn"]
    if base.demand_output_tokens_per_day is not None:
        changes["demand_sessions_per_day"] = base.demand_output_tokens_per_day / (turns * out)
        origins["demand_sessions_per_day"] = (
            f"from the request demand: {base.demand_output_tokens_per_day:,.0f} output tokens/day / ({turns:,} "
            f"turns x {out:,.0f} tokens a turn)")
    elif base.accelerator_count is None:
        changes["demand_sessions_per_day"] = EXAMPLE_SESSIONS_PER_DAY
        origins["demand_sessions_per_day"] = "example value: assumption (no request demand to start from)"


def to_requests(scenario: Scenario | Mapping[str, Any], default: Scenario) -> Switched:
    """The scenario as single requests: every session field and KV tier emptied, and the request demand taken from
    ``default`` where the scenario has none and no fixed fleet.

    >>> sessions = to_sessions(Scenario(model="llama-3.1-70b")).scenario
    >>> r = to_requests(sessions, Scenario(demand_output_tokens_per_day=1e9))
    >>> r.scenario.workload, r.scenario.turns_per_session, r.scenario.demand_output_tokens_per_day
    ('requests', None, 1000000000.0)
    """
    base = scenario if isinstance(scenario, Scenario) else Scenario.model_validate(dict(scenario))
    changes: dict[str, Any] = {"workload": Workload.REQUESTS.value}
    origins: dict[str, str] = {"workload": "switched to requests"}
    for field in SESSION_ONLY:
        if getattr(base, field) is not None:
            changes[field], origins[field] = None, "emptied: applies to sessions only"
    for capacity, _ in TIERS:
        if getattr(base, capacity) > 0:
            changes[capacity], origins[capacity] = 0.0, "set to 0: a KV tier applies to sessions only"
    for field in SESSION_SPREAD:
        if getattr(base, field) > 0:
            changes[field], origins[field] = 0.0, "set to 0: applies to sessions only"
    for field in SESSION_DEFAULTED:
        if getattr(base, field) != FIELDS[field].default:
            changes[field], origins[field] = FIELDS[field].default, "set to its default: applies to sessions only"
    if base.accelerator_count is None and base.demand_output_tokens_per_day is None:
        for field in REQUEST_DEMAND:
            if getattr(default, field) is not None:
                changes[field], origins[field] = getattr(default, field), "from the default scenario"
    return Switched(Scenario.model_validate(with_changes(base, **changes)), changes, origins)


TIER_ROWS = (("hbm", "HBM (left after the weights and the running batch)", "kv_hbm_free_gb_per_system"),
             ("host", "Host DRAM", "kv_host_memory_gb_per_system"), ("ssd", "Local SSD", "kv_ssd_gb_per_system"),
             ("remote", "Remote store (the fleet's total)", "kv_remote_gb"))
COST_LINES = ("kv_host_usd_per_hour", "kv_ssd_usd_per_hour", "kv_remote_usd_per_hour", "kv_tiers_usd_per_hour",
              "cost_usd_per_hour")


def where_found(result: Mapping[str, Any]) -> pd.DataFrame:
    """A session row's input tokens by where they are found: each KV tier (its capacity, its share of the input
    tokens ``kv_hit_rate_<tier>``, the tokens a session that is) and recomputed (``prefill_tokens_per_session``).

    The shares add up to 1: every input token is found in one tier or prefilled again.

    >>> r = {"input_tokens_per_session": 9600.0, "prefill_tokens_per_session": 2000.0, "kv_hit_rate_hbm": 0.0,
    ...      "kv_hit_rate_host": 7600 / 9600, "kv_hit_rate_ssd": 0.0, "kv_hit_rate_remote": 0.0}
    >>> where_found(r)[["share", "tokens"]].round(6).values.tolist()[1:]
    [[0.791667, 7600.0], [0.0, 0.0], [0.0, 0.0], [0.208333, 2000.0]]
    """
    total = float(result["input_tokens_per_session"])
    rows = [{"where": name, "gb": result.get(gb), "share": float(result[f"kv_hit_rate_{tier}"]),
             "tokens": float(result[f"kv_hit_rate_{tier}"]) * total} for tier, name, gb in TIER_ROWS]
    prefill = float(result["prefill_tokens_per_session"])
    rows.append({"where": "Recomputed (prefilled again)", "gb": None, "share": prefill / total, "tokens": prefill})
    return pd.DataFrame(rows)


def tier_costs(result: Mapping[str, Any]) -> pd.DataFrame:
    """The KV tiers' cost lines and the fleet's total, per hour and per session (USD/h x 24 h / sessions served a
    day).

    >>> tier_costs({"kv_host_usd_per_hour": 1.0, "kv_ssd_usd_per_hour": 0.0, "kv_remote_usd_per_hour": 0.0,
    ...             "kv_tiers_usd_per_hour": 1.0, "cost_usd_per_hour": 10.0, "sessions_served_per_day": 240.0}
    ...            )["usd_per_session"].tolist()
    [0.1, 0.0, 0.0, 0.1, 1.0]
    """
    served = result.get("sessions_served_per_day") or None
    return pd.DataFrame([{"line": label(name), "usd_per_hour": float(result[name]),
                          "usd_per_session": None if served is None else float(result[name]) * HOURS_PER_DAY / served}
                         for name in COST_LINES])
