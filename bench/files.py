"""Files at the engine's speed: end-to-end file evaluation against the engine alone, measured in one run.

Prints, each in a fresh child process (peak resident memory of that process):
  - engine only: `evaluate_with_report` on 1M rows already read (text cells, as from a CSV) -> the reference time;
  - 1M-row CSV -> CSV with `python -m economics evaluate` (target <= 5x the engine, <= 1 GB peak);
  - 10M-row CSV streamed -> CSV (target <= 1.5 GB peak; ratio to 10x the 1M engine time);
  - Parquet -> Parquet, 1M rows (target <= 2x the engine on the same rows read from Parquet);
  - a 10k-row upload (bytes in memory) to results: read, evaluate, result CSV bytes (target <= 3 s);
and the load average, since the machine is shared.

Usage: python bench/files.py [--rows 1000000] [--big-rows 10000000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ACCS = np.array(["a100-sxm", "h100-sxm", "h200-sxm", "b200", "mi300x", "mi325x"])


def frame(n: int, seed: int) -> pd.DataFrame:
    """``n`` varied scenarios, 22 columns (owned and rented, fixed and demand-sized fleets, prices)."""
    rng = np.random.default_rng(seed)
    fixed = rng.random(n) < 0.5
    return pd.DataFrame({
        "name": [f"s{seed}-{i}" for i in range(n)],
        "accelerator": ACCS[rng.integers(0, len(ACCS), n)],
        "ownership": np.where(rng.random(n) < 0.6, "own", "rent"),
        "accelerator_count": np.where(fixed, rng.integers(8, 20000, n).astype(str), ""),
        "accelerator_price_usd": rng.uniform(10_000, 60_000, n).round(2),
        "rent_usd_per_accelerator_hour": rng.uniform(1.0, 6.0, n).round(3),
        "depreciation_years": rng.integers(3, 7, n),
        "cost_of_capital": rng.uniform(0.04, 0.12, n).round(4),
        "electricity_usd_per_kwh": rng.uniform(0.03, 0.25, n).round(4),
        "pue": rng.uniform(1.1, 1.8, n).round(3),
        "input_tokens_per_request": rng.integers(100, 20_000, n),
        "output_tokens_per_request": rng.integers(50, 2_000, n),
        "prefix_cache_hit_rate": rng.uniform(0, 0.8, n).round(3),
        "output_tokens_per_s_per_accelerator": rng.uniform(100, 15_000, n).round(1),
        "input_tokens_per_s_per_accelerator": rng.uniform(2_000, 80_000, n).round(1),
        "demand_output_tokens_per_day": np.where(fixed, "", rng.uniform(1e6, 1e11, n).round(0).astype(str)),
        "peak_to_average": rng.uniform(1.0, 3.0, n).round(3),
        "price_usd_per_m_input_tokens": rng.uniform(0.05, 3, n).round(3),
        "price_usd_per_m_output_tokens": rng.uniform(0.2, 15, n).round(3),
        "price_usd_per_m_cached_input_tokens": rng.uniform(0.01, 1, n).round(3),
        "colocation_usd_per_kw_month": rng.uniform(100, 250, n).round(2),
        "maintenance_fraction_per_year": rng.uniform(0.01, 0.05, n).round(3),
    })


def write_csv(path: Path, rows: int, block: int = 500_000) -> None:
    """A CSV of ``rows`` scenarios, written block by block (pyarrow's writer; the file is the input, not timed)."""
    with pa.OSFile(str(path), "wb") as sink:
        writer = None
        for start in range(0, rows, block):
            table = pa.Table.from_pandas(frame(min(block, rows - start), start), preserve_index=False)
            table = table.cast(pa.schema([(f.name, pa.string()) for f in table.schema]))
            if writer is None:
                writer = pacsv.CSVWriter(sink, table.schema,
                                         write_options=pacsv.WriteOptions(quoting_style="none"))
            writer.write_table(table)
        if writer is not None:
            writer.close()


CHILD = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
kind, args = sys.argv[1], sys.argv[2:]
import economics.cli  # imports (about a second) are not the file path's cost; printed apart
start = time.perf_counter()
if kind == "engine":
    import pandas as pd
    from economics.io.tables import read_chunks
    from economics.engine.batch import evaluate_with_report
    df = pd.concat(list(read_chunks(args[0])), ignore_index=True)
    start = time.perf_counter()
    evaluate_with_report(df)
elif kind == "cli":
    from economics.cli import main
    code = main(args)
    assert code in (0, 1), code
elif kind == "upload":
    import io
    from economics.io.tables import read_chunks, stream, TableWriter
    from economics.io.one_row import evaluate_chunk as _evaluate_chunk
    data = open(args[0], "rb").read()
    start = time.perf_counter()
    out = io.BytesIO()
    totals = stream(read_chunks(data), _evaluate_chunk, TableWriter("-", "csv", out))
    assert totals.rows == int(args[1]) and out.getvalue()
seconds = time.perf_counter() - start
print(json.dumps({{"seconds": seconds, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def child(kind: str, *args: str) -> dict[str, float]:
    """Run one measurement in a fresh, niced Python process; its wall time and peak RSS."""
    code = CHILD.format(root=str(ROOT))
    proc = subprocess.run(["nice", sys.executable, "-c", code, kind, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=3600)
    if proc.returncode != 0:
        raise SystemExit(f"{kind} failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--big-rows", type=int, default=10_000_000)
    parser.add_argument("--upload-rows", type=int, default=10_000)
    parser.add_argument("--keep", help="directory for the generated files (default: a temporary one)")
    args = parser.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-files-"))
    work.mkdir(parents=True, exist_ok=True)
    csv1, big, up = work / "rows.csv", work / "big.csv", work / "upload.csv"
    write_csv(csv1, args.rows)
    write_csv(up, args.upload_rows)
    pq.write_table(pacsv.read_csv(csv1, convert_options=pacsv.ConvertOptions(
        column_types={"accelerator_count": pa.float64(), "demand_output_tokens_per_day": pa.float64()})),
        work / "rows.parquet")
    load_before = os.getloadavg()
    print(f"files in {work}: {args.rows:,} rows, {csv1.stat().st_size / 1e6:,.0f} MB CSV, "
          f"{(work / 'rows.parquet').stat().st_size / 1e6:,.0f} MB Parquet; {os.cpu_count()} CPUs")

    engine = child("engine", str(csv1))
    e2e = child("cli", "evaluate", str(csv1), "-o", str(work / "out.csv"))
    engine_pq = child("engine", str(work / "rows.parquet"))
    pq2pq = child("cli", "evaluate", str(work / "rows.parquet"), "-o", str(work / "out.parquet"))
    upload = child("upload", str(up), str(args.upload_rows))
    to_json = child("cli", "evaluate", str(csv1), "-o", str(work / "out.json"))
    print(f"engine only, {args.rows:,} rows from CSV: {engine['seconds']:.2f} s")
    print(f"CSV -> CSV end to end, {args.rows:,} rows: {e2e['seconds']:.2f} s = "
          f"{e2e['seconds'] / engine['seconds']:.2f}x the engine (target <= 5x), peak {e2e['peak_mb']:,.0f} MB "
          f"(target <= 1,024 MB)")
    print(f"engine only, {args.rows:,} rows from Parquet: {engine_pq['seconds']:.2f} s")
    print(f"Parquet -> Parquet end to end: {pq2pq['seconds']:.2f} s = "
          f"{pq2pq['seconds'] / engine_pq['seconds']:.2f}x the engine (target <= 2x), peak {pq2pq['peak_mb']:,.0f} MB")
    print(f"CSV -> JSON end to end, {args.rows:,} rows (written record by record): {to_json['seconds']:.2f} s = "
          f"{to_json['seconds'] / engine['seconds']:.2f}x the engine, peak {to_json['peak_mb']:,.0f} MB "
          f"({(work / 'out.json').stat().st_size / 1e9:.2f} GB of JSON)")
    print(f"{args.upload_rows:,}-row upload to results (read bytes, evaluate, result CSV): {upload['seconds']:.2f} s "
          f"(target <= 3 s), peak {upload['peak_mb']:,.0f} MB")
    if args.big_rows:
        write_csv(big, args.big_rows)
        streamed = child("cli", "evaluate", str(big), "-o", str(work / "big-out.csv"))
        reference = engine["seconds"] * args.big_rows / args.rows
        print(f"streamed CSV -> CSV, {args.big_rows:,} rows ({big.stat().st_size / 1e9:.2f} GB): "
              f"{streamed['seconds']:.1f} s = {streamed['seconds'] / reference:.2f}x the engine's --rows time scaled "
              f"x{args.big_rows / args.rows:g}, peak {streamed['peak_mb']:,.0f} MB (target <= 1,536 MB)")
        big.unlink()
        (work / "big-out.csv").unlink()
    print(f"load average before / after: {' '.join(f'{x:.2f}' for x in load_before)} / "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not args.keep:
        shutil.rmtree(work)  # about 1.3 GB of inputs and outputs


if __name__ == "__main__":
    main()
