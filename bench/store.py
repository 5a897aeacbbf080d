"""The store's speed, in one run: save and load 10,000 scenario versions on SQLite and on a real PostgreSQL (started
here with Debian's binaries through tests/pg_ctl.sh, as the tests start theirs; or TOKEN_ECONOMICS_BENCH_PG_URL
naming an empty database), each as a ratio to the CSV reader reading and checking the same rows; and the Library
page holding 10,000 scenarios in a real headless Chromium, its open time (and a search) as a ratio to the one-widget
Streamlit floor of bench/app_latency.py, measured next to it.

    .venv/bin/python bench/store.py [--no-postgres] [--no-page] [--opens 5]

It prints figures and ratios (the issue's target for the page: at most 1.5x the floor); it asserts nothing about
time.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402

from bench.app_latency import (  # noqa: E402
    CHROMIUM_ARGS,
    HOST,
    IDLE_JS,
    WAIT_TIMEOUT_MS,
    Floor,
    free_port,
    percentile,
    settle,
    start_server,
    stop,
)
from economics.io.scenario_files import to_csv_text  # noqa: E402
from economics.io.tables import read_table  # noqa: E402
from economics.schema.validation import validate  # noqa: E402
from economics.store import Store  # noqa: E402
from economics.store.database import URL_VARIABLE  # noqa: E402

# Resolves once the page's renderer has had an idle moment (at most 2 s).
QUIET_JS = "() => new Promise(r => requestIdleCallback(() => r(), {timeout: 2000}))"
VERSIONS = 10_000
SCENARIOS = 100  # 100 scenarios of 100 versions each
PG_CTL = Path(__file__).resolve().parent.parent / "tests" / "pg_ctl.sh"


def rows() -> list[tuple[str, dict[str, object]]]:
    """10,000 versions: each scenario's measured throughput stepped version by version."""
    return [(f"scenario {i % SCENARIOS}", {"accelerator": "h100-sxm", "ownership": "rent", "accelerator_count": 8,
                                           "rent_usd_per_accelerator_hour": 2.0,
                                           "output_tokens_per_s_per_accelerator": 1000.0 + i})
            for i in range(VERSIONS)]


@contextlib.contextmanager
def postgres(folder: str) -> Iterator[str]:
    """A PostgreSQL server of its own on 127.0.0.1 (pytest-postgresql's executor, tests/pg_ctl.sh), an empty
    database's URL; stopped when the block ends.
    """
    import psycopg
    from pytest_postgresql.executors.proc import PostgreSQLExecutor

    port, base = free_port(), Path(folder) / f"pg-{uuid.uuid4().hex[:8]}"
    base.mkdir()
    server = PostgreSQLExecutor(executable=str(PG_CTL), host=HOST, port=port, datadir=str(base / "data"),
                                unixsocketdir=str(base), logfile=str(base / "log"), startparams="-w",
                                dbname="bench", user="postgres")
    server.start()
    try:
        server.wait_for_postgres()
        with psycopg.connect(host=HOST, port=port, user="postgres", dbname="postgres", autocommit=True) as conn:
            conn.execute('CREATE DATABASE "bench"')
        yield f"postgresql+psycopg://postgres@{HOST}:{port}/bench"
    finally:
        server.stop()


def csv_seconds(items: list[tuple[str, dict[str, object]]], folder: str) -> float:
    """The CSV reader reading and checking the same rows (the reference of every ratio)."""
    csv_path = Path(folder) / "rows.csv"
    csv_path.write_text(to_csv_text(pd.DataFrame([{"name": n, **f} for n, f in items])))
    start = time.perf_counter()
    validate(read_table(str(csv_path)))
    return time.perf_counter() - start


def save_and_load(engine: str, url: str, items: list[tuple[str, dict[str, object]]], csv_s: float) -> None:
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
    store.engine.dispose()


def timed_open(page: Any, url: str, ready: Any) -> float:
    """Seconds from asking for ``url`` until its run has finished with ``ready`` (a locator) visible. Then, outside
    the clock, until the page has drawn and its renderer is idle, so that no page's tail is charged to the next."""
    start = time.perf_counter()
    page.goto(url)
    ready.first.wait_for(state="visible", timeout=WAIT_TIMEOUT_MS)
    settle(page)
    took = time.perf_counter() - start
    page.evaluate(IDLE_JS)
    page.evaluate(QUIET_JS)
    return took


def library_page(folder: str, opens: int) -> None:
    """The Library page with 10,000 scenarios: its open time and a search, each as a ratio to the floor's."""
    from playwright.sync_api import sync_playwright

    url = f"sqlite:///{folder}/library.sqlite"
    Store(url).save_versions([(f"scenario {i:05d}", f) for i, (_, f) in enumerate(rows())], saved_by="bench")
    executable = shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as p, tempfile.TemporaryFile() as log, tempfile.TemporaryFile() as floor_log:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, timeout=WAIT_TIMEOUT_MS)
        floor, proc = Floor(browser, folder, floor_log), None
        try:
            os.environ[URL_VARIABLE] = url  # the app's server reads the store of 10,000
            port = free_port()
            proc = start_server("app.py", port, log)
            measure_library(browser, f"http://{HOST}:{port}", floor, opens)
        finally:
            floor.close()
            stop(proc)
            browser.close()


def measure_library(browser: Any, app: str, floor: Floor, opens: int) -> None:
    """Open the floor, the floor by a page's path, the Data page and the Library page in turn, ``opens`` rounds (so
    load that comes and goes weighs on all alike), each in a tab of its own; the medians and their ratios."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    timed_open(page, f"{app}/library", page.get_by_text("10,000 scenarios"))  # warm: the first run imports
    data_page = browser.new_page(viewport={"width": 1400, "height": 900})
    sub_page = browser.new_page()
    floor_url = floor.page.url
    floor_ready, library_ready = floor.page.get_by_test_id("stMetricValue"), page.get_by_text("10,000 scenarios")
    times: dict[str, list[float]] = {"floor": [], "sub": [], "data": [], "library": []}
    for round_ in range(opens + 1):  # round 0 warms each tab, untimed
        times["floor"].append(timed_open(floor.page, floor_url, floor_ready))
        times["sub"].append(timed_open(sub_page, f"{floor_url.rstrip('/')}/page",
                                       sub_page.get_by_test_id("stMetricValue")))
        times["data"].append(timed_open(data_page, f"{app}/data",
                                        data_page.locator("h1").filter(has_text="Data and sources")))
        times["library"].append(timed_open(page, f"{app}/library", library_ready))
        if round_ == 0:
            times = {k: [] for k in times}
    f_ms, s_ms, d_ms, l_ms = (percentile(times[k], 50) * 1000 for k in ("floor", "sub", "data", "library"))
    print(f"Library page with 10,000 scenarios: open (load -> run finished, listing shown) median {l_ms:.0f} ms over "
          f"{opens}; the floor page's open {f_ms:.0f} ms: {l_ms / f_ms:.2f}x (target <= 1.5x); the app's Data page "
          f"(no store) opens in {d_ms:.0f} ms ({d_ms / f_ms:.2f}x the floor): the Library's own share "
          f"{l_ms / d_ms:.2f}x that; the floor opened by a page's path (/page: Streamlit asks the server at that path "
          f"first, streamlit#7074, as for every page but the first) {s_ms:.0f} ms ({s_ms / f_ms:.2f}x the floor; "
          f"the Library {l_ms / s_ms:.2f}x that)")
    data_page.close()
    sub_page.close()
    floor_ms = floor.measure(10)
    box = page.get_by_label("Search names and projects")
    searches = []
    for i in range(opens):
        start = time.perf_counter()
        box.fill(f"scenario {i:04d}")
        box.press("Enter")
        page.get_by_text("10 scenarios").first.wait_for(state="visible", timeout=WAIT_TIMEOUT_MS)
        settle(page)
        searches.append(time.perf_counter() - start)
    s_ms = percentile(searches, 50) * 1000
    print(f"Library page with 10,000 scenarios: a search (type -> 10 found, run finished) median {s_ms:.0f} ms; the "
          f"floor's input change {floor_ms:.0f} ms: {s_ms / floor_ms:.2f}x (target <= 1.5x)")
    page.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--no-postgres", action="store_true", help="SQLite only")
    ap.add_argument("--no-page", action="store_true", help="skip the Library page in the browser")
    ap.add_argument("--opens", type=int, default=5, help="page opens (and searches) to time (default 5)")
    args = ap.parse_args()
    items = rows()
    with tempfile.TemporaryDirectory() as folder:
        csv_s = csv_seconds(items, folder)
        print(f"CSV reader (read + check) {VERSIONS:,} rows: {csv_s:.3f} s")
        save_and_load("sqlite", f"sqlite:///{folder}/bench.sqlite", items, csv_s)
        given = os.environ.get("TOKEN_ECONOMICS_BENCH_PG_URL")
        if given:
            save_and_load("postgresql", given, items, csv_s)
        elif not args.no_postgres:
            with postgres(folder) as url:
                save_and_load("postgresql (15, started here)", url, items, csv_s)
        if not args.no_page:
            library_page(folder, args.opens)
    print(f"machine: {os.cpu_count()} cores; load average (1 min) {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
