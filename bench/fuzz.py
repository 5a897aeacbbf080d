"""Fuzz bench: generated hostile input through every way in, counted by outcome per stage.

Stages (``--stages``, all by default; each seeded on its own, so a stage gives the same cases whichever others
run):

- **values** (``--inputs``): generated (field, text) pairs, numbers in every notation people and programs write
  (and the ones refused: ``1_000``, ``1,000``, Arabic-Indic and full-width digits, ``nan``, ``inf``, ``1e999``,
  hex), booleans, choices and catalog ids in odd case and spacing, free text with control characters, quotes,
  separators, formulas, line breaks and 100,000-character names; batches go through the CSV reader and the
  evaluation, the JSON reader, the DataFrame API (object columns mixing numbers and text), the link decoder and
  ``Scenario``/dict validation (a tenth are ``<field>_low``/``<field>_high`` range cells, table paths only), and the
  CLI in-process (``evaluate`` on each batch's file, ``explain``/``compare``/``retrofit``/``uncertainty`` with
  generated row selectors and option values); plus whole files of random bytes, headers and JSON. Counted:
  tracebacks, parser mismatches (one text read as different values, or valid in one path and invalid in another),
  non-finite outputs of valid rows (a cell, or an output the row's derivation computes that the result leaves
  empty: the result empties one that is not finite), exit codes at odds with the rows' validity.
- **plan**, **sweep** (``bench/fuzz_commands.py``), **outputs** (``bench/fuzz_outputs.py``), **escapes**
  (``bench/fuzz_escapes.py``), **curves** (``bench/fuzz_curves.py``), **links** (``bench/fuzz_links.py``), **api**
  (``bench/fuzz_api.py``) and **signals** (``bench/fuzz_signals.py``), ``--cases`` each: the planner's rows,
  settings and CANDIDATES tables; sweep grids
  and options, never large enough to run a big job; every kind of output path (a folder, a FIFO, symlinks,
  ``/dev/null``, one file twice, a run stopped half-way); escape sequences in every field, header, row selector and
  option of every command; damaged curve files and benchmark files; the app's links (scenario fields, page
  settings, the demand day and its peak) against the value parser and bounds; the HTTP API's encodings (lone
  surrogates, unknown keys and parts, typo'd and repeated parameters, bytes not UTF-8, deep nesting) in-process;
  SIGINT and SIGTERM at start-up (exit code, one line, no partial file or child left; a few dozen cases: each is
  a process start). Their modules say what each generates and checks.

Every command run is checked the same way (``bench/fuzz_common.py``): exit 0, 1 and 2 are counted; exit 3 (an
internal error), another exit code, a traceback, a raw control character where the project's terminal rule says
text must be escaped, a case over 10 s (run once more first: the machine is shared), a hang (120 s), and the
stages' own checks (``mismatch``, ``output replaced``, ``partial left``, ``output incomplete``, ``child left``; the
api stage's ``status 500``, ``status other``, ``bad body``) are failures. The report prints each
stage's counts by outcome and a total, then up to ``--show`` reproducers per stage (the command, its input files'
start, escaped, and what happened). Target: 0 failures. The exit status is 1 when any was found.

Usage: python bench/fuzz.py [--inputs 100000] [--cases N] [--seed 0] [--batch 1000] [--stages values,plan,...]
                            [--quick] [--show 10] [--save DIR]
(``--quick`` leaves out the cases that take seconds each; ``--save DIR`` writes each kept failure's input files and
a ``command.sh`` that runs it again.)
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import random
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the worktree's package, not an installed one
sys.path.append(str(Path(__file__).resolve().parent))  # the stage modules beside this file (last: shadows nothing)

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from fuzz_api import api_stage  # noqa: E402
from fuzz_commands import plan_stage, sweep_stage  # noqa: E402
from fuzz_common import (  # noqa: E402
    BASE_ROW,
    WORDS,
    Stage,
    _empty_is_default,
    command_line,
    computed_rows,
    derivation_gaps,
    generated_text,
    merge,
    normal,
    outcomes,
    reference,
    run_in_process,
)
from fuzz_curves import curve_stage  # noqa: E402
from fuzz_escapes import escape_stage  # noqa: E402
from fuzz_links import link_stage  # noqa: E402
from fuzz_outputs import output_stage  # noqa: E402
from fuzz_signals import signal_stage  # noqa: E402

from economics.engine.batch import ScenarioError, as_scenario, evaluate_with_report  # noqa: E402
from economics.io.scenario_files import read_scenarios_json  # noqa: E402
from economics.io.tables import read_table  # noqa: E402
from economics.schema import validation_hours, values  # noqa: E402
from economics.schema.scenario import FIELDS  # noqa: E402
from economics.schema.validation import InputError, names_nothing_held, range_values, validate  # noqa: E402
from economics.schema.values import FieldKind
from economics.studies.links import decode_query  # noqa: E402

FUZZ_FIELDS = [n for n, s in FIELDS.items() if not s.catalog_field]
RANGE_FUZZ = ["pue_low", "pue_high", "headroom_low", "accelerator_count_high", "electricity_usd_per_kwh_low"]
"""Range columns, fuzzed one end at a time (links and Scenario take no ranges: table paths only)."""
"""Every field but the catalog-filled ones (whose empty value is the catalog's figure, not a parser matter)."""
@dataclass
class Report:
    inputs: int = 0
    cli_runs: int = 0
    file_inputs: int = 0
    tracebacks: list[str] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    nonfinite: list[str] = field(default_factory=list)
    exit_mismatches: list[str] = field(default_factory=list)
    refused_files: int = 0
    leaks: list[str] = field(default_factory=list)
    slow: list[str] = field(default_factory=list)
    cli_exits: Counter[str] = field(default_factory=Counter)

    def crash(self, where: str, exc: BaseException | None = None, detail: str = "") -> None:
        text = "".join(traceback.format_exception(exc)) if exc is not None else detail
        self.tracebacks.append(f"[{where}] {text[-1500:]}")


def table_outcomes(df: pd.DataFrame, items: list[tuple[str, str]], rep: Report, where: str) -> list[Any]:
    try:
        cols, problems = validate(df)
    except Exception as exc:  # noqa: BLE001 - an InputError here is a mismatch with the other paths too
        if not isinstance(exc, InputError):
            rep.crash(where, exc)
        return [("refused", None)] * len(items)
    bad = {(p.row, p.field) for p in problems}
    cols = {**cols, **range_values(df)}
    return [("bad", None) if (i, name) in bad else normal(cols[name][i]) for i, (name, _t) in enumerate(items)]


def rows_of(items: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{**BASE_ROW, name: text, "name": text if name == "name" else f"r{i}"} for i, (name, text) in
            enumerate(items)]


def csv_bytes(rows: list[dict[str, str]]) -> bytes:
    buffer = io.StringIO()
    columns = list(dict.fromkeys(k for r in rows for k in r))
    writer = csv.DictWriter(buffer, fieldnames=columns, restval="")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue().encode()


DERIVED_PER_BATCH = 20
"""Computed rows of a generated batch checked against their derivation (:func:`fuzz_common.derivation_gaps`, about
14 ms a row: the row evaluated alone and explained), spread evenly over the batch; every computed row of a whole
file (a few rows each)."""


def check_outputs(df: pd.DataFrame, result: pd.DataFrame, rep: Report, where: str, most: int = 0) -> None:
    """Non-finite outputs of ``result`` (the evaluation of ``df``) kept in ``rep``: a cell of a valid row that is
    not finite, a negative count, and what the result hides of a computed row's derivation (an output emptied
    because it was not finite, which the cells alone cannot show), on at most ``most`` computed rows (0: all).
    """
    valid = result["valid"].to_numpy(dtype=bool)
    for col in result.columns:
        if pd.api.types.is_numeric_dtype(result[col].dtype) and not pd.api.types.is_bool_dtype(result[col].dtype):
            numbers = result.loc[valid, col].astype("Float64").to_numpy(dtype=float, na_value=0.0)
            if not np.isfinite(numbers).all():
                rep.nonfinite.append(f"[{where}] {col}")
            if col in ("accelerators", "systems", "racks") and (numbers < 0).any():
                rep.nonfinite.append(f"[{where}] {col} negative (overflow)")
    computed = computed_rows(result)
    for row in computed[::max(1, math.ceil(len(computed) / most))] if most else computed:
        rep.nonfinite += [f"[{where}] row {row + 1}: {gap}" for gap in derivation_gaps(df, int(row), result.iloc[row])]


def run_cli(argv: list[str], rep: Report, allowed: set[int]) -> int:
    """One in-process CLI run with the checks every stage makes (``bench/fuzz_common.py``), kept in ``rep``."""
    rep.cli_runs += 1
    run = run_in_process(argv)
    found = outcomes(run, allowed)
    rep.cli_exits[found[0]] += 1
    where = command_line(argv)
    if run.code == 3 or "traceback" in found or "hang" in found:
        rep.crash(where, detail=run.raised or run.err or "stopped after 120 s")
    elif "mismatch" in found:
        rep.exit_mismatches.append(f"{where} -> {run.code}, expected {sorted(allowed)}: {run.err[:300]!r}")
    if "escape leak" in found:
        rep.leaks.append(where)
    if "slow >10 s" in found:
        rep.slow.append(f"{where}: {run.seconds:.1f} s")
    return -1 if run.code is None else run.code


def cli_batch(path: Path, tmp: Path, n: int, all_valid: bool, rng: random.Random, rep: Report) -> None:
    run_cli(["evaluate", str(path), "-o", str(tmp / "out.csv"), "--errors", str(tmp / "err.csv")], rep,
            {0} if all_valid else {1})
    hostile = ["-5", "0", "abc", "1e3", "99999999999", "", " 7", "\u0663", "-1", "1_000"]
    for _ in range(2):
        command = rng.choice(["explain", "compare", "retrofit", "uncertainty"])
        row = rng.choice([str(rng.randint(1, n)), str(rng.randint(1, n)), "0", str(n + 1), "r1", "nobody",
                          rng.choice(WORDS[:30])])
        argv = [command, str(path), "--row", row]
        if command == "uncertainty":
            argv += ["--samples", rng.choice([*hostile, "50", "50"]), "--seed", rng.choice([*hostile, "1", "2"])]
            argv += rng.choice([[], ["--output-field", rng.choice(["bogus", "name", "cost_usd_per_day", "valid"])]])
        if command in ("compare", "retrofit"):
            argv += ["-o", rng.choice([str(tmp / "x.csv"), str(tmp / "missing" / "x.csv")])]
        if command == "compare":
            argv += ["--accelerators", rng.choice(["h100-sxm,b200", "bogus", "", "H100-SXM"])]
        run_cli(argv, rep, {0, 1, 2})


def fuzz_batch(items: list[tuple[str, str]], rng: random.Random, rep: Report, tmp: Path) -> None:
    rep.inputs += len(items)
    expected = [reference(n, t) for n, t in items]
    in_file = [("\x00" not in t) for _n, t in items]  # NUL makes a file binary: refused as a whole, by design
    rows = rows_of(items)
    file_rows = [r if ok else {**r, items[i][0]: BASE_ROW.get(items[i][0], "")} for i, (r, ok) in
                 enumerate(zip(rows, in_file, strict=True))]
    outcomes: dict[str, list[Any]] = {}
    data = csv_bytes(file_rows)
    try:
        df = read_table(data, fmt="csv")
        outcomes["csv"] = table_outcomes(df, items, rep, "csv")
        result, _report = evaluate_with_report(df)
        check_outputs(df, result, rep, "csv evaluate", DERIVED_PER_BATCH)
        path = tmp / "batch.csv"
        path.write_bytes(data)
        cli_batch(path, tmp, len(items), bool(result["valid"].all()), rng, rep)
    except InputError as exc:
        rep.mismatches.append(f"[csv] batch refused: {exc}")
    except Exception as exc:  # noqa: BLE001
        rep.crash("csv", exc)
    try:
        outcomes["json"] = table_outcomes(read_scenarios_json(json.dumps(rows)), items, rep, "json")
    except Exception as exc:  # noqa: BLE001
        rep.crash("json", exc)
    # object columns mixing Python numbers (the other rows' cells) and the generated text: parsed cell by cell
    columns = list(dict.fromkeys(k for r in rows for k in r))
    mixed = {k: pd.Series([float(r[k]) if k != items[i][0] and _is_plain_number(r.get(k, "")) else r.get(k, "")
                           for i, r in enumerate(rows)], dtype=object) for k in columns}
    outcomes["dataframe"] = table_outcomes(pd.DataFrame(mixed), items, rep, "dataframe")
    outcomes["link"], outcomes["dict"] = [], []
    for name, text in items:
        outcomes["link"].append(_link(name, text, rep) if name in FIELDS else None)
        outcomes["dict"].append(_dict(name, text, rep) if name in FIELDS else None)
    for i, (name, text) in enumerate(items):
        for path_name, got in outcomes.items():
            if (path_name == "csv" and not in_file[i]) or got[i] is None:
                continue
            got_i = got[i] if path_name not in ("link", "dict") else _empty_is_default(name, got[i])
            # a link's value and a Scenario's field are checked alone (their combinations when evaluated or by
            # decode_checked); a table's cell on its row
            want = expected[i] if path_name not in ("link", "dict") else reference(name, text, on_a_request_row=False)
            if got_i != want:
                rep.mismatches.append(f"{name}={text[:60]!r}: {path_name} {got_i} vs parser {want}")


def _is_plain_number(text: str) -> bool:
    return bool(values.NUMBER.fullmatch(text)) and math.isfinite(float(text))


def _link(name: str, text: str, rep: Report) -> tuple[str, Any]:
    try:
        found, warnings = decode_query({name: text})
    except Exception as exc:  # noqa: BLE001
        rep.crash("link", exc)
        return ("crash", None)
    if name in found:
        return normal(found[name])
    if not any(w.startswith(name) for w in warnings):
        rep.mismatches.append(f"{name}={text[:60]!r}: link dropped the value without naming it: {warnings}")
    return ("bad", None)


def _dict(name: str, text: str, rep: Report) -> tuple[str, Any]:
    try:
        value = getattr(as_scenario({name: text}), name)
    except ScenarioError:
        return ("bad", None)
    except Exception as exc:  # noqa: BLE001
        rep.crash("dict", exc)
        return ("crash", None)
    if value is not None and names_nothing_held(name, value):
        return ("bad", None)
    if value is not None and name in validation_hours.HOURLY_FIELDS:  # checked when evaluated, as ids are
        value, problem = validation_hours.value_problem(name, str(value))
        if problem is not None:
            return ("bad", None)
    return normal(value)


NUMERIC = [n for n, s in FIELDS.items() if s.kind.numeric and not n.startswith("decode_")]


def extreme_row(rng: random.Random) -> dict[str, str]:
    """A row with a few numeric fields at the edge of what they accept (1e-6 tokens/s, 1e18 tokens/day, ...)."""
    row = {"accelerator_count": "", "output_tokens_per_s_per_accelerator": "1000"}
    for name in rng.sample(NUMERIC, 4):
        spec = FIELDS[name]
        low = spec.ge if spec.ge is not None else (spec.gt * 1.000001 + 1e-6 if spec.gt is not None else 0.0)
        high = spec.le if spec.le is not None else (spec.lt * 0.999999 if spec.lt is not None else 1e6)
        x = rng.choice([low, high, low, high, rng.uniform(low, high)])
        row[name] = repr(float(round(x) if spec.kind is FieldKind.INT else x))
    row.setdefault("demand_output_tokens_per_day", "1e9")
    return row


def fuzz_files(count: int, rng: random.Random, rep: Report) -> None:
    """Whole files: random bytes, random headers (known, unknown, range and duplicate columns), random JSON."""
    columns = [*FUZZ_FIELDS[:20], "pue_low", "pue_high", "bogus", "", "name"]
    for _ in range(count):
        rep.file_inputs += 1
        kind = rng.random()
        if kind < 0.3:
            data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 200)))
        elif kind < 0.5:  # valid extremes: numeric fields at or next to their bounds
            data = csv_bytes([extreme_row(rng) for _ in range(rng.randint(1, 4))])
        elif kind < 0.8:
            header = [rng.choice(columns) for _ in range(rng.randint(1, 6))]
            sep = rng.choice([",", ";", "\t"])
            lines = [sep.join(header)] + [sep.join(generated_text(rng).replace("\n", " ").replace("\r", " ")
                                                   for _ in header) for _ in range(rng.randint(0, 4))]
            data = "\n".join(lines).encode("utf-8", "surrogatepass")
        else:
            data = json.dumps([{rng.choice(columns): rng.choice([generated_text(rng), 1, 0.5, None, True, [1], {}])
                                for _ in range(3)} for _ in range(rng.randint(0, 3))]).encode()
        try:
            df = read_table(data)
            result, _ = evaluate_with_report(df)
            check_outputs(df, result, rep, "file")
        except InputError as exc:
            rep.refused_files += 1
            if not str(exc):
                rep.mismatches.append("[file] InputError without a message")
        except Exception as exc:  # noqa: BLE001
            rep.crash("file", exc)


def run(inputs: int = 100_000, seed: int = 0, batch: int = 1000) -> Report:
    rng = random.Random(seed)
    rep = Report()
    file_share = max(1, inputs // 100)
    with tempfile.TemporaryDirectory() as tmp:
        while rep.inputs < inputs - file_share:
            n = min(batch, inputs - file_share - rep.inputs)
            items = [(rng.choice(RANGE_FUZZ if rng.random() < 0.1 else FUZZ_FIELDS), generated_text(rng))
                     for _ in range(n)]
            fuzz_batch(items, rng, rep, Path(tmp))
        fuzz_files(file_share, rng, rep)
    return rep


def values_stage(inputs: int, seed: int, batch: int) -> Stage:
    """The values stage as a :class:`Stage`: its inputs, CLI exit codes and failures counted by outcome."""
    start = time.perf_counter()
    rep = run(inputs, seed, batch)
    stage = Stage("values", cases=rep.inputs + rep.file_inputs, seconds=time.perf_counter() - start)
    stage.counts.update({"values": rep.inputs, "whole files": rep.file_inputs, "files refused": rep.refused_files,
                         **{f"cli {k}": n for k, n in rep.cli_exits.items()}})
    for outcome, found in (("traceback", rep.tracebacks), ("mismatch", rep.mismatches + rep.exit_mismatches),
                           ("non-finite", rep.nonfinite), ("escape leak", rep.leaks), ("slow >10 s", rep.slow)):
        stage.counts[outcome] += len(found)
        for text in found:
            stage.keep(outcome, [], {}, text)
    return stage


STAGES: dict[str, Callable[..., Stage]] = {
    "plan": plan_stage, "sweep": sweep_stage, "outputs": output_stage, "escapes": escape_stage, "curves": curve_stage,
    "links": link_stage, "api": api_stage, "signals": signal_stage}
"""The command stages, each ``(cases, seed, folder, quick=False) -> Stage`` (``quick`` leaves out the cases that
take seconds each: Dask clusters, million-row files, the catalog's frontiers); ``values`` is
:func:`values_stage`."""
STAGE_NAMES = ["values", *STAGES]


def run_stages(names: list[str], inputs: int, cases: int, seed: int = 0, batch: int = 1000,
               quick: bool = False) -> list[Stage]:
    """The stages ``names`` in order, each in a temporary folder of its own. The engine's overflow warnings on
    extreme rows are silenced while they run (outputs are checked, not warnings), and restored after: a test
    session running a slice goes on with numpy's and Python's warnings as they were."""
    done = []
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name in names:
            if name == "values":
                done.append(values_stage(inputs, seed, batch))
                continue
            start = time.perf_counter()
            with tempfile.TemporaryDirectory() as tmp:
                stage = STAGES[name](cases, seed, Path(tmp), quick=quick)
            stage.seconds = time.perf_counter() - start
            done.append(stage)
    return done


def report_lines(stages: list[Stage], show: int) -> list[str]:
    """Each stage's counts, the total, then up to ``show`` reproducers per stage."""
    lines = [line for s in stages for line in s.lines()]
    lines += merge(stages).lines()
    for s in stages:
        for failure in s.failures[:show]:
            lines.append(failure.text(s.name))
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=100_000, help="values for the values stage (default 100,000)")
    ap.add_argument("--cases", type=int, default=None, help="cases per command stage (default: inputs / 40, at "
                    "least 40)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--stages", default=",".join(STAGE_NAMES), help=f"comma-separated, of {', '.join(STAGE_NAMES)}")
    ap.add_argument("--show", type=int, default=10, help="reproducers printed per stage")
    ap.add_argument("--quick", action="store_true", help="leave out the cases that take seconds each")
    ap.add_argument("--save", metavar="DIR", help="write each kept failure's files and command.sh under DIR")
    args = ap.parse_args()
    names = [n.strip() for n in args.stages.split(",") if n.strip()]
    unknown = [n for n in names if n not in STAGE_NAMES]
    if unknown:
        ap.error(f"unknown stage {unknown[0]!r}; stages: {', '.join(STAGE_NAMES)}")
    cases = args.cases if args.cases is not None else max(40, args.inputs // 40)
    start, load = time.perf_counter(), os.getloadavg()[0]
    stages = run_stages(names, args.inputs, cases, args.seed, args.batch, args.quick)
    print(f"fuzz: seed {args.seed}, {time.perf_counter() - start:.0f} s, load average {load:.1f} at the start "
          f"({os.cpu_count()} cores)")
    print("\n".join(report_lines(stages, args.show)))
    if args.save:
        for s in stages:
            for n, failure in enumerate(s.failures):
                if failure.argv:
                    failure.save(Path(args.save) / f"{s.name}-{n:03d}")
    sys.exit(1 if any(s.failed() for s in stages) else 0)


if __name__ == "__main__":
    main()
