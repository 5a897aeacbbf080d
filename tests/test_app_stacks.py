"""The serving stack in the app (``streamlit.testing``): the Throughput page names the stack behind the figure and
draws every stack's measured front; pinning a stack changes the figure to that stack's own curve; the Fleet
comparison names each accelerator's stack."""

from __future__ import annotations

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

import economics
from economics.engine import measured
from tests.test_app import start, static_table
from tests.test_app_throughput import PAIR, metric
from ui.format import EMPTY

SLOW = {**PAIR, "target_output_tokens_per_s_per_user": "22", "accelerator_count": "64"}


@pytest.fixture
def page() -> AppTest:
    return start("throughput", SLOW)


def _chart_stacks(at: AppTest) -> dict[str, set[bool]]:
    """Each serving stack drawn on the interactivity chart with its ``chosen`` flags, read from the chart's data as
    it draws them: the ``role`` its opacity and size encode ("chosen" or "other stack")."""
    out: dict[str, set[bool]] = {}
    for ds in at.get("vega_lite_chart")[0].proto.datasets:
        table = pa.ipc.open_stream(ds.data.data).read_all()
        if "serving_stack" in table.column_names:
            for stack, role in zip(table["serving_stack"].to_pylist(), table["role"].to_pylist(), strict=True):
                out.setdefault(stack, set()).add(role == "chosen")
    return out


def test_best_names_the_stack_and_draws_every_stacks_front(page: AppTest) -> None:
    assert not page.exception
    # at 22 tokens/s per user the published front answers between the Dynamo + TRT-LLM disaggregated run's point and
    # TensorRT-LLM MTP's, and names both stacks (#40 item 4; tests/test_stacks.py)
    expected = economics.evaluate_scenario(economics.with_changes(
        economics.default_scenario(), accelerator="h200-sxm", model="deepseek-v3", precision="fp8",
        input_tokens_per_request=1024, output_tokens_per_request=1024, target_output_tokens_per_s_per_user=22.0,
        output_tokens_per_s_per_accelerator=None, input_tokens_per_s_per_accelerator=None,
        demand_input_tokens_per_day=None, demand_output_tokens_per_day=None, accelerator_count=64))
    assert metric(page, "Output tokens/s per accelerator") == f"{expected['output_tokens_per_s_per_accelerator']:,.0f}"
    both = {"dynamo-trtllm-tp8-ep8-disagg", "trtllm-tp8-ep8-mtp"}
    assert any("Serving stack: `dynamo-trtllm-tp8-ep8-disagg / trtllm-tp8-ep8-mtp`" in c.value for c in page.caption)
    # every stack's front for the pair, the chosen one highlighted
    stacks = _chart_stacks(page)
    here = {cv.stack for cv in measured.curves() if (cv.accelerator, cv.model, cv.precision) == (
        "h200-sxm", "deepseek-v3", "fp8")}
    assert set(stacks) == here and all(stacks[s] == {True} for s in both)
    assert all(chosen == {False} for stack, chosen in stacks.items() if stack not in both)


def test_pinning_a_stack_gives_its_own_figure(page: AppTest) -> None:
    page.text_input(key="serving_stack").set_value("sglang-0.5.9-tp8").run()
    assert not page.exception
    expected = economics.evaluate_scenario(economics.with_changes(
        economics.default_scenario(), accelerator="h200-sxm", model="deepseek-v3", precision="fp8",
        input_tokens_per_request=1024, output_tokens_per_request=1024, target_output_tokens_per_s_per_user=22.0,
        output_tokens_per_s_per_accelerator=None, input_tokens_per_s_per_accelerator=None,
        demand_input_tokens_per_day=None, demand_output_tokens_per_day=None, accelerator_count=64,
        serving_stack="sglang-0.5.9-tp8"))
    assert metric(page, "Output tokens/s per accelerator") == f"{expected['output_tokens_per_s_per_accelerator']:,.0f}"
    # SGLang TP8's measured 1k/1k front does not reach down to 22 tokens/s per user: the roofline with its terms,
    # and the page says so
    assert any("Serving stack: `sglang-0.5.9-tp8 (roofline with its terms" in c.value for c in page.caption)


def test_an_unknown_stack_is_named_with_a_suggestion(page: AppTest) -> None:
    page.text_input(key="serving_stack").set_value("sglang-0.5.9-tp9").run()
    assert not page.exception
    shown = [e.value for e in page.error] + [w.value for w in page.warning]
    assert any("serving_stack" in v and "sglang-0.5.9-tp8" in v for v in shown), shown


def test_fleet_comparison_names_each_accelerators_stack() -> None:
    at = start("fleet", {**SLOW, "settings.compare": "h200-sxm,mi355x"})
    assert not at.exception
    stacks = {row["Accelerator"]: row["Serving stack"] for row in static_table(at, "Rank")}
    # best (default): each accelerator with its own best published stack at 22 tokens/s per user, labelled
    # at 22 the published front answers, bracketed by two stacks' points and naming both (tests/test_stacks.py)
    assert stacks["h200-sxm"] == "dynamo-trtllm-tp8-ep8-disagg / trtllm-tp8-ep8-mtp"
    assert stacks["mi355x"] not in ("", EMPTY)
    # one stack pinned for all: every accelerator on it (its curve, or the roofline with its terms, said)
    pinned = start("fleet", {**SLOW, "serving_stack": "sglang-0.5.9-tp8", "settings.compare": "h200-sxm,mi355x"})
    table = static_table(pinned, "Rank")
    assert table and all(row["Serving stack"].startswith("sglang-0.5.9-tp8") for row in table)
