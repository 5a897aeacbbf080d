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
  (the remote store's total) and adds whole systems. **A mix** (``host+accelerators``, ``ssd+accelerators``) adds
  systems and the tier together: for every number of systems added on the coarse grid below (up to what the
  accelerators option needs, else the field's bound) the smallest amount of the tier that holds the target on that
  fleet (every pair evaluated in two passes: the coarse amounts, then the whole GB between), the cheapest pair kept;
  it includes both pure options, so it is never dearer than either. **The large-memory option** replaces the fleet
  by the catalog accelerator with the most memory per chip (more than the scenario's; estimated by the roofline;
  priced for the scenario's ownership; the cheapest of equals, :func:`large_memory_accelerator`) in the fewest whole
  systems that hold the target, the tiers per system as given. Sessions are served aggregated (a decode pool with
  sessions is not modelled), so a large-memory decode accelerator is studied as the whole fleet; a dataflow
  accelerator the roofline cannot estimate (the SN50) has no session throughput to price and is not offered.
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
- **Ranked** by cost per day, the cost of holding the target (a fleet far above the target is not made cheaper by
  its cost per session at a full load the target never brings), then by cost per session; the cheapest is rank 1.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields
from enum import StrEnum
from typing import Any

import numpy as np
import pandas as pd

from economics import catalog
from economics.domain.explain import format_number as fmt
from economics.engine.batch import as_scenario, evaluate, evaluate_scenario
from economics.schema.scenario import CATALOG_FIELDS, FIELDS, Scenario, Workload
from economics.schema.validation import CONTEXT_CURVE
from economics.schema.validation_sessions import TIERS
from economics.studies.compare import scenario_frame


class KvOption(StrEnum):
    """The options the study compares: a KV tier added to the current fleet, more systems, a tier and more systems
    together, or a fleet of the catalog's largest-memory accelerator.
    """

    HOST = "host"
    SSD = "ssd"
    REMOTE = "remote"
    ACCELERATORS = "accelerators"
    HOST_AND_ACCELERATORS = "host+accelerators"
    SSD_AND_ACCELERATORS = "ssd+accelerators"
    LARGE_MEMORY = "large-memory accelerator"


MEMORY: tuple[KvOption, ...] = (KvOption.HOST, KvOption.SSD, KvOption.REMOTE)
MIXES: dict[KvOption, KvOption] = {KvOption.HOST_AND_ACCELERATORS: KvOption.HOST,
                                   KvOption.SSD_AND_ACCELERATORS: KvOption.SSD}
"""Each mix and the tier it adds with the systems (a remote store is the fleet's total, not a per-system choice)."""
FIELD: dict[KvOption, str] = {**dict(zip(MEMORY, (capacity for capacity, _ in TIERS), strict=True)),
                              KvOption.ACCELERATORS: "accelerator_count", KvOption.LARGE_MEMORY: "accelerator_count"}
"""The scenario field each option raises (the tiers' capacities as :mod:`economics.schema.validation_sessions` names
them; a mix: its tier's, beside the accelerators its fleet adds)."""
FIELD.update({mix: FIELD[tier] for mix, tier in MIXES.items()})
WORDS: dict[KvOption, str] = {KvOption.HOST: "host DRAM per system", KvOption.SSD: "local SSD per system",
                              KvOption.REMOTE: "remote KV store (the fleet's total)",
                              KvOption.ACCELERATORS: "more systems",
                              KvOption.HOST_AND_ACCELERATORS: "host DRAM per system and more systems together",
                              KvOption.SSD_AND_ACCELERATORS: "local SSD per system and more systems together",
                              KvOption.LARGE_MEMORY: "a fleet of the catalog's largest-memory accelerator"}
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
    accelerator: str = ""


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


def _shown(r: dict[str, float]) -> dict[str, Any]:
    """The figures an option's row shows, of the engine's figures ``r``."""
    return {k: r[k] for k in SHOWN}


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


def _mix(s: Scenario, base: dict[str, Any], per_system: float, option: KvOption, agents: float,
         more: OptionRow) -> OptionRow:
    """A tier and more systems together: for every number of systems added on the coarse grid (up to what more
    systems alone need, else the field's bound), the smallest amount of the tier that holds ``agents`` on that fleet
    (the grid of :func:`_smallest`: the coarse amounts of every fleet in one pass, then the whole GB between for
    every fleet in another); the cheapest per day (then per session) of those pairs.
    """
    name, fleet0 = FIELD[option], float(base["accelerator_count"])
    current = float(base[name])
    systems_top = more.added / per_system if more.feasible else math.floor(
        (float(FIELDS["accelerator_count"].le or 0) - fleet0) / per_system)
    n_grid, t_grid = _coarse(systems_top), _coarse(math.floor(float(FIELDS[name].le or 0) - current))
    n_all, t_all = np.repeat(n_grid, t_grid.size), np.tile(t_grid, n_grid.size)
    out = evaluate(scenario_frame([base], repeat=n_all.size, varying={
        "accelerator_count": fleet0 + per_system * n_all, name: current + t_all}))
    ok = _holds(out, agents).reshape(n_grid.size, t_grid.size)
    fleets, amounts = [], []
    for i in np.flatnonzero(ok.any(axis=1)):
        j = int(np.argmax(ok[i]))
        grid = np.zeros(1) if j == 0 else _fine(float(t_grid[j - 1]), float(t_grid[j]))
        fleets.append(np.full(grid.size, n_grid[i]))
        amounts.append(grid)
    if not fleets:
        shown: dict[str, Any] = dict.fromkeys(SHOWN, float("nan"))
        return OptionRow(option=option, field=name, feasible=False, reason=(
            f"no fleet of up to {fmt(systems_top)} more systems holds the target with any {WORDS[MIXES[option]]}"),
            current=current, needed=float("nan"), added=float("nan"), **shown)
    n_fine, t_fine = np.concatenate(fleets), np.concatenate(amounts)
    out = evaluate(scenario_frame([base], repeat=n_fine.size, varying={
        "accelerator_count": fleet0 + per_system * n_fine, name: current + t_fine}))
    holds = _holds(out, agents)
    cost = pd.to_numeric(out["cost_usd_per_session"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    day = pd.to_numeric(out["cost_usd_per_day"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    first = [int(np.flatnonzero(holds & (n_fine == n))[0]) for n in np.unique(n_fine) if (holds & (n_fine == n)).any()]
    best = min(first, key=lambda k: (day[k], cost[k]))
    r = _figures(out.iloc[best])
    return OptionRow(option=option, field=name, feasible=True, reason="", current=current,
                     needed=current + float(t_fine[best]), added=float(t_fine[best]), **_shown(r))


def large_memory_accelerator(s: Scenario) -> str | None:
    """The catalog's accelerator with the most memory per chip above the scenario's, among those the roofline
    estimates and that have the figures the scenario's ownership needs (a price to own, a rent to rent; a power);
    the cheapest of equals. None when there is none.
    """
    mine = catalog.accelerator_record(s.accelerator).get("memory_gb") or 0.0
    cost = "price_usd" if s.ownership == "own" else "rent_usd_per_hour"
    found = []
    for acc in catalog.accelerator_ids():
        rec = catalog.accelerator_record(acc)
        memory, price, power = (_f(rec.get(k)) for k in ("memory_gb", cost, "power_kw"))
        if bool(rec.get("roofline", False)) and not math.isnan(memory + price + power) and memory > float(mine):
            found.append((-memory, price, acc))
    return min(found)[2] if found else None


def _large_memory(s: Scenario, base: dict[str, Any], agents: float) -> OptionRow:
    """The current fleet replaced by the largest-memory accelerator (:func:`large_memory_accelerator`): its
    throughput estimated by the roofline and its catalog figures, the tiers per system as given, the fewest whole
    systems that hold ``agents``. Sessions are served aggregated (a decode pool with sessions is not modelled), so a
    large-memory decode accelerator is studied as the whole fleet.
    """
    acc = large_memory_accelerator(s)
    nan = float("nan")
    shown: dict[str, Any] = dict.fromkeys(SHOWN, nan)
    if acc is None:
        return OptionRow(option=KvOption.LARGE_MEMORY, field="accelerator_count", feasible=False, reason=(
            f"no accelerator in the catalog has more memory per chip than {s.accelerator} with the figures to price "
            "it"), current=0.0, needed=nan, added=nan, **shown)
    swap = {**base, "accelerator": acc, "accelerator_count": 0, "output_tokens_per_s_per_accelerator": None,
            "input_tokens_per_s_per_accelerator": None, "accelerators_per_replica": None,
            "measured_output_tokens_per_s_per_user": None, "concurrent_users_per_replica": None,
            **{f: None for f in CATALOG_FIELDS if FIELDS[f].catalog_id == "accelerator"},
            **dict.fromkeys(CONTEXT_CURVE)}
    per_system = float(catalog.accelerator_record(acc).get("accelerators_per_system") or 1)
    top = math.floor(float(FIELDS["accelerator_count"].le or 0) / per_system)
    added, at = _smallest(swap, "accelerator_count", 0.0, per_system, float(top), agents)
    if added is None:
        return OptionRow(option=KvOption.LARGE_MEMORY, field="accelerator_count", feasible=False,
                         reason=_cannot(s, KvOption.ACCELERATORS, at, per_system * top, agents), current=0.0,
                         needed=nan, added=nan, accelerator=acc, **shown)
    r = _figures(at)
    return OptionRow(option=KvOption.LARGE_MEMORY, field="accelerator_count", feasible=True, reason="", current=0.0,
                     needed=per_system * added, added=per_system * added, accelerator=acc, **_shown(r))


def _ranked(rows: list[OptionRow]) -> tuple[OptionRow, ...]:
    """The rows with their rank: the feasible ones by cost per day (what holding the target costs: a fleet far
    larger than the target is not cheaper for its cost per session at a full load the target never brings), then
    cost per session.
    """
    order = sorted((r for r in rows if r.feasible), key=lambda r: (r.cost_usd_per_day, r.cost_usd_per_session))
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
    unit = "accelerators" if best.field == "accelerator_count" else "GB"
    on = (f" on {fmt(best.accelerators)} accelerators" if best.option in MIXES else
          f" of {best.accelerator}" if best.option is KvOption.LARGE_MEMORY else "")
    text = (f"{now}\nCheapest: {best.option.value}, {WORDS[best.option]}: {best.field} {fmt(best.current)} -> "
            f"{fmt(best.needed)} ({fmt(best.added)} {unit} more{on}): {fmt(best.agents_at_slo)} agents held, "
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
    elif best.option in MIXES:
        text += ("\nWhy: the tier finds more of each turn's earlier context on every system, so fewer systems are "
                 f"added than without it; the tiers cost {fmt(best.kv_tiers_usd_per_hour)} USD/h.")
    elif best.option is KvOption.LARGE_MEMORY:
        text += (f"\nWhy: {best.accelerator}'s larger memory holds more of the sessions' KV (and its own throughput "
                 "is estimated by the roofline); its fleet holds the target for less a day than the current "
                 "hardware's options.")
    else:
        text += ("\nWhy: more systems hold more agents at the same hit rate; no KV tier reached the target more "
                 "cheaply on the current fleet.")
    return text


def kv_memory_study(scenario: Scenario | dict[str, Any], agents: float) -> KvMemoryStudy:
    """More memory or more accelerators: for ``agents`` concurrent sessions at the scenario's SLO, the smallest
    addition of each KV tier to the current fleet, the systems needed without one, each of host DRAM and SSD with
    more systems together, and a fleet of the largest-memory accelerator, ranked by cost per day (see the module
    docstring for the rule).

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
    >>> for row in study.table[["option", "feasible", "needed", "rank"]].values.tolist()[:5]:
    ...     print(row)
    ['host', True, 1.0, 1]
    ['ssd', False, nan, <NA>]
    ['remote', False, nan, <NA>]
    ['accelerators', True, 16.0, 3]
    ['host+accelerators', True, 1.0, 2]
    """
    if not (isinstance(agents, int | float) and math.isfinite(agents) and agents > 0):
        raise ValueError(f"agents: the target number of agents must be a number > 0, got {agents!r}")
    s = as_scenario(scenario)
    if s.workload != Workload.SESSIONS:
        raise ValueError("workload: the kv-memory study takes a session row (workload=sessions); the Sessions page "
                         "or to_sessions switches one")
    base = _current(s)
    current = _figures(evaluate_scenario(base))  # a ScenarioError names what is wrong with the row
    per_system = current["accelerators_per_system"]
    rows = [_option(s, base, per_system, option, float(agents)) for option in (*MEMORY, KvOption.ACCELERATORS)]
    rows += [_mix(s, base, per_system, mix, float(agents), rows[-1]) for mix in MIXES]
    rows.append(_large_memory(s, base, float(agents)))
    rows = [OptionRow(**{**asdict(r), "accelerator": r.accelerator or s.accelerator}) for r in rows]
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
