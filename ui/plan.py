"""Plan page: the cheapest fleet (prefill, decode or aggregated pools; owned, rented by the hour or already owned)
for the working scenario's demand over the day, per-user speed and time-to-first-token target, inside the site's
power, racks, cooling and budget.

A lens on the working scenario (:mod:`ui.state`): the model, demand, workload shape, prices, facility and power,
finance, cooling and the existing fleet are the scenario's fields, edited by the same editor as on every page. The
planner's own settings (the accelerators considered, the TTFT target and percentile, the day's profile, racks,
budget, objective, rent and spares) are page settings ``plan_*`` kept in the same state, so the link carries them
(``settings.plan_<name>``). Every number comes from :mod:`economics.studies.planner`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
from typing import Any

import streamlit as st

import economics
from economics import catalog
from economics.io import plan_files
from economics.report import charts, kpis
from economics.schema.outputs import DisplayFormat as Show
from economics.schema.validation import InputError
from economics.studies import planner
from economics.studies.plan_odds import MAX_PLAN_SAMPLES, plan_odds
from economics.studies.planner.candidates import catalog_candidates
from economics.studies.planner.milp import PROOF_GAP
from ui import common, editor, links, planning, report, state
from ui import format as fmt
from ui.text import headed, plain

KEY_FIELDS = ("name", "model", "precision", "target_output_tokens_per_s_per_user", "demand_output_tokens_per_day",
              "input_tokens_per_request", "output_tokens_per_request", "peak_to_average", "accelerator",
              "existing_accelerators", "facility_cooling", "allow_liquid_retrofit", "site_power_mw")
P = links.PLAN_PREFIX
# the page's intro, drawn under its title (a comment: a bare string here would be drawn by Streamlit)
INTRO = ("The cheapest fleet for the scenario's demand over the day at its per-user speed and a time-to-first-token "
         "target: prefill, decode or aggregated pools from the catalog (or your own benchmarks), owned or rented by "
         "the hour, with the fleet you already own, inside the site's power, racks, cooling and budget. A "
         "mixed-integer program (SciPy milp, HiGHS); docs/planner.md has the method.")
PROFILES = ("peak", "flat", "diurnal")
NUMBERS = "24 numbers"
DEFAULT_NUMBERS = " ".join(["1"] * 8 + ["2"] * 10 + ["1"] * 6)
PERCENTILES = (0.5, 0.9, 0.99)
LABELS = {
    "ttft_target_s": "Time-to-first-token target [s]", "ttft_percentile": "TTFT percentile",
    "prefill_service_cv2": "Spread of prefill times (CV²)", "demand_profile": "Demand over the day",
    "max_racks": "Racks available [rack]", "capex_budget_usd": "Capex budget [USD]", "objective": "Objective",
    "spares": "Spares for failures", "allow_rent": "Allow rented systems (by the hour)",
    "max_pools": "Most distinct pools", "min_rental_hours": "Shortest rental [h a day]",
    "min_pool_systems": "Smallest pool [system]", "rent_tiers": "Rent tiers the plan may mix",
    "max_spot_share": "Most of the demand on spot [share]",
    "carbon_cap_tco2e_per_year": "Carbon cap [tCO2e a year]",
}
TIER_WORDS = {"on_demand": "on demand (by the hour)", "reserved": "reserved (every hour paid)",
              "spot": "spot (interruptible, sized up)"}
RENTAL_HOURS = (1.0, 2.0, 4.0, 8.0, 12.0, 24.0)
RENTAL_WORDS = {1.0: "1 h (any hour on its own)", 24.0: "24 h (monthly: all day, every day)"}
EMPTY_MEANS = {"ttft_target_s": "empty: not a constraint", "max_racks": "empty: no limit",
               "capex_budget_usd": "empty: no limit", "carbon_cap_tco2e_per_year": "empty: no cap"}
OBJECTIVE_WORDS = {"cost_per_day": "cost per day (capital as an annuity)",
                   "npv": "net present cost over the horizon"}
PLAN_COLUMNS = kpis.PLAN_COLUMNS  # the pools' columns, as the board report prints them too
CONSTRAINT_COLUMNS: dict[str, tuple[str, Show]] = {
    "constraint": ("Limit", Show.TEXT), "limit": ("Available", Show.NUMBER), "used": ("Used", Show.NUMBER),
    "unit": ("Unit", Show.TEXT), "slack": ("Slack", Show.NUMBER), "binding": ("Binding", Show.BOOL),
    "shadow_price_usd": ("One more unit saves [USD/day]", Show.USD), "meaning": ("Meaning", Show.TEXT),
}
SETTING_COST_COLUMNS: dict[str, tuple[str, Show]] = {
    "setting": ("Setting", Show.TEXT), "value": ("Value", Show.NUMBER), "unit": ("Unit", Show.TEXT),
    "cost_usd_per_day": ("Plan [USD/day]", Show.USD), "without_usd_per_day": ("Without it [USD/day]", Show.USD),
    "costs_usd_per_day": ("It costs [USD/day]", Show.USD), "pools_without": ("Pools without it", Show.COUNT),
    "meaning": ("Meaning", Show.TEXT),
}
CANDIDATE_COLUMNS: dict[str, tuple[str, Show]] = {
    **{k: PLAN_COLUMNS[k] for k in ("name", "accelerator", "ownership", "tier", "cooling")},  # as the pools'
    "accelerators_per_system": ("Accelerators per system", Show.COUNT),
    "system_power_kw": ("System power [kW]", Show.NUMBER), "price_usd_per_system": ("Price per system [USD]", Show.USD),
    "rent_usd_per_system_hour": ("Rent per system-hour [USD]", Show.USD),
    "input_tokens_per_s_per_system": ("Prefill per system [token/s]", Show.NUMBER),
    "output_tokens_per_s_per_system": ("Output per system [token/s]", Show.NUMBER),
    "output_tokens_per_s_per_user": common.output_column("output_tokens_per_s_per_user"),
    "throughput": ("Throughput from", Show.TEXT), "roles": ("Roles", Show.TEXT),
    "left_out": ("Left out because", Show.TEXT), "note": ("Note", Show.TEXT),
}


# ------------------------------------------------------------------------------------------------ page settings
def _setting_changed(name: str) -> None:
    """on_change of a typed setting: parsed by the link's parser into the state, or refused by name."""
    text = str(st.session_state.get(name) or "").strip().replace(",", "").replace("_", "").replace("$", "")
    try:
        state.set_setting(name, links.parse_setting(name, text))
    except ValueError as exc:
        state.error(f"{links.SETTINGS_PREFIX}{name}: {exc}; not applied")


def _value_changed(name: str) -> None:
    """on_change of a chosen setting (select, check, multiselect): the value as it is."""
    value = st.session_state.get(name)
    state.set_setting(name, tuple(value or ()) if isinstance(value, list) else value)


def _profile_changed() -> None:
    chosen = st.session_state.get(P + "demand_profile")
    state.set_setting(P + "demand_profile", DEFAULT_NUMBERS if chosen == NUMBERS else chosen)


def _help(name: str) -> str:
    return f"{planner.PLAN_FIELDS[name].description}. Setting `{links.SETTINGS_PREFIX}{P}{name}`."


def _typed(name: str, settings: dict[str, Any]) -> None:
    key = P + name
    value = settings[key]
    st.session_state[key] = "" if value is None else editor.shown(name, value)
    st.text_input(LABELS[name], key=key, on_change=_setting_changed, args=(key,), help=_help(name),
                  placeholder=EMPTY_MEANS.get(name))


def _chosen(name: str, settings: dict[str, Any], options: list[Any], words: dict[Any, str] | None = None) -> None:
    key = P + name
    value = settings[key]
    options = options if value in options else [*options, value]
    st.session_state[key] = value
    st.selectbox(LABELS[name], options, key=key, on_change=_value_changed, args=(key,), help=_help(name),
                 format_func=lambda v: (words or {}).get(v, str(v)))


def _checked(name: str, settings: dict[str, Any]) -> None:
    key = P + name
    st.session_state[key] = bool(settings[key])
    st.checkbox(LABELS[name], key=key, on_change=_value_changed, args=(key,), help=_help(name))


def _profile(settings: dict[str, Any]) -> None:
    profile = str(settings[P + "demand_profile"])
    key = P + "demand_profile"
    st.session_state[key] = profile if profile in PROFILES else NUMBERS
    st.selectbox(LABELS["demand_profile"], [*PROFILES, NUMBERS], key=key, on_change=_profile_changed,
                 help=_help("demand_profile"))
    if profile not in PROFILES:
        numbers = key + "_numbers"
        st.session_state[numbers] = profile
        st.text_input("24 relative loads, hour 0 to 23", key=numbers, on_change=_numbers_changed,
                      help="24 numbers separated by spaces or commas: the load of each hour relative to the others")


def _tiers(settings: dict[str, Any]) -> None:
    """The rent tiers as a multiselect held as the setting's text ('on_demand;reserved'); none = the scenario's."""
    key = P + "rent_tiers"
    st.session_state[key] = [t for t in str(settings[key] or "").split(";") if t]
    st.multiselect(LABELS["rent_tiers"], list(planner.RENT_TIERS), key=key, on_change=_tiers_changed,
                   format_func=lambda t: TIER_WORDS.get(t, t), placeholder="empty: the scenario's rent tier",
                   help=_help("rent_tiers"))


def _tiers_changed() -> None:
    state.set_setting(P + "rent_tiers", ";".join(st.session_state.get(P + "rent_tiers") or ()))


def _numbers_changed() -> None:
    text = str(st.session_state.get(P + "demand_profile_numbers") or "").strip()
    try:
        state.set_setting(P + "demand_profile", links.parse_setting(P + "demand_profile", text))
    except ValueError as exc:
        state.error(f"{links.SETTINGS_PREFIX}{P}demand_profile: {exc}; not applied")


@functools.cache
def _accelerator_names() -> dict[str, str]:
    """Catalog id -> name, read once."""
    return {a: str(catalog.accelerator_record(a).get("name") or a) for a in catalog.accelerator_ids()}


def _accelerators(settings: dict[str, Any]) -> None:
    key = P + "accelerators"
    names = _accelerator_names()
    st.session_state[key] = list(settings[key])
    st.multiselect("Accelerators to consider", list(names), key=key, on_change=_value_changed, args=(key,),
                   format_func=lambda a: names.get(a, a), placeholder="empty: every catalog accelerator",
                   help=f"Catalog accelerators the plan may buy or rent; empty = every one. Setting "
                        f"`{links.SETTINGS_PREFIX}{key}`.")


def settings_widgets() -> None:
    """The planner's settings at the top of the sidebar, each set from the state just before it is drawn: those that
    state the question first, the rest in a panel (:func:`_more_settings`)."""
    settings = state.settings()
    st.markdown(headed("Planner settings"))  # st.subheader's level; a Markdown heading is cheaper to draw
    _accelerators(settings)
    _typed("ttft_target_s", settings)
    _profile(settings)
    _typed("max_racks", settings)
    _typed("capex_budget_usd", settings)
    _chosen("objective", settings, list(planner.PLAN_FIELDS["objective"].choices), OBJECTIVE_WORDS)
    _checked("allow_rent", settings)
    _more_settings(settings)
    st.markdown(headed("Scenario"))


# The planner settings in the sidebar's closed panel (_more_settings), the three operations settings last (a comment:
# a bare string here would be drawn by Streamlit).
MORE_SETTINGS = ("ttft_percentile", "prefill_service_cv2", "rent_tiers", "max_spot_share", "spares",
                 "carbon_cap_tco2e_per_year", "max_pools", "min_rental_hours", "min_pool_systems")
MORE_LABEL = "More planner settings: TTFT percentile, prefill spread, rent tiers, spot, spares, carbon cap, operations"


def _more_settings(settings: dict[str, Any]) -> None:
    """The planner settings of :data:`MORE_SETTINGS` in a panel drawn only while open (:func:`ui.common.panel`,
    ``plan_settings`` in the link's ``open``): closed, its ten elements are neither sent nor mounted on a switch or a
    run (issue #43, docs/speed.md ``switch5``). Its label says how many of them differ from their defaults, so a
    changed setting is never out of sight."""
    defaults = links.default_settings()
    changed = sum(settings[P + name] != defaults[P + name] for name in MORE_SETTINGS)
    box = common.panel(MORE_LABEL + (f" ({changed} changed from the defaults)" if changed else ""), "plan_settings")
    if box is None:
        return
    with box:
        _chosen("ttft_percentile", settings, list(PERCENTILES))
        _typed("prefill_service_cv2", settings)
        _tiers(settings)
        _typed("max_spot_share", settings)
        _checked("spares", settings)
        _typed("carbon_cap_tco2e_per_year", settings)
        st.caption("How an operations team would run it")
        _typed("max_pools", settings)
        _chosen("min_rental_hours", settings, list(RENTAL_HOURS), {h: RENTAL_WORDS.get(h, f"{h:g} h") for h in
                                                                     (*RENTAL_HOURS, settings[P + "min_rental_hours"])})
        _typed("min_pool_systems", settings)


# ------------------------------------------------------------------------------------------------------ solving
SOLVING = "Solving the plan (a mixed-integer program)..."
# Shown while a new plan is solved once the solve takes longer than half a second (Streamlit's spinner delay), when
# Streamlit also starts to fade the previous run's output as out of date; shorter solves show the running state only.
# The KPIs are the plan's figures, so none is drawn before the plan is solved. (A comment: a bare string here would be
# drawn by Streamlit.)


COSTING = "Solving the plan again without each operations setting..."
ODDS = "Solving the plan again in each draw (about a second a draw)..."


@st.cache_data(max_entries=8, show_spinner=ODDS)
def _plan_odds(scenario_json: str, settings_json: str, ids: tuple[str, ...], candidates_csv: bytes | None,
               samples: int, seed: int) -> dict[str, Any]:
    """The plan's odds (:func:`economics.studies.plan_odds.plan_odds`) over its candidates, as tables."""
    s = economics.Scenario(**json.loads(scenario_json))
    settings = planner.PlanSettings(**json.loads(settings_json))
    cands = (catalog_candidates(s, list(ids) or None)[0] if candidates_csv is None
             else plan_files.read_candidates_csv(candidates_csv, s))
    chosen = planner.plan(s, settings, cands, costed=False)
    found = plan_odds(s, settings, cands, chosen, samples, seed)
    return {"headline": found.headline(), "summary": found.summary(), "mixes": found.table, "drivers": found.drivers}


def _odds(inputs: tuple[str, str, tuple[str, ...], bytes | None]) -> None:
    """The plan's odds on request (the plan solved twice a draw): the chosen candidates' cost a day at P10 / P50 /
    P90 and how often a mix of other candidates is cheaper."""
    where = common.row()  # one block for the three (st.columns: one for each and one around them)
    shown = where.toggle("The plan's odds", value=False, key="show_plan_odds",
                         help="plan --uncertainty: each estimated accelerator's throughput drawn over the estimator's "
                              "P10-P90, the plan solved again twice in each draw (about a second a draw)")
    samples = int(where.number_input("Draws", 1, MAX_PLAN_SAMPLES, 10, key="plan_odds_samples"))
    seed = int(where.number_input("Seed", 0, 2**32 - 1, 0, key="plan_odds_seed"))
    if not shown:
        return
    try:
        got = _plan_odds(*inputs, samples, seed)
    except (economics.ScenarioError, ValueError) as error:
        st.error(plain(str(error)))
        return
    summary = got["summary"]
    st.markdown(f"**{got['headline']}.** The chosen candidates' cost a day: "
                f"{fmt.usd(summary['cost_usd_per_day_p10'])} (P10), {fmt.usd(summary['cost_usd_per_day_p50'])} "
                f"(P50), {fmt.usd(summary['cost_usd_per_day_p90'])} (P90).")
    common.show_table(got["mixes"], key="plan_odds_mixes", extra={
        "mix": ("Cheapest mix in a draw", Show.TEXT), "probability_cheapest": ("Share of draws", Show.PERCENT),
        "cost_usd_per_day_p50": ("Cost a day, P50", Show.USD)})
    common.show_table(got["drivers"], key="plan_odds_drivers")


@st.cache_data(max_entries=8, show_spinner=False)
def _frontiers(scenario_json: str, settings_json: str, ids: tuple[str, ...], candidates_csv: bytes | None
               ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    s = economics.Scenario(**json.loads(scenario_json))
    settings = planner.PlanSettings(**json.loads(settings_json))
    cands = None if candidates_csv is None else plan_files.read_candidates_csv(candidates_csv, s)
    speed = planner.frontier_speed(s, settings, candidates=cands, accelerators=list(ids) or None)
    site = planner.frontier_site(s, settings, candidates=cands, accelerators=list(ids) or None)
    return ([{str(k): v for k, v in r.items()} for r in speed.to_dict(orient="records")],
            [{str(k): v for k, v in r.items()} for r in site.to_dict(orient="records")])


def _inputs_of(scenario: dict[str, Any]) -> planning.Inputs:
    """The solver's cache key: the scenario (without its name), the planner settings and the accelerators, as JSON."""
    return planning.inputs_of(scenario, state.settings())


def solve(inputs: planning.Inputs, candidates_csv: bytes | None) -> planning.Plan:
    """The plan of a state's plan inputs (:func:`_inputs_of`; kept for every session, :mod:`ui.planning`; solved on
    arrival if it is not); raises the planner's input errors."""
    kept = planning.PLANS.get((*inputs, candidates_csv)) is not None
    with contextlib.nullcontext() if kept else st.spinner(SOLVING):
        return planning.planned(inputs, candidates_csv)


def _baseline_plan(candidates_csv: bytes | None) -> planning.Plan | None:
    """The pinned baseline planned under the same settings (None without one)."""
    pinned = state.baseline()
    if pinned is None:
        return None
    try:
        return solve(_inputs_of(pinned), candidates_csv)
    except (InputError, ValueError, economics.ScenarioError) as exc:
        st.warning(f"The baseline cannot be planned, so no KPI shows a change against it: {plain(exc)}")
        return None


def _feasible(out: dict[str, Any] | None) -> dict[str, Any] | None:
    """``out`` when it is a plan (a baseline without one shows no change)."""
    return out if out is not None and out["feasible"] else None


def _show_infeasible(out: dict[str, Any]) -> None:
    """No plan meets every constraint: why, the least of each limit that would make one (one limit at a time), and
    the best partial plan within every limit with the share of the demand it serves."""
    summary = out["summary"]
    st.error(f"No plan meets every constraint. {plain(out['infeasible_reason'], max_chars=1000)}")
    fixes = [f for f in str(summary.get("relaxations") or "").split("; ") if f]
    if fixes:
        st.markdown("**What would make it feasible, one limit at a time**")
        for fix in fixes:
            st.markdown(f"- {plain(fix, max_chars=400)}")
    if summary.get("served_share") is not None and len(out["frames"]["plan"]):
        common.heading("The best partial plan within every limit",
                       f"Serves {fmt.percent(summary['served_share'])} of the day's demand "
                       f"({fmt.percent(summary['busiest_hour_served_share'])} of its busiest hour) at "
                       f"{fmt.usd(summary['cost_usd_per_day'])} a day; the rest is turned away.")
        common.show_table(out["frames"]["plan"], key="plan_table", extra=PLAN_COLUMNS, static=True, wide=True)
    elif summary.get("served_share") is not None:
        st.caption("Within every limit not one system fits: the best partial plan serves none of the demand.")


# ------------------------------------------------------------------------------------------------------ drawing
def _kpis(summary: dict[str, Any], base: dict[str, Any] | None) -> None:
    where = common.row()  # one horizontal container, not a block per column (ui.common.row)
    for k in kpis.plan_kpis(summary, None if base is None else base["summary"]):
        where.metric(k.title, k.value, delta=k.change, delta_color=k.color, delta_arrow="off" if k.same else "auto",
                     help=k.help)


def _head(out: dict[str, Any], base: dict[str, Any] | None, side: editor.Sidebar, proving: bool) -> Any:
    """The plan's KPIs, its status and its pools (or why there is none), drawn first; returns the status line's
    placeholder (None without a plan). ``proving``: the plan is the stages' and its proof is still to run."""
    if not out["feasible"]:
        _show_infeasible(out)
        return None
    summary = out["summary"]
    _kpis(summary, base)
    side()  # the inputs after the KPIs (see editor.Sidebar)
    if base is not None:
        st.caption("Changes are against the pinned baseline scenario planned under these same planner settings: a "
                   "planner setting moves both plans, a scenario field only this one.")
    status = st.empty()
    status.caption(_status(summary, proving))
    if summary.get("cost_usd_per_session") is not None:  # workload=sessions: what the plan serves, per session
        remote = float(summary.get("kv_remote_usd_per_day") or 0.0)
        st.caption(f"Agent sessions: {fmt.count(summary['sessions_per_day'])} a day at "
                   f"{fmt.usd_rate(summary['cost_usd_per_session'])} a session (the cost per day / sessions a day"
                   + (f"; the remote KV store's {fmt.usd(remote)} a day included" if remote > 0 else "") + ").")
    if summary.get("npv_cost_usd") is not None:
        st.caption(f"Net present cost over the horizon {fmt.usd(summary['npv_cost_usd'])}; levelized "
                   f"{fmt.usd_rate(summary['levelized_cost_usd_per_m_tokens'])} per M tokens.")
    common.heading("The plan")
    common.show_table(out["frames"]["plan"], key="plan_table", extra=PLAN_COLUMNS, static=True, wide=True)
    st.caption(plain(_footprint_words(summary), max_chars=1000))
    return status


PROVING = (f"; proving it within {100 * PROOF_GAP:g} % on the whole mixed-integer program (HiGHS, started from this "
           "plan)...")


def _status(summary: dict[str, Any], proving: bool) -> str:
    """The plan's status line: its systems and the solver's status, and, while the proof runs, that it runs."""
    return (f"{fmt.count(summary['systems_on_site'])} systems on site; "
            f"{fmt.number(summary['rented_system_hours_per_day'])} rented system-hours a day; solver: "
            f"{summary.get('solver_status', 'within ' + fmt.percent(summary['mip_gap']) + ' of the lower bound')}"
            + (PROVING if proving else "."))


_STATUS_KEYS = ("solver_status", "mip_gap")


def _drawn(out: dict[str, Any], base: dict[str, Any] | None) -> Any:
    """What :func:`_head` draws besides the solver's status: a proof that finds no cheaper plan changes only that."""
    def figures(summary: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in summary.items() if k not in _STATUS_KEYS}

    return (out["feasible"], out["infeasible_reason"], figures(out["summary"]), out["plan"],
            None if base is None else figures(base["summary"]))


def _plan_and_proof(plan: planning.Plan, base: planning.Plan | None,
                    side: editor.Sidebar) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The plan's head (:func:`_head`) drawn from the stages' plan when its proof (or the baseline's) is still to
    run, then the proof run and the head drawn again with the plan proven when anything but the status differs
    (a cheaper plan), else only the status line. A state proven before is drawn proven at once. Returns the plan
    and the baseline's plan as drawn last (what ``planner.plan`` returns for each)."""
    pending = plan.pending or (base is not None and base.pending)
    out, base_out = plan.now(), None if base is None else _feasible(base.now())
    where = st.empty()
    with where.container():
        status = _head(out, base_out, side, pending)
    if not pending:
        return out, base_out
    final, base_final = plan.proven(), None if base is None else _feasible(base.proven())
    if _drawn(final, base_final) != _drawn(out, base_out):
        with where.container():
            _head(final, base_final, side, False)
    elif status is not None:
        status.caption(_status(final["summary"], False))
    return final, base_final


def _show(out: dict[str, Any], side: editor.Sidebar, inputs: tuple[str, str, tuple[str, ...], bytes | None],
          plan: planning.Plan) -> None:
    """The rest of the plan (``out``, proven, solved from ``inputs``: the solver's cache key and the candidates
    file; ``plan``: the state's plan, which solves what the operations settings cost and makes the downloads once):
    its odds on request, its limits, what the operations settings cost, its hours, notes and downloads."""
    _odds(inputs)
    with st.spinner(COSTING) if plan.costs is None else contextlib.nullcontext():  # as the solve's, on arrival
        frame = plan.setting_costs()
    limits = planner.limits_with_costs(out["frames"]["constraints"], frame)
    common.heading("Limits and what one more unit would save")
    common.show_table(limits, key="plan_constraints", extra=CONSTRAINT_COLUMNS, static=True)
    common.heading("What the operations settings cost",
                   "Each setting's cost is the plan solved again with that setting alone lifted (the others kept).")
    common.show_table(frame, key="plan_setting_costs", extra=SETTING_COST_COLUMNS, static=True)
    common.heading("Systems hour by hour")
    common.draw(charts.hours_spec(), charts.hours_data(out["hours"]))
    box = common.panel("The hours as a table: each tier's systems, the price and the grid", "plan_hours")
    if box is not None:  # closed: its grid is neither sent nor mounted on a switch (issue #43)
        with box:
            hours = out["frames"]["hours"]
            common.show_table(hours, key="plan_hours", extra=hour_columns([str(c) for c in hours.columns]))
    for note in out["notes"]:
        st.caption(plain(note, max_chars=1000))
    downloads = plan.downloads()  # made once per state, after its KPIs are drawn, not on every rerun
    where = common.row()
    where.download_button("Download the plan (JSON)", downloads["json"], "plan.json", "application/json",
                          key="plan_json")
    where.download_button("Download the plan (CSV)", downloads["csv"], "plan.csv", "text/csv", key="plan_csv")


HOUR_WORDS = {"hour": ("Hour", Show.COUNT), "requests_per_s": ("Requests [1/s]", Show.NUMBER),
              "output_tokens_per_s": ("Output [token/s]", Show.NUMBER),
              "usd_per_kwh": ("Energy [USD/kWh]", Show.NUMBER),
              "g_per_kwh": common.GRID_COLUMN}


def hour_columns(columns: list[str]) -> dict[str, tuple[str, Show]]:
    """Headers of a plan's hours table: 'decode_accelerators_reserved' reads 'Decode accelerators, reserved'."""
    out = {}
    for c in columns:
        if c in HOUR_WORDS:
            out[c] = HOUR_WORDS[c]
            continue
        role, kind, *where = c.split("_")
        out[c] = (f"{role.capitalize()} {kind}, {' '.join(where)}", Show.NUMBER)
    return out


def _footprint_words(summary: dict[str, Any]) -> str:
    """The plan's emissions and reserved idle hours in a sentence, with what is missing said."""
    if summary.get("operational_kgco2e_per_day") is None:
        words = ["Emissions not counted: no grid intensity given (grid_region, grid_carbon_g_per_kwh); embodied "
                 f"{fmt.number(summary.get('embodied_kgco2e_per_day'))} kgCO2e a day"]
    else:
        words = [f"Emissions {fmt.number(summary.get('tco2e_per_year'))} tCO2e a year: "
                 f"{fmt.number(summary['operational_kgco2e_per_day'])} kgCO2e a day operational, "
                 f"{fmt.number(summary['embodied_kgco2e_per_day'])} embodied; "
                 f"{fmt.number(summary.get('kgco2e_per_m_tokens'))} kgCO2e per M tokens"]
    if summary.get("carbon_usd_per_day"):
        words.append(f"carbon {fmt.usd(summary['carbon_usd_per_day'])} a day (in the cost)")
    if summary.get("reserved_idle_usd_per_day"):
        words.append(f"reserved hours paid and idle {fmt.usd(summary['reserved_idle_usd_per_day'])} a day")
    return "; ".join(words) + "."


def _model_missing(scenario: dict[str, Any]) -> None:
    """Without a model only the scenario's own accelerator, at its measured throughput, can be planned; the worked
    planning example is one click away either way."""
    example = ("the planning example (Llama 3.1 70B in fp8 at 30 tokens/s per user, 20 B output tokens a day, a 2 MW "
               "air-cooled site owning 64 H100s, a 2 s time to first token; it keeps the rest of the scenario)")
    if scenario["model"] is None:
        st.info(f"The scenario has no model, so only {plain(scenario['accelerator'])} at its measured throughput can "
                f"be planned: every other accelerator's throughput is estimated from a model. Choose a model in the "
                f"sidebar, or start from {example}.")
    else:
        st.caption(f"Or start from {example}.")
    st.button("Start from the planning example", key="plan_example", on_click=_load_example)


def _load_example() -> None:
    state.apply(links.PLAN_EXAMPLE)
    for name, value in links.PLAN_EXAMPLE_SETTINGS.items():
        state.set_setting(name, value)


def _frontier_section(scenario: dict[str, Any], csv_bytes: bytes | None
                      ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    common.heading("Frontiers", "The cheapest plan against the per-user speed target and against the site's power "
                   "(20 points each; takes seconds). Each point is the cheapest plan of any shape: the operations "
                   "settings (pool limit, rental block, smallest pool) are lifted, so a point can sit below the plan "
                   "above by what they cost.")
    if st.toggle("Compute the frontiers", key="plan_show_frontiers"):
        with st.spinner("Solving 40 plans..."):
            speed, site = _frontiers(*_inputs_of(scenario), csv_bytes)
        left, right = st.columns(2)
        with left:
            common.draw(charts.frontier_spec(*charts.FRONTIERS["speed"]), charts.frontier_data(speed))
        with right:
            common.draw(charts.frontier_spec(*charts.FRONTIERS["site"]), charts.frontier_data(site))
        return speed, site
    _carbon_section(scenario, csv_bytes)
    return None


@st.cache_data(max_entries=8, show_spinner=False)
def _carbon_frontier(scenario_json: str, settings_json: str, ids: tuple[str, ...], candidates_csv: bytes | None
                     ) -> list[dict[str, Any]]:
    s = economics.Scenario(**json.loads(scenario_json))
    settings = planner.PlanSettings(**json.loads(settings_json))
    cands = None if candidates_csv is None else plan_files.read_candidates_csv(candidates_csv, s)
    return planner.records(planner.frontier_carbon(s, settings, candidates=cands, accelerators=list(ids) or None))


def _carbon_section(scenario: dict[str, Any], csv_bytes: bytes | None) -> None:
    """Cost against emissions, on request: the cheapest plan at eight carbon prices."""
    if not (scenario.get("grid_region") or scenario.get("grid_carbon_g_per_kwh") is not None
            or scenario.get("grid_carbon_by_hour")):
        st.caption("Cost against emissions needs the grid's intensity: give grid_region, grid_carbon_g_per_kwh or "
                   "grid_carbon_by_hour.")
        return
    if st.toggle("Compute cost against emissions", key="plan_show_carbon_frontier",
                 help="The cheapest plan at carbon prices from 0 to 1,600 USD/t: what each tonne a year less costs"):
        with st.spinner("Solving 8 plans..."):
            points = _carbon_frontier(*_inputs_of(scenario), csv_bytes)
        common.draw(charts.carbon_frontier_spec(), charts.frontier_data(points))
        common.show_table(planner.frontier_table(points), key="plan_carbon_frontier", extra=CARBON_COLUMNS)


CARBON_COLUMNS: dict[str, tuple[str, Show]] = {
    "carbon_usd_per_tonne": ("Carbon price [USD/t]", Show.USD), "feasible": ("Feasible", Show.BOOL),
    "cost_before_carbon_usd_per_day": ("Cost before carbon [USD/day]", Show.USD),
    "cost_usd_per_day": ("Cost with carbon [USD/day]", Show.USD),
    "kgco2e_per_day": PLAN_COLUMNS["kgco2e_per_day"],
    "tco2e_per_year": ("Emissions [tCO2e a year]", Show.NUMBER),
    "kgco2e_per_m_tokens": ("Emissions [kgCO2e/M token]", Show.NUMBER), "reason": ("Why not", Show.TEXT),
}


def _report(out: dict[str, Any], base: dict[str, Any] | None, csv_bytes: bytes | None,
            frontiers: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None) -> None:
    """The board report of the plan shown (with the frontiers when they are drawn, and the baseline's plan)."""
    plan = {k: v for k, v in out.items() if k != "frames"}
    if frontiers is not None:
        plan["frontier_speed"], plan["frontier_site"] = frontiers
    base_plan = None if base is None else {k: v for k, v in base.items() if k != "frames"}
    # the candidates file is not in the link: its hash keeps a report from another file from being offered
    extra = [hashlib.sha256(csv_bytes or b"").hexdigest(), frontiers is not None]
    report.offer("plan", report.plan_pdf(plan, base_plan), extra)


def main() -> None:
    common.page_start()
    st.markdown(headed("Plan", INTRO, level=1))  # st.title's h1 and its intro in small grey type: one element
    side = editor.Sidebar("Plan", KEY_FIELDS, before=settings_widgets)
    editor.show_messages()
    scenario = state.scenario()
    _model_missing(scenario)
    upload = st.file_uploader("Your own candidates (CANDIDATES.csv: one hardware option per row with its measured "
                              "rates and prices); empty = the catalog", type=["csv"], key="plan_candidates_file")
    csv_bytes = upload.getvalue() if upload is not None else None
    if upload is not None:
        st.caption(f"Candidates from {plain(upload.name)}. A file is not part of the link: whoever opens the link "
                   f"uploads it again.")
    inputs = _inputs_of(scenario)
    planning.leave_others((*inputs, csv_bytes))  # its last state's costs stop before these stages
    try:
        planned = solve(inputs, csv_bytes)
    except (InputError, ValueError, economics.ScenarioError) as exc:
        st.error(plain(exc, max_chars=1000))
        common.share()
        side.stop()
    planning.view(planned)  # the settings' plans start beside the proof
    common.baseline_controls()
    out, base = _plan_and_proof(planned, _baseline_plan(csv_bytes), side)
    if out["feasible"]:
        _show(out, side, (*_inputs_of(scenario), csv_bytes), planned)
    side()
    box = common.panel("Candidates considered and why some were left out", "candidates")
    if box is not None:  # closed: its grid is neither sent nor mounted on a switch (issue #43)
        with box:
            common.show_table(out["frames"]["candidates"], key="plan_candidates", extra=CANDIDATE_COLUMNS)
    common.share()
    _report(out, base, csv_bytes, _frontier_section(scenario, csv_bytes))


main()
