"""Rented options in the tiers a plan weighs (:mod:`economics.domain.rent`): each rented candidate once per tier of
the ``rent_tiers`` setting, so that the MILP chooses the mix per pool.

* **On demand**: a count in each hour type, at the hourly rent (the plan before tiers).
* **Reserved**: one count for the whole day, every hour paid whether used or not, at the reserved rent: a base the
  hours above it top up with on-demand or spot systems.
* **Spot**: a count in each hour type at the spot rent, each system counted for its availability
  ``mtbi / (mtbi + recovery)`` of its capacity (the spare systems its interruptions need are rented too).

A tier price a candidate lacks comes from its on-demand rent and the scenario's discount, by the engine's own
formulas (:data:`economics.domain.rent.RESERVED_FROM_DISCOUNT`, :data:`~economics.domain.rent.SPOT_FROM_DISCOUNT`).
"""

from __future__ import annotations

import math
from dataclasses import replace

from economics.domain import rent
from economics.schema.scenario import Scenario
from economics.studies.planner.candidates import Candidate
from economics.studies.planner.inputs import Ownership, PlanSettings, RentTier, plan_tiers

TIER_SUFFIX = {RentTier.ON_DEMAND: "", RentTier.RESERVED: " reserved", RentTier.SPOT: " spot"}
"""What a tier adds to a rented candidate's name (on demand keeps the name it had before tiers)."""


def tier_variants(cands: list[Candidate], s: Scenario, settings: PlanSettings) -> list[Candidate]:
    """Each rented candidate not yet given a tier once per tier the plan weighs (:func:`plan_tiers`); the others as
    they are. Candidates already given a tier are kept, so that a plan made again from the variants makes none.

    A rented option of 8 systems' worth at 20 USD/h, 35 % reserved discount:

    >>> s = Scenario(reserved_discount=0.35)
    >>> c = Candidate("gpu-rent", "rent", rent_usd_per_system_hour=20.0)
    >>> [(v.name, str(v.rent_tier), round(v.rent_usd_per_system_hour, 6))
    ...  for v in tier_variants([c], s, PlanSettings(rent_tiers="on_demand;reserved"))]
    [('gpu-rent', 'on_demand', 20.0), ('gpu-rent reserved', 'reserved', 13.0)]
    """
    out: list[Candidate] = []
    for c in cands:
        if c.ownership != Ownership.RENT or c.rent_tier is not None:
            out.append(c)
            continue
        out.extend(tier_candidate(c, tier, s) for tier in plan_tiers(s, settings))
    return out


def tier_candidate(c: Candidate, tier: RentTier, s: Scenario) -> Candidate:
    """A rented candidate in one tier: its name, tier and that tier's rent per system-hour."""
    if tier == RentTier.ON_DEMAND:
        return replace(c, rent_tier=tier)
    own = c.reserved_rent_usd_per_system_hour if tier == RentTier.RESERVED else c.spot_rent_usd_per_system_hour
    note = c.note
    if not math.isfinite(own):
        formula = rent.RESERVED_FROM_DISCOUNT if tier == RentTier.RESERVED else rent.SPOT_FROM_DISCOUNT
        discount = float(s.reserved_discount if tier == RentTier.RESERVED else s.spot_discount)
        own = float(formula.evaluate({"rent_usd_per_accelerator_hour": c.rent_usd_per_system_hour,
                                      f"{tier}_discount": discount}))
        note = (note + "; " if note else "") + f"{tier} rent: the on-demand rent less {discount:.0%}"
    return replace(c, name=c.name + TIER_SUFFIX[tier], rent_tier=tier, rent_usd_per_system_hour=own, note=note)


def tier_availability(c: Candidate, s: Scenario) -> float:
    """The share of its capacity a rented system of ``c``'s tier serves: spot's availability, else 1."""
    if c.rent_tier != RentTier.SPOT:
        return 1.0
    return float(rent.spot_availability(float(s.spot_mtbi_hours), float(s.spot_recovery_hours)))
