"""The separable search's three-count models: the planner's CPU on them, this tree against another, paired.

Plans, each in a fresh process per tree (the planner's memo would answer a repeat), alternated tree by tree over
``--rounds`` rounds (the first tree first in odd rounds, second in even ones, so both share the machine's load):
  - the four draws of tests/test_planner_dominance.py's small catalogs (a 1 MW site, a diurnal day) whose stages
    took 2.5-10 s CPU before branch ``sepbound``: an owned pool in its three roles, three counts held all day, where
    the exact search evaluated its 400 bases and gave up before HiGHS solved the model
    (``planner.plan_stages``, as the test ran it before branch ``suiteP``);
  - tests/test_planner.py's CLI catalog (``test_plan_command_json_and_errors``: ``economics plan`` on its plan
    file and candidates, in process), whose two exact searches over 20 x 12 x 10 boxes took 250 and 191 bases.
Prints each case's CPU seconds per tree and round, the medians and the median of the per-round ratios (this tree /
the other), and whether every run gave the same plan cost (and, for the CLI, its solver status).

Usage: python bench/separable.py --base /tmp/sb-base [--rounds 5]   (the other tree: e.g. ``git archive main |
tar -x -C /tmp/sb-base`` with ``ln -s $PWD/.venv /tmp/sb-base/.venv``)
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
DRAWS = [
    ([("rent", 1.0, 40.0, 1.0), ("own", 1.0, 40.0, 1.0)], 1, 1.0, 1, 40e6),
    ([("rent", 2.0, 40.0, 2.0), ("own", 3.0, 80.0, 1.0)], 2, 1.0, 1, 400e6),
    ([("rent", 2.0, 80.0, 2.0), ("own", 3.0, 80.0, 1.0)], 2, 1.0, 1, 400e6),
    ([("rent", 3.0, 80.0, 2.0), ("own", 3.0, 80.0, 1.0)], 2, 1.0, 1, 400e6),
]
"""(kind, price, rate, power) per candidate, the pool limit, the rental block, the smallest pool, the demand: the
slow draws of ``SMALL_PLANS`` (tests/test_planner_dominance.py)."""


def child(tree: Path) -> dict[str, list[object]]:
    """Each case's CPU seconds and answer, planned by the package of ``tree``."""
    sys.path.insert(0, str(tree))
    import economics  # noqa: PLC0415  (the tree's own package, chosen at run time)
    from economics import cli  # noqa: PLC0415
    from economics.studies import planner  # noqa: PLC0415
    from economics.studies.planner.candidates import Candidate  # noqa: PLC0415
    from economics.studies.planner.inputs import Ownership, PoolRole  # noqa: PLC0415
    from tests import test_planner  # noqa: PLC0415

    out: dict[str, list[object]] = {}
    for i, (options, max_pools, rental, least, demand) in enumerate(DRAWS):
        s = economics.Scenario(name="d", input_tokens_per_request=200, output_tokens_per_request=100,
                               demand_output_tokens_per_day=demand, site_power_mw=1.0)
        cands = [Candidate(f"{kind}{k}", Ownership(kind), system_power_kw=kw, price_usd_per_system=1e4 * price,
                           rent_usd_per_system_hour=price, output_tokens_per_s_per_system=rate,
                           input_tokens_per_s_per_system=4 * rate, accelerators_per_system=1,
                           accelerators_per_replica=1, roles=tuple(PoolRole))
                 for k, (kind, price, rate, kw) in enumerate(options)]
        chosen = planner.PlanSettings(demand_profile="diurnal", max_pools=max_pools, min_rental_hours=rental,
                                      min_pool_systems=least)
        t = time.process_time()
        staged = planner.plan_stages(s, chosen, cands)
        res = staged.found.best[1] if staged.found is not None else None
        out[f"draw {i + 1}"] = [time.process_time() - t, None if res is None else round(float(res.fun), 6)]
    text = io.StringIO()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "f.csv").write_text(test_planner.PLAN_FILE, encoding="utf-8")
        (folder / "c.csv").write_text(test_planner.GOOD, encoding="utf-8")
        t = time.process_time()
        with contextlib.redirect_stdout(text):
            cli.main(["plan", str(folder / "f.csv"), "--row", "row a", "--candidates", str(folder / "c.csv")])
        t = time.process_time() - t
    summary = json.loads(text.getvalue())["summary"]
    out["CLI catalog"] = [t, [summary["cost_usd_per_day"], summary["solver_status"]]]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, help="the other tree (with its .venv); required")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child)))
        return
    if args.base is None:
        parser.error("--base is required: the tree to compare with (with its .venv)")
    trees = {"this": HERE, "base": args.base.resolve()}
    runs: dict[str, list[dict[str, list[object]]]] = {"this": [], "base": []}
    for r in range(args.rounds):
        for name in (["base", "this"] if r % 2 == 0 else ["this", "base"]):
            python = trees[name] / ".venv" / "bin" / "python"
            done = subprocess.run([str(python), __file__, "--child", str(trees[name])], capture_output=True,
                                  text=True, check=True, cwd=trees[name])
            runs[name].append(json.loads(done.stdout))
    for case in runs["this"][0]:
        this = [float(run[case][0]) for run in runs["this"]]  # type: ignore[arg-type]
        base = [float(run[case][0]) for run in runs["base"]]  # type: ignore[arg-type]
        same = len({json.dumps(run[case][1]) for run in runs["this"] + runs["base"]}) == 1
        print(f"{case}: base {', '.join(f'{v:.3f}' for v in base)} s; this {', '.join(f'{v:.3f}' for v in this)} s;"
              f" medians {statistics.median(base):.3f} -> {statistics.median(this):.3f} s, median ratio"
              f" {statistics.median(t / b for t, b in zip(this, base, strict=True)):.3f}x;"
              f" same answer in every run: {same} ({runs['this'][0][case][1]})")


if __name__ == "__main__":
    main()
