"""Sweeps (economics.studies.sweep): scenario generation by hand, exact reductions against brute force over the whole
table, and a Dask run on a 2-worker LocalCluster equal to the single-process run for the same seed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from economics.cli import main
from economics.engine.batch import evaluate
from economics.schema.validation import InputError
from economics.studies.sweep import (
    COST,
    MAX_SCENARIOS,
    POWER,
    SPEED,
    Sweep,
    _partition,
    combine,
    front,
    make_sweep,
    max_workers,
    reduce_part,
    run_dask,
    run_local,
    scenarios,
)
from tests import conftest

ROOT = Path(__file__).resolve().parent.parent
BASE = {"name": "chat", "accelerator": "h100-sxm", "model": "llama-3.1-70b", "accelerator_count": 64,
        "demand_output_tokens_per_day": 2e9, "target_output_tokens_per_s_per_user": 30,
        "electricity_usd_per_kwh": 0.08}


def small_sweep(partition_rows: int = 150, samples: int = 40) -> Sweep:
    return make_sweep(BASE, {"target_output_tokens_per_s_per_user": "10:90:5", "pue": "1.1,1.4"},
                      {"electricity_usd_per_kwh": (0.05, 0.15)}, samples, seed=7, partition_rows=partition_rows)


def test_scenario_numbers_map_to_grid_points_and_draws_by_hand() -> None:
    sweep = make_sweep(BASE, {"accelerator_count": "8,16", "pue": "1.1,1.2,1.3"}, {}, 0, partition_rows=4)
    # 2 x 3 grid points, 1 scenario each, partitions of 4: partition 1 holds scenarios 4 and 5
    # scenario 4 -> unravel(4, (2, 3)) = (1, 1): accelerator_count 16, pue 1.2; scenario 5 -> (1, 2): 16, 1.3
    part = scenarios(sweep, 1)
    assert part["scenario"].tolist() == [4, 5]
    assert part["accelerator_count"].tolist() == [16.0, 16.0] and part["pue"].tolist() == [1.2, 1.3]
    assert (sweep.scenarios, sweep.partitions) == (6, 2)


def test_draws_stay_inside_their_range_and_repeat_for_the_same_seed() -> None:
    sweep = small_sweep()
    a, b = scenarios(sweep, 2), scenarios(sweep, 2)
    assert a.equals(b)
    assert a["electricity_usd_per_kwh"].between(0.05, 0.15).all()
    assert not a["electricity_usd_per_kwh"].equals(scenarios(sweep, 3)["electricity_usd_per_kwh"])


def brute_force(sweep: Sweep) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The whole sweep as one table through evaluate(), and its feasible rows."""
    table = pd.concat([scenarios(sweep, i) for i in range(sweep.partitions)], ignore_index=True)
    out = evaluate(table.drop(columns="scenario"))
    ok = out["valid"].to_numpy(dtype=bool) & out["feasible"].fillna(False).to_numpy(dtype=bool)
    flat = pd.DataFrame({"scenario": table["scenario"], COST: out[COST].astype(float),
                         SPEED: out[SPEED].astype(float), POWER: out["facility_power_kw"].astype(float) / 1000})
    return flat, flat[ok]


def dominated(points: np.ndarray, i: int, maximise_y: bool) -> bool:
    """Is point i dominated by another (lower or equal cost and better or equal y, better in one)?"""
    c, y = points[:, 0], (-points[:, 1] if maximise_y else points[:, 1])
    better_eq = (c <= c[i]) & (y <= y[i])
    strictly = (c < c[i]) | (y < y[i])
    return bool((better_eq & strictly).any())


def test_local_run_equals_brute_force_over_the_whole_table() -> None:
    sweep = small_sweep()
    result = run_local(sweep, k=5)
    _, ok = brute_force(sweep)
    assert result.scenarios == 400 and result.feasible == len(ok) > 0  # 5 x 2 grid points x 40 draws
    expect = np.quantile(ok[COST].to_numpy(), [0.05, 0.1, 0.5, 0.9, 0.95])
    got = result.quantiles.set_index("output").loc[COST, ["p05", "p10", "p50", "p90", "p95"]].to_numpy(dtype=float)
    assert got == pytest.approx(expect, rel=0, abs=0)
    cheapest = ok.sort_values([COST, "scenario"]).head(5)["scenario"].tolist()
    assert result.top["scenario"].tolist() == cheapest
    points = ok[[COST, SPEED]].to_numpy()
    on_front = set(result.speed_front["scenario"])
    for i, scenario in enumerate(ok["scenario"]):
        if scenario in on_front:
            assert not dominated(points, i, True)
    assert all(dominated(points, i, True) or s in on_front or
               ((points[:, 0] == points[i, 0]) & (points[:, 1] == points[i, 1])).sum() > 1
               for i, s in enumerate(ok["scenario"]))
    mw = ok[[COST, POWER]].to_numpy()
    assert not any(dominated(mw, int(np.flatnonzero(ok["scenario"].to_numpy() == s)[0]), False)
                   for s in result.power_front["scenario"])


def test_grid_only_result_does_not_depend_on_the_partitioning() -> None:
    a = run_local(small_sweep(partition_rows=1, samples=0), k=3)
    b = run_local(small_sweep(partition_rows=7, samples=0), k=3)
    assert a.quantiles.equals(b.quantiles) and a.top.equals(b.top) and a.speed_front.equals(b.speed_front)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(1, 6)), min_size=1, max_size=25), st.booleans(),
       st.integers(1, 5))
def test_front_of_partition_fronts_is_the_front_of_the_whole(points: list[tuple[int, int]], maximise: bool,
                                                             parts: int) -> None:
    table = pd.DataFrame({"scenario": range(len(points)), COST: [float(p[0]) for p in points],
                          "y": [float(p[1]) for p in points]})
    whole = front(table, "y", maximise)
    cuts = np.array_split(np.arange(len(points)), parts)
    pieces = pd.concat([front(table.iloc[c], "y", maximise) for c in cuts], ignore_index=True)
    assert front(pieces, "y", maximise).equals(whole)
    arr = table[[COST, "y"]].to_numpy()
    kept = set(whole["scenario"])
    for i in range(len(points)):  # on the front exactly when not dominated and the first of its equals
        first_of_equals = min(j for j in range(len(points)) if points[j] == points[i]) == i
        assert (i in kept) == (not dominated(arr, i, maximise) and first_of_equals)


def test_combine_is_independent_of_the_order_of_parts() -> None:
    sweep = small_sweep()
    parts = [reduce_part(_partition(sweep, i), 4) for i in range(sweep.partitions)]
    a, b = combine(parts, 4), combine(parts[::-1], 4)
    assert a.quantiles.equals(b.quantiles) and a.top.equals(b.top) and a.power_front.equals(b.power_front)


def test_bad_sweeps_are_refused_naming_the_field() -> None:
    with pytest.raises(InputError, match="'accelerator' is not a numeric scenario field"):
        make_sweep(BASE, {"accelerator": "h100-sxm"}, {}, 0)
    with pytest.raises(InputError, match="--grid pue: 'x' is not a number"):
        make_sweep(BASE, {"pue": "1.1,x"}, {}, 0)
    with pytest.raises(ValueError, match="pue"):  # 0.5 is below the PUE's bound of 1
        make_sweep(BASE, {"pue": "0.5,1.2"}, {}, 0)
    with pytest.raises(ValueError, match="pue"):  # a value out of bounds in the middle of the list
        make_sweep(BASE, {"pue": "1.2,0.5,1.3"}, {}, 0)
    with pytest.raises(ValueError, match="accelerator_count"):  # 1:10:5 holds 3.25 accelerators
        make_sweep(BASE, {"accelerator_count": "1:10:5"}, {}, 0)
    assert make_sweep(BASE, {"accelerator_count": "1:10:4"}, {}, 0).grid["accelerator_count"] == (1, 4, 7, 10)


def test_a_sweep_too_large_to_combine_is_refused_before_its_values_are_checked() -> None:
    # eight 100,000-value axes: 10^40 scenarios; refused on the size alone (the values are not validated, even the
    # out-of-bounds pue: the size is the first thing said), as is 10^12 and a grid within bounds times samples
    axes = {f: "1:2:100000" for f in ("electricity_usd_per_kwh", "pue", "accelerator_price_usd", "cost_of_capital",
                                     "idle_power_fraction", "headroom", "peak_to_average", "depreciation_years")}
    with pytest.raises(InputError, match=r"10,000,000,000,000,000,000,000,000,000,000,000,000,000 scenarios: more than "
                                         r"59,652,323"):
        make_sweep(BASE, {**axes, "pue": "0.5:2:100000"}, {}, 0)
    assert MAX_SCENARIOS == (4 << 30) // (3 * 8 * 3)  # 4 GB over three copies of three 8-byte outputs
    with pytest.raises(InputError, match="more than 59,652,323"):
        make_sweep(BASE, {"pue": "1.1:1.9:100000"}, {"electricity_usd_per_kwh": (0.05, 0.15)}, 1000)


def test_a_sweep_of_too_many_partitions_is_refused_with_the_least_partition_size() -> None:
    # 20,001 scenarios in partitions of 2 rows: ceil(20,001 / 2) = 10,001 partitions, one more than 10,000; the
    # least partition size that fits is ceil(20,001 / 10,000) = 3 rows
    with pytest.raises(InputError, match=r"20,001 scenarios in partitions of 2 rows are 10,001 partitions, more "
                                         r"than 10,000; raise --partition-rows to at least 3"):
        make_sweep(BASE, {"pue": "1.1:1.9:20001"}, {}, 0, partition_rows=2)
    assert make_sweep(BASE, {"pue": "1.1:1.9:20000"}, {}, 0, partition_rows=2).scenarios == 20_000


def test_sweep_options_are_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = ["sweep", str(ROOT / "docs" / "uncertainty-example.csv"), "--row", "uncertain-h100", "--local"]
    cases = [(["--grid", "pue=1.1,1.2", "--grid", "pue=1.3"], "'pue' is given twice"),
             (["--grid", "pue=1.1", "--workers", str(max_workers() + 1)],
              f"--workers must be >= 1 and <= {max_workers()}"),
             (["--grid", "pue=1.1", "--partition-rows", "10000000"], "--partition-rows must be >= 1 and <= 1,000,000"),
             (["--grid", "pue=0.5"], "--grid pue: pue: must be >= 1"),  # a bad option value: exit 2 (it was 1)
             ]
    for extra, words in cases:
        assert main([*run, *extra]) == 2
        assert words in capsys.readouterr().err


def test_dask_on_a_two_worker_local_cluster_equals_one_process() -> None:
    # small on purpose (CI): 400 scenarios in 3 partitions on 2 worker processes; the workers are spawned, and a
    # spawned child runs the parent's __main__ first: it must be the interpreter's, not a page an earlier AppTest
    # left there (tests/conftest.py restores it after every test)
    assert sys.modules["__main__"] is conftest.INTERPRETER_MAIN
    sweep = small_sweep(partition_rows=150)
    local = run_local(sweep, k=5)
    dask = run_dask(sweep, k=5, workers=2)
    assert (dask.scenarios, dask.feasible) == (local.scenarios, local.feasible)
    assert dask.quantiles.equals(local.quantiles)
    for name in ("top", "speed_front", "power_front"):
        got, want = getattr(dask, name), getattr(local, name)
        assert got[list(want.columns)].equals(want), name


def test_sweep_command(tmp_path: Path) -> None:
    src = tmp_path / "base.csv"
    src.write_text("name,accelerator,model,accelerator_count,demand_output_tokens_per_day,"
                   "target_output_tokens_per_s_per_user,electricity_usd_per_kwh,electricity_usd_per_kwh_low,"
                   "electricity_usd_per_kwh_high\nchat,h100-sxm,llama-3.1-70b,64,2000000000,30,0.08,0.05,0.15\n",
                   encoding="utf-8")
    run = [sys.executable, "-m", "economics", "sweep", str(src), "--row", "chat", "--local"]
    ok = subprocess.run([*run, "--grid", "pue=1.1,1.3", "--samples", "20", "--top", "2"], cwd=ROOT,
                        capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("sweep: 40 scenarios (2 grid points x 20 draws, seed 0)")
    assert "2 cheapest (cost_usd_per_m_tokens):" in ok.stdout and "Pareto front" in ok.stdout
    bad = subprocess.run([*run, "--grid", "colour=1,2"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "'colour' is not a numeric scenario field" in bad.stderr
    assert "Traceback" not in bad.stderr
    none = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert none.returncode == 2 and "nothing to sweep" in none.stderr


def test_unreachable_scheduler_is_exit_2_naming_it(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "economics", "sweep", "docs/uncertainty-example.csv", "--row",
                           "uncertain-h100", "--grid", "pue=1.1,1.3", "--scheduler", "bogus://x"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--scheduler: cannot reach 'bogus://x'" in proc.stderr
    assert "Traceback" not in proc.stderr
