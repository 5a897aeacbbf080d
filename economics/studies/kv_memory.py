"""More memory or more accelerators? For a target number of concurrent agents at the SLO, the cheapest of adding a
KV tier (host DRAM, local SSD, a remote store) to the current fleet against adding systems (issue #39, item 5).

Every figure is the engine's (:func:`economics.evaluate`): ``agents_at_slo`` (concurrent sessions held at full load
with the slowest turn within ``ttft_target_s`` and ``target_output_tokens_per_s_per_user``), ``cost_usd_per_day``,
``cost_usd_per_session``, ``kv_hit_rate`` and the tiers' cost lines. The study only chooses the rows to evaluate:

- **The current fleet**: the scenario's ``accelerator_count``, or, where it is sized from ``demand_sessions_per_day``,
  the accelerators the engine sizes for that demand. Every option is then evaluated as a fixed fleet at full load
  (``demand_sessions_per_day`` emptied: the fleet's capacity), so the cost per session of every option is its
  cost per day over the sessions it serves a day at full load, on the same footing.
- **A memory option** (:class:`KvOption` ``host``, ``ssd``, ``remote``) keeps the current fleet and raises one tier's
  capacity (``kv_host_memory_gb_per_system``, ``kv_ssd_gb_per_system``, ``kv_remote_gb``; the other fields as given)
  to the smallest amount whose fleet holds the target agents. **The accelerators option** keeps the tiers per system
  (the remote store's total) and adds whole systems.
- **The search** (:func:`_smallest`), on a grid fixed before the target is known: a coarse grid of the amount added,
  0 and then :math:`2^{k/4}` (GB or systems, k = 0, 1, ..., about 19 % apart) up to the field's upper bound in the
  scenario schema, every point evaluated in one pass; then, in the bracket between the last coarse point that misses
  the target and the first that holds it, every whole GB or system (at most 256 evenly spaced whole numbers for a wide
  bracket). The amount is the first point of that grid that holds the target. A larger target can only move that
  point up, so a larger target never makes an option cheaper per day (tested), whether or not the agents held rise
  smoothly with the amount.
- **Cannot**: an option that holds the target at no amount up to the field's bound says why, from the engine's
  figures at the bound: the tier's figures missing (the validation's message), a tier that loads slower than the
  system prefills (it holds nothing), the slowest turn decoding below the target (its batch reads the KV in HBM: no
  tier or added system changes it), its TTFT above the target, or the most agents it holds.
- **Ranked** by cost per session, then cost per day; the cheapest is rank 1.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields
from enum import StrEnum
from typing import Any

import numpy as np
import pandas as pd

from economics.domain.explain import format_number as fmt
from economics.engine.batch import as_scenario, evaluate, evaluate_scenario
from economics.schema.scenario import FIELDS, Scenario, Workload
from economics.schema.validation_sessions import TIERS
from economics.studies.compare import scenario_frame


class KvOption(StrEnum):
    """The options the study compares: a KV tier added to the current fleet, or more systems."""

    HOST = "host"
    SSD = "ssd"
    REMOTE = "remote"
    ACCELERATORS = "accelerators"


MEMORY: tuple[KvOption, ...] = (KvOption.HOST, KvOption.SSD, KvOption.REMOTE)
FIELD: dict[KvOption, str] = {**dict(zip(MEMORY, (capacity for capacity, _ in TIERS), strict=True)),
                              KvOption.ACCELERATORS: "accelerator_count"}
"""The scenario field each option raises (the tiers' capacities as :mod:`economics.schema.validation_sessions` names
them)."""
WORDS: dict[KvOption, str] = {KvOption.HOST: "host DRAM per system", KvOption.SSD: "local SSD per system",
                              KvOption.REMOTE: "remote KV store (the fleet's total)",
                              KvOption.ACCELERATORS: "more systems"}
"""What each option adds, in words (the study's explanation; the table holds the enum's values)."""
COARSE_STEPS_PER_DOUBLING = 4
MAX_FINE_POINTS = 256
READ = ("accelerators", "systems", "accelerators_per_system", "agents_at_slo", "agents_per_accelerator",
        "kv_hit_rate", "ttft_last_turn_s", "min_output_tokens_per_s_per_user", "kv_tiers_usd_per_hour",
        "cost_usd_per_day", "cost_usd_per_session", "sessions_served_per_day")
"""The engine's outputs the study reads of each option's row."""


@dataclass(frozen=True)
class OptionRow:
    """One option of the study: the field it raises from ``current`` to ``needed`` (``added`` more; NaN where it
    cannot), whether it holds the target and why not, the engine's figures for its fleet, and its rank (1 = cheapest;
    None where it cannot).
    """

    option: KvOption
    field: str
    feasible: bool
    reason: str
    current: float
    needed: float
    added: float
    accelerators: float
    systems: float
    agents_at_slo: float
    agents_per_accelerator: float
    kv_hit_rate: float
    ttft_last_turn_s: float
    min_output_tokens_per_s_per_user: float
    kv_tiers_usd_per_hour: float
    cost_usd_per_day: float
    cost_usd_per_session: float
    rank: int | None = None


COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(OptionRow))
"""The options table's columns, in order: :class:`OptionRow`'s fields."""


@dataclass(frozen=True)
class KvMemoryStudy:
    """The study's answer: the target, the current fleet's figures (the engine's, at full load), one row per option
    (in :class:`KvOption` order) and why the cheapest is cheapest.
    """

    agents: float
    current: dict[str, Any]
    rows: tuple[OptionRow, ...]
    why: str

    @property
    def table(self) -> pd.DataFrame:
        """The options table (:data:`COLUMNS`), options as their values ('host', 'ssd', ...)."""
        table = pd.DataFrame([{**asdict(r), "option": r.option.value} for r in self.rows], columns=list(COLUMNS))
        return table.astype({"rank": "Int64", "feasible": bool})

    @property
    def cheapest(self) -> OptionRow | None:
        """The option ranked first, or None when no option holds the target."""
        return next((r for r in self.rows if r.rank == 1), None)


def _f(value: Any) -> float:
    """An engine output as a float; NaN where it is empty."""
    return float("nan") if value is None or value is pd.NA or value != value else float(value)


def _figures(row: Any) -> dict[str, float]:
    return {k: _f(row.get(k)) for k in READ}


def _current(s: Scenario) -> dict[str, Any]:
    """The current fleet as a fixed fleet at full load: the scenario's row with its accelerators fixed (the engine's
    sizing for the demand where none is given) and the demand emptied. ValueError when it has no fleet.
    """
    fixed = s.accelerator_count
    if fixed is None:
        sized = evaluate_scenario(s)
        fixed = sized.get("accelerators")
        if fixed is None or not math.isfinite(float(fixed)):
            raise ValueError(f"accelerator_count: the fleet for the demand cannot be sized ({sized.get('warnings')}); "
                             "give a fixed accelerator_count")
    return s.model_copy(update={"accelerator_count": int(fixed), "demand_sessions_per_day": None}).model_dump()


def _coarse(top: float) -> np.ndarray:
    """0, then 2^(k/4) up to ``top`` (the most that may be added), and ``top``."""
    if top <= 0:
        return np.zeros(1)
    ks = np.arange(0, math.floor(COARSE_STEPS_PER_DOUBLING * math.log2(top)) + 1) if top >= 1 else np.zeros(0)
    return np.unique(np.concatenate([[0.0], np.ceil(2.0 ** (ks / COARSE_STEPS_PER_DOUBLING)), [top]]))


def _fine(lo: float, hi: float) -> np.ndarray:
    """Whole numbers in (lo, hi], at most :data:`MAX_FINE_POINTS` of them evenly spaced, ``hi`` the last."""
    points = np.ceil(np.linspace(lo, hi, MAX_FINE_POINTS + 1)[1:]) if hi - lo > MAX_FINE_POINTS else np.arange(
        math.floor(lo) + 1, math.floor(hi) + 1, dtype=float)
    return np.unique(np.append(points[(points > lo) & (points < hi)], hi))


def _holds(out: pd.DataFrame, agents: float) -> np.ndarray:
    held = pd.to_numeric(out["agents_at_slo"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    return np.asarray(out["valid"].astype(bool).to_numpy() & (held >= agents), dtype=bool)


def _smallest(base: dict[str, Any], field: str, current: float, unit: float, top: float,
              agents: float) -> tuple[float | None, pd.Series]:
    """The smallest amount added (in ``unit``s of ``field``, on the grid of the module docstring, up to ``top``)
    whose row holds ``agents``, and that row; None and the row at ``top`` when none does.
    """
    def rows(added: np.ndarray) -> pd.DataFrame:
        return evaluate(scenario_frame([base], repeat=len(added), varying={field: current + unit * added}))

    coarse = _coarse(top)
    out = rows(coarse)
    ok = _holds(out, agents)
    if not ok.any():
        return None, out.iloc[-1]
    i = int(np.argmax(ok))
    if i == 0:
        return 0.0, out.iloc[0]
    fine = _fine(float(coarse[i - 1]), float(coarse[i]))
    out = rows(fine)
    j = int(np.argmax(_holds(out, agents)))
    return float(fine[j]), out.iloc[j]


def _slo_reason(s: Scenario, r: dict[str, float], option: KvOption) -> str:
    """Why a row holds no agents at the SLO, from its figures (the engine's own test: agents_at_slo is empty)."""
    target, speed = s.target_output_tokens_per_s_per_user, r["min_output_tokens_per_s_per_user"]
    if target is not None and not speed >= target * (1 - 1e-12):
        return (f"the slowest turn decodes at {fmt(speed)} token/s, below target_output_tokens_per_s_per_user "
                f"{fmt(target)}: its running batch reads the KV in HBM, which no KV tier or added system changes")
    ttft = r["ttft_last_turn_s"]
    more = "more systems do not shorten a turn's prefill" if option is KvOption.ACCELERATORS else \
        "even with this tier at its most"
    return f"the last turn's TTFT is {fmt(ttft)} s, above ttft_target_s {fmt(s.ttft_target_s or 0)}: {more}"


def _cannot(s: Scenario, option: KvOption, at_top: pd.Series, top_value: float, agents: float) -> str:
    """Why ``option`` holds ``agents`` at no amount up to ``top_value`` (its row there: ``at_top``)."""
    if not bool(at_top["valid"]):
        return str(at_top["error"])
    r = _figures(at_top)
    name = FIELD[option]
    if option in MEMORY and _f(at_top.get(f"kv_hit_rate_{option.value}")) == 0:
        return (f"{name} at {fmt(top_value)} GB finds nothing: the tier loads slower than the system prefills, so "
                "recomputing is faster and it holds nothing")
    if r["agents_at_slo"] != r["agents_at_slo"]:  # NaN: the SLO is not met
        return _slo_reason(s, r, option)
    bound = f"{name} at its bound ({fmt(top_value)})"
    return (f"at most {fmt(r['agents_at_slo'])} agents, at {bound}: the KV hit rate is then {fmt(r['kv_hit_rate'])}"
            f", and the target is {fmt(agents)}" if option in MEMORY else
            f"at most {fmt(r['agents_at_slo'])} agents at {bound}; the target is {fmt(agents)}")


SHOWN = tuple(k for k in READ if k not in ("accelerators_per_system", "sessions_served_per_day"))
"""The engine's figures an option's row shows."""


def _option(s: Scenario, base: dict[str, Any], per_system: float, option: KvOption, agents: float) -> OptionRow:
    """The smallest amount of ``option`` that holds ``agents`` on the current fleet ``base`` (``per_system``
    accelerators a system), or why none does.
    """
    name = FIELD[option]
    current = float(base[name])
    unit = per_system if option is KvOption.ACCELERATORS else 1.0
    top = math.floor((float(FIELDS[name].le or 0) - current) / unit)
    added, at = _smallest(base, name, current, unit, float(top), agents)
    nan = float("nan")
    if added is None:
        shown: dict[str, Any] = dict.fromkeys(SHOWN, nan)
        return OptionRow(option=option, field=name, feasible=False, reason=_cannot(s, option, at, current + unit * top,
                         agents), current=current, needed=nan, added=nan, **shown)
    r = _figures(at)
    figures: dict[str, Any] = {k: r[k] for k in SHOWN}
    return OptionRow(option=option, field=name, feasible=True, reason="", current=current,
                     needed=current + unit * added, added=unit * added, **figures)


def _ranked(rows: list[OptionRow]) -> tuple[OptionRow, ...]:
    """The rows with their rank: the feasible ones by cost per session, then cost per day."""
    order = sorted((r for r in rows if r.feasible), key=lambda r: (r.cost_usd_per_session, r.cost_usd_per_day))
    rank = {r.option: k + 1 for k, r in enumerate(order)}
    return tuple(OptionRow(**{**asdict(r), "rank": rank.get(r.option)}) for r in rows)


def _why(agents: float, current: dict[str, Any], rows: tuple[OptionRow, ...]) -> str:
    """Why the cheapest option is cheapest (or why none holds the target), in plain text with its numbers, one
    point a line.
    """
    held = current["agents_at_slo"]
    now = (f"The current fleet ({fmt(current['accelerators'])} accelerators) holds "
           f"{fmt(held) if held == held else 'no'} agents at the SLO; the target is {fmt(agents)}.")
    ranked = sorted((r for r in rows if r.rank is not None), key=lambda r: r.rank or 0)
    if not ranked:
        return "\n".join([now + " No option holds it:", *(f"{r.option.value}: {r.reason}." for r in rows)])
    best = ranked[0]
    if held >= agents:
        return now + "\nThe current fleet already holds the target: no option adds anything (each adds 0)."
    unit = "accelerators" if best.option is KvOption.ACCELERATORS else "GB"
    text = (f"{now}\nCheapest: {best.option.value}, {WORDS[best.option]}: {best.field} {fmt(best.current)} -> "
            f"{fmt(best.needed)} ({fmt(best.added)} {unit} more): {fmt(best.agents_at_slo)} agents held, "
            f"{fmt(best.cost_usd_per_session)} USD per session, {fmt(best.cost_usd_per_day)} USD a day, KV hit rate "
            f"{fmt(best.kv_hit_rate)}.")
    if len(ranked) > 1:
        nxt = ranked[1]
        text += (f"\nNext: {nxt.option.value}, {fmt(nxt.cost_usd_per_session)} USD per session and "
                 f"{fmt(nxt.cost_usd_per_day)} USD a day on {fmt(nxt.accelerators)} accelerators at a hit rate of "
                 f"{fmt(nxt.kv_hit_rate)}.")
    if best.option in MEMORY:
        text += ("\nWhy: the memory finds more of each turn's earlier context, so fewer tokens are prefilled and each "
                 f"accelerator holds more agents; the tiers cost {fmt(best.kv_tiers_usd_per_hour)} USD/h.")
    else:
        text += ("\nWhy: more systems hold more agents at the same hit rate; no KV tier reached the target more "
                 "cheaply on the current fleet.")
    return text


def kv_memory_study(scenario: Scenario | dict[str, Any], agents: float) -> KvMemoryStudy:
    """More memory or more accelerators: for ``agents`` concurrent sessions at the scenario's SLO, the smallest
    addition of each KV tier to the current fleet, and the systems needed without one, ranked by cost per session
    (see the module docstring for the rule).

    Parameters
    ----------
    scenario : a session scenario (``workload=sessions``), a model or its fields
    agents : the target number of concurrent agents (sessions) at the SLO, > 0

    Returns
    -------
    KvMemoryStudy
        ``table`` (one row per :class:`KvOption`, columns :data:`COLUMNS`), ``cheapest``, ``current`` and ``why``.

    Raises
    ------
    ValueError
        A scenario that is not valid (:class:`~economics.engine.batch.ScenarioError`), not sessions, or a target
        that is not a positive number.

    >>> s = {"workload": "sessions", "accelerator": "h100-sxm", "model": "llama-3.1-70b", "precision": "fp8",
    ...      "turns_per_session": 1, "session_prefix_tokens": 1000, "input_tokens_per_turn": 500,
    ...      "output_tokens_per_turn": 100, "seconds_between_turns": 60, "accelerator_count": 8,
    ...      "output_tokens_per_s_per_accelerator": 1000, "input_tokens_per_s_per_accelerator": 10_000,
    ...      "target_output_tokens_per_s_per_user": 1, "kv_host_read_gb_per_s": 16.384,
    ...      "kv_host_memory_usd_per_gb": 10, "cost_of_capital": 0}
    >>> study = kv_memory_study(s, 8000)
    >>> study.table[["option", "feasible", "needed", "rank"]].values.tolist()
    [['host', True, 1.0, 1], ['ssd', False, nan, <NA>], ['remote', False, nan, <NA>], ['accelerators', True, 16.0, 2]]
    """
    if not (isinstance(agents, int | float) and math.isfinite(agents) and agents > 0):
        raise ValueError(f"agents: the target number of agents must be a number > 0, got {agents!r}")
    s = as_scenario(scenario)
    if s.workload != Workload.SESSIONS:
        raise ValueError("workload: the kv-memory study takes a session row (workload=sessions); the Sessions page "
                         "or to_sessions switches one")
    base = _current(s)
    current = _figures(evaluate_scenario(base))  # a ScenarioError names what is wrong with the row
    rows = [_option(s, base, current["accelerators_per_system"], option, float(agents)) for option in KvOption]
    ranked = _ranked(rows)
    return KvMemoryStudy(float(agents), current, ranked, _why(float(agents), current, ranked))


def _plain(value: Any) -> Any:
    """A table cell as JSON: an empty or NaN number as null."""
    return None if value is None or value is pd.NA or (isinstance(value, float) and value != value) else value


def study_json(study: KvMemoryStudy) -> str:
    """The study as the CLI's and the API's JSON: the target, the current fleet, the options table, the cheapest
    option and why (NaN as null).
    """
    cheapest = study.cheapest
    options = [{k: _plain(v) for k, v in row.items()} for row in study.table.to_dict("records")]
    return json.dumps({"agents": study.agents, "current": {k: _plain(v) for k, v in study.current.items()},
                       "options": options,
                       "cheapest": None if cheapest is None else cheapest.option.value, "why": study.why},
                      indent=1, allow_nan=False) + "\n"
