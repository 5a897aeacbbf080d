"""Every printed derivation step holds: its substituted arithmetic, re-done from the printed numbers, gives the
printed result (to the printed precision), on random valid rows of every kind.

The re-evaluation (:func:`economics.domain.formula.reevaluate`) reads only the printed text, so this checks what a
reader checks by hand, independently of how the engine computed the value.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from economics.domain.explain import Trace, format_number
from economics.domain.formula import reevaluate
from economics.engine.estimate import fill_throughput
from economics.engine.pipeline import compute
from economics.engine.resolve import per_user_throughput
from economics.validation import validate

NUMBER = re.compile(r"-?[0-9][0-9,]*(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?")


def pos(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False)


KINDS = ("aggregated", "two pools", "two pools, decode count", "two pools, link")


@st.composite
def rows(draw: st.DrawFn) -> dict[str, Any]:
    """A valid row of one kind: aggregated or disaggregated (decode count given or sized, KV link or not),
    fixed or sized fleet, owned or rented, demand as tokens, requests or none, with or without prices."""
    kind = draw(st.sampled_from(KINDS))
    s: dict[str, Any] = {
        "accelerator": draw(st.sampled_from(["a100-sxm", "h100-sxm", "h200-sxm", "b200", "gb200-nvl72"])),
        "ownership": draw(st.sampled_from(["own", "rent"])),
        "accelerator_price_usd": draw(pos(1e3, 1e6)),
        "rent_includes_energy": draw(st.booleans()),
        "cost_of_capital": draw(st.sampled_from([0.0, 0.05]) | pos(0.0, 0.3)),
        "electricity_usd_per_kwh": draw(pos(0.0, 0.5)),
        "pue": draw(st.none() | pos(1.0, 2.5)),
        "facility_cooling": draw(st.sampled_from(["air", "liquid", "hybrid"])),
        "allow_liquid_retrofit": draw(st.booleans()),
        "idle_power_fraction": draw(pos(0.0, 1.0)),
        "input_tokens_per_request": draw(st.sampled_from([0.0]) | pos(1.0, 20000.0)),
        "output_tokens_per_request": draw(pos(1.0, 4000.0)),
        "prefix_cache_hit_rate": draw(st.sampled_from([0.0, 1.0]) | pos(0.0, 1.0)),
        "output_tokens_per_s_per_accelerator": draw(pos(10.0, 20000.0)),
        "input_tokens_per_s_per_accelerator": draw(st.none() | pos(100.0, 200000.0)),
        "peak_to_average": draw(pos(1.0, 4.0)),
        "headroom": draw(pos(0.0, 0.5)),
        "round_to_whole_systems": draw(st.booleans()),
        "price_usd_per_m_input_tokens": draw(st.none() | pos(0.0, 10.0)),
        "price_usd_per_m_output_tokens": draw(st.none() | pos(0.0, 40.0)),
        "site_power_mw": draw(st.none() | pos(0.01, 100.0)),
    }
    if kind != "aggregated":
        s["decode_accelerator"] = draw(st.sampled_from(["h200-sxm", "b200", "sn50", "a100-sxm"]))
        s["decode_output_tokens_per_s_per_accelerator"] = draw(pos(10.0, 20000.0))
        s["decode_accelerator_price_usd"] = draw(pos(1e3, 1e6))
        s["decode_rent_usd_per_accelerator_hour"] = draw(pos(0.5, 20.0))
        s["input_tokens_per_s_per_accelerator"] = draw(pos(100.0, 200000.0))
        s["model"] = draw(st.sampled_from(["llama-3.1-70b", "deepseek-v3", "minimax-m2"]))
        s["precision"] = "fp8"
    if draw(st.booleans()):  # a measured per-user speed and its concurrency instead of a per-accelerator figure
        pre = "decode_" if kind != "aggregated" else ""
        s[f"{pre}output_tokens_per_s_per_accelerator"] = None
        s[f"{pre}measured_output_tokens_per_s_per_user"] = draw(pos(10.0, 2000.0))
        s[f"{pre}concurrent_users_per_replica"] = draw(pos(1.0, 512.0))
        s["model"] = draw(st.sampled_from(["llama-3.1-8b", "llama-3.1-70b"]))
        s["precision"] = "fp8"
    if kind == "two pools, decode count":
        s["decode_accelerator_count"] = draw(st.integers(min_value=1, max_value=5000))
    if kind == "two pools, link":
        s["decode_accelerator_count"] = draw(st.none() | st.integers(min_value=1, max_value=5000))
        s["kv_link_gb_per_s"] = draw(pos(0.01, 500.0))
    demand = draw(st.sampled_from(["output", "input", "both", "requests", "none"]))
    if demand == "none" and (kind != "aggregated" and s.get("decode_accelerator_count") is None):
        demand = "output"
    if demand == "input" and s["input_tokens_per_request"] == 0:
        demand = "both"
    if demand in ("output", "both"):
        s["demand_output_tokens_per_day"] = draw(pos(1e3, 1e12))
    if demand in ("input", "both"):
        s["demand_input_tokens_per_day"] = draw(pos(1e3, 1e12))
    if demand == "requests":
        s["demand_requests_per_s"] = draw(pos(0.01, 1e5))
    if demand == "none" or draw(st.booleans()):
        s["accelerator_count"] = draw(st.integers(min_value=1, max_value=100_000))
    return s


def check_step(step: Any) -> None:
    printed = step.result()
    assert printed in step.text()
    value = float(printed.split(" ")[0].replace(",", "")) if printed.split(" ")[0] != "n/a" else math.nan
    again = reevaluate(step.substituted)
    if math.isnan(value):
        assert math.isnan(again) or math.isinf(again), (step.text(), again)
        return
    numbers = [abs(float(t.replace(",", ""))) for t in NUMBER.findall(step.substituted)] or [0.0]
    # six significant digits per printed number: each term carries up to 5e-6 relative rounding
    slack = 1e-5 * max(numbers) * len(numbers)
    if format_number(again) == format_number(step.value):
        return
    near = abs(again - value) <= 5e-4 * abs(value) + slack or abs(again - step.value) <= 5e-4 * abs(step.value) + slack
    assert near, f"printed step does not hold:\n{step.text()}\nre-evaluated: {again!r}"


def traced_steps(table: pd.DataFrame) -> list[tuple[int, Any]]:
    cols, problems = validate(table)
    assert not problems, [p.message for p in problems]
    out = []
    for r in range(len(table)):
        trace = Trace(r)
        one = {k: v.copy() for k, v in cols.items()}
        per_user_throughput(one, trace)
        fill_throughput(one)
        compute(one, trace)
        out += [(r, s) for s in trace.steps if s.checked]
    return out


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows())
def test_every_printed_step_holds(row: dict[str, Any]) -> None:
    # 1,000 random rows, every kind, every step each row prints
    steps = traced_steps(pd.DataFrame([row]))
    names = {s.name for _, s in steps}
    assert {"cost_usd_per_m_tokens", "utilization", "accelerators", "facility_power_kw"} <= names
    for _, step in steps:
        check_step(step)


def test_the_issue_rows_print_arithmetic_that_holds() -> None:
    # the rows of the report: disaggregated (balanced), link-bound; their printed lines used to be wrong
    base = {"accelerator": "h100-sxm", "accelerator_count": 8, "accelerator_price_usd": 30000.0,
            "input_tokens_per_s_per_accelerator": 20000.0, "decode_accelerator": "h200-sxm",
            "decode_output_tokens_per_s_per_accelerator": 3000.0, "demand_output_tokens_per_day": 1e9,
            "input_tokens_per_request": 400.0, "output_tokens_per_request": 400.0, "model": "llama-3.1-70b",
            "precision": "fp8", "cost_of_capital": 0.1}
    table = pd.DataFrame([base, {**base, "kv_link_gb_per_s": 0.001, "decode_accelerator_count": 8}])
    steps = traced_steps(table)
    for _, step in steps:
        check_step(step)
    by_row = {(r, s.name): s for r, s in steps}
    # capital: both pools, and the line says so: prefill 8 x 30,000 + decode 8 x H200 price
    capital = by_row[(0, "capital_usd_per_hour")]
    assert capital.symbolic == "prefill_capital_usd_per_hour + decode_capital_usd_per_hour"
    assert by_row[(0, "facility_power_kw")].symbolic == "it_power_kw x pue_effective"
    assert by_row[(0, "it_power_kw")].symbolic == "main_it_power_kw + decode_it_power_kw"
    # link-bound: utilization is the served share of the prefill pool's time, not min(work, capacity)
    util = by_row[(1, "utilization")]
    assert util.symbolic.startswith("min(1, served_fraction x work_accelerator_s_per_day")
    served = by_row[(1, "served_fraction")].value
    assert served < 1
    assert by_row[(1, "capacity_ratio")].symbolic == (
        "min(main_pool_capacity_ratio, decode_pool_capacity_ratio, kv_link_capacity_ratio)")


def test_reevaluate_reads_only_arithmetic() -> None:
    assert reevaluate("max(1, ceil(1,000,000 x 2 / 86,400))") == 24.0
    assert np.isclose(reevaluate("0.1 / (1 - (1 + 0.1) ^ (-5))"), 0.263797, rtol=1e-5)
    try:
        reevaluate("__import__('os')")
    except ValueError:
        pass
    else:
        raise AssertionError("reevaluate must refuse anything but arithmetic")
