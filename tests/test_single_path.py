"""The single-scenario path (:func:`economics.evaluate_scenario`, :func:`economics.engine.batch.resolve_scenario`) gives
what the table path gives for the same row: the same inputs, outputs, warnings, feasibility and problems.

The single path skips the table's per-column parsing (a ``Scenario`` is parsed by the same parser and bounds) and
builds its result without pandas; these tests hold the two paths to the same answer, exactly, on random rows of
every kind. The numbers themselves are checked against hand-worked values in ``test_golden.py``.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

import economics
from economics.engine.batch import ScenarioError, evaluate_scenario, evaluate_variants, resolve_scenario
from economics.schema.outputs import RANGE_OUTPUTS
from tests.test_derivation import rows


def same(a: Any, b: Any) -> bool:
    if a is None or a is pd.NA:
        return b is None or b is pd.NA
    if isinstance(a, float) or isinstance(b, float):
        return b is not None and b is not pd.NA and (float(a) == float(b) or math.isclose(a, b, rel_tol=1e-15))
    return bool(a == b)


def table_row(scenario: dict[str, Any]) -> dict[str, Any]:
    """The row :func:`economics.evaluate` gives for the scenario with every field as a column."""
    frame = pd.DataFrame([economics.Scenario.model_validate(scenario).model_dump()])
    result = economics.evaluate(frame)
    return {str(k): (None if v is pd.NA else v) for k, v in result.iloc[0].to_dict().items()}


def assert_same(scenario: dict[str, Any]) -> None:
    table = table_row(scenario)
    if not table["valid"]:
        with pytest.raises(ScenarioError) as caught:
            evaluate_scenario(scenario)
        assert "; ".join(p.message for p in caught.value.problems) == table["error"]
        return
    single = evaluate_scenario(scenario)
    assert list(single) == list(table)  # same columns, same order
    for k, v in table.items():
        assert same(v, single[k]), (k, v, single[k])
        assert type(single[k]) in (type(v), type(None)) or v is None, (k, type(v), type(single[k]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows())
def test_single_path_equals_the_table_row(row: dict[str, Any]) -> None:
    # 300 random rows of every kind: aggregated and two pools, per-user speeds, every demand form, site limits
    assert_same(row)


STACKS = ["best", "vllm-0.6-tp8", "", "trtllm-1.0-tp8", "sglang-0.5.9-tp4-ep4", "dynamo-trtllm-0.8.1-tp8-ep8-disagg"]
MODELS = ["llama-3.1-8b", "llama-3.1-70b", "deepseek-v3", "minimax-m2", "qwen3-30b-a3b"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(MODELS), st.sampled_from(["h100-sxm", "h200-sxm", "b200", "mi300x", "a100-sxm"]),
       st.sampled_from([20.0, 50.0, 200.0, 5000.0]), st.sampled_from(STACKS),
       st.sampled_from(["own", "rent"]), st.integers(1, 5000), st.floats(1.0, 2.0), st.floats(0.0, 5.0),
       st.sampled_from(["", "h200-sxm", "sn50"]))
def test_single_path_equals_the_table_row_when_throughput_is_estimated(
        model: str, acc: str, speed: float, stack: str, ownership: str, count: int, pue: float, price: float,
        decode: str) -> None:
    # estimated throughput (roofline or curve, one pool or two), infeasible speeds (5,000 token/s per user) and
    # unknown stacks; the fields the estimate never reads (ownership, count, PUE, price) vary, so an estimate
    # remembered for one of them and reused for another must still give the table's row
    assert_same({"model": model, "accelerator": acc, "precision": "fp8", "accelerator_count": count,
                 "target_output_tokens_per_s_per_user": speed, "serving_stack": stack, "ownership": ownership,
                 "pue": pue, "price_usd_per_m_output_tokens": price, "demand_output_tokens_per_day": 1e9,
                 "decode_accelerator": decode, "decode_accelerator_price_usd": 40000 if decode else None})


ENDS = tuple(f"{name}_{end}" for name in RANGE_OUTPUTS for end in ("low", "high"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(MODELS), st.sampled_from(["h100-sxm", "b200", "mi300x"]), st.sampled_from([20.0, 200.0]),
       st.sampled_from([None, 64]), st.sampled_from(["", "h200-sxm"]), st.floats(1e8, 1e12))
def test_without_range_ends_every_other_output_is_the_same(model: str, acc: str, speed: float, count: int | None,
                                                            decode: str, demand: float) -> None:
    # range_ends=False (the planner's rates) leaves the six ends empty and changes nothing else, on the single path
    # and the table's; estimated rows (one pool or two, fixed or sized), so the ends are there to leave out
    scenario = {"model": model, "accelerator": acc, "precision": "fp8", "accelerator_count": count,
                "target_output_tokens_per_s_per_user": speed, "demand_output_tokens_per_day": demand,
                "decode_accelerator": decode, "decode_accelerator_price_usd": 40000 if decode else None}
    try:
        full = evaluate_scenario(scenario)
    except ScenarioError:
        # an end beyond the largest fleet refuses the row (without the ends it may be computed): the draw is discarded,
        # not counted as a pass, so were every draw refused hypothesis would fail the test as unsatisfiable
        reject()
    lean = evaluate_scenario(scenario, range_ends=False)
    assert list(lean) == list(full)
    assert all(lean[k] is None for k in ENDS)
    assert {k: v for k, v in lean.items() if k not in ENDS} == {k: v for k, v in full.items() if k not in ENDS}
    frame = pd.DataFrame([economics.Scenario.model_validate(scenario).model_dump()])
    table, lean_table = economics.evaluate(frame), economics.evaluate(frame, range_ends=False)
    assert lean_table[list(ENDS)].isna().all().all()
    pd.testing.assert_frame_equal(lean_table.drop(columns=list(ENDS)), table.drop(columns=list(ENDS)))


def test_range_ends_left_out_on_an_estimate() -> None:
    # llama-3.1-70b FP8 on 8 H100s: the estimate has a range, so its ends are given, unless left out
    scenario = {"model": "llama-3.1-70b", "precision": "fp8", "accelerator_count": 8}
    full, lean = evaluate_scenario(scenario), evaluate_scenario(scenario, range_ends=False)
    assert full["throughput_source"] == "estimated" and full["accelerators_low"] == 8
    assert full["cost_usd_per_m_tokens_low"] < full["cost_usd_per_m_tokens"] < full["cost_usd_per_m_tokens_high"]
    assert lean["cost_usd_per_m_tokens_low"] is None and lean["cost_usd_per_m_tokens"] == full["cost_usd_per_m_tokens"]


def test_a_remembered_estimate_is_never_shared_between_results() -> None:
    s = {"model": "llama-3.1-70b", "precision": "fp8", "accelerator_count": 8}
    first = resolve_scenario(s)
    tokens = float(first["output_tokens_per_s_per_accelerator"][0])
    assert tokens > 0
    first["output_tokens_per_s_per_accelerator"][0] = -1.0  # a caller writing into its columns
    again = resolve_scenario(s | {"price_usd_per_m_output_tokens": 2.0})  # the estimate is reused
    assert float(again["output_tokens_per_s_per_accelerator"][0]) == tokens
    assert evaluate_scenario(s)["output_tokens_per_s_per_accelerator"] == tokens


@pytest.mark.parametrize("scenario", [
    {"accelerator": " H100-SXM ", "accelerator_count": 8, "output_tokens_per_s_per_accelerator": 1000},
    {"accelerator": "h100-sxmm", "accelerator_count": 8, "output_tokens_per_s_per_accelerator": 1000},
    {"accelerator": "h100-sxm", "model": "no-such-model", "accelerator_count": 8},
    {"accelerator": "h100-sxm", "accelerator_count": 8},
    {"accelerator": "tpu-v7", "ownership": "own", "accelerator_count": 8, "output_tokens_per_s_per_accelerator": 9},
    {"decode_accelerator": "sn50", "accelerator_count": 8, "output_tokens_per_s_per_accelerator": 1000},
    {"output_tokens_per_s_per_accelerator": 0.001, "demand_output_tokens_per_day": 1e15},
    {"accelerator": "gb200-nvl72", "accelerator_count": 720, "output_tokens_per_s_per_accelerator": 1000,
     "facility_cooling": "air", "allow_liquid_retrofit": False},
    {"accelerator_count": 8, "output_tokens_per_s_per_accelerator": 1000, "site_power_mw": 0.001},
    {"measured_output_tokens_per_s_per_user": 50, "accelerator_count": 8, "model": "llama-3.1-70b"},
], ids=["spaces and case", "unknown accelerator", "unknown model", "no throughput", "no price in catalog",
        "decode pool without figures", "count overflow", "rack too hot for air", "site too small",
        "per-user speed without concurrency"])
def test_single_path_equals_the_table_row_on_edge_cases(scenario: dict[str, Any]) -> None:
    assert_same(scenario)


def test_every_preset_gives_the_same_row() -> None:
    for scenario, _note in economics.preset_scenarios().values():
        assert_same(scenario.model_dump())


def test_resolved_columns_feed_variants() -> None:
    # 8 accelerators at 1,000 output token/s: capacity 8 x 1,000 x 86,400 = 691.2 M token/day; a demand of
    # 172.8 M and 345.6 M token/day is 25 % and 50 % of it
    base = resolve_scenario({"accelerator": "H100-SXM", "accelerator_count": 8,
                             "output_tokens_per_s_per_accelerator": 1000})
    out = evaluate_variants(base, demand_output_tokens_per_day=[172.8e6, 345.6e6])
    assert [round(float(u), 12) for u in out["utilization"]] == [0.25, 0.5]
    assert base["accelerator"].tolist() == ["h100-sxm"]


def test_the_estimate_reads_no_field_declared_unread() -> None:
    # a field of ESTIMATE_IGNORES read (``c["x"]``, ``c.get("x")``) or tested (``"x" in c``) anywhere in the
    # estimate's modules would make a remembered estimate stale when that field changes; at run time such a read
    # raises (tested below), and here no module's text may hold one
    import pathlib
    import re

    from economics.engine.batch import ESTIMATE_IGNORES
    root = pathlib.Path(__file__).resolve().parent.parent / "economics"
    for module in ("engine/estimate.py", "engine/roofline.py", "engine/replicas.py", "domain/throughput.py",
                   "domain/architecture.py", "domain/capacity.py", "domain/precision.py"):  # what the estimate imports
        text = (root / module).read_text(encoding="utf-8")
        reads = sorted(f for f in ESTIMATE_IGNORES if re.search(
            rf"""\[\s*["']{f}["']\s*\](?!\s*=[^=])|\.get\(\s*["']{f}["']|["']{f}["']\s+(?:not\s+)?in\s""", text))
        assert reads == [], (module, reads)


def test_a_read_of_a_field_declared_unread_is_an_error() -> None:
    from economics.engine.batch import _EstimateColumns
    cols = _EstimateColumns({"model": 1})
    for touch in (lambda: cols["pue"], lambda: "pue" in cols, lambda: cols.get("pue")):
        with pytest.raises(LookupError, match="pue"):
            touch()
    assert cols["model"] == 1 and "model" in cols
