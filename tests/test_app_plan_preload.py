"""The Plan page's plans kept for every session (ui/planning.py) and the server's start solving the plan of a session
opened without a link into them (ui/memory.py, issue #43: a first switch to Plan on that state solved 1.1 s of CPU on
arrival): the page then reads that plan, solves nothing, and shows what the CLI's ``plan`` gives for the same state.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import streamlit as st
from streamlit.runtime.memory_media_file_storage import _calculate_file_id

import economics
from economics.studies import planner
from tests.test_app import start
from tests.test_app_links import PIXEL
from tests.test_app_plan import cli_plan, downloads, metric, sent
from tests.test_planner_dominance import box
from tests.test_startup import LIFESPAN, _last_line
from ui import format as fmt
from ui import links, memory, planning


def test_the_page_reads_the_plan_the_server_s_start_solved(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    planning.PLANS.clear()
    kept = planning.solve_default()  # what the lifespan's second thread runs once the first run is drawn
    assert list(planning.PLANS.plans) == [kept.key] and not kept.pending and kept.costs is not None and kept.files
    seen = sent(monkeypatch)
    at = start("plan")  # a session opened without a link, straight on the Plan page
    assert not at.error, [e.value for e in at.error]
    # the page's key is the preload's: nothing planned anew, the kept plan read (proven: drawn once, no proof run)
    assert list(planning.PLANS.plans) == [kept.key] and planning.PLANS.get(kept.key) is kept
    assert not any("proving" in text for _, text in seen)
    assert [t for kind, t in seen if kind == "metric" and t.startswith("Cost per day: ")] == [
        f"Cost per day: {fmt.usd(kept.proven()['summary']['cost_usd_per_day'])}"]
    # and it is the CLI's plan of that state, the operations settings' costs included
    text = cli_plan(at, tmp_path)
    assert downloads(at)["plan_json"] == _calculate_file_id(text.removesuffix("\n").encode(), "application/json",
                                                            "plan.json")
    assert metric(at, "Cost per day") == fmt.usd(kept.proven()["summary"]["cost_usd_per_day"])


def test_the_default_state_s_plan_outlives_any_number_of_other_states() -> None:
    # issue #43: after MAX_PLANS other states (edits, linked states planned ahead) the default state's plan was the
    # least recently read and dropped, and the next session opened without a link solved it again on its first switch
    planning.PLANS.clear()
    kept = planning.solve_default()
    others = [(f"{{\"state\": {i}}}", "{}", (), None) for i in range(planning.MAX_PLANS + 3)]
    for key in others:  # a bare Plan stands for one: the store only keeps, drops and stops them
        planning.PLANS.make(key, lambda: planning.Plan.__new__(planning.Plan))
    assert planning.PLANS.get(kept.key) is kept and len(planning.PLANS.plans) == planning.MAX_PLANS
    assert list(planning.PLANS.plans)[:-1] == others[-planning.MAX_PLANS + 1:]  # the others least recently read: gone
    planning.PLANS.clear()  # "Clear caches" lets it go too
    assert planning.PLANS.get(kept.key) is None and not planning.PLANS.pinned


def test_a_session_in_another_state_plans_its_own() -> None:
    # the store is keyed by the whole state: another planner setting is another plan, the kept one left as it was
    planning.PLANS.clear()
    kept = planning.solve_default()
    at = start("plan", {"settings.plan_max_pools": "2"})
    assert not at.error, [e.value for e in at.error]
    assert len(planning.PLANS.plans) == 2 and planning.PLANS.get(kept.key) is kept
    other = next(k for k in planning.PLANS.plans if k != kept.key)
    assert links.plan_settings(at.session_state["settings"]).max_pools == 2
    assert '"max_pools": 2' in other[1] and '"max_pools": 2' not in kept.key[1]


def test_a_renamed_scenario_reads_the_plan_kept() -> None:
    # the planner reads no scenario name, so the store's key leaves it out: a rename plans nothing again (the
    # working scenario's name, an edit on any page, or a link's), and any other field is still a plan of its own
    settings = links.default_settings()
    named = {**links.default_scenario(), "name": PIXEL}
    assert planning.inputs_of(named, settings) == planning.inputs_of(links.default_scenario(), settings)
    assert planning.inputs_of({**named, "pue": 1.4}, settings) != planning.inputs_of(named, settings)
    # the same plan under either name, every figure and table (two rented boxes: a plan of milliseconds)
    s = economics.Scenario(name="one", input_tokens_per_request=0, output_tokens_per_request=100,
                           demand_output_tokens_per_day=86_400_000, electricity_usd_per_kwh=0)
    few = planner.PlanSettings(demand_profile="diurnal", max_pools=1, spares=False)
    cands = [box("a", 2.0, 100.0), box("c", 1.0, 60.0)]
    assert planner.plan(s, few, cands).to_dict() == planner.plan(s.model_copy(update={"name": PIXEL}), few,
                                                                 cands).to_dict()


def test_the_kept_plans_are_the_last_read() -> None:
    # one more state than are kept: the least recently read goes (1, as 0 was read after it)
    plans = planning._Store()
    made = {}
    for n in range(planning.MAX_PLANS + 1):
        key = ("{}", "{}", (str(n),), None)
        made[n] = plans.make(key, lambda: planning.Plan.__new__(planning.Plan))
        if n == 1:
            assert plans.get(("{}", "{}", ("0",), None)) is made[0]  # read: kept over 1
    assert len(plans.plans) == planning.MAX_PLANS
    assert plans.get(("{}", "{}", ("0",), None)) is made[0] and plans.get(("{}", "{}", ("1",), None)) is None


def test_the_server_s_start_plans_the_default_state_only_after_the_first_run() -> None:
    # the lifespan as the server runs it: its plan thread waits, importing nothing, until the first run is drawn
    # (ui.memory.freeze_once), then keeps the plan of the state a session without a link opens in
    probe = (LIFESPAN +
             "threads = {t.name: t for t in threading.enumerate()}\n"
             "threads['first-page-preload'].join()\n"
             "waiting = threads['plan-page-preload'].is_alive() and 'ui.planning' not in sys.modules\n"
             "memory.freeze_once()\n"
             "threads['plan-page-preload'].join()\n"
             "from ui import planning\n"
             "(key,) = planning.PLANS.plans\n"
             "plan = planning.PLANS.get(key)\n"
             "print(waiting, key == (*planning.default_inputs(), None), plan.pending, plan.costs is not None)\n")
    assert _last_line(probe) == "True True False True"


def test_the_preload_steps_wait_while_a_session_s_run_is_under_way() -> None:
    # each of the four steps (the stages' plan, its proof, the settings' costs, the downloads) is started after
    # `between`, which the server's start makes wait while a run is under way (app.py runs each page in
    # memory.running())
    planning.PLANS.clear()
    kept: list[int] = []
    plan = planning.solve_default(between=lambda: kept.append(len(planning.PLANS.plans)))
    assert kept == [0, 1, 1, 1] and plan.files is not None
    with memory.running():
        waiting = threading.Thread(target=memory.until_idle)
        waiting.start()
        waiting.join(0.5)
        assert waiting.is_alive()  # held while the run is under way
    waiting.join()
    assert not waiting.is_alive()


def test_clearing_streamlit_s_caches_clears_the_plans() -> None:
    # the app menu's "Clear caches" (streamlit.runtime.app_session.AppSession._handle_clear_cache_request) clears
    # st.cache_data and st.cache_resource; the plans kept for every session go with them, and the page plans anew
    planning.PLANS.clear()
    kept = planning.solve_default()
    at = start("plan")
    assert not at.error and planning.PLANS.get(kept.key) is kept
    st.cache_data.clear()
    st.cache_resource.clear()
    assert not planning.PLANS.plans
    at.run()
    assert not at.error, [e.value for e in at.error]
    again = planning.PLANS.get(kept.key)
    assert again is not None and again is not kept
    assert metric(at, "Cost per day") == fmt.usd(kept.proven()["summary"]["cost_usd_per_day"])
    st.cache_resource.clear()  # and again: each plan kept keeps the store's entry in Streamlit's cache alive
    assert not planning.PLANS.plans
