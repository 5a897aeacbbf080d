"""Which scenario fields a planner candidate (a row of CANDIDATES.csv) may carry, and why the others may not.

A candidate is one hardware option. Some scenario fields describe the hardware or its contract and so may differ
from one candidate to the next: they are accepted and used for that candidate's costs (:data:`PER_CANDIDATE`).
Others state the conditions its measured rates were taken at (:data:`MEASURED_AT`): the plan serves one demand of one
shape, so they are accepted when they agree with the scenario and refused, with both values, when they do not.
Every other scenario field belongs to the whole plan (the site, the money, the demand) and is refused by name with
that reason (:func:`plan_wide_reason`).
"""

from __future__ import annotations

import math
from typing import Any

from economics.schema import values
from economics.schema.scenario import FIELDS, Scenario
from economics.schema.validation import InputError

PER_CANDIDATE = {
    "rent_includes_energy": "whether a rented candidate's rent already pays its energy",
    "depreciation_years": "the years the candidate's hardware is written off over",
    "maintenance_fraction_per_year": "the candidate's maintenance, a share of its price each year",
    "software_usd_per_accelerator_year": "the candidate's software licences per accelerator",
    "idle_power_fraction": "the share of full power the candidate draws idle",
}
"""Scenario fields a candidate may set for itself, with what each means for it."""
MEASURED_AT = ("model", "precision", "input_tokens_per_request", "output_tokens_per_request",
               "target_output_tokens_per_s_per_user")
"""Scenario fields that state where a candidate's rates were measured: they must be the scenario's."""
_GROUP_WORDS = {"facility": "the site", "finance": "the money (prices, rates, horizon)", "demand": "the demand",
                "workload": "the demand's requests", "pricing": "the selling prices"}


def plan_wide_reason(field: str) -> str:
    """Why a scenario field cannot be set per candidate.

    >>> plan_wide_reason("electricity_usd_per_kwh").startswith("electricity_usd_per_kwh applies to the whole plan")
    True
    """
    group = _GROUP_WORDS.get(FIELDS[field].group, f"the plan's {FIELDS[field].group} settings")
    return (f"{field} applies to the whole plan ({group}), not to one candidate: set it in the scenario row; a "
            f"candidate may set {', '.join(PER_CANDIDATE)}, and state {', '.join(MEASURED_AT)} where they agree "
            "with the scenario")


def check_column(column: str) -> None:
    """Refuse a CANDIDATES column that is a scenario field the whole plan shares (InputError with the reason)."""
    if column in FIELDS and column not in PER_CANDIDATE and column not in MEASURED_AT:
        raise InputError(f"CANDIDATES: column '{column}': {plan_wide_reason(column)}")


def candidate_changes(cells: dict[str, str], where: str, s: Scenario) -> tuple[tuple[str, Any], ...]:
    """The per-candidate scenario fields of one row, parsed and checked against the field's bounds, and the
    measured-at fields checked against the scenario's; InputError naming the row, the field and the value.
    """
    out = []
    for name in [c for c in cells if c in PER_CANDIDATE or c in MEASURED_AT]:
        spec = FIELDS[name]
        try:
            value = values.parse(spec, cells[name])
        except (values.ValueProblem, values.CellTypeError) as exc:
            raise InputError(f"{where}: {name}: {exc}") from None
        if value is values.EMPTY:
            continue
        if spec.kind.numeric and not bool(spec.within(float(value))):
            raise InputError(f"{where}: {name}: {values.shown(cells[name])} is outside its bounds "
                             f"({spec.bounds_text()})")
        if name in MEASURED_AT:
            theirs = getattr(s, name)
            same = theirs == value or (isinstance(theirs, float) and math.isclose(float(theirs), float(value)))
            if not same:
                raise InputError(f"{where}: {name}: the rates were measured at {values.shown(cells[name])}, the plan "
                                 f"serves {values.shown(theirs)}: the plan serves one demand, so a candidate's rates "
                                 "must be measured at its shape (measure at it, or leave the column empty)")
            continue
        out.append((name, value))
    return tuple(out)
