"""Planner speed: an edit on the Plan page (the demand changed as bench/app_latency.py changes it, under the page's
default settings) with where its time goes (engine rates, model building, HiGHS's stage 1 and hourly MILPs,
post-processing), a planner setting changed with the engine's rate tables remembered against re-rated in the same
run; the full catalog x 3 roles x own/rent (and the existing fleet) x 24 distinct hours, and 20-point frontiers
(cost vs per-user speed target, cost vs site MW). Prints the measured times, the model's size, the optimality gap
and the peak memory; targets: one plan <= 2 s, a 20-point frontier <= 10 s. No timed tests: this script reports,
it does not assert.

The phases are timed by wrapping the planner's internal steps, which live in the modules of
``economics.studies.planner``: the engine rates (``candidates._engine_rates``), model building
(``build.build_model`` and ``build.hourly_models``), the shadow-price LP (``report._shadow_prices``), post-processing
(``report.plan_result``), the exact hourly covering search (``hourly.covered_hour``) and every HiGHS call
(``milp.run_milp``; an hourly MILP is one with ``nodes=milp.HOURLY_NODE_LIMIT``, from ``hourly.highs_hour``) and the
proof of the plan on the whole MILP (``milp.prove``). The
package's modules import these functions by name, so each wrapper replaces the function in every planner module that
holds it, and is removed on exit. The stage-1 model's size is read from ``build.build_model`` on a
``pools.Problem``, the context object that replaced the single module's nine-argument ``_build``.

It first times ``python -m economics plan`` on the Plan page's worked example (ui/links.py ``PLAN_EXAMPLE`` on the
default scenario, the page's default settings and accelerators, a 2 s TTFT) from a fresh process, minus a fresh
``python -c "import economics"``, the two alternated in the same run (median of ``--fresh`` pairs; #43's target: at
most 1 s beyond the package import).

``--phases N`` prints instead where that fresh process's CPU time goes (the imports, the candidates, the
stages, the proof, the settings' costs, the plan by the hour and the chosen pools' own plan when solved on a thread
of their own, and HiGHS's share of each, each phase in its own thread's CPU; then the command's wall time and its
main thread's CPU; median of N processes).

``--timeline N`` prints instead one such process's wall-clock timeline (of N, the one of median wall time): each
phase's start and end on each thread, from the process's own start (``/proc/self/stat``), with its thread's CPU:
Python's start-up, the command line's imports (as ``python -m economics`` loads them), the candidates, the stages
(the TTFT passes on the main thread; the plan by the hour and the chosen pools' own plan beside), the proof (its
cuts, then HiGHS), the settings' plans beside it, the output written, every HiGHS run of 10 ms or more, and the
interpreter's end (the child's wall time as the parent sees it, after the last mark).

``--page N`` prints only the Plan page's 8 edits in the page's own order (``ui.planning.Plan`` as ui/plan.py calls
it: the stages' plan drawn, the proof drawn, then the settings' costs drawn), with the settings' plans made beside
the proof (as the page makes them) and after it (as it made them before), alternated N rounds in one process: the
wall to each drawing, "the settings' costs N ms more" (from the proof drawn to the costs drawn), CPU and ratios.
The full run prints these (2 rounds) after the edit's phases.

``--bytecode`` (with ``--fresh``, ``--phases`` or ``--timeline``): each fresh process reads the package's compiled
modules, written once before the clock starts, as an installed package has them (this machine sets
``PYTHONDONTWRITEBYTECODE``, so without it every fresh process compiles the package's modules first). The compiled
modules stay in the tree's ``__pycache__`` folders, and Python reads them from then on, with or without the
option: delete them before measuring without it.

Usage: python bench/plan.py [--fresh 5] [--fresh-only] [--phases N] [--timeline N] [--page N] [--bytecode]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import economics  # noqa: E402
from economics import catalog  # noqa: E402
from economics.studies import planner  # noqa: E402
from economics.studies.planner import build, candidates, hourly, milp, report  # noqa: E402
from economics.studies.planner.model import PlanModel  # noqa: E402
from economics.studies.planner.pools import Problem  # noqa: E402
from ui import links, planning  # noqa: E402

PROFILE = " ".join(f"{v:.4f}" for v in planner.demand_profile("diurnal", 2.0) + np.linspace(0.0, 0.05, 24))
"""24 distinct hours: the diurnal day (peak 2 x average at 14:00) plus a small ramp so no two hours are alike."""


def scenario() -> economics.Scenario:
    return economics.Scenario(
        name="bench", model="llama-3.1-70b", precision="fp8", target_output_tokens_per_s_per_user=30,
        demand_output_tokens_per_day=2e10, accelerator="h100-sxm", existing_accelerators=64, site_power_mw=2.0,
        allow_liquid_retrofit=True, kv_link_gb_per_s=400)


def timed(fn, repeats: int = 3):
    """Best wall-clock time and best CPU time of ``repeats`` runs (each the least disturbed by the machine's other
    work; the CPU time is what compares on a shared machine), and the result. HiGHS's remembered answers are
    forgotten before each run, so every run solves."""
    best, cpu, out = float("inf"), float("inf"), None
    for _ in range(repeats):
        planner.clear_milp_memo()
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        best, cpu = min(best, time.perf_counter() - t), min(cpu, time.process_time() - c)
    return best, cpu, out


PAGE_LINK = {"model": "llama-3.1-70b", "precision": "fp8", "target_output_tokens_per_s_per_user": 30.0,
             "output_tokens_per_s_per_accelerator": None}
"""The Plan page's scenario in bench/app_latency.py: the default scenario with these fields (its link)."""
PAGE_DEMANDS = [(5e9 if i % 2 else 2e10) + 1e8 * i for i in range(1, 9)]
"""The demands bench/app_latency.py types into the Plan page, one edit each."""


def page_example_csv(folder: Path) -> Path:
    """The Plan page's worked example as a plan row (the scenario's fields, then the planner's columns as the page
    sets them), written to ``folder``."""
    scenario = {**economics.default_scenario().model_dump(mode="json"), **links.PLAN_EXAMPLE, "name": "page-example"}
    page = {**links.default_settings(), **links.PLAN_EXAMPLE_SETTINGS}
    settings = {name: page[links.PLAN_PREFIX + name] for name in planner.PLAN_FIELDS}
    row = {k: v for k, v in {**scenario, **settings}.items() if v is not None}
    path = folder / "plan-page-example.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(row))
        writer.writeheader()
        writer.writerow(row)
    return path


def page_plan_args(folder: Path) -> list[str]:
    """The ``plan`` command's arguments for the Plan page's example (written into ``folder``, with its output there):
    the page's row and default accelerators."""
    return ["plan", str(page_example_csv(folder)), "--row", "page-example", "--accelerators",
            ",".join(links.default_settings()[links.PLAN_PREFIX + "accelerators"]), "-o", str(folder / "plan.json")]


BYTECODE = False
"""``--bytecode``: each fresh process reads the package's compiled modules (written once by ``compileall``, outside
the clock, as an installed package has them) even where the environment turns that off (``PYTHONDONTWRITEBYTECODE``,
set on this machine: without them every fresh process compiles the package's modules first), as
bench/app_latency.py's ``--bytecode`` does for the app's server."""


def _python(args: list[str]) -> subprocess.CompletedProcess[str]:
    """One fresh ``python`` process running ``args`` from the repository's root (with :data:`BYTECODE`'s setting)."""
    env = dict(os.environ)
    if BYTECODE:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def _child(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one fresh ``python`` process running ``args`` (its exit code checked)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = _python(args)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0, done.stderr[-2000:]
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def fresh_process(pairs: int) -> None:
    """``python -m economics plan`` on the Plan page's example from a fresh process, minus a fresh process's
    ``import economics``: alternated in pairs, medians of wall and CPU time."""
    with tempfile.TemporaryDirectory() as folder:
        command = ["-m", "economics", *page_plan_args(Path(folder))]
        imports, plans = [], []
        for _ in range(pairs):
            imports.append(_child(["-c", "import economics"]))
            plans.append(_child(command))
    wall = statistics.median(p[0] for p in plans) - statistics.median(i[0] for i in imports)
    cpu = statistics.median(p[1] for p in plans) - statistics.median(i[1] for i in imports)
    print(f"plan on the Plan page's example from a fresh process (median of {pairs} pairs, `python -m economics plan "
          f"... --accelerators ...` minus `python -c \"import economics\"`): {wall:.2f} s wall, {cpu:.2f} s CPU beyond "
          f"the package import (import {statistics.median(i[0] for i in imports):.2f} s wall; the whole command "
          f"{statistics.median(p[0] for p in plans):.2f} s wall, {statistics.median(p[1] for p in plans):.2f} s CPU); "
          f"target (#43) <= 1 s: ratio {wall / 1.0:.2f} (wall), {cpu / 1.0:.2f} (CPU); load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}")


PHASES_CHILD = r"""
import json, sys, threading, time
cpu = time.process_time
start = cpu()
from economics.__main__ import run as main  # the command line as `python -m economics` loads it (its collector off)
spent = {"import": cpu() - start}
import scipy.optimize._highspy._core as core
from economics.studies.planner import candidates, run, solve
own = threading.local()  # each thread's open phases: the settings' costs may run beside the proof
lock = threading.Lock()

def add(key, dt):
    with lock:
        spent[key] = spent.get(key, 0.0) + dt

def opened():
    if not hasattr(own, "phases"):
        own.phases = []
    return own.phases

def timed(fn, phase):
    def call(*args, **kwargs):
        phases = opened()
        phases.append(phase)
        t = time.thread_time()  # this thread's CPU: another thread's work is not this phase's
        try:
            return fn(*args, **kwargs)
        finally:
            phases.pop()
            if not phases:  # the outermost timed call gets the time (a plan without a setting runs the stages)
                add(phase, time.thread_time() - t)
    return call

for home, name, phase in ((candidates, "catalog_candidates", "candidates"), (run, "catalog_candidates", "candidates"),
                          (run, "_stages", "stages"), (run, "_proved", "proof"),
                          (run, "setting_costs", "setting costs"),
                          # outermost only on a thread of its own: the plan by the hour beside the TTFT passes,
                          # the chosen pools' own plan beside the plan by the hour (or its pools' own plan)
                          (solve, "_solve_refined", "the plan by the hour, beside"),
                          (solve, "_own_solve", "the chosen pools' own plan, beside")):
    setattr(home, name, timed(getattr(home, name), phase))

class Highs(core._Highs):  # every HiGHS run (scipy's milp and the proof build theirs from the module's class)
    def run(self):
        t = time.thread_time()
        try:
            return super().run()
        finally:
            phases = opened()
            add("HiGHS in " + (phases[0] if phases else "other"), time.thread_time() - t)

core._Highs = Highs
t, w, own_t = cpu(), time.perf_counter(), time.thread_time()
code = main(sys.argv[1:])
spent["command"], spent["command wall"] = cpu() - t, time.perf_counter() - w
spent["command main thread"] = time.thread_time() - own_t
print(json.dumps(spent))
"""
"""A fresh process's ``plan`` command with its CPU time split (``--phases``): the command's imports, the catalog's
candidates rated, the stages' plan, its proof, what each operations setting costs (each a plan solved again), and
HiGHS's share of each (its runs timed inside them)."""


def fresh_phases(runs: int) -> None:
    """Where a fresh process's ``plan`` on the Plan page's example spends its CPU time: medians of ``runs``
    processes, each phase's own time (a phase inside another counts for the outer one)."""
    found: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        command = page_plan_args(Path(folder))
        for _ in range(runs):
            done = _python(["-c", PHASES_CHILD, *command])
            assert done.returncode == 0, done.stderr[-2000:]
            found.append(json.loads(done.stdout.strip().splitlines()[-1]))
    keys = list(dict.fromkeys(k for f in found for k in f))
    median = {k: statistics.median(f.get(k, 0.0) for f in found) for k in keys}
    whole = median["import"] + median["command"]
    highs = sum(v for k, v in median.items() if k.startswith("HiGHS"))
    print(f"plan on the Plan page's example, a fresh process's CPU time by phase (median of {runs}; load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}): {whole:.2f} s in all, HiGHS {highs:.2f} s of it "
          f"({highs / whole:.0%})")
    phases = [k for k in keys if not k.startswith(("command", "HiGHS in "))]
    for k in phases:
        inner = median.get("HiGHS in " + k)
        print(f"  {k}: {median[k]:.3f} s ({median[k] / whole:.0%})"
              + (f", HiGHS {inner:.3f} s of it" if inner is not None else ""))
    rest = median["command"] - sum(median[k] for k in phases if k != "import")
    print(f"  the rest of the command (the row read, the result's JSON written): {rest:.3f} s; beyond the import "
          f"without HiGHS: {median['command'] - highs:.3f} s; the command's wall time {median['command wall']:.3f} s "
          f"(its CPU {median['command']:.3f} s, {median['command main thread']:.3f} s of it on the main thread: the "
          "settings' costs run beside the proof on a thread of their own)")


TIMELINE_CHILD = r"""
import json, os, sys, threading, time
with open("/proc/self/stat") as f:
    born = int(f.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")  # seconds after boot

def now():
    return time.clock_gettime(time.CLOCK_BOOTTIME) - born

marks = [("MainThread", "Python's start-up", 0.0, now(), time.thread_time())]
t, c = now(), time.thread_time()
from economics.__main__ import run  # the command line as `python -m economics` loads it
marks.append(("MainThread", "imports (the command line)", t, now(), time.thread_time() - c))
import scipy.optimize._highspy._core as core
from economics import cli
from economics.studies.planner import milp, run as plans, solve
lock = threading.Lock()

def timed(home, name, label):
    fn = getattr(home, name)
    def call(*args, **kwargs):
        t, c = now(), time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            with lock:
                marks.append((threading.current_thread().name, label, t, now(), time.thread_time() - c))
    setattr(home, name, call)

for home, name, label in ((plans, "catalog_candidates", "candidates"), (plans, "solve_stages", "stages"),
                          (solve, "_solve_refined", "a plan of the stages (TTFT passes; beside: by the hour)"),
                          (solve, "_own_solve", "a few pools' own plan"), (plans, "_proved", "proof"),
                          (solve, "demand_cuts", "the proof's cuts"), (plans, "settings_plans", "the settings' plans"),
                          (cli, "write_output", "output written")):
    timed(home, name, label)

class Highs(core._Highs):
    def run(self):
        t, c = now(), time.thread_time()
        try:
            return super().run()
        finally:
            if now() - t >= 0.01:
                with lock:
                    marks.append((threading.current_thread().name, "HiGHS", t, now(), time.thread_time() - c))

milp.highs._Highs = Highs
code = run(sys.argv[1:])
print(json.dumps(marks))
sys.exit(code)
"""
"""A fresh process's ``plan`` command with each phase's start and end per thread (``--timeline``)."""


def fresh_timeline(runs: int) -> None:
    """The wall-clock timeline of a fresh process's ``plan`` on the Plan page's example: of ``runs`` processes, the
    one of median wall time, each phase per thread from the process's start, and the interpreter's end after it.
    """
    found: list[tuple[float, list[list]]] = []
    with tempfile.TemporaryDirectory() as folder:
        command = page_plan_args(Path(folder))
        for _ in range(runs):
            t = time.perf_counter()
            done = _python(["-c", TIMELINE_CHILD, *command])
            wall = time.perf_counter() - t
            assert done.returncode == 0, done.stderr[-2000:]
            found.append((wall, json.loads(done.stdout.strip().splitlines()[-1])))
    found.sort(key=lambda f: f[0])
    wall, marks = found[len(found) // 2]
    last = max(m[3] for m in marks)
    print(f"plan on the Plan page's example, a fresh process's timeline (the median wall of {runs}: "
          f"{', '.join(f'{f[0]:.2f}' for f in found)} s; load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}); seconds from the process's start, wall (CPU):")
    for thread, label, start, end, cpu in sorted(marks, key=lambda m: m[2]):
        print(f"  {thread[:16]:16} {start:6.3f} -> {end:6.3f}  {end - start:6.3f} ({cpu:.3f})  {label}")
    print(f"  {'MainThread':16} {last:6.3f} -> {wall:6.3f}  {wall - last:6.3f}          the interpreter's end (as the "
          "parent sees the process end)")


class PhaseClock:
    """CPU time spent in planner functions while it is active (a wrapper per function, in every planner module that
    imported it, removed on exit)."""

    PHASES = {(candidates, "_engine_rates"): "engine rates", (build, "build_model"): "model building",
              (build, "hourly_models"): "model building", (report, "_shadow_prices"): "shadow-price LP",
              (report, "plan_result"): "post-processing",
              (hourly, "covered_hour"): "hourly covering search (exact, economics.domain.covering)",
              (milp, "prove"): "HiGHS, the proof (the whole MILP from the plan, to 1 %)"}
    SOLVER = (milp, "run_milp")

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.hourly: list[tuple[object, object, object, float]] = []  # (model, lb, ub, objective) per hourly MILP
        self.covered: list[tuple[PlanModel, list[float], list[float], float]] = []  # the same per exact hour
        self._saved: list[tuple[object, str, object]] = []
        self._inner: list[float] = []  # time spent in timed calls inside each open timed call (exclusive times)

    def _add(self, phase: str, dt: float) -> None:
        self.seconds[phase] = self.seconds.get(phase, 0.0) + dt
        self.calls[phase] = self.calls.get(phase, 0) + 1

    def _wrap(self, fn, name: str, phase: str | None):
        def timed_call(*args, **kwargs):
            self._inner.append(0.0)
            t = time.process_time()
            out = fn(*args, **kwargs)
            dt = time.process_time() - t
            own = dt - self._inner.pop()
            if self._inner:
                self._inner[-1] += dt
            if phase is None:  # HiGHS
                hourly_milp = kwargs.get("nodes") == milp.HOURLY_NODE_LIMIT
                self._add("HiGHS, hourly MILPs" if hourly_milp else "HiGHS, stage 1 (or whole MILP)", own)
                if hourly_milp and out.x is not None:
                    self.hourly.append((args[0], kwargs["lb"], kwargs["ub"], float(out.fun)))
            else:
                self._add(phase, own)
            if name == "covered_hour" and out is not None:
                self.covered.append((args[0], list(args[1]), list(args[2]), float(np.dot(args[0].c, out))))
            return out

        return timed_call

    def __enter__(self) -> PhaseClock:
        package = planner.__name__
        modules = [mod for key, mod in list(sys.modules.items()) if key == package or key.startswith(package + ".")]
        for (home, name), phase in (*self.PHASES.items(), (self.SOLVER, None)):
            fn = getattr(home, name)
            wrapped = self._wrap(fn, name, phase)
            for mod in modules:  # the defining module and every module that imported the function by name
                if getattr(mod, name, None) is fn:
                    self._saved.append((mod, name, fn))
                    setattr(mod, name, wrapped)
        return self

    def __exit__(self, *exc: object) -> None:
        for mod, name, fn in reversed(self._saved):
            setattr(mod, name, fn)
        self._saved.clear()


def hourly_options(clock: PhaseClock) -> None:
    """The page's hours again: the exact covering search against HiGHS as the planner used it before (the hour's LP
    rounded up, then 50 nodes), and against HiGHS run to a zero gap; times and how many answers differ."""
    hours = clock.covered
    print(f"  hours solved by the exact covering search: {len(hours)}; by HiGHS (other shapes): {len(clock.hourly)}")
    t = time.process_time()
    for m, lb, ub, _ in hours:
        hourly.covered_hour(m, lb, ub)
    search_ms = (time.process_time() - t) * 1000
    for label, nodes, gap in (("the LP rounded up then 50 nodes (the planner before)", milp.HOURLY_NODE_LIMIT,
                               milp.HOURLY_GAP), ("to a zero gap, no node limit", None, 0.0)):
        t, lower, higher = time.process_time(), 0, 0
        for m, lb, ub, fun in hours:
            planner.clear_milp_memo()  # HiGHS on each hour, as the planner ran it before it remembered answers
            if nodes is None:
                res = milp.run_milp(m, lb=lb, ub=ub, gap=gap)
                x = res.x
            else:
                x = hourly.highs_hour(m, lb, ub, {}, np.zeros(0))  # no stage-1 map: the hour's own LP
            other = float(np.dot(m.c, x)) if x is not None else float("inf")
            tol = 1e-9 * max(1.0, abs(fun))
            lower += other < fun - tol
            higher += other > fun + tol
        print(f"  HiGHS on the same {len(hours)} hours, {label}: {(time.process_time() - t) * 1000:.0f} ms CPU "
              f"against {search_ms:.0f} ms for the search; its answer dearer in {higher} hour(s), cheaper in {lower}")


def page_edit() -> None:
    """An edit on the Plan page as bench/app_latency.py makes it (the demand changed) under the page's default
    settings: where the time goes, and a settings edit with the rate tables remembered against re-rated."""
    s0 = economics.Scenario(**{**economics.default_scenario().model_dump(), **PAGE_LINK})
    page = links.default_settings()
    settings, ids = links.plan_settings(page), list(page[links.PLAN_PREFIX + "accelerators"])
    planner.plan(s0, settings, None, ids)  # engine caches warm
    clock = PhaseClock()
    t, c = time.perf_counter(), time.process_time()
    with clock:
        # the page draws the stages' plan first (plan_stages), then proves it (prove_plan: the two make `plan`), then
        # draws what each operations setting costs
        staged = [planner.plan_stages(s0.model_copy(update={"demand_output_tokens_per_day": d}), settings, None, ids)
                  for d in PAGE_DEMANDS]
        drawn = [st.result() for st in staged]
        first_wall, first_cpu = time.perf_counter() - t, time.process_time() - c
        results = [planner.prove_plan(st) for st in staged]
    wall, cpu = (time.perf_counter() - t) / len(PAGE_DEMANDS), (time.process_time() - c) / len(PAGE_DEMANDS)
    first_wall, first_cpu = first_wall / len(PAGE_DEMANDS), first_cpu / len(PAGE_DEMANDS)
    t, c = time.perf_counter(), time.process_time()
    for d, r, st in zip(PAGE_DEMANDS, results, staged, strict=True):  # from the plan's stages, as the page does
        planner.costs_of_settings(r.summary, s0.model_copy(update={"demand_output_tokens_per_day": d}), settings,
                                  None, ids, staged=st.inputs())
    costing = (time.perf_counter() - t) / len(PAGE_DEMANDS)
    costing_cpu = (time.process_time() - c) / len(PAGE_DEMANDS)
    s = s0.model_copy(update={"demand_output_tokens_per_day": PAGE_DEMANDS[0]})
    # the day's hours grouped around the rental block, as the planner groups them when a block applies
    wl = replace(planner.workload(s, settings), block_hours=float(settings.min_rental_hours))
    cands, excluded = planner.catalog_candidates(s, ids)
    hosted, _ = planner.hosting_variants(cands, s)
    pools, _ = planner.build_pools(hosted, s, settings, wl)
    costs = [planner.candidate_costs(k, s) for k in hosted]
    m, levels, _ = build.build_model(Problem(s, settings, wl, hosted, pools, costs), {})
    print(f"Plan page edit (demand, {len(PAGE_DEMANDS)} edits as bench/app_latency.py types them; the page's default "
          f"settings: {settings.demand_profile} day, {len(ids)} accelerators): {wall * 1000:.0f} ms wall, "
          f"{cpu * 1000:.0f} ms CPU per edit; {len(pools)} pools, {len(levels)} hour types, stage 1 {len(m.c)} "
          f"variables ({sum(m.integer)} integer), {len(m.rows)} rows; gap to the bound "
          f"{min(r.summary['mip_gap'] for r in results):.1%}-{max(r.summary['mip_gap'] for r in results):.1%}")
    worst = max(r.summary["mip_gap"] for r in results)
    cheaper = sum(r.summary["cost_usd_per_day"] < d.summary["cost_usd_per_day"]
                  for r, d in zip(results, drawn, strict=True))
    print(f"  the page draws the stages' plan first (plan_stages, gap {min(r.summary['mip_gap'] for r in drawn):.1%}-"
          f"{max(r.summary['mip_gap'] for r in drawn):.1%} to stage 1's bound): {first_wall * 1000:.0f} ms wall, "
          f"{first_cpu * 1000:.0f} ms CPU per edit; the proof after it (prove_plan) {(wall - first_wall) * 1000:.0f} "
          f"ms wall, {(cpu - first_cpu) * 1000:.0f} ms CPU; plans the proof made cheaper: {cheaper}")
    print(f"  target (#43): an edit <= 300 ms to the drawn plan: ratio {first_wall / 0.3:.2f} (wall), "
          f"{first_cpu / 0.3:.2f} (CPU); the plan proven within 1 %: {cpu * 1000:.0f} ms CPU, gap ratio "
          f"{worst / 0.01:.2f}")
    print(f"  pools {min(r.summary['distinct_pools'] for r in results)}-"
          f"{max(r.summary['distinct_pools'] for r in results)} (at most {settings.max_pools}), rentals of at least "
          f"{settings.min_rental_hours:g} h; then what each operations setting costs, made after every proof one "
          f"after the other (the page's order before `planpar`; the page's own order: the next lines): "
          f"{costing * 1000:.0f} ms wall, {costing_cpu * 1000:.0f} ms CPU per edit (ratio to the 300 ms target "
          f"{costing / 0.3:.2f} wall, {costing_cpu / 0.3:.2f} CPU)")
    page_order(2)
    clock.seconds["the rest (candidates, pools, checks)"] = cpu * len(PAGE_DEMANDS) - sum(clock.seconds.values())
    for phase, seconds in sorted(clock.seconds.items(), key=lambda kv: -kv[1]):
        per_edit = seconds / len(PAGE_DEMANDS)
        calls = f" ({clock.calls[phase] / len(PAGE_DEMANDS):.1f} calls)" if phase in clock.calls else ""
        print(f"  {phase}: {per_edit * 1000:.1f} ms CPU per edit{calls}, {per_edit / cpu:.0%}")
    hourly_options(clock)
    edits = [replace(settings, capex_budget_usd=b) for b in (1e9, 2e9, 3e9, 4e9)]

    def settings_edits(remembered: bool) -> tuple[float, float, list[float]]:
        planner.plan(s, settings, None, ids)
        planner.clear_milp_memo()  # each edit's models solved by HiGHS in both runs
        t, c = time.perf_counter(), time.process_time()
        costs = []
        for e in edits:
            if not remembered:
                planner.clear_rates_memo()
            costs.append(planner.plan(s, e, None, ids, costed=False).summary["cost_usd_per_day"])
        return (time.perf_counter() - t) / len(edits), (time.process_time() - c) / len(edits), costs

    before, before_cpu, old_costs = settings_edits(False)
    after, after_cpu, new_costs = settings_edits(True)
    print(f"Plan page settings edit (a capex budget that does not bind, {len(edits)} edits): re-rating the catalog "
          f"every time (as before) {before * 1000:.0f} ms wall, {before_cpu * 1000:.0f} ms CPU; rate tables "
          f"remembered {after * 1000:.0f} ms wall, {after_cpu * 1000:.0f} ms CPU per edit (CPU ratio "
          f"{after_cpu / before_cpu:.2f}); same plans {old_costs == new_costs}")


PAGE_MODES = {"beside": "the settings' plans on a thread beside the proof, as the page makes them",
              "after": "the settings' plans after the proof, one after the other (the page before)"}
"""The two ways :func:`page_order` finishes an edit (``ui.planning.Plan``: held by a session, or not)."""


def page_edit_walls(demand: float, beside: bool) -> tuple[float, float, float, float, str]:
    """One edit of the Plan page in the page's own order, by the page's own object (``ui.planning``, as ui/plan.py
    calls it): the plan planned (the stages, drawn), held by the session (its settings' plans started beside the
    proof; ``beside`` False: not held, as before), proven (drawn), its settings' costs (drawn). Returns the wall from
    the edit to the stages' plan drawn, to the proof drawn and to the costs drawn, the edit's CPU (every thread's),
    and a digest of what the page draws (the plan proven and the costs table)."""
    scenario = {**economics.default_scenario().model_dump(mode="json"), **PAGE_LINK,
                "demand_output_tokens_per_day": demand}
    t, c = time.perf_counter(), time.process_time()
    plan = planning.planned(planning.inputs_of(scenario, links.default_settings()), None)
    drawn = time.perf_counter() - t
    if beside:
        plan.hold()  # what planning.view does for the session (the page's run)
    proven = plan.proven()
    proof = time.perf_counter() - t
    costs = plan.setting_costs()
    done, cpu = time.perf_counter() - t, time.process_time() - c
    digest = hashlib.sha256(json.dumps(proven["summary"], sort_keys=True, default=str).encode()
                            + costs.to_csv().encode()).hexdigest()
    return drawn, proof, done, cpu, digest


def page_order(rounds: int) -> None:
    """The Plan page's 8 demand edits in the page's own order (:func:`page_edit_walls`), the two ways of
    :data:`PAGE_MODES` alternated ``rounds`` times in this process (each round the page's store and HiGHS's memo
    emptied first): wall to the stages' plan drawn, to the proof drawn, and from the proof drawn to the settings'
    costs drawn (#43's "the settings' costs <= 300 ms more"), medians over the edits of every round."""
    print(f"Plan page edits in the page's order (ui.planning.Plan: the stages, the proof, the settings' costs; 8 "
          f"edits x {rounds} rounds, the two ways alternated; wall per edit, medians; load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}):")
    found: dict[str, list[tuple[float, float, float, float, str]]] = {mode: [] for mode in PAGE_MODES}
    page_edit_walls(0.97 * PAGE_DEMANDS[0], True)  # the engine's caches and the modules warm, on another demand
    for r in range(rounds):
        for mode in (list(PAGE_MODES) if r % 2 == 0 else list(PAGE_MODES)[::-1]):
            planning.PLANS.clear()
            planner.clear_milp_memo()
            found[mode] += [page_edit_walls(d, mode == "beside") for d in PAGE_DEMANDS]
    median = {mode: [statistics.median(e[i] for e in edits) for i in range(4)] for mode, edits in found.items()}
    for mode, (drawn, proof, done, cpu) in median.items():
        more = statistics.median(e[2] - e[1] for e in found[mode])
        print(f"  {PAGE_MODES[mode]}: stages' plan drawn {drawn * 1000:.0f} ms, proof drawn {proof * 1000:.0f} ms, "
              f"costs drawn {done * 1000:.0f} ms after the edit: the settings' costs {more * 1000:.0f} ms more "
              f"(target <= 300 ms, ratio {more / 0.3:.2f}); the edit's CPU {cpu * 1000:.0f} ms (every thread)")
    more = {mode: statistics.median(e[2] - e[1] for e in edits) for mode, edits in found.items()}
    same = {e[4] for e in found["beside"]} == {e[4] for e in found["after"]}
    print(f"  beside against after: the settings' costs' wall after the proof {more['beside'] / more['after']:.2f}x, "
          f"the edit to the costs drawn {median['beside'][2] / median['after'][2]:.2f}x, CPU "
          f"{median['beside'][3] / median['after'][3]:.2f}x; the same plans and tables drawn: {same}")


TIERED_OPTIMUM = 7230.0
"""The tiered plan's optimum found by HiGHS on the whole MILP run to proof (25 s; docs/speed.md), USD/day."""


def tiers_and_carbon(s: economics.Scenario, hosted: list, excluded: list, cands: list) -> None:
    """The full catalog's plan with the three rent tiers weighed, a tariff by the hour, a grid and a carbon price,
    against the same plan without (one run, best of 3 each); a carbon cap that binds; the cost-against-emissions
    frontier.
    """
    plain = planner.PlanSettings(demand_profile=PROFILE)
    tiered = replace(plain, rent_tiers="on_demand;reserved;spot")
    priced = s.model_copy(update={"electricity_tariff": "de-lu-day-ahead-2024", "grid_region": "de",
                                  "carbon_usd_per_tonne": 100.0})
    base, base_cpu, r0 = timed(lambda: planner.solve_plan(s, plain, hosted, excluded, costed=False))
    tier_t, tier_cpu, r1 = timed(lambda: planner.solve_plan(priced, tiered, hosted, excluded, costed=False))
    assert r0 is not None and r1 is not None
    tiers = sorted({str(t) for t in r1.plan["tier"].dropna()})
    print(f"plan with rent tiers (3), a tariff by the hour and carbon at 100 USD/t: {len(r1.candidates)} candidates "
          f"in {tier_t:.2f} s wall, {tier_cpu:.2f} s CPU against {base:.2f} s wall, {base_cpu:.2f} s CPU "
          f"without (CPU ratio {tier_cpu / base_cpu:.2f}); "
          f"{r1.summary.get('cost_usd_per_day', 0):,.0f} USD/day with tiers {', '.join(tiers) or 'none rented'}, "
          f"{r1.summary.get('tco2e_per_year', 0):,.0f} tCO2e a year, gap {r1.summary.get('mip_gap', 0):.2%}")
    print(f"  target (#43): the proven optimum, {TIERED_OPTIMUM:,.0f} USD/day (the whole MILP run to proof): ratio "
          f"{r1.summary.get('cost_usd_per_day', 0) / TIERED_OPTIMUM:.4f}")
    cap = 0.9 * float(r1.summary.get("tco2e_per_year") or 0.0)
    t_cap, c_cap, capped = timed(lambda: planner.solve_plan(priced, replace(tiered, carbon_cap_tco2e_per_year=cap),
                                                        hosted, excluded, costed=False), 1)
    assert capped is not None
    print(f"  a cap at 90 % of its emissions ({cap:,.0f} tCO2e a year): {t_cap:.2f} s wall, {c_cap:.2f} s CPU "
          f"(CPU ratio {c_cap / tier_cpu:.1f} x one plan), shadow price "
          f"{capped.summary.get('carbon_cap_usd_per_tonne') or 0:,.1f} USD/t, "
          f"{capped.summary.get('cost_usd_per_day', 0):,.0f} USD/day" if capped.feasible else
          f"  a cap at 90 %: {capped.reason}")
    t_c, c_c, front = timed(lambda: planner.frontier_carbon(priced, planner.PlanSettings(demand_profile="diurnal"),
                                                            candidates=cands), 1)
    assert front is not None
    print(f"frontier cost vs emissions: {len(front)} carbon prices ({int(front['feasible'].sum())} feasible) in "
          f"{t_c:.2f} s wall, {c_c:.2f} s CPU (target <= 10 s, ratio {t_c / 10:.2f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fresh", type=int, default=5, help="pairs of fresh processes for the start-up figure")
    ap.add_argument("--fresh-only", action="store_true", help="print the fresh-process figure only")
    ap.add_argument("--phases", type=int, default=0, metavar="N",
                    help="only the fresh process's CPU time by phase (imports, candidates, stages, proof, settings' "
                         "costs, HiGHS's share), median of N processes")
    ap.add_argument("--timeline", type=int, default=0, metavar="N",
                    help="only a fresh process's wall-clock timeline (each phase per thread), the median of N")
    ap.add_argument("--page", type=int, default=0, metavar="N",
                    help="only the Plan page's edits in the page's order, the two ways alternated N rounds")
    ap.add_argument("--bytecode", action="store_true",
                    help="the fresh processes read the package's compiled modules (written first, outside the clock)")
    args = ap.parse_args()
    if args.bytecode:  # what an installed package has, written before any clock starts
        global BYTECODE
        BYTECODE = True
        subprocess.run([sys.executable, "-m", "compileall", "-q", "economics"], cwd=ROOT, check=True,
                       env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
    if args.page:
        page_order(args.page)
        return
    if args.phases:
        fresh_phases(args.phases)
        return
    if args.timeline:
        fresh_timeline(args.timeline)
        return
    fresh_process(args.fresh)
    if args.fresh_only:
        return
    page_edit()
    s = scenario()
    ids = catalog.accelerator_ids()
    planner.clear_rates_memo()
    t, c = time.perf_counter(), time.process_time()
    cands, excluded = planner.catalog_candidates(s)
    cold, cold_cpu = time.perf_counter() - t, time.process_time() - c
    planner.clear_rates_memo()
    warm, warm_cpu, _ = timed(lambda: planner.catalog_candidates(s), 1)
    remembered, remembered_cpu, _ = timed(lambda: planner.catalog_candidates(s), 1)
    hosted, more = planner.hosting_variants(cands, s)
    print(f"catalog: {len(ids)} accelerators -> {len(cands)} candidates (own/rent/existing), {len(hosted)} with "
          f"cooling variants; {len(excluded) + len(more)} left out; rates from the engine in {cold:.2f} s wall "
          f"({cold_cpu:.2f} s CPU) cold (engine caches built), {warm:.2f} s ({warm_cpu:.2f} s CPU) warm, "
          f"{remembered * 1000:.1f} ms ({remembered_cpu * 1000:.1f} ms CPU) remembered")

    for label, settings in (("24 hours, no TTFT", planner.PlanSettings(demand_profile=PROFILE)),
                            ("24 hours, P99 TTFT 1 s", planner.PlanSettings(demand_profile=PROFILE,
                                                                             ttft_target_s=1.0))):
        wl = planner.workload(s, settings)
        pools, _ = planner.build_pools(hosted, s, settings, wl)
        costs = [planner.candidate_costs(c, s) for c in hosted]
        m, _, weights = build.build_model(Problem(s, settings, wl, hosted, pools, costs), {})
        best, cpu, result = timed(lambda st=settings: planner.solve_plan(s, st, hosted, excluded + more,
                                                                         costed=False))
        assert result is not None
        print(f"plan ({label}): {len(pools)} pools (candidate x role), {len(weights)} distinct hours, "
              f"{len(m.c):,} variables ({sum(m.integer):,} integer), {len(m.rows):,} rows -> solved in {best:.2f} s "
              f"wall, {cpu:.2f} s CPU (best of 3; target <= 1 s to optimality, ratio {best / 1.0:.2f}); feasible "
              f"{result.feasible}, "
              f"{result.summary.get('cost_usd_per_day', 0):,.0f} USD/day, gap to the bound "
              f"{result.summary.get('mip_gap', 0):.2%}, {result.summary.get('distinct_pools')} pools")

    tiers_and_carbon(s, hosted, excluded + more, cands)

    settings = planner.PlanSettings(demand_profile="diurnal")
    t_speed, c_speed, speed = timed(lambda: planner.frontier_speed(s, settings), 1)
    t_site, c_site, site = timed(lambda: planner.frontier_site(s, settings, candidates=cands), 1)
    assert speed is not None and site is not None
    print(f"frontier cost vs per-user speed: {len(speed)} points ({int(speed['feasible'].sum())} feasible) in "
          f"{t_speed:.2f} s wall, {c_speed:.2f} s CPU, incl. re-rating the catalog at every target (target <= 10 s, "
          f"ratio {t_speed / 10:.2f})")
    print(f"frontier cost vs site MW: {len(site)} points ({int(site['feasible'].sum())} feasible) in {t_site:.2f} s "
          f"wall, {c_site:.2f} s CPU, incl. the plan without a site limit that sets the range (target <= 10 s, "
          f"ratio {t_site / 10:.2f})")
    print(f"load average while measuring: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} "
          "cores (wall times stretch when the machine is shared; CPU times do not)")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (max RSS of this process): {peak_mb:,.0f} MB")


if __name__ == "__main__":
    main()
