"""Resolve: the last step that reads the catalogs. Validated scenario columns in, the engine's working record out.

Adds what the stages need beyond the scenario's fields: KV-cache bytes per token from the model's architecture,
the decode hardware's system form and height, the PUE and rack-power defaults by cooling, and the row masks
(owned, disaggregated, sized, ...). After this, the computation reads no file.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import catalog
from .explain import Trace
from .stages import Columns


def resolve(c: dict[str, Any], trace: Trace | None = None) -> Columns:
    """The working record of the stages for validated, catalog-filled columns ``c`` (not modified)."""
    v = dict(c)
    n = len(v["ownership"])
    dis = np.asarray(v["decode_accelerator"] != "", dtype=bool)
    if dis.any():  # only a decode pool needs these lookups: a million aggregated rows skip them
        v["kv_bytes_per_token"] = catalog.kv_bytes_per_token(v["model"], v["precision"], v["kv_cache_precision"])
        v["decode_system_form"] = catalog.accelerator_column(v["decode_accelerator"], "system_form", "")
        v["decode_system_rack_units"] = catalog.accelerator_column(v["decode_accelerator"], "system_rack_units",
                                                                   np.nan)
    for name, parameter in (("pue_air", "pue_air"), ("pue_liquid", "pue_liquid"),
                            ("rack_power_kw_air", "rack_power_kw_air_containment"),
                            ("rack_power_kw_liquid", "rack_power_kw_liquid")):
        v[name] = np.full(n, catalog.default_value(parameter))
    for name in ("accelerators_per_system", "accelerators_per_replica", "decode_accelerators_per_system"):
        v[name] = np.nan_to_num(v[name], nan=1.0)
    for name in ("decode_accelerator_price_usd", "decode_accelerator_power_kw", "decode_rent_usd_per_accelerator_hour",
                 "decode_output_tokens_per_s_per_accelerator"):
        v[name] = np.nan_to_num(v[name], nan=0.0)
    x = Columns(v, trace)
    x.own = v["ownership"] == "own"
    x.dis = dis
    x.any_dis = bool(x.dis.any())
    x.has_p = ~np.isnan(v["input_tokens_per_s_per_accelerator"])
    x.sized = np.isnan(v["accelerator_count"])
    x.pays_energy = x.own | ~v["rent_includes_energy"].astype(bool)
    x.in_facility = x.pays_energy
    x.zero_rate = np.abs(v["cost_of_capital"]) < 1e-12
    x.has_link = x.dis & ~np.isnan(v["kv_link_gb_per_s"])
    return x
