"""The hardware options a plan may choose from: the catalog's accelerators with the engine's rates at the
per-user speed target (one evaluation for all pairs, kept in a small memo), how each may be cooled and hosted, and
rack-scale systems as whole replicas.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from economics import catalog
from economics.domain import fleet
from economics.engine.batch import ScenarioError, evaluate, evaluate_scenario
from economics.schema.scenario import Cooling, FacilityCooling, Scenario, Workload, with_changes
from economics.schema.validation import InputError
from economics.studies.planner.inputs import ROLES, CoolingMode, Ownership, PoolRole, RentTier

CANDIDATE_COLUMNS: dict[str, tuple[str, str]] = {
    "name": ("", "Label of the hardware option (required, unique)"),
    "ownership": ("", "own, rent or existing (required)"),
    "accelerator": ("", "Catalog id that fills empty hardware figures (optional)"),
    "accelerators_per_system": ("accelerator", "Accelerators per system"),
    "accelerator_power_kw": ("kW", "Full-load IT power per accelerator incl. its share of the system"),
    "system_power_kw": ("kW", "Full-load IT power per system (instead of accelerator_power_kw)"),
    "system_rack_units": ("U", "Height of one system; empty = only the rack's power limits it"),
    "system_form": ("", "server, rack or wafer (a rack-scale system fills a rack)"),
    "accelerator_cooling": ("", "air, liquid or air_or_liquid"),
    "accelerator_price_usd": ("USD", "Capex per accelerator (own; book value for existing)"),
    "rent_usd_per_accelerator_hour": ("USD/h", "Rent per accelerator-hour (rent)"),
    "reserved_rent_usd_per_accelerator_hour": ("USD/h", "Reserved rent per accelerator-hour (rent); empty = the "
                                               "catalog's, else the rent less the scenario's reserved_discount"),
    "spot_rent_usd_per_accelerator_hour": ("USD/h", "Spot rent per accelerator-hour (rent); empty = the catalog's, "
                                           "else the rent less the scenario's spot_discount"),
    "embodied_kgco2e_per_accelerator": ("kgCO2e", "Embodied emissions per accelerator incl. its system share; "
                                        "empty = the catalog's, else none counted"),
    "max_accelerators": ("accelerator", "Size of the existing fleet (existing)"),
    "output_tokens_per_s_per_accelerator": ("token/s", "Measured decode throughput per accelerator at the "
                                            "per-user speed below (required)"),
    "input_tokens_per_s_per_accelerator": ("token/s", "Measured prefill throughput per accelerator; empty = the "
                                           "output figure includes prefill (aggregated role only)"),
    "output_tokens_per_s_per_user": ("token/s", "Per-user speed at which the output figure was measured"),
    "accelerators_per_replica": ("accelerator", "Accelerators holding one copy of the model; empty = one system"),
    "family": ("", "Accelerator family for failure and repair rates (data/reliability.csv)"),
    "roles": ("", "Roles allowed, separated by ';' (aggregated;prefill;decode); empty = all the figures allow"),
}
"""Columns of a CANDIDATES.csv: one hardware option per row with its own measured rates and prices."""


CANDIDATE_TEXT_COLUMNS = frozenset({"name", "ownership", "accelerator", "system_form", "accelerator_cooling", "family",
                                    "roles"})
"""The columns of :data:`CANDIDATE_COLUMNS` holding text; every other one holds a number."""

MAX_CANDIDATES = 64
"""The most hardware options one plan weighs: the model grows with candidates x roles x hour types (64 plan in
about 3 s here, 256 in 37 s), and a plan's time is bounded before it starts."""


def check_candidate_count(count: int) -> None:
    """:class:`InputError` when a plan is asked to weigh more than :data:`MAX_CANDIDATES` options."""
    if count > MAX_CANDIDATES:
        raise InputError(f"CANDIDATES: {count:,} rows; a plan weighs at most {MAX_CANDIDATES} hardware options "
                         "(split them, or drop the ones a first plan leaves out)")


@dataclass(frozen=True)
class Candidate:
    """One hardware option: its system, its ownership and cooling, its rates and its prices (per system)."""

    name: str
    ownership: Ownership
    accelerator: str = ""
    family: str = "default"
    accelerators_per_system: int = 8
    system_power_kw: float = 10.0
    system_rack_units: float = math.nan
    rack_scale: bool = False
    hardware_cooling: Cooling = Cooling.AIR
    cooling_mode: CoolingMode = CoolingMode.AIR
    price_usd_per_system: float = 0.0
    rent_usd_per_system_hour: float = math.nan
    reserved_rent_usd_per_system_hour: float = math.nan
    spot_rent_usd_per_system_hour: float = math.nan
    rent_tier: RentTier | None = None
    """A rented option's tier (on_demand, reserved, spot; ``rent_usd_per_system_hour`` is that tier's rent); None until
    :func:`economics.studies.planner.tiers.tier_variants` makes the tiers the plan weighs."""
    embodied_kgco2e_per_system: float = math.nan
    input_tokens_per_s_per_system: float = math.nan
    output_tokens_per_s_per_system: float = math.nan
    output_tokens_per_s_per_user: float = math.nan
    accelerators_per_replica: int = 8
    max_systems: float = math.inf
    roles: tuple[PoolRole, ...] = ROLES
    note: str = ""
    throughput: str = ""
    """Where the rates come from: a measured record, or the estimate's basis (calibrated on which points, or no
    measured point on the family and the range to expect)."""
    systems_per_unit: int = 1
    """Systems one unit here stands for (:func:`whole_replicas`: a model copy spanning k systems is bought as k);
    a figure given per system (a KV tier's GB) counts k times in a unit."""
    kv_hit_rate: float = math.nan
    """workload=sessions: the share of a turn's input this hardware finds in its KV tiers, the engine's
    ``kv_hit_rate`` for a session on it at full load (:func:`session_rates`); NaN for requests (the scenario's
    ``prefix_cache_hit_rate``)."""
    changes: tuple[tuple[str, Any], ...] = ()
    """Scenario fields this candidate sets for itself (:data:`economics.studies.candidate_fields.PER_CANDIDATE`): its
    costs
    are figured with them instead of the scenario's."""

    @property
    def on_site(self) -> bool:
        """Owned or existing: in the facility, held all day (racks, site power, capex)."""
        return self.ownership != Ownership.RENT

    @property
    def hourly(self) -> bool:
        """Rented by the hour (on demand or spot): a count in each hour type; a reservation is held all day."""
        return self.ownership == Ownership.RENT and self.rent_tier != RentTier.RESERVED


RATE_COLUMNS = ("output_tokens_per_s_per_accelerator", "input_tokens_per_s_per_accelerator",
                "accelerators_per_replica", "output_tokens_per_s_per_user")


RATES_MEMO_SIZE = 64
"""Rate tables kept by :func:`catalog_rates` (the most recently used; each a few kB)."""


_RATES_MEMO: dict[tuple[str, tuple[str, ...], tuple[float | None, ...]], tuple[tuple[object, ...], pd.DataFrame]] = {}


_RATES_LOCK = threading.Lock()


def _catalog_tables() -> tuple[object, ...]:
    """The catalog's loaded tables: a table read again (as after ``calibrate --write``) is a new object."""
    return (catalog.accelerator_figures(), catalog.accelerators(), catalog.models(), catalog.throughput_claims(),
            catalog.throughput_curves(), catalog.serving_stacks(), catalog.calibration(), catalog.defaults(),
            catalog.presets())


def catalog_rates(s: Scenario, accelerators: list[str], targets: list[float | None]) -> pd.DataFrame:
    """Throughput per accelerator and per-user speed target from the engine (a measured curve or the calibrated
    roofline, :mod:`economics.engine.estimate`), one evaluation for all pairs. Prices are not read here (a
    placeholder rent
    lets hardware without a published price be estimated); the catalog's prices are read by the candidates.

    The engine is deterministic, so the table is remembered per input (the whole scenario, the accelerators and the
    targets; :data:`RATES_MEMO_SIZE` of them) while the catalog's tables are the same objects: a planner setting
    changed on the same scenario re-rates nothing. Every call returns its own copy.

    Returns one row per (target, accelerator) with :data:`RATE_COLUMNS`, ``feasible`` and ``reason``.
    """
    key = (s.model_dump_json(), tuple(accelerators), tuple(targets))
    tables = _catalog_tables()
    with _RATES_LOCK:
        entry = _RATES_MEMO.pop(key, None)
    if entry is None or any(a is not b for a, b in zip(entry[0], tables, strict=True)):
        entry = (tables, _engine_rates(s, accelerators, targets))
    table = entry[1]
    with _RATES_LOCK:
        _RATES_MEMO[key] = entry  # the most recent last
        while len(_RATES_MEMO) > RATES_MEMO_SIZE:
            del _RATES_MEMO[next(iter(_RATES_MEMO))]
    return table.copy()


def clear_rates_memo() -> None:
    """Forget the remembered rate tables (the next :func:`catalog_rates` asks the engine again)."""
    with _RATES_LOCK:
        _RATES_MEMO.clear()


def _engine_rates(s: Scenario, accelerators: list[str], targets: list[float | None]) -> pd.DataFrame:
    rows, keys = [], []
    for target in targets:
        for acc in accelerators:
            measured = {k: getattr(s, k) for k in RATE_COLUMNS[:3]} if acc == s.accelerator else dict.fromkeys(
                RATE_COLUMNS[:3])
            rows.append(with_changes(
                s, accelerator=acc, ownership=Ownership.RENT, rent_usd_per_accelerator_hour=1.0,
                accelerator_count=None, facility_cooling=FacilityCooling.LIQUID, site_power_mw=None,
                decode_accelerator=None, existing_accelerators=None, new_accelerator=None,
                target_output_tokens_per_s_per_user=target, **measured))
            keys.append((target, acc))
    out = _evaluated(rows)
    columns = _record_columns(out) if isinstance(out, list) else None
    if columns is None:  # a table of the engine's, or records of values the shortcut does not take
        columns = _frame_columns(pd.DataFrame(out) if isinstance(out, list) else out)
    # the table made once from its columns (a column set on a table inserts it into pandas' index of strings)
    return pd.DataFrame({"target": [k[0] for k in keys], "accelerator": [k[1] for k in keys], **columns})


def _frame_columns(out: pd.DataFrame) -> dict[str, Any]:
    """The rate table's columns after ``target`` and ``accelerator``, from the engine's result table ``out``."""
    table: dict[str, Any] = {}
    for col in RATE_COLUMNS:
        table[col] = pd.to_numeric(out[col], errors="coerce").astype(float).to_numpy()
    ok = out["valid"].astype(bool) & out["feasible"].fillna(False).astype(bool)
    table["feasible"] = ok.to_numpy()
    basis = out["throughput_basis"].fillna("").astype(str) if "throughput_basis" in out else pd.Series([""] * len(out))
    curve = out["throughput_curve"].fillna("").astype(str)
    source: pd.Series = out["throughput_source"].fillna("").astype(str) + curve.where(curve == "", " " + curve)
    table["throughput"] = np.where(basis != "", basis, source)
    table["kv_hit_rate"] = (pd.to_numeric(out["kv_hit_rate"], errors="coerce").astype(float).to_numpy()
                            if "kv_hit_rate" in out else np.nan)  # workload=sessions: the residency on it
    table["reason"] = [str(r or e or "") for r, e in zip(out["infeasible_reason"].fillna(""), out["error"].fillna(""),
                                                         strict=True)]
    return table


_ALWAYS = ("throughput_curve", "throughput_source", "infeasible_reason", "error")
"""Keys the table's path reads from every row (a table without one has no such column: pandas' own error)."""


def _record_columns(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """:func:`_frame_columns` of the table of ``records`` (the engine's rows, each with the keys of
    :data:`RATE_READS` it has), read from the records without making that table: the same columns, value for value
    and type for type, where every value is of the kinds the engine gives (numbers or None; ``valid`` a bool,
    ``feasible`` a bool or None; text or None) and every record has the keys of :data:`_ALWAYS`. Else None, and the
    caller makes the table (pandas' conversions of other values are its own). About 5 ms of pandas less per plan
    of the 7 default accelerators (tests/test_planner_shortcuts.py holds it to the table's path).
    """
    def numbers(key: str) -> list[float] | None:
        values = [r.get(key) for r in records]
        if not all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in values):
            return None
        return [math.nan if v is None else float(v) for v in values]

    def texts(key: str) -> list[str] | None:
        values = [r.get(key) for r in records]
        if not all(v is None or isinstance(v, str) for v in values):
            return None
        return ["" if v is None else v for v in values]

    table: dict[str, Any] = {col: numbers(col) for col in (*RATE_COLUMNS, "kv_hit_rate")}
    valid, feasible = [r.get("valid") for r in records], [r.get("feasible") for r in records]
    texts_read: dict[str, Any] = {key: texts(key) for key in ("throughput_basis", "throughput_curve",
                                                  "throughput_source", "infeasible_reason", "error")}
    if (any(v is None for v in [*table.values(), *texts_read.values()]) or not records
            or not all(isinstance(v, bool) for v in valid)
            or not all(v is None or isinstance(v, bool) for v in feasible)
            or not all(key in r for r in records for key in _ALWAYS)):
        return None
    kv = table.pop("kv_hit_rate")
    basis, curve, source = (texts_read[k] for k in ("throughput_basis", "throughput_curve", "throughput_source"))
    out: dict[str, Any] = {col: np.array(table[col], dtype=float) for col in RATE_COLUMNS}
    out["feasible"] = np.array([v and f is True for v, f in zip(valid, feasible, strict=True)], dtype=bool)
    out["throughput"] = np.array([b if b != "" else s + ("" if c == "" else " " + c)
                                  for b, c, s in zip(basis, curve, source, strict=True)], dtype=object)
    out["kv_hit_rate"] = np.array(kv, dtype=float) if any("kv_hit_rate" in r for r in records) else np.nan
    out["reason"] = [str(r or e or "") for r, e in zip(texts_read["infeasible_reason"], texts_read["error"],
                                                       strict=True)]
    return out


FEW_RATE_ROWS = 32
"""Up to this many rows are rated one by one through the single-scenario path (about 1 ms each against about
30 ms for a small table through the vectorised one); a row that path refuses sends the table through
:func:`economics.evaluate`, which reports such rows in its ``error`` column."""


RATE_READS = (*RATE_COLUMNS, "valid", "feasible", "throughput_basis", "throughput_source", "throughput_curve",
              "kv_hit_rate", "infeasible_reason", "error")
"""The engine's result columns :func:`_engine_rates` reads."""


def _evaluated(rows: list[dict[str, Any]]) -> pd.DataFrame | list[dict[str, Any]]:
    """The engine's result table for ``rows``: what :func:`economics.evaluate` gives, or row by row when few their
    records (only the keys of :data:`RATE_READS`: a frame of the engine's ~300 columns cost more than the rows'
    evaluation).
    The estimate's range ends are not computed (``range_ends=False``): no rate reads them.
    """
    if len(rows) <= FEW_RATE_ROWS:
        try:
            results = [evaluate_scenario(r, range_ends=False) for r in rows]
        except (ScenarioError, InputError):
            pass
        else:
            return [{k: r[k] for k in RATE_READS if k in r} for r in results]
    return evaluate(pd.DataFrame(rows), range_ends=False)


def record_number(record: dict[str, Any], key: str) -> float:
    """``record[key]`` as a float; NaN when it is missing or not a number."""
    value = record.get(key, math.nan)
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def catalog_candidates(s: Scenario, accelerators: list[str] | None = None,
                       rates: pd.DataFrame | None = None) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """Own and rent candidates for every catalog accelerator with a price or a rent, and the existing fleet
    (``existing_accelerators`` of ``accelerator``), with rates at the scenario's per-user speed target.

    Returns (candidates, excluded) where excluded lists (name, reason) for hardware that cannot take part.
    """
    ids = accelerators or catalog.accelerator_ids()
    if rates is None:
        rates = catalog_rates(s, ids, [s.target_output_tokens_per_s_per_user])
    by_id = {str(r["accelerator"]): r for r in rates.to_dict(orient="records")}
    candidates: list[Candidate] = []
    excluded: list[tuple[str, str]] = []
    for acc in ids:
        rec = catalog.accelerator_record(acc)
        rate = by_id[acc]
        if not rate["feasible"]:
            excluded.append((acc, str(rate["reason"])))
            continue
        if not math.isfinite(record_number(rec, "accelerators_per_system")):
            excluded.append((acc, "accelerators_per_system: not in the catalog"))
            continue
        a = int(record_number(rec, "accelerators_per_system"))
        kw = record_number(rec, "system_power_kw")
        kw = kw if math.isfinite(kw) else record_number(rec, "power_kw") * a
        price = record_number(rec, "system_price_usd")
        price = price if math.isfinite(price) else record_number(rec, "price_usd") * a
        rent = record_number(rec, "rent_usd_per_hour") * a
        base = Candidate(
            name=acc, ownership=Ownership.OWN, accelerator=acc, family=str(rec.get("family") or "default"),
            accelerators_per_system=a, system_power_kw=kw, system_rack_units=record_number(rec, "system_rack_units"),
            rack_scale=str(rec.get("system_form")) == "rack",
            hardware_cooling=Cooling(str(rec.get("cooling") or Cooling.AIR)),
            price_usd_per_system=price, rent_usd_per_system_hour=rent,
            reserved_rent_usd_per_system_hour=record_number(rec, "reserved_rent_usd_per_hour") * a,
            spot_rent_usd_per_system_hour=record_number(rec, "spot_rent_usd_per_hour") * a,
            embodied_kgco2e_per_system=record_number(rec, "embodied_kgco2e") * a,
            input_tokens_per_s_per_system=float(rate["input_tokens_per_s_per_accelerator"]) * a,
            output_tokens_per_s_per_system=float(rate["output_tokens_per_s_per_accelerator"]) * a,
            output_tokens_per_s_per_user=float(rate["output_tokens_per_s_per_user"]),
            accelerators_per_replica=int(rate["accelerators_per_replica"]) if math.isfinite(
                rate["accelerators_per_replica"]) else a, throughput=str(rate.get("throughput", "")),
            kv_hit_rate=float(rate.get("kv_hit_rate", math.nan)))
        found = False
        if math.isfinite(price):
            candidates.append(replace(base, name=f"{acc} own"))
            found = True
        if math.isfinite(rent):
            candidates.append(replace(base, name=f"{acc} rent", ownership=Ownership.RENT, price_usd_per_system=0.0))
            found = True
        if s.existing_accelerators and acc == s.accelerator:
            candidates.append(replace(base, name=f"{acc} existing", ownership=Ownership.EXISTING,
                                      price_usd_per_system=float(s.existing_book_value_usd) * a,
                                      max_systems=float(s.existing_accelerators // a)))
            found = True
        if not found:
            excluded.append((acc, "no price and no rent in the catalog (give them in a CANDIDATES.csv)"))
    return [whole_replicas(c) for c in candidates], excluded


def whole_replicas(c: Candidate) -> Candidate:
    """When one copy of the model spans several systems, the unit bought is that group of systems."""
    k = math.ceil(c.accelerators_per_replica / c.accelerators_per_system)
    if k <= 1:
        return c
    return replace(c, accelerators_per_system=c.accelerators_per_system * k, system_power_kw=c.system_power_kw * k,
                   system_rack_units=c.system_rack_units * k, price_usd_per_system=c.price_usd_per_system * k,
                   rent_usd_per_system_hour=c.rent_usd_per_system_hour * k,
                   reserved_rent_usd_per_system_hour=c.reserved_rent_usd_per_system_hour * k,
                   spot_rent_usd_per_system_hour=c.spot_rent_usd_per_system_hour * k,
                   embodied_kgco2e_per_system=c.embodied_kgco2e_per_system * k,
                   input_tokens_per_s_per_system=c.input_tokens_per_s_per_system * k,
                   output_tokens_per_s_per_system=c.output_tokens_per_s_per_system * k,
                   max_systems=math.floor(c.max_systems / k) if math.isfinite(c.max_systems) else math.inf,
                   systems_per_unit=c.systems_per_unit * k,
                   note=(c.note + "; " if c.note else "") + f"a unit here is {k} systems holding one model copy")


def hosting_variants(cands: list[Candidate], s: Scenario) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """Each on-site candidate once per way the facility can cool it (air, liquid, or a liquid retrofit of an air
    hall when allowed); rented candidates are off site. Returns (variants, excluded with reasons).
    """
    cands, excluded = session_rates(cands, s)
    out: list[Candidate] = []
    for c in cands:
        if not c.on_site:
            out.append(replace(c, cooling_mode=CoolingMode.OFF_SITE))
            continue
        modes = _cooling_modes(c.hardware_cooling, s.facility_cooling, bool(s.allow_liquid_retrofit))
        if c.ownership == Ownership.EXISTING:  # already installed: it is cooled as it is, no retrofit to pay
            modes = [CoolingMode.AIR] if c.hardware_cooling != Cooling.LIQUID else [CoolingMode.LIQUID]
        if not modes:
            excluded.append((c.name, f"cooling: {c.name} requires liquid cooling and the facility is air-cooled "
                                     "(allow_liquid_retrofit is false)"))
        for mode in modes:
            per_rack = rack_systems(c, s, mode)
            if per_rack < 1:
                excluded.append((c.name, f"rack power: one {c.name} system draws {c.system_power_kw:,.1f} kW, more "
                                         f"than a {mode}-cooled rack's {_rack_kw(s, mode):,.0f} kW"))
                continue
            name = c.name + (" (liquid retrofit)" if mode == CoolingMode.LIQUID_RETROFIT else "")
            out.append(replace(c, name=name, cooling_mode=mode))
    return out, excluded


def _cooling_modes(hardware: Cooling, facility: FacilityCooling, allow_retrofit: bool) -> list[CoolingMode]:
    """How on-site hardware can be cooled in a facility: its own hall's cooling, or a liquid retrofit of an air hall
    (when allowed; for hardware that can run on air too, a choice the MILP makes: denser racks, lower PUE).

    >>> [str(m) for m in _cooling_modes("liquid", "air", True)], _cooling_modes("liquid", "air", False)
    (['liquid retrofit'], [])
    >>> [str(m) for m in _cooling_modes("air_or_liquid", "air", True) + _cooling_modes("air", "hybrid", True)]
    ['air', 'liquid retrofit', 'air']
    """
    if facility == FacilityCooling.LIQUID:
        return [CoolingMode.LIQUID]
    if facility == FacilityCooling.HYBRID:
        return [CoolingMode.AIR] if hardware == Cooling.AIR else [CoolingMode.LIQUID]
    if hardware == Cooling.AIR:
        return [CoolingMode.AIR]
    if hardware == Cooling.AIR_OR_LIQUID:
        return [CoolingMode.AIR, CoolingMode.LIQUID_RETROFIT] if allow_retrofit else [CoolingMode.AIR]
    return [CoolingMode.LIQUID_RETROFIT] if allow_retrofit else []


def _rack_kw(s: Scenario, mode: CoolingMode) -> float:
    if s.rack_power_kw is not None:
        return float(s.rack_power_kw)
    return catalog.default_value("rack_power_kw_air_containment" if mode == CoolingMode.AIR else "rack_power_kw_liquid")


def pue_for(s: Scenario, mode: CoolingMode) -> float:
    """The PUE of a candidate cooled by ``mode``, the engine's ``pue_effective``: the scenario's ``pue``, else the
    facility's (:func:`economics.domain.fleet.facility_pue`: air, liquid, or a hybrid hall's weighted by its
    ``liquid_cooling_share``; off site too, as the engine charges a rented fleet), liquid where an air hall is
    retrofitted.
    """
    if s.pue is not None:
        return float(s.pue)
    hall = FacilityCooling.LIQUID if mode == CoolingMode.LIQUID_RETROFIT else FacilityCooling(s.facility_cooling)
    return float(fleet.facility_pue(hall, catalog.default_value("pue_air"), catalog.default_value("pue_liquid"),
                                    float(s.liquid_cooling_share)))


def rack_systems(c: Candidate, s: Scenario, mode: CoolingMode) -> float:
    """Systems of ``c`` one rack holds when cooled by ``mode`` (:func:`economics.domain.fleet.systems_per_rack`, at
    the scenario's rack power, else the default for the mode, and its rack units); 0 when none fits.
    """
    return float(fleet.systems_per_rack(c.system_power_kw, _rack_kw(s, mode), c.system_rack_units,
                                        float(s.rack_units_per_rack), c.rack_scale))


def racks_for(c: Candidate, s: Scenario, systems: float) -> float:
    """Racks ``systems`` systems of ``c`` fill, cooled as ``c`` is: the engine's ``racks``
    (:func:`economics.domain.fleet.racks_needed` over :func:`rack_systems`); NaN when a rack holds none.
    """
    return float(fleet.racks_needed(systems, rack_systems(c, s, c.cooling_mode)))


def hosted_candidates(cands: list[Candidate], s: Scenario,
            excluded: list[tuple[str, str]]) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """The candidates once per way they can be hosted (:func:`hosting_variants`), and ``excluded`` with those that
    cannot be hosted added.
    """
    hosted, more = hosting_variants(cands, s)
    return hosted, excluded + more


def session_rates(cands: list[Candidate], s: Scenario) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """workload=sessions: each candidate with its KV hit rate, the engine's ``kv_hit_rate`` for the scenario's
    session on its hardware (the catalog's candidates have it from their rating; one given in a CANDIDATES file is
    evaluated here with its own figures). Returns (candidates, excluded (name, reason)); requests: as they are.
    """
    if s.workload != Workload.SESSIONS:
        return cands, []
    out: list[Candidate] = []
    excluded: list[tuple[str, str]] = []
    for c in cands:
        if math.isfinite(c.kv_hit_rate):
            out.append(c)
            continue
        why, rate = _session_hit_rate(c, s)
        if why:
            excluded.append((c.name, why))
        else:
            out.append(replace(c, kv_hit_rate=rate))
    return out, excluded


def _session_hit_rate(c: Candidate, s: Scenario) -> tuple[str, float]:
    """(why not, '' when known; the engine's ``kv_hit_rate`` for the session on ``c``'s own figures)."""
    if not c.accelerator:
        return ("workload=sessions: the KV residency needs the candidate's memory; give its catalog id "
                "(accelerator)"), math.nan
    a = c.accelerators_per_system  # the engine's system is one of the unit's (its KV tiers are per system)
    figures = {"output_tokens_per_s_per_accelerator": c.output_tokens_per_s_per_system / a,
               "input_tokens_per_s_per_accelerator": c.input_tokens_per_s_per_system / a}
    changes = {**dict(c.changes), "accelerator": c.accelerator,
               "accelerators_per_system": a // max(1, c.systems_per_unit),
               "accelerators_per_replica": c.accelerators_per_replica, "ownership": Ownership.RENT,
               "rent_usd_per_accelerator_hour": 1.0, "accelerator_count": None, "site_power_mw": None,
               "existing_accelerators": None, "new_accelerator": None,
               **{k: (v if math.isfinite(v) else None) for k, v in figures.items()}}
    row = with_changes(s, **changes)
    try:
        r = evaluate_scenario(row, range_ends=False)  # the hit rate only: no range end is read
    except (ScenarioError, InputError) as exc:
        return f"workload=sessions: {exc}", math.nan
    rate = record_number(r, "kv_hit_rate")
    if not math.isfinite(rate):
        return f"workload=sessions: no KV hit rate on it ({r.get('infeasible_reason') or r.get('error')})", math.nan
    return "", rate
