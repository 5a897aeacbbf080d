"""The interactivity curve: throughput per accelerator against the speed each user sees, and its cost.

Raising the batch raises throughput per accelerator and lowers each user's tokens/s; the curve over batch sizes
(and replica sizes) is the Pareto front an operator trades along. ``curve_table`` evaluates many scenarios x batch
sizes x replica sizes in one vectorised pass of the roofline (:class:`economics.engine.roofline.Roofline`);
``interactivity_curve`` adds, for one scenario, the cost per million tokens along the front (through the same
cost engine as every other figure) and the measured points in data/ for the same accelerator, model and precision.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from economics import catalog
from economics.domain import capacity as cap
from economics.domain import throughput as th
from economics.engine.batch import ScenarioError, as_scenario, evaluate_at_rates, fill_throughput
from economics.engine.measured import curves, user_curves
from economics.engine.replicas import REPLICA_SIZES
from economics.engine.roofline import Roofline
from economics.schema.scenario import Scenario, Workload
from economics.schema.validation import validate, validate_one
from economics.studies.compare import scenario_frame


def curve_table(scenarios: pd.DataFrame, max_batch: int = 256) -> pd.DataFrame:
    """Roofline points for every scenario row x replica size x batch 1..min(memory, max_batch_size, max_batch).

    Returns a long table: ``scenario`` (row position), ``accelerators_per_replica``, ``batch_size``,
    ``output_tokens_per_s_per_user``, ``output_tokens_per_s_per_accelerator``, ``decode_bound``. Rows whose model
    does not fit a replica size contribute no points for it; dataflow/SRAM systems (no roofline) and precisions the
    hardware lacks contribute none. Rows are validated like any scenario table; invalid
    ones contribute no points.
    """
    cols, problems = validate(scenarios.reset_index(drop=True))
    return _curve_points(cols, {p.row for p in problems}, max_batch)


def _curve_points(cols: dict[str, Any], bad: set[int], max_batch: int) -> pd.DataFrame:
    """:func:`curve_table`'s points of validated columns, the rows ``bad`` (refused by the validation) left out."""
    n_sc = len(cols["accelerator"])
    batches = np.arange(1, max_batch + 1, dtype=float)
    idx = np.repeat(np.arange(n_sc), batches.size)
    b = np.tile(batches, n_sc)
    rep = {k: v[idx] for k, v in cols.items()}
    rl = Roofline(rep)
    system = np.nan_to_num(rep["accelerators_per_system"], nan=8.0)
    roofline = catalog.accelerators().get("roofline", pd.Series(dtype=bool))
    describable = pd.Series(rep["accelerator"]).map(roofline).fillna(True).to_numpy(dtype=bool)
    fixed = rep["accelerators_per_replica"]
    frames = []
    for size in REPLICA_SIZES:
        n = np.where(np.isnan(fixed), float(size), fixed)
        allowed = np.where(np.isnan(fixed), size <= np.maximum(8.0, system), size == REPLICA_SIZES[0])
        bmem = th.max_batch_in_memory(n, rl.mem, rep["memory_utilization"], rl.weights, rl.kv_max)
        keep = (allowed & (b <= np.minimum(bmem, rep["max_batch_size"])) & ~np.isnan(rl.peak)
                & ~np.isin(idx, list(bad)) & describable)
        if not keep.any():
            continue
        t = rl.step(b, n)
        # the user sees the step with its share of chunked prefill (the bare step when a disaggregated stack
        # prefills elsewhere); the decode rate is per decode step
        t_mix = rl.mixed_step(b, n, t)
        t_mix = np.where(rl.disagg, t, t_mix) if rl.disagg.any() else t_mix
        frames.append(pd.DataFrame({
            "scenario": idx[keep], "accelerators_per_replica": n[keep], "batch_size": b[keep],
            "output_tokens_per_s_per_user": np.asarray(th.USER_SPEED.evaluate({"mixed_step_s": t_mix}))[keep],
            "output_tokens_per_s_per_accelerator": np.asarray(th.OUTPUT_RATE.evaluate(
                {"batch_size": b, "accelerators_per_replica": n, "decode_step_s": t}))[keep],
            "decode_bound": rl.decode_bound(b, n)[keep],
        }))
    if not frames:
        return pd.DataFrame(columns=["scenario", "accelerators_per_replica", "batch_size",
                                     "output_tokens_per_s_per_user", "output_tokens_per_s_per_accelerator",
                                     "decode_bound"])
    return pd.concat(frames, ignore_index=True)


def pareto_front(table: pd.DataFrame) -> pd.DataFrame:
    """Per scenario, the points no other point beats on both per-user speed and throughput per accelerator,
    ordered by per-user speed (ascending).
    """
    out = []
    for _, g in table.groupby("scenario", sort=True):
        g = g.sort_values(["output_tokens_per_s_per_user", "output_tokens_per_s_per_accelerator"],
                          ascending=[False, False])
        best = np.maximum.accumulate(g["output_tokens_per_s_per_accelerator"].to_numpy())
        prev = np.concatenate([[-np.inf], best[:-1]])
        out.append(g[g["output_tokens_per_s_per_accelerator"].to_numpy() > prev])
    if not out:
        return table.iloc[0:0]
    return pd.concat(out).sort_values(["scenario", "output_tokens_per_s_per_user"]).reset_index(drop=True)


COST_COLUMNS = ("cost_usd_per_m_tokens", "cost_usd_per_m_output_tokens", "accelerators", "utilization")
"""The engine's outputs given at every point of the curve."""


def _cost_along(scenario: dict[str, Any], per_acc: np.ndarray, prefill: np.ndarray) -> pd.DataFrame:
    """The scenario's cost at each given decode and prefill rate: :func:`economics.engine.batch.evaluate_at_rates`,
    the numbers :func:`economics.evaluate` gives for the repeated scenario, validated once rather than per point.
    """
    return evaluate_at_rates(scenario, {"output_tokens_per_s_per_accelerator": per_acc,
                                        "input_tokens_per_s_per_accelerator": prefill}, COST_COLUMNS)


def _prefill_rates(scenario: dict[str, Any], replicas: np.ndarray) -> np.ndarray:
    """The estimate's prefill rate per accelerator at each replica size, from the same roofline as the estimate:
    worked out once per distinct size (a front's hundreds of points span a few), each row on its own as in a table
    of every point.
    """
    sizes, which = np.unique(replicas, return_inverse=True)
    rates = []
    for size in sizes.tolist():
        cols = _one(validate_one({**scenario, "accelerators_per_replica": size})[0])
        fill_throughput(cols)
        rates.append(float(cols["input_tokens_per_s_per_accelerator"][0]))
    return np.array(rates)[which]


def _one(cols: dict[str, Any]) -> dict[str, Any]:
    """A one-row validation's columns as the curve's own (the validation may hand back remembered ones, and the
    estimate writes some in place).
    """
    return {name: np.array(v, copy=True) for name, v in cols.items()}


def chosen_stack(scenario: dict[str, Any]) -> str:
    """The serving stack the estimate uses for this scenario at its per-user target (``serving_stack_used``): the
    pinned stack, the best published one at the target, or the roofline's label; '' when the throughput is given.
    """
    try:
        row = as_scenario(scenario).model_dump()
    except ScenarioError:
        return ""
    cols, problems = validate(scenario_frame([row]))
    if problems:
        return ""
    return str(fill_throughput(cols)["serving_stack_used"][0])


CURVE_IGNORES = ("output_tokens_per_s_per_accelerator", "input_tokens_per_s_per_accelerator",
                 "target_output_tokens_per_s_per_user")
"""Fields the curve does not depend on (it is what the hardware can do at every speed), except through ``chosen``."""


def interactivity_curve(scenario: Scenario | dict[str, Any], max_batch: int = 256,
                        chosen: str | None = None) -> dict[str, pd.DataFrame]:
    """For one scenario: ``front`` (the roofline Pareto front: decode throughput, prefill rate, effective output
    throughput with prefill time included, and cost per M tokens along it at the scenario's fleet, demand and
    prices) and ``measured`` (measured points of every serving stack for the same accelerator, model and precision,
    with their stack, whether it is the one the estimate chose (``chosen``) and their cost). Throughput fields of
    the scenario and its per-user target (:data:`CURVE_IGNORES`) are ignored: the curve is what the hardware can do.
    They only pick the ``chosen`` stack: :func:`chosen_stack` of the scenario, unless the caller knows it already
    (``serving_stack_used`` of the scenario's evaluation; "" when its throughput is given).
    """
    s = as_scenario(scenario).model_dump()
    if s["workload"] == Workload.SESSIONS:
        raise ValueError("workload: the decode study does not take sessions yet (issue #39); study their mean turn "
                         "as requests")
    if chosen is None:
        chosen = chosen_stack(s)
    s.update(dict.fromkeys(CURVE_IGNORES))
    mine = user_curves(s["curves_sha256"]) if s.get("curves_sha256") else ()
    s["curves_sha256"] = None  # the front is the roofline's; the user's measured points are drawn beside it
    # the scenario validated as one row (validate_one: the table's rules, remembered per value of what they read)
    cols, problems = validate_one(s)
    front = pareto_front(_curve_points(_one(cols), {0} if problems else set(), max_batch))
    if len(front):
        prefill = _prefill_rates(s, front["accelerators_per_replica"].to_numpy())
        decode = front["output_tokens_per_s_per_accelerator"].to_numpy()
        o = s["output_tokens_per_request"]
        front["prefill_tokens_per_s_per_accelerator"] = prefill
        # what a benchmark measures: output tokens per accelerator-second with prefill time included
        front["effective_output_tokens_per_s_per_accelerator"] = o * cap.requests_per_s_per_accelerator(
            s["input_tokens_per_request"], o, s["prefix_cache_hit_rate"], prefill, decode)
    measured = []
    picked = set(chosen.split(" / "))  # a published front between two stacks' points names both
    for cv in (*curves(), *mine):
        if (cv.accelerator, cv.model, cv.precision) == (s["accelerator"], s["model"], s["precision"]):
            measured.append(pd.DataFrame({
                "curve": cv.curve_id, "serving_stack": cv.stack, "chosen": cv.stack in picked,
                "input_tokens": cv.input_tokens, "output_tokens": cv.output_tokens,
                "output_tokens_per_s_per_user": cv.per_user, "output_tokens_per_s_per_accelerator": cv.per_accelerator,
            }))
    meas = pd.concat(measured, ignore_index=True) if measured else pd.DataFrame(
        columns=["curve", "serving_stack", "chosen", "input_tokens", "output_tokens", "output_tokens_per_s_per_user",
                 "output_tokens_per_s_per_accelerator"])
    if len(front) or len(meas):  # the cost at every point of both, in one evaluation
        costs = _cost_along(s, np.concatenate([front["output_tokens_per_s_per_accelerator"].to_numpy(dtype=float)
                                               if len(front) else np.zeros(0),
                                               meas["output_tokens_per_s_per_accelerator"].to_numpy(dtype=float)]),
                            np.concatenate([front["prefill_tokens_per_s_per_accelerator"].to_numpy(dtype=float)
                                            if len(front) else np.zeros(0), np.full(len(meas), np.nan)]))
        costs = costs.reset_index(drop=True)
        if len(front):
            front = pd.concat([front.reset_index(drop=True), costs.iloc[:len(front)]], axis=1)
        if len(meas):
            meas = pd.concat([meas, costs.iloc[len(front):].reset_index(drop=True)], axis=1)
    return {"front": front, "measured": meas}
