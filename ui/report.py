"""The board report on the pages: a button that prepares the PDF of the page's scenario (and pinned baseline), then
the download button (:mod:`economics.report.build` makes it, with the specs the pages draw).

The PDF is made only when asked for (about half a second), never on an ordinary rerun; it is kept in the session
with the state it was made from (the page, the scenario, the baseline, the link and the day), so the download
button stays while nothing changes and goes back to "prepare" after any edit. Reports are also cached per state
across sessions.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping
from typing import Any

import streamlit as st

import economics
from economics.report import build
from ui import common, state
from ui.text import plain

REPORT = "_board_report"
"""Session key of the last report prepared: (its state key, the PDF bytes)."""
FAILED = "The report could not be made: "


Maker = Callable[[str, str, str, str], bytes]
"""Makes a page's report from (state key, scenario JSON, baseline JSON, link)."""


@st.cache_data(max_entries=32, show_spinner=False)
def _scenario_pdf(key: str, kind: str, scenario_json: str, baseline_json: str, link: str) -> bytes:
    return build.page_report(build.ReportKind(kind), json.loads(scenario_json), json.loads(baseline_json) or None,
                             link)


@st.cache_data(max_entries=16, show_spinner=False)
def _plan_pdf(key: str, scenario_json: str, baseline_json: str, link: str, _plan: Mapping[str, Any],
              _base_plan: Mapping[str, Any] | None) -> bytes:
    """The Plan page's report of the plan ``_plan`` solved for ``key`` (the key holds the inputs and settings; the
    plans, as their leading underscores say, are not hashed)."""
    return build.plan_report(json.loads(scenario_json), _plan, json.loads(baseline_json) or None, _base_plan,
                             link=link)


def scenario_pdf(kind: str) -> Maker:
    """The maker of the Cost, Fleet, Sessions or Decode page's report (``kind`` cost, fleet, sessions, decode)."""
    return lambda key, scenario_json, baseline_json, link: _scenario_pdf(key, kind, scenario_json, baseline_json,
                                                                         link)


def plan_pdf(plan: Mapping[str, Any], base_plan: Mapping[str, Any] | None) -> Maker:
    """The maker of the Plan page's report of ``plan`` and the baseline's plan ``base_plan``."""
    return lambda key, scenario_json, baseline_json, link: _plan_pdf(key, scenario_json, baseline_json, link, plan,
                                                                     base_plan)


def offer(kind: str, make: Maker, extra: Any = None) -> None:
    """The report's buttons: "Prepare the board report", then "Download report (PDF)" while the state it was made
    from is the page's: the page, scenario, baseline, link and day, and any page ``extra`` (the plan's settings)."""
    scenario_json, baseline_json = common.canonical(state.scenario()), common.canonical(state.baseline() or {})
    link = common.share_link()
    key = json.dumps([kind, scenario_json, baseline_json, link, dt.date.today().isoformat(), extra], default=str)
    ss = st.session_state
    made = ss.get(REPORT)
    # a row only when the download button will stand beside the first (just asked for, or made for this state):
    # one element fewer for the browser on every other switch and run
    where = common.row() if ss.get("report_prepare") or (made is not None and made[0] == key) else st
    if where.button("Prepare the board report (PDF)", key="report_prepare",
                    help="One to three pages for a board: the KPIs (with changes against the baseline), the charts, "
                         "the key assumptions with their sources, the tornado, the derivation and this page's link"):
        try:
            ss[REPORT] = (key, make(key, scenario_json, baseline_json, link))
        except (economics.ScenarioError, ValueError, RuntimeError) as exc:
            st.error(FAILED + plain(str(exc), max_chars=600))
    made = ss.get(REPORT)  # the one just made, if any
    if made is not None and made[0] == key:
        name = "".join(c if c.isalnum() or c in "-_" else "-" for c in str(state.scenario()["name"]))[:60]
        where.download_button("Download report (PDF)", made[1], f"report-{name or kind}.pdf", "application/pdf",
                              key="report_pdf", on_click="ignore")
