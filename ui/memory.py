"""The server's memory between runs: what the first run leaves alive is frozen, so the collections after later runs
walk only what those runs create.

Streamlit runs a full garbage collection after every script run (``runner.postScriptGC``): that frees a run's cyclic
garbage before the next edit (without it, Python's own collector does that work inside the next run, between the edit
and its KPI: the Cost page's edit went from 1.25-1.63x to 2.08-2.13x the Streamlit floor). A full collection walks
every tracked object, and after the first run that is mostly the modules, catalogs and caches, which stay alive for the
process's life (45 % of the server's CPU under load, py-spy); :func:`gc.freeze` moves them to the permanent
generation, which collections skip.

The first page's KPIs wait for none of the planner's MILP (issue #43): the page reads the planner's settings only
(:mod:`economics.studies.planner` imports its names on first use). The first run imports the rest of the planner once
its page is drawn (:data:`LATER`), before the freeze, so a first visit to the Plan page pays no import and the
planner's modules are frozen with the rest.
"""

from __future__ import annotations

import gc
import importlib

LATER = ("economics.studies.planner.run", "economics.studies.planner.frontiers")
"""The planner's entry points (with the MILP, its rows, HiGHS's memo and the reports: 16 modules), which the first
page does not import and the Plan page does: imported after the first run's page is drawn."""

_frozen = False


def freeze_once() -> None:
    """After the process's first run: import :data:`LATER`, collect the run's garbage, then freeze what is left (once
    per process).
    """
    global _frozen
    if not _frozen:
        _frozen = True
        for name in LATER:
            importlib.import_module(name)
        gc.collect()
        gc.freeze()
