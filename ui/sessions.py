"""Sessions page: agent sessions (``workload=sessions``): what a multi-turn session costs, how much of its earlier
context the KV tiers (HBM, host DRAM, SSD, a remote store) still hold at the next turn, and what each tier costs.

A lens on the working scenario (:mod:`ui.state`). Switching the workload here goes through
:func:`economics.studies.session_shape.to_sessions` (or ``to_requests``), so the result is always a valid scenario,
and the page says where every value it filled in came from. Every number comes from :mod:`economics`.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

import economics
from economics.io import session_traces
from economics.io.benchmark_formats import BenchmarkError
from economics.report import charts
from economics.schema.outputs import DisplayFormat as Show
from economics.studies import kv_memory, session_shape
from ui import common, editor, report, state
from ui import format as fmt
from ui.text import plain

KEY_FIELDS = ("name", "accelerator", "accelerator_count", "model", "turns_per_session", "session_prefix_tokens",
              "input_tokens_per_turn", "output_tokens_per_turn", "seconds_between_turns", "demand_sessions_per_day",
              "kv_host_memory_gb_per_system", "kv_host_read_gb_per_s", "kv_host_memory_usd_per_gb",
              "kv_ssd_gb_per_system", "kv_ssd_read_gb_per_s", "kv_ssd_usd_per_gb", "kv_remote_gb",
              "kv_remote_read_gb_per_s", "kv_remote_usd_per_gb_month")
FILLED = "_sessions_filled"  # what the last switch changed and why: shown once, on the run after the switch


def _switch(to: str) -> None:
    """on_click: the whole scenario switched to the other workload, valid by construction."""
    now = state.model()
    switched = (session_shape.to_sessions(now) if to == "sessions"
                else session_shape.to_requests(now, economics.default_scenario()))
    state.replace(switched.scenario.model_dump())
    st.session_state[FILLED] = switched.origins


def _origins() -> None:
    """Where the last switch's values came from (once), as a table of plain text."""
    origins = st.session_state.pop(FILLED, None)
    if not origins:
        return
    scenario = state.scenario()
    st.success("Switched. The fields the switch changed, and where each value came from:")
    st.dataframe([{"field": f, "value": editor.shown(f, v) if isinstance(v, (int, float)) and not isinstance(
        v, bool) else fmt.EMPTY if v is None else str(v), "from": why}
        for f, why in origins.items() for v in (scenario.get(f),)], hide_index=True, width="stretch",
        key="switch_origins", column_config={"field": st.column_config.TextColumn("Field"),
                                             "value": st.column_config.TextColumn("Value now"),
                                             "from": st.column_config.TextColumn("Where it came from")})


def _use_trace() -> None:
    """on_click: the uploaded trace's session fields into the working scenario (refused, named, if it cannot be
    read), and its provenance kept to show.
    """
    upload = st.session_state.get("session_trace")
    if upload is None:
        state.error("Session trace: choose a file first")
        return
    prefix = st.session_state.get("trace_prefix_tokens")
    try:
        result = session_traces.import_sessions((upload.name, upload.getvalue()),
                                                session_prefix_tokens=None if not prefix else float(prefix),
                                                seconds_between_turns=_given("trace_gap_s"), shape=_run_shape())
    except BenchmarkError as exc:
        state.error(f"Session trace: {exc}")
        return
    row = result.row.iloc[0]
    state.apply({f: (None if row[f] is None or row[f] != row[f] else float(row[f]))
                 for f in session_traces.ROW_FIELDS})
    st.session_state["_trace_used"] = list(session_traces.provenance_lines(result))


def _given(key: str) -> float | None:
    """A number input's value, None where it is left at 0 (0 = read it from the file)."""
    value = st.session_state.get(key)
    return float(value) if value else None


def _run_shape() -> session_traces.RunShape | None:
    """SGLang's log: the run's rounds, lengths and line as given (None where none is: another format)."""
    keys = ("trace_num_rounds", "trace_request_length", "trace_output_length", "trace_run")
    rounds, length, out, run = (_given(k) for k in keys)
    if rounds is None and length is None and out is None and run is None:
        return None
    return session_traces.RunShape(rounds, length, out, None if run is None else int(run))


def _trace_upload() -> None:
    """Bring your own sessions: a Mooncake trace, vLLM's multi-turn stats or SGLang's multi-turn log fill the
    session's fields.
    """
    with st.expander("Your sessions: fill the workload from a trace or a multi-turn benchmark"):
        st.caption("A Mooncake trace (JSON lines with session_id, timestamp, input_length, output_length, hash_ids), "
                   "vLLM's multi-turn benchmark --stats-json-output or SGLang's bench_multiturn.py log. It fills "
                   "the turns and their spread, the shared prefix, the new input and output a turn, the gap between "
                   "turns and the sessions a day (docs/how-to/sessions.md). Nothing is guessed: what the file "
                   "lacks is asked for below.")
        st.file_uploader("Session trace", type=["jsonl", "json"], key="session_trace")
        st.number_input("Shared prefix tokens, where the file records no shared blocks (0 = read from the file)",
                        min_value=0.0, max_value=1e8, value=0.0, key="trace_prefix_tokens")
        st.number_input("Seconds between turns, where the file records no turn timings (0 = read from the file)",
                        min_value=0.0, max_value=1e7, value=0.0, key="trace_gap_s")
        st.caption("SGLang's bench_multiturn.py log records run summaries only: give the run's --num-rounds, "
                   "--request-length and --output-length, and the line of the run where the log holds several "
                   "(leave them at 0 for the other formats).")
        cols = st.columns(4)
        for col, (label, key) in zip(cols, (("Rounds", "trace_num_rounds"), ("Request length", "trace_request_length"),
                                            ("Output length", "trace_output_length"), ("Run (line)", "trace_run")),
                                     strict=True):
            col.number_input(label, min_value=0, max_value=100_000_000, value=0, step=1, key=key)
        st.button("Use these sessions", key="use_trace", on_click=_use_trace, type="primary")
        used = st.session_state.get("_trace_used")
        if used:
            st.success("Filled from:  \n" + "  \n".join(plain(x) for x in used))


def _requests_page() -> None:
    st.info("This scenario prices single requests (workload = requests). Switch to sessions to price a multi-turn "
            "agent session: its context grows each turn, and the KV tiers decide how much of it is recomputed.")
    st.button("Switch to sessions", key="switch_to_sessions", on_click=_switch, args=("sessions",),
              help="Keeps any session figures you gave; fills the empty ones with an example coding-agent session "
                   "(the table after the switch says where each value came from)")


def _kpis(result: dict[str, Any], base: dict[str, Any] | None) -> None:
    common.kpi_row(["cost_usd_per_session", "kv_hit_rate", "sessions_served_per_day", "input_tokens_per_session",
                    "prefill_tokens_per_session"], result, base)
    turns, out = result["turns_per_session"], result["output_tokens_per_turn"]
    st.caption(f"Input : output = {fmt.count(result['input_tokens_per_session'])} tokens a session / "
               f"({fmt.count(turns)} turns x {fmt.count(out)} output tokens) = "
               f"{fmt.number(result['input_output_ratio'])} : 1. Cost "
               f"{fmt.usd(result['cost_usd_per_day'])} a day over {fmt.count(result['sessions_served_per_day'])} "
               f"sessions served; {fmt.count(result['accelerators'])} x {result['accelerator']}.")


def _agents(result: dict[str, Any], base: dict[str, Any] | None) -> None:
    common.kpi_row(["agents_per_accelerator", "agents_per_mw", "agents_per_usd_per_hour", "agents_per_rack",
                    "ttft_last_turn_s"], result, base)
    st.caption("Agents at the SLO: the most concurrent sessions the fleet holds with every turn's decode at or above "
               "the per-user target and the last turn's TTFT under ttft_target_s (empty when the SLO is not met or "
               "not set; the warnings say which).")


def _profile(scenario: dict[str, Any]) -> None:
    st.subheader("Speed across the session")
    table = economics.session_profile(scenario)
    common.draw(charts.profile_spec(), charts.profile_data(table))
    with st.expander("The turns as a table"):
        common.show_table(table, key="sessions_profile", money=False, extra={
            "turn": ("Turn", Show.NUMBER), "context_tokens": ("Context [token]", Show.NUMBER),
            "output_tokens_per_s_per_user": common.output_column("output_tokens_per_s_per_user"),
            "ttft_s": ("TTFT [s]", Show.NUMBER)})
    st.caption("Each turn decodes at its own context (the decode step grows with the KV read) and its TTFT is its "
               "new input and missed context prefilled plus the context loaded from the tiers below HBM. The last "
               "row is the outputs min_output_tokens_per_s_per_user and ttft_last_turn_s. "
               "`python -m economics session-profile FILE --row NAME` prints the same table.")


def _where_found(result: dict[str, Any]) -> None:
    st.subheader("Where each turn's earlier context is found")
    common.show_table(session_shape.where_found(result), key="sessions_tiers", extra={
        "where": ("Where", Show.TEXT), "gb": ("Capacity [GB per system]", Show.NUMBER),
        "share": ("Share of input tokens", Show.PERCENT), "tokens": ("Tokens a session", Show.NUMBER)})
    st.caption("Shares of a session's input tokens: the shared prefix and earlier turns found in each tier (an "
               "exclusive LRU hierarchy under Che's approximation, docs/model.md, Sessions), and the rest "
               "recomputed. A tier that loads slower than the system prefills holds nothing.")


def _costs(result: dict[str, Any]) -> None:
    st.subheader("What the KV tiers cost")
    common.show_table(session_shape.tier_costs(result), key="sessions_costs", extra={
        "line": ("Cost line", Show.TEXT), "usd_per_hour": ("USD/h", Show.USD_RATE),
        "usd_per_session": ("USD per session", Show.USD_RATE)})
    st.caption("Per session: the line's USD/h x 24 h / sessions served a day. Host DRAM and SSD are amortised like "
               "the hardware; the remote store is rented per GB-month.")


STUDY = "_sessions_kv_memory"  # the last study run: (scenario, target, result), shown while both still match
# The study's table (economics.studies.kv_memory.KvMemoryStudy): the outputs of the engine it holds in their schema's
# display formats (money per day as the KPIs write it), under this table's shorter titles. A comment, not a string
# under the name: a page's bare string would be drawn by Streamlit's magic (tests/test_layers.py).
OPTION_COLUMNS = {"option": common.OPTION_COLUMN, "accelerator": ("Accelerator", Show.TEXT),
                  "feasible": ("Holds the target", Show.TEXT),
                  "reason": ("Why not", Show.TEXT), "field": ("Field raised", Show.TEXT),
                  "current": ("Now", Show.NUMBER), "needed": ("Needed", Show.NUMBER), "added": ("Added", Show.NUMBER),
                  "accelerators": common.output_column("accelerators", "Accelerators"),
                  "agents_at_slo": common.output_column("agents_at_slo", "Agents held"),
                  "kv_hit_rate": common.output_column("kv_hit_rate", "KV hit rate"),
                  "ttft_last_turn_s": common.output_column("ttft_last_turn_s", "Last turn's TTFT [s]"),
                  "cost_usd_per_session": common.output_column("cost_usd_per_session", "USD per session"),
                  "cost_usd_per_day": common.output_column("cost_usd_per_day", "USD per day"),
                  "rank": ("Rank", Show.NUMBER)}


def _memory_or_accelerators(scenario: dict[str, Any], result: dict[str, Any]) -> None:
    """The study (economics.studies.kv_memory): for a target of agents at the SLO, each KV tier's smallest addition
    against more systems, ranked by cost per session, and why the cheapest is cheapest.
    """
    st.subheader("More memory or more accelerators?")
    held = result.get("agents_at_slo")
    start = max(1, round(float(held) * 1.5)) if held is not None and held == held else 1000
    target = int(st.number_input("Target: concurrent agents at the SLO", min_value=1, max_value=10**12, value=start,
                                 step=100, key="kv_memory_agents"))
    if st.button("Find the cheapest way to hold them", key="kv_memory_run"):
        try:
            st.session_state[STUDY] = (dict(scenario), target, kv_memory.kv_memory_study(scenario, target))
        except ValueError as error:
            st.error(f"The study cannot run on this scenario: {error}")
            return
    last = st.session_state.get(STUDY)
    if last is None or last[0] != dict(scenario) or last[1] != target:
        st.caption("For the target, the study adds host DRAM, SSD or a remote KV store to the current fleet (the "
                   "smallest amount that holds it), adds systems, both together, or a large-memory accelerator, "
                   "each priced by the engine at full load.")
        return
    study: kv_memory.KvMemoryStudy = last[2]
    st.text(study.why)  # plain text: field names keep their underscores
    table = study.table.assign(feasible=study.table["feasible"].map({True: "yes", False: "no"}))
    common.show_table(table, key="kv_memory_options", extra=OPTION_COLUMNS, columns=list(OPTION_COLUMNS))
    st.caption("Each option on the current fleet: a KV tier raised to the smallest amount (GB) that holds the "
               "target, whole systems added, a tier and systems together (the cheapest pair), or a fleet of the "
               "catalog's largest-memory accelerator; ranked by cost per day (what holding the target costs), then "
               "cost per session (docs/model.md, Sessions: more memory or more accelerators).")


common.page_start()
st.title("Agent sessions")
st.caption("A coding agent is a session of many turns, each re-reading a context that grows by the tool output and "
           "the answer before. Its cost depends on whether that context's KV cache is still held when the next turn "
           "comes (HBM, host memory, SSD, a remote store) or must be recomputed.")
side = editor.Sidebar("Session, tiers, hardware", KEY_FIELDS)
editor.show_messages()
_origins()
scenario = state.scenario()
common.baseline_controls()
if scenario["workload"] != "sessions":
    _requests_page()
    side()
    common.share()
    st.stop()

st.button("Switch back to single requests", key="switch_to_requests", on_click=_switch, args=("requests",))
_trace_upload()
try:
    result = common.evaluate(scenario)
except economics.ScenarioError as error:
    common.evaluation_error(error)
    side.stop()
base = common.baseline_result()
_kpis(result, base)
_agents(result, base)
side()  # the inputs after the KPIs (see editor.Sidebar)
for warning in economics.split_warnings(result["warnings"]):
    st.warning(warning)
common.throughput_provenance(result)
_where_found(result)
_costs(result)
_profile(scenario)
_memory_or_accelerators(scenario, result)
st.subheader("The context each turn reads")
common.draw(charts.context_spec(), charts.context_data(max(1, round(scenario["turns_per_session"])),
                                                       float(scenario["session_prefix_tokens"]),
                                                       float(scenario["input_tokens_per_turn"]),
                                                       float(scenario["output_tokens_per_turn"])))
st.caption("C_t = shared prefix + (t - 1) x (new input + output a turn) + new input: every earlier turn's input and "
           "output, and the turn's own new input.")
if state.baseline() is not None and base is not None:
    st.subheader("Against the baseline")
    common.difference_table(result, base)
common.share()
report.offer("sessions", report.scenario_pdf("sessions"))
common.explanation(scenario, key="show_derivation")
