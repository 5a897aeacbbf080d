"""From accelerators to systems, racks and megawatts, and whether the facility can host them.

Pure functions over floats or arrays. A *system* is what is bought and installed as a unit: an 8-GPU server, or a
rack-scale system such as GB200 NVL72 that is a rack by itself. Racks hold as many systems as both the rack's power
limit (set by the facility's cooling) and its space allow. Infeasibility is returned as data by the callers
(:func:`economics.engine.pipeline.compute`), never raised.

References: rack power densities by cooling type and the liquid-retrofit cost are in data/defaults.csv with their
sources (vendor cooling guides, Uptime Institute, STL Partners).
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numpy.typing import ArrayLike, NDArray

from economics.domain.formula import SECONDS_PER_DAY, Formula, ceil

F = NDArray[np.float64]


def _a(x: ArrayLike) -> F:
    return np.asarray(x, dtype=float)


def round_up_to_multiple(count: ArrayLike, multiple: ArrayLike) -> F:
    r"""Smallest multiple of ``multiple`` that is at least ``count`` (whole replicas, whole systems).

    .. math:: N' = m \lceil N / m \rceil

    A relative tolerance keeps 16.000000000000004 from becoming 24.

    >>> float(round_up_to_multiple(18, 8)), float(round_up_to_multiple(16, 8))
    (24.0, 16.0)
    """
    m = _a(multiple)
    return m * ceil(_a(count) / m)


def systems_needed(accelerators: ArrayLike, accelerators_per_system: ArrayLike) -> F:
    r"""Systems that hold the accelerators (the last one may be partly filled for a fixed fleet).

    .. math:: S = \lceil N / a \rceil

    >>> float(systems_needed(64, 8)), float(systems_needed(65, 8)), float(systems_needed(100, 72))
    (8.0, 9.0, 2.0)
    """
    return _a(SYSTEMS.evaluate({"accelerators": _a(accelerators),
                                "accelerators_per_system": _a(accelerators_per_system)}))


def systems_per_rack(system_power_kw: ArrayLike, rack_power_kw: ArrayLike, system_rack_units: ArrayLike,
                     rack_units_per_rack: ArrayLike, rack_scale: ArrayLike) -> F:
    r"""Systems one rack can hold: limited by the rack's power and its space; a rack-scale system fills a rack.

    .. math:: s = \min(\lfloor P_{rack} / P_{sys} \rfloor, \lfloor U_{rack} / U_{sys} \rfloor)

    Rack-scale systems give 1 when the rack's power limit covers them, else 0. Unknown system height (NaN) leaves
    only the power limit. 0 means the system cannot be hosted at that rack density.

    >>> float(systems_per_rack(10.2, 30, 8, 42, False)), float(systems_per_rack(10.2, 60, 8, 42, False))
    (2.0, 5.0)
    >>> float(systems_per_rack(120, 30, 48, 42, True)), float(systems_per_rack(120, 150, 48, 42, True))
    (0.0, 1.0)
    """
    p_sys, p_rack, ru = _a(system_power_kw), _a(rack_power_kw), _a(system_rack_units)
    shape = np.broadcast(p_sys, p_rack, ru, _a(rack_units_per_rack), np.asarray(rack_scale)).shape
    v = {"rack_power_kw_effective": p_rack, "system_power_kw_effective": p_sys,
         "rack_units_per_rack": _a(rack_units_per_rack), "system_rack_units": np.where(np.isnan(ru), 1.0, ru)}
    per_rack = np.where(np.isnan(ru), SYSTEMS_PER_RACK_POWER_ONLY.evaluate(v), SYSTEMS_PER_RACK.evaluate(v))
    return np.broadcast_to(np.where(np.asarray(rack_scale, dtype=bool), SYSTEMS_PER_RACK_SCALE.evaluate(v), per_rack),
                           shape).astype(float)


def racks_needed(systems: ArrayLike, per_rack: ArrayLike) -> F:
    r"""Racks for the systems; NaN where a rack holds none (the fleet cannot be hosted).

    .. math:: R = \lceil S / s \rceil

    >>> float(racks_needed(9, 2)), float(racks_needed(8, 2))
    (5.0, 4.0)
    """
    s = _a(per_rack)
    ok = s >= 1
    return np.where(ok, RACKS.evaluate({"main_systems": _a(systems), "main_systems_per_rack": np.where(ok, s, 1.0)}),
                    np.nan)


def facility_pue(cooling: ArrayLike, pue_air: ArrayLike, pue_liquid: ArrayLike, liquid_share: ArrayLike) -> F:
    r"""PUE that follows the facility's cooling: air, liquid, or a hybrid weighted by its liquid share.

    .. math:: PUE_{hybrid} = s \, PUE_{liquid} + (1 - s) \, PUE_{air}

    Evaluates the engine's formulas (:data:`PUE_AIR`, :data:`PUE_LIQUID`, :data:`PUE_HYBRID`).

    >>> round(float(facility_pue("hybrid", 1.5, 1.15, 0.4)), 6)
    1.36
    """
    cool = np.asarray(cooling)
    v = {"pue_air": _a(pue_air), "pue_liquid": _a(pue_liquid), "liquid_cooling_share": _a(liquid_share)}
    shape = np.broadcast(cool, *v.values()).shape
    return np.broadcast_to(np.select([cool == "air", cool == "liquid"], [PUE_AIR.evaluate(v), PUE_LIQUID.evaluate(v)],
                                     PUE_HYBRID.evaluate(v)), shape).astype(float)


def retrofit_capex_usd(it_power_kw: ArrayLike, liquid_retrofit_usd_per_mw: ArrayLike) -> F:
    r"""Capex to add liquid cooling for a fleet's IT load in an air-cooled hall.

    .. math:: C_{retrofit} = P_{IT} / 1000 \cdot c_{MW}

    >>> float(retrofit_capex_usd(1500, 2e6))
    3000000.0
    """
    return _a(it_power_kw) / 1000.0 * _a(liquid_retrofit_usd_per_mw)


def joules_per_token(average_facility_power_kw: ArrayLike, tokens_per_day: ArrayLike) -> F:
    r"""Facility energy per served token.

    .. math:: J = \bar P_{fac} \cdot 1000 \cdot 86400 / T_{day}

    >>> float(joules_per_token(1.0, 86400.0))
    1000.0
    """
    return _a(average_facility_power_kw) * 1000.0 * SECONDS_PER_DAY / _a(tokens_per_day)


# --- the facility as formulas (economics.domain.formula), written once and bound to each pool's columns ---
FORMULA = Formula
ACCELERATORS_FIXED = FORMULA("accelerators", "accelerator", "accelerator_count", note="fixed fleet, as given")
WHOLE_REPLICAS = FORMULA("accelerators_in_whole_replicas", "accelerator",
                         "accelerators_per_replica * ceil(accelerators_needed / accelerators_per_replica)")
WHOLE_SYSTEMS = FORMULA("accelerators", "accelerator",
                        "accelerators_per_system * ceil(accelerators_in_whole_replicas / accelerators_per_system)",
                        note="rounded up to whole systems")
AS_REPLICAS = FORMULA("accelerators", "accelerator", "accelerators_in_whole_replicas")
DECODE_FIXED = FORMULA("decode_accelerators", "accelerator", "decode_accelerator_count", note="as given")
DECODE_WHOLE_SYSTEMS = FORMULA(
    "decode_accelerators", "accelerator",
    "decode_accelerators_per_system * ceil(decode_accelerators_needed / decode_accelerators_per_system)",
    note="sized from the output demand at peak, in whole systems")
DECODE_AS_NEEDED = FORMULA("decode_accelerators", "accelerator", "decode_accelerators_needed",
                           note="sized from the output demand at peak")
PUE_GIVEN = FORMULA("pue_effective", "-", "pue", note="as given")
PUE_AIR = FORMULA("pue_effective", "-", "pue_air", note="air-cooled facility (defaults.csv pue_air)")
PUE_LIQUID = FORMULA("pue_effective", "-", "pue_liquid", note="liquid-cooled facility or retrofit (defaults.csv)")
PUE_HYBRID = FORMULA("pue_effective", "-",
                     "pue_air * (1 - liquid_cooling_share) + pue_liquid * liquid_cooling_share",
                     note="hybrid facility: weighted by its liquid share")
RACK_POWER_GIVEN = FORMULA("rack_power_kw_effective", "kW", "rack_power_kw", note="as given")
RACK_POWER_LIQUID = FORMULA("rack_power_kw_effective", "kW", "rack_power_kw_liquid",
                            note="liquid-cooled racks (defaults.csv rack_power_kw_liquid)")
RACK_POWER_AIR = FORMULA("rack_power_kw_effective", "kW", "rack_power_kw_air",
                         note="air-cooled racks with containment (defaults.csv rack_power_kw_air_containment)")
SYSTEM_POWER = FORMULA("system_power_kw_effective", "kW", "accelerator_power_kw * accelerators_per_system",
                       note="no system power given: accelerators x their power")
SYSTEM_POWER_GIVEN = FORMULA("system_power_kw_effective", "kW", "system_power_kw")
SYSTEMS = FORMULA("main_systems", "system", "ceil(accelerators / accelerators_per_system)")
SYSTEMS_PER_RACK = FORMULA(
    "main_systems_per_rack", "system",
    "min(floor(rack_power_kw_effective / system_power_kw_effective),"
    " floor(rack_units_per_rack / system_rack_units))",
    note="limited by the rack's power and its space")
SYSTEMS_PER_RACK_POWER_ONLY = FORMULA("main_systems_per_rack", "system",
                                      "floor(rack_power_kw_effective / system_power_kw_effective)",
                                      note="system height unknown: limited by the rack's power")
SYSTEMS_PER_RACK_SCALE = FORMULA("main_systems_per_rack", "system",
                                 "min(1, floor(rack_power_kw_effective / system_power_kw_effective))",
                                 note="a rack-scale system is a rack of its own, if the rack's power limit allows it")
RACKS = FORMULA("main_racks", "rack", "ceil(main_systems / main_systems_per_rack)")
IT_POWER = FORMULA("main_it_power_kw", "kW", "accelerators * accelerator_power_kw")
SYSTEMS_TOTAL = FORMULA("systems", "system", "main_systems + decode_systems")
RACKS_TOTAL = FORMULA("racks", "rack", "main_racks + decode_racks")
IT_POWER_TOTAL = FORMULA("it_power_kw", "kW", "main_it_power_kw + decode_it_power_kw")
SYSTEMS_ONE_POOL = FORMULA("systems", "system", "main_systems")
RACKS_ONE_POOL = FORMULA("racks", "rack", "main_racks")
SYSTEMS_PER_RACK_ONE_POOL = FORMULA("systems_per_rack", "system", "main_systems_per_rack",
                                   note="one pool (two pools each have their own)")
IT_POWER_ONE_POOL = FORMULA("it_power_kw", "kW", "main_it_power_kw")
FACILITY_POWER = FORMULA("facility_power_kw", "kW", "it_power_kw * pue_effective")
KW_PER_RACK = FORMULA("kw_per_rack", "kW", "it_power_kw / racks")
RETROFIT = FORMULA("cooling_retrofit_usd_per_hour", "USD/h",
                   "retrofitted_it_power_kw / KW_PER_MW * liquid_retrofit_usd_per_mw * facility_crf / HOURS_PER_YEAR",
                   note="liquid cooling added to the air-cooled hall for the hardware that needs it")
NO_RETROFIT = FORMULA("cooling_retrofit_usd_per_hour", "USD/h", "0",
                      note="no liquid retrofit: the hall cools the hardware as it is, or none is allowed")
AVERAGE_IT_POWER = FORMULA("average_it_power_kw", "kW", "accelerators * average_power_kw")
AVERAGE_IT_POWER_TWO_POOLS = FORMULA("average_it_power_kw", "kW",
                                     "accelerators * prefill_average_power_kw"
                                     " + decode_accelerators * decode_average_power_kw")
ENERGY_PER_YEAR = FORMULA("energy_mwh_per_year", "MWh/year",
                          "average_it_power_kw * pue_effective * HOURS_PER_YEAR / KW_PER_MW")
TOKENS_PER_S_PER_MW = FORMULA(
    "tokens_per_s_per_mw", "token/s/MW",
    "(served_input_tokens_per_day + served_output_tokens_per_day) / SECONDS_PER_DAY"
    " / (facility_power_kw / KW_PER_MW)",
    note="basis: provisioned facility power (full-load IT x PUE)")
TOKENS_PER_S_PER_AVERAGE_MW = FORMULA(
    "tokens_per_s_per_average_mw", "token/s/MW",
    "(served_input_tokens_per_day + served_output_tokens_per_day) / SECONDS_PER_DAY"
    " / (average_it_power_kw * pue_effective / KW_PER_MW)", note="basis: average facility power")
JOULES_PER_TOKEN = FORMULA(
    "joules_per_token", "J/token", "average_it_power_kw * pue_effective * W_PER_KW * SECONDS_PER_DAY"
    " / (served_input_tokens_per_day + served_output_tokens_per_day)", note="basis: average facility power")
JOULES_PER_TOKEN_PROVISIONED = FORMULA(
    "joules_per_token_provisioned", "J/token", "facility_power_kw * W_PER_KW * SECONDS_PER_DAY"
    " / (served_input_tokens_per_day + served_output_tokens_per_day)", note="basis: provisioned facility power")
POOL_FACILITY = ("main_systems", "main_systems_per_rack", "main_racks", "main_it_power_kw")


@cache
def bind_decode(formula: Formula) -> Formula:
    """A main-pool facility formula bound to the decode pool's columns (built once per formula: a formula is an
    immutable definition, so its binding is too).

    >>> bind_decode(IT_POWER).symbolic()
    'decode_accelerators x decode_accelerator_power_kw'
    """
    names = {p: p.replace("main_", "decode_") for p in POOL_FACILITY}
    names |= {s: f"decode_{s}" for s in ("accelerators", "accelerator_power_kw", "accelerators_per_system",
                                          "system_power_kw", "system_power_kw_effective", "system_rack_units",
                                          "rack_power_kw_effective")}
    return formula.bind(names.get(formula.name, "decode_" + formula.name), **names)
RETROFIT_IT_MAIN = FORMULA("retrofitted_it_power_kw", "kW", "main_it_power_kw")
RETROFIT_IT_DECODE = FORMULA("retrofitted_it_power_kw", "kW", "decode_it_power_kw")
RETROFIT_IT_BOTH = FORMULA("retrofitted_it_power_kw", "kW", "main_it_power_kw + decode_it_power_kw")
