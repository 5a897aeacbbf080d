"""Save and load 10,000 scenario versions in the store (SQLite, and PostgreSQL when TOKEN_ECONOMICS_BENCH_PG_URL
names an empty database), against the CSV reader reading and checking the same rows, in one run.

    .venv/bin/python bench/store.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402

from economics.io.scenario_files import to_csv_text  # noqa: E402
from economics.io.tables import read_table  # noqa: E402
from economics.schema.validation import validate  # noqa: E402
from economics.store import Store  # noqa: E402

VERSIONS = 10_000
SCENARIOS = 100  # 100 scenarios of 100 versions each


def rows() -> list[tuple[str, dict[str, object]]]:
    """10,000 versions: each scenario's electricity price stepped version by version."""
    return [(f"scenario {i % SCENARIOS}", {"accelerator": "h100-sxm", "ownership": "rent", "accelerator_count": 8,
                                           "rent_usd_per_accelerator_hour": 2.0,
                                           "output_tokens_per_s_per_accelerator": 1000.0 + i})
            for i in range(VERSIONS)]


def main() -> None:
    items = rows()
    with tempfile.TemporaryDirectory() as folder:
        csv_path = Path(folder) / "rows.csv"
        csv_path.write_text(to_csv_text(pd.DataFrame([{"name": n, **f} for n, f in items])))
        start = time.perf_counter()
        validate(read_table(str(csv_path)))
        csv_s = time.perf_counter() - start
        print(f"CSV reader (read + check) {VERSIONS:,} rows: {csv_s:.3f} s")
        urls = {"sqlite": f"sqlite:///{folder}/bench.sqlite"}
        if os.environ.get("TOKEN_ECONOMICS_BENCH_PG_URL"):
            urls["postgresql"] = os.environ["TOKEN_ECONOMICS_BENCH_PG_URL"]
        for engine, url in urls.items():
            store = Store(url)
            start = time.perf_counter()
            store.save_versions(items, saved_by="bench")
            saved_s = time.perf_counter() - start
            start = time.perf_counter()
            keys, frame = store.scenario_table(all_versions=True)
            loaded_s = time.perf_counter() - start
            assert len(keys) == VERSIONS and frame is not None and len(frame) == VERSIONS
            print(f"{engine}: save {VERSIONS:,} versions {saved_s:.3f} s ({saved_s / csv_s:.1f}x the CSV reader), "
                  f"load and check them {loaded_s:.3f} s ({loaded_s / csv_s:.1f}x)")


if __name__ == "__main__":
    main()
