"""Sweeps for studies that outgrow one machine: grids and Monte Carlo samples generated on Dask workers, evaluated
with the ordinary engine (:func:`economics.engine.batch.evaluate`) and reduced to quantiles, top-k and Pareto fronts.

A sweep is the product of a grid (each swept field's values) and, optionally, ``samples`` Monte Carlo draws per
grid point of the fields the base row gives ranges for (``<field>_low``/``<field>_high``, triangular around the
base or uniform). Scenario ``k`` (0-based) is grid point ``k // samples``, draw ``k % samples``. The scenarios are
cut into partitions of ``partition_rows``; partition ``i`` is generated where it is evaluated, its draws seeded by
``(seed, i)``, so the same sweep gives the same scenarios on any cluster, any number of workers, or in one process
(:func:`run_local`), and the reductions below are exact:

- **quantiles** of cost per M tokens, per-user speed and facility MW over the feasible scenarios
  (``numpy.quantile``, linear interpolation, over every value);
- **top-k**: the ``k`` cheapest feasible scenarios (cost per M tokens, ties by scenario number);
- **Pareto fronts**: cost against per-user speed (lower cost, higher speed) and cost against facility MW (both
  lower); a scenario is on a front when no other is at least as good in both and better in one (of equal points
  the lowest-numbered is kept). A front of the whole is the front of the partitions' fronts, so each partition
  sends only its front.

Dask runs on local processes by default (``LocalCluster``) or on any cluster whose scheduler address is given.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from multiprocessing import resource_tracker
from typing import Any

import numpy as np
import pandas as pd

from economics.engine.batch import ScenarioError, as_scenario, evaluate
from economics.schema import user_curves
from economics.schema.scenario import FIELDS
from economics.schema.validation import InputError
from economics.schema.values import FieldKind, ValueProblem, choice_words, number, shown, whole_number_option
from economics.studies.uncertainty import Distribution, _checked, draw, ranges_from_row

COST, SPEED, POWER = "cost_usd_per_m_tokens", "output_tokens_per_s_per_user", "facility_power_mw"
QUANTILE_OUTPUTS = (COST, SPEED, POWER)
QUANTILES = (0.05, 0.1, 0.5, 0.9, 0.95)
PARTITION_ROWS = 250_000
MAX_PARTITION_ROWS = 1_000_000
"""Scenarios one worker evaluates at once at most: a million rows take about 1.6 GB in the engine
(``bench/batch.py``), ten million would not fit a worker of this machine's size."""
CLIENT_BYTES = 4 << 30
"""Memory the client may spend on a sweep's exact quantiles: every scenario's value of each of
:data:`QUANTILE_OUTPUTS` (8 bytes each), held about three times over while they are joined, filtered and sorted."""
MAX_SCENARIOS = CLIENT_BYTES // (3 * 8 * len(QUANTILE_OUTPUTS))
"""Scenarios a sweep may hold (about 59.7 million): checked before any grid value is, so a sweep too large to
combine is refused at once, never after hours on the workers."""
MAX_PARTITIONS = 10_000
"""The most partitions a sweep is cut into (a partition's overhead is about 26 ms: 10,000 are about 4 minutes of it
on one core; 100,000 one-row partitions would have been 45 minutes)."""
SCHEDULER_TIMEOUT_S = 5
"""Seconds a ``--scheduler`` address has to answer before the sweep is refused (exit 2)."""
MAX_GRID_VALUES = 100_000


@dataclass(frozen=True)
class Sweep:
    """What to sweep: the base scenario, grid values per field, Monte Carlo ranges (low, base, high) per field,
    draws per grid point (0 = grid only), seed, distribution, rows per partition.
    """

    base: dict[str, Any]
    grid: dict[str, tuple[float, ...]] = field(default_factory=dict)
    ranges: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    samples: int = 0
    seed: int = 0
    distribution: Distribution = Distribution.TRIANGULAR
    partition_rows: int = PARTITION_ROWS
    curves: tuple[tuple[str, bytes], ...] = ()
    """The curve files the base scenario names (``curves_sha256``), as (name, bytes): a worker in another process
    loads them before it evaluates, so it holds the same curves under the same hash."""

    @property
    def grid_points(self) -> int:
        """Points of the grid: the product of the number of values of each axis (1 without a grid)."""
        return math.prod(len(v) for v in self.grid.values())

    @property
    def per_point(self) -> int:
        """Scenarios per grid point: the draws, or 1 for a grid only."""
        return max(self.samples, 1)

    @property
    def scenarios(self) -> int:
        """Scenarios in the sweep: grid points times scenarios per point."""
        return self.grid_points * self.per_point

    @property
    def partitions(self) -> int:
        """Partitions of at most ``partition_rows`` scenarios that hold the sweep (at least 1).

        >>> Sweep({}, grid={"a": (1.0, 2.0, 3.0), "b": (1.0, 2.0)}, samples=4, partition_rows=5).partitions
        5
        """
        return max(1, -(-self.scenarios // self.partition_rows))


def grid_values(text: str, name: str) -> tuple[float, ...]:
    """A grid axis from text: ``v1,v2,...`` or ``low:high:count`` (``count`` evenly spaced values, ends included).

    >>> grid_values("8,16,32", "accelerator_count"), grid_values("0.05:0.15:3", "electricity_usd_per_kwh")
    ((8.0, 16.0, 32.0), (0.05, 0.1, 0.15))
    """
    try:
        parts = text.split(":") if ":" in text else text.split(",")
        if ":" in text and len(parts) != 3:
            raise ValueProblem(f"'{shown(text)}' is not low:high:count")
        out = [number(p) for p in parts]
    except ValueProblem as exc:
        raise InputError(f"--grid {shown(name)}: {exc}") from None
    got = [x for x in out if isinstance(x, float)]
    if len(got) != len(out):
        raise InputError(f"--grid {shown(name)}: an empty value in '{shown(text)}'")
    if ":" not in text:
        return tuple(got)
    if not got[2].is_integer() or not 1 <= got[2] <= MAX_GRID_VALUES:
        raise InputError(f"--grid {shown(name)}: low:high:count needs a whole count 1..{MAX_GRID_VALUES:,}, got "
                         f"'{shown(parts[2])}'")
    return tuple(float(x) for x in np.linspace(got[0], got[1], int(got[2])))


def _check_axis(base: dict[str, Any], name: str, values: np.ndarray) -> None:
    """Every value of a grid axis within its field's bounds (the field's own message, for the first value that is
    not): the least and the greatest are validated, and for a whole-number field the first that is not whole, so a
    100,000-value axis costs three validations, not 100,000.
    """
    picks = [float(values.min()), float(values.max())]
    if FIELDS[name].kind is FieldKind.INT:
        fractional = np.flatnonzero(values != np.floor(values))
        picks += [float(values[fractional[0]])] if fractional.size else []
    for value in picks:
        try:
            as_scenario({**base, name: value})
        except ScenarioError as exc:  # a bad option value: exit 2, as every option's
            raise InputError(f"--grid {shown(name)}: {exc}") from None


def make_sweep(base: dict[str, Any], grid: dict[str, str], ranges: dict[str, tuple[float, float]], samples: int,
               seed: int = 0, distribution: Distribution = Distribution.TRIANGULAR,
               partition_rows: int = PARTITION_ROWS) -> Sweep:
    """A checked :class:`Sweep`: grid fields numeric, every grid value within its field's bounds, ranges around
    the base value (:class:`InputError` / :class:`ScenarioError` naming the field and value otherwise).
    """
    scenario = as_scenario(base)
    for name in grid:
        if name not in FIELDS or not FIELDS[name].kind.numeric:
            raise InputError(f"--grid: '{shown(name)}' is not a numeric scenario field")
    axes = {name: grid_values(text, name) for name, text in grid.items()}
    size = math.prod(len(v) for v in axes.values()) * max(samples, 1)  # before any value is checked: bounded work
    if size > MAX_SCENARIOS:
        raise InputError(f"{size:,} scenarios: more than {MAX_SCENARIOS:,} (the client holds every scenario's "
                         f"{', '.join(QUANTILE_OUTPUTS)} for exact quantiles); fewer grid values or --samples")
    for name, values in axes.items():
        _check_axis(scenario.model_dump(), name, np.asarray(values))
    checked = _checked(scenario, ranges) if samples and ranges else {}
    named = user_curves.loaded(scenario.curves_sha256) if scenario.curves_sha256 else None
    sweep = Sweep({k: v for k, v in scenario.model_dump().items() if v is not None}, axes, checked, samples, seed,
                  distribution, partition_rows, ((named.name, named.data),) if named else ())
    if sweep.scenarios > MAX_SCENARIOS:
        raise InputError(f"{sweep.scenarios:,} scenarios: more than {MAX_SCENARIOS:,}")
    parts = -(-sweep.scenarios // max(partition_rows, 1))
    if parts > MAX_PARTITIONS:  # each partition costs a task's overhead (about 26 ms): bounded before it starts
        raise InputError(f"{sweep.scenarios:,} scenarios in partitions of {partition_rows:,} rows are {parts:,} "
                         f"partitions, more than {MAX_PARTITIONS:,}; raise --partition-rows to at least "
                         f"{-(-sweep.scenarios // MAX_PARTITIONS):,}")
    return sweep


def scenarios(sweep: Sweep, part: int) -> pd.DataFrame:
    """The scenarios of partition ``part``: a ``scenario`` column (the global number) and one column per field."""
    start = part * sweep.partition_rows
    k = np.arange(start, min(start + sweep.partition_rows, sweep.scenarios), dtype=np.int64)
    frame = pd.DataFrame({"scenario": k})
    for name, value in sweep.base.items():
        frame[name] = value
    if sweep.grid:
        indices = np.unravel_index(k // sweep.per_point, tuple(len(v) for v in sweep.grid.values()))
        for (name, values), idx in zip(sweep.grid.items(), indices, strict=True):
            frame[name] = np.asarray(values)[idx]
    if sweep.ranges:
        seed = int(np.random.SeedSequence([sweep.seed, part]).generate_state(1)[0])
        for name, drawn in draw(sweep.ranges, len(k), seed, sweep.distribution).items():
            frame[name] = drawn
    return frame


def evaluated(frame: pd.DataFrame, swept: Sequence[str]) -> pd.DataFrame:
    """The engine on a partition, kept to what the reductions need: scenario number, the ``swept`` inputs,
    feasibility and the three outputs (facility power in MW).
    """
    result = evaluate(frame.drop(columns="scenario"))
    out = pd.DataFrame({"scenario": frame["scenario"].to_numpy()})
    out["ok"] = result["valid"].to_numpy(dtype=bool) & result["feasible"].fillna(False).to_numpy(dtype=bool)
    out[COST] = result[COST].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    out[SPEED] = result[SPEED].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    out[POWER] = result["facility_power_kw"].astype("Float64").to_numpy(dtype=float, na_value=np.nan) / 1000.0
    for name in swept:
        out[name] = frame[name].to_numpy(dtype=float)
    return out


def front(table: pd.DataFrame, y: str, maximise: bool) -> pd.DataFrame:
    """Rows of ``table`` on the Pareto front of lower ``COST`` and lower (or, ``maximise``, higher) ``y``; of equal
    points the lowest ``scenario`` is kept.

    >>> t = pd.DataFrame({"scenario": [0, 1, 2, 3], COST: [1.0, 2.0, 2.0, 3.0], "s": [10.0, 30.0, 20.0, 25.0]})
    >>> front(t, "s", maximise=True)["scenario"].tolist()
    [0, 1]
    """
    data = table[np.isfinite(table[COST].to_numpy()) & np.isfinite(table[y].to_numpy())]
    sign = -1.0 if maximise else 1.0
    order = np.lexsort((data["scenario"].to_numpy(), sign * data[y].to_numpy(), data[COST].to_numpy()))
    goal = sign * data[y].to_numpy()[order]
    best = np.minimum.accumulate(goal)
    keep = np.concatenate([[True], goal[1:] < best[:-1]]) if goal.size else np.zeros(0, dtype=bool)
    return data.iloc[order[keep]].reset_index(drop=True)


def cheapest(table: pd.DataFrame, k: int) -> pd.DataFrame:
    """The ``k`` rows of lowest cost per M tokens (ties by scenario number)."""
    data = table[np.isfinite(table[COST].to_numpy())]
    order = np.lexsort((data["scenario"].to_numpy(), data[COST].to_numpy()))[:k]
    return data.iloc[order].reset_index(drop=True)


@dataclass
class Part:
    """A partition reduced: counts, its top-k, its two fronts and the values for the quantiles."""

    scenarios: int
    feasible: int
    top: pd.DataFrame
    speed_front: pd.DataFrame
    power_front: pd.DataFrame
    values: dict[str, np.ndarray]


def reduce_part(table: pd.DataFrame, k: int) -> Part:
    ok = table[table["ok"].to_numpy(dtype=bool)]
    return Part(len(table), len(ok), cheapest(ok, k), front(ok, SPEED, True), front(ok, POWER, False),
                {name: ok[name].to_numpy(dtype=float) for name in QUANTILE_OUTPUTS})


@dataclass
class Result:
    """A sweep's answer: counts, quantiles per output, the k cheapest, and the two Pareto fronts."""

    scenarios: int
    feasible: int
    quantiles: pd.DataFrame
    top: pd.DataFrame
    speed_front: pd.DataFrame
    power_front: pd.DataFrame


def combine(parts: Sequence[Part], k: int, quantiles: Sequence[float] = QUANTILES) -> Result:
    """The partitions' reductions as one: exact, whatever the order of ``parts``."""
    def joined(name: str) -> pd.DataFrame:
        return pd.concat([getattr(p, name) for p in parts], ignore_index=True)

    rows = []
    for name in QUANTILE_OUTPUTS:
        values = np.concatenate([p.values[name] for p in parts])
        values = values[np.isfinite(values)]
        qs = np.quantile(values, quantiles) if values.size else np.full(len(quantiles), np.nan)
        rows.append({"output": name, **{f"p{round(q * 100):02d}": float(v) for q, v in zip(quantiles, qs,
                                                                                              strict=True)},
                     "scenarios": int(values.size)})
    return Result(sum(p.scenarios for p in parts), sum(p.feasible for p in parts), pd.DataFrame(rows),
                  cheapest(joined("top"), k), front(joined("speed_front"), SPEED, True),
                  front(joined("power_front"), POWER, False))


def _partition(sweep: Sweep, part: int) -> pd.DataFrame:
    for name, data in sweep.curves:  # in a worker process: the same curves under the same hash
        user_curves.load(data, name)
    return evaluated(scenarios(sweep, part), [*sweep.grid, *(f for f in FIELDS if f in sweep.ranges)])


def run_local(sweep: Sweep, k: int = 10, progress: Callable[[int, int], None] | None = None) -> Result:
    """The sweep in this process, partition by partition: the reference a Dask run must equal."""
    parts = []
    for i in range(sweep.partitions):
        parts.append(reduce_part(_partition(sweep, i), k))
        if progress:
            progress(i + 1, sweep.partitions)
    return combine(parts, k)


def run_dask(sweep: Sweep, k: int = 10, workers: int = 2, scheduler: str | None = None,
             progress: Callable[[int, int], None] | None = None, client: Any = None) -> Result:
    """The sweep on Dask: ``dask.dataframe.from_map`` generates and evaluates each partition on a worker,
    ``map_partitions`` reduces it there, and only the reductions travel back. Runs on ``client`` when given, else
    on the cluster whose scheduler ``scheduler`` names (``tcp://host:8786``), else on a ``LocalCluster`` of
    ``workers`` processes started for this sweep.

    Interrupted (Ctrl-C, SIGTERM: an exception that is not an :class:`Exception`), the local workers are killed
    and reaped before the exception goes on, so none outlives the sweep (:func:`_stop_workers`).
    """
    from distributed import Client  # noqa: PLC0415 - optional heavy dependency, only for sweeps

    if client is not None:
        return _on_client(client, sweep, k, progress)
    before = multiprocessing.active_children()
    cluster = None
    try:
        if not scheduler:
            with _interrupts_held():
                cluster = local_cluster(workers)
        try:
            # a remote scheduler gets SCHEDULER_TIMEOUT_S to answer (distributed's default is 30 s)
            own = Client(scheduler, timeout=SCHEDULER_TIMEOUT_S) if scheduler else Client(cluster)
        except (OSError, ValueError, TypeError) as exc:  # unreachable or malformed address
            raise InputError(f"--scheduler: cannot reach '{shown(str(scheduler))}': {shown(str(exc), 200)}") from None
        with own:
            return _on_client(own, sweep, k, progress)
    except BaseException as exc:
        if not isinstance(exc, Exception):
            _stop_workers(before)
        raise
    finally:
        if cluster is not None:
            cluster.close()


def local_cluster(workers: int) -> Any:
    """A ``LocalCluster`` of ``workers`` single-threaded processes, without Dask's default
    ``MALLOC_TRIM_THRESHOLD_`` for its workers: with it glibc maps every large numpy array afresh and the engine
    runs about 3x slower (measured by ``bench/sweep.py``); set the same on a remote cluster's workers.
    """
    import dask  # noqa: PLC0415 - optional heavy dependency, only for sweeps
    from distributed import LocalCluster  # noqa: PLC0415

    _quiet_resource_tracker()
    with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
                          "distributed.worker.preload": ["economics.studies.sweep_worker"]}):
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                            silence_logs=logging.CRITICAL)  # a worker's failure is the command's error, not a log


def _quiet_resource_tracker() -> None:
    """Start :mod:`multiprocessing`'s resource tracker (the process that unlinks the semaphores a process leaves
    behind) with its standard error on the null device, before the cluster's workers start it with ours.

    Why: an interrupted sweep kills its workers (:func:`_stop_workers`), and when the command has ended the tracker
    unlinks the semaphores they held and warned of each on the command's standard error, after its one line
    ("interrupted"; a CI run of tests/test_interrupts.py on 0589275 caught it). The tracker still unlinks them; only
    its warnings go. A tracker already running (a sweep before, in a Python session) is left as it is.
    """
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)  # the tracker inherits descriptor 2 as it is while it starts
            resource_tracker.ensure_running()
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _stop_workers(before: list[multiprocessing.process.BaseProcess]) -> None:
    """Kill and reap the processes this sweep started (every child process not in ``before``). Why not a graceful
    close: it waits for the partitions the workers are computing, 4 s and more, past the command's grace after a
    signal (:data:`economics.io.interrupts.GRACE_S`), and the process would then end with its workers still running.
    """
    started = [p for p in multiprocessing.active_children() if p not in before]
    for proc in started:
        with contextlib.suppress(OSError, ValueError):
            proc.kill()
    for proc in started:
        with contextlib.suppress(OSError, ValueError, AssertionError):
            proc.join(timeout=5)


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """While a local cluster starts: Ctrl-C and SIGTERM are held and acted on (their handlers run) once it has
    started, so an interrupt never leaves a half-started cluster that can neither run nor close (Dask's own exit
    hook then printed a traceback). The workers ignore SIGINT (:mod:`economics.studies.sweep_worker`): a Ctrl-C at
    the terminal, sent to every process of the job, is this process's to act on. Outside the main thread signals
    cannot be set: the block just runs.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {sig: signal.signal(sig, lambda signum, frame: caught.append(signum))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)  # None: set outside Python
        if caught:
            signal.raise_signal(caught[0])  # its own handler now: KeyboardInterrupt, the CLI's Terminated


def _on_client(client: Any, sweep: Sweep, k: int, progress: Callable[[int, int], None] | None) -> Result:
    import dask  # noqa: PLC0415 - optional heavy dependency, only for sweeps
    import dask.dataframe as dd  # noqa: PLC0415
    from distributed import as_completed  # noqa: PLC0415

    with dask.config.set({"dataframe.convert-string": False}):
        one = Sweep(sweep.base, sweep.grid, sweep.ranges, sweep.samples, sweep.seed, sweep.distribution, 1)
        meta = _partition(one, 0).iloc[:0]
        frames = dd.from_map(partial(_partition, sweep), range(sweep.partitions), meta=meta, enforce_metadata=False)
        reduced = frames.map_partitions(_reduced_frame, k, meta=_reduced_frame(meta, k))
        futures = client.compute(reduced.to_delayed())
        parts = []
        for i, future in enumerate(as_completed(futures), 1):
            parts.append(_part_from_frame(future.result()))
            future.release()
            if progress:
                progress(i, len(futures))
    return combine(parts, k)


PIECES = ("top", "speed", "power", "values", "counts")
"""The pieces of a reduced partition, coded 0..4 in the ``part`` column."""


def _reduced_frame(table: pd.DataFrame, k: int) -> pd.DataFrame:
    """A partition's :class:`Part` as one DataFrame (what ``map_partitions`` carries): the ``part`` column codes
    the piece each row belongs to (:data:`PIECES`).
    """
    part = reduce_part(table, k)
    counts = pd.DataFrame({"scenario": [part.scenarios], "ok": [part.feasible]})
    pieces = [part.top, part.speed_front, part.power_front, pd.DataFrame(part.values), counts]
    return pd.concat([p.assign(part=np.int8(i)).astype({"ok": float} if "ok" in p.columns else {})
                      for i, p in enumerate(pieces)], ignore_index=True)


def _part_from_frame(frame: pd.DataFrame) -> Part:
    code = frame["part"].to_numpy()

    def piece(name: str) -> pd.DataFrame:
        sub = frame[code == PIECES.index(name)].drop(columns="part").reset_index(drop=True)
        return sub.astype({"scenario": np.int64, "ok": bool})

    counts = frame[code == PIECES.index("counts")].iloc[0]
    values = frame[code == PIECES.index("values")]
    return Part(int(counts["scenario"]), int(counts["ok"]), piece("top"), piece("speed"), piece("power"),
                {name: values[name].to_numpy(dtype=float) for name in QUANTILE_OUTPUTS})


def add_sweep_arguments(cmd: argparse.ArgumentParser) -> None:
    """The ``sweep`` command's options (the command reads the row like ``explain`` does)."""
    cmd.add_argument("--grid", action="append", default=[], metavar="FIELD=VALUES",
                     help="a swept field: FIELD=v1,v2,... or FIELD=low:high:count (repeat for a product)")
    cmd.add_argument("--samples", type=whole_number_option("--samples"), default=0,
                     help="Monte Carlo draws per grid point over the row's <field>_low/<field>_high ranges")
    cmd.add_argument("--seed", type=whole_number_option("--seed"), default=0)
    cmd.add_argument("--distribution", choices=choice_words(Distribution), default=Distribution.TRIANGULAR.value)
    cmd.add_argument("--top", type=whole_number_option("--top"), default=10,
                     help="how many of the cheapest scenarios to list")
    cmd.add_argument("--workers", type=whole_number_option("--workers"), default=2,
                     help="local worker processes (default 2)")
    cmd.add_argument("--scheduler", help="a running Dask cluster's scheduler address (tcp://host:8786)")
    cmd.add_argument("--local", action="store_true", help="no Dask: every partition in this process")
    cmd.add_argument("--partition-rows", type=whole_number_option("--partition-rows"), default=PARTITION_ROWS)


def max_workers() -> int:
    """Local worker processes a sweep may start: the machine's cores (each worker runs one partition at a time, and
    more processes than cores only add memory; a remote cluster sets its own size).
    """
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def sweep_from_args(args: argparse.Namespace, row: dict[str, Any]) -> Sweep:
    """The :class:`Sweep` a command line asks for, around the chosen row's cells."""
    for name, value, low, high in (("--samples", args.samples, 0, 100_000_000), ("--top", args.top, 1, 10_000),
                                   ("--workers", args.workers, 1, max_workers()), ("--seed", args.seed, 0, 2**32 - 1),
                                   ("--partition-rows", args.partition_rows, 1, MAX_PARTITION_ROWS)):
        if not low <= value <= high:
            raise InputError(f"{name} must be >= {low:,} and <= {high:,}, got {value:,}"
                             + (" (at most one local worker per core of this machine)" if name == "--workers" else ""))
    grid: dict[str, str] = {}
    for item in args.grid:
        name, sep, values = item.partition("=")
        if not sep or not values.strip():
            raise InputError(f"--grid: '{shown(item)}' is not FIELD=v1,v2 or FIELD=low:high:count")
        if name.strip() in grid:  # the last would silently win
            raise InputError(f"--grid: '{shown(name.strip())}' is given twice; give each field once")
        grid[name.strip()] = values.strip()
    ranges = ranges_from_row(row) if args.samples else {}
    if not grid and not ranges:
        raise InputError("nothing to sweep: give --grid FIELD=VALUES and/or --samples N with <field>_low and "
                         "<field>_high columns in the row")
    base = {k: v for k, v in row.items() if k in FIELDS}
    return make_sweep(base, grid, ranges, args.samples, args.seed, args.distribution, args.partition_rows)


def result_text(result: Result, sweep: Sweep, k: int) -> str:
    """The sweep's answer as CSV sections on text: counts, quantiles, the k cheapest, the two fronts."""
    def table(df: pd.DataFrame) -> str:
        return df.drop(columns=["ok"], errors="ignore").to_csv(index=False, lineterminator="\n",
                                                                 float_format="%.10g")

    return (f"sweep: {result.scenarios:,} scenarios ({sweep.grid_points:,} grid points x {sweep.per_point:,} "
            f"draws, seed {sweep.seed}), {result.feasible:,} feasible\n\nquantiles over the feasible scenarios:\n"
            + table(result.quantiles) + f"\n{k} cheapest ({COST}):\n" + table(result.top)
            + f"\nPareto front, {COST} against {SPEED}:\n" + table(result.speed_front)
            + f"\nPareto front, {COST} against {POWER}:\n" + table(result.power_front))


__all__ = ["Result", "ScenarioError", "Sweep", "combine", "front", "make_sweep", "run_dask", "run_local"]
