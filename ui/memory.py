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

Before any browser connects (issue #43): ``streamlit run app.py`` imports app.py once at the server's start (it holds
Streamlit's ``st.App``), and the app's :func:`preload` starts the first page's imports and its default scenario's
evaluation on a background thread while the browser loads Streamlit's page (0.6-0.8 s of its JavaScript, on a quiet
machine, during which the server would otherwise wait). The first run then finds the modules loaded, or waits on
Python's import lock for the one under way (nothing is imported twice), and waits for the preload's end
(:func:`until_first_page`) before its page runs, so the catalog tables and the default curve are read and remembered
by the engine once; it evaluates its scenario itself, so nothing it draws changes.

Then the Plan page (issue #43: a first switch to it solved the plan, its proof and what each operations setting costs
on arrival, 1.2-1.5 s of CPU on the default state): once the first run has drawn its page, a second thread solves the
plan of the state a session opened without a link is in, into the store every session's Plan page reads
(:mod:`ui.planning`, keyed by the whole state), each step while no session's run is under way (:func:`running`), so
a switch to Plan on that state draws it from there. A session in any other state plans its own, as before.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import threading
import time
from collections.abc import AsyncIterator, Iterator

LATER = ("economics.studies.planner.run", "economics.studies.planner.frontiers")
"""The planner's entry points (with the MILP, its rows, HiGHS's memo and the reports: 16 modules), which the first
page does not import and the Plan page does: imported after the first run's page is drawn."""

_frozen = False
FIRST_RUN_DRAWN = threading.Event()
"""Set once the process's first run has drawn its page (:func:`freeze_once`): the Plan page's preload waits for it."""


def freeze_once() -> None:
    """After the process's first run: import :data:`LATER`, collect the run's garbage, then freeze what is left (once
    per process); then let the Plan page's preload start (:data:`FIRST_RUN_DRAWN`).
    """
    global _frozen
    if not _frozen:
        _frozen = True
        for name in LATER:
            importlib.import_module(name)
        gc.unfreeze()  # the preload's objects (:func:`_first_page`) too: their garbage is collected here, not kept
        gc.collect()
        gc.freeze()
        FIRST_RUN_DRAWN.set()


FIRST = ("economics.store", "ui.state", "economics.report.charts", "economics.report.kpis", "ui.common", "ui.day",
         "ui.editor", "ui.report", "ui.saving", "ui.studies", "ui.ahead", "PIL.Image", "PIL.ImageFile")
"""app.py's imports and the Cost page's (the default page; ui/cost.py is run as a script, so its imports are named),
heaviest first: pandas, the schema and the engine (no scipy: the engine's PCHIP is its own, and scipy.special and
scipy.optimize are imported where used, which this page is not); then PIL, which ``st.set_page_config`` imports to
read app.py's favicon, given as a URL."""


def _first_page() -> None:
    """Import :data:`FIRST`, then evaluate the default scenario once (the catalog tables it reads, its curve), with
    Python's automatic garbage collection paused meanwhile.

    Why paused: the imports create some 190,000 objects that stay alive for the process's life, and the collector,
    counting allocations, walked all of them twice in full on the way (0.10-0.17 s of the preload's 1.2 s of CPU then,
    0.7-0.9 s since it imports no scipy, before the first KPI); almost nothing they create is garbage. The first run's
    end collects in full anyway (:func:`freeze_once`, then Streamlit's ``runner.postScriptGC``), after its KPIs. The
    pause is the process's (the server's other threads, serving Streamlit's page meanwhile, allocate little); collection
    resumes when the preload ends, whatever happens (unless it was off before).

    Why frozen at the end: the pause does not spare the walk, it defers it. Every object allocated meanwhile is still
    in the youngest generation when collection resumes, so the first allocation after it walked all of them (a
    young collection of some 186,000 objects, 0.07 s of CPU and 0.16 s of wall at load 7, while the first run waited
    for the preload, just before its KPI). :func:`gc.freeze` moves them aside at once, so no collection walks them;
    :func:`freeze_once` puts them back before its full collection, so their garbage is freed there as before."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        for name in FIRST:
            importlib.import_module(name)
        economics = importlib.import_module("economics")
        economics.evaluate_scenario(economics.default_scenario())
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


FIRST_PAGE_THREAD = "first-page-preload"
"""The name of :func:`_first_page`'s thread."""
_first_page_thread: threading.Thread | None = None


def until_first_page() -> None:
    """Wait until the server's preload of the first page (:func:`_first_page`) has ended, if one was started.

    A session that connects before it ends (the common case on a cold start: the browser's page loaded in less time than
    the preload's 1.3 s of CPU, and still does in less than its 0.7-0.9 s at load 15-18 since it imports no scipy)
    blocks on Python's import lock until the modules are imported, and then, without this wait, evaluated its scenario
    alongside the preload's evaluation: the catalog tables are remembered with ``functools.cache``, which does not make
    a second caller wait for the first, so both threads read and parsed them, sharing the interpreter's lock (the
    default scenario twice at once: 0.18-0.26 s of CPU and 0.29-0.74 s wall, against 0.08 s and 0.11-0.14 s one after
    the other; docs/speed.md). Waiting holds no lock; a process whose preload has ended, or that never started one
    (``streamlit.testing``), does not wait."""
    if _first_page_thread is not None:
        _first_page_thread.join()


PLAN_THREAD = "plan-page-preload"
"""The name of :func:`_plan_page`'s thread."""
_IDLE = threading.Condition()
_runs = 0
_last_run = 0.0  # time.monotonic() when a run last started or ended


@contextlib.contextmanager
def running() -> Iterator[None]:
    """A session's run (app.py runs each page inside): the Plan page's preload starts none of its steps while one is
    under way."""
    global _runs, _last_run
    with _IDLE:
        _runs += 1
        _last_run = time.monotonic()
    try:
        yield
    finally:
        with _IDLE:
            _runs -= 1
            _last_run = time.monotonic()
            _IDLE.notify_all()


def until_idle() -> None:
    """Wait until no session's run is under way."""
    with _IDLE:
        _IDLE.wait_for(lambda: _runs == 0)


def until_quiet(seconds: float) -> None:
    """Wait until no session's run is under way and none has started or ended for ``seconds``."""
    with _IDLE:
        while True:
            _IDLE.wait_for(lambda: _runs == 0)
            left = _last_run + seconds - time.monotonic()
            if left <= 0:
                return
            _IDLE.wait(left)


def _plan_page() -> None:
    """Once the first run has drawn its page, the Plan page's plan for a session opened without a link, proven, with
    what each operations setting costs and its downloads, into the store the page reads
    (:func:`ui.planning.solve_default`), each step started only while no session's run is under way.

    Not before, nor alongside a run: its 1.3 s of CPU in four steps (HiGHS and the planner's Python) would share the
    two cores and the interpreter's lock with the runs, and a run's KPI must not wait for a plan it does not show (an
    edit made while a step runs still shares the machine with that step, 0.04-0.45 s of CPU)."""
    FIRST_RUN_DRAWN.wait()
    importlib.import_module("ui.planning").solve_default(between=until_idle)


@contextlib.asynccontextmanager
async def preload(_app: object) -> AsyncIterator[None]:
    """The server's lifespan (Streamlit's ``st.App``): start :func:`_first_page` on a daemon thread as the server starts
    listening, so that the first session's run, which starts once the browser has loaded Streamlit's page, finds the
    first page's modules and catalogs ready; and :func:`_plan_page` on another, which waits for that run's page."""
    global _first_page_thread
    _first_page_thread = threading.Thread(target=_first_page, name=FIRST_PAGE_THREAD, daemon=True)
    _first_page_thread.start()
    threading.Thread(target=_plan_page, name=PLAN_THREAD, daemon=True).start()
    yield None
