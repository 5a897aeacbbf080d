"""The decode study's odds: 10,000 draws of the six-option worked example (the Decode page's) against one point
study, and the Decode page's edit-to-KPI with the odds on against the Streamlit floor, in one run.

Prints, from one run on this machine, each figure with its ratio to the issue's target (#41):
  - seconds for one point study (every option's years remembered: an edit's re-run) and for the odds at --samples
    draws (best of 3 each, interleaved; the same point study handed in; every option drawn each time, nothing
    remembered of the odds), the draws per second, and the ratio of the odds to the 2 s target (10,000 draws of the
    six-option study in under 2 s);
  - in a real headless browser (Chromium via Playwright, as bench/app_latency.py measures every page): the Decode
    page opened on the worked example with the odds on (its default; the draws are cached per scenario, draws and
    seed), --changes edits of the decode price and --changes of the demand, each timed from the fill to the new
    KPI ("NPV of adding decode"), each as a ratio of its median to the one-widget Streamlit page's (the floor,
    bench/app_latency.py's Floor) measured just before it (target <= 1.5x); and, for the same edits, until the
    whole page (the odds, the fan, the tables) has settled.

Usage: python bench/retrofit_odds.py [--samples 10000] [--changes 10] [--no-browser]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playwright.sync_api import sync_playwright  # noqa: E402

from bench.app_latency import (  # noqa: E402
    CHROMIUM_ARGS,
    DECODE_LINK,
    HOST,
    WAIT_TIMEOUT_MS,
    Floor,
    free_port,
    measure_updates,
    percentile,
    settle,
    start_server,
    stop,
    wait_kpi,
)
from economics.studies.retrofit import analyse  # noqa: E402
from economics.studies.retrofit_odds import forget, odds  # noqa: E402
from tests.test_retrofit_odds import EXAMPLE  # noqa: E402

TARGET_S = 2.0
"""10,000 draws of the six-option study in under 2 s (#41)."""
TARGET_FLOOR = 1.5
"""The Decode page's edit-to-KPI with the odds on within 1.5x the Streamlit floor (#41)."""
KPI = "NPV of adding decode"
EDITS = (("decode_accelerator_price_usd", lambda i: (30_000 if i % 2 else 90_000) + 1000 * i),
         ("demand_output_tokens_per_day", lambda i: (1e10 if i % 2 else 3e10) + 1e8 * i))
"""The edits timed: the decode price (every option but one is remembered) and the demand (every option again)."""


def draws(samples: int) -> None:
    """The odds at ``samples`` draws against one point study, and the ratio to the target."""
    point = analyse(EXAMPLE)  # the first sight of each option (throughput estimates) out of the timing
    odds(EXAMPLE, samples=100, point=point)
    point_s, odds_s = [], []
    for _ in range(3):
        t = time.perf_counter()
        point = analyse(EXAMPLE)
        point_s.append(time.perf_counter() - t)
        forget()  # every option drawn: the odds remember each option's draws (an edit's re-run draws fewer)
        t = time.perf_counter()
        found = odds(EXAMPLE, samples=samples, seed=0, point=point)
        odds_s.append(time.perf_counter() - t)
    best_point, best_odds = min(point_s), min(odds_s)
    print(f"options: {len(found.names)}; horizon {EXAMPLE['horizon_years']} years; drivers: {len(found.found)}")
    print(f"point study: {best_point * 1000:.1f} ms; odds at {samples:,} draws: {best_odds:.3f} s "
          f"({samples / best_odds:,.0f} draws/s; {best_odds / best_point:,.0f}x one point study); "
          f"ratio to the target ({TARGET_S:g} s{'' if samples == 10_000 else ' for 10,000 draws'}): "
          f"{best_odds / TARGET_S:.2f} (target < 1)")
    print(found.headline())


def page(changes: int) -> None:
    """The Decode page's edit-to-KPI with the odds on, as ratios to the floor measured just before each edit kind."""
    executable = shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as p, tempfile.TemporaryFile() as log, tempfile.TemporaryFile() as floor_log, \
            tempfile.TemporaryDirectory() as tmp:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, timeout=WAIT_TIMEOUT_MS)
        proc = None
        floor: Floor | None = None
        try:
            floor = Floor(browser, tmp, floor_log)
            port = free_port()
            proc = start_server("app.py", port, log)
            for field, step in EDITS:
                floor_ms = floor.measure(changes)
                tab = browser.new_page(viewport={"width": 1400, "height": 900})
                tab.set_default_timeout(WAIT_TIMEOUT_MS)
                tab.goto(f"http://{HOST}:{port}/{DECODE_LINK}")
                wait_kpi(tab, KPI, pattern=r"\d")
                settle(tab)
                odds_on = tab.get_by_text("is the best option in").count() > 0
                drawn: list[float] = []
                wall: list[float] = []
                times, _ = measure_updates(tab, field, KPI, [round(step(i), 6) for i in range(changes)], None, drawn,
                                           wall)
                median = percentile([t * 1000 for t in times], 50)
                print(f"Decode page, odds {'on' if odds_on else 'NOT SHOWN'}: {field} -> {KPI!r}: median "
                      f"{median:.0f} ms over {changes}; ratio to the floor measured just before ({floor_ms:.0f} ms) "
                      f"{median / floor_ms:.2f}x (target <= {TARGET_FLOOR:g}x); whole page settled (odds, fan, "
                      f"tables) median {percentile([t * 1000 for t in drawn], 50):.0f} ms; wall clock until Playwright "
                      f"answered (the page's clock above: bench/app_latency.py) median "
                      f"{percentile([t * 1000 for t in wall], 50):.0f} ms")
                tab.close()
        finally:
            if floor is not None:
                floor.close()
            stop(proc)
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--changes", type=int, default=10, help="edits timed per kind on the Decode page")
    parser.add_argument("--no-browser", action="store_true", help="the draws only")
    args = parser.parse_args()
    draws(args.samples)
    if not args.no_browser:
        page(args.changes)


if __name__ == "__main__":
    main()
