"""The scenario: one flat record of inputs, the public contract shared by CSV columns, URL parameters and JSON.

Each field's metadata (unit, bounds, description, the catalog column that fills it, the source of its default)
is the single source of truth: the CSV template, the JSON schema, the column-wise validation messages and the UI
labels are all generated from it (see :data:`FIELDS`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any, Literal, get_args, get_origin

import annotated_types
import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from economics import catalog
from economics.schema import values
from economics.schema.values import FieldKind

Precision = Literal["bf16", "fp8", "fp4"]
SystemForm = Literal["server", "rack", "wafer"]
RentTier = Literal["on_demand", "reserved", "spot"]


class Ownership(StrEnum):
    """How the scenario's fleet is held: bought (capital, energy, facility and operations) or rented by the hour.
    The planner's own Ownership, in economics.studies.planner.inputs, adds existing: the site's installed fleet.
    """

    OWN = "own"
    RENT = "rent"


class Cooling(StrEnum):
    """The cooling the hardware requires."""

    AIR = "air"
    LIQUID = "liquid"
    AIR_OR_LIQUID = "air_or_liquid"


class FacilityCooling(StrEnum):
    """The facility's cooling: an air hall, a liquid hall, or a hybrid of the two (by liquid_cooling_share)."""

    AIR = "air"
    LIQUID = "liquid"
    HYBRID = "hybrid"


class WeightPrecision(StrEnum):
    """The format the weights are stored in (their bytes: :data:`economics.domain.precision.BYTES_PER_VALUE`)."""

    BF16 = "bf16"
    FP8 = "fp8"
    INT8 = "int8"
    FP4 = "fp4"
    MXFP4 = "mxfp4"
    INT4 = "int4"


class ComputePrecision(StrEnum):
    """The format the matrix multiplications run in (their peak: the accelerator's ``<precision>_tflops``)."""

    BF16 = "bf16"
    FP8 = "fp8"
    FP4 = "fp4"


def split_precision(precision: Any, weight_precision: Any = None,
                    compute_precision: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """The weights' and the compute's precision of each row: the one given, else (``""`` or absent) ``precision``,
    the shorthand for the two equal.

    >>> [x.tolist() for x in split_precision(["fp8", "bf16"], ["", "mxfp4"], ["", ""])]
    [['fp8', 'mxfp4'], ['fp8', 'bf16']]
    """
    p = np.asarray(precision, dtype=object)

    def given(x: Any) -> np.ndarray:
        if x is None:
            return p
        v = np.asarray(x, dtype=object)
        return np.where(v == "", p, v)
    return given(weight_precision), given(compute_precision)


FORMAT_FIELDS = ("weight_precision", "compute_precision", "kv_cache_precision")
"""The number formats a scenario (and a measured curve, data/throughput_curves.csv) may give apart from
``precision``: empty = ``precision``'s (the KV cache: the compute's,
:data:`economics.domain.precision.KV_WHEN_EMPTY`)."""


def pair_problem(field: str, accelerator: str, role: str, weights: str, compute: str) -> str:
    """Why ``accelerator`` (the scenario's ``role`` field: accelerator, decode_accelerator) cannot run ``weights``
    with ``compute`` ('' when it can, or when the two are equal: ``precision``'s case, its peak checked by the
    estimate): data/accelerators.csv ``weight_compute_pairs``. ``field`` is the field the message names (the
    weights' where given apart). The one rule for a scenario and a measured curve alike.
    """
    if weights == compute:
        return ""
    table = catalog.accelerators()
    listed = table["weight_compute_pairs"] if "weight_compute_pairs" in table.columns else None
    cell = listed.get(accelerator, "") if listed is not None else ""
    pairs = cell if isinstance(cell, str) else ""  # an empty cell reads as NaN: no pair listed
    if f"{weights}/{compute}" in pairs.split():
        return ""
    return (f"{field}: {accelerator} ({role}) does not run {weights} weights with {compute} compute "
            f"(data/accelerators.csv weight_compute_pairs lists {pairs or 'none for it'}); give a listed "
            "pair, or precision alone")


class Workload(StrEnum):
    """What one unit of demand is: a single request, or an agent session of several turns (docs/model.md,
    "Sessions"): a session's turns are requests whose context grows, and its prefix cache hit rate is computed.
    """

    REQUESTS = "requests"
    SESSIONS = "sessions"


def _f(
    default: Any,
    unit: str,
    description: str,
    *,
    group: str,
    catalog_field: str | None = None,
    catalog_id: str | None = None,
    default_source: str | None = None,
    **bounds: float,
) -> Any:
    extra: dict[str, Any] = {"unit": unit, "group": group}
    if catalog_field:
        extra["catalog_field"] = catalog_field
        extra["catalog_id"] = catalog_id or "accelerator"
    if default_source:
        extra["default_source"] = default_source
    return Field(default=default, description=description, json_schema_extra=extra, **bounds)  # type: ignore[call-overload]


def _d(parameter: str) -> Any:
    """Default from data/defaults.csv (sourced and dated there)."""
    value = catalog.default_value(parameter)
    return _f(int(value) if value.is_integer() else value, **_DEFAULT_META[parameter], default_source="defaults.csv")


_DEFAULT_META: dict[str, dict[str, Any]] = {
    "depreciation_years": dict(
        unit="year", group="finance", gt=0, le=30,
        description="Amortisation period of the hardware"),
    "cost_of_capital": dict(
        unit="1/year", group="finance", ge=0, lt=1,
        description="Annual cost of capital (discount rate) as a fraction, e.g. 0.08"),
    "maintenance_fraction_per_year": dict(
        unit="1/year", group="finance", ge=0, le=1,
        description="Hardware support and repairs per year as a share of the hardware price"),
    "software_usd_per_accelerator_year": dict(
        unit="USD/year", group="finance", ge=0, le=1e6,
        description="Software licences per accelerator per year"),
    "electricity_usd_per_kwh": dict(
        unit="USD/kWh", group="facility", ge=0, le=10,
        description="Electricity price"),
    "liquid_cooling_share": dict(
        unit="-", group="facility", ge=0, le=1,
        description="Hybrid facility: share of its power that is liquid-cooled (weights the PUE)"),
    "liquid_retrofit_usd_per_mw": dict(
        unit="USD/MW", group="facility", ge=0, le=1e9,
        description="Capex to add liquid cooling to an air-cooled hall, per MW of IT load; amortised"),
    "rack_units_per_rack": dict(
        unit="U", group="facility", ge=1, le=100,
        description="Usable rack units per rack for systems"),
    "headroom": dict(
        unit="-", group="demand", ge=0, le=10,
        description="Spare capacity on top of the peak (redundancy, failures), e.g. 0.1 for 10%"),
    "idle_power_fraction": dict(
        unit="-", group="facility", ge=0, le=1,
        description="Idle IT draw as a share of full draw; average draw scales linearly with utilization"),
    "colocation_usd_per_kw_month": dict(
        unit="USD/(kW month)", group="facility", ge=0, le=10000,
        description="Colocation rent per provisioned IT kW (owned hardware); 0 in your own facility"),
    "facility_capex_usd_per_kw": dict(
        unit="USD/kW", group="facility", ge=0, le=1e6,
        description="Own-facility build cost per provisioned IT kW, amortised (0 when in colocation)"),
    "facility_depreciation_years": dict(
        unit="year", group="facility", gt=0, le=60,
        description="Amortisation period of an owned facility"),
    "input_tokens_per_request": dict(
        unit="token", group="workload", ge=0, le=1e8,
        description="Input (prompt) tokens per request"),
    "output_tokens_per_request": dict(
        unit="token", group="workload", gt=0, le=1e8,
        description="Output (generated) tokens per request"),
    "prefix_cache_hit_rate": dict(
        unit="-", group="workload", ge=0, le=1,
        description="Share of input tokens served from the prefix cache: no prefill, billed at the cached price"),
    "memory_utilization": dict(
        unit="-", group="throughput", gt=0, le=1,
        description="Share of accelerator memory the serving engine uses for weights and KV cache"),
    "max_batch_size": dict(
        unit="sequence", group="throughput", ge=1, le=1e5,
        description="Most sequences a replica decodes at once (the serving engine's limit)"),
    "reserved_discount": dict(
        unit="-", group="rent", ge=0, lt=1,
        description="Reserved rent below the on-demand rent, as a share, where the catalog has no reserved price"),
    "reserved_term_years": dict(
        unit="year", group="rent", gt=0, le=10,
        description="Term of a reservation: its hours are paid whether used or not"),
    "spot_discount": dict(
        unit="-", group="rent", ge=0, lt=1,
        description="Spot rent below the on-demand rent, as a share, where the catalog has no spot price"),
    "spot_mtbi_hours": dict(
        unit="h", group="rent", gt=0, le=1e6,
        description="Mean time between interruptions of a spot accelerator's capacity"),
    "spot_recovery_hours": dict(
        unit="h", group="rent", ge=0, le=1e4,
        description="Time an interrupted spot replica serves nothing: new capacity found, model loaded"),
    "peak_to_average": dict(
        unit="-", group="demand", ge=1, le=100,
        description="Peak load / average load; the fleet sized from demand carries the peak"),
}


class Scenario(BaseModel):
    """One scenario. Empty (None) catalog fields are filled from the accelerator's catalog entry."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, use_enum_values=True)  # a category as its word

    name: str = Field(default="scenario", max_length=200, description="Label", json_schema_extra={
        "unit": "", "group": "scenario"})
    accelerator: str = Field(default="h100-sxm", max_length=100,
                             description="Accelerator catalog id (data/accelerators.csv)",
                             json_schema_extra={"unit": "", "group": "scenario"})
    ownership: Ownership = Field(default=Ownership.OWN, validate_default=True,
                                 description="own: capital, energy, facility and operations; "
                                 "rent: hourly rent", json_schema_extra={"unit": "", "group": "scenario"})
    accelerator_count: int | None = _f(
        None, "accelerator", "Fixed fleet size; empty = size the fleet from demand", group="scenario", ge=1, le=1e7)

    # hardware: filled from the catalog when empty
    accelerator_price_usd: float | None = _f(
        None, "USD", "Capex per accelerator including its share of the server", group="hardware",
        catalog_field="price_usd", ge=0, le=1e8)
    accelerator_power_kw: float | None = _f(
        None, "kW", "Full-load IT power per accelerator including its share of the server", group="hardware",
        catalog_field="power_kw", gt=0, le=1000)
    rent_usd_per_accelerator_hour: float | None = _f(
        None, "USD/h", "Rental price per accelerator-hour (ownership=rent)", group="hardware",
        catalog_field="rent_usd_per_hour", gt=0, le=10000)
    rent_includes_energy: bool = Field(
        default=True, description="The rent already includes power (cloud); false adds energy at PUE x price",
        json_schema_extra={"unit": "", "group": "hardware"})

    # rented capacity: the tier it is bought in
    rent_tier: RentTier = Field(
        default="on_demand", description="How rented capacity is bought: on_demand (the hourly rent), reserved (a "
        "term at the reserved rent, every hour paid whether used or not) or spot (the spot rent; interrupted, so "
        "sized with the spare capacity its availability needs)", json_schema_extra={"unit": "", "group": "rent"})
    reserved_rent_usd_per_accelerator_hour: float | None = _f(
        None, "USD/h", "Reserved rent per accelerator-hour (rent_tier=reserved); empty = the catalog's, else the "
        "on-demand rent less reserved_discount", group="rent", catalog_field="reserved_rent_usd_per_hour", gt=0,
        le=10000)
    reserved_discount: float = _d("reserved_discount")
    reserved_term_years: float = _d("reserved_term_years")
    spot_rent_usd_per_accelerator_hour: float | None = _f(
        None, "USD/h", "Spot rent per accelerator-hour (rent_tier=spot); empty = the catalog's, else the on-demand "
        "rent less spot_discount", group="rent", catalog_field="spot_rent_usd_per_hour", gt=0, le=10000)
    spot_discount: float = _d("spot_discount")
    spot_mtbi_hours: float = _d("spot_mtbi_hours")
    spot_recovery_hours: float = _d("spot_recovery_hours")
    accelerator_memory_gb: float | None = _f(
        None, "GB", "Accelerator memory (HBM)", group="hardware", catalog_field="memory_gb", gt=0, le=1e6)
    accelerator_bandwidth_tb_per_s: float | None = _f(
        None, "TB/s", "Memory bandwidth per accelerator", group="hardware", catalog_field="bandwidth_tb_per_s",
        gt=0, le=1e6)
    accelerator_bf16_tflops: float | None = _f(
        None, "TFLOPS", "Dense BF16 peak per accelerator", group="hardware", catalog_field="bf16_tflops",
        gt=0, le=1e7)
    accelerator_fp8_tflops: float | None = _f(
        None, "TFLOPS", "Dense FP8 peak per accelerator", group="hardware", catalog_field="fp8_tflops", gt=0, le=1e7)
    accelerator_fp4_tflops: float | None = _f(
        None, "TFLOPS", "Dense FP4 peak per accelerator", group="hardware", catalog_field="fp4_tflops", gt=0, le=1e7)
    accelerators_per_system: int | None = _f(
        None, "accelerator", "Accelerators per server or rack-scale system", group="hardware",
        catalog_field="accelerators_per_system", ge=1, le=1e5)
    accelerator_cooling: Cooling | None = Field(
        default=None, description="Cooling the hardware requires: air, liquid or air_or_liquid",
        json_schema_extra={"unit": "", "group": "hardware", "catalog_field": "cooling", "catalog_id": "accelerator"})
    system_power_kw: float | None = _f(
        None, "kW", "Full-load power of one system (server or rack-scale system)", group="hardware",
        catalog_field="system_power_kw", gt=0, le=10000)
    system_rack_units: float | None = _f(
        None, "U", "Height of one system in rack units", group="hardware", catalog_field="system_rack_units",
        gt=0, le=100)
    system_form: SystemForm | None = Field(
        default=None, description="server, rack (a rack-scale system fills a rack) or wafer",
        json_schema_extra={"unit": "", "group": "hardware", "catalog_field": "system_form",
                           "catalog_id": "accelerator"})
    round_to_whole_systems: bool = Field(
        default=True, description="A fleet sized from demand is bought in whole systems (servers or racks)",
        json_schema_extra={"unit": "", "group": "hardware"})

    # finance and facility: sourced defaults
    depreciation_years: float = _d("depreciation_years")
    cost_of_capital: float = _d("cost_of_capital")
    maintenance_fraction_per_year: float = _d("maintenance_fraction_per_year")
    software_usd_per_accelerator_year: float = _d("software_usd_per_accelerator_year")
    electricity_usd_per_kwh: float = _d("electricity_usd_per_kwh")
    pue: float | None = _f(
        None, "-", "Power usage effectiveness: facility power / IT power; empty = follows facility_cooling "
        "(pue_air, pue_liquid in defaults.csv)", group="facility", ge=1, le=5)
    facility_cooling: FacilityCooling = Field(
        default=FacilityCooling.AIR, validate_default=True,
        description="Cooling of the facility: air, liquid or hybrid",
        json_schema_extra={"unit": "", "group": "facility"})
    liquid_cooling_share: float = _d("liquid_cooling_share")
    allow_liquid_retrofit: bool = Field(
        default=False, description="Liquid-cooled hardware in an air facility: add liquid cooling (at "
        "liquid_retrofit_usd_per_mw) instead of declaring it infeasible", json_schema_extra={"unit": "",
                                                                                           "group": "facility"})
    liquid_retrofit_usd_per_mw: float = _d("liquid_retrofit_usd_per_mw")
    rack_power_kw: float | None = _f(
        None, "kW", "Rack power limit; empty = by cooling (rack_power_kw_air_containment or rack_power_kw_liquid "
        "in defaults.csv)", group="facility", gt=0, le=2000)
    rack_units_per_rack: float = _d("rack_units_per_rack")
    site_power_mw: float | None = _f(
        None, "MW", "Facility power available to this fleet (IT x PUE); empty = no limit", group="facility",
        gt=0, le=1e5)
    idle_power_fraction: float = _d("idle_power_fraction")
    colocation_usd_per_kw_month: float = _d("colocation_usd_per_kw_month")
    facility_capex_usd_per_kw: float = _d("facility_capex_usd_per_kw")
    facility_depreciation_years: float = _d("facility_depreciation_years")
    electricity_tariff: str | None = Field(
        default=None, max_length=2000, description="Electricity price by hour of day: a tariff id "
        "(data/electricity_tariffs.csv) or 24 prices in USD/kWh, hour 0 first; empty = electricity_usd_per_kwh "
        "every hour", json_schema_extra={"unit": "", "group": "facility"})

    # carbon: grid intensity, embodied emissions, a carbon price
    grid_region: str | None = Field(
        default=None, max_length=100, description="Grid region id (data/grid_carbon.csv) whose intensity applies "
        "when grid_carbon_g_per_kwh is empty; both empty = no carbon figures",
        json_schema_extra={"unit": "", "group": "carbon"})
    grid_carbon_g_per_kwh: float | None = _f(
        None, "gCO2e/kWh", "Grid carbon intensity, annual average; empty = the grid_region's", group="carbon",
        ge=0, le=3000)
    grid_carbon_by_hour: str | None = Field(
        default=None, max_length=2000, description="Grid carbon intensity by hour of day: 24 values in gCO2e/kWh, "
        "hour 0 first; empty = the annual average every hour", json_schema_extra={"unit": "", "group": "carbon"})
    embodied_kgco2e_per_accelerator: float | None = _f(
        None, "kgCO2e", "Embodied (manufacturing) emissions per accelerator including its share of the system, "
        "spread over depreciation_years; empty = the catalog's where it has one", group="carbon",
        catalog_field="embodied_kgco2e", ge=0, le=1e6)
    carbon_usd_per_tonne: float = Field(
        default=0.0, ge=0, le=1e5, description="Carbon price on the fleet's emissions (operational and embodied), "
        "a cost line of its own; 0 = not priced", json_schema_extra={"unit": "USD/tCO2e", "group": "carbon"})

    # model and throughput estimate (used when no measured throughput is given)
    model: str | None = Field(
        default=None, max_length=100, description="Model catalog id (data/models.csv); needed to estimate throughput",
        json_schema_extra={"unit": "", "group": "throughput"})
    precision: Precision = Field(
        default="bf16", description="Weight and compute precision of the estimate: bf16, fp8 or fp4 (the shorthand "
        "for weight_precision and compute_precision equal)", json_schema_extra={"unit": "", "group": "throughput"})
    weight_precision: WeightPrecision | None = Field(
        default=None, description="Format the weights are stored in, for their bytes (memory-bound decode, memory "
        "held): bf16, fp8, int8, fp4, mxfp4 (4.25 bits) or int4 (4.125 bits); empty = precision. A pair with "
        "compute_precision must be one the accelerator runs (data/accelerators.csv weight_compute_pairs)",
        json_schema_extra={"unit": "", "group": "throughput"})
    compute_precision: ComputePrecision | None = Field(
        default=None, description="Format the matrix multiplications run in, for the peak FLOPS: bf16, fp8 or fp4; "
        "empty = precision", json_schema_extra={"unit": "", "group": "throughput"})
    kv_cache_precision: Precision | None = Field(
        default=None, description="KV-cache precision; empty = the compute precision (FP8 for FP4: no engine "
        "measured here keeps an FP4 KV cache)",
        json_schema_extra={"unit": "", "group": "throughput"})
    serving_stack: str = Field(
        default="best", max_length=100,
        description="Serving stack behind the throughput: a stack id (data/serving_stacks.csv: framework, TP/EP, "
        "speculative decoding, disaggregation) or best = the highest published throughput for the pair at the "
        "per-user target", json_schema_extra={"unit": "", "group": "throughput"})
    speculative_draft_tokens: int | None = _f(
        None, "token", "Draft tokens proposed per decode step under speculative decoding (MTP, EAGLE); empty = the "
        "serving stack's (data/serving_stacks.csv), 0 = none", group="throughput", ge=0, le=16)
    speculative_acceptance_rate: float | None = _f(
        None, "-", "Probability each draft token is accepted, independently (Leviathan et al. 2023); empty = the "
        "serving stack's", group="throughput", ge=0, le=1)
    curves_sha256: str | None = Field(
        default=None, max_length=64,
        description="SHA-256 of your own curve file (import-benchmark output, loaded with --curves FILE or uploaded "
        "on the Throughput page): its curves outrank the catalog's for their accelerator, model, precision and "
        "request shape", json_schema_extra={"unit": "", "group": "throughput"})
    throughput_claim: str | None = Field(
        default=None, max_length=100,
        description="A measured figure this throughput refers to (claim id, data/throughput_claims.csv): used while "
        "the accelerator, model, precision and output length are those it was measured for, else looked up again",
        json_schema_extra={"unit": "", "group": "throughput"})
    throughput_measured_for: str | None = Field(
        default=None, max_length=200,
        description="The configuration a given throughput was measured for, accelerator/model/precision (e.g. "
        "h100-sxm/llama-3.1-70b/fp8; the app sets it when you type a figure): the figure is kept when the scenario "
        "runs another one, and throughput_note says so", json_schema_extra={"unit": "", "group": "throughput"})
    target_output_tokens_per_s_per_user: float | None = _f(
        None, "token/s", "Interactivity target: output tokens/s each user sees; empty = the most throughput",
        group="throughput", gt=0, le=1e6)
    accelerators_per_replica: int | None = _f(
        None, "accelerator", "Accelerators holding one copy of the model (tensor parallel); empty = the best size "
        "that fits", group="throughput", ge=1, le=1e4)
    memory_utilization: float = _d("memory_utilization")
    max_batch_size: int = _d("max_batch_size")
    bandwidth_utilization: float | None = _f(
        None, "-", "Share of peak memory bandwidth a decode step achieves; empty = calibrated (data/calibration.csv)",
        group="throughput", gt=0, le=1)
    compute_utilization: float | None = _f(
        None, "-", "Share of peak FLOPS a decode step achieves; empty = calibrated (data/calibration.csv)",
        group="throughput", gt=0, le=1)
    prefill_compute_utilization: float | None = _f(
        None, "-", "Share of peak FLOPS prefill achieves; empty = calibrated (data/calibration.csv)",
        group="throughput", gt=0, le=1)
    step_overhead_us_per_layer: float | None = _f(
        None, "us", "Fixed time per layer of each decode step that batching does not amortise (launches, "
        "all-reduce latency); empty = calibrated (data/calibration.csv)", group="throughput", ge=0, le=1e5)

    # workload and throughput
    input_tokens_per_request: float = _d("input_tokens_per_request")
    output_tokens_per_request: float = _d("output_tokens_per_request")
    prefix_cache_hit_rate: float = _d("prefix_cache_hit_rate")
    output_tokens_per_s_per_accelerator: float | None = _f(
        None, "token/s", "Measured decode throughput per accelerator at the interactivity target; empty = "
        "interpolated on a measured curve or estimated from the model", group="workload", gt=0, le=1e9)
    input_tokens_per_s_per_accelerator: float | None = _f(
        None, "token/s", "Measured prefill throughput per accelerator; empty = the output figure already includes "
        "prefill", group="workload", gt=0, le=1e10)
    measured_output_tokens_per_s_per_user: float | None = _f(
        None, "token/s", "Measured output speed each user sees (e.g. a dataflow system's published figure); with "
        "concurrent_users_per_replica it gives the throughput per accelerator when that is empty", group="workload",
        gt=0, le=1e6)
    concurrent_users_per_replica: float | None = _f(
        None, "user", "Users one replica serves at once at the measured per-user speed (a per-user speed is never "
        "a per-accelerator throughput without it)", group="workload", ge=1, le=1e7)
    measured_speed_context_tokens: float | None = _f(
        None, "token", "Input tokens (context) the measured per-user speed was measured at (the decode pool's, "
        "decode_measured_output_tokens_per_s_per_user, with a decode_accelerator; else "
        "measured_output_tokens_per_s_per_user); with the long_context_* pair the speed falls with context",
        group="workload", gt=0, le=1e8)
    long_context_tokens: float | None = _f(
        None, "token", "A second, longer context the same system's per-user speed was measured at; empty = the "
        "measured speed holds at every context", group="workload", gt=0, le=1e8)
    long_context_output_tokens_per_s_per_user: float | None = _f(
        None, "token/s", "The per-user speed measured at long_context_tokens: the decode step (1 / speed) is taken "
        "linear in the context through the two points", group="workload", gt=0, le=1e6)

    # disaggregated serving: the accelerators above do prefill, a decode pool of another type decodes
    decode_accelerator: str | None = Field(
        default=None, max_length=100, description="Decode pool accelerator catalog id; empty = aggregated serving "
        "(every accelerator does prefill and decode)", json_schema_extra={"unit": "", "group": "disaggregation"})
    decode_accelerator_count: int | None = _f(
        None, "accelerator", "Decode pool size; empty = sized from the output demand at peak (with headroom)",
        group="disaggregation", ge=1, le=1e7)
    decode_output_tokens_per_s_per_accelerator: float | None = _f(
        None, "token/s", "Measured decode throughput per decode accelerator at the interactivity target; empty = "
        "estimated from the model", group="disaggregation", gt=0, le=1e9)
    decode_measured_output_tokens_per_s_per_user: float | None = _f(
        None, "token/s", "Measured output speed each user sees on the decode pool; with "
        "decode_concurrent_users_per_replica it gives the decode throughput per accelerator when that is empty",
        group="disaggregation", gt=0, le=1e6)
    decode_concurrent_users_per_replica: float | None = _f(
        None, "user", "Users one decode replica serves at once at the measured per-user speed",
        group="disaggregation", ge=1, le=1e7)
    decode_accelerators_per_replica: int | None = _f(
        None, "accelerator", "Decode accelerators holding one copy of the model; empty = the chips the model's "
        "weights need, in whole systems", group="disaggregation", ge=1, le=1e4)
    decode_accelerator_price_usd: float | None = _f(
        None, "USD", "Capex per decode accelerator including its share of the system", group="disaggregation",
        catalog_field="price_usd", catalog_id="decode_accelerator", ge=0, le=1e8)
    decode_accelerator_power_kw: float | None = _f(
        None, "kW", "Full-load IT power per decode accelerator including its share of the system",
        group="disaggregation", catalog_field="power_kw", catalog_id="decode_accelerator", gt=0, le=1000)
    decode_rent_usd_per_accelerator_hour: float | None = _f(
        None, "USD/h", "Rental price per decode accelerator-hour (ownership=rent)", group="disaggregation",
        catalog_field="rent_usd_per_hour", catalog_id="decode_accelerator", gt=0, le=10000)
    decode_accelerators_per_system: int | None = _f(
        None, "accelerator", "Decode accelerators per system", group="disaggregation",
        catalog_field="accelerators_per_system", catalog_id="decode_accelerator", ge=1, le=1e5)
    decode_system_power_kw: float | None = _f(
        None, "kW", "Full-load power of one decode system", group="disaggregation", catalog_field="system_power_kw",
        catalog_id="decode_accelerator", gt=0, le=10000)
    decode_accelerator_cooling: Cooling | None = Field(
        default=None, description="Cooling the decode hardware requires: air, liquid or air_or_liquid",
        json_schema_extra={"unit": "", "group": "disaggregation", "catalog_field": "cooling",
                           "catalog_id": "decode_accelerator"})
    decode_reserved_rent_usd_per_accelerator_hour: float | None = _f(
        None, "USD/h", "Reserved rent per decode accelerator-hour (rent_tier=reserved); empty = the catalog's, else "
        "the decode on-demand rent less reserved_discount", group="disaggregation",
        catalog_field="reserved_rent_usd_per_hour", catalog_id="decode_accelerator", gt=0, le=10000)
    decode_spot_rent_usd_per_accelerator_hour: float | None = _f(
        None, "USD/h", "Spot rent per decode accelerator-hour (rent_tier=spot); empty = the catalog's, else the "
        "decode on-demand rent less spot_discount", group="disaggregation", catalog_field="spot_rent_usd_per_hour",
        catalog_id="decode_accelerator", gt=0, le=10000)
    decode_embodied_kgco2e_per_accelerator: float | None = _f(
        None, "kgCO2e", "Embodied emissions per decode accelerator including its share of the system; empty = the "
        "catalog's where it has one", group="disaggregation", catalog_field="embodied_kgco2e",
        catalog_id="decode_accelerator", ge=0, le=1e6)
    kv_link_gb_per_s: float | None = _f(
        None, "GB/s", "Bandwidth available to move KV caches from the prefill pool to the decode pool; empty = "
        "not a limit", group="disaggregation", gt=0, le=1e7)

    # retrofit study (python -m economics retrofit): an existing fleet of `accelerator` and its alternatives
    existing_accelerators: int | None = _f(
        None, "accelerator", "Existing fleet of `accelerator` (already owned; its purchase is sunk)", group="retrofit",
        ge=1, le=1e7)
    existing_book_value_usd: float = Field(
        default=0.0, ge=0, le=1e8, description="Book value per existing accelerator, charged in cost per token "
        "(0 = fully depreciated); never a cash flow", json_schema_extra={"unit": "USD", "group": "retrofit"})
    horizon_years: int = Field(
        default=5, ge=1, le=30, description="Years the options are compared over",
        json_schema_extra={"unit": "year", "group": "retrofit"})
    demand_growth_per_year: float = Field(
        default=0.0, ge=-0.9, le=10, description="Yearly growth of the demand, e.g. 0.3 for 30 %",
        json_schema_extra={"unit": "1/year", "group": "retrofit"})
    residual_value_fraction: float = Field(
        default=0.0, ge=0, le=1, description="Resale value at the horizon of the accelerators an option buys, as a "
        "share of their price; added to its cash flow in the last year (0 = worth nothing then, the default: no "
        "public used-price history per generation was found to source another)",
        json_schema_extra={"unit": "-", "group": "retrofit"})
    rent_change_per_year: float = Field(
        default=0.0, ge=-0.9, le=10, description="Yearly change of the rent per accelerator-hour over the horizon "
        "(year t pays the rent x (1 + change)^(t - 1); -0.2 = 20 % cheaper each year; 0 = flat, the default: the "
        "scenario's rent held; the odds draw it over a sourced range)",
        json_schema_extra={"unit": "1/year", "group": "retrofit"})
    token_price_change_per_year: float = Field(
        default=0.0, ge=-0.99, le=10, description="Yearly change of every selling price per token over the horizon "
        "(year t sells at the price x (1 + change)^(t - 1); -0.5 = half the price each year; 0 = flat, the default: "
        "the scenario's prices held; the odds draw it over a sourced range)",
        json_schema_extra={"unit": "1/year", "group": "retrofit"})
    lease_rate_per_year: float | None = _f(
        None, "1/year", "Yearly lease payment as a share of the price of what an option buys, paid at the end of "
        "each year from the year it is needed to the horizon, in place of the purchase and its resale (e.g. 0.3); "
        "empty = leasing not studied", group="retrofit", gt=0, le=2)
    new_accelerator: str | None = Field(
        default=None, max_length=100, description="New-generation accelerator that replaces the fleet in the "
        "'new generation' option (with a liquid retrofit where needed); empty = option not studied",
        json_schema_extra={"unit": "", "group": "retrofit"})
    fast_tier_min_tokens_per_s_per_user: float | None = _f(
        None, "token/s", "Per-user speed from which output tokens sell at the fast-tier price", group="retrofit",
        gt=0, le=1e6)
    fast_tier_price_multiplier: float = Field(
        default=1.0, ge=0, le=100, description="Price multiplier for the fast tier (1 = no premium)",
        json_schema_extra={"unit": "-", "group": "retrofit"})

    # agent sessions (workload=sessions): the session's shape and the KV tiers that hold its context between turns
    workload: Workload = Field(
        default=Workload.REQUESTS, validate_default=True, description="requests: the request shape and "
        "prefix_cache_hit_rate as given; sessions: multi-turn agent sessions whose growing context is cached in "
        "the KV tiers (the hit rate is computed)", json_schema_extra={"unit": "", "group": "sessions"})
    turns_per_session: float | None = _f(
        None, "turn", "Mean turns of one session (workload=sessions); every session has this many unless "
        "turns_per_session_cv spreads them", group="sessions", ge=1, le=1e5)
    turns_per_session_cv: float = Field(
        default=0.0, ge=0, le=100, description="Coefficient of variation of the turns per session (standard "
        "deviation / mean; workload=sessions): a mix of short and long sessions reads more input per session than "
        "its mean session, E[T^2] = mean^2 (1 + cv^2); 0 = every session the same length",
        json_schema_extra={"unit": "-", "group": "sessions"})
    session_prefix_tokens: float | None = _f(
        None, "token", "Shared prefix every turn of every session reads first: system prompt and tool definitions "
        "(workload=sessions)", group="sessions", ge=0, le=1e8)
    input_tokens_per_turn: float | None = _f(
        None, "token", "New input tokens a turn adds: the user's message or the tool output (workload=sessions)",
        group="sessions", gt=0, le=1e8)
    output_tokens_per_turn: float | None = _f(
        None, "token", "Output tokens a turn writes (workload=sessions)", group="sessions", gt=0, le=1e8)
    seconds_between_turns: float | None = _f(
        None, "s", "Mean idle time between an answer and the next turn (tool or user time), taken exponential "
        "(workload=sessions)", group="sessions", gt=0, le=1e7)
    demand_sessions_per_day: float | None = _f(
        None, "session/day", "Average sessions started per day (workload=sessions); empty = a fixed fleet's "
        "capacity", group="sessions", gt=0, le=1e12)
    ttft_target_s: float | None = _f(
        None, "s", "Time-to-first-token target of every turn of a session (workload=sessions): agents_* count "
        "sessions only where the last (slowest) turn's TTFT is within it; empty = not a constraint",
        group="sessions", gt=0, le=3600)
    ttft_percentile: float = Field(
        default=0.99, gt=0, lt=1, description="Percentile at which a turn's TTFT is reported and held to "
        "ttft_target_s (workload=sessions): the wait for a prefill slot at that percentile (M/G/c, the planner's "
        "queueing model) plus the turn's prefill and loads", json_schema_extra={"unit": "-", "group": "sessions"})
    kv_host_memory_gb_per_system: float = Field(
        default=0.0, ge=0, le=1e6, description="Host DRAM per system holding idle sessions' KV cache "
        "(workload=sessions); 0 = no host tier", json_schema_extra={"unit": "GB", "group": "sessions"})
    kv_host_read_gb_per_s: float | None = _f(
        None, "GB/s", "Read bandwidth from host DRAM into one system's accelerators (PCIe or C2C), needed with a "
        "host tier", group="sessions", gt=0, le=1e5)
    kv_host_memory_usd_per_gb: float | None = _f(
        None, "USD/GB", "Capex of the host tier's DRAM per GB, amortised over depreciation_years at "
        "cost_of_capital; needed with a host tier (0 if already paid for)", group="sessions", ge=0, le=1e5)
    kv_ssd_gb_per_system: float = Field(
        default=0.0, ge=0, le=1e7, description="Local SSD per system holding idle sessions' KV cache "
        "(workload=sessions); 0 = no SSD tier", json_schema_extra={"unit": "GB", "group": "sessions"})
    kv_ssd_read_gb_per_s: float | None = _f(
        None, "GB/s", "Read bandwidth from the local SSDs into one system, needed with an SSD tier",
        group="sessions", gt=0, le=1e5)
    kv_ssd_usd_per_gb: float | None = _f(
        None, "USD/GB", "Capex of the SSD tier per GB, amortised over depreciation_years at cost_of_capital; "
        "needed with an SSD tier (0 if already paid for)", group="sessions", ge=0, le=1e5)
    kv_remote_gb: float = Field(
        default=0.0, ge=0, le=1e9, description="Remote KV store shared by the fleet's systems (workload=sessions); "
        "0 = no remote tier", json_schema_extra={"unit": "GB", "group": "sessions"})
    kv_remote_read_gb_per_s: float | None = _f(
        None, "GB/s", "Read bandwidth from the remote store into one system (its network share), needed with a "
        "remote tier", group="sessions", gt=0, le=1e5)
    kv_remote_usd_per_gb_month: float | None = _f(
        None, "USD/(GB month)", "Price of the remote store per GB-month; needed with a remote tier",
        group="sessions", ge=0, le=1e5)

    # demand
    demand_input_tokens_per_day: float | None = _f(
        None, "token/day", "Average input tokens per day; empty = from output demand x input/output per request",
        group="demand", gt=0, le=1e18)
    demand_output_tokens_per_day: float | None = _f(
        None, "token/day", "Average output tokens per day; empty = from input demand x output/input per request",
        group="demand", gt=0, le=1e18)
    demand_requests_per_s: float | None = _f(
        None, "request/s", "Average requests per second; with the request shape it gives the token demand when "
        "the token fields are empty", group="demand", gt=0, le=1e9)
    peak_to_average: float = _d("peak_to_average")
    headroom: float = _d("headroom")
    demand_profile: str = Field(
        default="flat", max_length=2000, description="Demand over the day: flat, diurnal (busiest hour at "
        "peak_to_average x the average) or 24 relative loads, hour 0 first; weighs hourly prices and grid "
        "intensity (the fleet is sized for peak_to_average, which the busiest hour may not exceed)",
        json_schema_extra={"unit": "", "group": "demand"})

    # selling prices
    price_usd_per_m_input_tokens: float | None = _f(
        None, "USD/M token", "Selling price of uncached input tokens", group="prices", ge=0, le=1e6)
    price_usd_per_m_cached_input_tokens: float | None = _f(
        None, "USD/M token", "Selling price of cached input tokens; empty = the input price", group="prices",
        ge=0, le=1e6)
    price_usd_per_m_output_tokens: float | None = _f(
        None, "USD/M token", "Selling price of output tokens", group="prices", ge=0, le=1e6)

    @field_validator("*", mode="before")
    @classmethod
    def _one_parser(cls, value: Any, info: ValidationInfo) -> Any:
        """Every value read by :func:`economics.schema.values.parse`, as in CSV files and links (empty = the
        default).
        """
        return values.for_model(FIELDS[str(info.field_name)], value)


@dataclass(frozen=True)
class FieldSpec:
    """What the CSV reader, template, schema and UI need to know about one scenario field."""

    name: str
    kind: FieldKind
    optional: bool
    default: Any
    unit: str
    description: str
    group: str
    choices: tuple[str, ...] = ()
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    max_length: int | None = None
    catalog_field: str | None = None
    catalog_id: str | None = None
    default_source: str | None = None

    @property
    def label(self) -> str:
        """Human label for forms: the description's head and the unit, e.g. 'Electricity price [USD/kWh]'."""
        text = re.sub(r"\s*\([^)]*\)", "", self.description.split(";")[0]).strip()
        return f"{text} [{self.unit}]" if self.unit and self.unit != "-" else text

    def within(self, values: Any) -> Any:
        """Whether each value lies within the field's bounds (element-wise for arrays).

        >>> FIELDS["pue"].within(np.array([1.0, 0.9])).tolist()
        [True, False]
        """
        v = np.asarray(values, dtype=float)
        ok = np.isfinite(v)
        for bound, test in ((self.gt, np.greater), (self.ge, np.greater_equal), (self.lt, np.less),
                            (self.le, np.less_equal)):
            if bound is not None:
                ok &= test(v, bound)
        return ok

    def bounds_text(self) -> str:
        """The field's bounds as text, joined by ``and`` (empty when it has none).

        >>> FIELDS["pue"].bounds_text()
        '>= 1 and <= 5'
        """
        parts = []
        if self.gt is not None:
            parts.append(f"> {_num(self.gt)}")
        if self.ge is not None:
            parts.append(f">= {_num(self.ge)}")
        if self.lt is not None:
            parts.append(f"< {_num(self.lt)}")
        if self.le is not None:
            parts.append(f"<= {_num(self.le)}")
        return " and ".join(parts)


def _num(x: float) -> str:
    """Bounds and values as people write them: 10,000,000 rather than 1e+07, 0.5 rather than 0.50000."""
    if float(x).is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    return f"{x:g}"


def show_value(v: object) -> str:
    """A cell value in a message: numbers via :func:`_num`, text as given."""
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) != float("inf"):
        return _num(float(v))
    return str(v)


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _spec(name: str) -> FieldSpec:
    info = Scenario.model_fields[name]
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    ann = info.annotation
    args = () if get_origin(ann) is Literal else get_args(ann)
    optional = type(None) in args
    base = next((a for a in args if a is not type(None)), ann) if args else ann
    kind = FieldKind.STR
    choices: tuple[str, ...] = ()
    if get_origin(base) is Literal:
        kind, choices = FieldKind.CHOICE, tuple(get_args(base))
    elif isinstance(base, type) and issubclass(base, Enum):
        kind, choices = FieldKind.CHOICE, tuple(str(m.value) for m in base)
    elif base is bool:
        kind = FieldKind.BOOL
    elif base is int:
        kind = FieldKind.INT
    elif base is float:
        kind = FieldKind.FLOAT
    bounds: dict[str, Any] = {}
    for m in info.metadata:
        for attr, cls in (("ge", annotated_types.Ge), ("gt", annotated_types.Gt), ("le", annotated_types.Le),
                          ("lt", annotated_types.Lt)):
            if isinstance(m, cls):
                bounds[attr] = float(getattr(m, attr))
        if isinstance(m, annotated_types.MaxLen):
            bounds["max_length"] = m.max_length
    return FieldSpec(
        name=name, kind=kind, optional=optional, default=info.default, unit=str(extra.get("unit", "")),
        description=info.description or "", group=str(extra.get("group", "")), choices=choices,
        catalog_field=_text_or_none(extra.get("catalog_field")), catalog_id=_text_or_none(extra.get("catalog_id")),
        default_source=_text_or_none(extra.get("default_source")), **bounds)


FIELDS: dict[str, FieldSpec] = {name: _spec(name) for name in Scenario.model_fields}
"""Field specs in declaration order: the one source for template, schema, validation and labels."""

CATALOG_FIELDS: dict[str, str] = {f.name: f.catalog_field for f in FIELDS.values() if f.catalog_field}
"""Scenario field -> accelerators.csv field that fills it when empty."""

CATALOG_ID_FIELDS = ("accelerator", "decode_accelerator")
"""The fields holding accelerator catalog ids; each catalog field is filled from one of them (``catalog_id``)."""


def with_changes(scenario: Scenario, **changes: Any) -> dict[str, Any]:
    """The scenario's fields with ``changes`` applied, as a dict for :func:`economics.evaluate_scenario` (which
    validates it and names any bad field).

    Changing the accelerator empties the catalog-filled hardware fields that are not changed explicitly, so the new
    accelerator's own catalog figures apply rather than the old one's.
    """
    data = scenario.model_dump()
    for id_field in CATALOG_ID_FIELDS:
        if id_field in changes and changes[id_field] != data[id_field]:
            data.update(dict.fromkeys(f for f in CATALOG_FIELDS if FIELDS[f].catalog_id == id_field))
    data.update(changes)
    return data
