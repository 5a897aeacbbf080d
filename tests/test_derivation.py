"""Every printed derivation step holds: its substituted arithmetic, re-done from the printed numbers, gives the
printed result (to the printed precision), on random valid rows of every kind.

The re-evaluation (:func:`economics.domain.formula.reevaluate`) reads only the printed text, so this checks what a
reader checks by hand, independently of how the engine computed the value.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from economics import catalog
from economics.domain.explain import Step, Trace, format_number
from economics.domain.formula import reevaluate
from economics.engine.derivation import trace_throughput
from economics.engine.estimate import fill_throughput
from economics.engine.pipeline import compute
from economics.engine.resolve import per_user_throughput
from economics.schema.validation import validate

NUMBER = re.compile(r"-?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?")
"""A printed number: thousands groups, a decimal part, an exponent (a comma followed by a space separates)."""


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


def half_unit(x: float, digits: int) -> float:
    """Half a unit in the last place of ``x`` as the renderers print it: formula terms with six significant digits
    (:func:`economics.domain.formula.format_term`), results and estimator lines with four
    (:func:`economics.domain.explain.format_number`: whole numbers from 1,000 up)."""
    ax = abs(x)
    if ax == 0 or not math.isfinite(ax):
        return 0.0
    e = math.floor(math.log10(ax))
    if digits == 6:
        decimals = max(0, 5 - e) if 1e-4 <= ax < 1e15 else 5 - e
    else:
        decimals = 0 if 999.95 <= ax < 1e15 else 3 - e
    return 0.5 * 10.0 ** -decimals


UNIT = re.compile(r"(?<=[0-9])\s+(?!x\s)[A-Za-z][A-Za-z0-9/%_-]*")
WORDS = re.compile(r"\b(?!(?:min|max|ceil|floor|inf|e|x)\b)[A-Za-z_]+")


def arithmetic(text: str) -> str | None:
    """An estimator line without its units (``70.6 billion x 1 byte`` -> ``70.6 x 1``), or None when what is left
    is not arithmetic (a search or a lookup described in words)."""
    bare = UNIT.sub("", text)
    return None if WORDS.search(NUMBER.sub("", bare)) else bare


def check_step(step: Any, digits: int = 6, text: str | None = None) -> None:
    """The printed line re-done from its printed numbers gives the printed result, within what the printing can
    hide: each number's rounding (half a unit in its last printed place, pushed through the line one number at a
    time) plus the result's own. Numbers written in the formula itself (``/ 1,000``) are exact."""
    printed = step.result()
    assert printed in step.text()
    value = float(printed.split(" ")[0].replace(",", "")) if printed.split(" ")[0] != "n/a" else math.nan
    line = step.substituted if text is None else text
    again = reevaluate(line)
    if math.isnan(value):
        assert math.isnan(again) or math.isinf(again), (step.text(), again)
        return
    if format_number(again) == format_number(step.value):
        return
    exact = Counter(NUMBER.findall(step.symbolic))
    tolerance = half_unit(value, 4)
    for m in NUMBER.finditer(line):
        if exact[m.group()] > 0:
            exact[m.group()] -= 1
            continue
        x = float(m.group().replace(",", ""))
        d = half_unit(x, digits)
        tolerance += max(abs(reevaluate(f"{line[:m.start()]}{x + s * d!r}{line[m.end():]}") - again) for s in (1, -1))
    assert abs(again - value) <= tolerance * (1 + 1e-9) + 1e-12 * abs(value), (
        f"printed step does not hold:\n{step.text()}\nre-evaluated: {again!r}, tolerance {tolerance!r}")


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


def test_the_check_refuses_a_wrong_line_whatever_its_operands() -> None:
    # 8 x 30,000 = 240,000: printed right it holds, printed 240,100 it does not
    check_step(Step("capex", 240_000.0, "USD", "a x b", "8 x 30,000", checked=True))
    with pytest.raises(AssertionError, match="does not hold"):
        check_step(Step("capex", 240_100.0, "USD", "a x b", "8 x 30,000", checked=True))
    # 1,000,000,000,000 - 999,999,999,990 + 3 = 13: printed 20 is wrong by 7, far more than the operands' rounding
    # (half a unit each: 1.0 in all); a tolerance that grew with the largest operand let it pass
    with pytest.raises(AssertionError, match="does not hold"):
        check_step(Step("n", 20.0, "-", "a - b + c", "1,000,000,000,000 - 999,999,999,990 + 3", checked=True))


ESTIMATOR_LINES = {"weight_bytes_per_replica", "weights_gb_per_replica", "kv_bytes_at_full_context",
                   "kv_cache_gb_per_sequence", "max_batch_in_memory", "kv_bytes_at_average_context", "decode_step_s",
                   "prefill_tokens_per_s_per_replica", "input_tokens_per_s_per_accelerator", "mixed_step_s",
                   "output_tokens_per_s_per_user", "output_tokens_per_s_per_accelerator", "prompt_prefill_s",
                   "prefill_share", "queued_prefill_s", "time_to_first_token_s"}
"""The roofline's lines rendered from the formula objects that computed them (checked steps)."""


def estimator_steps(rows: list[dict[str, Any]]) -> list[Any]:
    """The steps ``explain`` records for each row's roofline estimate (rows the roofline answers)."""
    cols, problems = validate(pd.DataFrame(rows))
    assert not problems, [p.message for p in problems]
    thr = fill_throughput(cols)
    steps = []
    for r in np.flatnonzero(thr["feasible"] & (thr["throughput_source"] == "estimated")):
        trace = Trace(int(r))
        trace_throughput(cols, thr, trace)
        steps += trace.steps
    return steps


def check_estimator(steps: list[Any]) -> set[str]:
    """Every line holds: formula steps as every derivation line, the search described in words skipped; returns
    the names of the formula steps."""
    checked = set()
    for step in steps:
        if step.checked:
            check_step(step)
            checked.add(step.name)
        else:  # the batch search: described in words, not arithmetic
            assert arithmetic(step.substituted) is None or step.name != "batch_size", step.text()
    return checked


@pytest.mark.parametrize("model", ["llama-3.1-70b", "llama-3.1-8b", "deepseek-v3", "qwen3-235b-a22b", "gpt-oss-120b"])
def test_the_estimators_printed_lines_hold(model: str) -> None:
    # the roofline's lines re-done from what they print, on every accelerator the roofline describes: each is
    # rendered from the formula that computed it, so each is checked; only the batch search is words
    ids = [a for a in catalog.accelerator_ids() if catalog.accelerator_column(np.array([a]), "roofline", "")[0] != "no"]
    row = {"model": model, "precision": "fp8", "accelerator_count": 64, "ownership": "rent",
           "rent_usd_per_accelerator_hour": 2.0, "target_output_tokens_per_s_per_user": 20,
           "input_tokens_per_request": 2000, "output_tokens_per_request": 300}
    steps = estimator_steps([{**row, "accelerator": a} for a in ids])
    assert {s.name for s in steps if not s.checked} == {"batch_size"}
    assert check_estimator(steps) >= ESTIMATOR_LINES


@pytest.mark.parametrize("stack", ["dynamo-sglang-tp8-ep8-dpa-mtp-disagg", "sglang-tp8-mtp", "trtllm-tp4-ep4",
                                   "dynamo-trtllm-tp8-disagg"])
def test_the_serving_stacks_lines_hold(stack: str) -> None:
    # a pinned stack without a curve at these lengths (3,100 in / 700 out): speculative decoding, DP attention's
    # copied weights, expert parallelism and disaggregation each print their lines, and each holds
    row = {"accelerator": "b200", "model": "deepseek-v3", "accelerator_count": 64, "ownership": "rent",
           "rent_usd_per_accelerator_hour": 2.0, "target_output_tokens_per_s_per_user": 30,
           "input_tokens_per_request": 3100, "output_tokens_per_request": 700, "serving_stack": stack}
    steps = estimator_steps([{**row, "precision": p} for p in ("fp8", "fp4")])
    names = check_estimator(steps)
    assert ("target_step_s" in names) == ("mtp" in stack)
    assert ("prefill_share" in names) == ("disagg" not in stack)
    copied = [s for s in steps if s.name == "weight_bytes_per_replica"]
    assert copied and all(s.substituted.endswith(" + 0") == ("dpa" not in stack) for s in copied)


def test_two_pools_print_each_pools_estimate_and_it_is_the_engines() -> None:
    # prefill on H100, decode on H200, neither measured: each pool's roofline lines are printed under its name, hold,
    # and end on the figure the engine used (the prefill pool's input rate, the decode pool's output rate)
    row = {"accelerator": "h100-sxm", "decode_accelerator": "h200-sxm", "model": "llama-3.1-70b", "precision": "fp8",
           "accelerator_count": 16, "decode_accelerator_count": 16, "target_output_tokens_per_s_per_user": 25,
           "input_tokens_per_request": 3100, "output_tokens_per_request": 700, "demand_output_tokens_per_day": 1e9}
    cols, problems = validate(pd.DataFrame([row]))
    assert not problems
    thr = fill_throughput(cols)
    trace = Trace(0)
    trace_throughput(cols, thr, trace)
    assert check_estimator([s for s in trace.steps if s.name != "prefill_pool_batch_size"
                            and s.name != "decode_pool_batch_size"])
    names = {s.name for s in trace.steps}
    assert {"prefill_pool_prefill_tokens_per_s_per_replica", "decode_pool_decode_step_s"} <= names
    assert trace.step("prefill_pool_input_tokens_per_s_per_accelerator").value == pytest.approx(
        cols["input_tokens_per_s_per_accelerator"][0], rel=1e-12)
    assert trace.step("decode_pool_output_tokens_per_s_per_accelerator").value == pytest.approx(
        cols["decode_output_tokens_per_s_per_accelerator"][0], rel=1e-12)


# --- outputs set by a choice or a zero, and the range ends: each a step of the derivation ---------------------------

FIXED_H100 = {"name": "r", "accelerator": "h100-sxm", "accelerator_count": 64, "accelerator_price_usd": 30000,
              "output_tokens_per_s_per_accelerator": 1000, "demand_output_tokens_per_day": 1e9}


def _explained(row: dict[str, Any]) -> tuple[Trace, pd.Series]:
    import economics  # the public functions, as `explain` calls them

    table = pd.DataFrame([row])
    return economics.explain_row(table, 0), economics.evaluate(table).iloc[0]


def test_the_rack_power_limit_and_systems_per_rack_are_derived() -> None:
    # 40 kW given: an H100 system draws 10.2 kW in 8 rack units, so min(floor(40 / 10.2), floor(42 / 8)) = min(3, 5)
    # = 3 systems a rack; the same row with none given takes the air-cooled racks' limit (defaults.csv
    # rack_power_kw_air_containment, 30 kW: min(floor(30 / 10.2), 5) = 2)
    given, shown = _explained({**FIXED_H100, "rack_power_kw": 40})
    assert (given.step("rack_power_kw_effective").value, given.step("rack_power_kw_effective").note) == (40, "as given")
    assert given.step("systems_per_rack").value == 3 == shown["systems_per_rack"]
    air, shown = _explained(FIXED_H100)
    assert air.step("rack_power_kw_effective").symbolic == "rack_power_kw_air"
    assert air.step("rack_power_kw_effective").value == 30 == shown["rack_power_kw_effective"]
    assert air.step("systems_per_rack").value == 2 == shown["systems_per_rack"]
    for step in (*given.steps, *air.steps):
        if step.checked:
            check_step(step)


def test_the_zero_carbon_retrofit_and_kv_tier_lines_are_derived() -> None:
    # no carbon price, an H100 (air-cooled) in an air hall, a request row: each line 0 by its own formula; priced at
    # 50 USD/t on a 400 g/kWh grid it is the footprint's cost instead (checked against the result, not re-derived)
    trace, shown = _explained(FIXED_H100)
    for name in ("carbon_usd_per_hour", "cooling_retrofit_usd_per_hour", "kv_tiers_usd_per_hour"):
        assert (trace.step(name).symbolic, trace.step(name).value, shown[name]) == ("0", 0, 0), name
    priced, shown = _explained({**FIXED_H100, "grid_carbon_g_per_kwh": 400, "carbon_usd_per_tonne": 50})
    step = priced.step("carbon_usd_per_hour")
    assert step.symbolic.startswith("kgco2e_per_day x carbon_usd_per_tonne") and step.value > 0
    assert step.value == pytest.approx(shown["carbon_usd_per_hour"], rel=1e-12)
    check_step(step)


def test_the_range_ends_are_derived_as_the_result_gives_them() -> None:
    # an estimated throughput (no measured figure): each range output's ends are the smaller and the larger of the
    # output at the estimate's P10 and P90, the last steps of the derivation, equal to the result's cells
    row = {"name": "r", "accelerator": "h100-sxm", "model": "llama-3.1-70b", "precision": "fp8",
           "target_output_tokens_per_s_per_user": 20, "demand_output_tokens_per_day": 1e9}
    trace, shown = _explained(row)
    for name in ("cost_usd_per_m_tokens", "accelerators", "facility_power_kw"):
        low, high = trace.step(f"{name}_low"), trace.step(f"{name}_high")
        assert low.symbolic == f"min({name}_at_p10, {name}_at_p90)"
        assert (low.value, high.value) == (shown[f"{name}_low"], shown[f"{name}_high"])
        assert low.value <= trace.step(name).value <= high.value
        check_step(low)
        check_step(high)
