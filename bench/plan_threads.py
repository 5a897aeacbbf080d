"""Could the Plan page's second core help an edit: does HiGHS let Python run while it solves, and what do the
operations settings' costs take made beside the proof, or the two settings' plans at once, against one after the
other? Prints figures and ratios; asserts nothing (no timed tests).

1. *The GIL*: a Python thread counts while the planner solves the page's first two edits (their stages and
   proofs). If HiGHS held the GIL through a solve, the count would not move during one.
2. *Three ways to finish an edit after its drawn plan* (bench/plan.py's 8 page edits, HiGHS's memo cleared and the
   stages solved before each round): ``serial`` the proof, then the settings' plans (what the page does);
   ``beside`` the settings' plans (:func:`~economics.studies.planner.run.plans_without`, which do not read the
   proven plan) in a second thread while the proof runs; ``settings`` the proof, then each setting's plan in its own
   thread. Wall and CPU per edit, the modes alternated each round; a digest of every proven plan and settings'
   table must be the same in every mode (printed). On a loaded machine a process's threads share its scheduling
   group's CPU (Linux's autogroup), so only a quiet machine says what a second core gives.

Usage: python bench/plan_threads.py [--rounds 4]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import economics  # noqa: E402
from economics.studies import planner  # noqa: E402
from economics.studies.planner import milp  # noqa: E402
from economics.studies.planner import run as planner_run  # noqa: E402
from ui import links  # noqa: E402

PAGE_LINK = {"model": "llama-3.1-70b", "precision": "fp8", "target_output_tokens_per_s_per_user": 30.0,
             "output_tokens_per_s_per_accelerator": None}
"""bench/plan.py's Plan page scenario (bench/app_latency.py's link)."""
PAGE_DEMANDS = [(5e9 if i % 2 else 2e10) + 1e8 * i for i in range(1, 9)]
"""bench/plan.py's 8 page edits."""
MODES = ("serial", "beside", "settings")


def page_inputs() -> tuple[list[economics.Scenario], planner.PlanSettings, list[str]]:
    """The 8 edits' scenarios, the page's settings and accelerators."""
    s0 = economics.Scenario(**{**economics.default_scenario().model_dump(), **PAGE_LINK})
    page = links.default_settings()
    settings, ids = links.plan_settings(page), list(page[links.PLAN_PREFIX + "accelerators"])
    return [s0.model_copy(update={"demand_output_tokens_per_day": d}) for d in PAGE_DEMANDS], settings, ids


def gil_pause(scenarios: list[economics.Scenario], settings: planner.PlanSettings, ids: list[str]) -> None:
    """How far a counting Python thread gets while HiGHS solves (the page's first two edits, stages and proofs): if
    HiGHS held the GIL through a solve, the count would not move during one. Robust to a loaded machine (a count,
    not a pause, is compared)."""
    counted, inside = [0], [0, 0.0]  # the thread's count; the counts made during solves and the solves' seconds
    run, prove = milp._milp, milp._highs_run

    def timed(fn):
        def call(*args, **kwargs):
            n, t = counted[0], time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                inside[0] += counted[0] - n
                inside[1] += time.perf_counter() - t
        return call

    stop = threading.Event()

    def count() -> None:
        while not stop.is_set():
            counted[0] += 1

    milp._milp, milp._highs_run = timed(run), timed(prove)
    planner.clear_milp_memo()
    counter = threading.Thread(target=count)
    wall = time.perf_counter()
    counter.start()
    try:
        for s in scenarios[:2]:
            planner.prove_plan(planner.plan_stages(s, settings, None, ids))
    finally:
        stop.set()
        counter.join()
        milp._milp, milp._highs_run = run, prove
    wall = time.perf_counter() - wall
    outside = (counted[0] - inside[0]) / max(wall - inside[1], 1e-9) / 1000
    print(f"GIL: during HiGHS's solves ({inside[1]:.2f} s wall) a Python thread counted {inside[0]:,} "
          f"({inside[0] / max(inside[1], 1e-9) / 1000:,.0f} a ms), outside them {outside:,.0f} a ms: the GIL is "
          f"{'released' if inside[0] > 0.1 * outside * inside[1] * 1000 else 'held'} while HiGHS solves")


def finish(st: planner.Staged, mode: str) -> tuple[planner.PlanResult, pd.DataFrame]:
    """An edit's proven plan and its settings' table, made the ``mode`` way."""
    inputs = st.inputs()
    args = (inputs.s, inputs.settings, inputs.cands, inputs.excluded, inputs.active, inputs.prepared)
    if mode == "beside":
        with ThreadPoolExecutor(max_workers=1) as other:
            plans = other.submit(planner_run.plans_without, *args)
            proven = planner.prove_plan(st)
            made = plans.result()
    else:
        proven = planner.prove_plan(st)
        if mode == "settings":
            names = [n for n, on in inputs.active.items() if on]
            with ThreadPoolExecutor(max_workers=2) as pool:
                each = [pool.submit(planner_run.plans_without, *args[:4], {n: n == name for n in inputs.active},
                                    inputs.prepared) for name in names]
                made = {k: v for f in each for k, v in f.result().items()}
        else:
            made = planner_run.plans_without(*args)
    return proven, planner_run.setting_costs(proven.summary, *args, plans=made)


def round_of(scenarios: list[economics.Scenario], settings: planner.PlanSettings, ids: list[str],
             mode: str) -> tuple[float, float, str]:
    """Wall and CPU ms per edit from the drawn plan to the settings' table, and a digest of what was made."""
    planner.clear_milp_memo()
    staged = [planner.plan_stages(s, settings, None, ids) for s in scenarios]
    for st in staged:
        st.result()
    digest = hashlib.sha256()
    wall, cpu = time.perf_counter(), time.process_time()
    for st in staged:
        proven, table = finish(st, mode)
        digest.update(repr(sorted(proven.summary.items())).encode() + proven.plan.to_csv().encode())
        digest.update(table.to_csv().encode())
    n = len(scenarios)
    return (time.perf_counter() - wall) / n * 1000, (time.process_time() - cpu) / n * 1000, digest.hexdigest()[:12]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    scenarios, settings, ids = page_inputs()
    planner.plan(scenarios[0], settings, None, ids)  # the engine's caches warm
    gil_pause(scenarios, settings, ids)
    seen: dict[str, list[tuple[float, float, str]]] = {m: [] for m in MODES}
    for r in range(args.rounds):
        order = MODES[r % len(MODES):] + MODES[:r % len(MODES)]
        for mode in order:
            seen[mode].append(round_of(scenarios, settings, ids, mode))
            wall, cpu, digest = seen[mode][-1]
            print(f"round {r + 1} {mode:8s}: {wall:6.0f} ms wall, {cpu:5.0f} ms CPU per edit, digest {digest}, "
                  f"load {Path('/proc/loadavg').read_text().split()[0]}", flush=True)
    base = statistics.median(w for w, _, _ in seen["serial"])
    for mode in MODES:
        wall = statistics.median(w for w, _, _ in seen[mode])
        cpu = statistics.median(c for _, c, _ in seen[mode])
        print(f"{mode:8s}: median {wall:.0f} ms wall ({wall / base:.2f} x serial), {cpu:.0f} ms CPU per edit")
    print("the same plans and tables in every mode:", len({d for runs in seen.values() for _, _, d in runs}) == 1)


if __name__ == "__main__":
    main()
