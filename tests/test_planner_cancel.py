"""Solves that stop when no longer wanted (``planner.cancellable``, #43): HiGHS interrupted through its MIP callback,
a stopped solve raising ``planner.Cancelled`` (never a plan, never remembered), a solve that is not stopped giving the
plan it gives outside, and the Plan page's settings' plans, made on a thread beside the proof, stopped when their
state is left and made again by the run that draws them (the same table).

HiGHS is watched by a subclass of SciPy's ``_Highs`` put in its module for the test (the planner builds each run from
it): each run's thread and model status are recorded, and a hook runs as a run starts (the stop asked for there, so
the run is stopped after it began, not before).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pandas as pd
import pytest
from scipy.optimize._highspy import _core

from economics.studies import planner
from economics.studies.planner import milp
from economics.studies.planner.build import build_model
from economics.studies.planner.model import PlanModel, Row
from tests.test_planner_proof import PAGE_ACCELERATORS, PAGE_SETTINGS, page_problem, page_scenario
from ui import links, planning


@dataclass
class Watch:
    """HiGHS's runs: (thread name, model status) each, and ``on_start`` called in the run's thread as it starts."""

    runs: list[tuple[str, object]] = field(default_factory=list)
    on_start: Callable[[], None] = lambda: None


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> Iterator[Watch]:
    """Every HiGHS run of the planner watched (:class:`Watch`), HiGHS's memo emptied before and after. The Plan page's
    process-wide thread beside the proof finishes what an earlier test left on it first: its runs, had they started
    once the class was put in, were this test's runs too (the stop asked for in one of them, not in the test's own).
    """
    planning._BESIDE.submit(lambda: None).result()  # one worker, in order: what was queued before is done
    watch = Watch()

    class Watched(_core._Highs):  # type: ignore[misc,name-defined]
        def run(self) -> object:
            watch.on_start()
            ran = super().run()
            watch.runs.append((threading.current_thread().name, self.getModelStatus()))
            return ran

    planner.clear_milp_memo()
    monkeypatch.setattr(_core, "_Highs", Watched)
    yield watch
    planner.clear_milp_memo()


def boxes() -> PlanModel:
    """Cover 13 units with whole boxes of 10 at 3 USD each and loose units at 0.5 USD, at most 4 loose: 4.5 USD."""
    m = PlanModel()
    box, loose = m.var(3.0, True), m.var(0.5, False, ub=4.0)
    m.row({box: -10.0, loose: -1.0}, -13.0, Row.DEMAND_OUTPUT)
    return m


def whole_model() -> PlanModel:
    """The Plan page's first edit as one MILP (260 integer columns; HiGHS runs about a second on it)."""
    m, _, _ = build_model(page_problem(page_scenario(5.1e9)), {})
    return m


def test_a_solve_stopped_after_it_began_raises_and_is_not_remembered(watched: Watch) -> None:
    m, stop, here = whole_model(), threading.Event(), threading.current_thread().name

    def stop_once_it_runs_here() -> None:  # the stop asked for once this thread's HiGHS runs, never by another run
        if threading.current_thread().name == here:
            stop.set()

    watched.on_start = stop_once_it_runs_here
    with planner.cancellable(stop), pytest.raises(planner.Cancelled):
        milp.run_milp(m)
    ours = [status for name, status in watched.runs if name == here]
    assert ours == [_core.HighsModelStatus.kInterrupt]  # HiGHS itself stopped
    watched.on_start = lambda: None
    res = milp.run_milp(m)  # the stopped run was not remembered: HiGHS runs again, to its end
    again = [status for name, status in watched.runs if name == here]
    # to its end: optimal, or HiGHS's own time limit (milp.TIME_LIMIT_S, 30 s), which a run of about a second
    # reached on a machine at load 15-18; never stopped again, and a plan either way
    assert len(again) == 2 and again[1] in (_core.HighsModelStatus.kOptimal, _core.HighsModelStatus.kTimeLimit)
    assert res.x is not None and res.status == (0 if again[1] == _core.HighsModelStatus.kOptimal else 1)


def test_a_stopped_context_runs_nothing_and_other_contexts_run_on(watched: Watch) -> None:
    staged = planner.plan_stages(page_scenario(5.1e9), PAGE_SETTINGS, None, PAGE_ACCELERATORS)
    runs, stop = len(watched.runs), threading.Event()
    stop.set()
    with planner.cancellable(stop), pytest.raises(planner.Cancelled):
        planner.settings_plans(staged)
    assert len(watched.runs) == runs  # stopped before its first run
    with planner.cancellable(threading.Event()):
        with planner.cancellable(stop), pytest.raises(planner.Cancelled):
            milp.run_milp(boxes())
        assert milp.run_milp(boxes()).fun == pytest.approx(4.5)  # the outer context's event is not set
    assert len(watched.runs) == runs + 1


def test_a_solve_not_stopped_gives_the_plan_it_gives_outside(watched: Watch) -> None:
    # the page's stages, proof and settings' plans (every kind of HiGHS run the planner makes) in a context never
    # stopped, against the same made outside any: the same plans, bounds and costs
    staged = planner.plan_stages(page_scenario(5.1e9), PAGE_SETTINGS, None, PAGE_ACCELERATORS)
    with planner.cancellable(threading.Event()):
        proven = planner.prove_plan(staged)
        plans = planner.settings_plans(staged)
    planner.clear_milp_memo()
    again = planner.plan_stages(page_scenario(5.1e9), PAGE_SETTINGS, None, PAGE_ACCELERATORS)
    assert proven.to_dict() == planner.prove_plan(again).to_dict()
    assert plans == planner.settings_plans(again)


def test_the_settings_plans_stop_in_both_their_threads(watched: Watch) -> None:
    # the plan without max_pools keeps the rental block: its stages solve the plan by the hour on a thread of their
    # own (solve.solve_stages) beside stage 1; the stop asked for as the first of the two starts reaches both
    staged = planner.plan_stages(page_scenario(5.1e9), PAGE_SETTINGS, None, PAGE_ACCELERATORS)
    planner.clear_milp_memo()
    watched.runs.clear()
    stop = threading.Event()
    watched.on_start = stop.set
    with planner.cancellable(stop), pytest.raises(planner.Cancelled):
        planner.settings_plans(staged.inputs())
    stopped = len(watched.runs)
    watched.on_start = lambda: None
    planner.clear_milp_memo()
    planner.settings_plans(staged.inputs())
    assert stopped <= 2 and len(watched.runs) - stopped == 5  # the two under way when asked, of the five
    assert not [t for t in threading.enumerate() if t.name.startswith("stages-beside")]


def drawn(key: planning.Key, watched: Watch, left: bool, sessions: int = 1) -> tuple[pd.DataFrame, list[object]]:
    """The settings' costs a page run draws for the plan of ``key``, made afresh (HiGHS's memo emptied), ``sessions``
    holding the plan while its first HiGHS run beside the proof waits; ``left``: one session moves to another state
    then. Returns the table and the statuses of HiGHS's runs on the thread beside the proof."""
    planner.clear_milp_memo()
    go, begun = threading.Event(), threading.Event()

    def hold_first_background_run() -> None:
        if threading.current_thread().name.startswith("plan-settings-beside") and not begun.is_set():
            begun.set()
            go.wait()

    watched.on_start = hold_first_background_run
    plan = planning.Plan(planner.plan_stages(*planning._read(key)), key)
    watched.runs.clear()
    for _ in range(sessions):
        plan.hold()
    begun.wait()
    if left:
        plan.release()
    go.set()
    frame = plan.setting_costs()
    planning._BESIDE.submit(lambda: None).result()  # the worker's tasks done, a stopped one included
    return frame, [status for name, status in watched.runs if name.startswith("plan-settings-beside")]


def test_the_pages_settings_plans_beside_the_proof_give_the_table_made_after_it(watched: Watch) -> None:
    s = page_scenario(5.1e9)
    key: planning.Key = (*planning.inputs_of(s.model_dump(mode="json"), links.default_settings()), None)
    serial = planning.Plan(planner.plan_stages(*planning._read(key)), key)
    want = planner.costs_of_settings(serial.proven()["summary"], *planning._read(key), staged=serial.costing)
    kept, beside = drawn(key, watched, left=False)
    pd.testing.assert_frame_equal(kept, want)
    assert len(beside) >= 2 and set(beside) == {_core.HighsModelStatus.kOptimal}  # its plans made there
    left, beside = drawn(key, watched, left=True)  # left while they were under way: made again on drawing
    pd.testing.assert_frame_equal(left, want)
    assert beside == [_core.HighsModelStatus.kInterrupt]  # the run under way stopped, and no other run after it
    shared, beside = drawn(key, watched, left=True, sessions=2)  # a second session still on the state: made there
    pd.testing.assert_frame_equal(shared, want)
    assert len(beside) >= 2 and set(beside) == {_core.HighsModelStatus.kOptimal}
