"""The fuzz bench's ``curves`` stage (a module of ``bench/fuzz.py``; running it on its own does nothing).

Curve files a user brings (``--curves``) and the benchmark files ``import-benchmark`` turns into them, damaged one
or two ways at a time:

- a curve file taken from a real catalog curve (four points of one configuration), with a numeric cell replaced by
  a generated value (the shared generator's notations, plus 1e30, 1e-300, 0, -1, 1e303, 1e309, ``1_000``, non-ASCII
  digits), a configuration cell of one point changed (another accelerator, model, precision, stack, a request
  shape 2x or 1.1x away, another accelerator count), one point's per-user speed copied from another point, an
  unknown or a missing column, a byte-order mark, CRLF line ends; each run as ``evaluate docs/example.csv
  --curves FILE``;
- the vLLM fixture with a numeric field replaced by a hostile JSON number or text, a key repeated, or the whole
  document nested 100,000 deep; each run as ``import-benchmark FILE -o OUT``.

Besides the shared checks, ``mismatch`` counts a curve file whose verdict differs from the stage's own reference:
a numeric cell is good when the scenario field it becomes (``economics.schema.user_curves.FIELD_OF``) parses it and
holds
it within its bounds, and it is > 0; a point of another configuration or a repeated per-user speed under one
``curve_id`` must be refused; everything else here must be accepted. For ``import-benchmark``, a file written must
load back as a curve file (the importer never writes what its own loader refuses).
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
from pathlib import Path

from fuzz_common import ROOT, Stage, bounds_ok, generated_text, run_in_process, stage_rng

from economics.schema import user_curves, values
from economics.schema.scenario import FIELDS

DOCS = ROOT / "docs"
BENCHMARK = ROOT / "tests" / "fixtures" / "benchmarks" / "vllm_serve.json"
NUMBERS = ["1e30", "1e-300", "0", "-1", "1e303", "1e309", "1_000", "\u0661\u0662", "\uff11\uff12", "nan", "inf",
           "12.5", "3", " 7 ", "1e6", "0.001"]
"""Hostile and ordinary numbers every numeric cell is tried with, besides the shared generator's."""
CONFIG_CHANGES = {"accelerator": "b200", "model": "llama-3.1-8b", "precision": "fp4", "serving_stack": "other-stack",
                  "framework": "Other 1.0"}
"""A configuration cell of one point set to another configuration's value (each differs from the base curve's)."""
SHAPE = ("input_tokens", "output_tokens", "accelerator_count")
"""Numeric columns that are part of a curve's configuration: a valid value may still be refused as another one."""


def base_curve() -> tuple[list[str], list[dict[str, str]]]:
    """A real curve of the catalog, as a user's file: its first curve of four or more points, one accelerator
    count, no sweep, marked as the user's own measurement (so counts must not differ between points).
    """
    with (ROOT / "data" / "throughput_curves.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    by_id: dict[str, list[dict[str, str]]] = {}
    for r in rows:
        by_id.setdefault(r["curve_id"], []).append(r)
    for points in by_id.values():
        if len(points) >= 4 and len({p["accelerator_count"] for p in points}) == 1 and len(
                {p["output_tokens_per_s_per_user"] for p in points}) == len(points):
            header = list(points[0])
            return header, [{**p, "confidence": user_curves.OWN} for p in points[:4]]
    raise RuntimeError("no catalog curve of four points at one count")


def _cell_ok(column: str, text: str) -> bool:
    """The reference for a numeric cell: its scenario field's parser and bounds, and > 0."""
    field = user_curves.FIELD_OF.get(column)
    spec = FIELDS[field] if field else FIELDS["output_tokens_per_s_per_accelerator"]  # a rate: finite and > 0
    try:
        x = values.parse(spec, text)
    except values.ValueProblem:
        return False
    if x is values.EMPTY:
        return column not in user_curves.REQUIRED
    x = float(x)
    if not math.isfinite(x) or x <= 0:
        return False
    if field is None:
        return True
    return bounds_ok(spec, x)


def damaged_curve(rng: random.Random) -> tuple[bytes, bool | None, str]:
    """A curve file damaged once or twice: (its bytes, whether it must load (None: either), what was done)."""
    header, points = base_curve()
    points = [dict(p) for p in points]
    good: bool | None = True
    done = []
    for _ in range(rng.choice([1, 1, 2])):
        kind = rng.random()
        i = rng.randrange(len(points))
        if kind < 0.45:
            column = rng.choice([c for c in user_curves.NUMERIC if c in header])
            text = rng.choice(NUMBERS) if rng.random() < 0.5 else generated_text(rng)
            if "\n" in text or "\r" in text or "\x00" in text or '"' in text:
                text = text.replace("\n", " ").replace("\r", " ").replace("\x00", "").replace('"', "")
            points[i][column] = text
            ok = _cell_ok(column, text.strip())
            if ok and column in SHAPE:  # a valid new length or count may also be another configuration
                ok = None
            good = False if good is False or ok is False else None if good is None or ok is None else True
            done.append(f"row {i + 1} {column}={text!r}")
        elif kind < 0.65:
            column = rng.choice(list(CONFIG_CHANGES))
            if points[i][column].lower() != CONFIG_CHANGES[column].lower():
                points[i][column] = CONFIG_CHANGES[column]
                good = False  # one point of another configuration under the curve's id
                done.append(f"row {i + 1} {column} changed")
        elif kind < 0.75:
            factor = rng.choice([2.0, 1.1])
            points[i]["input_tokens"] = f"{float(points[i]['input_tokens']) * factor:g}"
            good = None if factor == 1.1 else False  # 1.1x from the first point may be past 1.25x of another
            done.append(f"row {i + 1} input_tokens x{factor:g}")
        elif kind < 0.85:
            j = (i + 1) % len(points)
            points[i]["output_tokens_per_s_per_user"] = points[j]["output_tokens_per_s_per_user"]
            good = False
            done.append(f"row {i + 1} per-user speed of row {j + 1}")
        elif kind < 0.9:
            points[i]["accelerator_count"] = str(int(float(points[i]["accelerator_count"] or 8)) * 2)
            good = False
            done.append(f"row {i + 1} accelerator_count doubled")
        else:
            done.append("unknown column" if kind < 0.95 else "required column dropped")
            good = False
            drop = "output_tokens_per_s_per_user"
            header = [*header, "mystery"] if kind < 0.95 else [h for h in header if h != drop]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=header, extrasaction="ignore", restval="",
                            lineterminator="\r\n" if rng.random() < 0.2 else "\n")
    writer.writeheader()
    writer.writerows(points)
    data = out.getvalue().encode("utf-8", "surrogatepass")
    if rng.random() < 0.1:
        data = b"\xef\xbb\xbf" + data
    return data, good, "; ".join(done)


def damaged_benchmark(rng: random.Random) -> tuple[bytes, str]:
    """The vLLM fixture damaged once: a numeric field set to a hostile number or text, a repeated key, or nesting."""
    doc = json.loads(BENCHMARK.read_text(encoding="utf-8"))
    numeric = [k for k, v in doc.items() if isinstance(v, int | float) and not isinstance(v, bool)]
    kind = rng.random()
    if kind < 0.7:
        key = rng.choice(numeric)
        doc[key] = rng.choice([1e303, -5, 0, 1e-300, 1e30, -0.0, 2**70, "12", "fast", None, [], {}])
        return json.dumps(doc).encode(), f"{key}={doc[key]!r}"
    if kind < 0.85:
        key = rng.choice(numeric)
        text = json.dumps(doc)
        return (text[:-1] + f', "{key}": 1}}').encode(), f"{key} repeated"
    depth = 100_000
    return ("[" * depth + "]" * depth).encode(), "nested 100,000 deep"


def curve_case(stage: Stage, rng: random.Random, tmp: Path) -> None:
    data, good, what = damaged_curve(rng)
    path = tmp / f"curves{stage.cases}.csv"
    path.write_bytes(data)
    run = run_in_process(["evaluate", str(DOCS / "example.csv"), "--curves", str(path), "-o", str(tmp / "out.csv")])
    extra = []
    if good is True and run.code == 2:
        extra.append(("mismatch", f"a good curve file refused ({what}): {run.err[:300]}"))
    if good is False and run.code != 2:
        extra.append(("mismatch", f"a bad curve file accepted ({what})"))
    stage.record(run, (0, 1, 2), {path.name: data}, extra)


def benchmark_case(stage: Stage, rng: random.Random, tmp: Path) -> None:
    data, what = damaged_benchmark(rng)
    path, out = tmp / f"bench{stage.cases}.json", tmp / f"imported{stage.cases}.csv"
    path.write_bytes(data)
    run = run_in_process(["import-benchmark", str(path), "--accelerator", "h100-sxm", "--accelerators", "8",
                          "--precision", "bf16", "-o", str(out)])
    extra = []
    if run.code == 0:
        try:
            user_curves.read_curve_file(out.read_bytes(), out.name)
        except (user_curves.CurveFileError, OSError) as exc:
            extra.append(("mismatch", f"import-benchmark wrote a file its loader refuses ({what}): {exc}"))
    stage.record(run, (0, 2), {path.name: data[:2000]}, extra)
    out.unlink(missing_ok=True)


def curve_stage(cases: int, seed: int, tmp: Path, quick: bool = False) -> Stage:
    """The curves stage: ``cases`` runs, about three in four a damaged curve file, the rest a damaged benchmark."""
    rng, stage = stage_rng(seed, "curves"), Stage("curves")
    while stage.cases < cases:
        if rng.random() < 0.75:
            curve_case(stage, rng, tmp)
        else:
            benchmark_case(stage, rng, tmp)
    return stage
