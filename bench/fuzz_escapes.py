r"""The fuzz bench's ``escapes`` stage (a module of ``bench/fuzz.py``; running it on its own does nothing).

Every command that takes user input (``evaluate``, ``explain``, ``compare``, ``retrofit`` with and without
``--explain``, ``uncertainty``, ``sweep``, ``plan``, ``import-benchmark``, and argument errors of any command) gets
escape sequences (a window title ``\x1b]0;title\x07``, a colour, the C1 CSI ``\x9b``, clear screen, device
control, a zero-width space, a right-to-left override, carriage return, backspace, line separator, byte-order mark)
in the row's name and its other text fields, in numbers, in a header, in the ``--row`` value, in option values
(``--accelerators``, ``--output-field``, ``--grid``, ``--model``, ``--curve-id``, ``--format``), in the input's
file name and in an output path, and for ``plan`` in the CANDIDATES table's text cells; the benchmark file's model
and backend names for ``import-benchmark``. Half of the runs write to a (fake) terminal, where the project's rule
says everything must be escaped; the other half to a pipe, where only standard error and reports must be (see
``bench/fuzz_common.py`` for the rule). Counted: ``escape leak`` for any raw control character that reaches what
must be escaped, with the usual exit-code, traceback and time checks.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

from fuzz_commands import DOCS, Case, read_docs_table, run_case, table_bytes
from fuzz_common import ROOT, Stage, escaped_text, stage_rng

from economics.schema.scenario import FIELDS
from economics.schema.values import FieldKind

TEXT_FIELDS = [n for n, s in FIELDS.items() if s.kind in (FieldKind.STR, FieldKind.CHOICE) and n != "name"]
NUMBER_FIELDS = ["accelerator_count", "pue", "electricity_usd_per_kwh", "demand_output_tokens_per_day"]
BENCHMARK = ROOT / "tests" / "fixtures" / "benchmarks" / "vllm_serve.json"


def _row_file(rng: random.Random, base: str, fmt: str = "csv") -> tuple[dict[str, bytes], str, str]:
    """A docs file whose first row is named with escapes and, often, has escapes in other cells and the header:
    (its file, keyed by a name that may itself hold escapes; the ``{name}`` placeholder; the row's name).
    """
    header, rows = read_docs_table(base)
    header, rows = list(header), [list(r) for r in rows]
    name = escaped_text(rng, rows[0][header.index("name")])
    rows[0][header.index("name")] = name
    if rng.random() < 0.4:  # another text field: refused, and the message names the value
        column = rng.choice(TEXT_FIELDS)
        if column not in header:
            header.append(column)
            rows = [[*r, ""] for r in rows]
        rows[0][header.index(column)] = escaped_text(rng, rows[0][header.index(column)] or "h100-sxm")
    if rng.random() < 0.2:  # a number holding escapes
        column = rng.choice([c for c in NUMBER_FIELDS if c in header] or ["name"])
        rows[0][header.index(column)] = escaped_text(rng, rows[0][header.index(column)])
    if rng.random() < 0.15:  # a header: an unknown column named with escapes, or a known one damaged
        i = rng.randrange(len(header))
        header[i] = escaped_text(rng, header[i])
    file = f"in{escaped_text(rng) if rng.random() < 0.2 else ''}.{fmt}".replace("/", "")
    return {file: table_bytes((header, rows), fmt)}, f"{{{file}}}", name


def _row(rng: random.Random, name: str) -> str:
    """A ``--row`` value: the row's escaped name, its number, or escapes naming nothing."""
    return rng.choice([name, name, "1", f"name:{name}", escaped_text(rng), escaped_text(rng, "2")])


def _evaluate(rng: random.Random) -> Case:
    files, path, _ = _row_file(rng, "example.csv")
    argv = ["evaluate", path, *rng.choice([[], ["--format", "json"], ["--format", escaped_text(rng, "csv")]])]
    if rng.random() < 0.1:
        argv += ["-o", f"no-such-folder{escaped_text(rng)}/out.csv"]
    return Case(argv, files)


def _one_row(command: str, base: str, *options: str) -> Callable[[random.Random], Case]:
    def make(rng: random.Random) -> Case:
        files, path, name = _row_file(rng, base)
        argv = [command, path, "--row", _row(rng, name), *options]
        if command == "compare" and rng.random() < 0.3:
            argv += ["--accelerators", escaped_text(rng, "h100-sxm")]
        if command == "uncertainty":
            argv += ["--samples", "20"] + (["--output-field", escaped_text(rng, "cost_usd_per_m_tokens")]
                                            if rng.random() < 0.3 else [])
        if command == "sweep":
            field = escaped_text(rng, "pue") if rng.random() < 0.3 else "pue"
            argv += ["--grid", f"{field}=1.1:1.5:3", "--local"]
        return Case(argv, files)
    return make


def _candidates(rng: random.Random) -> bytes:
    """docs/plan-candidates.csv with escapes in a few text cells (names, family, roles, ownership, accelerator)."""
    header, rows = read_docs_table("plan-candidates.csv")
    header, rows = [*header, "family"], [[*r, "nvidia"] for r in rows]
    for _ in range(rng.randint(1, 3)):
        row = rng.choice(rows)
        column = rng.choice(["name", "name", "family", "roles", "ownership", "system_form"])
        if column not in header:
            header.append(column)
            rows = [[*r, "aggregated;prefill;decode"] for r in rows]
            row = rows[0]
        row[header.index(column)] = escaped_text(rng, row[header.index(column)])
    return table_bytes((header, rows), rng.choice(["csv", "json"]))


def _plan(rng: random.Random) -> Case:
    files, path, name = _row_file(rng, "plan-example.csv")
    files["candidates.csv"] = _candidates(rng)
    argv = ["plan", path, "--row", _row(rng, name), "--candidates", "{candidates.csv}"]
    argv += rng.choice([["--format", "csv"], ["--format", "json"], ["--accelerators", escaped_text(rng, "b200")]])
    return Case(argv, files)


def _import_benchmark(rng: random.Random) -> Case:
    record = json.loads(BENCHMARK.read_text())
    for key in rng.sample(["model_id", "backend", "tokenizer_id", "endpoint_type"], rng.randint(1, 2)):
        record[key] = escaped_text(rng, str(record[key]))
    name = f"bench{escaped_text(rng) if rng.random() < 0.3 else ''}.json".replace("/", "")
    argv = ["import-benchmark", f"{{{name}}}", "--accelerator", "h100-sxm", "--accelerators", "8", "--precision",
            "bf16"]
    for option, value in (("--model", "llama-3.3-70b"), ("--curve-id", "mine"), ("--precision", "bf16"),
                          ("--accelerator", "h100-sxm")):
        if rng.random() < 0.2:
            argv += [option, escaped_text(rng, value)]
    return Case(argv, {name: json.dumps(record).encode()})


def _arguments(rng: random.Random) -> Case:
    """Argument errors: an unknown option, a bad choice, a missing file, each naming the escaped text."""
    command = rng.choice(["evaluate", "explain", "fields", "schema", "template", "plan", "sweep", "calibrate"])
    return Case(rng.choice([
        [command, escaped_text(rng, "--bogus")],
        ["evaluate", str(DOCS / "example.csv"), "--input-format", escaped_text(rng, "csv")],
        ["explain", f"no-such-folder/{escaped_text(rng, 'in.csv')}", "--row", "1"],
        ["plan", str(DOCS / "plan-example.csv"), "--row", "1", "--frontier", escaped_text(rng, "both")],
        [escaped_text(rng, "evaluate")],
    ]))


MAKERS: list[Callable[[random.Random], Case]] = [
    _evaluate, _one_row("explain", "example.csv"), _one_row("compare", "example.csv"),
    _one_row("retrofit", "retrofit-example.csv"), _one_row("retrofit", "retrofit-example.csv", "--explain"),
    _one_row("uncertainty", "uncertainty-example.csv"), _one_row("sweep", "example.csv"), _plan,
    _import_benchmark, _arguments]
"""One generator per command (retrofit twice: its tables are data, its ``--explain`` a report)."""


def escape_stage(cases: int, seed: int, tmp: Path, quick: bool = False) -> Stage:
    """The escapes stage: each command in turn, ``cases`` in all, half of them writing to a terminal (every case is
    quick: ``quick`` is accepted as every stage's).
    """
    rng, stage = stage_rng(seed, "escapes"), Stage("escapes")
    while stage.cases < cases:
        case = MAKERS[stage.cases % len(MAKERS)](rng)
        case.terminal = rng.random() < 0.5
        run_case(stage, case, tmp)
    return stage
