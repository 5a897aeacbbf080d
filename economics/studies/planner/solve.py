"""The solve: small models at once; larger ones in two stages (the owned base with rented counts continuous,
then the rented counts hour by hour), the chosen pools solved again on their own, and every plan checked against
its own pool sizes (time to first token, the operations rules).
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from economics.studies.planner.build import build_model, dominated_pools, hourly_models, rented_cols
from economics.studies.planner.hourly import satisfies, stage_two
from economics.studies.planner.inputs import PlanSettings, hour_types
from economics.studies.planner.milp import (
    EXACT_MAX_INTEGERS,
    EXACT_NODE_LIMIT,
    PROOF_GAP,
    PROOF_MAX_INTEGERS,
    PROVEN,
    Solution,
    prove,
    run_milp,
    solved,
)
from economics.studies.planner.model import HourModels, HourType, PlanModel, Row, count_column, utilization_cap
from economics.studies.planner.neighbours import MAX_ROUNDS, Neighbourhood
from economics.studies.planner.pools import Pool, Problem
from economics.studies.planner.rounding import demand_cuts
from economics.studies.planner.rules import apply_rules
from economics.studies.planner.separable import solve_separable

HourModelsMade = Callable[[], HourModels]
"""Makes stage 2's per-hour models when stage 2 runs (a model solved whole needs none)."""


def _solve(m: PlanModel, rented: set[int], hourly: HourModelsMade | None = None,
           closed: list[int] | None = None) -> Solution:
    """:func:`_solve_any`, its flows trimmed to the demand (:func:`trim_flows`); remembered per model
    (:func:`~economics.studies.planner.milp.solved`). ``closed``: pools another pool dominates, closed in stage 1.
    """

    def fresh() -> Solution:
        res = _solve_any(m, rented, hourly, closed or [])
        if res.x is None:
            return res
        x = trim_flows(m, np.asarray(res.x, dtype=float))
        return replace(res, x=x, fun=float(np.dot(m.c, x)))

    return solved(m, f"{sorted(rented)} {hourly is not None} {closed or []}", fresh)


_DEMAND = (Row.DEMAND_INPUT, Row.DEMAND_OUTPUT)


def trim_flows(m: PlanModel, x: np.ndarray) -> np.ndarray:
    """``x`` with no flow above what the demand needs: in each hour, where a demand row is served beyond its need,
    flows are lowered (the dearest first, then the last column first) until the row is met exactly or the flow is
    none. Where energy costs nothing, several flows are equally cheap and the solver returns any of them; this
    makes the plan's flows (its utilization, its energy and emissions) those the demand needs, whatever the
    solver's path. Lowering a flow breaks no row: flows enter every other row with a coefficient of at least 0.
    """
    x = x.copy()
    slack = m.slack_cols()
    rows_of: dict[HourType, list[int]] = {}  # hour (or ALL_DAY) -> its demand rows
    for i, kind in enumerate(m.row_kind):
        if kind in _DEMAND:
            rows_of.setdefault(m.row_hour[i], []).append(i)
    for rows in rows_of.values():
        # row i reads -sum(a x) <= b (b = -1: the hour's need); its excess is what it serves beyond that
        excess = {i: float(m.b[i] - sum(a * x[j] for j, a in m.rows[i].items())) for i in rows}
        flows = sorted({j for i in rows for j, a in m.rows[i].items() if a < 0 and j not in slack},
                       key=lambda j: (-m.c[j], -j))
        for j in flows:
            cut = min([x[j], *(excess[i] / -m.rows[i][j] for i in rows if m.rows[i].get(j, 0.0) < 0)])
            if cut <= 1e-12 * max(1.0, x[j]):
                continue
            x[j] -= cut
            for i in rows:
                excess[i] += m.rows[i].get(j, 0.0) * cut
    return x


def _solve_any(m: PlanModel, rented: set[int], hourly: HourModelsMade | None = None,
               closed: list[int] | None = None) -> Solution:
    """Solve the MILP. Small models (or without rent) at once: exactly when their hours separate
    (:func:`~economics.studies.planner.separable.solve_separable`, the proven optimum), else by HiGHS. Larger ones
    in two stages: (1) the owned base with
    rented counts continuous, a relaxation whose bound is a lower bound of the whole problem, over the pools not
    ``closed`` (pools another pool dominates: the same optimum, fewer columns; :func:`closed_bounds`); (2) the
    owned counts fixed, the rented counts in whole systems, each hour on its own, exactly where
    :mod:`economics.domain.covering` takes it (``hourly`` builds one model per hour type and its column map into
    ``m``; with the base fixed the hours no longer interact). The bound reported is stage 1's, so the gap is an
    honest one.
    """
    exact: Solution | None = None
    if sum(m.integer) <= EXACT_MAX_INTEGERS or not rented or hourly is None:
        small = not rented or hourly is None
        # a model whose hours separate once the counts held all day are fixed: the proven optimum, no dearer than
        # HiGHS's plan within its 0.1 % (the rule change of docs/speed.md, branch exactcost)
        separate = None if small or hourly is None else solve_separable(m, rented, hourly)
        if separate is not None:
            return separate
        res = run_milp(m, nodes=None if small else EXACT_NODE_LIMIT)
        bound = float(res.mip_dual_bound or math.nan)
        # the binaries of the operations settings cost nothing, so the solver may leave one at 1 over an empty
        # pool: they are read off the counts (which already follow the settings)
        xs = apply_rules(m, np.asarray(res.x)) if res.x is not None else None
        exact = Solution(xs, float(np.dot(m.c, xs)) if xs is not None else math.nan, bound, res.status, res.message)
        if small or res.status == 0:
            return exact
    first = run_milp(m, integer=[0 if j in rented else v for j, v in enumerate(m.integer)],
                     ub=closed_bounds(m, set(closed)) if closed else None)
    if first.x is None:
        return Solution(None, math.nan, math.nan, first.status, first.message)
    x = stage_two(m, np.asarray(first.x, dtype=float), rented, hourly() if hourly is not None else [])
    if x is None:
        return Solution(None, math.nan, math.nan, 2, "an hour cannot be served with the owned base fixed")
    x = apply_rules(m, x)
    bound = float(first.mip_dual_bound or first.cost)
    if not satisfies(m, x):  # not expected (more systems break no row); the whole MILP, node-limited, instead
        res = run_milp(m, nodes=EXACT_NODE_LIMIT)
        return Solution(res.x, res.cost if res.x is not None else math.nan, float(res.mip_dual_bound or math.nan),
                        res.status, res.message)
    staged = Solution(x, float(np.dot(m.c, x)), bound, 0, "two stages")
    if exact is not None and exact.x is not None:
        better = exact if exact.fun <= staged.fun else staged
        return replace(better, bound=max(bound, exact.bound) if math.isfinite(exact.bound) else bound)
    return staged


def pool_counts(m: PlanModel, x: np.ndarray, p: int, hours: int) -> np.ndarray:
    """Pool ``p``'s systems in each of the ``hours`` hour types of solution ``x``, rounded to whole systems."""
    return np.array([round(float(x[count_column(m, p, h)])) for h in range(hours)], dtype=float)


def _ttft_ok(m: PlanModel, x: np.ndarray, pools: list[Pool], settings: PlanSettings, hours: int) -> bool:
    """Every pool-hour of a solution meets the TTFT target at its own number of replicas."""
    for p, pool in enumerate(pools):
        if pool.prefill_weight <= 0 or settings.ttft_target_s is None:
            continue
        n = pool_counts(m, x, p, hours)
        for h in range(hours):
            load = pool.prefill_weight * pool.unit * float(x[m.flow_col[(p, h)]])
            if n[h] <= 0 or load <= 0:
                continue
            rho = load / (pool.prefill_capacity * n[h])
            if rho > utilization_cap(pool, int(n[h]) * pool.servers_per_system, settings) + 1e-7:
                return False
    return True


def solve_built(pb: Problem, rho: dict[int, float], elastic: bool | frozenset[str] = False,
                floors: dict[int, int] | None = None) -> tuple[PlanModel, np.ndarray, np.ndarray, Solution]:
    """The model of ``pb`` built (:func:`build_model`, same arguments) and solved (:func:`_solve`, with its
    per-hour models for stage 2, built only when stage 2 runs). Returns (model, hour-type demand, hour-type weights,
    solution).
    """
    m, levels, weights = build_model(pb, rho, elastic, floors)

    def hourly() -> list[tuple[PlanModel, dict[int, int]]]:
        m.hours = hourly_models(pb, rho, m, elastic, floors)
        return m.hours

    # a model too large to prove (whose rules hold the TTFT floors the dominance reads): stage 1 over the pools no
    # other pool dominates, the same optimum, its root 2.3 x faster on the full catalog. Not on a model the proof
    # takes: HiGHS then stops at another plan within its 0.1 %, and 3 of the Plan page's 8 plans changed (docs/speed.md)
    closed = dominated_pools(pb, m, rho) if m.rules is not None and _too_large(m) else []
    return m, levels, weights, _solve(m, rented_cols(m, pb), hourly, closed)


def _solve_refined(pb: Problem, refine: bool = True) -> tuple[PlanModel, Any, dict[int, float], list[str]]:
    """TTFT in two passes. (1) Every pool's utilization cap at one system's replicas: safe, since more replicas
    only allow more. (2) For each pool the first pass used, its floor: the fewest systems that carry its busiest
    hour within the target at their own size (a search over n, as n rho_max(n) grows with n); the cap at that
    size holds for any pool at least that big, so the pool is given either none or at least its floor (a binary).
    Only on-site pools get floors (one count a day); rented pools, sized hour by hour, keep the safe cap.
    The second plan is kept when it is no dearer and passes the check at its own pool sizes. Returns (model,
    result, caps, notes). ``refine=False``: the first pass only (enough to see which pools a plan uses).
    """
    pools, cands, settings = pb.pools, pb.cands, pb.settings
    ttft = settings.ttft_target_s is not None and pb.wl.uncached_input_tokens > 0
    rho = {p: utilization_cap(pool, pool.servers_per_system, settings) for p, pool in enumerate(pools)
           if ttft and pool.prefill_weight > 0}
    m, _, weights, res = solve_built(pb, rho)
    notes: list[str] = []
    if not rho or res.x is None or not refine:
        return m, res, rho, notes
    floors: dict[int, int] = {}
    caps = dict(rho)
    for p in rho:
        n = pool_counts(m, res.x, p, len(weights))
        if not (n > 0).any() or not cands[pools[p].cand].on_site:
            continue
        pool = pools[p]
        load = max(pool.prefill_weight * pool.unit * float(res.x[m.flow_col[(p, h)]])
                   for h in range(len(weights)))
        floors[p] = _fewest_systems(pool, load, int(n.max()), settings)
        caps[p] = utilization_cap(pool, floors[p] * pool.servers_per_system, settings)
    if all(caps[p] <= rho[p] * 1.01 for p in floors):  # pooling would raise no cap by even 1 %
        return m, res, rho, notes
    m2, _, _, res2 = solve_built(pb, caps, floors=floors)
    if res2.x is not None and res2.fun <= res.fun + 1e-9 and _ttft_ok(m2, res2.x, pools, settings, len(weights)):
        return m2, res2, caps, notes
    notes.append("TTFT: the plan with pooled caps was no better or failed the check; the safe plan is kept")
    return m, res, rho, notes


Best = tuple[PlanModel, Any, dict[int, float], Problem]
"""A plan as :func:`solve_stages` finds it: (model, result, TTFT caps, the problem of the model)."""


@dataclass
class Stages:
    """A plan of the stages (:func:`solve_stages`), before its proof: the model of every pool ``m``, its TTFT caps
    ``rho`` and ``notes``, the plan found (``best``: a plan of some of ``m``'s pools) and whether
    :func:`prove_stages` proves it on ``m`` (``provable``: a plan of the operations settings' two stages).
    """

    m: PlanModel
    rho: dict[int, float]
    notes: list[str]
    best: Best
    provable: bool

    @property
    def proves(self) -> bool:
        """Whether :func:`prove_stages` runs HiGHS (else it returns the plan as it is)."""
        return self.provable and _to_prove(self.m, self.best[1])


def solve_stages(pb: Problem) -> Stages:
    """:func:`_solve_refined`, then, with the operations settings, a few pools solved again on their own: a few pools
    make a small model, solved whole (a rented pool's hours coupled by its rental block) where the large one went in
    two stages. The pools tried are those the plan chose and, with a rental block, those of the plan by the hour
    (its relaxation couples no hours, so it often chooses better); then those of the cheapest with a rented pool
    added (:func:`_add_pools`). The cheapest plan is kept; the lower bound stays the large model's, so the gap
    reported is against every pool.

    Two threads at most: the plan by the hour is solved beside the TTFT passes, and the chosen pools' own plan beside
    the plan by the hour or the plan by the hour's pools' own plan (HiGHS lets go of the GIL while it solves). Each
    reads none of the others' answers, and the answers are taken in the order above: the same plan as one after the
    other (docs/speed.md, "Planner speed").
    """
    pools, settings, wl = pb.pools, pb.settings, pb.wl
    by_hour = replace(pb, settings=replace(settings, min_rental_hours=1.0), wl=replace(wl, block_hours=0.0))
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="stages-beside") as background:
        # (in this context: work that is stopped, :func:`~economics.studies.planner.milp.cancellable`, stops them too)
        ahead = (background.submit(contextvars.copy_context().run, _solve_refined, by_hour, False)
                 if wl.block_hours > 0 else None)
        m, res, rho, notes = _solve_refined(pb)
        if m.rules is None or res.x is None or res.message != "two stages":
            return Stages(m, rho, notes, (m, res, rho, pb), False)
        hours = len(hour_types(wl)[2])
        chosen = [tuple(p for p in range(len(pools)) if pool_counts(m, res.x, p, hours).max() > 0)]
        beside = background.submit(contextvars.copy_context().run, _own_solve, pb, m, rho, chosen[0])
        if m.rules.block:
            m1, res1, _, _ = ahead.result() if ahead is not None else _solve_refined(by_hour, refine=False)
            if res1.x is not None:  # its hour types once (they were worked out again for each pool: 6 ms an edit)
                hours1 = len(hour_types(by_hour.wl)[2])
                chosen.append(tuple(p for p in range(len(pools)) if pool_counts(m1, res1.x, p, hours1).max() > 0))
        own = {few: _own_solve(pb, m, rho, few) for few in chosen[1:] if few != chosen[0]}
        own[chosen[0]] = beside.result()
    best: Best = (m, res, rho, pb)
    used = chosen[0]
    said = replace(res, message="two stages, then its pools")
    for few in dict.fromkeys(chosen):
        found = _kept(pb, own[few], best[1].fun, said)
        if found is not None:
            best, used = found, few
    return Stages(m, rho, notes, _add_pools(pb, m, rho, res, best, list(used)), True)


def prove_stages(pb: Problem, found: Stages) -> Stages:
    """``found`` with its plan proven on the whole model (:func:`_proven`) when it is a plan of the operations
    settings' two stages; else ``found`` itself.
    """
    if not found.provable:
        return found
    return replace(found, best=_proven(pb, found.m, found.rho, found.best))


def _to_prove(m: PlanModel, plan: Solution) -> bool:
    """Whether :func:`_proven` runs HiGHS on ``m`` for ``plan``: a plan not yet proven within
    :data:`~economics.studies.planner.milp.PROOF_GAP` of its bound, on a model of at most
    :data:`~economics.studies.planner.milp.PROOF_MAX_INTEGERS` integer columns.
    """
    return not (plan.x is None or plan.fun - plan.bound <= PROOF_GAP * abs(plan.fun)  # NaN bound: run
                or _too_large(m))


def _too_large(m: PlanModel) -> bool:
    """Whether ``m`` has more integer columns than a proof takes
    (:data:`~economics.studies.planner.milp.PROOF_MAX_INTEGERS`): its plan keeps stage 1's bound.
    """
    return sum(m.integer) > PROOF_MAX_INTEGERS


def _proven(pb: Problem, m: PlanModel, rho: dict[int, float], best: Best) -> Best:
    """``best`` (a plan of some of ``m``'s pools) with a bound proven on the whole of ``m`` (every pool): HiGHS
    starts from the plan and stops once it is proven within :data:`~economics.studies.planner.milp.PROOF_GAP`
    (stage 1's bound relaxes the rented counts, 1.6-9.4 % under the Plan page's plans; the whole MILP's is the
    true one). HiGHS is given the model with its dominated pools closed (:func:`without_dominated`) and each hour's
    demand rounded to whole systems (:func:`~economics.studies.planner.rounding.demand_cuts`: valid inequalities, the
    same optimum; the page's example proven in 0.67x the CPU). A cheaper plan HiGHS finds on the way is kept when it
    meets TTFT at its own pool sizes. Not run
    when stage 1's bound already proves the plan within that gap, nor on a model of more than
    :data:`~economics.studies.planner.milp.PROOF_MAX_INTEGERS` integer columns (:func:`_to_prove`).
    """
    plan = best[1]
    if not _to_prove(m, plan):
        return best
    start = embed(m, best[0], [pb.pools.index(pool) for pool in best[3].pools], plan.x) if best[0] is not m else (
        np.asarray(plan.x, dtype=float))
    closed = without_dominated(pb, m, rho, start)
    out = prove(closed, start, cuts=demand_cuts(closed))
    bound = out.bound
    if not math.isfinite(bound):
        return best
    bound = max(bound, plan.bound) if math.isfinite(plan.bound) else bound
    if out.x is not None:
        x = trim_flows(m, apply_rules(m, np.asarray(out.x, dtype=float)))
        cost = float(np.dot(m.c, x))
        if cost < plan.fun - 1e-9 * max(1.0, abs(plan.fun)) and satisfies(m, x) and _ttft_ok(
                m, x, pb.pools, pb.settings, len(hour_types(pb.wl)[2])):
            return m, Solution(x, cost, min(bound, cost), 0, PROVEN), rho, pb
    return best[0], replace(plan, bound=min(bound, plan.fun), message=f"{plan.message}; {PROVEN}"), best[2], best[3]


def without_dominated(pb: Problem, m: PlanModel, rho: dict[int, float], start: np.ndarray) -> PlanModel:
    """``m`` with the pools another pool dominates closed (their columns bounded at 0;
    :func:`~economics.studies.planner.build.dominated_pools`): the same optimum, fewer columns for HiGHS to prove it
    over (the Plan page's models 3 of 26 pools, the full catalog's 10 of 48: the proofs 20 % less CPU). A pool the
    plan ``start`` uses stays open, so the start remains a plan of the model HiGHS is given.
    """
    used = {p for (p, _), j in m.count_col.items() if start[j] > 0}
    closed = set(dominated_pools(pb, m, rho)) - used
    return replace(m, ub=closed_bounds(m, closed)) if closed else m


def closed_bounds(m: PlanModel, closed: set[int]) -> list[float]:
    """``m``'s upper bounds with the pools ``closed`` closed: their counts, flows, floors, binaries and rented sizes
    bounded at 0.
    """
    cols = [j for (p, _), j in [*m.count_col.items(), *m.flow_col.items(), *m.floor_col.items()] if p in closed]
    if m.rules is not None:  # each pool's binary and a rented pool's size
        cols += [m.rules.open_col[p] for p in closed if p in m.rules.open_col]
        cols += [m.rules.rented[p][1] for p in closed if p in m.rules.rented]
    ub = list(m.ub)
    for j in cols:
        ub[j] = 0.0
    return ub


def embed(m: PlanModel, few: PlanModel, used: list[int], x: np.ndarray) -> np.ndarray:
    """A plan ``x`` of the model ``few`` of the pools ``used`` (of ``m``'s; same hours, candidates and settings) as
    a plan of ``m``: each pool's counts, flows and floors at its column of ``m``, the racks, each rented pool's size;
    a pool's binary 1 when it has systems; every other pool closed (0).
    """
    out = np.zeros(len(m.c))
    for (p, h), j in few.count_col.items():
        out[m.count_col[(used[p], h)]] = x[j]
    for (p, h), j in few.flow_col.items():
        out[m.flow_col[(used[p], h)]] = x[j]
    for (p, h), j in few.floor_col.items():
        out[m.floor_col[(used[p], h)]] = x[j]
    for i, j in few.rack_col.items():
        out[m.rack_col[i]] = x[j]
    return apply_rules(m, out)  # each rented pool's size and every binary, from the counts


def _own_solve(pb: Problem, m: PlanModel, rho: dict[int, float], used: tuple[int, ...]) -> Best:
    """The pools ``used`` (of ``m``'s) solved on their own, with their TTFT caps and floors in ``m``: (their model,
    its solution, its caps, their problem).
    """
    assert m.rules is not None
    few = [pb.pools[p] for p in used]
    caps = {i: rho[p] for i, p in enumerate(used) if p in rho}
    floors = {i: int(m.rules.floors[p]) for i, p in enumerate(used) if p in m.rules.floors}
    sub = replace(pb, pools=few)
    m2, _, _, res2 = solve_built(sub, caps, floors=floors)
    return m2, res2, caps, sub


def _kept(pb: Problem, own: Best, cost: float, said: Solution) -> Best | None:
    """A plan of a few pools (:func:`_own_solve`) when it costs less than ``cost`` and meets TTFT at its own pool
    sizes; its result keeps ``said``'s bound and message (the large model's bound).
    """
    m2, res2, caps, sub = own
    if res2.x is None or res2.fun >= cost - 1e-9 * max(1.0, abs(cost)) or not _ttft_ok(
            m2, res2.x, sub.pools, pb.settings, len(hour_types(pb.wl)[2])):
        return None
    return m2, replace(res2, bound=said.bound, message=said.message), caps, sub


def _own_pools(pb: Problem, m: PlanModel, rho: dict[int, float], used: list[int], cost: float,
               said: Solution) -> Best | None:
    """The pools ``used`` (of ``m``'s) solved on their own (:func:`_own_solve`), when that plan costs less than
    ``cost`` and meets TTFT at its own pool sizes (:func:`_kept`).
    """
    return _kept(pb, _own_solve(pb, m, rho, tuple(used)), cost, said)


def _add_pools(pb: Problem, m: PlanModel, rho: dict[int, float], res: Solution, best: Best, used: list[int]) -> Best:
    """``best`` (a plan of the pools ``used``), or a cheaper one with rented pools added: each round, the pools
    :class:`~economics.studies.planner.neighbours.Neighbourhood` ranks (bounded with the base of the two stages'
    plan ``res`` of ``m``) are each solved on their own with the plan's pools (:func:`_own_pools`) and the
    cheapest plan that beats the best kept; until no pool helps, the pool limit or :data:`MAX_ROUNDS`.
    """
    assert m.rules is not None and res.x is not None
    limit = pb.settings.max_pools if pb.settings.max_pools is not None else math.inf
    if len(used) >= limit or not m.rules.open_col or best[1].fun <= res.bound + 1e-9 * max(1.0, abs(res.bound)):
        return best  # no pool may be added, or none is closed, or the plan is proven optimal
    hourly = m.hours if m.hours is not None else hourly_models(pb, rho, m, floors=dict(m.rules.floors))
    near = Neighbourhood(pb, m, np.asarray(res.x, dtype=float), rented_cols(m, pb), hourly)
    opened = set(used)
    said = replace(res, message="two stages, then pools added")
    for _ in range(MAX_ROUNDS):
        if len(opened) >= limit:
            break
        found: tuple[Best, int] | None = None
        for q in near.tries(opened, best[1].fun):
            trial = _own_pools(pb, m, rho, sorted(opened | {q}), (found[0] if found else best)[1].fun, said)
            if trial is not None:
                found = (trial, q)
        if found is None:
            break
        best = found[0]
        opened.add(found[1])
    return best


def _fewest_systems(pool: Pool, load: float, most: int, settings: PlanSettings) -> int:
    """Fewest systems of a pool whose prefill capacity at the TTFT cap of their own size carries ``load``
    [uncached input tokens/s] (binary search: n rho_max(n) grows with n). At most ``most``.
    """
    lo, hi = 1, max(1, most)
    while lo < hi:
        mid = (lo + hi) // 2
        cap = utilization_cap(pool, mid * pool.servers_per_system, settings)
        if load <= mid * cap * pool.prefill_capacity * (1 + 1e-9):
            hi = mid
        else:
            lo = mid + 1
    return lo
