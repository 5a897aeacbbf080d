"""Two HiGHS builds on the planner's own models (#43, branch `highs10`): the HiGHS the planner runs (SciPy's binding,
``scipy.optimize._highspy._core``: HiGHS 1.12.0 in SciPy 1.17.1) against the ``highspy`` package (public API; 1.15.1
when this was written), each model solved by both with the same arrays, options and start.

The models are captured as the planner gives them to HiGHS (``milp._milp``: every ``run_milp`` solve, the stage-1
MILPs, the hours stage 2 hands to HiGHS, the few pools solved whole, their LPs; ``milp._highs_run``: the proof from
the stages' plan): the Plan page's 8 demand edits (bench/plan.py's, the page's default settings: ``plan_stages``
then ``prove_plan``), the proof of the page's worked example, and the full catalog over 24 distinct hours
(bench/plan.py's: its stages; its proof model, not run by the planner, from bench/plan_proof.py, within 1 % and at
a zero gap; bench/plan_proof.py's ``models``). They are written once to ``--models`` (a NumPy ``.npz`` of their
arrays and a JSON text of their names and options, read back with ``allow_pickle=False``) and read from it afterwards
(valgrind would run the planner at its own pace otherwise): delete it to capture the models of a changed planner.
``highspy`` is not one of the project's requirements: ``pip install highspy`` first.

Each model is then solved by both builds in this process, alternated (the order reversed each round), ``--rounds``
times: per model the status, objective, dual bound, gap, nodes and the thread CPU of ``run()`` (median), and per
group the sums and the CPU ratio. ``--only GROUP`` solves one group (``stage``, ``proof``, ``hourly``, ``lp``,
``few``, ``full-stage``, ``full-proof``, ``full-proof0``), ``--build 1.12|1.15`` solves with one build only, once, no
figures but the sums (what ``valgrind --tool=callgrind`` runs: instructions do not depend on the machine's load;
under valgrind, each ``run()`` alone is counted: a small C helper, compiled with ``cc`` at the first such run,
switches callgrind's collection on and off around it and dumps each model's count to a file of its own, named by the
model; ``valgrind --tool=callgrind --collect-atstart=no python bench/highs_versions.py --build 1.15``, then
``callgrind_annotate``, or ``grep -H summary callgrind.out.*``). ``--option NAME=VALUE`` sets a HiGHS option on top of
the planner's (in each build that knows it). The time limit is 600 s (CPU-bound comparisons on a shared machine).

Usage: python bench/highs_versions.py [--models /tmp/highs-models.npz] [--rounds 3] [--only proof]
       [--build 1.15] [--option mip_allow_cut_separation_at_nodes=false]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.sparse import csc_matrix

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


@dataclass
class Model:
    """One HiGHS run as the planner makes it: ``min c x, a x <= b, lb <= x <= ub`` with its options and start."""

    name: str
    group: str
    a: csc_matrix
    c: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    b: np.ndarray
    integrality: np.ndarray
    options: dict[str, Any]
    start: np.ndarray | None


def save(models: list[Model], path: Path) -> None:
    """``models`` as one ``.npz``: each model's arrays under ``<i>.<field>`` and every name, group and option in
    ``meta`` (JSON), so reading them back runs no pickle."""
    arrays: dict[str, np.ndarray] = {}
    meta = []
    for i, m in enumerate(models):
        a = csc_matrix(m.a)
        arrays.update({f"{i}.data": a.data, f"{i}.indices": a.indices, f"{i}.indptr": a.indptr,
                       f"{i}.shape": np.asarray(a.shape), f"{i}.c": m.c, f"{i}.lb": m.lb, f"{i}.ub": m.ub,
                       f"{i}.b": m.b, f"{i}.integrality": np.asarray(m.integrality)})
        if m.start is not None:
            arrays[f"{i}.start"] = m.start
        meta.append({"name": m.name, "group": m.group, "options": m.options})
    with path.open("wb") as handle:
        np.savez(handle, meta=np.asarray(json.dumps(meta)), **arrays)


def load(path: Path) -> list[Model]:
    """The models ``save`` wrote to ``path``."""
    with np.load(path, allow_pickle=False) as f:
        out = []
        for i, m in enumerate(json.loads(str(f["meta"]))):
            a = csc_matrix((f[f"{i}.data"], f[f"{i}.indices"], f[f"{i}.indptr"]), shape=tuple(f[f"{i}.shape"]))
            start = f[f"{i}.start"] if f"{i}.start" in f.files else None
            out.append(Model(m["name"], m["group"], a, *(f[f"{i}.{k}"] for k in ("c", "lb", "ub", "b", "integrality")),
                             m["options"], start))
    return out


def _highs_options(options: dict[str, Any]) -> dict[str, Any]:
    """The planner's options by HiGHS's names and types (as ``milp._milp`` sets them), the time limit 600 s."""
    out = {}
    for k, v in options.items():
        if k == "node_limit":
            k = "mip_max_nodes"
        if k == "presolve":
            v = "on" if v else "off"
        out[k] = v
    out["time_limit"] = 600.0
    return out


def capture() -> list[Model]:
    """Every HiGHS MILP/LP run of the planner on the models of the module's docstring (see there)."""
    from plan import PAGE_DEMANDS, PAGE_LINK, PROFILE, scenario
    from plan_proof import models as proof_models

    import economics
    from economics.studies import planner
    from economics.studies.planner import milp, rounding
    from ui import links

    found: list[Model] = []
    label = {"name": "", "proof": False}
    real_milp, real_run = milp._milp, milp._highs_run

    def spy_milp(a, c, bounds, b, integrality, options):
        mip = bool(np.sum(integrality) > 0)
        group = ("lp" if not mip else "hourly" if options.get("node_limit") == milp.HOURLY_NODE_LIMIT
                 else "stage" if a.shape[1] >= 300 else "few")
        lb, ub = (np.broadcast_to(v, c.shape).astype(np.float64) for v in bounds)
        found.append(Model(label["name"], group, a.copy(), c.copy(), lb, ub, b.copy(), np.asarray(integrality).copy(),
                           _highs_options(options), None))
        return real_milp(a, c, bounds, b, integrality, options)

    def spy_run(a, c, lb, ub, b, integrality, options, start):
        found.append(Model(label["name"], "proof", a.copy(), c.copy(), lb.copy(), ub.copy(), b.copy(),
                           np.asarray(integrality).copy(), _highs_options(options), np.asarray(start).copy()))
        return real_run(a, c, lb, ub, b, integrality, options, start)

    milp._milp, milp._highs_run = spy_milp, spy_run
    try:
        s0 = economics.Scenario(**{**economics.default_scenario().model_dump(), **PAGE_LINK})
        page = links.default_settings()
        settings, ids = links.plan_settings(page), list(page[links.PLAN_PREFIX + "accelerators"])
        for i, demand in enumerate(PAGE_DEMANDS, 1):
            milp.clear_milp_memo()
            label["name"] = f"edit{i}"
            staged = planner.plan_stages(s0.model_copy(update={"demand_output_tokens_per_day": demand}), settings,
                                         None, ids)
            staged.result()
            planner.prove_plan(staged)
        milp.clear_milp_memo()
        label["name"] = "full"
        planner.plan_stages(scenario(), planner.PlanSettings(demand_profile=PROFILE)).result()
    finally:
        milp._milp, milp._highs_run = real_milp, real_run
    for m in found:
        if m.name == "full" and m.group != "lp":
            m.group = "full-" + ("stage" if m.group in ("stage", "few") else m.group)
    proofs = proof_models(["example", "full"])
    for name, gap, group in (("example", milp.PROOF_GAP, "proof"), ("full", milp.PROOF_GAP, "full-proof"),
                             ("full", 0.0, "full-proof0")):
        p = proofs[name]
        cuts = rounding.demand_cuts(p.m)
        a = csc_matrix(milp._with_cuts(p.m.matrix(), len(p.m.c), cuts))
        a.sort_indices()
        options = {**milp.PROOF_OPTIONS, "mip_rel_gap": gap, "mip_max_nodes": 100_000 if gap == 0 else
                   milp.PROOF_NODE_LIMIT}
        found.append(Model(name, group, a, *(np.asarray(v, dtype=float) for v in (p.m.c, p.m.lb, p.m.ub)),
                           milp._rhs(p.m, cuts), np.asarray(p.m.integer), _highs_options(options),
                           np.asarray(p.start, dtype=float)))
    return found


def builds() -> dict[str, Any]:
    """The two bindings by HiGHS version: SciPy's (as the planner loads it) and highspy's."""
    try:
        import highspy._core as new
    except ImportError:
        sys.exit("bench/highs_versions.py compares SciPy's HiGHS with the highspy package's: pip install highspy")

    from economics.studies.planner import milp
    old = milp.highs
    return {version(old): old, version(new): new}


def version(core: Any) -> str:
    return ".".join(str(int(v)) for v in core._Highs().version().split(".")[:2])


def prepared(core: Any, m: Model, extra: dict[str, Any]) -> Any:
    """A quiet HiGHS of ``core`` holding ``m`` with its options (and ``extra``) and start, as ``milp`` makes it."""
    h = core._Highs()
    h.setOptionValue("output_flag", False)
    lp = core.HighsLp()
    lp.num_col_, lp.num_row_ = m.a.shape[1], m.a.shape[0]
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = m.c, m.lb, m.ub
    lp.row_lower_, lp.row_upper_ = np.full(m.a.shape[0], -core.kHighsInf), m.b
    lp.a_matrix_.format_ = core.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = m.a.indptr, m.a.indices, m.a.data
    lp.integrality_ = [core.HighsVarType.kInteger if v else core.HighsVarType.kContinuous for v in m.integrality]
    h.passModel(lp)
    for k, v in m.options.items():
        assert h.setOptionValue(k, v) == core.HighsStatus.kOk, (k, v)
    for k, v in extra.items():  # an option this build does not know (a newer one) is left out
        if h.getOptionValue(k)[0] == core.HighsStatus.kOk:
            assert h.setOptionValue(k, v) == core.HighsStatus.kOk, (k, v)
    if m.start is not None:
        sol = core.HighsSolution()
        sol.col_value = [float(v) for v in m.start]
        sol.value_valid = True
        h.setSolution(sol)
    return h


@dataclass
class Outcome:
    status: str
    fun: float
    bound: float
    gap: float
    nodes: int
    cpu: float


HELPER = r"""
#include <valgrind/callgrind.h>
void hv_toggle(void) { CALLGRIND_TOGGLE_COLLECT; }
void hv_dump(const char *name) { CALLGRIND_DUMP_STATS_AT(name); }
"""
"""Callgrind's client requests (valgrind/callgrind.h), which Python cannot issue itself: collection switched around a
``run()``, and the count so far dumped (and zeroed) under a name. Outside valgrind each is a few no-op instructions."""


def _callgrind() -> Any:
    """The helper of :data:`HELPER`, compiled into a temporary folder."""
    folder = Path(tempfile.mkdtemp(prefix="highs-versions-"))
    (folder / "hv.c").write_text(HELPER)
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(folder / "hv.so"), str(folder / "hv.c")], check=True)
    lib = ctypes.CDLL(str(folder / "hv.so"))
    lib.hv_dump.argtypes = [ctypes.c_char_p]
    return lib


def solve(core: Any, m: Model, extra: dict[str, Any], counted: Any = None) -> Outcome:
    """``m`` solved by ``core``: what it reports, and the thread CPU of its ``run()`` [s] (``counted``: the helper
    of :func:`_callgrind`, which counts the ``run()`` alone under callgrind)."""
    h = prepared(core, m, extra)
    if counted is not None:
        counted.hv_toggle()
    t = time.thread_time()
    h.run()
    cpu = time.thread_time() - t
    if counted is not None:
        counted.hv_toggle()
        counted.hv_dump(f"{m.name} {m.group}".encode())
    info = h.getInfo()
    mip = bool(np.sum(m.integrality) > 0)
    return Outcome(h.modelStatusToString(h.getModelStatus()), float(info.objective_function_value),
                   float(info.mip_dual_bound) if mip else float("nan"), float(info.mip_gap) if mip else 0.0,
                   int(info.mip_node_count) if mip else 0, cpu)


def compare(models: list[Model], rounds: int, extra: dict[str, Any]) -> None:
    """Each model by both builds, alternated, ``rounds`` times: per model and per group (the module's docstring)."""
    cores = builds()
    names = list(cores)
    cpu: dict[tuple[int, str], list[float]] = {}
    last: dict[tuple[int, str], Outcome] = {}
    for r in range(rounds):
        for i, m in enumerate(models):
            for v in names if (r + i) % 2 == 0 else names[::-1]:
                out = solve(cores[v], m, extra)
                cpu.setdefault((i, v), []).append(out.cpu)
                last[(i, v)] = out
    old, new = names
    groups: dict[str, list[int]] = {}
    for i, m in enumerate(models):
        groups.setdefault(m.group, []).append(i)
        a, b = last[(i, old)], last[(i, new)]
        ta, tb = (statistics.median(cpu[(i, v)]) for v in (old, new))
        same = "same" if abs(a.fun - b.fun) <= 1e-6 * max(1.0, abs(a.fun)) else f"DIFFER {b.fun - a.fun:+.4f}"
        if m.group in ("proof", "stage", "full-stage", "full-proof", "full-proof0") or same != "same":
            print(f"{m.name:7} {m.group:11} {m.a.shape[1]:5d} cols {int(np.sum(m.integrality)):4d} int | {old}: "
                  f"{a.status[:18]:18} {a.fun:12.2f} bound {a.bound:12.2f} gap {a.gap:7.3%} {a.nodes:5d} nodes "
                  f"{ta * 1000:7.1f} ms | {new}: {b.status[:18]:18} {b.fun:12.2f} bound {b.bound:12.2f} gap "
                  f"{b.gap:7.3%} {b.nodes:5d} nodes {tb * 1000:7.1f} ms | {tb / ta:5.2f}x objective {same}",
                  flush=True)
    for group, idx in groups.items():
        ta = sum(statistics.median(cpu[(i, old)]) for i in idx)
        tb = sum(statistics.median(cpu[(i, new)]) for i in idx)
        differ = sum(abs(last[(i, old)].fun - last[(i, new)].fun) > 1e-6 * max(1.0, abs(last[(i, old)].fun))
                     for i in idx)
        print(f"group {group:11} {len(idx):3d} runs: HiGHS {old} {ta * 1000:8.1f} ms, {new} {tb * 1000:8.1f} ms "
              f"thread CPU (sums of medians of {rounds}), ratio {tb / ta:.3f}; objectives differing: {differ}")
    print(f"options added: {extra or 'none'}; load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


def one_build(models: list[Model], build: str, extra: dict[str, Any]) -> None:
    """``models`` by one build once, each ``run()`` counted alone under callgrind (:func:`_callgrind`)."""
    core, counted = builds()[build], _callgrind()
    total = 0.0
    for m in models:
        out = solve(core, m, extra, counted)
        total += out.cpu
        print(f"{m.name} {m.group}: {out.status} {out.fun:.2f} bound {out.bound:.2f} {out.nodes} nodes", flush=True)
    print(f"HiGHS {build}: {len(models)} models solved, {total:.3f} s thread CPU")


def _value(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="/tmp/highs-models.npz")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="")
    parser.add_argument("--build", default="")
    parser.add_argument("--option", action="append", default=[])
    args = parser.parse_args()
    path = Path(args.models)
    if not path.exists():
        save(capture(), path)
    models = load(path)
    if args.only:
        models = [m for m in models if m.group in args.only.split(",")]
    extra = {k: _value(v) for k, v in (o.split("=", 1) for o in args.option)}
    if args.build:
        one_build(models, args.build, extra)
    else:
        compare(models, args.rounds, extra)


if __name__ == "__main__":
    main()
