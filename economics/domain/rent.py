"""Rented capacity by tier: on demand, reserved for a term, or spot.

* **On demand**: the listed hourly rent.
* **Reserved**: a lower rent for a term (one or three years), owed for every hour of it whether the capacity is
  used or not; the idle hours it pays are shown, and the commitment over the term.
* **Spot**: a lower rent for capacity the provider can take back. An interrupted replica serves nothing until new
  capacity is found and the model loaded again, so a spot accelerator serves a share
  :math:`A = MTBI / (MTBI + T_{rec})` of its hours (the two-state availability of a repairable unit) and a fleet
  sized from demand needs :math:`1 / A` as many; the replacement is rented, and paid, while it loads.

The engine's fleet is held every hour of the day in every tier; how a reserved base and on-demand hours combine over
a day's demand is the planner's (:mod:`economics.studies.planner`).

References: Barlow & Proschan, *Mathematical Theory of Reliability* (1965), availability of a repairable unit;
SemiAnalysis InferenceX applies the same ``mtbi / (mtbi + recovery)`` haircut to capacity.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from economics.domain.formula import HOURS_PER_DAY, Formula


def spot_availability(mtbi_hours: ArrayLike, recovery_hours: ArrayLike) -> NDArray[np.float64]:
    r"""The share of its hours a spot replica serves.

    .. math:: A = MTBI / (MTBI + T_{rec})

    Parameters
    ----------
    mtbi_hours : mean time between interruptions [h], > 0
    recovery_hours : time an interrupted replica serves nothing (capacity found, model loaded) [h], >= 0

    >>> round(float(spot_availability(24.0, 0.5)), 6)
    0.979592
    """
    m = np.asarray(mtbi_hours, dtype=float)
    return m / (m + np.asarray(recovery_hours, dtype=float))


def reserved_idle_usd_per_day(rent_usd_per_hour: ArrayLike, utilization: ArrayLike) -> NDArray[np.float64]:
    r"""Reserved hours paid and not used in a day.

    .. math:: C_{idle} = C_{rent} \cdot 24 \cdot (1 - u)

    >>> round(float(reserved_idle_usd_per_day(10.0, 0.25)), 6)
    180.0
    """
    return np.asarray(rent_usd_per_hour, dtype=float) * HOURS_PER_DAY * (1.0 - np.asarray(utilization, dtype=float))


F = Formula
SPOT_AVAILABILITY = F("spot_availability", "-", "spot_mtbi_hours / (spot_mtbi_hours + spot_recovery_hours)",
                      note="the share of its hours a spot replica serves, between interruptions and recoveries")
RESERVED_FROM_DISCOUNT = F("reserved_rent_usd_per_accelerator_hour", "USD/h",
                           "rent_usd_per_accelerator_hour * (1 - reserved_discount)",
                           note="no reserved price in the catalog: the on-demand rent less the reserved discount")
SPOT_FROM_DISCOUNT = F("spot_rent_usd_per_accelerator_hour", "USD/h",
                       "rent_usd_per_accelerator_hour * (1 - spot_discount)",
                       note="no spot price in the catalog: the on-demand rent less the spot discount")
RENT_RESERVED = F("rent_usd_per_hour", "USD/h", "accelerators * reserved_rent_usd_per_accelerator_hour",
                  note="reserved: every hour of the term paid, used or not")
RENT_SPOT = F("rent_usd_per_hour", "USD/h", "accelerators * spot_rent_usd_per_accelerator_hour",
              note="spot: the spare accelerators for interruptions are rented too")
PEAK_LOAD_FACTOR_SPOT = F("peak_load_factor", "-", "peak_to_average * (1 + headroom) / spot_availability",
                          note="sized from demand at peak, with headroom and spare capacity for spot's interruptions")
MAIN_POOL_RATIO_SPOT = F("main_pool_capacity_ratio", "-",
                         "accelerators * spot_availability * SECONDS_PER_DAY / work_accelerator_s_per_day",
                         note="capacity of the pool while serving (spot availability) / the work the average demand "
                         "needs")
DECODE_POOL_RATIO_SPOT = MAIN_POOL_RATIO_SPOT.bind(
    "decode_pool_capacity_ratio", accelerators="decode_accelerators",
    work_accelerator_s_per_day="decode_work_accelerator_s_per_day")
RESERVED_IDLE = F("reserved_idle_usd_per_day", "USD/day", "rent_usd_per_hour * HOURS_PER_DAY * (1 - utilization)",
                  note="reserved hours paid and not used")
RESERVED_IDLE_TWO_POOLS = F("reserved_idle_usd_per_day", "USD/day",
                            "prefill_rent_usd_per_hour * HOURS_PER_DAY * (1 - utilization)"
                            " + decode_rent_usd_per_hour * HOURS_PER_DAY * (1 - decode_utilization)",
                            note="reserved hours paid and not used, both pools")
RESERVED_COMMITMENT = F("reserved_commitment_usd", "USD", "rent_usd_per_hour * HOURS_PER_YEAR * reserved_term_years",
                        note="the term's rent, owed whether the capacity is used or not")
