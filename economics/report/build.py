"""A board report of one scenario as PDF: the page's KPIs (with changes against a baseline), its charts, the key
assumptions with their sources, the tornado of the inputs that move the cost most, the link that reproduces it and
the derivation as an appendix.

One function per kind of report, as the app's pages are: :func:`scenario_report` (Cost per token, Fleet),
:func:`decode_report` (the retrofit study) and :func:`plan_report` (a plan already solved). Each evaluates one
scenario (and its baseline) through the engine and the studies, so a report takes about a second.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from economics.engine.batch import (
    ScenarioError,
    as_scenario,
    evaluate_scenario,
    resolve_scenario,
    session_profile,
)
from economics.report import charts, document, figures, kpis
from economics.schema.scenario import FIELDS, Ownership
from economics.studies import retrofit_odds
from economics.studies.compare import cost_vs_utilization
from economics.studies.day import hours_table
from economics.studies.retrofit import analyse, break_even_decode_price_usd
from economics.studies.retrofit_life import best_year, refresh
from economics.studies.session_shape import where_found
from economics.version import __version__


class ReportKind(StrEnum):
    """Whose page a board report mirrors (``--kind``, the API's ``kind``)."""

    COST = "cost"
    FLEET = "fleet"
    SESSIONS = "sessions"
    DECODE = "decode"
    PLAN = "plan"


KINDS: dict[str, str] = {ReportKind.COST: "Cost per token", ReportKind.FLEET: "Fleet, racks and power",
                         ReportKind.SESSIONS: "Agent sessions", ReportKind.DECODE: "Decode accelerators",
                         ReportKind.PLAN: "Plan"}
"""Kind of report -> the app page it mirrors."""
PAGES: dict[str, str] = {ReportKind.COST: "", ReportKind.FLEET: "fleet", ReportKind.SESSIONS: "sessions",
                         ReportKind.DECODE: "decode", ReportKind.PLAN: "plan"}
"""Kind of report -> the page's address in the app (the link)."""
UTILIZATION_POINTS = 20
TORNADO_CAPTION = ("Cost per M tokens with each input at the low and the high end of its range, the others at their "
                   "values (the Uncertainty page's default ranges); the black line is this scenario's cost.")
PAGE_HEIGHT_PT, COLUMN_WIDTH_PT = 960.0, 380.0
"""The appendix's two landscape columns: their total height and the width of one, in points."""


def _when(when: dt.datetime | None) -> dt.datetime:
    return (when or dt.datetime.now(dt.UTC)).replace(microsecond=0)


def derivation_size(text: str) -> float:
    r"""The largest font size (pt, 3 to 6) at which the derivation fits the appendix's two columns, its long lines
    wrapped (a monospace character is 0.6 em wide, a line 1.6 em high).

    >>> derivation_size("x = 1"), derivation_size("x = 1\n" * 2000)
    (6.0, 3.0)
    """
    lines = text.splitlines() or [""]
    for tenths in range(60, 30, -2):
        size = tenths / 10
        per_line = max(1, int(COLUMN_WIDTH_PT / (0.6 * size)))
        rows = sum(max(1, math.ceil(len(line) / per_line)) for line in lines)
        if rows * 1.6 * size <= PAGE_HEIGHT_PT:
            return size
    return 3.0


def _chart(title: str, spec: Mapping[str, Any], datasets: Mapping[str, Any] | None = None) -> dict[str, str]:
    return {"title": title, "svg": document.svg(spec, datasets)}


def _cost_charts(scenario: Mapping[str, Any], result: dict[str, Any]) -> list[dict[str, str]]:
    """The Cost per token page's two charts: where the money goes, and cost against utilization."""
    out = [_chart("Where the money goes", charts.breakdown_spec(), charts.breakdown_data(result))]
    if result.get("capacity_output_tokens_per_day"):
        curve = cost_vs_utilization(dict(scenario), points=UTILIZATION_POINTS, result=result,
                                    resolved=resolve_scenario(dict(scenario)))
        out.append(_chart("Cost against utilization (same fleet, demand at each share of its capacity; the red "
                          "dot is this scenario)", charts.utilization_spec(), charts.utilization_data(result, curve)))
    return out


def _scenario_part(scenario: Mapping[str, Any], result: dict[str, Any] | None) -> dict[str, Any]:
    """Assumptions, tornado and derivation of a scenario (``result``: its evaluation; None when it has none, as a
    plan row that is not a fleet on its own: then the tornado is left out).
    """
    sens = None if result is None else figures.sensitivity(scenario, result)
    rows = figures.tornado_rows(sens)
    svg = "" if sens is None else document.svg(charts.tornado_spec(), {"tornado": charts.tornado_data(
        sens, lambda f: FIELDS[f].label)}, height=22 * len(rows))
    text = figures.derivation(scenario) if result is not None else ""
    return {"assumptions": figures.assumptions(scenario), "derivation": text,
            "derivation_size": derivation_size(text),
            "tornado": {"rows": rows, "svg": svg, "caption": TORNADO_CAPTION}}


def _document(kind: str, scenario: Mapping[str, Any], baseline: Mapping[str, Any] | None, when: dt.datetime,
              link: str | None, part: dict[str, Any]) -> bytes:
    name = str(scenario.get("name") or "scenario")
    content = {"title": f"Board report: {name}", "name": name, "kind_title": KINDS[kind],
               "date": when.date().isoformat(), "version": __version__,
               "baseline": "" if baseline is None else str(baseline.get("name") or "baseline"),
               "link": link or figures.app_link(scenario, baseline, PAGES[kind]), "pools": [],
               "pool_titles": [kpis.PLAN_COLUMNS[k][0] for k in kpis.POOL_COLUMNS], **part}
    return document.pdf(content, when)


def scenario_report(scenario: Mapping[str, Any], baseline: Mapping[str, Any] | None = None, kind: str = "cost",
                    when: dt.datetime | None = None, link: str | None = None) -> bytes:
    """The report of the Cost per token page (``kind`` ``cost``) or the Fleet page (``fleet``) as PDF bytes.

    Parameters
    ----------
    scenario, baseline
        Scenario fields (a dict or :class:`economics.Scenario` dump); the baseline's KPIs give the changes.
    kind
        ``cost`` or ``fleet``: whose KPIs are shown.
    when
        The report's date (default: now, UTC).
    link
        The app link printed (default: :func:`economics.report.figures.app_link` of the scenario and baseline).

    Raises
    ------
    ScenarioError
        The scenario does not evaluate.
    """
    result = evaluate_scenario(as_scenario(dict(scenario)))
    base = _evaluated(baseline)
    rows = kpis.COST_ROWS if kind == ReportKind.COST else kpis.FLEET_ROWS
    day = kind == ReportKind.COST and day_matters(result)
    if day:  # the Cost page's energy and carbon panel, where the day is more than one flat price
        rows = (*rows, *kpis.DAY_ROWS, *((kpis.TIER_ROWS[str(result["rent_tier"])],)
                                          if result.get("ownership") == Ownership.RENT and result.get("rent_tier") in
                                          kpis.TIER_ROWS else ()))
    charts_ = _cost_charts(scenario, result) if result.get("cost_usd_per_m_tokens") is not None else []
    if day:
        charts_.append(_chart("The day hour by hour: the draw at the facility and the electricity price",
                              charts.day_spec(), charts.day_data(hours_table(dict(scenario)))))
    part = {"kpis": figures.kpi_rows(kpis.output_kpis(rows, result, base)), "notes": figures.scenario_notes(result),
            "charts": charts_, **_scenario_part(scenario, result)}
    return _document(kind, scenario, baseline, _when(when), link, part)


def session_report(scenario: Mapping[str, Any], baseline: Mapping[str, Any] | None = None,
                   when: dt.datetime | None = None, link: str | None = None) -> bytes:
    """The report of the Sessions page (a ``workload=sessions`` scenario) as PDF bytes; as :func:`scenario_report`:
    the session's KPIs and agents at the SLO, where its input tokens are found, the context and the speed across
    its turns, and the cost charts.

    Raises
    ------
    ScenarioError
        The scenario does not evaluate, or prices requests (naming ``workload``).
    """
    scenario = as_scenario(dict(scenario)).model_dump()
    profile = session_profile(scenario)  # raises naming workload for a request scenario
    result = evaluate_scenario(as_scenario(scenario))
    base = _evaluated(baseline)
    out = [_chart("Where the session's input tokens are found (the KV tiers, or prefilled again)",
                  charts.where_found_spec(), charts.where_found_data(where_found(result))),
           _chart("The context each turn reads", charts.context_spec(), charts.context_data(
               int(scenario["turns_per_session"]), float(scenario["session_prefix_tokens"]),
               float(scenario["input_tokens_per_turn"]), float(scenario["output_tokens_per_turn"]))),
           _chart("Speed across the session: per-user decode speed and time to first token, turn by turn",
                  charts.profile_spec(), charts.profile_data(profile))]
    if result.get("cost_usd_per_m_tokens") is not None:
        out += _cost_charts(scenario, result)
    part = {"kpis": figures.kpi_rows(kpis.output_kpis(kpis.SESSION_ROWS, result, base)),
            "notes": figures.scenario_notes(result), "charts": out, **_scenario_part(scenario, result)}
    return _document("sessions", scenario, baseline, _when(when), link, part)


def day_matters(result: Mapping[str, Any]) -> bool:
    """Whether a scenario's day is more than one flat price and no carbon: a tariff, a grid intensity, a carbon
    price or a rent tier other than on demand (then the report shows the Cost page's energy and carbon panel).
    """
    return bool(result.get("electricity_tariff") or result.get("grid_carbon_g_per_kwh_effective") is not None
                or float(result.get("carbon_usd_per_tonne") or 0.0) > 0
                or (result.get("ownership") == Ownership.RENT and result.get("rent_tier") not in (None, "on_demand")))


def _evaluated(scenario: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A baseline evaluated, or None without one or when it does not evaluate (no change is shown then)."""
    if scenario is None:
        return None
    try:
        return evaluate_scenario(as_scenario(dict(scenario)))
    except ScenarioError:
        return None


def _study(scenario: Mapping[str, Any]) -> tuple[Any, float | None]:
    """The retrofit study and the break-even decode price (at no price, as the Decode page asks it)."""
    return analyse(dict(scenario)), break_even_decode_price_usd({**scenario, "decode_accelerator_price_usd": 0.0})


ODDS_SAMPLES = 2_000
"""Draws of the decode report's odds, as the Decode page draws them by default (seed 0)."""


def _short_odds(text: str) -> str:
    """A decode accelerator's odds as the report lists them: the share of draws, or 'none' and the first reason,
    shortened (the page and ``retrofit --uncertainty`` give it whole).

    >>> _short_odds("no odds: no price in the catalog; no measured throughput for x: not studied (none invented)")
    'none (no price)'
    >>> _short_odds("best in 86 % of the draws")
    'best in 86 %'
    """
    if not text.startswith("no odds: "):
        return text.removesuffix(" of the draws")
    first = text.removeprefix("no odds: ").split(";")[0].split(":")[0]
    words = {"no price in the catalog": "no price", "measured as a whole system, not as a decode pool":
             "not measured as a decode pool"}
    return f"none ({words.get(first, 'no measured speed' if first.startswith('no measured') else first)})"


def decode_report(scenario: Mapping[str, Any], baseline: Mapping[str, Any] | None = None,
                  when: dt.datetime | None = None, link: str | None = None, samples: int = ODDS_SAMPLES,
                  seed: int = 0) -> bytes:
    """The report of the Decode accelerators page (the retrofit study) as PDF bytes; as :func:`scenario_report`,
    led by the odds (:func:`economics.studies.retrofit_odds.odds` over ``samples`` draws from ``seed``): how often
    each option is the best, its NPV from P10 to P90, and the ranges no source gives, named as assumptions.

    Raises
    ------
    ValueError
        The study cannot run (a :class:`ScenarioError`, or a field it needs missing).
    """
    scenario = as_scenario(dict(scenario)).model_dump()
    result, price = _study(scenario)
    base = None
    if baseline is not None:
        try:
            base = _study(as_scenario(dict(baseline)).model_dump())
        except ValueError:
            base = None
    evaluated = _evaluated(scenario)
    found = retrofit_odds.odds(scenario, samples=samples, seed=seed, point=result)
    flows = [_chart(f"The odds: {found.headline()}; each option's NPV, P10 to P90 (bar) and P50 (tick)",
                    charts.odds_spec(), charts.odds_data(found.options)),
             _chart("NPV to date vs status quo: P10-P90 (band), P50 (line)", charts.fan_spec(),
                    charts.fan_data(found.fan))]
    renewal = refresh(result, as_scenario(scenario))
    if not renewal.empty:
        flows.append(_chart(f"When to replace the fleet: NPV by years kept (best: after {best_year(renewal)} "
                            "year(s))", charts.refresh_spec(), {"refresh": renewal}))
    cost = _cost_charts(scenario, evaluated) if evaluated and evaluated.get("cost_usd_per_m_tokens") else []
    odds_notes = [found.headline() + "."] + [f"Assumption (no source gives the range): {a}"
                                             for a in found.assumptions()]
    odds_notes.append("Decode accelerators, odds of being best: " + "; ".join(
        f"{r['decode_accelerator']}: {_short_odds(str(r['odds']))}" for _, r in found.decode.iterrows()) + ".")
    part = {"kpis": figures.kpi_rows([kpis.decode_kpis(result, price, base)]),
            "notes": odds_notes + ([] if evaluated is None else figures.scenario_notes(evaluated)),
            "charts": flows + cost,
            **_scenario_part(scenario, evaluated)}
    return _document("decode", scenario, baseline, _when(when), link, part)


def page_report(kind: ReportKind, scenario: Mapping[str, Any], baseline: Mapping[str, Any] | None,
                link: str | None) -> bytes:
    """The report of a row's page (``kind`` cost, fleet, sessions or decode; the Plan page's needs its plan:
    :func:`plan_report`) as PDF bytes: the one choice of the report made for each kind, for the ``report`` command,
    the API and the app's pages.

    Raises
    ------
    ValueError
        The scenario does not evaluate, or the study lacks a field it needs.
    """
    if kind is ReportKind.DECODE:
        return decode_report(scenario, baseline, link=link)
    if kind is ReportKind.SESSIONS:
        return session_report(scenario, baseline, link=link)
    return scenario_report(scenario, baseline, kind, link=link)


def plan_report(scenario: Mapping[str, Any], plan: Mapping[str, Any], baseline: Mapping[str, Any] | None = None,
                base_plan: Mapping[str, Any] | None = None, when: dt.datetime | None = None,
                link: str | None = None) -> bytes:
    """The report of the Plan page as PDF bytes, from a plan already solved (``plan``: the JSON-ready plan of
    :func:`economics.studies.planner.plan` ``.to_dict()``, with ``frontier_speed`` / ``frontier_site`` records
    where computed) and the baseline's (``base_plan``: feasible, or None).
    """
    scenario = as_scenario(dict(scenario)).model_dump()
    summary = plan.get("summary") or {}
    rows = [kpis.plan_kpis(summary, None if base_plan is None else base_plan.get("summary"))]
    out = [_chart("Accelerators in service hour by hour", charts.hours_spec(), charts.hours_data(
        list(plan.get("hours") or [])))]
    for which in ("speed", "site"):
        points = plan.get(f"frontier_{which}")
        if points:
            out.append(_chart("The cheapest plan against " + charts.FRONTIERS[which][1].split(" [")[0].lower(),
                              charts.frontier_spec(*charts.FRONTIERS[which]), charts.frontier_data(list(points))))
    if plan.get("frontier_carbon"):
        out.append(_chart("Cost against emissions: the cheapest plan at each carbon price",
                          charts.carbon_frontier_spec(), charts.frontier_data(list(plan["frontier_carbon"]))))
    evaluated = _evaluated(scenario)
    if evaluated and evaluated.get("cost_usd_per_m_tokens") is not None:
        out += _cost_charts(scenario, evaluated)
    notes = ([] if plan.get("feasible") else [f"No feasible plan: {plan.get('infeasible_reason')}"]) + [
        str(n) for n in plan.get("notes") or []]
    part = {"kpis": figures.kpi_rows(rows), "notes": notes, "charts": out, "pools": kpis.pool_rows(plan),
            **_scenario_part(scenario, evaluated)}
    return _document("plan", scenario, baseline, _when(when), link, part)
