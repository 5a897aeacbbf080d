"""The output schema: every output of an evaluation with its unit, label, description and display format.

The single source of truth for outputs, as :data:`economics.schema.scenario.FIELDS` is for inputs: the docs' output
table, the CLI's ``fields`` command, the result columns of :func:`economics.engine.batch.evaluate`, the app's tables
(``st.column_config``), KPIs, cost breakdowns and difference tables all read it.

Each output's display format (``fmt``) is a :class:`DisplayFormat`, which every presentation layer maps to its
own formatting (the report's and the app's tables are keyed by it, tests/test_one_rule.py holds each to it).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntFlag, StrEnum
from typing import Self


class DisplayFormat(StrEnum):
    """How a value is shown to people: the one list of display formats, which each presentation layer maps to its own
    formatting (:data:`economics.report.format.FORMATTERS` for text, the app's column formats in ``ui/common.py``).

    - ``usd`` money (``$1.2 M``), ``usd_rate`` a price or unit cost (``$0.42``: two significant digits below $1);
    - ``count`` a whole number with thousands separators; ``number`` about four significant digits;
    - ``percent`` a fraction shown as percent (a change in percentage points); ``months`` a duration in months;
    - ``text`` words; ``bool`` true/false (✓/✗).

    The value is the word the documents show.

    >>> DisplayFormat("usd_rate") is DisplayFormat.USD_RATE, [f.value for f in DisplayFormat][:3]
    (True, ['usd', 'usd_rate', 'count'])
    """

    USD = "usd"
    USD_RATE = "usd_rate"
    COUNT = "count"
    NUMBER = "number"
    PERCENT = "percent"
    MONTHS = "months"
    TEXT = "text"
    BOOL = "bool"


_USD, _USD_RATE, _COUNT, _PERCENT, _TEXT, _BOOL = (DisplayFormat.USD, DisplayFormat.USD_RATE, DisplayFormat.COUNT,
                                                   DisplayFormat.PERCENT, DisplayFormat.TEXT, DisplayFormat.BOOL)
"""The schema's tables below name each output's format by these (shorter than the members read off the class)."""


@dataclass(frozen=True)
class OutputSpec:
    """One output: ``name`` [``unit``], how people read it and how it behaves.

    ``optional``: may be legitimately empty (no price given, no input tokens, power unknown for a cloud rent...),
    otherwise always a finite number for a valid row. ``integer``: a whole count. ``cost_part``: the label of a
    part of the hourly cost (the parts add up to ``cost_usd_per_hour``). ``capex``: a capital charge.
    ``difference``: listed when a scenario is compared with a baseline. ``key``: shown in short result tables.
    ``kpi``: shown as a headline figure. ``higher_is_better``: the direction of a good change (None: neutral).
    """

    name: str
    unit: str
    label: str
    description: str
    fmt: DisplayFormat = DisplayFormat.NUMBER
    optional: bool = False
    integer: bool = False
    cost_part: str = ""
    capex: bool = False
    difference: bool = False
    key: bool = False
    kpi: bool = False
    higher_is_better: bool | None = None
    numeric: bool = True


def _o(name: str, unit: str, label: str, description: str, **kw: object) -> OutputSpec:
    return OutputSpec(name, unit, label, description, **kw)  # type: ignore[arg-type]


_NUMERIC: tuple[OutputSpec, ...] = (
    _o("accelerators", "accelerator", "Accelerators", "Accelerators of the main (prefill, or aggregated) pool: "
       "as given, or sized from the peak demand in whole replicas (and systems)", fmt=_COUNT, integer=True,
       difference=True, key=True, kpi=True, higher_is_better=False),
    _o("capacity_requests_per_s_per_accelerator", "request/s", "Capacity per accelerator",
       "Requests per second one accelerator of the main pool carries at the request shape, limited by the binding "
       "pool and the KV link", optional=True),
    _o("work_accelerator_s_per_day", "accelerator-s/day", "Work of the main pool",
       "Accelerator-seconds per day the demand needs on the main pool (prefill, plus decode when aggregated)"),
    _o("capacity_input_tokens_per_day", "token/day", "Input capacity",
       "Input tokens per day the fleet can serve at the demand's mix (binding pool and link)"),
    _o("capacity_output_tokens_per_day", "token/day", "Output capacity",
       "Output tokens per day the fleet can serve at the demand's mix (binding pool and link)"),
    _o("served_input_tokens_per_day", "token/day", "Input tokens served", "min(demand, capacity), input side"),
    _o("served_cached_input_tokens_per_day", "token/day", "Cached input tokens served",
       "Served input tokens answered from the prefix cache"),
    _o("served_output_tokens_per_day", "token/day", "Output tokens served", "min(demand, capacity), output side",
       difference=True, key=False, higher_is_better=True),
    _o("served_fraction", "-", "Share of demand served", "min(1, capacity / demand): below 1 the fleet cannot "
       "serve the whole demand and turns the rest away", fmt=_PERCENT, difference=True, higher_is_better=True),
    _o("utilization", "-", "Utilization", "Average busy share of the main pool's accelerators", fmt=_PERCENT,
       difference=True, key=True, kpi=True, higher_is_better=True),
    _o("input_time_share", "-", "Input share of cost",
       "Share of the cost charged to input tokens: prefill time / all device time (aggregated), or the prefill "
       "pool's cost / both pools' cost (disaggregated); empty when prefill is not separable", fmt=_PERCENT,
       optional=True),
    _o("capital_usd_per_hour", "USD/h", "Capital", "Hardware capex x CRF / 8,760 h, both pools", fmt=_USD,
       cost_part="capital", capex=True),
    _o("energy_usd_per_hour", "USD/h", "Energy", "Average IT power x PUE x electricity price, both pools",
       fmt=_USD, cost_part="energy"),
    _o("facility_usd_per_hour", "USD/h", "Facility", "Colocation or own-facility capex per provisioned IT kW",
       fmt=_USD, cost_part="facility"),
    _o("operations_usd_per_hour", "USD/h", "Operations", "Maintenance share of capex plus software per accelerator",
       fmt=_USD, cost_part="operations"),
    _o("rent_usd_per_hour", "USD/h", "Rent", "Rented accelerator-hours, both pools, at the tier's rent (on demand, "
       "reserved or spot)", fmt=_USD, cost_part="rent"),
    _o("spot_availability", "-", "Spot availability", "Share of its hours a spot replica serves: MTBI / (MTBI + "
       "recovery); the fleet sized from demand carries 1 / availability as many; empty unless rent_tier=spot",
       fmt=_PERCENT, optional=True),
    _o("reserved_idle_usd_per_day", "USD/day", "Reserved hours unused", "Reserved rent paid for hours the fleet is "
       "idle: rent x 24 h x (1 - utilization), both pools; empty unless rent_tier=reserved", fmt=_USD,
       optional=True, higher_is_better=False),
    _o("reserved_commitment_usd", "USD", "Reservation commitment", "Rent owed over the reservation's term whether "
       "used or not: rent x 8,760 h x reserved_term_years; empty unless rent_tier=reserved", fmt=_USD,
       optional=True),
    _o("cooling_retrofit_usd_per_hour", "USD/h", "Cooling retrofit",
       "Liquid-cooling retrofit capex per MW of retrofitted IT power, amortised", fmt=_USD,
       cost_part="cooling retrofit", capex=True),
    _o("carbon_usd_per_hour", "USD/h", "Carbon", "The footprint (operational and embodied) at carbon_usd_per_tonne; "
       "0 when carbon is not priced", fmt=_USD, cost_part="carbon"),
    _o("kv_tiers_usd_per_hour", "USD/h", "KV tiers", "Host DRAM and SSD KV tiers (capex per GB amortised as the "
       "hardware) and the remote store (per GB-month); 0 unless workload=sessions", fmt=_USD, cost_part="KV tiers"),
    _o("cost_usd_per_hour", "USD/h", "Cost per hour", "Whole fleet, every hour: the sum of the cost parts",
       fmt=_USD, difference=True, higher_is_better=False),
    _o("cost_usd_per_day", "USD/day", "Cost per day", "Cost per hour x 24", fmt=_USD, difference=True, key=True,
       kpi=True, higher_is_better=False),
    _o("cost_usd_per_year", "USD/year", "Cost per year", "Cost per day x 365", fmt=_USD),
    _o("cost_usd_per_m_tokens", "USD/M token", "Cost per M tokens",
       "Cost per day / tokens served per day (input + output) x 1,000,000", fmt=_USD_RATE, difference=True,
       key=True, kpi=True, higher_is_better=False),
    _o("cost_usd_per_m_input_tokens", "USD/M token", "Cost per M input tokens",
       "Cost charged to input tokens / input tokens served; empty when prefill is not separable (no prefill "
       "throughput) or no input tokens are served", fmt=_USD_RATE, optional=True, difference=True,
       higher_is_better=False),
    _o("cost_usd_per_m_output_tokens", "USD/M token", "Cost per M output tokens",
       "Cost charged to output tokens / output tokens served; empty when prefill is not separable", fmt=_USD_RATE,
       optional=True, difference=True, higher_is_better=False),
    _o("revenue_usd_per_day", "USD/day", "Revenue per day",
       "Served tokens x selling prices, cached input at its own price; empty without a price", fmt=_USD,
       optional=True, difference=True, key=True, kpi=True, higher_is_better=True),
    _o("profit_usd_per_day", "USD/day", "Profit per day", "Revenue - cost", fmt=_USD, optional=True,
       difference=True, higher_is_better=True),
    _o("cost_profit_margin", "-", "Margin on cost", "(revenue - cost) / cost", fmt=_PERCENT, optional=True,
       higher_is_better=True),
    _o("gross_margin", "-", "Gross margin", "(revenue - cost) / revenue", fmt=_PERCENT, optional=True,
       difference=True, key=True, kpi=True, higher_is_better=True),
    _o("break_even_utilization", "-", "Break-even utilization",
       "Utilization at which revenue covers cost, limited by the binding pool and the KV link; above 1 = not "
       "reachable", fmt=_PERCENT, optional=True, higher_is_better=False),
    _o("break_even_price_usd_per_m_output_tokens", "USD/M token", "Break-even output price",
       "Output price at which revenue covers cost at today's served volume", fmt=_USD_RATE, optional=True),
    _o("cost_usd_per_session", "USD/session", "Cost per session", "Cost per day / sessions served per day; empty "
       "unless workload=sessions", fmt=_USD_RATE, optional=True, difference=True, higher_is_better=False),
    _o("sessions_served_per_day", "session/day", "Sessions served", "Output tokens served / output tokens per "
       "session; empty unless workload=sessions", optional=True, higher_is_better=True),
    _o("input_tokens_per_session", "token", "Input tokens per session", "Every turn's full context: T (S + u) + "
       "(u + o) T (T - 1) / 2; empty unless workload=sessions", optional=True),
    _o("cached_input_tokens_per_session", "token", "Cached input tokens per session", "The shared prefix where the "
       "KV tiers hold it, and earlier turns whose KV survived the idle gap; empty unless workload=sessions",
       optional=True, higher_is_better=True),
    _o("prefill_tokens_per_session", "token", "Prefilled tokens per session", "Input tokens per session recomputed: "
       "new input and context no tier held; empty unless workload=sessions", optional=True, higher_is_better=False),
    _o("kv_hit_rate", "-", "KV hit rate", "Cached / input tokens per session (used as prefix_cache_hit_rate); empty "
       "unless workload=sessions", fmt=_PERCENT, optional=True, difference=True, higher_is_better=True),
    _o("kv_hit_rate_hbm", "-", "KV hit rate, HBM", "Share of a session's input tokens found in HBM", fmt=_PERCENT,
       optional=True),
    _o("kv_hit_rate_host", "-", "KV hit rate, host DRAM", "Share of a session's input tokens found in host memory",
       fmt=_PERCENT, optional=True),
    _o("kv_hit_rate_ssd", "-", "KV hit rate, SSD", "Share of a session's input tokens found on local SSD",
       fmt=_PERCENT, optional=True),
    _o("kv_hit_rate_remote", "-", "KV hit rate, remote", "Share of a session's input tokens found in the remote "
       "store", fmt=_PERCENT, optional=True),
    _o("cost_usd_per_m_fresh_input_tokens", "USD/M token", "Cost per M fresh input tokens", "Prefill's share of "
       "the device cost / input tokens prefilled; empty unless workload=sessions", fmt=_USD_RATE, optional=True,
       higher_is_better=False),
    _o("cost_usd_per_m_cached_input_tokens", "USD/M token", "Cost per M cached input tokens", "The KV tiers' cost "
       "/ cached input tokens (a hit takes no device time); empty unless workload=sessions", fmt=_USD_RATE,
       optional=True, higher_is_better=False),
    _o("input_output_ratio", "-", "Input:output ratio", "Input tokens per session / output tokens per session; "
       "empty unless workload=sessions", optional=True),
    _o("min_output_tokens_per_s_per_user", "token/s", "Slowest turn's speed", "Per-user decode speed at the last "
       "turn's context (the longest); empty unless workload=sessions with a per-user speed", optional=True,
       higher_is_better=True),
    _o("output_tokens_per_s_per_user_at_context", "token/s", "Per-user speed at the context", "The measured "
       "per-user speed read on its two-point curve (long_context_*) at the request's input tokens (a session: the "
       "mean turn's context); empty without a curve", optional=True, higher_is_better=True),
    _o("decode_output_tokens_per_s_per_user_at_context", "token/s", "Decode per-user speed at the context", "The "
       "decode pool's measured per-user speed read on its two-point curve (long_context_*) at the request's input "
       "tokens; empty without a curve", optional=True, higher_is_better=True),
    _o("ttft_last_turn_s", "s", "Last turn's TTFT", "At ttft_percentile: the wait for a prefill slot, new input "
       "and missed context prefilled, context found below HBM loaded at the tier's bandwidth; empty unless "
       "workload=sessions", optional=True, higher_is_better=False),
    _o("prefill_wait_s", "s", "Wait for a prefill slot", "A turn's wait for one of the replicas' prefill slots at "
       "ttft_percentile (M/G/c, the planner's queueing model) at the load agents are counted at; empty unless "
       "workload=sessions", optional=True, higher_is_better=False),
    _o("slo_load_fraction", "-", "Load held at the TTFT target", "Share of full load at which agents are counted: "
       "1, or the highest share at which ttft_last_turn_s is within ttft_target_s; empty unless workload=sessions",
       fmt=_PERCENT, optional=True, higher_is_better=True),
    _o("agents_at_slo", "session", "Agents at the SLO", "Concurrent sessions the fleet holds at full load (Little's "
       "law) with every turn within the SLO; empty unless workload=sessions and the SLO holds", optional=True,
       higher_is_better=True),
    _o("agents_per_accelerator", "session/accelerator", "Agents per accelerator", "Agents at the SLO / "
       "accelerators", optional=True, higher_is_better=True),
    _o("agents_per_mw", "session/MW", "Agents per MW", "Agents at the SLO / facility MW", optional=True,
       higher_is_better=True),
    _o("agents_per_usd_per_hour", "session/(USD/h)", "Agents per USD/h", "Agents at the SLO / cost per hour",
       optional=True, higher_is_better=True),
    _o("agents_per_rack", "session/rack", "Agents per rack", "Agents at the SLO / racks", optional=True,
       higher_is_better=True),
    _o("kv_hbm_free_gb_per_system", "GB", "HBM for idle sessions", "HBM per system left after the weights and the "
       "running batch at full load; empty unless workload=sessions", optional=True),
    _o("kv_host_capex_usd_per_system", "USD", "KV host tier capex per system", "Host DRAM tier bought for one "
       "system: GB x USD/GB; empty unless workload=sessions", fmt=_USD, optional=True),
    _o("kv_ssd_capex_usd_per_system", "USD", "KV SSD tier capex per system", "SSD tier bought for one system: GB x "
       "USD/GB; empty unless workload=sessions", fmt=_USD, optional=True),
    _o("kv_host_usd_per_hour", "USD/h", "KV host tier", "Host DRAM tier: systems x GB x USD/GB x CRF / 8,760 h",
       fmt=_USD, optional=True),
    _o("kv_ssd_usd_per_hour", "USD/h", "KV SSD tier", "SSD tier: systems x GB x USD/GB x CRF / 8,760 h", fmt=_USD,
       optional=True),
    _o("kv_remote_usd_per_hour", "USD/h", "KV remote store", "Remote store: GB x USD/GB-month x 12 / 8,760 h",
       fmt=_USD, optional=True),
    _o("it_power_kw", "kW", "IT power (provisioned)", "Full-load IT power of both pools", optional=True,
       difference=False),
    _o("facility_power_kw", "kW", "Facility power (provisioned)", "IT power x PUE", optional=True, difference=True,
       key=True, kpi=True, higher_is_better=False),
    _o("average_it_power_kw", "kW", "IT power (average)", "Average IT draw between idle and full by load",
       optional=True),
    _o("energy_mwh_per_year", "MWh/year", "Energy per year", "Average IT power x PUE x 8,760 h", optional=True),
    _o("systems", "system", "Systems", "Whole systems (servers or racks-scale systems) of both pools", fmt=_COUNT,
       integer=True, optional=True, key=True),
    _o("systems_per_rack", "system", "Systems per rack", "Limited by the rack's power and space; a rack-scale "
       "system fills a rack of its own", fmt=_COUNT, integer=True, optional=True),
    _o("racks", "rack", "Racks", "Racks of both pools", fmt=_COUNT, integer=True, optional=True, difference=True,
       key=True, higher_is_better=False),
    _o("kw_per_rack", "kW", "IT power per rack", "IT power / racks", optional=True),
    _o("pue_effective", "-", "PUE", "Given, or following the facility's cooling (after any retrofit)"),
    _o("rack_power_kw_effective", "kW", "Rack power limit", "Given, or by the cooling of the racks", optional=True),
    _o("tokens_per_s_per_mw", "token/s/MW", "Tokens/s per provisioned MW",
       "Tokens served per second / provisioned facility power (IT x PUE at full load)", optional=True,
       higher_is_better=True),
    _o("tokens_per_s_per_average_mw", "token/s/MW", "Tokens/s per average MW",
       "Tokens served per second / average facility power (average IT x PUE)", optional=True,
       higher_is_better=True),
    _o("joules_per_token", "J/token", "Energy per token (average power)",
       "Average facility power x 86,400 s / tokens served per day", optional=True, difference=True,
       higher_is_better=False),
    _o("joules_per_token_provisioned", "J/token", "Energy per token (provisioned power)",
       "Provisioned facility power x 86,400 s / tokens served per day", optional=True, higher_is_better=False),
    _o("electricity_usd_per_kwh_effective", "USD/kWh", "Electricity price paid", "Energy cost / energy drawn: the "
       "hours' prices weighted by the hours' draw (electricity_tariff and demand_profile); empty at a flat price",
       fmt=_USD_RATE, optional=True),
    _o("grid_carbon_g_per_kwh_effective", "gCO2e/kWh", "Grid intensity of the energy drawn", "Operational "
       "emissions / energy drawn: the hours' intensities weighted by the hours' draw; empty without a grid intensity",
       optional=True),
    _o("operational_kgco2e_per_m_tokens", "kgCO2e/M token", "Operational emissions per M tokens", "Facility energy "
       "(IT x PUE) x grid intensity / tokens served x 1,000,000; empty without a grid intensity", optional=True,
       difference=True, higher_is_better=False),
    _o("embodied_kgco2e_per_m_tokens", "kgCO2e/M token", "Embodied emissions per M tokens", "Accelerators x embodied "
       "footprint / (depreciation_years x 365) / tokens served per day x 1,000,000; empty without an embodied figure "
       "or a grid intensity", optional=True, higher_is_better=False),
    _o("kgco2e_per_m_tokens", "kgCO2e/M token", "Emissions per M tokens", "Operational + embodied (operational only "
       "where no embodied figure is known, with a warning); empty without a grid intensity", optional=True,
       difference=True, higher_is_better=False),
    _o("tco2e_per_year", "tCO2e/year", "Emissions per year", "The footprint per day x 365 / 1,000", optional=True,
       difference=True, higher_is_better=False),
    _o("decode_accelerators", "accelerator", "Decode accelerators",
       "Decode pool: as given, or sized from the output demand at peak", fmt=_COUNT, integer=True, optional=True,
       key=True),
    _o("decode_utilization", "-", "Decode utilization", "Average busy share of the decode pool", fmt=_PERCENT,
       optional=True),
    _o("prefill_pool_cost_usd_per_hour", "USD/h", "Prefill pool cost", "Hourly cost of the prefill pool",
       fmt=_USD, optional=True),
    _o("decode_pool_cost_usd_per_hour", "USD/h", "Decode pool cost", "Hourly cost of the decode pool", fmt=_USD,
       optional=True),
    _o("kv_transfer_gb_per_s", "GB/s", "KV transfer", "Average KV-cache traffic from prefill to decode pool",
       optional=True),
    _o("kv_transfer_mb_per_request", "MB", "KV per request", "Prompt tokens x KV bytes per token", optional=True),
)

RANGE_OUTPUTS: dict[str, str] = {
    "cost_usd_per_m_tokens": "Cost per million tokens", "accelerators": "Accelerators of the main pool",
    "facility_power_kw": "Facility power"}
"""Outputs also given at both ends of an estimated throughput's range (``<name>_low``, ``<name>_high``), with the
words their description starts with; unit, label and format are the output's own."""
_BY_NAME = {spec.name: spec for spec in _NUMERIC}
_NUMERIC = (*_NUMERIC, *(
    _o(f"{name}_{end}", _BY_NAME[name].unit, f"{_BY_NAME[name].label}, {end}", f"{what} at the {end} end of the "
       "estimated throughput's range (throughput_basis; P10 and P90 of the estimate's error on points the fit never "
       "saw); empty where the throughput was measured", optional=True, integer=_BY_NAME[name].integer,
       fmt=_BY_NAME[name].fmt)
    for name, what in RANGE_OUTPUTS.items() for end in ("low", "high")))

THROUGHPUT: tuple[OutputSpec, ...] = (
    _o("throughput_source", "text", "Throughput source", "measured (given), measured claim, measured curve, your "
       "measured curve or estimated", fmt=_TEXT,
       optional=True, numeric=False),
    _o("throughput_curve", "text", "Measured record", "The measured curve interpolated or the claim used, if any "
       "(a curve of yours: its file name and SHA-256 first; 'published front ...': every stack's points pooled, "
       "between two runs' points named in throughput_note)", fmt=_TEXT, optional=True, numeric=False),
    _o("throughput_date", "text", "Measured on", "The date of the measured record (its run, or the source's date)",
       fmt=_TEXT, optional=True, numeric=False),
    _o("serving_stack_used", "text", "Serving stack", "The serving stack behind the throughput "
       "(data/serving_stacks.csv): the best published one at the per-user target, the pinned one (its measured curve, "
       "or the roofline with its terms), or 'roofline' where no published stack covers the pair; 'A / B' where the "
       "published front between two stacks' points answers",
       fmt=_TEXT, optional=True, numeric=False),
    _o("output_tokens_per_s_per_user", "token/s", "Per-user speed", "Output tokens/s each user sees",
       optional=True),
    _o("batch_size", "sequence", "Batch size", "Sequences decoded at once per replica (estimate)", optional=True),
    _o("time_to_first_token_s", "s", "Time to first token", "Prefill time of one prompt (estimate)",
       optional=True),
    _o("decode_bound", "text", "Decode bound", "memory or compute (estimate)", fmt=_TEXT, optional=True,
       numeric=False),
    _o("weights_gb_per_replica", "GB", "Weights per replica", "Model weights held by one replica", optional=True),
    _o("kv_cache_gb_per_sequence", "GB", "KV cache per sequence", "At the request's full context", optional=True),
    _o("max_batch_in_memory", "sequence", "Most sequences in memory", "Memory cap on the batch", optional=True),
    _o("throughput_note", "text", "Throughput note", "Why a named record (curves_sha256, throughput_claim) did not "
       "answer, a given figure measured for another configuration, or why the cost is not split", fmt=_TEXT,
       optional=True, numeric=False),
    _o("throughput_basis", "text", "Estimate basis", "Where an estimated throughput stands: calibrated on N "
       "measured points of its accelerator family (with the error and the P10-P90 range of its points predicted with "
       "their published table left out of the fit), or no measured point on the family (the leave-one-family-out "
       "range); says when the factors were fitted on the other model "
       "class", fmt=_TEXT, optional=True, numeric=False),
    _o("output_tokens_per_s_per_accelerator_p10", "token/s", "Throughput, P10", "Estimated output tokens/s per "
       "accelerator (of the decode pool where disaggregated) x the P10 of measured / estimated (throughput_basis); "
       "empty where measured", optional=True),
    _o("output_tokens_per_s_per_accelerator_p90", "token/s", "Throughput, P90", "As the P10, at the P90",
       optional=True),
    _o("estimated_prefill_tokens_per_s_per_accelerator", "token/s", "Estimated prefill rate", "The roofline's "
       "prefill rate used to split a measured figure's cost between input and output tokens (estimate)",
       optional=True),
)

STATUS: tuple[OutputSpec, ...] = (
    _o("feasible", "true/false", "Feasible", "Cooling, rack power, site power and memory fit", fmt=_BOOL,
       optional=True, key=True, numeric=False),
    _o("infeasible_reason", "text", "Why infeasible", "The binding constraint with its numbers", fmt=_TEXT,
       optional=True, numeric=False),
    _o("warnings", "text", "Warnings", "Assumptions the result rests on", fmt=_TEXT, optional=True, numeric=False),
    _o("valid", "true/false", "Valid", "The row's inputs passed validation", fmt=_BOOL, numeric=False),
    _o("error", "text", "Error", "Every problem, naming field and value", fmt=_TEXT, optional=True, numeric=False),
)

OUTPUTS: dict[str, OutputSpec] = {s.name: s for s in (*_NUMERIC, *THROUGHPUT, *STATUS)}

RANGED_INPUTS = ("output_tokens_per_s_per_accelerator", "input_tokens_per_s_per_accelerator",
                 "decode_output_tokens_per_s_per_accelerator")
"""The throughput columns an estimate fills: for the ``*_low`` and ``*_high`` outputs each is scaled by its own
pool's ratio, held in the resolved column :func:`ratio_column`."""


def ratio_column(end: str, name: str) -> str:
    """The resolved column holding the ratio that scales ``name`` at the ``low`` or ``high`` end of the range.

    >>> ratio_column("low", "input_tokens_per_s_per_accelerator")
    '_low_ratio:input_tokens_per_s_per_accelerator'
    """
    return f"_{end}_ratio:{name}"
"""Every output by name, in report order."""

NUMERIC_OUTPUTS: tuple[str, ...] = tuple(s.name for s in _NUMERIC)
"""The engine's numeric outputs, in report order."""


def cost_parts() -> dict[str, str]:
    """Output name -> label of each part of the hourly cost (they add up to ``cost_usd_per_hour``).

    >>> list(cost_parts().values())[:3]
    ['capital', 'energy', 'facility']
    """
    return {s.name: s.cost_part for s in OUTPUTS.values() if s.cost_part}


def names(flag: str) -> tuple[str, ...]:
    """Outputs whose boolean attribute ``flag`` is set, in report order.

    >>> names("kpi")[:2]
    ('accelerators', 'utilization')
    """
    return tuple(s.name for s in OUTPUTS.values() if getattr(s, flag))


def label(name: str) -> str:
    """The label people read, with the unit: ``Cost per M tokens [USD/M token]``.

    >>> label("cost_usd_per_m_tokens"), label("utilization")
    ('Cost per M tokens [USD/M token]', 'Utilization [%]')
    """
    s = OUTPUTS[name]
    unit = "%" if s.fmt is _PERCENT else s.unit
    return s.label if unit in ("-", "text", "true/false") else f"{s.label} [{unit}]"


def markdown_table() -> str:
    """The docs' output table (name, unit, meaning)."""
    lines = ["| output | unit | meaning |", "|---|---|---|"]
    lines += [f"| `{s.name}` | {s.unit} | {s.description} |" for s in OUTPUTS.values()]
    return "\n".join(lines)


class Flag(IntFlag):
    """A warning or a problem a row can carry: one bit (the member's value: its place in the enum), so one integer
    column holds a row's set and a million rows look their text up per distinct set, and its ``text``. Reordering
    members reorders only the bits and the order texts are joined in, never which text a row gets.
    """

    text: str

    def __new__(cls, text: str) -> Self:
        """The member of ``text``, on the next bit."""
        bit = 1 << len(cls._member_names_)  # the members defined before this one
        member = int.__new__(cls, bit)
        member._value_ = bit
        member.text = text
        return member


class RowWarning(Flag):
    """The warnings of an evaluated row, joined with '; ' in this order in its ``warnings`` cell."""

    OVER_CAPACITY = "average demand exceeds the fleet's capacity: served tokens are capped at capacity"
    PEAK_OVER_CAPACITY = "peak demand (peak_to_average x average) exceeds the fleet's capacity"
    NO_DEMAND = "no demand given: the fleet is assumed busy all the time (utilization 1)"
    NO_PREFILL_FIGURE = ("no prefill throughput given: the output throughput is taken to include prefill, so the "
                         "cost cannot be split between input and output tokens (cost_usd_per_m_tokens covers both)")
    BREAK_EVEN_UNREACHABLE = ("break-even utilization is not reachable at these prices (above 1, or above what the "
                              "binding decode pool or KV link allows)")
    NO_PRICE = "no selling price given: revenue and margins are not computed"
    ROOFLINE_CALIBRATED = ("throughput estimated by the roofline model, calibrated on measured points of this "
                           "accelerator family (throughput_basis gives the points, the held-out error and the range; "
                           "*_low and *_high carry it)")
    FROM_CURVE = "throughput interpolated on a measured curve (see throughput_curve)"
    OUTSIDE_MEASURED_RANGE = ("the target is outside the measured range of a matching curve: no extrapolation, the "
                              "roofline estimate is used")
    KV_LINK_BOTTLENECK = ("the KV-cache link between the prefill and decode pools is the bottleneck (see "
                          "kv_transfer_gb_per_s)")
    DEMAND_FROM_SHAPE = ("token demand inferred from the request shape (input_tokens_per_request, "
                         "output_tokens_per_request)")
    NO_INPUT_PRICE = "no input price given: input tokens are priced at 0"
    NO_OUTPUT_PRICE = "no output price given: output tokens are priced at 0"
    ROOFLINE_UNSEEN_FAMILY = ("throughput estimated by the roofline model on an accelerator family with no measured "
                              "point: the factors are other families' (throughput_basis gives the range to expect; "
                              "*_low and *_high carry it)")
    CLASS_MISMATCH = ("the family's factors were fitted mostly on the other model class (dense vs "
                      "mixture-of-experts): see throughput_basis")
    NO_EMBODIED_FIGURE = ("no embodied emissions figure for this hardware (embodied_kgco2e_per_accelerator): the "
                          "footprint counts operational emissions only")
    TIER_ON_OWNED = ("rent_tier is for a rented fleet: this row is owned (ownership=own), so its tier and the "
                     "tier's rents and settings are not used")
    RESERVED_SETTINGS_UNUSED = ("reserved_discount or reserved_term_years is set but rent_tier is not reserved: not "
                                "used")
    SPOT_SETTINGS_UNUSED = ("spot_discount, spot_mtbi_hours or spot_recovery_hours is set but rent_tier is not spot: "
                            "not used")
    NO_RUNNING_BATCH = ("no per-user speed (target_output_tokens_per_s_per_user or an estimate) or no memory figure "
                        "to size the running batch: no HBM is counted for idle sessions' KV")
    SLO_NOT_MET = ("workload=sessions: the slowest (last) turn misses the SLO (min_output_tokens_per_s_per_user below "
                   "target_output_tokens_per_s_per_user, or ttft_last_turn_s above ttft_target_s or not known): "
                   "agents_* are empty; a higher per-user target (a smaller batch) speeds up every turn")


class FleetProblem(Flag):
    """Why a fleet cannot be built, one clause each, joined with '; ' in this order (fields in braces are the
    row's figures).
    """

    COOLING = ("cooling: {accelerator} requires liquid cooling and the facility is air-cooled; set "
               "allow_liquid_retrofit to add it at {retrofit_usd_per_mw} USD/MW")
    RACK_POWER = ("rack power: one {accelerator} system draws {system_kw} kW, over the {rack_kw} kW rack limit")
    DECODE_COOLING = ("cooling: decode accelerator {decode_accelerator} requires liquid cooling and the facility is "
                      "air-cooled; set allow_liquid_retrofit to add it at {retrofit_usd_per_mw} USD/MW")
    DECODE_RACK_POWER = ("rack power: one {decode_accelerator} system draws {decode_system_kw} kW, over the "
                         "{decode_rack_kw} kW rack limit")
    INPUT_WITHOUT_SHAPE = ("demand: input tokens per day are given but input_tokens_per_request is 0, so the output "
                           "demand cannot be inferred; give demand_output_tokens_per_day")
    DECODE_UNSIZED = ("decode pool: with no demand given, the decode pool cannot be sized; give "
                      "decode_accelerator_count or a demand")
    SITE_POWER = ("site power: the fleet needs {need_mw} MW (IT {it_mw} MW x PUE {pue}) but {have_mw} MW is "
                  "available; short by {short_mw} MW")

