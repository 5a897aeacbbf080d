"""The ``report`` command's side of the report: its options, and the reports of rows read from a file (a scenario
row already read by the command, a plan row read here as the ``plan`` command reads it).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from economics.io.plan_files import plan_from_files, read_plan_row, solver_chatter_silenced
from economics.report import build, figures
from economics.schema.scenario import FIELDS
from economics.schema.values import choice_words
from economics.studies.planner.inputs import FrontierChoice


def add_report_arguments(cmd: argparse.ArgumentParser) -> None:
    """The ``report`` command's options beyond ``input`` and ``--row``."""
    cmd.add_argument("-o", "--output", required=True, help="the PDF to write (- for standard output, not a terminal)")
    cmd.add_argument("--kind", choices=choice_words(build.ReportKind), default=build.ReportKind.COST.value,
                     help="whose page the report mirrors: cost (Cost per token), fleet, sessions (a workload=sessions "
                     "row), decode (the retrofit study) or plan (the planner: the row's planner columns, --candidates)")
    cmd.add_argument("--baseline", metavar="ROW", help="another row of the same file (its name, or number:N): each "
                     "KPI shows its change against it")
    cmd.add_argument("--candidates", help="with --kind plan: CSV of hardware options (default: the catalog)")
    cmd.add_argument("--accelerators", default="", help="with --kind plan: catalog ids to consider (default: all)")
    cmd.add_argument("--frontier", choices=choice_words(FrontierChoice), default=FrontierChoice.NONE.value,
                     help="with --kind plan: also chart these cost frontiers (speed and site 20 plans each, carbon "
                     "8: seconds)")
    cmd.add_argument("--app-url", default=figures.DEFAULT_APP_URL, type=_app_url, help="where the app is served "
                     "(an http:// or https:// address), for the link that reproduces the report (default "
                     "%(default)s)")


def _app_url(text: str) -> str:
    """``--app-url`` checked (:func:`economics.report.figures.checked_app_url`); argparse names the option."""
    try:
        return figures.checked_app_url(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def row_report(kind: str, scenario: Mapping[str, Any], baseline: Mapping[str, Any] | None, app_url: str) -> bytes:
    """The report (cost, fleet, sessions or decode) of a row's scenario fields, with the link to ``app_url``'s page.

    Raises
    ------
    ValueError
        The scenario does not evaluate, or the study lacks a field it needs.
    """
    link = figures.app_link(scenario, baseline, build.PAGES[kind], app_url)
    return build.page_report(build.ReportKind(kind), scenario, baseline, link)


def plan_report(data: bytes, row: str, baseline_row: str | None, candidates: bytes | None, accelerators: list[str],
                frontier: str, curves_sha256: str, app_url: str) -> tuple[bytes, dict[str, Any]]:
    """The report of a plan row (and the plan itself), planned as the ``plan`` command plans it
    (:func:`economics.io.plan_files.plan_from_files`: the row's planner columns, the candidates, the accelerators,
    the frontiers); the baseline row is planned with its own planner columns.

    Raises
    ------
    economics.io.plan_files.InvalidPlanRow
        A row has a bad value.
    economics.schema.validation.InputError
        The file, a row name or the candidates cannot be used.
    """
    cells, settings = read_plan_row(data, row)
    base_cells = None if baseline_row is None else read_plan_row(data, baseline_row)[0]
    with solver_chatter_silenced():
        out = plan_from_files(data, row, candidates, accelerators, frontier, curves_sha256)
        base_out = None if baseline_row is None else plan_from_files(data, baseline_row, candidates, accelerators,
                                                                     "none", curves_sha256)
    scenario = {k: v for k, v in cells.items() if k in FIELDS}
    baseline = None if base_cells is None else {k: v for k, v in base_cells.items() if k in FIELDS}
    link = figures.app_link(scenario, baseline, build.PAGES["plan"], app_url,
                            figures.plan_link_settings(settings, accelerators))
    pdf = build.plan_report(scenario, out, baseline, base_out if base_out and base_out["feasible"] else None,
                            link=link)
    return pdf, out
