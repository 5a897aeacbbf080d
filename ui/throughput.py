"""Throughput page: the interactivity curve of the working scenario's accelerator x model x precision x workload.

A lens on the working scenario (:mod:`ui.state`). The curve is estimated from the model, so the page needs one: when
the scenario has none it says so and offers the choice. Every number comes from
:func:`economics.studies.interactivity.interactivity_curve`, :func:`economics.evaluate_scenario` and the calibration
report.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

import economics
from economics.schema import user_curves
from economics.schema.outputs import label
from economics.studies.calibration import scope_for
from ui import common, editor, state, studies
from ui import format as fmt
from ui.text import plain

KEY_FIELDS = ("name", "accelerator", "model", "precision", "weight_precision", "compute_precision", "serving_stack",
              "speculative_draft_tokens", "speculative_acceptance_rate", "input_tokens_per_request",
              "output_tokens_per_request",
              "target_output_tokens_per_s_per_user", "accelerators_per_replica", "output_tokens_per_s_per_accelerator",
              "input_tokens_per_s_per_accelerator", "accelerator_count")


def context_speed(scenario: dict[str, Any], result: dict[str, Any]) -> None:
    """The measured per-user speed against context (long_context_*), where the scenario gives that curve: its two
    points and the speed read at the workload's context, on the step linear in the context the engine uses."""
    if scenario.get("long_context_tokens") is None:
        return
    decode = bool(scenario.get("decode_accelerator"))
    pre = "decode_" if decode else ""
    speed = scenario.get(f"{pre}measured_output_tokens_per_s_per_user")
    c1, c2 = scenario.get("measured_speed_context_tokens"), scenario["long_context_tokens"]
    read = result.get(f"{pre}output_tokens_per_s_per_user_at_context")
    if speed is None or c1 is None or read is None:
        return
    at = float(result.get("input_tokens_per_request") or scenario["input_tokens_per_request"])
    rows = sorted([(float(c1), float(speed), "measured"), (float(c2),
                   float(scenario["long_context_output_tokens_per_s_per_user"]), "measured (long context)"),
                   (at, float(read), "read at this workload's input")])
    common.heading("Speed against context",
                   f"The {'decode pool' if decode else 'system'}'s measured per-user speed falls with the context: "
                   "the decode step (1 / speed) is taken linear in the context through the two measured points "
                   "(measured_speed_context_tokens, long_context_tokens), and the throughput is priced at the speed "
                   "read at the request's input tokens.")
    speed = label("output_tokens_per_s_per_user")  # "Per-user speed [token/s]", as every page titles it
    common.text_table({"Context [token]": [fmt.number(r[0]) for r in rows],
                       speed: [fmt.number(r[1]) for r in rows], "Point": [r[2] for r in rows]},
                      figures=("Context [token]", speed))


UPLOAD_TYPES = ("json", "jsonl", "csv", "txt")
PRECISIONS = ("bf16", "fp8", "fp4")


def _use_benchmark() -> None:
    """The uploaded benchmark imported (what the file lacks from the fields beside it), kept under its hash, and
    made the scenario's throughput: its configuration and request shape, no typed figure in its way."""
    upload = st.session_state.get("benchmark_file")
    if upload is None:
        state.error("Benchmark file: choose a file first")
        return
    ss = st.session_state
    try:
        table = economics.import_benchmark(
            [(upload.name, upload.getvalue())], accelerator=ss.get("bench_accelerator") or "",
            accelerators=ss.get("bench_accelerators"), precision=ss.get("bench_precision") or "",
            model="" if ss.get("bench_model") in (None, FROM_FILE) else str(ss["bench_model"]))
        mine = economics.load_curves(economics.curves_csv(table).encode(), upload.name)
    except (economics.BenchmarkError, economics.CurveFileError) as exc:
        state.error(f"Benchmark file: {exc}")
        return
    first = table.iloc[0]
    changes: dict[str, Any] = {
        "curves_sha256": mine.sha256, "accelerator": str(first["accelerator"]), "model": str(first["model"]),
        "precision": str(first["precision"]), "input_tokens_per_request": float(first["input_tokens"]),
        "output_tokens_per_request": float(first["output_tokens"]), "output_tokens_per_s_per_accelerator": None,
        "throughput_measured_for": None}
    curve = table[table["curve_id"] == first["curve_id"]]
    speeds = curve["output_tokens_per_s_per_user"].replace("", None).dropna().astype(float)
    target = state.scenario().get("target_output_tokens_per_s_per_user")
    moved = ""
    if len(speeds) and target is not None and not speeds.min() <= float(target) <= speeds.max():
        # a target the run never measured would pass the curve by: the speed of its most throughput instead
        best = curve.loc[curve["output_tokens_per_s_per_accelerator"].astype(float).idxmax()]
        changes["target_output_tokens_per_s_per_user"] = float(best["output_tokens_per_s_per_user"])
        moved = (f" The per-user target {fmt.number(float(target))} tokens/s lies outside what it measured "
                 f"({fmt.number(speeds.min())} to {fmt.number(speeds.max())}): set to "
                 f"{fmt.number(changes['target_output_tokens_per_s_per_user'])}, its point of most throughput.")
    state.apply(changes)
    ss["_benchmark_used"] = (f"Using {mine.label}: {len(table)} points in {table['curve_id'].nunique()} curve(s); the "
                             f"scenario now runs {first['accelerator']} x {first['model']} {first['precision']} at "
                             f"its {first['input_tokens']} in / {first['output_tokens']} out tokens per request."
                             + moved)


FROM_FILE = "as the file names it"


def benchmark_upload(scenario: dict[str, Any], missing: bool) -> None:
    """Upload your own benchmark run: its curve is drawn beside the published fronts and outranks them for its
    configuration (``curves_sha256``); a link that names a file this server does not hold asks for it here."""
    if missing:
        st.warning(f"This scenario's throughput comes from a curve file with SHA-256 "
                   f"{plain(str(scenario['curves_sha256'])[:12])}… that this server does not hold: upload the same "
                   "benchmark file with the same settings, or the curve file import-benchmark wrote.")
    box = common.panel("Your benchmark: use your own measured run", "benchmark", opened=missing)
    if box is None:  # closed: nothing inside is drawn
        return
    with box:
        st.caption("vLLM `bench serve --save-result` JSON, SGLang `bench_serving` JSONL, GenAI-Perf or AIPerf "
                   "profile export, GuideLLM report, InferenceX rows, an MLPerf summary, or a curve file from "
                   "`import-benchmark`. What the file does not record is taken from the fields below; nothing is "
                   "guessed. The file stays on this server, known by its SHA-256, which the link records.")
        st.file_uploader("Benchmark file", type=list(UPLOAD_TYPES), key="benchmark_file")
        where = common.row()  # one block of four inputs, not a column (and a block) each
        ids = economics.catalog.accelerator_ids()
        where.selectbox("Accelerator it ran on", ids, index=ids.index(scenario["accelerator"]),
                        key="bench_accelerator")
        where.number_input("Accelerators serving it", min_value=1, max_value=100_000, value=8, step=1,
                           key="bench_accelerators")
        where.selectbox("Precision", PRECISIONS, index=PRECISIONS.index(scenario["precision"]), key="bench_precision")
        models = [FROM_FILE, *economics.catalog.models().index]
        where.selectbox("Model", models, index=0, key="bench_model")
        st.button("Use this benchmark", key="use_benchmark", on_click=_use_benchmark, type="primary")
        used = st.session_state.get("_benchmark_used")
        if used:
            st.success(plain(used))


CALIBRATION_COLUMNS = {
    "point": st.column_config.TextColumn("Measured point"), "model": st.column_config.TextColumn("Model"),
    "precision": st.column_config.TextColumn("Precision"),
    "measured": st.column_config.NumberColumn("Measured [token/s]", format="%,.0f"),
    "predicted": st.column_config.NumberColumn("Predicted [token/s]", format="%,.0f"),
    "error_pct": st.column_config.NumberColumn("Error [%]", format="%.1f"),
    "fitted": st.column_config.TextColumn("Used in the fit")}


def calibration_points(points: Any, accelerator: str) -> None:
    """The calibration's measured points of the scenario's accelerator, measured against predicted, in a panel drawn
    only while open (:func:`ui.common.panel`; ``calibration`` in the link's ``open`` opens it), its label naming how
    many. Drawn open, as a grid, they were hundreds of rows (719 for the H100: 106 kB of the page's 134 kB of
    elements), which the browser decoded and mounted on every switch and run, below the paragraph that sums them up
    (issue #43's switch; docs/speed.md, ``pages5``)."""
    shown = points[points["accelerator"] == accelerator][list(CALIBRATION_COLUMNS)]
    name = studies.accelerator_names().get(accelerator, accelerator)
    box = common.panel(f"Measured points of {name}, measured against predicted ({len(shown):,})", "calibration")
    if box is None:  # closed: the grid is not sent
        return
    with box:
        common.draw_table(shown.assign(fitted=[fmt.yes_no(v) for v in shown["fitted"]]), key="calibration_table",
                          config=CALIBRATION_COLUMNS)


common.page_start()
side = editor.Sidebar("Hardware, model, workload", KEY_FIELDS, title="Throughput and interactivity", intro=(
    "Throughput per accelerator against the speed each user sees. The line is the calibrated roofline estimate for "
    "the scenario's model; dots are measured points from data/throughput_curves.csv for the same hardware, model and "
    "precision (any workload). The KPIs are the scenario's own figures."))
scenario = state.scenario()
missing = bool(scenario.get("curves_sha256")) and user_curves.loaded(str(scenario["curves_sha256"])) is None
if missing:
    with side.above():  # the title first, then the upload (rare: drawn before the KPIs)
        benchmark_upload(scenario, missing=True)

try:
    result = common.evaluate(scenario)
except economics.ScenarioError as error:
    common.evaluation_error(error)
    side.stop()

base = common.baseline_result()
common.kpi_row(["output_tokens_per_s_per_accelerator", "output_tokens_per_s_per_user", "cost_usd_per_m_tokens",
                "time_to_first_token_s"], result, base)
side()  # the title and the inputs after the KPIs (see editor.Sidebar)
with side.above():  # in its place above the KPIs
    common.baseline_controls()
    if not result["feasible"]:
        st.error(f"Not feasible: {plain(result['infeasible_reason'])}")
lead = [f"Cost at {fmt.percent(result['utilization'])} utilization ({result['ownership']})."]
if result.get("serving_stack_used"):
    lead.append(f"Serving stack: {plain(result['serving_stack_used'])} (asked: {plain(scenario['serving_stack'])}; "
                f"best = the highest published stack for this pair at the per-user target).")
common.throughput_provenance(result, lead)  # one caption
context_speed(scenario, result)
benchmark_upload(scenario, missing=False)

if scenario["model"] is None:
    st.info("The curve is estimated from a model, and this scenario has none: choose one in the sidebar (Model).")
elif scenario["workload"] == "sessions":  # the curve study refuses sessions by name (economics.studies.interactivity)
    st.info("No interactivity curve for agent sessions yet (issue #39): the Sessions page shows the session; the "
            "curve of its mean turn is the same scenario as requests.")
else:
    key, chosen = studies.curve_key(scenario, result)
    specs = studies.curve_specs(key, chosen)
    if specs is None:
        st.info("No curve: the model does not fit, the hardware lacks this precision, or it is a dataflow system "
                "the roofline does not describe.")
    else:
        common.heading("Interactivity curve",
                       "Black line: roofline estimate for this workload (plain stack unless one is pinned), prefill "
                       "time included. Coloured lines and markers: every published serving stack's measured front "
                       "for this hardware, model and precision; the stack the scenario uses is drawn opaque and "
                       "large.")
        common.draw(specs[0])
        if specs[1] is not None:
            common.heading("Cost along the curve")  # a Markdown heading at the subheader's level: cheaper to draw
            common.draw(specs[1])

points, summary = studies.calibration()
row = scope_for(scenario["accelerator"])
st.markdown(  # the heading and its paragraph as one element
    f"### How good is the estimate?\n\nCalibration scope **{row['scope']}**: bandwidth utilization "
    f"{row['bandwidth_utilization']:.2f}, decode compute {row['compute_utilization']:.2f}, prefill compute "
    f"{row['prefill_compute_utilization']:.2f}, step overhead {row['step_overhead_us_per_layer']:g} us per layer; "
    f"fitted on {row['points']} points with median absolute error {row['median_abs_error_pct']} % (worst "
    f"{row['worst_abs_error_pct']} %). Over all {int(summary['fitted_points'])} fitted points: median "
    f"{summary['median_abs_error_pct']:.1f} %, worst {summary['worst_abs_error_pct']:.1f} %.")
calibration_points(points, scenario["accelerator"])

common.share()
if result["feasible"]:
    common.explanation(scenario, key="show_derivation")
