"""Benchmark runs in, curve points out: ``import-benchmark`` and :func:`import_benchmark`.

A benchmark file (vLLM, SGLang, GenAI-Perf, AIPerf, GuideLLM, InferenceX result rows, MLPerf summaries, or a curve
file of ours) is read by its format's reader (:mod:`economics.io.benchmark_formats`) into :class:`Run` records, each
as the tool recorded it. :func:`points` turns runs into curve points in the columns of
:mod:`economics.schema.user_curves`:

- per-user speed [token/s/user] = 1,000 / median time per output token [ms] (the tool's TPOT; its inter-token
  latency where it has no TPOT), as InferenceX reports interactivity;
- output tokens/s per accelerator = the run's output tokens/s over the deployment / its accelerators, or the file's
  own per-accelerator output figure (InferenceX); only generated tokens count (``token_basis`` says how a row was
  converted);
- input and output tokens = the run's mean per request (total tokens / completed requests) where it records them,
  else its nominal lengths; TTFT [s] = median TTFT [ms] / 1,000.

What a file does not record (the accelerator type and count, the precision, often the model) is asked for by flag
and never guessed; a model name maps to a catalog id through the ``aliases`` of data/models.csv, else it is refused
naming the alias to add. Every point carries its provenance: file name, SHA-256, tool and version, run date.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from economics import catalog
from economics.io.benchmark_formats import FORMATS, BenchmarkError, BenchmarkFormat, Run, detect, read_runs
from economics.io.benchmark_formats import number_cell as num
from economics.io.scenario_files import read_input_bytes
from economics.schema import user_curves
from economics.schema.user_curves import LENGTH_TOLERANCE
from economics.schema.validation import InputError
from economics.schema.values import shown

__all__ = ["FORMATS", "BenchmarkError", "BenchmarkFormat", "Flags", "Run", "curves_csv", "import_benchmark", "model_id",
           "points"]
MAX_FILES = 1_000
MAX_FILE_BYTES = 128_000_000
"""The most bytes one benchmark file may have (read whole and parsed: memory stays under 1 GB)."""


@dataclass(frozen=True)
class Flags:
    """What the user supplies on the command line for what files do not record."""

    accelerator: str = ""
    accelerators: float | None = None
    model: str = ""
    precision: str = ""
    curve_id: str = ""
    input_tokens: float | None = None
    output_tokens: float | None = None


def model_id(name: str, flag: str = "") -> str:
    """The catalog model id for ``--model`` (a catalog id) or a model name from a file (a catalog id, or an alias in
    data/models.csv, compared case-insensitively, with or without its ``owner/`` prefix).

    >>> model_id("meta-llama/Llama-3.3-70B-Instruct"), model_id("", "deepseek-v3")
    ('llama-3.1-70b', 'deepseek-v3')
    """
    table = catalog.models()
    if flag:
        if flag.strip().lower() not in table.index:
            raise BenchmarkError(catalog.unknown_id_message("--model", shown(flag), list(table.index)))
        return flag.strip().lower()
    wanted = name.strip().lower()
    if wanted in table.index:
        return wanted
    for mid, aliases in table["aliases"].items():
        for alias in str(aliases).split(";"):
            a = alias.strip().lower()
            if a and (wanted == a or wanted.split("/")[-1] == a.split("/")[-1]):
                return str(mid)
    if not wanted:
        raise BenchmarkError("model: the file does not name its model; give --model ID (a data/models.csv id)")
    raise BenchmarkError(f"model: {shown(name)} is neither a model id nor an alias in data/models.csv; give "
                         f"--model ID, or add {shown(name)} to the aliases of its model in data/models.csv")


def _accelerator(run: Run, flags: Flags) -> str:
    ids = catalog.accelerator_ids()
    given = flags.accelerator.strip().lower()
    if given and given not in ids:
        raise BenchmarkError(catalog.unknown_id_message("--accelerator", shown(flags.accelerator), ids))
    recorded = run.accelerator.strip().lower()
    if recorded and recorded not in ids:
        if not given:
            raise BenchmarkError(f"accelerator: the file says {shown(run.accelerator)}, not a catalog id; give "
                                 "--accelerator ID")
        recorded = ""
    if given and recorded and given != recorded:
        raise BenchmarkError(f"--accelerator {given}: the file says the run was on {recorded}")
    if not (given or recorded):
        raise BenchmarkError(f"accelerator: {run.tool} files do not record the accelerator; give --accelerator ID "
                             "(a data/accelerators.csv id)")
    return given or recorded


def _precision(run: Run, flags: Flags) -> str:
    given, recorded = flags.precision.strip().lower(), run.precision.strip().lower()
    for text, what in ((given, "--precision"), (recorded, "precision (from the file)")):
        if text and text not in user_curves.PRECISIONS:
            raise BenchmarkError(f"{what}: {shown(text)} is not one of {', '.join(user_curves.PRECISIONS)}")
    if given and recorded and given != recorded:
        raise BenchmarkError(f"--precision {given}: the file says {recorded}")
    if not (given or recorded):
        raise BenchmarkError(f"precision: {run.tool} files do not record the weight precision; give --precision "
                             f"({', '.join(user_curves.PRECISIONS)})")
    return given or recorded


def _per_accelerator(run: Run, flags: Flags) -> tuple[float, float | None, str]:
    """(output tokens/s per accelerator, the accelerators, how it was converted)."""
    if run.accelerators and flags.accelerators and run.accelerators != flags.accelerators:
        raise BenchmarkError(f"--accelerators {num(flags.accelerators)}: the file says {num(run.accelerators)}")
    count = flags.accelerators or run.accelerators
    if run.output_tokens_per_s_per_accelerator is not None:
        return run.output_tokens_per_s_per_accelerator, count, run.token_basis or "the file's output tokens/s per "\
            "accelerator"
    if run.output_tokens_per_s is None:
        raise BenchmarkError("output throughput: the run records none")
    if not count:
        raise BenchmarkError(f"accelerators: {run.tool} files do not record how many accelerators served the run; "
                             "give --accelerators N (every GPU of the deployment)")
    basis = run.token_basis or "output tokens/s of the run / accelerators"
    return run.output_tokens_per_s / count, count, basis


def points(runs: Sequence[Run], flags: Flags, file_name: str, sha256: str) -> list[dict[str, str]]:
    """The curve points of one file's runs (text cells in :data:`economics.schema.user_curves.COLUMNS`); runs of one
    accelerator, model, precision, stack and request shape (lengths within the curves' tolerance) share a curve.
    """
    rows = _name_curves(_points(runs, flags, file_name, sha256), flags.curve_id)
    for row in rows:
        row.pop("_from")
    return rows


def _points(runs: Sequence[Run], flags: Flags, file_name: str, sha256: str) -> list[dict[str, str]]:
    """The points of one file's runs, not yet named, each with where it came from (``_from``: file and run). A
    figure is held to the bounds the curve file's loader holds it to
    (:func:`economics.schema.user_curves.point_problems`),
    and refused here, naming the file, the run and the field, rather than written to a file that loads nowhere.
    """
    rows = []
    for run in runs:
        where = f"{shown(file_name)}, run {run.index}"
        try:
            row = _point(run, flags, file_name, sha256)
        except BenchmarkError as exc:
            raise BenchmarkError(f"{where}: {exc}") from None
        problems = user_curves.point_problems(row)
        if problems:
            raise BenchmarkError(f"{where}: " + "; ".join(problems))
        rows.append({**row, "_from": where})
    return rows


def _lengths(run: Run, flags: Flags) -> tuple[float, float]:
    """The run's mean input and output tokens per request, or the flags' where the file records none."""
    out = []
    for name, recorded, given in (("input", run.input_tokens, flags.input_tokens),
                                  ("output", run.output_tokens, flags.output_tokens)):
        if recorded is not None and given is not None and abs(recorded - given) > 0.01 * given:
            raise BenchmarkError(f"--{name}-tokens {num(given)}: the file records {num(recorded)} {name} tokens "
                                 "per request")
        value = recorded if recorded is not None else given
        if value is None or not value > 0:
            raise BenchmarkError(f"{name} tokens: {run.tool} files of this kind do not record the {name} tokens per "
                                 f"request; give --{name}-tokens N")
        out.append(value)
    return out[0], out[1]


def _point(run: Run, flags: Flags, file_name: str, sha256: str) -> dict[str, str]:
    if run.point_kind != "offline" and not (run.per_user and run.per_user > 0):
        raise BenchmarkError("per-user speed: the run records no time per output token")
    found: dict[str, Any] = {}
    missing = []  # every flag a file needs is named at once
    for name, look in (("accelerator", lambda: _accelerator(run, flags)), ("precision", lambda: _precision(run, flags)),
                       ("model", lambda: model_id(run.model_name, flags.model)),
                       ("throughput", lambda: _per_accelerator(run, flags)), ("lengths", lambda: _lengths(run, flags))):
        try:
            found[name] = look()
        except BenchmarkError as exc:
            missing.append(str(exc))
    if missing:
        raise BenchmarkError("; ".join(missing))
    (per_acc, count, basis), (i_tok, o_tok) = found["throughput"], found["lengths"]
    row = {c: "" for c in user_curves.COLUMNS}
    row.update({
        "accelerator": found["accelerator"], "accelerator_count": num(count), "model": found["model"],
        "precision": found["precision"],
        "input_tokens": num(i_tok), "output_tokens": num(o_tok),
        "output_tokens_per_s_per_user": num(run.per_user), "output_tokens_per_s_per_accelerator": num(per_acc),
        "point_kind": run.point_kind, "time_to_first_token_s": num(run.ttft_s), "concurrency": num(run.concurrency),
        "request_rate_per_s": num(run.request_rate_per_s), "framework": run.framework, "token_basis": basis,
        "tool": run.tool, "tool_version": run.tool_version, "source_file": file_name, "source_sha256": sha256,
        "run_date": run.run_date, "confidence": user_curves.OWN if run.tool != "inferencex" else "secondary",
        "source": run.source or f"{file_name} (sha256 {sha256[:12]})", "source_date": run.run_date,
        "note": run.note})
    row.update({k: v for k, v in run.stack.items() if k in row})
    row["_group"] = run.group
    return row


def _name_curves(rows: list[dict[str, str]], curve_id: str, taken_ids: Iterable[str] = ()) -> list[dict[str, str]]:
    """Give each row its curve id: ``--curve-id`` (with a number where a file holds several shapes) or one built
    from tool, accelerator, model, precision and lengths, never one in ``taken_ids`` (a curve file's, imported
    alongside). Rows of one tool, :data:`~economics.schema.user_curves.CONFIGURATION` and accelerator count (a published
    run: its source, whose sweep of deployment sizes is one front) whose lengths are within
    :data:`~economics.schema.user_curves.LENGTH_TOLERANCE` of a curve's first point join that curve.
    """
    curves: list[tuple[tuple[str, ...], float, float, str]] = []
    taken = set(taken_ids)
    for row in rows:
        if row["curve_id"]:  # a curve file's own id is kept
            continue
        key = (row["tool"], *(row[c] for c in user_curves.CONFIGURATION), row["_group"],
               row["source"] if row["_group"] else row["accelerator_count"])
        i, o = float(row["input_tokens"]), float(row["output_tokens"])
        for k, i0, o0, cid in curves:
            if k == key and max(i / i0, i0 / i, o / o0, o0 / o) <= LENGTH_TOLERANCE:
                row["curve_id"] = cid
                break
        else:
            base = curve_id or _curve_name(row, i, o)
            cid, n = base, 2
            while cid in taken:
                cid, n = f"{base}-{n}", n + 1
            curves.append((key, i, o, cid))
            taken.add(cid)
            row["curve_id"] = cid
    for row in rows:
        row.pop("_group", None)
    return rows


def _curve_name(row: dict[str, str], i: float, o: float) -> str:
    """A readable curve id: tool, accelerator, framework, MTP and disaggregation where used, model, precision,
    lengths and, for a published run, its number (``inferencex-b200-dynamo-trt-mtp-disagg-deepseek-v3-fp8-1024-1024
    -23438524239``).
    """
    spec = row["speculative_decoding"].lower()
    run = re.findall(r"\d+", row["_group"])
    framework = re.sub(r"[^a-z0-9.]+", "-", row["framework"].lower()).strip("-")
    parts = (row["tool"], row["accelerator"], "" if framework == row["tool"] else framework,
             spec if spec not in ("", "none", "no") else "", "disagg" if catalog.is_yes(row["disaggregated"]) else "",
             row["model"], row["precision"], f"{num(round(i))}-{num(round(o))}", run[-1] if run else "")
    return "-".join(p for p in parts if p)


def import_benchmark(files: Iterable[str | Path | tuple[str, bytes]], accelerator: str = "",
                     accelerators: float | None = None, model: str = "", precision: str = "",
                     fmt: str = BenchmarkFormat.AUTO, curve_id: str = "", skipped: list[str] | None = None,
                     input_tokens: float | None = None, output_tokens: float | None = None) -> pd.DataFrame:
    """Curve points from benchmark files (paths, or (name, bytes) pairs), in the columns of a curve file.

    The runs of every file are named together (:func:`_name_curves`: one id, one configuration; never a curve
    file's id), and the table is held to the curve file's rules (:func:`economics.schema.user_curves.curve_problems`),
    so
    what is written loads. Raises :class:`BenchmarkError` naming the file, the run and the missing flag or bad
    value. With a ``skipped`` list, published rows whose GPU counts contradict their throughputs are named there
    instead of refused.
    """
    flags = Flags(accelerator, accelerators, model, precision, curve_id, input_tokens, output_tokens)
    kept: list[dict[str, str]] = []  # a curve file's points, under their own ids
    new: list[dict[str, str]] = []
    for i, f in enumerate(files):
        if i >= MAX_FILES:
            raise BenchmarkError(f"more than {MAX_FILES:,} files")
        name, data = f if isinstance(f, tuple) else (Path(f).name, _read(Path(f)))
        if len(data) > MAX_FILE_BYTES:  # every way in (the app's upload too) is read to the same bound
            raise BenchmarkError(f"{shown(name)}: {len(data):,} bytes, more than the {MAX_FILE_BYTES:,} a benchmark "
                                 "file may have")
        kind = detect(data, name) if fmt == "auto" else fmt  # told apart once, then read in that format
        if kind == "curves":
            kept.extend(_curve_file_points(data, name))
            continue
        notes: list[str] | None = None if skipped is None else []
        runs = read_runs(data, name, kind, notes)
        if skipped is not None and notes:
            skipped.extend(f"{shown(name)}: {n}" for n in notes)
        new.extend(_points(runs, flags, name, user_curves.sha256_of(data)))
    if not kept and not new:
        raise BenchmarkError("no benchmark files given")
    rows = kept + _name_curves(new, flags.curve_id, {r["curve_id"] for r in kept})
    return _checked_table(rows, [r.pop("_from") for r in rows])


def _curve_file_points(data: bytes, name: str) -> list[dict[str, str]]:
    """A curve file's points as they are (checked by its loader), each with its row (``_from``)."""
    try:
        table = user_curves.read_curve_file(data, name).table
    except user_curves.CurveFileError as exc:
        raise BenchmarkError(str(exc)) from None
    return [{**{str(k): str(v) for k, v in r.items()}, "_from": f"{shown(name)} row {j}"}
            for j, r in enumerate(table.to_dict(orient="records"), start=1)]


def _checked_table(rows: list[dict[str, str]], origins: list[str]) -> pd.DataFrame:
    """The imported points as a table, the same published point in two files counted once, held to the curve
    file's rules: a curve id two curve files give to different configurations is refused, naming both points.
    """
    table = pd.DataFrame(rows, columns=list(user_curves.COLUMNS))
    # the same published point in two files (InferenceX's latest and history rows) is one measurement: counted once,
    # and said (``attrs["duplicates"]``); points that differ in any figure are all kept
    same = [c for c in user_curves.COLUMNS if c not in ("source_file", "source_sha256")]
    dup = table.duplicated(subset=same, keep="first")
    out = table[~dup].reset_index(drop=True)
    kept = [(row, origin) for row, origin, d in zip(rows, origins, dup, strict=True) if not d]
    problems = user_curves.curve_problems([row for row, _ in kept], lambda i: kept[i][1])
    if problems:
        raise BenchmarkError(user_curves.listed(problems))
    out.attrs["duplicates"] = int(dup.sum())
    return out


def _read(path: Path) -> bytes:
    try:
        return read_input_bytes(str(path), MAX_FILE_BYTES)
    except InputError as exc:
        raise BenchmarkError(str(exc)) from None


def curves_csv(table: pd.DataFrame) -> str:
    """A curve table as the CSV text of a curve file (every cell text, the columns in their order)."""
    buf = io.StringIO()
    table.to_csv(buf, index=False, columns=list(user_curves.COLUMNS), lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    return buf.getvalue()
