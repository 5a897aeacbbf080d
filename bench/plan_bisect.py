"""A short bench/plan.py for ``git bisect run``: the Plan page's demand edits (as bench/app_latency.py types them,
under the page's default settings), CPU time per edit, best of two rounds; exit 0 at or under the threshold, 1 over
it, 125 (skip) where the tree cannot be imported. It runs on any commit since the Plan page had its link settings:
the planner is imported as ``economics.studies.planner`` or, before the layers became folders, ``economics.planner``;
``costed=False`` is passed where the planner has it (the page then draws the plan first). HiGHS's remembered answers
(where the planner keeps them) are forgotten before each round, so every edit solves.

CPU time, not wall time: it holds on a loaded machine, where the wall time of the same run varies 2-4x.

Usage (a detached worktree, so the bisect checks out nothing in yours)::

    git worktree add --detach /tmp/wt-plan-bisect GOOD && ln -s "$PWD/.venv" /tmp/wt-plan-bisect/.venv
    cp bench/plan_bisect.py /tmp/plan_bisect.py   # outside the tree the bisect checks out
    cd /tmp/wt-plan-bisect && git bisect start BAD GOOD
    git bisect run .venv/bin/python /tmp/plan_bisect.py /tmp/wt-plan-bisect --edits 4 --threshold-ms 150

Prints ``cpu_ms_per_edit=...`` and the plans' costs a day (which say whether the plans changed between commits).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
import time

PAGE_LINK = {"model": "llama-3.1-70b", "precision": "fp8", "target_output_tokens_per_s_per_user": 30.0,
             "output_tokens_per_s_per_accelerator": None}
"""The Plan page's scenario in bench/app_latency.py: the default scenario with these fields (its link)."""
DEMANDS = [(5e9 if i % 2 else 2e10) + 1e8 * i for i in range(1, 9)]
"""The demands bench/app_latency.py types into the Plan page, one edit each."""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", help="the tree to measure (a worktree of the commit under test)")
    ap.add_argument("--edits", type=int, default=4, help="demand edits a round (1-8; default 4)")
    ap.add_argument("--threshold-ms", type=float, default=0.0, help="bad above this CPU ms per edit (0: no verdict)")
    args = ap.parse_args()
    sys.path.insert(0, args.root)
    try:
        import economics
        try:
            planner = importlib.import_module("economics.studies.planner")
        except ImportError:  # a commit from before the layers became folders (by name: not this tree's layout)
            planner = importlib.import_module("economics.planner")
        from ui import links
    except Exception as exc:  # noqa: BLE001  # a tree that does not import is skipped, not judged
        print(f"skip: {exc}")
        return 125
    s0 = economics.Scenario(**{**economics.default_scenario().model_dump(), **PAGE_LINK})
    page = links.default_settings()
    settings, ids = links.plan_settings(page), list(page[links.PLAN_PREFIX + "accelerators"])
    costed = {"costed": False} if "costed" in inspect.signature(planner.plan).parameters else {}
    forget = getattr(planner, "clear_milp_memo", lambda: None)
    planner.plan(s0, settings, None, ids, **costed)  # the engine's caches warm, as on a page already open
    demands = DEMANDS[:max(1, min(args.edits, len(DEMANDS)))]
    best, costs = float("inf"), []
    for _ in range(2):
        forget()
        c = time.process_time()
        results = [planner.plan(s0.model_copy(update={"demand_output_tokens_per_day": d}), settings, None, ids,
                                **costed) for d in demands]
        best = min(best, (time.process_time() - c) / len(demands))
        costs = [round(float(r.summary["cost_usd_per_day"]), 2) for r in results]
    print(f"cpu_ms_per_edit={best * 1000:.1f} costs={costs}")
    if args.threshold_ms <= 0:
        return 0
    return 0 if best * 1000 <= args.threshold_ms else 1


if __name__ == "__main__":
    sys.exit(main())
