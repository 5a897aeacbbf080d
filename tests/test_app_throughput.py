"""The Throughput page under ``streamlit.testing``: the curve's KPIs follow the inputs; impossible pairs explain;
a scenario without a model is told the curve needs one."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import economics
from economics.studies import calibration
from tests.test_app import start, static_table

PAIR = {"accelerator": "h200-sxm", "model": "deepseek-v3", "precision": "fp8", "input_tokens_per_request": "1024",
        "output_tokens_per_request": "1024", "target_output_tokens_per_s_per_user": "50",
        "output_tokens_per_s_per_accelerator": "", "input_tokens_per_s_per_accelerator": "",
        "demand_input_tokens_per_day": "", "demand_output_tokens_per_day": "", "accelerator_count": "8"}


@pytest.fixture
def page() -> AppTest:
    return start("throughput", PAIR)


def metric(at: AppTest, label: str) -> str:
    return str(next(m.value for m in at.metric if m.label == label))


def test_pair_shows_measured_curve_kpis_and_calibration(page: AppTest) -> None:
    # H200 x DeepSeek-V3 FP8 at 1k/1k and 50 tokens/s per user lies inside a measured curve
    expected = economics.evaluate_scenario(economics.with_changes(
        economics.default_scenario(), accelerator="h200-sxm", model="deepseek-v3", precision="fp8",
        input_tokens_per_request=1024, output_tokens_per_request=1024, target_output_tokens_per_s_per_user=50.0,
        output_tokens_per_s_per_accelerator=None, input_tokens_per_s_per_accelerator=None,
        demand_input_tokens_per_day=None, demand_output_tokens_per_day=None, accelerator_count=8))
    assert metric(page, "Output tokens/s per accelerator") == f"{expected['output_tokens_per_s_per_accelerator']:,.0f}"
    assert any("measured curve" in c.value for c in page.caption)
    assert any("Calibration scope **nvidia-hopper**" in m.value for m in page.markdown)
    assert len(page.get("vega_lite_chart")) == 2
    # the accelerator's calibration points: a closed panel whose grid is not sent until it is opened
    points = calibration.report()[0]
    assert not page.dataframe
    page.session_state["settings"] = {**page.session_state["settings"], "open": ("calibration",)}
    page.run()
    assert len(page.dataframe[0].value) == (points["accelerator"] == "h200-sxm").sum() > 0


def test_changing_the_target_changes_throughput(page: AppTest) -> None:
    before = metric(page, "Output tokens/s per accelerator")
    page.text_input(key="target_output_tokens_per_s_per_user").set_value("90").run()
    assert not page.exception
    assert metric(page, "Output tokens/s per accelerator") != before


def test_model_that_does_not_fit_explains_instead_of_failing(page: AppTest) -> None:
    page.selectbox(key="accelerator").set_value("a100-sxm").run()
    page.selectbox(key="model").set_value("llama-3.1-405b").run()
    page.selectbox(key="precision").set_value("bf16").run()
    assert not page.exception
    assert any("does not fit" in e.value for e in page.error), [e.value for e in page.error]


def test_precision_the_hardware_lacks_is_named(page: AppTest) -> None:
    page.selectbox(key="accelerator").set_value("h100-sxm").run()
    page.selectbox(key="precision").set_value("fp4").run()
    assert any("has no fp4 peak" in e.value for e in page.error), [e.value for e in page.error]


def test_a_scenario_without_a_model_is_offered_one() -> None:
    at = start("throughput", {"model": "", "output_tokens_per_s_per_accelerator": "2000"})
    assert any("needs" in i.value or "has none" in i.value for i in at.info)
    assert at.selectbox(key="model").value is None
    at.selectbox(key="model").set_value("llama-3.1-70b").run()
    assert len(at.get("vega_lite_chart")) >= 1


# --- your own benchmark, and figures tied to their configuration ---------------------------------------------------

def _mine() -> economics.CurveFile:
    from pathlib import Path

    fixture = Path(__file__).resolve().parent / "fixtures" / "benchmarks" / "sglang_bench_serving.jsonl"
    table = economics.import_benchmark([fixture], accelerator="h200-sxm", accelerators=8, precision="fp8")
    return economics.load_curves(economics.curves_csv(table).encode(), "mine.csv")


def test_a_loaded_curve_drives_the_kpis_and_is_named_on_every_page() -> None:
    mine = _mine()  # this process is the server the app runs in: the curve file is loaded here
    link = {**PAIR, "curves_sha256": mine.sha256, "target_output_tokens_per_s_per_user": str(1000 / 16.4839)}
    at = start("throughput", link)
    # its measured point: 939.218 output tokens/s over 8 GPUs = 117.4
    assert metric(at, "Output tokens/s per accelerator") == "117"
    # named as the file is held in this process: an earlier test may have loaded the same bytes under another name
    assert any(f"your measured curve {mine.label}" in c.value for c in at.caption)
    cost = start("cost", link)
    want = economics.evaluate_scenario({**economics.default_scenario().model_dump(), **{
        k: (None if v == "" else v) for k, v in link.items()}})
    assert metric(cost, "Cost per M tokens") == economics_usd(want["cost_usd_per_m_tokens"])
    assert any(f"your measured curve {mine.label}" in c.value for c in cost.caption)
    without = start("cost", {**link, "curves_sha256": ""})
    assert metric(without, "Cost per M tokens") != metric(cost, "Cost per M tokens")


def economics_usd(x: float) -> str:
    from ui import format as fmt

    return fmt.usd_rate(x)


def test_a_link_naming_a_file_this_server_lacks_asks_for_it() -> None:
    at = start("throughput", {**PAIR, "curves_sha256": "cd" * 32})
    assert any("does not hold: upload the same benchmark file" in w.value for w in at.warning)
    assert any("not loaded" in e.value for e in at.error) and not at.metric
    assert at.button(key="use_benchmark") is not None  # the upload is offered before the page stops


def test_a_model_change_never_keeps_another_configurations_figure() -> None:
    at = start("cost")
    base = economics.evaluate_scenario(economics.default_scenario())
    assert base["throughput_curve"] == "nim18-h100-llama33-70b-fp8-tp2-5k500"
    # the default splits its cost between input and output tokens
    assert metric(at, "Cost per M input tokens").startswith("$") and metric(at, "Cost per M output tokens")[0] == "$"
    at.selectbox(key="model").set_value("llama-2-70b").run()
    assert not at.exception
    edited = economics.evaluate_scenario({**at.session_state["scenario"]})
    assert edited["throughput_curve"] != base["throughput_curve"]
    assert edited["output_tokens_per_s_per_accelerator"] != base["output_tokens_per_s_per_accelerator"]
    assert at.session_state["scenario"]["name"].startswith("edited from: Owned H100 fleet")
    assert any("Edited from the preset" in c.value and "Owned H100 fleet" in c.value and "model changed" in c.value
               for c in at.caption)
    assert not any("NIM 1.8.0" in c.value for c in at.caption)  # the preset's note no longer describes it


def test_a_typed_figure_stays_and_is_flagged_when_the_configuration_changes() -> None:
    at = start("cost")
    at.text_input(key="output_tokens_per_s_per_accelerator").set_value("500").run()
    assert at.session_state["scenario"]["throughput_measured_for"] == "h100-sxm/llama-3.1-70b/fp8"
    assert not any("measured for" in w.value for w in at.warning)
    at.selectbox(key="accelerator").set_value("b200").run()
    assert at.session_state["scenario"]["output_tokens_per_s_per_accelerator"] == 500.0  # kept, as typed
    assert any("measured for h100-sxm/llama-3.1-70b/fp8; this scenario runs b200/llama-3.1-70b/fp8" in w.value
               for w in at.warning)
    at.button(key="lookup_given_figure").click().run()
    assert at.session_state["scenario"]["output_tokens_per_s_per_accelerator"] is None
    assert not any("measured for" in w.value for w in at.warning)


# --- hostile benchmark files on the page (issue #44): the importer's refusals, never a traceback -----------------

def _upload(at: AppTest, name: str, data: bytes) -> AppTest:
    if "benchmark" not in at.session_state["settings"]["open"]:  # closed (it stays open once opened)
        assert not at.get("file_uploader")  # its inputs are not drawn
        at.session_state["settings"] = {**at.session_state["settings"], "open": ("benchmark",)}  # as a click does
        at.run()
    at.file_uploader(key="benchmark_file").set_value((name, data, "application/json")).run()
    return at.button(key="use_benchmark").click().run()


def test_a_deeply_nested_benchmark_is_refused_on_the_page_as_on_the_command_line() -> None:
    # was: RecursionError out of the page; the command line and the API refused it
    at = _upload(start("throughput", PAIR), "deep.json", b"[" * 100_000 + b"]" * 100_000)
    assert not at.exception, [e.value for e in at.exception]
    assert any("Benchmark file: deep.json: not usable JSON: nested too deeply" in e.value for e in at.error)
    assert not at.session_state["scenario"].get("curves_sha256")


def test_a_benchmark_figure_out_of_bounds_or_a_repeated_key_is_refused_on_the_page() -> None:
    import json
    from pathlib import Path

    run = json.loads((Path(__file__).resolve().parent / "fixtures" / "benchmarks" / "vllm_serve.json").read_text())
    at = _upload(start("throughput", PAIR), "fast.json", json.dumps({**run, "median_tpot_ms": 1e-300}).encode())
    assert any("fast.json, run 1: output_tokens_per_s_per_user: must be > 0 and <= 1,000,000 [token/s], got "
               "1e+303" in e.value for e in at.error), [e.value for e in at.error]
    at = _upload(at, "dup.json", json.dumps(run)[:-1].encode() + b', "median_tpot_ms": 2.0}')
    assert any("dup.json: not usable JSON: the key 'median_tpot_ms' appears twice in one object" in e.value
               for e in at.error)
    assert not at.exception and not at.session_state["scenario"].get("curves_sha256")


def test_a_speed_falling_with_context_is_shown_with_its_points() -> None:
    # a rack measured at 763 token/s a user at 10,000 input tokens and 450 at 100,000: at 55,000 the step is
    # 1/763 + (1/450 - 1/763) x 0.5 = 0.00176642 s, 566 token/s, and the table lists the two points and that one
    at = start("throughput", {
        "accelerator": "h200-sxm", "model": "minimax-m2", "precision": "fp8", "accelerator_count": "16",
        "measured_output_tokens_per_s_per_user": "763", "concurrent_users_per_replica": "16",
        "accelerators_per_replica": "16", "input_tokens_per_request": "55000", "output_tokens_per_request": "1000",
        "output_tokens_per_s_per_accelerator": "", "input_tokens_per_s_per_accelerator": "",
        "measured_speed_context_tokens": "10000", "long_context_tokens": "100000",
        "long_context_output_tokens_per_s_per_user": "450"})
    # the heading and its caption are one element; the three points a static table
    assert any(m.value.startswith("### Speed against context\n\n") for m in at.markdown)
    table = static_table(at, "Context [token]")
    assert [row["Context [token]"] for row in table] == ["10,000", "55,000", "100,000"]
    assert [row["Per-user speed [token/s]"] for row in table] == ["763", "566.1", "450"]
    assert metric(at, "Output tokens/s per accelerator") == "566"


def test_the_curve_charts_draw_each_scenario_s_own_rows_in_the_chart_altair_builds(page: AppTest) -> None:
    # the two charts' specs are built once and drawn with each curve's rows: after each model, the rows the curve
    # study gives for the scenario as it now is, in the chart altair builds for those layers (the interactive
    # zoom's and its views' generated names aside; Streamlit adds its own keys, such as autosize)
    import json
    import re

    import altair as alt
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    from economics.report.charts import vega_spec
    from economics.studies.interactivity import interactivity_curve
    from ui import studies

    def unnamed(spec: dict[str, object]) -> dict[str, object]:
        text = re.sub(r'"view_[0-9a-f]+(_\d+)?"', '"view"', re.sub(r'"param_[0-9a-f]+"', '"param"', json.dumps(spec)))
        return {k: v for k, v in json.loads(text).items() if k != "datasets"}

    fronts = []
    for model in ("deepseek-v3", "llama-3.1-70b"):  # measured points and the roofline; the roofline alone
        page.selectbox(key="model").set_value(model).run()
        assert not page.exception
        expected = interactivity_curve(page.session_state["scenario"])
        names = [name for name in ("front", "measured") if len(expected[name])]
        curve, cost = page.get("vega_lite_chart")
        assert [d.name for d in curve.proto.datasets] == names
        assert [d.name for d in cost.proto.datasets] == ["front"]
        for chart, name in [*((curve, name) for name in names), (cost, "front")]:
            drawn = convert_arrow_bytes_to_pandas_df(
                next(d for d in chart.proto.datasets if d.name == name).data.data)
            want = expected[name]
            assert list(drawn["output_tokens_per_s_per_user"]) == list(want["output_tokens_per_s_per_user"])
            # every column the chart's encodings and tooltips name is drawn, and nothing else of the study's rows
            named = studies._fields(json.loads(chart.proto.spec))
            assert set(want.columns) & named <= set(drawn.columns) <= named
        layers = [studies._front_layer(), *(studies._measured_layers() if "measured" in names else [])]
        for chart, built in ((curve, alt.layer(*layers).interactive()), (cost, studies._cost_chart())):
            want_spec = unnamed(vega_spec(built))
            drawn_spec = unnamed(json.loads(chart.proto.spec))
            assert {k: drawn_spec[k] for k in want_spec} == want_spec
        fronts.append(list(expected["front"]["output_tokens_per_s_per_user"]))
    assert fronts[0] != fronts[1]  # the second model's own curve, not the first's


def test_the_benchmark_panel_is_drawn_only_open_and_its_state_is_in_the_link() -> None:
    # closed: none of its inputs is sent to the browser; the page setting `open` (in the link) opens it
    at = start("throughput", PAIR)
    assert not at.get("file_uploader") and not [b for b in at.button if b.key == "use_benchmark"]
    assert "settings.open" not in at.query_params
    opened = start("throughput", {**PAIR, "settings.open": "benchmark"})
    assert opened.file_uploader(key="benchmark_file") is not None and opened.button(key="use_benchmark") is not None
    assert opened.query_params["settings.open"] == "benchmark"
