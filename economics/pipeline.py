"""From resolved scenario columns to every output, column-wise.

One code path for one scenario and for a million: ``compute`` takes a dict of equal-length arrays (already
validated, catalog defaults filled, NaN where an optional field is empty) and returns a dict of output arrays.
Given a :class:`~economics.explain.Trace` it also records each step's derivation for one row, from the same
values it computes with.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from . import capacity as cap
from . import catalog, cost, fleet, revenue
from .explain import Trace
from .finance import capital_recovery_factor

Array = NDArray[Any]

# Warnings are bit flags: the per-row text is looked up per distinct combination, which keeps a million rows fast.
WARNINGS: tuple[str, ...] = (
    "average demand exceeds the fleet's capacity: served tokens are capped at capacity",
    "peak demand (peak_to_average x average) exceeds the fleet's capacity",
    "no demand given: the fleet is assumed busy all the time (utilization 1)",
    "no prefill throughput given: the output throughput is taken to include prefill, and all device time is "
    "charged to output tokens",
    "break-even utilization is above 1: not reachable at these prices",
    "no selling price given: revenue and margins are not computed",
    "throughput estimated by the roofline model (calibrated; `python -m economics calibrate` shows its error)",
    "throughput interpolated on a measured curve (see throughput_curve)",
    "the target is outside the measured range of a matching curve: no extrapolation, the roofline estimate is used",
    "the KV-cache link between the prefill and decode pools is the bottleneck (see kv_transfer_gb_per_s)",
)

OUTPUT_UNITS: dict[str, str] = {
    "accelerators": "accelerator",
    "capacity_requests_per_s_per_accelerator": "request/s",
    "work_accelerator_s_per_day": "accelerator-s/day",
    "capacity_input_tokens_per_day": "token/day",
    "capacity_output_tokens_per_day": "token/day",
    "served_input_tokens_per_day": "token/day",
    "served_cached_input_tokens_per_day": "token/day",
    "served_output_tokens_per_day": "token/day",
    "utilization": "-",
    "input_time_share": "-",
    "capital_usd_per_hour": "USD/h",
    "energy_usd_per_hour": "USD/h",
    "facility_usd_per_hour": "USD/h",
    "operations_usd_per_hour": "USD/h",
    "rent_usd_per_hour": "USD/h",
    "cost_usd_per_hour": "USD/h",
    "cost_usd_per_day": "USD/day",
    "cost_usd_per_m_tokens": "USD/M token",
    "cost_usd_per_m_input_tokens": "USD/M token",
    "cost_usd_per_m_output_tokens": "USD/M token",
    "revenue_usd_per_day": "USD/day",
    "profit_usd_per_day": "USD/day",
    "cost_profit_margin": "-",
    "gross_margin": "-",
    "break_even_utilization": "-",
    "break_even_price_usd_per_m_output_tokens": "USD/M token",
    "it_power_kw": "kW",
    "facility_power_kw": "kW",
    "average_it_power_kw": "kW",
    "energy_mwh_per_year": "MWh/year",
    "systems": "system",
    "systems_per_rack": "system",
    "racks": "rack",
    "kw_per_rack": "kW",
    "pue_effective": "-",
    "rack_power_kw_effective": "kW",
    "cooling_retrofit_usd_per_hour": "USD/h",
    "cost_usd_per_year": "USD/year",
    "tokens_per_s_per_mw": "token/s/MW",
    "joules_per_token": "J/token",
    "decode_accelerators": "accelerator",
    "decode_utilization": "-",
    "prefill_pool_cost_usd_per_hour": "USD/h",
    "decode_pool_cost_usd_per_hour": "USD/h",
    "kv_transfer_gb_per_s": "GB/s",
    "kv_transfer_mb_per_request": "MB",
}
"""Numeric outputs in the order they are reported, with their units."""

INTEGER_OUTPUTS = frozenset({"accelerators", "systems", "racks", "systems_per_rack", "decode_accelerators"})

OPTIONAL_OUTPUTS = frozenset({
    "cost_usd_per_m_input_tokens", "revenue_usd_per_day", "profit_usd_per_day", "cost_profit_margin",
    "gross_margin", "break_even_utilization", "break_even_price_usd_per_m_output_tokens", "it_power_kw",
    "facility_power_kw", "average_it_power_kw", "energy_mwh_per_year", "racks", "kw_per_rack", "systems_per_rack",
    "tokens_per_s_per_mw", "joules_per_token", "rack_power_kw_effective", "systems", "decode_accelerators",
    "decode_utilization", "prefill_pool_cost_usd_per_hour", "decode_pool_cost_usd_per_hour", "kv_transfer_gb_per_s",
    "kv_transfer_mb_per_request", "capacity_requests_per_s_per_accelerator",
})
"""Outputs that may be legitimately empty (no price given, no input tokens, power unknown for a cloud rent);
every other output must be a finite number."""


def _noop(*_args: Any, **_kwargs: Any) -> None:
    return None


def compute(c: dict[str, Array], trace: Trace | None = None) -> dict[str, Array]:
    """All outputs for resolved scenario columns ``c``; see the module docstring."""
    rec = trace.add if trace is not None else _noop
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _compute(c, rec)


def _compute(c: dict[str, Array], rec: Any) -> dict[str, Array]:
    own = c["ownership"] == "own"
    i_req, o_req, h = c["input_tokens_per_request"], c["output_tokens_per_request"], c["prefix_cache_hit_rate"]
    p_in, d_out = c["input_tokens_per_s_per_accelerator"], c["output_tokens_per_s_per_accelerator"]
    count = c["accelerator_count"]
    has_p = ~np.isnan(p_in)
    row = _row(rec)

    # --- capacity per accelerator at the request shape (fluid approximation)
    dis = np.asarray(c["decode_accelerator"] != "", dtype=bool)  # disaggregated: a decode pool of another type
    d_y = c["decode_output_tokens_per_s_per_accelerator"]
    k0 = c["decode_accelerator_count"]
    miss_req = cap.uncached_input_tokens(i_req, h)
    req_s = cap.prefill_seconds(miss_req, p_in) + np.where(dis, 0.0, cap.decode_seconds(o_req, d_out))
    # disaggregated: requests/s per prefill accelerator, capped by a given decode pool
    r_dis = np.minimum(np.where(miss_req > 0, p_in / np.where(miss_req > 0, miss_req, 1.0), np.inf),
                       np.where(np.isnan(k0), np.inf, k0 / np.maximum(count, 1.0) * d_y / o_req))
    r = np.where(dis, r_dis, 1.0 / req_s)
    traced_p = row >= 0 and bool(has_p[row])
    prefill_term = ("{input_tokens_per_request} x (1 - {prefix_cache_hit_rate})"
                    " / {input_tokens_per_s_per_accelerator} + ")
    rec("capacity_requests_per_s_per_accelerator", r, "request/s",
        "1 / (" + (prefill_term if traced_p else "")
        + "{output_tokens_per_request} / {output_tokens_per_s_per_accelerator})",
        note="" if traced_p else "no prefill throughput given: the output figure includes prefill",
        input_tokens_per_request=(i_req, "token"), prefix_cache_hit_rate=(h, ""),
        input_tokens_per_s_per_accelerator=(np.where(has_p, p_in, np.inf), "token/s"),
        output_tokens_per_request=(o_req, "token"), output_tokens_per_s_per_accelerator=(d_out, "token/s"))

    # --- demand mix: given, one side inferred from the request shape, or (no demand) the fleet's capacity
    d_in, d_outd = c["demand_input_tokens_per_day"], c["demand_output_tokens_per_day"]
    rps = c["demand_requests_per_s"]
    by_requests = np.isnan(d_in) & np.isnan(d_outd) & ~np.isnan(rps)
    d_in = np.where(by_requests, rps * cap.SECONDS_PER_DAY * i_req, d_in)
    d_outd = np.where(by_requests, rps * cap.SECONDS_PER_DAY * o_req, d_outd)
    has_in, has_out = ~np.isnan(d_in), ~np.isnan(d_outd)
    has_demand = has_in | has_out
    full_requests_per_day = np.where(has_demand, 1.0, count) * cap.SECONDS_PER_DAY * r
    dem_in = np.where(has_in, d_in, np.where(has_out, d_outd * i_req / o_req, full_requests_per_day * i_req))
    dem_out = np.where(has_out, d_outd, np.where(has_in, d_in * o_req / np.where(i_req > 0, i_req, 1.0),
                                                   full_requests_per_day * o_req))
    prefill_s = cap.prefill_seconds(cap.uncached_input_tokens(dem_in, h), p_in)
    work = prefill_s + np.where(dis, 0.0, cap.decode_seconds(dem_out, d_out))  # accelerator-s on the first pool
    work_y = np.where(dis, dem_out / np.where(dis, d_y, 1.0), 0.0)  # decode-accelerator-s on the decode pool
    rec("work_accelerator_s_per_day", work, "accelerator-s/day",
        ("{demand_input_tokens_per_day} x (1 - {prefix_cache_hit_rate}) / {input_tokens_per_s_per_accelerator} + "
         if traced_p else "") + "{demand_output_tokens_per_day} / {output_tokens_per_s_per_accelerator}",
        note="" if row < 0 or has_demand[row] else "no demand given: demand = what the fleet can serve all day",
        demand_input_tokens_per_day=(dem_in, "token/day"), prefix_cache_hit_rate=(h, ""),
        input_tokens_per_s_per_accelerator=(np.where(has_p, p_in, np.inf), "token/s"),
        demand_output_tokens_per_day=(dem_out, "token/day"), output_tokens_per_s_per_accelerator=(d_out, "token/s"))

    sized = np.isnan(count)
    per_system = np.nan_to_num(c["accelerators_per_system"], nan=1.0)
    replica = np.nan_to_num(c["accelerators_per_replica"], nan=1.0)
    needed = cap.accelerators_for_work(work, c["peak_to_average"] * (1.0 + c["headroom"]))
    whole = fleet.round_up_to_multiple(needed, replica)
    whole = np.where(c["round_to_whole_systems"].astype(bool), fleet.round_up_to_multiple(whole, per_system), whole)
    n = np.where(sized, whole, count)
    if row >= 0 and sized[row]:
        rec("accelerators", n, "accelerator",
            "ceil({work_accelerator_s_per_day} x {peak_to_average} x (1 + {headroom}) / 86,400 s/day) = {needed},"
            " rounded up to whole replicas of {accelerators_per_replica}"
            + (" and whole systems of {accelerators_per_system}" if bool(c["round_to_whole_systems"][row]) else ""),
            note="sized from demand at peak", work_accelerator_s_per_day=(work, "accelerator-s/day"),
            peak_to_average=(c["peak_to_average"], ""), headroom=(c["headroom"], ""), needed=(needed, ""),
            accelerators_per_replica=(replica, ""), accelerators_per_system=(per_system, ""))
    else:
        rec("accelerators", n, "accelerator", "{accelerator_count}", note="fixed fleet, as given",
            accelerator_count=(n, "accelerator"))

    # decode pool: as given; balanced to the prefill pool's capacity; or sized from demand with it.
    # Without any decode pool in the table its terms are scalar zeros: a million aggregated rows stay fast.
    any_dis = bool(dis.any())
    per_system_y: Any = 1.0
    k: Any = 0.0
    if any_dis:
        per_system_y = np.nan_to_num(c["decode_accelerators_per_system"], nan=1.0)
        peak_x = c["peak_to_average"] * (1.0 + c["headroom"])
        k_sized = cap.accelerators_for_work(work_y, peak_x)
        k_balanced = np.maximum(1.0, np.ceil(n * work_y / np.where(work > 0, work, 1.0) * (1.0 - 1e-12)))
        k_need = np.where(sized, k_sized, k_balanced)
        k_need = np.where(c["round_to_whole_systems"].astype(bool), fleet.round_up_to_multiple(k_need, per_system_y),
                          k_need)
        k = np.where(dis, np.where(np.isnan(k0), k_need, k0), 0.0)
    if row >= 0 and dis[row]:
        rec("decode_accelerators", k, "accelerator",
            "{decode_accelerator_count}" if not np.isnan(k0[row]) else
            "ceil({accelerators} x {decode_accelerator_s_per_day} / {work_accelerator_s_per_day})",
            note="as given" if not np.isnan(k0[row]) else "balanced: decode capacity matches the prefill pool's",
            decode_accelerator_count=(k0, ""), accelerators=(n, ""),
            decode_accelerator_s_per_day=(work_y, "accelerator-s/day"),
            work_accelerator_s_per_day=(work, "accelerator-s/day"))

    # KV caches move from the prefill pool to the decode pool: one prompt's cache per request
    avail = n * cap.SECONDS_PER_DAY
    f = cap.served_fraction(work, n)
    kv_per_request: Any = np.nan
    link_requests_per_day: Any = np.nan
    demand_requests_per_day = dem_out / o_req
    link_bound: Any = False
    u_y: Any = 0.0
    kv_gb_per_s: Any = np.full(len(dis), np.nan)
    if any_dis:
        kv_per_request = i_req * _kv_bytes_per_token(c)
        link_requests_per_day = c["kv_link_gb_per_s"] * 1e9 * cap.SECONDS_PER_DAY / np.where(
            kv_per_request > 0, kv_per_request, np.nan)
        f_decode = np.where(dis, cap.served_fraction(work_y, np.where(dis, k, 1.0)), 1.0)
        f_link = np.where(dis & ~np.isnan(link_requests_per_day),
                          np.minimum(1.0, link_requests_per_day / demand_requests_per_day), 1.0)
        link_bound = dis & (f_link < np.minimum(f, f_decode))
        f = np.minimum(np.minimum(f, f_decode), f_link)
        u_y = np.where(dis, np.minimum(1.0, f * work_y / np.where(dis, k, 1.0) / cap.SECONDS_PER_DAY), 0.0)
        kv_gb_per_s = np.where(dis, f * demand_requests_per_day * kv_per_request / 1e9 / cap.SECONDS_PER_DAY, np.nan)
    u = np.minimum(1.0, f * work / avail)
    rec("utilization", u, "", "min({work_accelerator_s_per_day}, {accelerators} x 86,400 s/day)"
        " / ({accelerators} x 86,400 s/day)", work_accelerator_s_per_day=(work, "accelerator-s/day"),
        accelerators=(n, ""))
    scale = avail / np.where(work > 0, work, np.nan)
    if any_dis:
        scale = np.minimum(scale, np.where(dis, k * cap.SECONDS_PER_DAY / np.where(work_y > 0, work_y, np.nan),
                                           np.inf))
        scale = np.minimum(scale, np.where(dis & ~np.isnan(link_requests_per_day),
                                           link_requests_per_day / demand_requests_per_day, np.inf))
    capacity_in, capacity_out = dem_in * scale, dem_out * scale
    served_in, served_out = dem_in * f, dem_out * f
    served_cached = served_in * h
    for side, served, dem in (("input", served_in, dem_in), ("output", served_out, dem_out)):
        rec(f"served_{side}_tokens_per_day", served, "token/day",
            f"{{demand_{side}_tokens_per_day}} x {{served_fraction}}",
            note="served fraction = min(1, capacity of each pool / its work" + (", KV link)" if dis[row] else ")"),
            **{f"demand_{side}_tokens_per_day": (dem, "token/day")}, served_fraction=(f, ""))
    share_in = np.where(work > 0, prefill_s / np.where(work > 0, work, 1.0), 0.0)

    # --- facility: cooling, PUE, systems, racks, site power
    needs_liquid = c["accelerator_cooling"] == "liquid"
    air_hall = c["facility_cooling"] == "air"
    retrofit = needs_liquid & air_hall & c["allow_liquid_retrofit"].astype(bool)
    effective_cooling = np.where(retrofit, "liquid", c["facility_cooling"])
    pue_by_cooling = fleet.facility_pue(effective_cooling, catalog.default_value("pue_air"),
                                        catalog.default_value("pue_liquid"), c["liquid_cooling_share"])
    pue = np.where(np.isnan(c["pue"]), pue_by_cooling, c["pue"])
    rec("pue", pue, "", "{pue}", note="follows the facility's cooling (defaults.csv pue_air / pue_liquid)"
        if row >= 0 and np.isnan(c["pue"][row]) else "as given", pue=(pue, ""))
    liquid_racks = (effective_cooling == "liquid") | ((effective_cooling == "hybrid") & needs_liquid)
    rack_kw = np.where(np.isnan(c["rack_power_kw"]),
                       np.where(liquid_racks, catalog.default_value("rack_power_kw_liquid"),
                                catalog.default_value("rack_power_kw_air_containment")), c["rack_power_kw"])
    system_kw = np.where(np.isnan(c["system_power_kw"]), c["accelerator_power_kw"] * per_system, c["system_power_kw"])
    systems = fleet.systems_needed(n, per_system)
    per_rack = fleet.systems_per_rack(system_kw, rack_kw, c["system_rack_units"], c["rack_units_per_rack"],
                                      c["system_form"] == "rack")
    racks = fleet.racks_needed(systems, per_rack)
    # the decode pool's systems and racks, in the same facility
    needs_liquid_y: Any = False
    retrofit_y: Any = False
    per_rack_y: Any = 1.0
    systems_y: Any = 0.0
    racks_y: Any = 0.0
    it_kw_y: Any = 0.0
    if any_dis:
        needs_liquid_y = dis & (c["decode_accelerator_cooling"] == "liquid")
        retrofit_y = needs_liquid_y & air_hall & c["allow_liquid_retrofit"].astype(bool)
        liquid_racks_y = ((effective_cooling == "liquid") | retrofit_y
                          | ((effective_cooling == "hybrid") & needs_liquid_y))
        rack_kw_y = np.where(np.isnan(c["rack_power_kw"]),
                             np.where(liquid_racks_y, catalog.default_value("rack_power_kw_liquid"),
                                      catalog.default_value("rack_power_kw_air_containment")), c["rack_power_kw"])
        system_kw_y = np.where(np.isnan(c["decode_system_power_kw"]),
                               c["decode_accelerator_power_kw"] * per_system_y, c["decode_system_power_kw"])
        systems_y = np.where(dis, fleet.systems_needed(k, per_system_y), 0.0)
        form_y = _catalog_lookup(c["decode_accelerator"], "system_form", "")
        units_y = _catalog_lookup(c["decode_accelerator"], "system_rack_units", np.nan)
        per_rack_y = np.where(dis, fleet.systems_per_rack(system_kw_y, rack_kw_y, units_y, c["rack_units_per_rack"],
                                                          form_y == "rack"), 1.0)
        racks_y = np.where(dis, fleet.racks_needed(systems_y, per_rack_y), 0.0)
        it_kw_y = np.where(dis, k * c["decode_accelerator_power_kw"], 0.0)
    it_kw = n * c["accelerator_power_kw"] + it_kw_y
    fac_kw = it_kw * pue
    in_facility = own | ~c["rent_includes_energy"].astype(bool)
    cooling_bad = in_facility & ((needs_liquid & air_hall & ~retrofit) | (needs_liquid_y & air_hall & ~retrofit_y))
    rack_bad = in_facility & (~(per_rack >= 1) | (dis & ~(per_rack_y >= 1)))
    if any_dis:
        racks = racks + racks_y
        systems = systems + systems_y
    site_bad = in_facility & ~np.isnan(c["site_power_mw"]) & (fac_kw > c["site_power_mw"] * 1000.0 * (1 + 1e-12))
    retrofit_it_kw = np.where(retrofit, n * c["accelerator_power_kw"], 0.0) + (
        np.where(retrofit_y, it_kw_y, 0.0) if any_dis else 0.0)
    retrofit_capex = np.where(in_facility, fleet.retrofit_capex_usd(retrofit_it_kw, c["liquid_retrofit_usd_per_mw"]),
                              0.0)
    retrofit_h = cost.capital_usd_per_hour(retrofit_capex, c["cost_of_capital"], c["facility_depreciation_years"])
    if row >= 0:
        rec("systems", systems, "system", "ceil({accelerators} / {accelerators_per_system})", accelerators=(n, ""),
            accelerators_per_system=(per_system, ""))
        rec("systems_per_rack", per_rack, "system", "min(floor({rack_power_kw} / {system_power_kw}), floor("
            "{rack_units_per_rack} / {system_rack_units}))", note="a rack-scale system fills one rack"
            if c["system_form"][row] == "rack" else "", rack_power_kw=(rack_kw, "kW"),
            system_power_kw=(system_kw, "kW"), rack_units_per_rack=(c["rack_units_per_rack"], "U"),
            system_rack_units=(c["system_rack_units"], "U"))
        rec("racks", racks, "rack", "ceil({systems} / {systems_per_rack})", systems=(systems, ""),
            systems_per_rack=(per_rack, ""))
        rec("facility_power_kw", fac_kw, "kW", "{accelerators} x {accelerator_power_kw} x {pue}",
            accelerators=(n, ""), accelerator_power_kw=(c["accelerator_power_kw"], "kW"), pue=(pue, ""))
        if retrofit[row] or (any_dis and retrofit_y[row]):
            rec("cooling_retrofit_usd_per_hour", retrofit_h, "USD/h",
                "{retrofitted_it_power_kw} / 1,000 x {liquid_retrofit_usd_per_mw} x CRF({cost_of_capital}, "
                "{facility_depreciation_years}) / 8,760 h/year", retrofitted_it_power_kw=(retrofit_it_kw, "kW"),
                liquid_retrofit_usd_per_mw=(c["liquid_retrofit_usd_per_mw"], "USD/MW"),
                cost_of_capital=(c["cost_of_capital"], "1/year"),
                facility_depreciation_years=(c["facility_depreciation_years"], "year"))

    # --- hourly cost of the fleet
    avg_kw = cost.average_power_kw(c["accelerator_power_kw"], u, c["idle_power_fraction"])
    pays_energy = own | ~c["rent_includes_energy"].astype(bool)
    crf = capital_recovery_factor(c["cost_of_capital"], c["depreciation_years"])
    capital_h = np.where(own, n * cost.capital_usd_per_hour(c["accelerator_price_usd"], c["cost_of_capital"],
                                                            c["depreciation_years"]), 0.0)
    energy_h = np.where(pays_energy, n * cost.energy_usd_per_hour(avg_kw, pue, c["electricity_usd_per_kwh"]),
                        0.0)
    facility_h = np.where(own, n * cost.facility_usd_per_hour(
        c["accelerator_power_kw"], c["colocation_usd_per_kw_month"], c["facility_capex_usd_per_kw"],
        c["cost_of_capital"], c["facility_depreciation_years"]), 0.0)
    ops_h = np.where(own, n * cost.operations_usd_per_hour(
        c["accelerator_price_usd"], c["maintenance_fraction_per_year"], c["software_usd_per_accelerator_year"]), 0.0)
    rent_h = np.where(own, 0.0, n * c["rent_usd_per_accelerator_hour"])
    prefill_pool_h = capital_h + energy_h + facility_h + ops_h + rent_h
    # the decode pool: the same cost model with its own hardware figures and utilization
    avg_kw_y: Any = 0.0
    cap_y: Any = 0.0
    energy_y: Any = 0.0
    facility_y: Any = 0.0
    ops_y: Any = 0.0
    rent_y: Any = 0.0
    if any_dis:
        avg_kw_y = cost.average_power_kw(np.nan_to_num(c["decode_accelerator_power_kw"]), u_y,
                                         c["idle_power_fraction"])
        cap_y = np.where(own & dis, k * cost.capital_usd_per_hour(np.nan_to_num(c["decode_accelerator_price_usd"]),
                                                                  c["cost_of_capital"], c["depreciation_years"]), 0.0)
        energy_y = np.where(pays_energy & dis, k * cost.energy_usd_per_hour(avg_kw_y, pue,
                                                                            c["electricity_usd_per_kwh"]), 0.0)
        facility_y = np.where(own & dis, k * cost.facility_usd_per_hour(
            np.nan_to_num(c["decode_accelerator_power_kw"]), c["colocation_usd_per_kw_month"],
            c["facility_capex_usd_per_kw"], c["cost_of_capital"], c["facility_depreciation_years"]), 0.0)
        ops_y = np.where(own & dis, k * cost.operations_usd_per_hour(
            np.nan_to_num(c["decode_accelerator_price_usd"]), c["maintenance_fraction_per_year"],
            c["software_usd_per_accelerator_year"]), 0.0)
        rent_y = np.where(~own & dis, k * np.nan_to_num(c["decode_rent_usd_per_accelerator_hour"]), 0.0)
    decode_pool_h = cap_y + energy_y + facility_y + ops_y + rent_y
    if any_dis:
        capital_h, energy_h, facility_h = capital_h + cap_y, energy_h + energy_y, facility_h + facility_y
        ops_h, rent_h = ops_h + ops_y, rent_h + rent_y
    total_h = capital_h + energy_h + facility_h + ops_h + rent_h + retrofit_h
    if row >= 0 and dis[row]:
        rec("decode_pool_cost_usd_per_hour", decode_pool_h, "USD/h",
            "{decode_accelerators} x per-accelerator cost of {decode_accelerator} at {decode_utilization} utilization",
            note="capital, energy, facility, operations or rent, as for the prefill pool",
            decode_accelerators=(k, ""), decode_accelerator=(np.zeros(len(k)), str(c["decode_accelerator"][row])),
            decode_utilization=(u_y, ""))
    # with a decode pool, input tokens carry the prefill pool's cost and output tokens the decode pool's
    if any_dis:
        share_in = np.where(dis, prefill_pool_h / np.where(prefill_pool_h + decode_pool_h > 0,
                                                           prefill_pool_h + decode_pool_h, 1.0), share_in)

    if row >= 0 and own[row]:
        rec("capital_usd_per_hour", capital_h, "USD/h",
            "{accelerators} x {accelerator_price_usd} x CRF({cost_of_capital}, {depreciation_years}) {crf}"
            " / 8,760 h/year", accelerators=(n, ""), accelerator_price_usd=(c["accelerator_price_usd"], "USD"),
            cost_of_capital=(c["cost_of_capital"], "1/year"), depreciation_years=(c["depreciation_years"], "year"),
            crf=(crf, "1/year"))
    if row >= 0 and pays_energy[row]:
        rec("average_power_kw_per_accelerator", avg_kw, "kW",
            "{accelerator_power_kw} x ({idle_power_fraction} + (1 - {idle_power_fraction}) x {utilization})",
            accelerator_power_kw=(c["accelerator_power_kw"], "kW"), idle_power_fraction=(c["idle_power_fraction"], ""),
            utilization=(u, ""))
        rec("energy_usd_per_hour", energy_h, "USD/h",
            "{accelerators} x {average_power_kw} x {pue} x {electricity_usd_per_kwh}", accelerators=(n, ""),
            average_power_kw=(avg_kw, "kW"), pue=(pue, ""),
            electricity_usd_per_kwh=(c["electricity_usd_per_kwh"], "USD/kWh"))
    if row >= 0 and own[row]:
        rec("facility_usd_per_hour", facility_h, "USD/h",
            "{accelerators} x {accelerator_power_kw} x ({colocation_usd_per_kw_month} x 12 / 8,760 h/year"
            " + {facility_capex_usd_per_kw} x CRF({cost_of_capital}, {facility_depreciation_years}) / 8,760 h/year)",
            accelerators=(n, ""), accelerator_power_kw=(c["accelerator_power_kw"], "kW"),
            colocation_usd_per_kw_month=(c["colocation_usd_per_kw_month"], "USD/(kW month)"),
            facility_capex_usd_per_kw=(c["facility_capex_usd_per_kw"], "USD/kW"),
            cost_of_capital=(c["cost_of_capital"], "1/year"),
            facility_depreciation_years=(c["facility_depreciation_years"], "year"))
        rec("operations_usd_per_hour", ops_h, "USD/h",
            "{accelerators} x ({accelerator_price_usd} x {maintenance_fraction_per_year}"
            " + {software_usd_per_accelerator_year}) / 8,760 h/year", accelerators=(n, ""),
            accelerator_price_usd=(c["accelerator_price_usd"], "USD"),
            maintenance_fraction_per_year=(c["maintenance_fraction_per_year"], "1/year"),
            software_usd_per_accelerator_year=(c["software_usd_per_accelerator_year"], "USD/year"))
        rec("cost_usd_per_hour", total_h, "USD/h",
            "{capital_usd_per_hour} + {energy_usd_per_hour} + {facility_usd_per_hour} + {operations_usd_per_hour}"
            " + {cooling_retrofit_usd_per_hour}",
            capital_usd_per_hour=(capital_h, "USD/h"), energy_usd_per_hour=(energy_h, "USD/h"),
            facility_usd_per_hour=(facility_h, "USD/h"), operations_usd_per_hour=(ops_h, "USD/h"),
            cooling_retrofit_usd_per_hour=(retrofit_h, "USD/h"))
    elif row >= 0:
        rec("rent_usd_per_hour", rent_h, "USD/h", "{accelerators} x {rent_usd_per_accelerator_hour}",
            accelerators=(n, ""), rent_usd_per_accelerator_hour=(c["rent_usd_per_accelerator_hour"], "USD/h"))
        rec("cost_usd_per_hour", total_h, "USD/h", "{rent_usd_per_hour} + {energy_usd_per_hour}",
            rent_usd_per_hour=(rent_h, "USD/h"), energy_usd_per_hour=(energy_h, "USD/h"))
    total_d = total_h * 24.0
    rec("cost_usd_per_day", total_d, "USD/day", "{cost_usd_per_hour} x 24 h/day", cost_usd_per_hour=(total_h, "USD/h"))

    # --- unit costs: all tokens, and input/output by device-time share
    tokens = served_in + served_out
    per_m = revenue.usd_per_m_tokens(total_d, tokens)
    rec("cost_usd_per_m_tokens", per_m, "USD/M token",
        "{cost_usd_per_day} / ({served_input_tokens_per_day} + {served_output_tokens_per_day}) x 1,000,000",
        cost_usd_per_day=(total_d, "USD/day"), served_input_tokens_per_day=(served_in, "token/day"),
        served_output_tokens_per_day=(served_out, "token/day"))
    per_m_in = revenue.usd_per_m_tokens(total_d * share_in, served_in)
    per_m_out = revenue.usd_per_m_tokens(total_d * (1.0 - share_in), served_out)
    rec("input_time_share", share_in, "", "{prefill_accelerator_s_per_day} / {work_accelerator_s_per_day}",
        note="" if traced_p else "no prefill throughput given: prefill time is inside the decode figure",
        prefill_accelerator_s_per_day=(prefill_s, "accelerator-s/day"),
        work_accelerator_s_per_day=(work, "accelerator-s/day"))
    rec("cost_usd_per_m_input_tokens", per_m_in, "USD/M token",
        "{cost_usd_per_day} x {input_time_share} / {served_input_tokens_per_day} x 1,000,000",
        cost_usd_per_day=(total_d, "USD/day"), input_time_share=(share_in, ""),
        served_input_tokens_per_day=(served_in, "token/day"))
    rec("cost_usd_per_m_output_tokens", per_m_out, "USD/M token",
        "{cost_usd_per_day} x (1 - {input_time_share}) / {served_output_tokens_per_day} x 1,000,000",
        cost_usd_per_day=(total_d, "USD/day"), input_time_share=(share_in, ""),
        served_output_tokens_per_day=(served_out, "token/day"))

    # --- revenue, margins, break-even
    pi, pc, po = (c["price_usd_per_m_input_tokens"], c["price_usd_per_m_cached_input_tokens"],
                  c["price_usd_per_m_output_tokens"])
    has_price = ~np.isnan(pi) | ~np.isnan(po)
    pi0, po0 = np.nan_to_num(pi), np.nan_to_num(po)
    pc0 = np.where(np.isnan(pc), pi0, pc)
    rev_in = revenue.revenue_usd(served_in, 0.0, h, pi0, pc0, 0.0)
    rev = np.where(has_price, rev_in + revenue.revenue_usd(0.0, served_out, 0.0, 0.0, 0.0, po0), np.nan)
    rec("revenue_usd_per_day", rev, "USD/day",
        "({served_input_tokens_per_day} x (1 - {prefix_cache_hit_rate}) x {price_usd_per_m_input_tokens}"
        " + {served_input_tokens_per_day} x {prefix_cache_hit_rate} x {price_usd_per_m_cached_input_tokens}"
        " + {served_output_tokens_per_day} x {price_usd_per_m_output_tokens}) / 1,000,000",
        served_input_tokens_per_day=(served_in, "token/day"), prefix_cache_hit_rate=(h, ""),
        price_usd_per_m_input_tokens=(pi0, "USD/M"), price_usd_per_m_cached_input_tokens=(pc0, "USD/M"),
        served_output_tokens_per_day=(served_out, "token/day"), price_usd_per_m_output_tokens=(po0, "USD/M"))
    profit = rev - total_d
    cpm = revenue.cost_profit_margin(rev, total_d)
    gm = revenue.gross_margin(rev, total_d)
    rec("cost_profit_margin", cpm, "", "({revenue_usd_per_day} - {cost_usd_per_day}) / {cost_usd_per_day}",
        revenue_usd_per_day=(rev, "USD/day"), cost_usd_per_day=(total_d, "USD/day"))
    rec("gross_margin", gm, "", "({revenue_usd_per_day} - {cost_usd_per_day}) / {revenue_usd_per_day}",
        revenue_usd_per_day=(rev, "USD/day"), cost_usd_per_day=(total_d, "USD/day"))

    # load-dependent cost: the energy above idle; everything else is paid whatever the load
    var_full_d = np.where(pays_energy, it_kw * (1.0 - c["idle_power_fraction"]) * pue
                          * c["electricity_usd_per_kwh"] * 24.0, 0.0)
    fixed_d = total_d - var_full_d * u
    rev_full = rev / u
    be_u = revenue.break_even_utilization(fixed_d, var_full_d, rev_full)
    rec("break_even_utilization", be_u, "",
        "{fixed_cost_usd_per_day}"
        " / ({revenue_at_full_load_usd_per_day} - {energy_above_idle_at_full_load_usd_per_day})",
        fixed_cost_usd_per_day=(fixed_d, "USD/day"), revenue_at_full_load_usd_per_day=(rev_full, "USD/day"),
        energy_above_idle_at_full_load_usd_per_day=(var_full_d, "USD/day"))
    be_p = np.where(has_price, revenue.break_even_price_usd_per_m_output_tokens(total_d, rev_in, served_out), np.nan)
    rec("break_even_price_usd_per_m_output_tokens", be_p, "USD/M token",
        "max(0, {cost_usd_per_day} - {input_revenue_usd_per_day}) / {served_output_tokens_per_day} x 1,000,000",
        cost_usd_per_day=(total_d, "USD/day"), input_revenue_usd_per_day=(rev_in, "USD/day"),
        served_output_tokens_per_day=(served_out, "token/day"))

    # --- power and energy per token
    avg_it = n * avg_kw + k * avg_kw_y
    mwh = avg_it * pue * 8760.0 / 1000.0
    tokens_per_s_per_mw = tokens / cap.SECONDS_PER_DAY / (fac_kw / 1000.0)
    j_per_token = fleet.joules_per_token(avg_it * pue, tokens)
    fleet_flags = cooling_bad.astype(np.int64) | (rack_bad << 1) | (site_bad << 2)

    flags = (
        (~sized & has_demand & (f < 1.0)).astype(np.int64)
        | ((~sized & has_demand & (f >= 1.0) & (work * c["peak_to_average"] > avail * (1 + 1e-12))) << 1)
        | (~has_demand << 2)
        | (~has_p << 3)
        | ((be_u > 1.0) << 4)
        | (~has_price << 5)
        | (np.asarray(c.get("_throughput_estimated", False), dtype=bool) << 6)
        | (np.asarray(c.get("_throughput_from_curve", False), dtype=bool) << 7)
        | (np.asarray(c.get("_outside_measured_range", False), dtype=bool) << 8)
        | (np.asarray(link_bound, dtype=np.int64) << 9)
    )
    return {
        "accelerators": n, "capacity_requests_per_s_per_accelerator": r, "work_accelerator_s_per_day": work,
        "capacity_input_tokens_per_day": capacity_in, "capacity_output_tokens_per_day": capacity_out,
        "served_input_tokens_per_day": served_in, "served_cached_input_tokens_per_day": served_cached,
        "served_output_tokens_per_day": served_out, "utilization": u, "input_time_share": share_in,
        "capital_usd_per_hour": capital_h, "energy_usd_per_hour": energy_h, "facility_usd_per_hour": facility_h,
        "operations_usd_per_hour": ops_h, "rent_usd_per_hour": rent_h, "cost_usd_per_hour": total_h,
        "cost_usd_per_day": total_d, "cost_usd_per_m_tokens": per_m, "cost_usd_per_m_input_tokens": per_m_in,
        "cost_usd_per_m_output_tokens": per_m_out, "revenue_usd_per_day": rev, "profit_usd_per_day": profit,
        "cost_profit_margin": cpm, "gross_margin": gm, "break_even_utilization": be_u,
        "break_even_price_usd_per_m_output_tokens": be_p, "it_power_kw": it_kw, "facility_power_kw": fac_kw,
        "average_it_power_kw": avg_it, "energy_mwh_per_year": mwh, "warning_flags": flags,
        "systems": systems, "racks": racks, "kw_per_rack": it_kw / racks, "systems_per_rack": per_rack,
        "cooling_retrofit_usd_per_hour": retrofit_h, "cost_usd_per_year": total_d * 365.0,
        "tokens_per_s_per_mw": tokens_per_s_per_mw, "joules_per_token": j_per_token,
        "pue_effective": pue, "rack_power_kw_effective": rack_kw, "fleet_flags": fleet_flags,
        "decode_accelerators": np.where(dis, k, np.nan), "decode_utilization": np.where(dis, u_y, np.nan),
        "decode_pool_cost_usd_per_hour": np.where(dis, decode_pool_h, np.nan),
        "prefill_pool_cost_usd_per_hour": np.where(dis, prefill_pool_h, np.nan),
        "kv_transfer_gb_per_s": kv_gb_per_s, "kv_transfer_mb_per_request": np.where(dis, kv_per_request / 1e6, np.nan),
    }


def _catalog_lookup(ids: Array, field: str, missing: Any) -> Array:
    """An accelerators.csv figure for each row's id (``missing`` where absent or the id is empty)."""
    table = catalog.accelerators()
    codes = pd.Index(table.index).get_indexer(np.asarray(ids, dtype=object))
    if field not in table.columns:
        return np.full(len(codes), missing)
    column = table[field]
    values = (column.to_numpy(dtype=float, na_value=np.nan) if isinstance(missing, float)
              else column.fillna(missing).to_numpy(dtype=object))
    return np.append(values, missing)[codes]


def _kv_bytes_per_token(c: dict[str, Array]) -> Array:
    """KV-cache bytes per token of the scenario's model at its KV precision (NaN without a model)."""
    table = catalog.models()
    codes = pd.Index(table.index).get_indexer(np.asarray(c["model"], dtype=object))
    bf16 = np.append(table["kv_bytes_per_token_bf16"].to_numpy(dtype=float), np.nan)[codes]
    prec = np.where(np.asarray(c["kv_cache_precision"] == "", dtype=bool), np.asarray(c["precision"], dtype=object),
                    np.asarray(c["kv_cache_precision"], dtype=object))
    scale = np.select([prec == "fp8", prec == "fp4"], [0.5, 0.25], 1.0)
    return bf16 * scale


def _row(rec: Any) -> int:
    """The traced row, or -1 when not tracing."""
    owner = getattr(rec, "__self__", None)
    return owner.row if isinstance(owner, Trace) else -1


def fleet_reasons(c: dict[str, Array], out: dict[str, Array], rows: Array) -> list[str]:
    """One sentence per infeasible fleet (rows of ``c``/``out``), naming the constraint and the numbers."""
    # rows without a site-power shortfall share a few distinct sentences: build each once
    key_cols = (out["fleet_flags"], c["accelerator"], c["liquid_retrofit_usd_per_mw"], out["rack_power_kw_effective"],
                np.where(np.isnan(c["system_power_kw"]), out["it_power_kw"] / np.maximum(out["systems"], 1.0),
                         c["system_power_kw"]))
    site = (out["fleet_flags"][rows] & 4) != 0
    if not site.any():
        codes, uniques = pd.MultiIndex.from_arrays([np.asarray(k)[rows] for k in key_cols]).factorize()
        first = np.full(len(uniques), -1)
        first[codes[::-1]] = np.arange(len(codes))[::-1]
        distinct = _fleet_sentences(c, out, rows[first])
        return [distinct[i] for i in codes]
    return _fleet_sentences(c, out, rows)


def _fleet_sentences(c: dict[str, Array], out: dict[str, Array], rows: Array) -> list[str]:
    from .explain import format_number as fmt

    def col(values: Array) -> list[Any]:
        return np.asarray(values)[rows].tolist()

    flags, acc = col(out["fleet_flags"]), col(c["accelerator"])
    retrofit, rack_kw = col(c["liquid_retrofit_usd_per_mw"]), col(out["rack_power_kw_effective"])
    system_kw = col(np.where(np.isnan(c["system_power_kw"]), out["it_power_kw"] / np.maximum(out["systems"], 1.0),
                             c["system_power_kw"]))
    need, it_mw = col(out["facility_power_kw"] / 1000.0), col(out["it_power_kw"] / 1000.0)
    pue, have = col(out["pue_effective"]), col(c["site_power_mw"])
    texts = []
    for k, f in enumerate(flags):
        parts = []
        if f & 1:
            parts.append(f"cooling: {acc[k]} requires liquid cooling and the facility is air-cooled; set "
                         f"allow_liquid_retrofit to add it at {fmt(retrofit[k])} USD/MW")
        if f & 2:
            parts.append(f"rack power: one {acc[k]} system draws {fmt(system_kw[k])} kW, over the "
                         f"{fmt(rack_kw[k])} kW rack limit")
        if f & 4:
            parts.append(f"site power: the fleet needs {fmt(need[k])} MW (IT {fmt(it_mw[k])} MW x PUE {fmt(pue[k])}) "
                         f"but {fmt(have[k])} MW is available; short by {fmt(need[k] - have[k])} MW")
        texts.append("; ".join(parts))
    return texts


def split_warnings(text: str) -> list[str]:
    """The individual warnings in a ``warnings`` cell (each is one of :data:`WARNINGS`), in order.

    >>> split_warnings(warning_text(0b101))[1].startswith("no demand given")
    True
    """
    return [w for w in WARNINGS if w in text]


def warning_text(flags: int) -> str:
    """The warnings of one flag combination, joined with '; '."""
    return "; ".join(w for bit, w in enumerate(WARNINGS) if flags >> bit & 1)
