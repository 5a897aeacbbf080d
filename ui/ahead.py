"""The studies a session is likely to open next, made for its state in the background once its run has ended.

Issue #43 (every page switch <= 500 ms): a switch to the Cost or the Fleet page in a state that page has not drawn
computes that page's studies in the switch's run, before the browser can draw them (the evaluation, the cost curve,
the published prices' margins and the day by the hour; the comparison of the other accelerators and its chart: 60-190
ms of the server's CPU on app_latency's switch session, the comparison most of Fleet's); a switch to Throughput its
curve (30-40 ms), to Uncertainty its Monte Carlo, paired rent draws and tornado (about 50 ms). Each is cached per
state by its page (:mod:`ui.studies`, ``st.cache_data``), so the same calls made ahead fill the same entries and the
page's run only reads them: nothing is computed twice, and every number is the page's own.

After each run of a session in a browser (app.py), :func:`after_run` hands its state to one worker thread of the
process, which makes those studies one at a time, each started only while no session's run is under way
(:func:`ui.memory.until_idle`, as the Plan page's preload does): a run's KPIs never wait for them, though a run that
starts during a step shares the machine with that step (its own study, 10-100 ms). Only the latest state handed in is
kept (an edit made meanwhile replaces the one before), and a state whose studies are cached costs a lookup a study.

The Plan page's plan (:func:`plan`: a switch to Plan from a linked state solved it on arrival, 1.8-2.2 s of CPU) is
made for the state a session opened in, as the server's start makes it for a session opened without a link
(:mod:`ui.memory`): once that session's first run has ended, each of its steps once no run has started or ended for
:data:`QUIET_S`, and no further step once another session has opened. Not for every edit's state: an edit's plan is
1.8-2.2 s of CPU that would share the machine with the next edits, and a session editing on another page plans its
Plan page's state on arrival, as before.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import streamlit as st

import economics
from economics import catalog
from ui import common, memory, state, studies

if TYPE_CHECKING:
    from ui import planning

WORKER = "studies-ahead"
"""The worker thread's name."""
QUIET_S = 2.0
"""The Plan page's plan of a state is made only once no run has started or ended for this long [s]: its steps are
0.3-1.2 s of CPU each (HiGHS and the planner's Python), which a run starting during one shares the machine and the
interpreter's lock with, so they wait for a session that is reading rather than clicking. With 1 s, app_latency's
switch rounds at load 19-23 (the browser drawing the Decode page for over a second after its run) had the first
switch to Cost share the machine with the plan's stages: 3.3-4.0 s against 2.2-2.4 s (docs/speed.md)."""


OPENED = "_ahead_opened"
"""In a session's state once its first run has handed its state in (:func:`after_run`)."""


class Superseded(Exception):
    """Another session opened: the worker leaves the Plan page's plan of the one before."""


State = tuple[dict[str, Any], dict[str, Any]]
_pending: list[State] = []  # the latest state handed in, for the Cost and Fleet pages' studies (at most one)
_opened: list[State] = []  # the latest state a session opened in, for the Plan page's plan (at most one)
_wake = threading.Condition()
_started = False


class _NoRunContextWarning(logging.Filter):
    """Streamlit warns of a missing run context at every cached call made outside a session's run (its
    ``get_script_run_ctx``); the background threads of :mod:`ui.memory` and this module make such calls on purpose
    (a cache is the process's), so their warnings are dropped, every other thread's kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.threadName in (WORKER, memory.PLAN_THREAD) and "missing ScriptRunContext" in
                    record.getMessage())


def steps(scenario: Mapping[str, Any], settings: Mapping[str, Any]) -> list[Callable[[], object]]:
    """The Cost, Fleet, Throughput and Uncertainty pages' studies of this state, in the calls those pages make
    (ui/cost.py, ui/day.py, ui/fleet.py, ui/throughput.py, ui/uncertainty.py), the KPIs' evaluation first; those a
    page would not make for it (no capacity, no cost, no model, no accelerator to compare) left out, as the page
    leaves them."""
    key = common.canonical(scenario)
    try:
        result = common.evaluate(scenario)
    except economics.ScenarioError:
        return []  # every page shows the error, and draws no study
    made: list[Callable[[], object]] = []
    if result["cost_usd_per_m_tokens"] is not None:
        if result["capacity_output_tokens_per_day"]:
            made.append(lambda: studies.cost_curve(key))
        made += [lambda: studies.hours_of(key), lambda: studies.margins(key)]
    ids = catalog.accelerator_ids()
    choices = tuple(a for a in settings["compare"] if a in ids)
    if choices and scenario["model"] is not None:
        made += [lambda: studies.compare_of(key, choices), lambda: studies.compare_spec(key, choices)]
    # the calibration report the Throughput page shows: the same for every state (data/ only), made once per process
    # (0.15-0.35 s of CPU, which the server's first switch to Throughput paid), a lookup after that
    made.append(studies.calibration)
    return made + _throughput(scenario, result) + _uncertainty(key, result, settings)


def _throughput(scenario: Mapping[str, Any], result: Mapping[str, Any]) -> list[Callable[[], object]]:
    """The Throughput page's curve and its charts (ui/throughput.py), where the page draws them (a model, requests):
    30-40 ms of CPU on a new state, which its switch's run paid."""
    if scenario["model"] is None or scenario["workload"] == "sessions":
        return []
    return [lambda: studies.curve_specs(*studies.curve_key(scenario, result))]


def _uncertainty(key: str, result: dict[str, Any], settings: Mapping[str, Any]) -> list[Callable[[], object]]:
    """The Uncertainty page's studies (ui/uncertainty.py) at the state's ranges, samples and seed: the Monte Carlo
    and its percentiles, the paired rent draws, the tornado and the histogram, about 50 ms of CPU on a new state,
    which its switch's run paid. The ranges are read in each step, where what raises is the page's to show."""
    samples, seed = int(settings["samples"]), int(settings["seed"])

    @functools.cache  # made by the first step, read by the others (what raises is not kept: each step raises it)
    def ranges() -> str:
        return studies.ranges_key(result, settings)

    return [lambda: studies.monte_carlo_of(key, ranges(), samples, seed).summary,
            lambda: studies.own_cheaper(key, ranges(), samples, seed), lambda: studies.tornado_bars(key, ranges()),
            lambda: studies.histogram_bins(key, ranges(), samples, seed)]


def make(scenario: Mapping[str, Any], settings: Mapping[str, Any],
         between: Callable[[], None] = lambda: None) -> int:
    """Make the studies of :func:`steps`, ``between()`` called before each (and before the evaluation); the number
    made. A study that raises is left to its page, which shows the error as it would have."""
    between()
    made = 0
    for step in steps(scenario, settings):
        between()
        try:
            step()
        except Exception:  # noqa: BLE001 - the page's own call raises it again where it is shown
            continue
        made += 1
    return made


def plan(scenario: Mapping[str, Any], settings: Mapping[str, Any],
         between: Callable[[], None] = lambda: None) -> planning.Plan | None:
    """The Plan page's plan of this state with the catalog's candidates (a switch to Plan uploads no file), proven,
    with what each operations setting costs and its downloads (:func:`ui.planning.solve_inputs`, the store the page
    reads), ``between()`` called before each step; None when the planner refuses the state (the page says why).
    :mod:`ui.planning` (the planner's MILP) is imported here, not with this module: app.py imports this one before
    the first page's KPIs, which wait for none of the planner (ui/memory.py)."""
    store = importlib.import_module("ui.planning")
    try:
        made: planning.Plan = store.solve_inputs(store.inputs_of(scenario, settings), between)
        return made
    except Superseded:
        raise
    except Exception:  # noqa: BLE001 - the page's own call raises it again where it is shown
        return None


def after_run() -> None:
    """Hand the session's state to the worker (started on the first call), in place of any state still pending; and,
    after a session's first run, for the Plan page's plan. Only for a session in a browser: a run without one
    (``streamlit.testing``) is a test or a bench, which calls :func:`make` and :func:`plan` itself where it wants
    them made."""
    global _started
    if not st.context.headers or state.SCENARIO not in st.session_state:
        return
    now = (state.scenario(), state.settings())
    first = OPENED not in st.session_state
    st.session_state[OPENED] = True
    with _wake:
        _pending[:] = [now]
        if first:
            _opened[:] = [now]
        if not _started:
            _started = True
            logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").addFilter(
                _NoRunContextWarning())
            threading.Thread(target=_work, name=WORKER, daemon=True).start()
        _wake.notify()


def _quiet() -> None:
    """Wait for :data:`QUIET_S` without a run; raise :class:`Superseded` if another session has opened since."""
    memory.until_quiet(QUIET_S)
    with _wake:
        if _opened:
            raise Superseded


def _work() -> None:
    """The pages' studies of the latest state first (none again for the state made last: a page switch changes no
    state, and its dozen lookups, most copying a cached answer, ran while the next switch's run could start), then
    the Plan page's plan of the state the latest session opened in."""
    made_for: State | None = None
    while True:
        with _wake:
            _wake.wait_for(lambda: bool(_pending or _opened))
            studies_of, opened = (_pending.pop(), None) if _pending else (None, _opened.pop())
        if studies_of is not None and studies_of != made_for:
            make(*studies_of, between=memory.until_idle)  # it waits before its first step too
            made_for = studies_of
        elif opened is not None:
            with contextlib.suppress(Superseded):
                plan(*opened, between=_quiet)
