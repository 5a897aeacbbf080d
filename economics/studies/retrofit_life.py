"""The fleet's life in the decode study: keep the existing fleet N years, then replace it (the refresh).

The refresh joins two options :func:`economics.studies.retrofit.analyse` already evaluated: the existing fleet as it
is (``status quo``) for years 1 .. N, and the ``new generation`` fleet (sized for the last year's demand, bought at
once) for years N + 1 .. T, bought at the start of year N + 1 (t = N) at the scenario's price (the study has no
hardware price curve: the then price is today's) with its liquid retrofit, and resold at the horizon at
``residual_value_fraction`` of its price. The existing fleet is retired when replaced with no resale, as in the
``new generation`` option (its purchase is sunk). N = 0 is the ``new generation`` option; N = T keeps the fleet to
the horizon (the status quo, NPV 0). Each N's NPV against the status quo is one row of :func:`refresh`; the best
year is the N with the highest.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from economics.domain.finance import npv_usd
from economics.schema.scenario import Scenario
from economics.studies.retrofit import OptionKind, RetrofitResult
from economics.studies.retrofit_cash import Floats, refresh_net_t_usd

REPLACEMENT = OptionKind.NEW_GENERATION
"""The option whose fleet replaces the existing one."""
REFRESH_COLUMNS = ("kept_years", "capex_usd", "residual_value_usd", "npv_vs_status_quo_usd",
                   "best")
"""Columns of the refresh table: the N years the fleet is kept (replaced at t = N, the start of year N + 1); what is
bought then and resold at the horizon; the NPV against the status quo; whether this N has the highest NPV."""


def refresh(result: RetrofitResult, s: Scenario) -> pd.DataFrame:
    """NPV against the status quo of keeping the existing fleet N years and then replacing it by the ``new
    generation`` fleet, for N = 0 .. T (see the module docstring), columns :data:`REFRESH_COLUMNS`.

    Empty when the study has no ``new generation`` option (no ``new_accelerator``) or it is not feasible.
    """
    new, keep = result.row(REPLACEMENT), result.row(OptionKind.STATUS_QUO)
    if new is None or keep is None or not new["feasible"] or not keep["feasible"]:
        return pd.DataFrame(columns=list(REFRESH_COLUMNS))
    flows = result.cashflows
    keep_f = flows[flows["option"] == OptionKind.STATUS_QUO].reset_index(drop=True)
    new_f = flows[flows["option"] == REPLACEMENT].reset_index(drop=True)
    ops_keep, ops_new = (_operating_y(f) for f in (keep_f, new_f))
    retrofit = float(new_f["retrofit_capex_usd"].sum())
    bought = float(new_f["capex_usd"].sum()) - retrofit
    base = keep_f["net_usd"].to_numpy(dtype=float)
    rows = []
    for n in range(s.horizon_years + 1):
        net = refresh_net_t_usd(ops_keep, ops_new, bought, retrofit, n, s.residual_value_fraction)
        replaced = n < s.horizon_years
        rows.append({"kept_years": n, "capex_usd": bought + retrofit if replaced else 0.0,
                     "residual_value_usd": bought * s.residual_value_fraction if replaced else 0.0,
                     "npv_vs_status_quo_usd": npv_usd(s.cost_of_capital, net - base)})
    out = pd.DataFrame(rows, columns=list(REFRESH_COLUMNS[:-1]))
    out["best"] = out.index == int(np.argmax(out["npv_vs_status_quo_usd"].to_numpy(dtype=float)))
    return out


def _operating_y(flows: pd.DataFrame) -> Floats:
    """Revenue less opex in years 1 .. T of an option's cash flows."""
    f = flows[flows["year"] > 0]
    return np.asarray((f["revenue_usd"] - f["opex_usd"]).to_numpy(dtype=float), dtype=float)


def best_year(table: pd.DataFrame) -> int | None:
    """The N of the refresh table with the highest NPV (None when the table is empty)."""
    best = [int(n) for n in table.loc[table["best"].astype(bool), "kept_years"]]
    return best[0] if best else None
