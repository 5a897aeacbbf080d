"""Curve files a user brings: their own benchmark runs as throughput curves, known by the SHA-256 of the file.

A curve file is a CSV in the columns of ``data/throughput_curves.csv`` (what ``import-benchmark`` writes): one row per
measured point (per-user output speed, output tokens/s per accelerator) of one accelerator, model, precision (and the
weights', compute's and KV cache's formats where they differ from it: :data:`FORMAT_COLUMNS`, the scenario's fields)
and request shape, with where it came from (tool, version, file and its hash, run date). Loading one checks every cell
(field, row and value named in the message, nothing dropped) and keeps it in memory under its hash; a scenario names
it with ``curves_sha256``, so a link or a CSV of scenarios can refer to a file it cannot carry, and a scenario that
names a file not loaded is refused saying which file it needs.

A figure of a curve is held to what the scenario field it stands for may hold (:data:`FIELD_OF`: the same parser and
bounds, so a point of 1e30 tokens/s is refused as a typed 1e30 is), and a curve is one configuration
(:func:`curve_problems`): every point of one ``curve_id`` has the same accelerator, model, precision and stack, a
request shape within :data:`LENGTH_TOLERANCE` of its first point's, one accelerator count (unless the points are one
published run's sweep of deployment sizes: one ``source``, not ``own measurement``) and a per-user speed of its own.

The store is content-addressed (the same bytes, the same hash, the same curves), so a figure computed from a hash
never changes; it keeps the :data:`MAX_FILES` files loaded last.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import hashlib
import io
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace

import pandas as pd

from economics import catalog
from economics.schema import values
from economics.schema.scenario import FIELDS, FORMAT_FIELDS, FieldSpec, pair_problem, split_precision
from economics.schema.values import FieldKind, ValueProblem, escape_controls, shown, shown_path

REQUIRED = ("accelerator", "model", "precision", "input_tokens", "output_tokens", "output_tokens_per_s_per_user",
            "output_tokens_per_s_per_accelerator")
"""Columns every curve file has: what a point is of, and its two coordinates."""
NUMERIC = ("accelerator_count", "input_tokens", "output_tokens", "output_tokens_per_s_per_user",
           "output_tokens_per_s_per_accelerator", "time_to_first_token_s", "concurrency", "request_rate_per_s",
           "tensor_parallel", "pipeline_parallel", "expert_parallel", "nodes", "prefill_accelerators",
           "decode_accelerators")
"""Numeric columns: finite and > 0 where given (every one of them counts or rates something), and within the
bounds of the scenario field each stands for (:data:`FIELD_OF`)."""
FIELD_OF = {"accelerator_count": "accelerator_count", "prefill_accelerators": "accelerator_count",
            "decode_accelerators": "decode_accelerator_count", "input_tokens": "input_tokens_per_request",
            "output_tokens": "output_tokens_per_request",
            "output_tokens_per_s_per_user": "target_output_tokens_per_s_per_user",
            "output_tokens_per_s_per_accelerator": "output_tokens_per_s_per_accelerator",
            "concurrency": "concurrent_users_per_replica", "request_rate_per_s": "demand_requests_per_s",
            "tensor_parallel": "accelerators_per_replica", "pipeline_parallel": "accelerators_per_replica",
            "expert_parallel": "accelerators_per_replica"}
"""The scenario field whose value rules (:func:`economics.schema.values.parse`: whole numbers where it holds them) and
bounds each numeric column is held to: a curve's figure becomes that field's value, so it may hold what the field
may. Time to first token and nodes have no such field: finite and > 0."""
FORMAT_COLUMNS = FORMAT_FIELDS
"""``weight_precision``, ``compute_precision``, ``kv_cache_precision``: a point's formats apart from ``precision``
(weight-only quantization such as W4A16, an FP8 KV cache on BF16 weights), read with the scenario's fields' parser and
choices, empty = ``precision``'s exactly as a scenario's; the weights and compute must be a pair the accelerator runs
(:func:`economics.schema.scenario.pair_problem`)."""
CONFIGURATION = ("accelerator", "model", "precision", *FORMAT_COLUMNS, "framework", "serving_stack",
                 "speculative_decoding", "disaggregated")
"""What every point of one curve shares, with its request shape (:data:`LENGTH_TOLERANCE`) and accelerator count."""
OWN = "own measurement"
"""The ``confidence`` of a point you measured (what ``import-benchmark`` writes for your runs)."""
LENGTH_TOLERANCE = 1.25
"""A measured curve applies to workloads whose input and output lengths are within this factor of its own (its first
point's); the points of one curve lie within it of that first point."""
TEXT = ("curve_id", *FORMAT_COLUMNS, "point_kind", "framework", "serving_stack", "data_parallel_attention",
        "speculative_decoding", "disaggregated", "holdout_group", "token_basis", "tool", "tool_version", "source_file",
        "source_sha256", "run_date", "confidence", "source", "source_date", "note")
CATALOG_COLUMNS = ("curve_id", "accelerator", "accelerator_count", "model", "precision", *FORMAT_COLUMNS,
                   "input_tokens", "output_tokens", "output_tokens_per_s_per_user",
                   "output_tokens_per_s_per_accelerator", "point_kind", "framework", "serving_stack",
                   "time_to_first_token_s", "concurrency", "tensor_parallel", "pipeline_parallel", "expert_parallel",
                   "data_parallel_attention", "speculative_decoding", "disaggregated", "nodes", "holdout_group",
                   "confidence", "source", "source_date", "note")
"""The columns of data/throughput_curves.csv, in its order."""
PROVENANCE_COLUMNS = ("request_rate_per_s", "prefill_accelerators", "decode_accelerators", "token_basis", "tool",
                      "tool_version", "source_file", "source_sha256", "run_date")
"""What an imported point adds: the load it ran at, a disaggregated run's pools, how its throughput was converted,
and the file it came from."""
COLUMNS = (*CATALOG_COLUMNS, *PROVENANCE_COLUMNS)
"""Every column a curve file may have, in the order ``import-benchmark`` writes them."""
assert set(COLUMNS) == set(NUMERIC) | set(TEXT) | set(REQUIRED)
PRECISIONS = FIELDS["precision"].choices
"""``precision``: the scenario's shorthand for the weights' and compute's format equal (bf16, fp8, fp4)."""


def _column_spec(column: str) -> FieldSpec:
    """The rules of a numeric column: its scenario field's (:data:`FIELD_OF`), renamed, a lower bound of >= 0 made
    > 0 (a curve's request length divides its neighbours' to match a scenario: 0 is no length); else finite > 0.
    """
    field = FIELD_OF.get(column)
    if field is None:
        return FieldSpec(name=column, kind=FieldKind.FLOAT, optional=True, default=None, unit="", description="",
                         group="curves", gt=0.0)
    spec = FIELDS[field]
    if spec.ge is not None and spec.ge <= 0:
        spec = replace(spec, ge=None, gt=0.0)
    return replace(spec, name=column)


SPECS = {column: _column_spec(column) for column in NUMERIC}
"""Each numeric column's rules, from the scenario's fields (one set of bounds everywhere)."""
MAX_FILES = 32
MAX_BYTES = 20_000_000
MAX_ROWS = 100_000
MAX_PROBLEMS_SHOWN = 20
SHA256 = re.compile(r"[0-9a-f]{64}")


class CurveFileError(ValueError):
    """A curve file that cannot be used; the message names each bad cell (row, field, value) or the file's fault."""


@dataclass(frozen=True)
class CurveFile:
    """A checked curve file: its name as given, the SHA-256 of its bytes and its rows (text cells, as read)."""

    name: str
    sha256: str
    table: pd.DataFrame = dataclasses.field(compare=False)
    """Its rows, read from its bytes: equal and hashed by name and hash alone, which fix them."""
    data: bytes = dataclasses.field(default=b"", compare=False)
    """The file's bytes (what another process loads to hold the same curves under the same hash)."""

    @property
    def label(self) -> str:
        """``name (sha256 abcdef123456)``: how results and pages name the file (escaped for a terminal)."""
        return f"{escape_controls(self.name)} (sha256 {self.sha256[:12]})"


_lock = threading.Lock()
_store: OrderedDict[str, CurveFile] = OrderedDict()


def sha256_of(data: bytes) -> str:
    """The hex SHA-256 of a file's bytes: the id a scenario's ``curves_sha256`` holds.

    >>> sha256_of(b"")[:12]
    'e3b0c44298fc'
    """
    return hashlib.sha256(data).hexdigest()


def read_curve_file(data: bytes, name: str = "curves.csv") -> CurveFile:
    """Check a curve file's bytes (CSV with a header of :data:`COLUMNS`) and return it; raises
    :class:`CurveFileError` naming every bad cell (the first :data:`MAX_PROBLEMS_SHOWN`, then a count).
    """
    if len(data) > MAX_BYTES:
        raise CurveFileError(f"{shown(name)}: {len(data):,} bytes, more than the {MAX_BYTES:,} a curve file may have")
    if b"\x00" in data:
        raise CurveFileError(f"{shown(name)}: not a CSV file (it contains NUL bytes)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CurveFileError(f"{shown(name)}: not UTF-8 text (undecodable byte at position {exc.start})") from None
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or not any(cell.strip() for cell in rows[0]):
        raise CurveFileError(f"{shown(name)}: empty (no header row)")
    header = [h.strip() for h in rows[0]]
    unknown = [h for h in header if h not in COLUMNS]
    missing = [c for c in REQUIRED if c not in header]
    duplicate = sorted({h for h in header if header.count(h) > 1})
    if unknown or missing or duplicate:
        parts = [f"unknown columns {', '.join(shown(u) for u in unknown[:10])}" if unknown else "",
                 f"missing columns {', '.join(missing)}" if missing else "",
                 f"duplicate columns {', '.join(shown(d) for d in duplicate)}" if duplicate else ""]
        raise CurveFileError(f"{shown(name)}: not a curve file: " + "; ".join(p for p in parts if p)
                             + f" (a curve file has the columns {', '.join(COLUMNS)})")
    body = [r for r in rows[1:] if any(cell.strip() for cell in r)]
    if not body:
        raise CurveFileError(f"{shown(name)}: no rows")
    if len(body) > MAX_ROWS:
        raise CurveFileError(f"{shown(name)}: {len(body):,} rows, more than the {MAX_ROWS:,} a curve file may have")
    problems: list[str] = []
    records = []
    known = {"accelerator": catalog.accelerator_ids(), "model": list(catalog.models().index)}
    for i, r in enumerate(body, start=1):
        if len(r) != len(header):
            problems.append(f"row {i}: {len(r)} cells, the header has {len(header)}")
            continue
        rec = {h: cell.strip() for h, cell in zip(header, r, strict=True)}
        problems.extend(f"row {i}: {p}" for p in point_problems(rec, known))
        records.append(rec)
    if problems:
        raise CurveFileError(f"{shown(name)}: " + listed(problems))
    points = [{**dict.fromkeys(COLUMNS, ""), **rec} for rec in records]
    for point in points:
        point["curve_id"] = point["curve_id"] or "curve"
    problems = curve_problems(points, lambda i: f"row {i + 1}")
    if problems:
        raise CurveFileError(f"{shown(name)}: " + listed(problems))
    table = pd.DataFrame(points, columns=list(COLUMNS))
    return CurveFile(name, sha256_of(data), table, data)


def listed(problems: list[str]) -> str:
    """Problems joined, the first :data:`MAX_PROBLEMS_SHOWN` of them and a count of the rest."""
    more = f"; … and {len(problems) - MAX_PROBLEMS_SHOWN:,} more" if len(problems) > MAX_PROBLEMS_SHOWN else ""
    return "; ".join(problems[:MAX_PROBLEMS_SHOWN]) + more


def curve_problems(records: list[dict[str, str]], where: Callable[[int], str]) -> list[str]:
    """Points that do not belong to their curve (text cells in :data:`COLUMNS`, one record a point; ``where(i)``
    names the point at 0-based position ``i``): each point of a ``curve_id`` against its first point, in
    :data:`CONFIGURATION`, request shape and accelerator count, and a per-user speed measured twice. Each message
    names the curve, both rows and what differs; a curve that mixed them would be read as one front (a 512-token
    scenario interpolated between runs at 512 and 16,000 tokens).
    """
    curves: dict[str, list[int]] = {}
    for i, rec in enumerate(records):
        curves.setdefault(rec["curve_id"], []).append(i)
    out = []
    for cid, rows in curves.items():
        first, curve, seen = records[rows[0]], f"curve {_cell(cid)}", dict[float, int]()
        sweep = _published_sweep([records[i] for i in rows])
        for i in rows[1:]:
            differ = _differences(first, records[i], sweep)
            if differ:
                out.append(f"{curve}: {where(rows[0])} and {where(i)} differ in {'; '.join(differ)}: a curve is one "
                           "accelerator, count, model, precision, request shape and stack (give the points of "
                           "another configuration their own curve_id)")
        for i in rows:
            speed = records[i]["output_tokens_per_s_per_user"]
            earlier = seen.setdefault(float(speed), i) if speed != "" else i
            if earlier != i:
                out.append(f"{curve}: {where(earlier)} and {where(i)} are both at {_cell(speed)} output tokens/s per "
                           "user: a curve has one throughput at each per-user speed (keep one, or give the other "
                           "its own curve_id)")
    return out


def _published_sweep(points: list[dict[str, str]]) -> bool:
    """Whether a curve's points are one published run (one ``source``, none of them ``own measurement``): such a
    run's sweep of deployment sizes (InferenceX's TP/EP and GPU counts) is one front; your own runs are one count.
    """
    sources = {p["source"] for p in points}
    return len(sources) == 1 and "" not in sources and all(p["confidence"] != OWN for p in points)


def _differences(first: dict[str, str], rec: dict[str, str], sweep: bool) -> list[str]:
    """How a point's configuration differs from its curve's first point's: ``column first against this``."""
    out = [f"{c} {_cell(first[c])} against {_cell(rec[c])}" for c in CONFIGURATION if first[c] != rec[c]]
    for c in ("input_tokens", "output_tokens"):
        a, b = first[c], rec[c]
        if (a == "") != (b == "") or (a != "" and max(float(a) / float(b), float(b) / float(a)) > LENGTH_TOLERANCE):
            out.append(f"{c} {_cell(a)} against {_cell(b)} (more than {LENGTH_TOLERANCE:g}x apart)")
    a, b = first["accelerator_count"], rec["accelerator_count"]
    if (a == "") != (b == "") or (a != "" and float(a) != float(b) and not sweep):
        out.append(f"accelerator_count {_cell(a)} against {_cell(b)} (counts differ only between the points "
                   f"of one published run's sweep of deployment sizes: one source, not {OWN})")
    return out


def _cell(text: str) -> str:
    """A cell in a message: quoted, or ``empty``."""
    return f"'{shown(text)}'" if text else "empty"


def point_problems(rec: dict[str, str], known: dict[str, list[str]] | None = None) -> list[str]:
    """What is wrong with one point's cells, each naming its field and value; ids and the precisions are
    lower-cased in ``rec`` (``known``: the catalog ids, read from the catalog when not given).
    """
    known = known or {"accelerator": catalog.accelerator_ids(), "model": list(catalog.models().index)}
    out = []
    for field, ids in known.items():
        value = rec[field].lower()
        if value not in ids:
            out.append(catalog.unknown_id_message(field, shown(rec[field]), ids))
        rec[field] = value
    rec["precision"] = rec["precision"].lower()
    if rec["precision"] not in PRECISIONS:
        out.append(f"precision: {shown(rec['precision'])} is not one of {', '.join(PRECISIONS)}")
    out.extend(_format_problems(rec, known["accelerator"]))
    for column in NUMERIC:
        cell = rec.get(column, "")
        offline = column == "output_tokens_per_s_per_user" and rec.get("point_kind", "") == "offline"
        if cell == "" and (column not in REQUIRED or offline):  # a maximum-throughput run has no per-user speed
            continue
        problem = _number_problem(column, cell)
        if problem:
            out.append(f"{column}: {problem}")
    return out


def _format_problems(rec: dict[str, str], accelerators: list[str]) -> list[str]:
    """A point's :data:`FORMAT_COLUMNS`, each read as the scenario reads its field (lower-cased in ``rec``), and its
    weights and compute held to the pairs its accelerator runs (the scenario's rule, checked once the cells read).
    """
    out = []
    for column in FORMAT_COLUMNS:
        try:
            value = values.parse(FIELDS[column], rec.get(column, ""))
        except ValueProblem as exc:
            out.append(f"{column}: {exc}")
            continue
        rec[column] = "" if value is values.EMPTY else str(value)
    if out or rec["precision"] not in PRECISIONS or rec["accelerator"] not in accelerators:
        return out
    w, k = (str(x[0]) for x in split_precision([rec["precision"]], [rec.get("weight_precision", "")],
                                                 [rec.get("compute_precision", "")]))
    field = "weight_precision" if rec.get("weight_precision", "") else "compute_precision"
    problem = pair_problem(field, rec["accelerator"], "accelerator", w, k)
    return [problem] if problem else []


@functools.lru_cache(maxsize=4096)
def _number_problem(column: str, cell: str) -> str:
    """Why a numeric cell is not a value of its column ('' when it is): the scenario field's parser and bounds
    (remembered: a file repeats its counts and lengths on every row).
    """
    spec = SPECS[column]
    try:
        x = values.parse(spec, cell)
    except ValueProblem as exc:
        return str(exc)
    unit = f" [{spec.unit}]" if spec.unit and spec.unit != "-" else ""
    if x is values.EMPTY:
        return f"empty; needs a number {spec.bounds_text()}{unit}"
    if spec.within(x):
        return ""
    field = FIELD_OF.get(spec.name, spec.name)
    whose = f" (the bounds of the scenario's {field})" if field != spec.name else ""
    return f"must be {spec.bounds_text()}{unit}, got {shown(cell)}{whose}"


def read_bounded(path: str) -> bytes:
    """A curve file's bytes from a path, refused before reading when larger than :data:`MAX_BYTES`."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise CurveFileError(f"cannot read {shown_path(path)}: {exc.strerror or type(exc).__name__}") from None
    if len(data) > MAX_BYTES:
        raise CurveFileError(f"{shown_path(path)}: more than the {MAX_BYTES:,} bytes a curve file may have")
    return data


def register(curve_file: CurveFile) -> CurveFile:
    """Keep a checked curve file under its hash (the newest :data:`MAX_FILES`); returns the file kept.

    A hash already held keeps the name it was first loaded under (the same bytes loaded again as ``copy.csv`` are
    the file held, named as before), as the store keeps a curve's first name: results name a file by its label, and
    the results remembered per hash (here and in the app) must name it as one that is computed afresh would.
    """
    with _lock:
        held = _store.setdefault(curve_file.sha256, curve_file)
        _store.move_to_end(curve_file.sha256)
        while len(_store) > MAX_FILES:
            _store.popitem(last=False)
    return held


def load(data: bytes, name: str = "curves.csv") -> CurveFile:
    """:func:`read_curve_file` and :func:`register`: the file checked and kept (the one held already under its hash,
    with the name it was first loaded under, if any), ready for ``curves_sha256``.
    """
    return register(read_curve_file(data, name))


_lookup: Callable[[str], CurveFile | None] | None = None


def set_lookup(lookup: Callable[[str], CurveFile | None] | None) -> None:
    """Where a hash not held in memory is looked for next (``economics.store`` sets its stored curves here, so a link
    naming a curve resolves after a restart); None: memory only. The lookup returns a checked file or None.
    """
    global _lookup
    _lookup = lookup


def loaded_here(sha256: str) -> CurveFile | None:
    """The curve file kept in this process's memory under this hash, or None (no lookup elsewhere)."""
    with _lock:
        return _store.get(sha256)


def loaded(sha256: str) -> CurveFile | None:
    """The curve file kept under this hash (in memory, else where :func:`set_lookup` says, then kept), or None."""
    held = loaded_here(sha256)
    lookup = _lookup
    if held is None and lookup is not None and SHA256.fullmatch(sha256):
        held = lookup(sha256)
        if held is not None:
            held = register(held)
    return held


def missing_message(sha256: str) -> str:
    """What a scenario naming a file that is not loaded is told (field, value and what to do)."""
    if not SHA256.fullmatch(sha256):
        return f"curves_sha256: {shown(sha256)} is not a SHA-256 (64 hexadecimal digits)"
    return (f"curves_sha256: this scenario's throughput comes from a curve file with SHA-256 {sha256[:12]}… that is "
            "not loaded; pass it with --curves FILE (or upload it on the Throughput page)")


def load_curves(source: str | bytes, name: str = "") -> CurveFile:
    """A curve file (``import-benchmark`` output) read from a path or bytes, checked and kept under its SHA-256:
    set a scenario's ``curves_sha256`` to ``.sha256`` to use it (``economics.load_curves``). Raises
    :class:`CurveFileError` naming each bad cell (row, field, value).
    """
    if isinstance(source, bytes):
        return load(source, name or "curves.csv")
    return load(read_bounded(source), name or source.rsplit("/", 1)[-1])
