"""Plan page: the cheapest fleet (prefill, decode or aggregated pools; owned, rented by the hour or already owned)
for a demand over the day, a per-user speed and a time-to-first-token target, inside the site's power, racks,
cooling and budget. A thin view: every number comes from :mod:`economics.planner`; the settings travel in the
page's link (scenario fields as in every link, planner settings as ``plan.*`` parameters).
"""

from __future__ import annotations

import json
import re
from typing import Any

import altair as alt
import streamlit as st

import economics
from economics import FIELDS, catalog, planner
from economics.links import decode_query, encode_query, query_string
from economics.validation import InputError
from ui.format import usd

PREFIX = "plan."
SCENARIO_DEFAULTS: dict[str, Any] = {
    "model": "llama-3.1-70b", "precision": "fp8", "target_output_tokens_per_s_per_user": 30.0,
    "demand_output_tokens_per_day": 2e10, "input_tokens_per_request": 2000.0, "output_tokens_per_request": 500.0,
    "peak_to_average": 2.0, "facility_cooling": "air", "allow_liquid_retrofit": False, "site_power_mw": 2.0,
    "accelerator": "h100-sxm", "existing_accelerators": 64,
}
SETTING_DEFAULTS: dict[str, Any] = {
    "ttft_target_s": 2.0, "ttft_percentile": 0.99, "demand_profile": "diurnal", "max_racks": 0.0,
    "capex_budget_usd": 0.0, "objective": "cost_per_day", "allow_rent": True, "spares": True,
}
ACCELERATORS_DEFAULT = ["h100-sxm", "h200-sxm", "b200", "gb200-nvl72", "mi300x", "mi355x", "gaudi3"]
PROFILES = ("peak", "flat", "diurnal", "24 numbers")
ZERO_IS_EMPTY = ("site_power_mw", "existing_accelerators", "ttft_target_s", "max_racks", "capex_budget_usd")


def plain(text: object) -> str:
    """User text (names, values, messages that quote them) for a Markdown element, with every Markdown and HTML
    character escaped so it shows as typed."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$&])", r"\\\1", str(text).replace("\n", " "))


def _label(name: str) -> str:
    spec = FIELDS.get(name) or planner.PLAN_FIELDS[name]
    return spec.label


def _restore() -> list[str]:
    """Seed the widgets once per session from the link; return warnings about what the link held that is unusable."""
    if "plan__loaded" in st.session_state:
        return list(st.session_state["plan__warnings"])
    params = {k: st.query_params.get_all(k) for k in st.query_params}
    scenario_params = {k: v for k, v in params.items() if not k.startswith(PREFIX)}
    values, warnings = decode_query(scenario_params, economics.Scenario())
    values = {k: v for k, v in values.items() if k in SCENARIO_DEFAULTS}
    seeds = {**SCENARIO_DEFAULTS, **{k: (0 if v is None and k in ZERO_IS_EMPTY else v) for k, v in values.items()}}
    raw = {k[len(PREFIX):]: (v[-1] if isinstance(v, list) and v else v) for k, v in params.items()
           if k.startswith(PREFIX)}
    ids = [a for a in str(raw.pop("accelerators", "")).split(",") if a]
    unknown = [a for a in ids if a not in catalog.accelerator_ids()]
    if unknown:
        warnings.append(f"plan.accelerators: unknown id {unknown[0]!r} ignored")
    settings: dict[str, Any] = dict(SETTING_DEFAULTS)
    for key, value in raw.items():
        if key not in planner.PLAN_FIELDS:
            warnings.append(f"{PREFIX}{key}: not a planner setting; ignored")
            continue
        if key in ZERO_IS_EMPTY and str(value).strip() == "":
            settings[key] = 0.0
            continue
        try:
            parsed = planner.settings_from_row({key: value})
            settings[key] = getattr(parsed, key)
        except ValueError as exc:
            warnings.append(f"{exc}; the default is used")
    for key in ZERO_IS_EMPTY:
        if key in settings and settings[key] is None:
            settings[key] = 0.0
    profile = str(settings["demand_profile"])
    if profile not in PROFILES[:3]:
        settings["demand_profile_numbers"] = profile
        settings["demand_profile"] = "24 numbers"
    for key, value in {**seeds, **settings}.items():
        st.session_state[f"plan_{key}"] = value
    st.session_state["plan_accelerators"] = [a for a in ids if a not in unknown] or ACCELERATORS_DEFAULT
    st.session_state["plan__loaded"] = True
    st.session_state["plan__warnings"] = warnings
    return warnings


def _inputs() -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """The sidebar: scenario fields (labels from economics.FIELDS), planner settings and the catalog ids."""
    ss = st.session_state
    ss.setdefault("plan_demand_profile_numbers", " ".join(["1"] * 8 + ["2"] * 10 + ["1"] * 6))
    with st.sidebar:
        st.header("Demand")
        st.number_input(_label("demand_output_tokens_per_day"), min_value=1e6, step=1e9, format="%.3g",
                        key="plan_demand_output_tokens_per_day")
        st.number_input(_label("input_tokens_per_request"), min_value=0.0, step=100.0,
                        key="plan_input_tokens_per_request")
        st.number_input(_label("output_tokens_per_request"), min_value=1.0, step=50.0,
                        key="plan_output_tokens_per_request")
        st.selectbox(_label("demand_profile").split(":")[0], PROFILES, key="plan_demand_profile",
                     help=planner.PLAN_FIELDS["demand_profile"].description)
        if ss["plan_demand_profile"] == "24 numbers":
            st.text_input("24 relative loads, hour 0 to 23", key="plan_demand_profile_numbers")
        st.number_input(_label("peak_to_average"), min_value=1.0, max_value=23.0, step=0.1,
                        key="plan_peak_to_average")
        st.header("Targets")
        st.selectbox(_label("model"), list(catalog.models().index), key="plan_model")
        st.selectbox(_label("precision"), list(FIELDS["precision"].choices), key="plan_precision")
        st.number_input(_label("target_output_tokens_per_s_per_user"), min_value=1.0, step=5.0,
                        key="plan_target_output_tokens_per_s_per_user")
        st.number_input(_label("ttft_target_s"), min_value=0.0, step=0.5, key="plan_ttft_target_s",
                        help="0 = not a constraint")
        st.selectbox(_label("ttft_percentile"), [0.5, 0.9, 0.99], key="plan_ttft_percentile")
        st.header("Hardware")
        st.multiselect("Catalog accelerators to consider", catalog.accelerator_ids(), key="plan_accelerators")
        st.selectbox(_label("accelerator") + " (existing fleet)", catalog.accelerator_ids(), key="plan_accelerator")
        st.number_input(_label("existing_accelerators"), min_value=0, step=8, key="plan_existing_accelerators",
                        help="0 = none")
        st.checkbox(_label("allow_rent"), key="plan_allow_rent")
        st.checkbox(_label("spares"), key="plan_spares")
        st.header("Facility")
        st.selectbox(_label("facility_cooling"), list(FIELDS["facility_cooling"].choices), key="plan_facility_cooling")
        st.checkbox("Allow a liquid-cooling retrofit", key="plan_allow_liquid_retrofit",
                    help=FIELDS["allow_liquid_retrofit"].description)
        st.number_input(_label("site_power_mw"), min_value=0.0, step=0.5, key="plan_site_power_mw",
                        help="0 = no limit")
        st.number_input(_label("max_racks"), min_value=0.0, step=1.0, key="plan_max_racks", help="0 = no limit")
        st.number_input(_label("capex_budget_usd"), min_value=0.0, step=1e6, format="%.3g",
                        key="plan_capex_budget_usd", help="0 = no limit")
        st.selectbox(_label("objective").split(":")[0], list(planner.PLAN_FIELDS["objective"].choices),
                     key="plan_objective", help=planner.PLAN_FIELDS["objective"].description)
    scenario = {k: ss[f"plan_{k}"] for k in SCENARIO_DEFAULTS}
    for key in ("site_power_mw", "existing_accelerators"):
        scenario[key] = scenario[key] or None
    if scenario["existing_accelerators"] is not None:
        scenario["existing_accelerators"] = int(scenario["existing_accelerators"])
    profile = ss["plan_demand_profile_numbers"] if ss["plan_demand_profile"] == "24 numbers" else ss[
        "plan_demand_profile"]
    settings = {k: ss[f"plan_{k}"] for k in SETTING_DEFAULTS}
    settings["demand_profile"] = profile
    for key in ("ttft_target_s", "max_racks", "capex_budget_usd"):
        settings[key] = settings[key] or None
    return scenario, settings, list(ss["plan_accelerators"])


@st.cache_data(max_entries=32, show_spinner=False)
def _solve(scenario_json: str, settings_json: str, ids: tuple[str, ...], candidates_csv: bytes | None
           ) -> dict[str, Any]:
    s = economics.Scenario(**json.loads(scenario_json))
    settings = planner.PlanSettings(**json.loads(settings_json))
    cands = None if candidates_csv is None else planner.read_candidates_csv(candidates_csv, s)
    return planner.plan(s, settings, cands, list(ids) or None).to_dict()


@st.cache_data(max_entries=8, show_spinner=False)
def _frontiers(scenario_json: str, settings_json: str, ids: tuple[str, ...], candidates_csv: bytes | None
               ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    s = economics.Scenario(**json.loads(scenario_json))
    settings = planner.PlanSettings(**json.loads(settings_json))
    cands = None if candidates_csv is None else planner.read_candidates_csv(candidates_csv, s)
    speed = planner.frontier_speed(s, settings, candidates=cands, accelerators=list(ids) or None)
    site = planner.frontier_site(s, settings, candidates=cands, accelerators=list(ids) or None)
    return ([{str(k): v for k, v in r.items()} for r in speed.to_dict(orient="records")],
            [{str(k): v for k, v in r.items()} for r in site.to_dict(orient="records")])


def _share(scenario: dict[str, Any], settings: dict[str, Any], ids: list[str]) -> None:
    """The page's settings in the URL: the scenario's non-default fields and the planner's as plan.* parameters."""
    query = encode_query(scenario, economics.Scenario())
    for key, value in settings.items():
        if value != planner.PlanSettings().__getattribute__(key):
            query[PREFIX + key] = "" if value is None else str(value)
    if ids != ACCELERATORS_DEFAULT:
        query[PREFIX + "accelerators"] = ",".join(ids)
    st.query_params.from_dict(query)
    base_url = (st.context.url or "").split("?")[0]
    with st.expander("Share this plan"):
        st.caption("The link holds every input of this page; opening it reproduces the plan.")
        st.code(f"{base_url}?{query_string(query)}", language=None)


def _hours_chart(hours: list[dict[str, Any]]) -> alt.Chart:
    cols = [c for c in hours[0] if c.endswith("_on_site") or c.endswith("_rented")] if hours else []
    long = [{"hour": r["hour"], "pool": c, "systems": r[c]} for r in hours for c in cols]
    return alt.Chart(alt.Data(values=long)).mark_area().encode(
        x=alt.X("hour:O", title="Hour of the day"), y=alt.Y("systems:Q", stack=True, title="Systems in service"),
        color=alt.Color("pool:N", title="Role and ownership"), tooltip=["hour:O", "pool:N", "systems:Q"])


def _frontier_chart(points: list[dict[str, Any]], x: str, title: str) -> alt.Chart:
    ok = [p for p in points if p["feasible"]]
    return alt.Chart(alt.Data(values=ok)).mark_line(point=True).encode(
        x=alt.X(f"{x}:Q", title=title), y=alt.Y("cost_usd_per_day:Q", title="Cheapest plan [USD/day]"),
        tooltip=[f"{x}:Q", alt.Tooltip("cost_usd_per_day:Q", format=",.0f"),
                 alt.Tooltip("cost_usd_per_m_tokens:Q", format=",.4f"), "binding:N"])


def main() -> None:
    st.title("Plan")
    st.caption("The cheapest fleet for a demand over the day at a per-user speed and a time-to-first-token "
               "target: prefill, decode or aggregated pools from the catalog (or your own benchmarks), owned or "
               "rented by the hour, with the fleet you already own, inside the site's power, racks, cooling and "
               "budget. A mixed-integer program (SciPy milp, HiGHS); docs/planner.md has the method.")
    for warning in _restore():
        st.warning(plain(f"Link: {warning}"))
    scenario, settings, ids = _inputs()
    upload = st.file_uploader("Your own candidates (CANDIDATES.csv: one hardware option per row with its measured "
                              "rates and prices); empty = the catalog", type=["csv"], key="plan_candidates_file")
    csv_bytes = upload.getvalue() if upload is not None else None
    try:
        s = economics.Scenario(**economics.with_changes(economics.Scenario(), **scenario))
        out = _solve(json.dumps(s.model_dump()), json.dumps(settings), tuple(ids), csv_bytes)
    except (InputError, ValueError, economics.ScenarioError) as exc:
        st.error(plain(exc))
        st.stop()
    _share(scenario, settings, ids)
    if not out["feasible"]:
        st.error(plain(f"No plan meets every constraint. {out['infeasible_reason']}"))
    else:
        _show(out)
    with st.expander("Candidates considered and why some were left out"):
        st.dataframe(out["candidates"], hide_index=True, width="stretch")
    st.subheader("Frontiers")
    st.caption("The cheapest plan against the per-user speed target and against the site's power (20 points "
               "each; takes seconds).")
    if st.toggle("Compute the frontiers", key="plan_show_frontiers"):
        with st.spinner("Solving 40 plans..."):
            speed, site = _frontiers(json.dumps(s.model_dump()), json.dumps(settings), tuple(ids), csv_bytes)
        left, right = st.columns(2)
        left.altair_chart(_frontier_chart(speed, "target_output_tokens_per_s_per_user",
                                          "Per-user speed target [token/s]"), width="stretch")
        right.altair_chart(_frontier_chart(site, "site_power_mw", "Site power [MW]"), width="stretch")


def _show(out: dict[str, Any]) -> None:
    summary = out["summary"]
    k = st.columns(5)
    k[0].metric("Cost per day", usd(summary["cost_usd_per_day"]))
    k[1].metric("Cost per M tokens", usd(summary["cost_usd_per_m_tokens"]))
    k[2].metric("Capex", usd(summary["capex_usd"]))
    k[3].metric("Facility power", f"{summary['facility_mw']:,.2f} MW")
    k[4].metric("Racks", f"{summary['racks']:,.0f}")
    st.caption(f"{summary['systems_on_site']:,} systems on site; {summary['rented_system_hours_per_day']:,.0f} "
               f"rented system-hours a day; proven within {summary['mip_gap']:.1%} of the model's lower bound.")
    if summary.get("npv_cost_usd") is not None:
        st.caption(f"Net present cost over the horizon {usd(summary['npv_cost_usd'])}; levelized "
                   f"{usd(summary['levelized_cost_usd_per_m_tokens'])} per M tokens.")
    st.subheader("The plan")
    st.dataframe(out["plan"], hide_index=True, width="stretch")
    st.subheader("Limits and what one more unit would save")
    st.dataframe(out["constraints"], hide_index=True, width="stretch")
    st.subheader("Systems hour by hour")
    st.altair_chart(_hours_chart(out["hours"]), width="stretch")
    for note in out["notes"]:
        st.caption(plain(note))
    st.download_button("Download the plan (JSON)", json.dumps(out, indent=1, allow_nan=False), "plan.json",
                       "application/json")
    st.download_button("Download the plan (CSV)", planner.plan_csv_text(out), "plan.csv", "text/csv")


main()
