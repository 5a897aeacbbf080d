"""The proof's pool rows (#43, branch `planproof`): candidate formulations of a pool's opening measured on the
models the proof takes, against the proof as the planner runs it (``milp.prove`` with the dominated pools closed and
the demand cuts of ``rounding.demand_cuts``). None of these rows is in the planner (none made the proofs the planner
runs faster: docs/speed.md, `planproof`); this script keeps the measurement repeatable for the next formulation tried.

The models: the Plan page's worked example (302 integer columns), its 8 demand edits (bench/plan.py's, 260) and
the full catalog over 24 distinct hours (bench/plan.py's, 579; not proven by the planner). For each model and each
row family (:class:`Rows`): rows added, the LP bound, the LP bound with the demand cuts, HiGHS's bound after its
root (a node limit of 1), then the proof (1 % as the planner runs it, or ``--gap 0``) from the stages' plan: nodes,
bound and CPU time, median of ``--rounds`` rounds, the families alternated (the order reversed each round).

The families (with ``z_p`` a pool's open binary, each row valid for an optimal plan):

* ``hour-bigm``: a rented pool's count in an hour outside the rental block ``m_{p,h} <= M_h z_p``, ``M_h`` the
  systems that carry that hour's whole demand alone (the count's own bound; ``S_p <= M z_p`` with the busiest
  hour's ``M`` stays): a plan never rents more than that in the hour (fewer serve the demand, at no more cost).
* ``flow-bound``: each flow ``f_{p,h} <= u_{p,h} z_p``, ``u`` the flow that serves the hour's whole demand alone
  (``constraints.whole_demand_flow``): more flow serves nothing; lowering a flow breaks no row and costs no more.
* ``flow-only``: ``flow-bound`` in place of an owned pool's ``n_p <= M z_p`` (its count then bounded by the flows).
* ``tight-floor``: a TTFT floor's ``n <= 10,000 y`` as ``n <= ub(n) y`` (the same whole points).

Usage: python bench/plan_proof.py [--models example,edit1,full] [--rows base,hour-bigm,...] [--rounds 3] [--gap 0.01]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from plan import PAGE_DEMANDS, PAGE_LINK, PROFILE, scenario  # noqa: E402  (bench/plan.py's models)

import economics  # noqa: E402
from economics.studies import planner  # noqa: E402
from economics.studies.planner import milp, rounding  # noqa: E402
from economics.studies.planner.constraints import whole_demand_flow  # noqa: E402
from economics.studies.planner.inputs import hour_types  # noqa: E402
from economics.studies.planner.model import PlanModel, Row  # noqa: E402
from economics.studies.planner.pools import Problem  # noqa: E402
from economics.studies.planner.solve import embed, without_dominated  # noqa: E402
from ui import links  # noqa: E402


class Rows(StrEnum):
    """A family of candidate rows (the module's docstring)."""

    BASE = "base"
    HOUR_BIGM = "hour-bigm"
    FLOW_BOUND = "flow-bound"
    BOTH = "hour-bigm+flow-bound"
    FLOW_ONLY = "flow-only"
    TIGHT_FLOOR = "tight-floor"


@dataclass
class Proof:
    """A model the proof takes: its dominated pools closed, the stages' plan as its start."""

    m: PlanModel
    start: np.ndarray
    pb: Problem


def captured(staged: planner.Staged) -> Proof:
    """The model ``solve._proven`` gives HiGHS for the stages' plan, and the plan as its start."""
    found, pb = staged.found, staged.pb
    assert found is not None and pb is not None
    few, res, _, few_pb = found.best
    start = (np.asarray(res.x, dtype=float) if few is found.m else
             embed(found.m, few, [pb.pools.index(pool) for pool in few_pb.pools], res.x))
    return Proof(without_dominated(pb, found.m, found.rho, start), start, pb)


def models(names: list[str]) -> dict[str, Proof]:
    """The proof models named (``example``, ``edit1``..``edit8``, ``full``)."""
    page = {**links.default_settings(), **links.PLAN_EXAMPLE_SETTINGS}
    ids = list(links.default_settings()[links.PLAN_PREFIX + "accelerators"])
    s0 = economics.Scenario(**{**economics.default_scenario().model_dump(), **PAGE_LINK})
    out = {}
    for name in names:
        if name == "example":
            s = economics.Scenario(**{**economics.default_scenario().model_dump(), **links.PLAN_EXAMPLE,
                                      "name": "example"})
            staged = planner.plan_stages(s, links.plan_settings(page), None,
                                         list(page[links.PLAN_PREFIX + "accelerators"]))
        elif name == "full":
            staged = planner.plan_stages(scenario(), planner.PlanSettings(demand_profile=PROFILE))
        else:
            demand = PAGE_DEMANDS[int(name.removeprefix("edit")) - 1]
            staged = planner.plan_stages(s0.model_copy(update={"demand_output_tokens_per_day": demand}),
                                         links.plan_settings(links.default_settings()), None, ids)
        out[name] = captured(staged)
    return out


def with_rows(proof: Proof, rows: Rows) -> PlanModel:
    """A copy of the proof's model with the family ``rows``; the start is checked to meet them."""
    m = replace(proof.m, rows=[dict(r) for r in proof.m.rows], b=list(proof.m.b), row_kind=list(proof.m.row_kind),
                row_group=list(proof.m.row_group), row_hour=list(proof.m.row_hour))
    assert m.rules is not None
    if rows in (Rows.HOUR_BIGM, Rows.BOTH):
        for p, (counts, _) in m.rules.rented.items():
            z = m.rules.open_col.get(p)
            for h, n in enumerate(counts):
                if z is not None and m.ub[z] > 0 and h not in m.rules.block and math.isfinite(m.ub[n]):
                    m.row({n: 1.0, z: -m.ub[n]}, 0.0, Row.POOL_OPEN, h)
    if rows in (Rows.FLOW_BOUND, Rows.BOTH, Rows.FLOW_ONLY):
        levels = hour_types(proof.pb.wl)[0]
        for (p, h), f in m.flow_col.items():
            z = m.rules.open_col.get(p)
            if z is not None and m.ub[z] > 0:
                u = whole_demand_flow(proof.pb.pools[p], proof.pb.wl, float(levels[h]))
                m.row({f: 1.0, z: -u}, 0.0, Row.POOL_OPEN, h)
    if rows is Rows.FLOW_ONLY:
        owned = {z for p, z in m.rules.open_col.items() if p not in m.rules.rented}
        keep = [i for i, kind in enumerate(m.row_kind)
                if not (kind is Row.POOL_OPEN and m.row_hour[i] is None and owned & set(m.rows[i]))]
        for name in ("rows", "b", "row_kind", "row_group", "row_hour"):
            setattr(m, name, [getattr(m, name)[i] for i in keep])
    if rows is Rows.TIGHT_FLOOR:
        for i, kind in enumerate(m.row_kind):
            big = [(j, v) for j, v in m.rows[i].items() if v < 0]
            n = [j for j, v in m.rows[i].items() if v > 0]
            if kind is Row.TTFT_FLOOR and len(big) == 1 and len(n) == 1 and -big[0][1] > m.ub[n[0]]:
                m.rows[i][big[0][0]] = -max(m.ub[n[0]], 1.0)
    worst = float(np.max(m.matrix() @ proof.start - np.asarray(m.b)))
    assert worst <= 1e-6, f"the start breaks a row by {worst}"  # HiGHS holds rows to 1e-7 scaled
    return m


def measure(proofs: dict[str, Proof], families: list[Rows], rounds: int, gap: float) -> None:
    """Print each model's figures per family (the module's docstring), medians of ``rounds``, ratios to the first."""
    milp.TIME_LIMIT_S = 600.0  # CPU-bound comparisons on a shared machine: no wall-clock stop
    built = {(name, rows): with_rows(proof, rows) for name, proof in proofs.items() for rows in families}
    cpu: dict[tuple[str, Rows], list[float]] = {key: [] for key in built}
    last = {}
    for r in range(rounds):
        for name, proof in proofs.items():
            for rows in families if r % 2 == 0 else families[::-1]:
                m = built[(name, rows)]
                milp.clear_milp_memo()
                t = time.process_time()
                out = milp.prove(m, proof.start, gap=gap, nodes=100_000, cuts=rounding.demand_cuts(m))
                cpu[(name, rows)].append(time.process_time() - t)
                last[(name, rows)] = out
    for name, proof in proofs.items():
        base = statistics.median(cpu[(name, families[0])])
        for rows in families:
            m, out = built[(name, rows)], last[(name, rows)]
            cuts = rounding.demand_cuts(m)
            lp, lp_cut = milp.relaxation(m), milp.relaxation(m, cuts)
            root = milp.prove(m, proof.start, gap=gap, nodes=1, cuts=cuts).mip_dual_bound
            median = statistics.median(cpu[(name, rows)])
            print(f"{name:7} {rows.value:21} rows +{len(m.rows) - len(proof.m.rows):4d}  LP "
                  f"{lp[1] if lp else math.nan:10.2f}  with cuts {lp_cut[1] if lp_cut else math.nan:10.2f}  root "
                  f"{root:10.2f}  proof: bound {out.mip_dual_bound:10.2f} of {out.fun:10.2f}, "
                  f"{out.mip_node_count:3d} nodes, CPU {median:6.3f} s ({median / base:.2f}x; "
                  f"{', '.join(f'{t:.2f}' for t in cpu[(name, rows)])})", flush=True)
    for rows in families:
        total = sum(statistics.median(cpu[(name, rows)]) for name in proofs)
        print(f"all models, {rows.value}: {total:.3f} s CPU (sum of medians)")
    print(f"load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="example," + ",".join(f"edit{i}" for i in range(1, 9)))
    parser.add_argument("--rows", default=",".join(r.value for r in Rows))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--gap", type=float, default=milp.PROOF_GAP)
    args = parser.parse_args()
    measure(models(args.models.split(",")), [Rows(r) for r in args.rows.split(",")], args.rounds, args.gap)


if __name__ == "__main__":
    main()
