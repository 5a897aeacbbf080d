"""The fuzz bench's ``plan`` and ``sweep`` stages (a module of ``bench/fuzz.py``; running it on its own does
nothing).

**plan**: a plan row (the worked rows of docs/plan-example.csv, or a catalog row with a model) with one to three of
the planner's fields set to a hostile value (demand fields, ``ttft_percentile``, the per-user speed target,
``site_power_mw``, ``demand_profile``, the existing fleet, the planner settings ...), and most of the time a
CANDIDATES table built from docs/plan-candidates.csv and damaged (cells with escapes, ``#g``, ``2_5000``,
Arabic-Indic or full-width digits, negative or huge numbers; duplicate rows, missing, unknown or repeated columns),
each file written as CSV, gzip CSV, JSON or Parquet; the ``--row`` selector, ``--accelerators``, ``--frontier`` and
``--format`` drawn too. Fixed edge cases run first (demand 1e308, 1e9 requests/s, ``ttft_percentile``
0.999999999, a candidate at 1e12 tokens/s per accelerator, ...), some with the exit code they must give.

**sweep**: ``--grid`` specifications (counts of 0, -1, 100,001 or text, values out of the field's bounds such as
``pue=0.5``, unknown, non-numeric and repeated fields, malformed ``low:high``), ``--samples``, ``--workers``,
``--partition-rows``, ``--top`` and ``--seed`` values, around docs/example.csv or docs/uncertainty-example.csv
(which carries ranges). A generated sweep never runs a large job: before a case runs, its size is worked out with
the project's own axis parser (:func:`economics.studies.sweep.grid_values`) and a sweep that would be accepted
with more than :data:`SAFE_SCENARIOS` scenarios or :data:`SAFE_PARTITIONS` partitions is cut down (counted
``capped``); refused sizes (more than ``MAX_SCENARIOS``) are left as they are, since they must be refused before any
work. Most cases run with ``--local`` in-process; a few run on Dask in a process of their own with a timeout.
Numeric options of ``sweep`` that the shared value parser would refuse (``1_000``, ``٣``) and that the command
accepts count as a ``mismatch``: ``uncertainty --samples`` refuses them, as every file does.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

from fuzz_common import (
    ROOT,
    Run,
    Stage,
    escaped_text,
    generated_text,
    parquet_bytes,
    run_again_if_slow,
    run_in_process,
    run_subprocess,
    stage_rng,
)

from economics.schema.scenario import FIELDS
from economics.schema.validation import InputError
from economics.schema.values import FieldKind
from economics.studies import sweep
from economics.studies.planner.inputs import PLAN_FIELDS

DOCS = ROOT / "docs"

Table = tuple[list[str], list[list[str]]]
"""A table as written: its header (repeats allowed) and its rows of text cells."""


def read_docs_table(name: str) -> Table:
    """A docs CSV (comment lines dropped) as a :data:`Table`."""
    lines = [ln for ln in (DOCS / name).read_text(encoding="utf-8").splitlines() if ln and not ln.startswith("#")]
    header, *rows = list(csv.reader(lines))
    return header, rows


def table_bytes(table: Table, fmt: str) -> bytes:
    """The table as CSV, gzip CSV, JSON records or Parquet (text columns); a repeated column keeps its last cell in
    JSON and Parquet, whose records cannot repeat a key.
    """
    header, rows = table
    if fmt in ("csv", "gzip"):
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\r\n")  # quotes a cell holding a CR (else a line end)
        writer.writerow(header)
        writer.writerows(rows)
        data = buffer.getvalue().encode("utf-8", "surrogatepass")
        return gzip.compress(data) if fmt == "gzip" else data
    records = [dict(zip(header, r, strict=False)) for r in rows]
    if fmt == "json":
        return json.dumps(records).encode()
    return parquet_bytes(records)


@dataclass
class Case:
    """One generated or fixed command: its arguments (``{name}`` stands for a file of :attr:`files`), its files,
    the exit codes it may give, and how it runs.
    """

    argv: list[str]
    files: dict[str, bytes] = field(default_factory=dict)
    allowed: tuple[int, ...] = (0, 1, 2)
    terminal: bool = False
    subprocess: bool = False
    timeout: float = 120.0
    candidates: tuple[str, Table, str] | None = None
    """For a plan: the CANDIDATES file's name, its table and format (the infeasibility checks drop its rows)."""


def run_case(stage: Stage, case: Case, tmp: Path, extra: list[tuple[str, str]] | None = None,
             again_if_slow: bool = True) -> tuple[list[str], Run]:
    """Write the case's files, run it, and count its outcomes in ``stage``; the outcomes and the run.

    A run past :data:`fuzz_common.SLOW_S` is run once more and the second decides (``again_if_slow``, the bench's
    count of slow cases); a caller that counts no slowness (tests/test_fuzz_slice.py) runs each case once and every
    outcome of that run is counted.
    """
    paths = {}
    for name, data in case.files.items():
        (tmp / name).write_bytes(data)
        paths[name] = str(tmp / name)
    argv = [paths.get(a[1:-1], a) if a.startswith("{") and a.endswith("}") else a for a in case.argv]

    def once() -> Run:
        return (run_subprocess(argv, case.timeout) if case.subprocess else
                run_in_process(argv, terminal=case.terminal, timeout=case.timeout))

    run, again = run_again_if_slow(once(), once) if again_if_slow else (once(), [])
    found = stage.record(run, case.allowed, dict(case.files), [*(extra or []), *again, *nonfinite(argv, run.out)])
    for path in paths.values():
        Path(path).unlink(missing_ok=True)
    return found, run


NON_FINITE = frozenset({"inf", "-inf", "+inf", "nan", "-nan", "infinity", "-infinity"})


def nonfinite(argv: list[str], out: str) -> list[tuple[str, str]]:
    """A ``non-finite`` finding for a sweep's report or a plan's CSV holding an infinity or NaN as a cell (an
    empty cell is how the project writes a missing number; none of the names these stages generate is such a word).
    """
    if not argv or argv[0] not in ("sweep", "plan") or (argv[0] == "plan" and "csv" not in argv):
        return []
    cells = {c.strip().lower() for line in out.splitlines() for c in line.split(",")}
    bad = sorted(cells & NON_FINITE)
    return [("non-finite", f"{', '.join(bad)} in the output")] if bad else []


# --- plan ---------------------------------------------------------------------------------------------------------

PLAN_SCENARIO_FIELDS = [
    "demand_output_tokens_per_day", "demand_input_tokens_per_day", "demand_requests_per_s", "peak_to_average",
    "headroom", "target_output_tokens_per_s_per_user", "site_power_mw", "existing_accelerators", "accelerator",
    "existing_book_value_usd", "input_tokens_per_request", "output_tokens_per_request", "prefix_cache_hit_rate",
    "pue", "rack_power_kw", "kv_link_gb_per_s", "horizon_years", "demand_growth_per_year", "cost_of_capital",
    "facility_cooling", "allow_liquid_retrofit", "liquid_retrofit_usd_per_mw", "model", "precision", "name",
    "electricity_usd_per_kwh", "depreciation_years", "rack_units_per_rack"]
PLAN_FUZZ = [f for f in PLAN_SCENARIO_FIELDS if f in FIELDS] + list(PLAN_FIELDS)
"""The row's fields a plan case damages: the scenario fields the planner reads and its own settings."""
PLAN_VALUES = ["1e308", "1e18", "1e9", "1e-9", "0", "-1", "0.999999999", "0.5", "1", "1e-12", "24", "3600",
               "monthly", "diurnal", "flat", "peak", " Diurnal ", " ".join(["1"] * 24), " ".join(["1e308"] * 24),
               " ".join(["0"] * 24), " ".join(["1"] * 23), ";".join(["2"] * 24), " ".join(["1", "-1"] * 12),
               "2_5000", "\u0662\u0665", "\uff12\uff15", "nan", "inf", "", "npv", "cost_per_day", "true", "false",
               "100", "10000", "1e13", "10000000", "h100-sxm", "llama-3.1-70b", "fp8", "liquid"]
CANDIDATE_NUMBERS = ["2_5000", "\u0662\u0665\u0660\u0660\u0660", "\uff12\uff15\uff10\uff10\uff10", "-1", "0",
                     "1e12", "1e13", "1e308", "1e-308", "nan", "inf", "", "0x10", "1,5", " 8 ", "8.5", "1e-9", "1e-15",
                     "1e-20", "1e-100", "1e-6"]
CANDIDATE_TEXT = {
    "name": ["#g", "2_5000", "\u0662\u0665", "\uff12\uff15", "", " ", "gpu-own", "x" * 300, "=1+1", "a,b", 'a"b',
             "a\nb", "\x1b]0;title\x07", "#"],
    "ownership": ["own", "rent", "existing", "Own", "bogus", "", "\x1b[31mown"],
    "roles": ["aggregated", "prefill;decode", "decode", "bogus", ";", "", "prefill;;decode"],
    "system_form": ["server", "rack", "wafer", "Rack", "bogus", ""],
    "accelerator_cooling": ["air", "liquid", "air_or_liquid", "water", ""],
    "accelerator": ["h100-sxm", "H100-SXM", "bogus", "", "b200"],
    "family": ["nvidia", "", "bogus", "\u202efamily"],
}
EXTRA_CANDIDATE_COLUMNS = ["max_accelerators", "site_power_mw", "model", "bogus", "name", "accelerator", "roles",
                           "family", "accelerators_per_replica", "depreciation_years", "precision",
                           "rent_includes_energy", "Name", "\x1b[31mcol", ""]
CATALOG_ROW = {"name": "catalog-plan", "model": "llama-3.1-8b", "precision": "bf16",
               "target_output_tokens_per_s_per_user": "20", "demand_output_tokens_per_day": "1e9"}
"""A row the catalog can plan for (its rates estimated by the engine: a slower case, so a tenth of them)."""


def edge_value(rng: random.Random, name: str) -> str | None:
    """A value the field accepts, at or next to one of its bounds (None for a field without numeric bounds): the
    inputs that reach the solver with numbers it may not expect.
    """
    spec = FIELDS.get(name) or PLAN_FIELDS.get(name)
    if spec is None or not spec.kind.numeric:
        return None
    low = spec.ge if spec.ge is not None else (spec.gt * (1 + 1e-9) + 1e-12 if spec.gt is not None else 0.0)
    high = spec.le if spec.le is not None else (spec.lt * (1 - 1e-9) if spec.lt is not None else 1e6)
    x = rng.choice([low, high, low, high, low + (high - low) * rng.random() ** 8, rng.uniform(low, high)])
    return repr(float(round(x))) if spec.kind is FieldKind.INT else repr(x)


def plan_value(rng: random.Random, name: str, base: str) -> str:
    """A value for plan field ``name``: an accepted edge value, a planner edge value, the base value with escapes,
    or generated text.
    """
    pick = rng.random()
    edge = edge_value(rng, name)
    if pick < 0.3 and edge is not None:
        return edge
    if pick < 0.65:
        return rng.choice(PLAN_VALUES)
    if pick < 0.75:
        return escaped_text(rng, base)
    return generated_text(rng)


def damaged_row(rng: random.Random, row: dict[str, str]) -> dict[str, str]:
    """``row`` with up to three fields set to hostile values (a demand field, sometimes the existing fleet); a fifth
    of the rows are left whole, so the candidates' damage and the solver are reached.
    """
    out = {**row, "name": "fuzz-plan"}  # a name of its own: found by name unless the name itself is damaged
    for name in rng.sample(PLAN_FUZZ, rng.choice([0, 1, 1, 2, 3])):
        out[name] = plan_value(rng, name, out.get(name, ""))
    if rng.random() < 0.15:  # an existing fleet of a catalog accelerator
        out["existing_accelerators"] = rng.choice(["8", "64", "1", "10000000", "0", "-8", "1e12", "8.5"])
        out.setdefault("accelerator", "h100-sxm")
    return out


def damaged_candidates(rng: random.Random) -> Table:
    """docs/plan-candidates.csv with a few cells, rows or columns damaged."""
    header, rows = read_docs_table("plan-candidates.csv")
    header, rows = list(header), [list(r) for r in rows]
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        pick = rng.random()
        if pick < 0.45:  # one cell
            col, row = rng.randrange(len(header)), rng.choice(rows) if rows else None
            if row is not None:
                options = CANDIDATE_TEXT.get(header[col], CANDIDATE_NUMBERS)
                row[col] = rng.choice(options) if rng.random() < 0.7 else escaped_text(rng, row[col])
        elif pick < 0.6 and rows:  # a duplicate row: a name used twice
            rows.append(list(rng.choice(rows)))
        elif pick < 0.7 and len(header) > 1:  # a missing column
            col = rng.randrange(len(header))
            header.pop(col)
            rows = [r[:col] + r[col + 1:] for r in rows]
        elif pick < 0.85:  # an extra column: allowed, refused by name, unknown or repeated
            header.append(rng.choice(EXTRA_CANDIDATE_COLUMNS))
            rows = [[*r, rng.choice(["8", "", "llama-3.1-8b", "1e12", "-1", "x\x1b[31m"])] for r in rows]
        else:  # one more candidate: an existing fleet, or the one at 1e12 tokens/s per accelerator
            big = ["1e12", "1e12", "1e6"] if rng.random() < 0.5 else ["2500", "250", "25"]
            own = rng.choice(["existing", "own", "rent"])
            cells = {"name": f"extra-{own}", "ownership": own, "accelerators_per_system": "8",
                     "accelerator_power_kw": "1.25", "accelerator_price_usd": "25000",
                     "rent_usd_per_accelerator_hour": "2.5", "input_tokens_per_s_per_accelerator": big[0],
                     "output_tokens_per_s_per_accelerator": big[1], "output_tokens_per_s_per_user": big[2],
                     "system_form": "server", "accelerator_cooling": "air"}
            rows.append([cells.get(h, "") for h in header])
            if own == "existing" and "max_accelerators" not in header:
                header.append("max_accelerators")
                rows = [[*r, "64" if i == len(rows) - 1 else ""] for i, r in enumerate(rows)]
    return header, rows


def plan_row_table(rng: random.Random, row: dict[str, str], catalog: bool) -> Table:
    """The damaged row among the docs' plan rows (so row numbers and names have neighbours)."""
    header, rows = read_docs_table("plan-example.csv")
    base = [dict(zip(header, r, strict=True)) for r in rows] if not catalog else []
    records = [row, *base] if not base or rng.random() < 0.5 else [*base, row]
    columns = list(dict.fromkeys(k for r in records for k in r))
    return columns, [[r.get(c, "") for c in columns] for r in records]


def row_selector(rng: random.Random, name: str, number: int) -> str:
    """A ``--row`` value: the row's name or number in every spelling (most of the time), or one naming nothing."""
    if rng.random() < 0.9:
        return rng.choice([name, str(number), f"number:{number}", f"name:{name}", f" {number} "])
    return rng.choice(["0", "99", "-1", "", "\u0661", escaped_text(rng, name), "name:", "number:x"])


def generated_plan_case(rng: random.Random) -> Case:
    """A damaged plan row, usually with a damaged CANDIDATES table, and drawn options."""
    catalog = rng.random() < 0.1
    header, rows = read_docs_table("plan-example.csv")
    base = dict(CATALOG_ROW) if catalog else dict(zip(header, rng.choice(rows), strict=True))
    row = damaged_row(rng, base)
    table = plan_row_table(rng, row, catalog)
    number = table[1].index([row.get(c, "") for c in table[0]]) + 1
    fmt = rng.choice(["csv", "csv", "csv", "gzip", "json", "parquet"])
    files = {f"plan.{fmt}": table_bytes(table, fmt)}
    argv = ["plan", f"{{plan.{fmt}}}", "--row", row_selector(rng, row.get("name", ""), number)]
    if not catalog:
        cfmt = rng.choice(["csv", "csv", "csv", "gzip", "json", "parquet"])
        candidates = damaged_candidates(rng)
        files[f"candidates.{cfmt}"] = table_bytes(candidates, cfmt)
        argv += ["--candidates", f"{{candidates.{cfmt}}}"]
        if rng.random() < 0.15:
            argv += ["--frontier", rng.choice(["speed", "site", "both"])]
    elif rng.random() < 0.5:
        argv += ["--accelerators", rng.choice(["h100-sxm", "h100-sxm,b200", "bogus", "", " H100-SXM ",
                                               escaped_text(rng, "b200")])]
    argv += ["--format", rng.choice(["json", "csv"])] if rng.random() < 0.8 else []
    held = (f"candidates.{cfmt}", candidates, cfmt) if not catalog else None
    return Case(argv, files, terminal=rng.random() < 0.5, candidates=held)


def _plan_file(rows: list[dict[str, str]], fmt: str = "csv") -> bytes:
    columns = list(dict.fromkeys(k for r in rows for k in r))
    return table_bytes((columns, [[r.get(c, "") for c in columns] for r in rows]), fmt)


def _without_column(name: str) -> bytes:
    """docs/plan-candidates.csv without one column (a required one: refused naming it)."""
    header, rows = read_docs_table("plan-candidates.csv")
    keep = [i for i, h in enumerate(header) if h != name]
    return table_bytes(([header[i] for i in keep], [[r[i] for i in keep] for r in rows]), "csv")


def fixed_plan_cases() -> list[Case]:
    """The issue's edge cases, each with the exit codes it may give."""
    header, rows = read_docs_table("plan-example.csv")
    worked = dict(zip(header, rows[0], strict=True))
    cands = (DOCS / "plan-candidates.csv").read_bytes()
    big = cands + b"big,own,8,1.25,25000,,1e12,1e12,1e6,server,air\n"

    def plan(row: dict[str, str], candidates: bytes | None = cands, allowed: tuple[int, ...] = (0, 1, 2),
             *options: str) -> Case:
        files = {"plan.csv": _plan_file([row])}
        argv = ["plan", "{plan.csv}", "--row", "1", *options]
        if candidates is not None:
            files["candidates.csv"] = candidates
            argv += ["--candidates", "{candidates.csv}"]
        return Case(argv, files, allowed, terminal=True)

    catalog = dict(CATALOG_ROW)
    return [
        plan({**worked, "demand_requests_per_s": "", "demand_output_tokens_per_day": "1e308"}, allowed=(1,)),
        plan({**catalog, "demand_output_tokens_per_day": "1e308"}, None, (1,)),
        plan({**worked, "demand_requests_per_s": "1e9"}, allowed=(0, 1)),
        plan({**catalog, "demand_output_tokens_per_day": "", "demand_requests_per_s": "1e9"}, None, (0, 1)),
        plan({**worked, "ttft_target_s": "0.5", "ttft_percentile": "0.999999999"}, allowed=(0, 1)),
        plan({**catalog, "ttft_target_s": "2", "ttft_percentile": "0.999999999"}, None, (0, 1)),
        plan({**worked, "ttft_target_s": "1e-9", "ttft_percentile": "1e-12"}, allowed=(0, 1)),
        plan(worked, big, (0, 1)),
        plan({**worked, "demand_requests_per_s": "1e9"}, big, (0, 1)),
        plan({**worked, "demand_profile": " ".join(["1e308"] * 24)}, allowed=(0, 1)),
        plan({**worked, "site_power_mw": "1e-9"}, allowed=(0, 1)),
        plan({**catalog, "existing_accelerators": "10000000", "accelerator": "h100-sxm"}, None, (0, 1)),
        plan({**worked, "min_rental_hours": "monthly", "max_pools": "100", "min_pool_systems": "10000"},
             allowed=(0, 1)),
        plan(worked, cands + b"gpu-own,own,8,1.25,25000,,2500,250,25,server,air\n", (2,)),
        plan(worked, cands.replace(b"25000", b"2_5000", 1), (2,)),
        plan(worked, cands.replace(b"25000", "\u0662\u0665\u0660\u0660\u0660".encode(), 1), (2,)),
        plan(worked, cands.replace(b"25000", "\uff12\uff15\uff10\uff10\uff10".encode(), 1), (2,)),
        plan(worked, cands.replace(b"gpu-own", b"#g", 1), (0, 1)),
        plan(worked, cands.replace(b"gpu-own", b"\x1b]0;title\x07", 1), (0, 1)),
        plan(worked, _without_column("output_tokens_per_s_per_accelerator"), (2,)),
        plan(worked, cands.replace(b"1.25", b"-1.25", 1), (2,)),
        plan({**catalog}, None, (0, 1), "--frontier", "both"),
    ]


POOLS_SAID = re.compile(r"max_pools: without it \(at most (\d+) pools?\) a plan exists at [0-9,.]+ USD a day with "
                        r"(\d+) pools?")
"""The diagnosis of a plan infeasible under ``max_pools``: the plan without the limit and its pools."""


def infeasible_checks(stage: Stage, case: Case, run: Run, tmp: Path) -> None:
    """Two checks of a plan found infeasible (exit 1, "no feasible plan"): its reason may not say the plan without
    ``max_pools`` has no more pools than the limit (that plan would obey it); and no plan may become feasible when a
    candidate is taken away (a candidate only adds options), tried for each row of its CANDIDATES table.
    """
    said = POOLS_SAID.search(run.err)
    if said and int(said[2]) <= int(said[1]):
        _mismatch(stage, case, f"infeasible, yet the plan without max_pools has {said[2]} pools, within the limit "
                               f"of {said[1]}: {said[0]}")
    if case.candidates is None:
        return
    name, (header, rows), fmt = case.candidates
    stage.counts["infeasible, candidates dropped one by one"] += 1
    for i in range(min(len(rows), 4)):
        fewer = Case(case.argv, {**case.files, name: table_bytes((header, rows[:i] + rows[i + 1:]), fmt)})
        paths = {}
        for file, data in fewer.files.items():
            (tmp / file).write_bytes(data)
            paths[file] = str(tmp / file)
        got = run_in_process([paths.get(a[1:-1], a) if a.startswith("{") else a for a in fewer.argv])
        if got.code == 0:
            _mismatch(stage, fewer, f"infeasible with CANDIDATES row {i + 1}, feasible without it (a candidate "
                                    f"only adds options): {run.err.strip()[-200:]}")
            return


def _mismatch(stage: Stage, case: Case, detail: str) -> None:
    stage.counts["mismatch"] += 1
    stage.keep("mismatch", case.argv, dict(case.files), detail)


def plan_stage(cases: int, seed: int, tmp: Path, quick: bool = False) -> Stage:
    """The plan stage: the fixed edge cases (``quick``: without the catalog frontier, 7 s), then generated ones,
    ``cases`` in all; every infeasible plan checked as :func:`infeasible_checks` says.
    """
    rng, stage = stage_rng(seed, "plan"), Stage("plan")
    fixed = [c for c in fixed_plan_cases() if not (quick and "--frontier" in c.argv)]
    pending = fixed[:cases]
    while stage.cases < cases:
        case = pending.pop(0) if pending else generated_plan_case(rng)
        found, run = run_case(stage, case, tmp)
        if "exit 1" in found and "no feasible plan" in run.err:
            infeasible_checks(stage, case, run, tmp)
    return stage


# --- sweep --------------------------------------------------------------------------------------------------------

SAFE_SCENARIOS = 400
"""At most this many scenarios in a sweep the bench lets run (a larger accepted size is cut down: ``capped``)."""
SAFE_PARTITIONS = 12
"""At most this many partitions (each costs an engine call, about 25 ms, whatever its size)."""
DASK_SCENARIOS, DASK_PARTITIONS = 100, 3
"""The same limits for the few sweeps run on a Dask cluster (a process of their own: a cluster takes seconds)."""
NUMERIC = [n for n, s in FIELDS.items() if s.kind.numeric and not n.startswith("decode_")]
BAD_GRID_FIELDS = ["bogus", "PUE", " pue ", "name", "accelerator", "pue_low", "", "ownership", "pue\x1b[31m"]
COUNTS = ["1", "2", "3", "5", "10"]
BAD_COUNTS = ["0", "-1", "100000", "100001", "1e5", "2.5", "abc", "", "99999999999999999999", "\u0663", "\uff13",
              " 4 ", "+4", "nan", "inf"]
OPTION_VALUES = {
    "--samples": ["0", "5", "20"],
    "--workers": ["1", "2"],
    "--partition-rows": ["1", "7", "250000"],
    "--top": ["1", "10"],
    "--seed": ["0", "1", "4294967295"],
}
"""Values each option accepts; :data:`BAD_OPTION_VALUES` are drawn a quarter of the time."""
BAD_OPTION_VALUES = {
    "--samples": ["-5", "abc", "1e3", "100000000", "100000001", "99999999999999999999", " 7", "\u0663", "1_000",
                  "+3", ""],
    "--workers": ["3", "0", "-1", "abc", "1000", "\u0661"],
    "--partition-rows": ["0", "-1", "1000001", "abc", "2_0"],
    "--top": ["0", "10001", "abc", "-3"],
    "--seed": ["-1", "4294967296", "abc", "\u0661"],
}
PLAIN_INT = re.compile(r"[+-]?[0-9]+")


def _bound_values(rng: random.Random, name: str, hostile: bool) -> str:
    """A value of field ``name``: inside its bounds, or (``hostile``) at or outside one, or any text."""
    spec = FIELDS[name] if name in FIELDS else FIELDS["pue"]
    low = spec.ge if spec.ge is not None else spec.gt if spec.gt is not None else 0.0
    high = spec.le if spec.le is not None else spec.lt if spec.lt is not None else 1e6
    if not hostile:
        x = rng.uniform(low, min(high, low + 10))
        return repr(round(x) if spec.kind is FieldKind.INT else round(x, 3))
    if rng.random() < 0.6:
        return repr(rng.choice([low, high, low - 0.5, high * 2 + 1, -1.0, 1e308]))
    return generated_text(rng).replace(",", " ").replace(":", " ")


def grid_item(rng: random.Random, name: str, hostile: str = "") -> str:
    """One ``--grid`` argument for field ``name``, ``low:high:count`` or a list; ``hostile`` names what is
    damaged: ``count``, ``value``, ``malformed`` (the specification's shape) or nothing.
    """
    values = [_bound_values(rng, name, hostile == "value" and rng.random() < 0.6) for _ in range(rng.randint(2, 5))]
    if hostile == "malformed":
        spec = rng.choice(["", ":", "1:2", "1:2:3:4", "1,,2", "a:b:c", escaped_text(rng, "1:2:3"), "1;2"])
        return rng.choice([f"{name}={spec}", name, f"={spec}", f"{name}==1:2:3", f"{name}={spec}"])
    if rng.random() < 0.6 or hostile == "count":
        count = rng.choice(BAD_COUNTS if hostile == "count" else COUNTS)
        return f"{name}={values[0]}:{values[1]}:{count}"
    return f"{name}={','.join(values)}"


def _size(grid: list[str], samples: int, partition_rows: int) -> tuple[int, int] | None:
    """(scenarios, partitions) of a sweep the project would accept as far as sizes go, or None when it refuses the
    grid or the size before any work (so it may stay as generated).
    """
    axes: dict[str, int] = {}
    for item in grid:
        name, sep, text = item.partition("=")
        if not sep or not text.strip() or name.strip() in axes:
            return None
        try:
            axes[name.strip()] = len(sweep.grid_values(text.strip(), name.strip()))
        except InputError:
            return None
    if not 0 <= samples <= 100_000_000 or not 1 <= partition_rows <= sweep.MAX_PARTITION_ROWS:
        return None
    size = math.prod(axes.values()) * max(samples, 1)
    return None if size > sweep.MAX_SCENARIOS else (size, -(-size // partition_rows))


def _as_int(text: str) -> int | None:
    """The option's value as argparse's ``int`` reads it (it takes ``1_000`` and non-ASCII digits), else None."""
    try:
        return int(text)
    except ValueError:
        return None


def bounded(grid: list[str], options: dict[str, str], dask: bool) -> tuple[list[str], dict[str, str], bool]:
    """The sweep cut down to a safe size when the project would run it larger (grid axes to their first values,
    draws to 5, partitions widened); whether it was cut.
    """
    samples, rows = _as_int(options.get("--samples", "0")), _as_int(options.get("--partition-rows", "250000"))
    size = _size(grid, samples, rows) if samples is not None and rows is not None else None
    most, parts = (DASK_SCENARIOS, DASK_PARTITIONS) if dask else (SAFE_SCENARIOS, SAFE_PARTITIONS)
    if size is None or (size[0] <= most and size[1] <= parts):
        return grid, options, False
    grid = [f"{n}={','.join(repr(v) for v in sweep.grid_values(t.strip(), n.strip())[:3])}"
            for n, _, t in (g.partition("=") for g in grid)]
    options = {**options, "--samples": str(min(samples or 0, 5)), "--partition-rows": str(most)}
    return grid, options, True


SWEEP_DAMAGE = ["", "", "field", "count", "value", "malformed", "option", "row", "repeat", "chaos"]
"""What one generated sweep damages ("" nothing; "chaos" everything at random): one thing at a time, so the
refusals and the runs are both reached."""


def _options(rng: random.Random, hostile: bool) -> dict[str, str]:
    """A few of the options, with (``hostile``) one of them given a bad value."""
    options = {k: rng.choice(v) for k, v in OPTION_VALUES.items() if rng.random() < 0.3}
    if hostile:
        name = rng.choice(list(BAD_OPTION_VALUES))
        options[name] = rng.choice(BAD_OPTION_VALUES[name])
    return options


def _grid(rng: random.Random, damage: str) -> list[str]:
    """One to three ``--grid`` arguments, one damaged as ``damage`` says (all of them, at random, for chaos)."""
    names = rng.sample(NUMERIC, rng.choice([1, 1, 2, 3]))
    hurt = rng.randrange(len(names))
    grid = []
    for i, name in enumerate(names):
        what = rng.choice(["count", "value", "malformed", ""]) if damage == "chaos" else damage if i == hurt else ""
        field_name = rng.choice(BAD_GRID_FIELDS) if what == "field" or (damage == "chaos" and rng.random() < 0.2) \
            else name
        grid.append(grid_item(rng, field_name, what))
    if damage == "repeat":  # a field given twice
        grid.append(grid_item(rng, grid[0].partition("=")[0]))
    return grid


def generated_sweep_case(rng: random.Random, dask_share: float = 0.02) -> tuple[Case, bool, list[tuple[str, str]]]:
    """A sweep: base row, grid, options; whether it was cut down; the value-parser mismatches it should show."""
    damage = rng.choice(SWEEP_DAMAGE)
    base = rng.choice(["example.csv", "uncertainty-example.csv"])
    grid = _grid(rng, damage) if base == "example.csv" or rng.random() < 0.5 else []
    options = _options(rng, damage in ("option", "chaos"))
    if base == "uncertainty-example.csv" and "--samples" not in options:
        options["--samples"] = rng.choice(["5", "20", "50"])
    dask = rng.random() < dask_share  # a cluster takes seconds to start: a few of these are enough
    grid, options, capped = bounded(grid, options, dask)
    row = rng.choice(["2", "bogus", "", escaped_text(rng, "1")]) if damage in ("row", "chaos") else rng.choice(
        ["1", "number:1", " 1 "])
    argv = ["sweep", str(DOCS / base), "--row", row, *[a for g in grid for a in ("--grid", g)]]
    argv += [a for k, v in options.items() for a in (k, v)]
    argv += ["--local"] if not dask else [] if "--workers" in options else ["--workers", "1"]
    if rng.random() < 0.1:
        argv += ["--distribution", rng.choice(["uniform", "triangular", "bogus", "Uniform"])]
    unplain = [(k, v) for k, v in options.items() if not PLAIN_INT.fullmatch(v.strip()) and _as_int(v) is not None]
    expected = [("mismatch", f"sweep {k} '{v}' read as {_as_int(v)}: the value parser refuses it, as uncertainty "
                 f"--samples does") for k, v in unplain]
    return Case(argv, terminal=rng.random() < 0.5, subprocess=dask, timeout=90.0 if dask else 120.0), capped, expected


def fixed_sweep_cases() -> list[Case]:
    """The issue's sweep edge cases: each must be refused (exit 2) before any work, at once."""
    ex, un = str(DOCS / "example.csv"), str(DOCS / "uncertainty-example.csv")

    def refused(*args: str, base: str = ex) -> Case:
        return Case(["sweep", base, "--row", "1", *args, "--local"], allowed=(2,), terminal=True)

    return [
        refused("--grid", "pue=0.5:1.5:3"), refused("--grid", "pue=1:2:0"), refused("--grid", "pue=1:2:-1"),
        refused("--grid", "pue=1:2:100001"), refused("--grid", "pue=1:2:1e5", "--grid", "headroom=0:1:1e5"),
        refused("--grid", "pue=1:2:3", "--grid", "pue=1:3:3"), refused("--grid", "bogus=1:2:3"),
        refused("--grid", "name=1:2:3"), refused("--grid", "accelerator_count=1:2:3"),
        refused("--grid", "pue=1:2:abc"), refused("--grid", "pue\x1b]0;title\x07=1:2:3"),
        refused("--samples", "100000001", base=un), refused("--samples", "-5", base=un),
        refused("--samples", "60000000", base=un), refused("--grid", "pue=1:2:3", "--workers", "0"),
        refused("--grid", "pue=1:2:3", "--workers", "1000"), refused("--grid", "pue=1:2:3", "--partition-rows", "0"),
        refused("--grid", "pue=1:2:3", "--partition-rows", "1000001"), refused(),
        Case(["sweep", ex, "--row", "1", "--grid", "pue=1.1:1.5:3", "--workers", "1"], subprocess=True,
             allowed=(0,), timeout=90.0),
        Case(["sweep", ex, "--row", "1", "--grid", "pue=1.1:1.5:3", "--scheduler", "tcp://127.0.0.1:1"],
             subprocess=True, allowed=(2,), timeout=90.0),
    ]


def sweep_stage(cases: int, seed: int, tmp: Path, quick: bool = False) -> Stage:
    """The sweep stage: the fixed edge cases, then generated ones, ``cases`` in all (``quick``: none of those that
    run in a process of their own, on Dask or against a scheduler: seconds each).
    """
    rng, stage = stage_rng(seed, "sweep"), Stage("sweep")
    for case in [c for c in fixed_sweep_cases() if not (quick and c.subprocess)][:cases]:
        run_case(stage, case, tmp)
    while stage.cases < cases:
        case, capped, expected = generated_sweep_case(rng, dask_share=0.0 if quick else 0.02)
        found, _ = run_case(stage, case, tmp, [("capped", "")] if capped else [])
        for outcome, detail in expected:
            if "exit 0" in found:  # accepted and run where the value parser refuses
                stage.counts[outcome] += 1
                stage.keep(outcome, case.argv, {}, detail)
    return stage
