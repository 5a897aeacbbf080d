"""The planner's files: a plan row with its settings and a CANDIDATES.csv read and checked (every bad cell
named with its row and value), a plan written as CSV sections, and the ``plan`` command's whole run from file bytes.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Iterator
from typing import Any, get_args

import pandas as pd

from economics import catalog
from economics.engine.batch import ScenarioError, as_scenario
from economics.io import row_lookup
from economics.io.reading import Columns
from economics.io.scenario_files import to_csv_text
from economics.io.tables import read_table
from economics.lazy import LazyModule
from economics.schema import values
from economics.schema.scenario import FIELDS, Cooling, Scenario, SystemForm
from economics.schema.validation import InputError, check_columns
from economics.studies import candidate_fields
from economics.studies.planner.candidates import (
    CANDIDATE_COLUMNS,
    CANDIDATE_TEXT_COLUMNS,
    MAX_CANDIDATES,
    Candidate,
    catalog_candidates,
    record_number,
    whole_replicas,
)
from economics.studies.planner.frontiers import frontier_carbon, frontier_site, frontier_speed
from economics.studies.planner.inputs import (
    OWNERSHIPS,
    PLAN_FIELDS,
    ROLES,
    FrontierChoice,
    Ownership,
    PlanSettings,
    PoolRole,
    settings_from_row,
)
from economics.studies.planner.report import records
from economics.studies.planner.run import plan

TYPE_CHECKING = False  # typing.TYPE_CHECKING; the module as mypy and lint-imports see it
if TYPE_CHECKING:
    from economics.studies import plan_odds
else:  # imported with --uncertainty only: it brings the decode study's draws, the retrofit and compare studies
    plan_odds = LazyModule("economics.studies.plan_odds")

MAX_SHOWN = 60
MIN_RATE_TOKENS_PER_S = 1e-3
"""The least rate a candidate may give [token/s]: less cannot be meant, and 1e-308 underflowed the planner's
derived rates to 0 (a division by zero) or made its bound on a pool's systems infinite."""
MAX_PLAN_FILE_BYTES = 256 << 20
"""A plan or CANDIDATES file is read whole (a few rows): at most this once decompressed."""


def _shown(value: Any) -> str:
    """A user's value in a message: at most 60 characters, control characters escaped."""
    text = str(value)
    text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "..."


def _check_plan_columns(header: list[str]) -> None:
    check_columns(header, also=PLAN_FIELDS)


PLAN_TABLE = Columns(_check_plan_columns, frozenset(n for n, f in PLAN_FIELDS.items() if f.kind.numeric))
"""A plan file's columns: the scenario fields, their ranges and the planner's settings (:data:`PLAN_FIELDS`)."""


def _check_candidate_columns(header: list[str]) -> None:
    for h in header:
        if h not in CANDIDATE_COLUMNS:
            candidate_fields.check_column(h)  # a scenario field the whole plan shares: refused with the reason
    unknown = [h for h in header if h not in CANDIDATE_COLUMNS and h not in FIELDS]
    if unknown:
        guess = catalog.closest(unknown[0], list(CANDIDATE_COLUMNS))
        hint = f" (did you mean '{guess}'?)" if guess else ""
        raise InputError(f"CANDIDATES: unknown column '{_shown(unknown[0])}'{hint}; known: "
                         f"{', '.join(CANDIDATE_COLUMNS)}, and the scenario fields "
                         f"{', '.join((*candidate_fields.PER_CANDIDATE, *candidate_fields.MEASURED_AT))}")
    if len(set(header)) != len(header):
        raise InputError("CANDIDATES: duplicate columns")


CANDIDATES_TABLE = Columns(_check_candidate_columns, frozenset(CANDIDATE_COLUMNS) - CANDIDATE_TEXT_COLUMNS)
"""A CANDIDATES file's columns: :data:`CANDIDATE_COLUMNS` and the scenario fields a candidate may set."""


def _as_bytes(data: bytes | str) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def _cell_text(value: Any) -> str:
    """A cell as the text the planner's parsers take ('' for empty); a whole number stored as a float is its
    integer's text (a JSON or Parquet ``8`` is ``8``, not ``8.0``).
    """
    if values.is_empty(value):
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return str(value)


class InvalidPlanRow(ValueError):
    """The chosen row has a bad value (exit code 1, as for the other row commands); the message names the row."""


def read_plan_row(data: bytes | str, row: str) -> tuple[dict[str, Any], PlanSettings]:
    """One row of a scenario table (CSV, Parquet or JSON, read by the reader every command uses, row numbers and
    names as every command counts them) that may also carry the planner columns (:data:`PLAN_FIELDS`): the row's
    non-empty scenario cells and its planner settings. A note on how ``row`` was resolved is in ``_note``.
    """
    one, position, note = row_lookup.find_row(_as_bytes(data), row, columns=PLAN_TABLE)
    first = one.iloc[0].to_dict()
    name = _cell_text(first.get("name")) if "name" in one.columns else ""
    # scenario fields only: range columns (<field>_low/_high) belong to the uncertainty study
    # a planner setting that is also a session field (ttft_target_s, ttft_percentile) is the plan's on a request
    # row; a session row holds its turns to it as well
    sessions = _cell_text(first.get("workload")).strip().lower() == "sessions"
    cells = {str(k): v for k, v in first.items() if k in FIELDS and (sessions or k not in PLAN_FIELDS)
             and not values.is_empty(v) and not (isinstance(v, str) and not v.strip())}
    label = f"row {position + 1}" + (f" ({_shown(name)})" if name else "")
    try:
        settings = settings_from_row({k: v for k, v in first.items() if k in PLAN_FIELDS})
    except ValueError as exc:
        raise InvalidPlanRow(f"{label}: {exc}") from None
    return {**cells, "_label": label, "_note": note}, settings


def read_candidates_csv(data: bytes | str, s: Scenario) -> list[Candidate]:
    """Hardware options from a CANDIDATES table (:data:`CANDIDATE_COLUMNS`; CSV, Parquet or JSON, read by the reader
    every command uses): each row its own measured rates and prices; a catalog id fills the empty hardware figures.
    Raises InputError naming the row, the field and the value for anything it cannot use.
    """
    try:
        table = read_table(_as_bytes(data), columns=CANDIDATES_TABLE, max_rows=MAX_CANDIDATES)  # bounded plan
    except InputError as exc:
        text = str(exc)
        raise InputError(text if text.startswith("CANDIDATES") else f"CANDIDATES: {text}") from None
    out, seen = [], set()
    for i, r in enumerate(table.to_dict("records"), start=1):
        cells = {str(h): t.strip() for h, c in r.items() if (t := _cell_text(c)).strip()}
        cand = _candidate_from_cells(cells, i, s)
        if cand.name in seen:
            raise InputError(f"CANDIDATES row {i}: name '{_shown(cand.name)}' is used twice")
        seen.add(cand.name)
        out.append(cand)
    return out


def _cell_number(cells: dict[str, str], key: str, where: str, positive: bool = True) -> float:
    if key not in cells:
        return math.nan
    try:  # the value parser every file goes through: 2_5000, non-ASCII digits and the like are refused
        parsed = values.number(cells[key])
    except ValueError as exc:
        raise InputError(f"{where}: {key}: {exc}") from None
    value = math.nan if parsed is values.EMPTY else float(parsed)  # type: ignore[arg-type]
    least = MIN_RATE_TOKENS_PER_S if "tokens_per_s" in key else 0.0
    if not math.isfinite(value) or value < least or value < 0 or (positive and value == 0) or value > 1e12:
        bound = f">= {least:g}" if least else ("> 0" if positive else ">= 0")
        raise InputError(f"{where}: {key}: must be {bound} and <= 1e12, got {_shown(cells[key])}")
    return value


def _or_catalog(num: dict[str, float], rec: dict[str, Any], column: str, catalog_column: str) -> float:
    """A candidate's own figure, else its catalog accelerator's (NaN when neither)."""
    return num[column] if math.isfinite(num[column]) else record_number(rec, catalog_column)


def _size(num: dict[str, float], rec: dict[str, Any], where: str) -> tuple[int, float]:
    """Accelerators per system and the system's power [kW]: the row's, else from its accelerator's catalog record."""
    a = num["accelerators_per_system"] if math.isfinite(num["accelerators_per_system"]) else record_number(
        rec, "accelerators_per_system")
    if not math.isfinite(a) or a != int(a):
        raise InputError(f"{where}: accelerators_per_system: give a whole number (empty and no catalog id)")
    kw = num["system_power_kw"]
    if not math.isfinite(kw):
        per = num["accelerator_power_kw"]
        per = per if math.isfinite(per) else record_number(rec, "power_kw")
        kw = per * int(a) if math.isfinite(per) else record_number(rec, "system_power_kw")
    if not math.isfinite(kw):
        raise InputError(f"{where}: accelerator_power_kw: give the power (empty and no catalog id)")
    return int(a), kw


def _price_and_rent(num: dict[str, float], rec: dict[str, Any], own: str, where: str) -> tuple[float, float]:
    """An accelerator's price [USD] and rent [USD/h]: the row's, else the catalog's; what its ownership needs is
    required (a price to own, a rent to rent, the fleet's size for an existing fleet).
    """
    price = num["accelerator_price_usd"]
    price = price if math.isfinite(price) else record_number(rec, "price_usd")
    rent = num["rent_usd_per_accelerator_hour"] if math.isfinite(
        num["rent_usd_per_accelerator_hour"]) else record_number(rec, "rent_usd_per_hour")
    if own == Ownership.OWN and not math.isfinite(price):
        raise InputError(f"{where}: accelerator_price_usd: an owned candidate needs a price")
    if own == Ownership.RENT and not math.isfinite(rent):
        raise InputError(f"{where}: rent_usd_per_accelerator_hour: a rented candidate needs a rent")
    if own == Ownership.EXISTING and not math.isfinite(num["max_accelerators"]):
        raise InputError(f"{where}: max_accelerators: an existing candidate needs the fleet's size")
    return price, rent


def _kinds(cells: dict[str, str], rec: dict[str, Any], where: str) -> tuple[Cooling, str, tuple[PoolRole, ...]]:
    """The hardware's cooling, system form and the pool roles it may take: the row's, else the catalog's."""
    cooling = cells.get("accelerator_cooling") or str(rec.get("cooling") or Cooling.AIR)
    if cooling not in set(Cooling):
        raise InputError(f"{where}: accelerator_cooling: '{_shown(cooling)}' is not air, liquid or air_or_liquid")
    form = cells.get("system_form") or str(rec.get("system_form") or "server")
    if form not in get_args(SystemForm):
        raise InputError(f"{where}: system_form: '{_shown(form)}' is not server, rack or wafer")
    roles = tuple(r.strip() for r in cells.get("roles", ";".join(ROLES)).split(";") if r.strip())
    bad = [r for r in roles if r not in ROLES]
    if bad or not roles:
        raise InputError(f"{where}: roles: '{_shown(cells.get('roles', ''))}' must list aggregated, prefill, decode "
                         "separated by ';'")
    return Cooling(cooling), form, tuple(map(PoolRole, roles))


def _record(cells: dict[str, str], where: str) -> dict[str, Any]:
    """The catalog record of the row's accelerator (empty when it names none)."""
    if "accelerator" not in cells:
        return {}
    if cells["accelerator"] not in catalog.accelerator_ids():
        raise InputError(f"{where}: " + catalog.unknown_id_message("accelerator", _shown(cells["accelerator"]),
                                                                   catalog.accelerator_ids()))
    return catalog.accelerator_record(cells["accelerator"])


def _candidate_from_cells(cells: dict[str, str], i: int, s: Scenario) -> Candidate:
    """Row ``i`` of a candidates file as a :class:`Candidate` (per system), every missing figure from its catalog
    record; a message names the row, the field and the value it refuses.
    """
    name = cells.get("name", "")
    where = f"CANDIDATES row {i}" + (f" ({_shown(name)})" if name else "")
    if not name:
        raise InputError(f"{where}: name: empty; every candidate needs a name")
    own = cells.get("ownership", "")
    if own not in OWNERSHIPS:
        raise InputError(f"{where}: ownership: '{_shown(own)}' is not one of own, rent, existing")
    rec = _record(cells, where)
    changes = candidate_fields.candidate_changes(cells, where, s)
    may_be_zero = ("accelerator_price_usd", "embodied_kgco2e_per_accelerator")
    num = {k: _cell_number(cells, k, where, positive=k not in may_be_zero) for k in CANDIDATE_COLUMNS
           if k not in CANDIDATE_TEXT_COLUMNS}
    a, kw = _size(num, rec, where)
    if not math.isfinite(num["output_tokens_per_s_per_accelerator"]):
        raise InputError(f"{where}: output_tokens_per_s_per_accelerator: the measured throughput is required")
    price, rent = _price_and_rent(num, rec, own, where)
    cooling, form, roles = _kinds(cells, rec, where)
    rep = num["accelerators_per_replica"]
    return whole_replicas(Candidate(
        name=name, ownership=Ownership(own), accelerator=cells.get("accelerator", ""),
        family=cells.get("family") or str(rec.get("family") or "default"), accelerators_per_system=a,
        system_power_kw=kw, system_rack_units=num["system_rack_units"] if math.isfinite(
            num["system_rack_units"]) else record_number(rec, "system_rack_units"), rack_scale=form == "rack",
        hardware_cooling=cooling,
        price_usd_per_system=(price * a if own == Ownership.OWN else (price * a if math.isfinite(price) else 0.0)
                              if own == Ownership.EXISTING else 0.0),
        rent_usd_per_system_hour=rent * a if math.isfinite(rent) else math.nan,
        reserved_rent_usd_per_system_hour=_or_catalog(num, rec, "reserved_rent_usd_per_accelerator_hour",
                                                      "reserved_rent_usd_per_hour") * a,
        spot_rent_usd_per_system_hour=_or_catalog(num, rec, "spot_rent_usd_per_accelerator_hour",
                                                  "spot_rent_usd_per_hour") * a,
        embodied_kgco2e_per_system=_or_catalog(num, rec, "embodied_kgco2e_per_accelerator", "embodied_kgco2e") * a,
        input_tokens_per_s_per_system=num["input_tokens_per_s_per_accelerator"] * a,
        output_tokens_per_s_per_system=num["output_tokens_per_s_per_accelerator"] * a,
        output_tokens_per_s_per_user=num["output_tokens_per_s_per_user"],
        accelerators_per_replica=int(rep) if math.isfinite(rep) else a,
        max_systems=float(int(num["max_accelerators"]) // a) if own == Ownership.EXISTING else math.inf,
        roles=roles,
        changes=changes))


def frontier_choice(frontier: str) -> FrontierChoice:
    """``frontier`` as a :class:`FrontierChoice`; InputError naming the field and the value when it is none.

    >>> frontier_choice("both") is FrontierChoice.BOTH
    True
    >>> frontier_choice("cabron")
    Traceback (most recent call last):
    ...
    economics.schema.validation.InputError: frontier: 'cabron' is not one of none, speed, site, both, carbon, all
    """
    try:
        return FrontierChoice(frontier)
    except ValueError:
        raise InputError(f"frontier: '{_shown(frontier)}' is not one of {', '.join(FrontierChoice)}") from None


def plan_from_files(data: bytes | str, row: str, candidates_data: bytes | str | None = None,
                    accelerators: list[str] | None = None, frontier: str = FrontierChoice.NONE,
                    curves_sha256: str = "", odds: tuple[int, int] | None = None) -> dict[str, Any]:
    """The ``plan`` command as a function: the JSON-ready plan (and frontiers) of one row (its throughput from the
    curve file ``curves_sha256`` names where the row names none); with ``odds`` = (samples, seed) its odds too
    (:func:`economics.studies.plan_odds.plan_odds`: ``odds``, ``odds_mixes``, ``odds_drivers``). Raises InputError.
    """
    cells, settings = read_plan_row(data, row)
    label, note = cells.pop("_label"), cells.pop("_note")
    if note:
        print(values.escape_for_terminal(note), file=sys.stderr)
    if curves_sha256 and not cells.get("curves_sha256"):
        cells["curves_sha256"] = curves_sha256
    try:
        s = as_scenario(cells)
    except ScenarioError as exc:
        raise InvalidPlanRow(f"{label}: {exc}") from None
    try:
        cands = None if candidates_data is None else read_candidates_csv(candidates_data, s)
        ids = accelerators or None
        unknown = [a for a in ids or [] if a not in catalog.accelerator_ids()]
        if unknown:
            raise InputError(catalog.unknown_id_message("--accelerators", _shown(unknown[0]),
                                                        catalog.accelerator_ids()))
        result = plan(s, settings, cands, ids)
        out = result.to_dict()
        if odds is not None and result.feasible:
            found = plan_odds.plan_odds(s, settings, cands if cands is not None else catalog_candidates(s, ids)[0],
                                        result, *odds)
            out.update(odds=found.summary(), odds_mixes=records(found.table), odds_drivers=records(found.drivers))
            print(values.escape_for_terminal(f"note: {found.headline()}"), file=sys.stderr)
        elif odds is not None:
            print("note: no odds: there is no feasible plan to draw them of", file=sys.stderr)
        choice = frontier_choice(frontier)
        if choice.draws(FrontierChoice.SPEED):
            out["frontier_speed"] = records(frontier_speed(s, settings, candidates=cands, accelerators=ids))
        if choice.draws(FrontierChoice.SITE):
            out["frontier_site"] = records(frontier_site(s, settings, candidates=cands, accelerators=ids))
        if choice.draws(FrontierChoice.CARBON):
            out["frontier_carbon"] = records(frontier_carbon(s, settings, candidates=cands, accelerators=ids))
    except (ScenarioError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(str(exc)) from None
    return out


def plan_csv_text(out: dict[str, Any]) -> str:
    """The plan as CSV sections (summary, plan, constraints, setting costs, hours, frontiers), each under a '# name'
    line.
    """
    parts = ["# summary\n" + to_csv_text(pd.DataFrame([{"feasible": out["feasible"],
                                                         "infeasible_reason": out["infeasible_reason"],
                                                         **out["summary"]}]))]
    if "odds" in out:
        parts.append("# odds\n" + to_csv_text(pd.DataFrame([out["odds"]])))
    for key in ("plan", "constraints", "setting_costs", "hours", "frontier_speed", "frontier_site", "frontier_carbon",
                "odds_mixes", "odds_drivers"):
        if key in out:
            parts.append(f"# {key}\n" + to_csv_text(pd.DataFrame(out[key])))
    return "\n".join(parts)


@contextlib.contextmanager
def solver_chatter_silenced() -> Iterator[None]:
    """HiGHS occasionally prints a line from C++ straight to file descriptor 1; while the command computes, that
    descriptor points at the null device, so standard output holds only the plan (JSON or CSV) and the solver's
    chatter reaches no terminal (the plan's own messages go to stderr, descriptor 2).
    """
    sys.stdout.flush()
    try:
        saved = os.dup(1)
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:  # no real descriptor (an embedding host): nothing to redirect
        yield
        return
    try:
        os.dup2(null, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)
