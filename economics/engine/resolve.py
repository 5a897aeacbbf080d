"""Resolve: the last step that reads the catalogs. Validated scenario columns in, the engine's working record out.

Adds what the stages need beyond the scenario's fields: KV-cache bytes per token from the model's architecture,
the decode hardware's system form and height, the PUE and rack-power defaults by cooling, and the row masks
(owned, disaggregated, sized, ...). After this, the computation reads no file.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from economics import catalog
from economics.domain import capacity
from economics.domain.architecture import kv_cache_bytes_per_token_gqa, kv_cache_bytes_per_token_mla
from economics.domain.explain import Trace
from economics.domain.finance import straight_line
from economics.domain.precision import bytes_per_value, kv_precision, split_precision
from economics.domain.revenue import PREFILL_ESTIMATE
from economics.engine.hours import hourly_columns
from economics.engine.sessions import session_rows
from economics.engine.stages import Columns, _any, fill_nan
from economics.schema.outputs import RowWarning
from economics.schema.scenario import FIELDS, Ownership


def kv_bytes_per_token(model_ids: Any, precision: Any, kv_cache_precision: Any) -> Any:
    """KV-cache bytes per token of context of each model at its KV precision
    (:func:`economics.domain.precision.kv_precision`: the compute's, FP8 for FP4), from its architecture:
    :func:`~economics.domain.architecture.kv_cache_bytes_per_token_gqa` over the full-attention layers, or
    :func:`~economics.domain.architecture.kv_cache_bytes_per_token_mla`; NaN without a model. The roofline sizes its
    cache with the same two formulas and the same precision.

    >>> float(kv_bytes_per_token(np.array(["llama-3.1-70b"]), np.array(["bf16"]), np.array(["fp8"]))[0])
    163840.0
    >>> float(kv_bytes_per_token(np.array(["llama-3.1-70b"]), np.array(["fp4"]), np.array([""]))[0])  # FP8 KV
    163840.0
    """
    b = bytes_per_value(kv_precision(precision, kv_cache_precision))
    attention, layers, rank, rope, full, heads, dim = catalog.model_columns(model_ids, (  # the ids looked up once
        "attention", "layers", "kv_lora_rank", "qk_rope_head_dim", "full_attention_layers", "kv_heads", "head_dim"))
    return np.where(np.asarray(attention == "mla", dtype=bool), kv_cache_bytes_per_token_mla(layers, rank, rope, b),
                    kv_cache_bytes_per_token_gqa(full, heads, dim, b))


def _precisions(c: dict[str, Any]) -> tuple[Any, Any]:
    """Each row's weight and compute precision (:func:`~economics.domain.precision.split_precision`)."""
    return split_precision(c["precision"], c.get("weight_precision"), c.get("compute_precision"))


def resolve(c: dict[str, Any], trace: Trace | None = None) -> Columns:
    """The working record of the stages for validated, catalog-filled columns ``c`` (not modified)."""
    v = dict(c)
    n = len(v["ownership"])
    dis = np.asarray(v["decode_accelerator"] != "", dtype=bool)
    sessions = session_rows(v)
    if _any(dis) or _any(sessions):  # only a decode pool or a session needs the KV size: most rows skip it
        v["kv_bytes_per_token"] = kv_bytes_per_token(v["model"], _precisions(v)[1], v["kv_cache_precision"])
    if _any(sessions):  # the weights a session's HBM tier is left after, and the replica they are spread over
        v["model_total_params_b"] = catalog.model_column(v["model"], "total_params_b")
        v["bytes_per_param"] = bytes_per_value(_precisions(v)[0])
        v["kv_replica_accelerators"] = np.asarray(v["accelerators_per_replica"], dtype=float)
    if _any(dis):  # only a decode pool needs these lookups: a million aggregated rows skip them
        v["decode_system_form"] = catalog.accelerator_column(v["decode_accelerator"], "system_form", "")
        v["decode_system_rack_units"] = catalog.accelerator_column(v["decode_accelerator"], "system_rack_units",
                                                                   np.nan)
    for name, parameter in (("pue_air", "pue_air"), ("pue_liquid", "pue_liquid"),
                            ("rack_power_kw_air", "rack_power_kw_air_containment"),
                            ("rack_power_kw_liquid", "rack_power_kw_liquid")):
        v[name] = np.full(n, catalog.default_value(parameter))
    for name in ("accelerators_per_system", "accelerators_per_replica", "decode_accelerators_per_system"):
        v[name] = fill_nan(v[name], 1.0)
    for name in ("decode_accelerator_price_usd", "decode_accelerator_power_kw", "decode_rent_usd_per_accelerator_hour",
                 "decode_output_tokens_per_s_per_accelerator"):
        v[name] = fill_nan(v[name], 0.0)
    if PREFILL_ESTIMATE not in v:  # columns that did not pass the throughput step (a variant, a study's copy)
        v[PREFILL_ESTIMATE] = np.full(n, np.nan)
    x = Columns(v, trace)
    x.own = v["ownership"] == Ownership.OWN
    x.dis = dis
    x.any_dis = _any(x.dis)
    x.has_p = ~np.isnan(v["input_tokens_per_s_per_accelerator"])
    x.sized = np.isnan(v["accelerator_count"])
    x.pays_energy = x.own | ~v["rent_includes_energy"].astype(bool)
    x.in_facility = x.pays_energy
    x.zero_rate = straight_line(v["cost_of_capital"])
    x.has_link = x.dis & ~np.isnan(v["kv_link_gb_per_s"])
    x.sessions = sessions
    _tiers_and_hours(x)
    return x


def _tiers_and_hours(x: Columns) -> None:
    """The rent tier of each rented row, and the rows whose prices or grid intensity change by the hour."""
    v = x.v
    tier = _as_compared(v["rent_tier"])
    x.reserved = ~x.own & (tier == "reserved")
    x.spot = ~x.own & (tier == "spot")
    _unused_tier_inputs(x, tier)
    x.tou = _as_compared(v["electricity_tariff"]) != ""
    hourly_carbon = _as_compared(v["grid_carbon_by_hour"]) != ""
    x.has_carbon = ~np.isnan(np.asarray(v["grid_carbon_g_per_kwh"], dtype=float)) | hourly_carbon
    x.carbon_by_hour = hourly_carbon
    x.carbon_priced = x.has_carbon & (np.asarray(v["carbon_usd_per_tonne"], dtype=float) > 0)
    x.by_hour = x.tou | x.carbon_by_hour | x.carbon_priced
    if _any(x.by_hour):
        hourly_columns(v, x.n)
        v["energy_paid"] = x.pays_energy.astype(float)


def _as_compared(column: Any) -> Any:
    """A text column to compare with a text: a categorical (an absent field's default in a table) as it is held,
    whose comparison reads its codes and gives the same booleans as its texts would; anything else as an object
    array (a slice of a million-row table read it as one on every slice).
    """
    return column if isinstance(column, pd.Categorical) else np.asarray(column, dtype=object)


def _unused_tier_inputs(x: Columns, tier: Any) -> None:
    """Warn where a tier input is set but the row's tier does not read it (an owned row's tier, a spot setting on
    an on-demand row): nothing the user set is ignored without a word. A setting counts as set when it differs
    from its default (data/defaults.csv), since an empty cell takes the default.
    """
    v = x.v
    x.flag(RowWarning.TIER_ON_OWNED, x.own & (tier != "on_demand"))

    def changed(*names: str) -> Any:
        return np.logical_or.reduce([np.asarray(v[n], dtype=float) != float(FIELDS[n].default) for n in names])

    x.flag(RowWarning.RESERVED_SETTINGS_UNUSED, ~x.reserved & changed("reserved_discount", "reserved_term_years"))
    x.flag(RowWarning.SPOT_SETTINGS_UNUSED,
           ~x.spot & changed("spot_discount", "spot_mtbi_hours", "spot_recovery_hours"))


def _context_curve(c: dict[str, Any], pre: str) -> Any:
    """The rows whose measured per-user speed (the decode pool's where ``pre`` is ``decode_``, else the main
    pool's) falls with context along a two-point curve (:data:`economics.schema.validation.CONTEXT_CURVE`).
    """
    given = ~np.isnan(np.asarray(c["long_context_tokens"], dtype=float))
    disaggregated = np.asarray(c["decode_accelerator"] != "", dtype=bool)
    return given & (disaggregated if pre else ~disaggregated)


def per_user_throughput(c: dict[str, Any], trace: Trace | None = None) -> bool:
    """Throughput per accelerator from a measured per-user speed and the users a replica serves, where no
    per-accelerator figure is given (in place, on validated columns; recorded in ``trace``). A dataflow system's
    published per-user speed becomes a throughput only with its concurrency, over the chips its replica needs.
    Returns whether any row was filled.
    """
    filled = False
    for pre in ("", "decode_"):
        speed = c[f"{pre}measured_output_tokens_per_s_per_user"]
        rows = np.isnan(c[f"{pre}output_tokens_per_s_per_accelerator"]) & ~np.isnan(speed) & ~np.isnan(
            c[f"{pre}concurrent_users_per_replica"])
        if not rows.any():
            continue
        acc = c["decode_accelerator" if pre else "accelerator"]
        v = dict(c)
        v[f"{pre}accelerators_per_system"] = np.nan_to_num(c[f"{pre}accelerators_per_system"], nan=1.0)
        memory = catalog.accelerator_column(acc, "memory_gb", np.nan)
        v[f"{pre}chip_memory_gb"] = np.where(np.isnan(memory), catalog.accelerator_column(acc, "sram_gb", np.nan),
                                             memory)
        v["model_total_params_b"] = catalog.model_column(c["model"], "total_params_b")
        v["bytes_per_param"] = bytes_per_value(_precisions(c)[0])
        x = Columns(v, trace)
        x.n = len(speed)
        replica = f"{pre}accelerators_per_replica"
        empty = rows & np.isnan(c[replica])
        knowable = ~np.isnan(v["model_total_params_b"] * v["bytes_per_param"] * v[f"{pre}chip_memory_gb"])
        if (empty & knowable).any():
            x.calc(capacity.MODEL_WEIGHTS, empty & knowable)
        x.calc(capacity.DECODE_REPLICA_FOR_MODEL if pre else capacity.REPLICA_FOR_MODEL, empty & knowable)
        x.calc(capacity.DECODE_REPLICA_ONE_SYSTEM if pre else capacity.REPLICA_ONE_SYSTEM, empty & ~knowable)
        curve = rows & _context_curve(c, pre)
        x.calc(capacity.DECODE_STEP_AT_INPUT if pre else capacity.STEP_AT_INPUT, curve)
        x.calc(capacity.DECODE_SPEED_AT_CONTEXT if pre else capacity.SPEED_AT_CONTEXT, curve)
        x.calc(capacity.DECODE_THROUGHPUT_AT_CONTEXT if pre else capacity.THROUGHPUT_AT_CONTEXT, curve)
        x.calc(capacity.DECODE_THROUGHPUT_FROM_USERS if pre else capacity.THROUGHPUT_FROM_USERS, rows & ~curve)
        speed_at = f"{pre}output_tokens_per_s_per_user_at_context"
        c[speed_at] = np.where(curve, x.v.get(speed_at, np.nan), np.nan)
        for name in (replica, f"{pre}output_tokens_per_s_per_accelerator"):
            c[name] = np.where(rows, x.v[name], c[name])
        filled = True
    return filled
