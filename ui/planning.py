"""The Plan page's plans, one per state, kept by the process for every session: the plan of the planner's stages,
the plan proven from it and what each operations setting costs, each solved once (ui/plan.py draws them).

A module, not the page's script, so the server's start (:mod:`ui.memory`) can solve the plan of the state a session
opens in (no link: the default scenario under the default planner settings) into the same store the page reads,
after the first session's first run: a first switch to Plan on that state then solves nothing (issue #43: 1.2-1.5 s of
CPU on arrival before). The store is keyed by everything a plan is made from (the scenario but its name, which the
planner does not read, the planner settings, the accelerators considered and the candidates file), so a session reads
a plan only when its inputs are the same bit for bit, as Streamlit's ``st.cache_resource`` did here before.

Streamlit's "Clear caches" (the app menu's, or ``st.cache_resource.clear()``) clears this store too: Streamlit offers
no hook of its own for that, but it releases every ``st.cache_resource`` entry and calls each one's ``on_release``, so
the store keeps one such entry alive (:func:`_watch_clear`) whose release clears it.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from typing import Any

import streamlit as st

import economics
from economics.io import plan_files
from economics.studies import planner
from ui import common, links

Inputs = tuple[str, str, tuple[str, ...]]
"""The scenario without its name (canonical JSON), the planner settings (JSON) and the accelerators considered: with
the candidates file, the key of a plan."""
Key = tuple[str, str, tuple[str, ...], bytes | None]
MAX_PLANS = 32
"""States kept (the least recently read dropped, never a pinned one: :func:`solve_default`), as the page's
``st.cache_resource`` kept before."""


def inputs_of(scenario: Mapping[str, Any], settings: Mapping[str, Any]) -> Inputs:
    """A state's plan inputs: the scenario without its name, the planner settings out of the page settings, the
    accelerators.

    The planner reads no scenario name (a plan, its proof, the settings' costs and the downloads are the same under
    any name), so the name is left out of the key: renaming the working scenario on the Plan page reads the plan
    already made instead of solving it again (a solve, a proof and the settings' costs: 1-2 s of CPU a state).
    """
    chosen = links.plan_settings(settings)
    return (common.canonical({k: v for k, v in scenario.items() if k != "name"}),
            json.dumps(dataclasses.asdict(chosen), sort_keys=True), tuple(settings[links.PLAN_PREFIX + "accelerators"]))


def _page_data(result: planner.PlanResult) -> dict[str, Any]:
    """A plan as JSON-ready data, and its tables as the planner's frames under ``frames`` (for display)."""
    return {**result.to_dict(), "frames": {"plan": result.plan, "constraints": result.constraints,
                                           "candidates": result.candidates, "hours": result.hours}}


_BESIDE = ThreadPoolExecutor(max_workers=1, thread_name_prefix="plan-settings-beside")
"""The one thread on which the plans without each operations setting are made beside a proof (:meth:`Plan.begin`),
for every state of the process: at most one such solve runs at a time, so with several states planned at once the
second core is not shared by more than one of them (a state's plans still waiting here when its page needs them are
taken off and made by the page's own run, :meth:`Plan.setting_costs`)."""


class Plan:
    """A state's plan on the page: the plan of the planner's stages (``planner.plan_stages``), drawn at once, the
    plan proven from it (``planner.prove_plan``: what ``planner.plan`` returns), drawn when the proof is done, and
    what each operations setting costs for the plan proven (``planner.costs_of_settings``), and its downloads.
    Shared by every session (:func:`planned`), each part made once; each caller gets its own copy.

    The plans without each setting (``planner.settings_plans``: they read the stages' inputs, not their plan or its
    proof) are started on a thread beside the proof as soon as the stages' plan is made (:meth:`begin`), and
    joined when the costs are drawn: HiGHS lets go of the GIL while it solves, so the proof and they share the two
    cores. That work is stopped (``planner.cancellable``: its solves end within milliseconds and give no plan) when
    no session views the state any more (:meth:`release`: a session that moves to another state; a second session
    still on this one keeps it going, since it still draws these costs), and when the plan is cleared or dropped
    from the store (:meth:`cancel`). Costs stopped before they were made are made by the next run that draws them.
    """

    def __init__(self, staged: planner.Staged, key: Key) -> None:
        self.key = key
        self.staged: planner.Staged | None = staged
        self.costing = staged.inputs()  # what the settings' costs start from, kept when the models are let go
        self.first = _page_data(staged.result())
        self.final = None if staged.proves else self.first
        self.costs: Any = None  # the settings' costs' frame, once solved
        self.files: dict[str, str] | None = None  # the downloads, once made
        self.lock = threading.Lock()
        self.viewers = 0  # sessions whose last plan drawn is this one (:meth:`hold`, :meth:`release`)
        self._stop = threading.Event()  # set to stop the plans without each setting made beside the proof

    def begin(self) -> None:
        """Start the plans without each setting beside the proof, unless they are made, under way, or not needed
        (no plan: no costs are drawn; a carbon cap: its costs are made another way)."""
        with self.lock:
            if (self.costs is None and self._early is None and self.first["feasible"]
                    and self.costing.prepared is not None):
                self._stop = threading.Event()
                self._early = _BESIDE.submit(_settings_plans, self.costing, self._stop)

    _early: Future[planner.SettingPlans] | None = None  # none until begun

    def cancel(self) -> None:
        """Stop the plans without each setting if they are under way or waiting (a later :meth:`begin` or
        :meth:`setting_costs` makes them again)."""
        if self._early is None:  # never begun, or done with: nothing to stop (and no lock taken)
            return
        with self.lock:
            self._cancel()

    def _cancel(self) -> None:
        if self._early is not None and not self._early.done():
            self._stop.set()
            self._early.cancel()
            self._early = None

    def hold(self) -> None:
        """A session views this plan: its costs are wanted (started now if they were stopped)."""
        with self.lock:
            self.viewers += 1
        self.begin()

    def release(self) -> None:
        """A session views another plan: the costs are stopped if no other session views this one."""
        with self.lock:
            self.viewers = max(self.viewers - 1, 0)
            if self.viewers == 0:
                self._cancel()

    @property
    def pending(self) -> bool:
        """Whether the proof is still to run."""
        return self.final is None

    def now(self) -> dict[str, Any]:
        """The plan proven when it is, else the stages' plan."""
        return copy.deepcopy(self.final if self.final is not None else self.first)

    def proven(self) -> dict[str, Any]:
        """The plan proven (the proof runs on the first call; a second session waits for it rather than run it)."""
        with self.lock:
            if self.final is None:
                assert self.staged is not None
                self.final = _page_data(planner.prove_plan(self.staged))
                self.staged = None  # the models are not needed again
        return copy.deepcopy(self.final)

    def setting_costs(self) -> Any:
        """What each operations setting costs for the plan proven, as the planner's frame (solved on the first call,
        after the proof)."""
        summary = self.proven()["summary"]
        plans = self._joined()
        with self.lock:
            if self.costs is None:
                s, settings, cands, ids = _read(self.key)
                self.costs = planner.costs_of_settings(summary, s, settings, cands, ids, staged=self.costing,
                                                       plans=plans)
            self._early = None
        return self.costs.copy(deep=True)

    def _joined(self) -> planner.SettingPlans | None:
        """The plans without each setting made beside the proof (waited for while under way); None when they were
        not started, were stopped, or still wait behind another state's (then taken off: the caller makes them)."""
        with self.lock:
            early = None if self.costs is not None else self._early
        if early is None or early.cancel():
            return None
        try:
            return early.result()
        except (planner.Cancelled, CancelledError):
            return None

    def downloads(self) -> dict[str, str]:
        """The plan proven as its downloads give it (JSON and CSV text), with its limits and what each operations
        setting costs (made on the first call, after those)."""
        out, frame = self.proven(), self.setting_costs()
        with self.lock:
            if self.files is None:
                limits = planner.limits_with_costs(out["frames"]["constraints"], frame)
                data = {**{k: v for k, v in out.items() if k != "frames"}, "constraints": planner.records(limits),
                        "setting_costs": planner.records(frame)}
                self.files = {"json": json.dumps(data, indent=1, allow_nan=False),
                              "csv": plan_files.plan_csv_text(data)}
        return dict(self.files)


def _settings_plans(costing: planner.Staged, stop: threading.Event) -> planner.SettingPlans:
    """``planner.settings_plans`` of a state's stages' inputs, stopped (``planner.Cancelled``) once ``stop`` is
    set."""
    with planner.cancellable(stop):
        return planner.settings_plans(costing)


def _read(key: Key) -> tuple[economics.Scenario, planner.PlanSettings, Any, list[str] | None]:
    """The scenario, planner settings, candidates (None: the catalog's) and accelerators (None: all) of a key."""
    scenario_json, settings_json, ids, candidates_csv = key
    s = economics.Scenario(**json.loads(scenario_json))
    settings = planner.PlanSettings(**json.loads(settings_json))
    cands = None if candidates_csv is None else plan_files.read_candidates_csv(candidates_csv, s)
    return s, settings, cands, list(ids) or None


class _Store:
    """Plans by key, the :data:`MAX_PLANS` last read kept; one solve per key at a time (a second caller of a key
    being solved waits for it; other keys are solved alongside)."""

    def __init__(self) -> None:
        self.plans: OrderedDict[Key, Plan] = OrderedDict()
        self.solving: dict[Key, threading.Lock] = {}
        self.lock = threading.Lock()
        self.pinned: set[Key] = set()

    def pin(self, key: Key) -> None:
        """Keep the plan of ``key`` however many other states are read after it (never the one dropped)."""
        with self.lock:
            self.pinned.add(key)

    def get(self, key: Key) -> Plan | None:
        """The plan of ``key`` if it is kept (then read last), else None."""
        with self.lock:
            found = self.plans.get(key)
            if found is not None:
                self.plans.move_to_end(key)
            return found

    def make(self, key: Key, solve: Callable[[], Plan]) -> Plan:
        """The plan of ``key``, ``solve()`` made and kept unless another caller made it first."""
        with self.lock:
            gate = self.solving.setdefault(key, threading.Lock())
        with gate:
            found = self.get(key)
            if found is None:
                found = solve()  # an input error raises: nothing is kept
                with self.lock:
                    self.plans[key] = found
                    for old in [k for k in self.plans if k not in self.pinned][:max(len(self.plans) - MAX_PLANS, 0)]:
                        self.plans.pop(old).cancel()  # the least recently read first; its costs no longer made
                _watch_clear()  # a "Clear caches" from now on clears what was just kept
        with self.lock:
            self.solving.pop(key, None)
        return found

    def clear(self) -> None:
        """Forget every plan (their settings' costs under way stopped)."""
        with self.lock:
            for plan in self.plans.values():
                plan.cancel()
            self.plans.clear()
            self.pinned.clear()


PLANS = _Store()
"""Every session's plans (the process's)."""


def _clear_plans(_watching: bool) -> None:
    PLANS.clear()


@st.cache_resource(show_spinner=False, on_release=_clear_plans)
def _watch_clear() -> bool:
    """An entry of Streamlit's resource cache that stands for :data:`PLANS`: "Clear caches" releases it, and its
    ``on_release`` clears the store. Called when a plan is kept, so the entry exists whenever the store holds one (at
    the server's start and in a run alike: the cache is the process's, with or without a session)."""
    return True


VIEWED = "_plan_viewed"
"""The session's state key of the plan it drew last (a weak reference: a plan dropped from the store is let go)."""


def leave_others(key: Key) -> None:
    """This session is about to draw the plan of ``key``: the plan it drew last, of another state, is released
    (:meth:`Plan.release`), so its settings' costs, if no other session views it, stop before this state's stages
    start rather than share the cores with them."""
    ref = st.session_state.get(VIEWED)
    before = ref() if ref is not None else None
    if before is not None and before.key != key:
        before.release()
        del st.session_state[VIEWED]


def view(plan: Plan) -> None:
    """This session draws ``plan``: held (:meth:`Plan.hold`: its settings' costs start beside its proof), once per
    state the session moves to (:func:`leave_others` releases it). A session that closes keeps its hold: the costs
    then run to their end (the work of one state, bounded) unless the plan is dropped from the store."""
    ref = st.session_state.get(VIEWED)
    before = ref() if ref is not None else None
    if before is plan:
        plan.begin()  # held already; started again if the store's clearing stopped it
        return
    plan.hold()
    st.session_state[VIEWED] = weakref.ref(plan)
    if before is not None:  # the same state's plan solved again after it was dropped
        before.release()


def planned(inputs: Inputs, candidates_csv: bytes | None) -> Plan:
    """The plan of these inputs, its stages solved now (or kept from before); raises the planner's input errors."""
    key: Key = (*inputs, candidates_csv)
    found = PLANS.get(key)
    if found is not None:
        return found
    return PLANS.make(key, lambda: _solve(key))


def _solve(key: Key) -> Plan:
    s, settings, cands, ids = _read(key)
    return Plan(planner.plan_stages(s, settings, cands, ids), key)


def default_inputs() -> Inputs:
    """The plan inputs of a session opened without a link (the state :func:`ui.state.begin` reads from an empty
    query)."""
    link = links.read_whole_link({})
    return inputs_of(link.scenario, link.settings)


def solve_default(between: Callable[[], None] = lambda: None) -> Plan:
    """The plan of a session opened without a link (:func:`solve_inputs` of :func:`default_inputs`), kept in
    :data:`PLANS`; ``between`` is called before each step (the server's start waits there while a session's run is
    under way). Pinned in the store: other sessions' states (a Plan page's edits, linked states planned ahead) would
    otherwise drop it after :data:`MAX_PLANS` others, and the next session opened without a link would wait for its
    solve on its first switch to Plan (1-2 s of CPU; app_latency's 28 rounds plan some 58 states: 2.4 s)."""
    inputs = default_inputs()
    PLANS.pin((*inputs, None))
    return solve_inputs(inputs, between)


def solve_inputs(inputs: Inputs, between: Callable[[], None] = lambda: None) -> Plan:
    """The plan of these inputs with the catalog's candidates, proven, with what each operations setting costs and
    its downloads: what the Plan page reads on that state, kept in :data:`PLANS` (the last two, as the page, only for
    a plan that meets every constraint). ``between`` is called before each of those steps (it may wait, or raise to
    stop there)."""
    between()
    plan = planned(inputs, None)
    between()
    plan.begin()  # the settings' plans beside the proof, as on the page
    if plan.proven()["feasible"]:
        for step in (plan.setting_costs, plan.downloads):
            between()
            step()
    return plan
