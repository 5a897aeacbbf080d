"""Load test of the Streamlit app: update latency on the Cost page with N browser sessions at once.

Starts the app once (``python -m streamlit run app.py`` on a free port of 127.0.0.1) and one headless Chromium
(Playwright's async API). For each N in ``--sessions`` it opens N independent browser contexts (N Streamlit
sessions, each with its own page), waits for each page's first "Cost per M tokens" KPI, then runs rounds: in each
round every session at once (``asyncio.gather``) fills a new electricity price into its sidebar input, presses Enter
and waits until its KPI shows exactly the figure the repo's own functions give for that price
(``economics.evaluate_scenario`` and ``ui.format.usd_rate``, computed before the server starts). So the N
updates genuinely overlap on the server. An update's latency runs from just before the fill to the KPI showing the
expected text (DOM polled on every animation frame), in this process's clock; it includes Playwright's round trips,
which for N sessions share one Playwright driver and one browser, on the same machine as the server.

Errors (expected 0) are: an update whose KPI does not show the expected text within 15 s, an exception or error
message shown by the app (``stException`` or an error alert) after an update, an uncaught script error in the page
(``pageerror``), or any other Playwright exception. A session with an error is reloaded before its next update
(or dropped if the reload fails).

Bounded: at most ``--rounds`` rounds and ``--wall`` seconds of rounds per N (a round still running at the limit
finishes, each update within its 15 s), every wait has a timeout, and the server and the browser are always shut
down. Prints per N the sessions, updates done, errors, median / p95 / max latency and the server's CPU use, then the
largest N whose p95 stays under 2 s (with no errors, and every smaller N tested too). It only ever talks to
127.0.0.1; the server and the browser only talk over 127.0.0.1.

Usage: python bench/load.py [--sessions 1,2,4,8] [--rounds 10] [--wall 60]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from playwright.async_api import Browser, BrowserContext, Page, async_playwright
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import economics  # noqa: E402
from bench.app_latency import (  # noqa: E402
    CHROMIUM_ARGS,
    COST_KPI,
    HOST,
    KPI_JS,
    expected_cost_kpi,
    free_port,
    percentile,
    wait_healthy,
)
from bench.server_proc import stop_server  # noqa: E402

INPUT = ".st-key-electricity_usd_per_kwh input"
UPDATE_TIMEOUT_S = 15.0
LOAD_TIMEOUT_MS = 30_000
CLOSE_TIMEOUT_S = 10.0
P95_TARGET_MS = 2000.0
# Electricity prices to cycle through (USD/kWh); only those whose KPI texts differ are kept, and each session
# starts at its own offset so concurrent sessions mostly send different values.
CANDIDATE_PRICES = (0.030, 0.300, 0.120, 0.350, 0.060, 0.250, 0.160, 0.200)
ERROR_SHOWN = '[data-testid="stException"], [data-testid="stAlertContentError"]'


@dataclass
class Session:
    index: int
    context: BrowserContext
    page: Page
    shown: str = ""  # the KPI text the page is known to show now
    cursor: int = 0  # next position in the price table
    alive: bool = True
    page_errors: list[str] = field(default_factory=list)  # uncaught script errors reported by the page


@dataclass
class StepResult:
    sessions: int
    setup_s: float = 0.0
    rounds: int = 0
    planned: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    server_cpu_s: float | None = None

    @property
    def done(self) -> int:
        return len(self.latencies_ms)

    def p95(self) -> float | None:
        return percentile(self.latencies_ms, 95) if self.latencies_ms else None

    def holds(self) -> bool:
        p95 = self.p95()
        return not self.errors and p95 is not None and p95 < P95_TARGET_MS


def price_table() -> list[tuple[float, str]]:
    """(price, expected KPI text) pairs with pairwise different texts, computed with the repo's functions."""
    table: list[tuple[float, str]] = []
    for price in CANDIDATE_PRICES:
        text = expected_cost_kpi(price)
        if all(text != seen for _, seen in table):
            table.append((price, text))
    if len(table) < 3:
        raise RuntimeError(f"the candidate prices give only {len(table)} different KPI texts: {table}")
    return table


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of a process so far (Linux /proc; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


async def kpi_value_text(page: Page, timeout_ms: float) -> str:
    """The Cost KPI's value text, read through the same locator as the other browser checks."""
    value = page.get_by_test_id("stMetric").filter(has_text=COST_KPI).get_by_test_id("stMetricValue")
    return (await value.text_content(timeout=timeout_ms) or "").strip()


async def load_page(session: Session, url: str) -> None:
    """Navigate to the Cost page and wait for its first KPI and the electricity input (bounded)."""
    page = session.page
    await page.goto(url, wait_until="commit", timeout=LOAD_TIMEOUT_MS)
    await page.wait_for_function(KPI_JS, arg=[COST_KPI, r"^\$\d", None, None], polling="raf",
                                 timeout=LOAD_TIMEOUT_MS)
    await page.locator(INPUT).wait_for(state="visible", timeout=LOAD_TIMEOUT_MS)
    session.shown = await kpi_value_text(page, LOAD_TIMEOUT_MS)


async def open_session(browser: Browser, index: int, url: str, table_len: int) -> Session:
    context = await browser.new_context()
    page = await context.new_page()
    page.set_default_timeout(LOAD_TIMEOUT_MS)
    session = Session(index=index, context=context, page=page, cursor=index % table_len)
    page.on("pageerror", lambda exc: session.page_errors.append(str(exc)))
    await load_page(session, url)
    return session


def next_price(session: Session, table: list[tuple[float, str]]) -> tuple[float, str]:
    """The session's next price whose KPI text differs from what its page shows now."""
    for _ in range(len(table)):
        price, text = table[session.cursor % len(table)]
        session.cursor += 1
        if text != session.shown:
            return price, text
    raise RuntimeError(f"no price in the table changes the KPI from {session.shown!r}")


async def update(session: Session, table: list[tuple[float, str]], url: str,
                 result: StepResult) -> None:
    """One update: fill a new price, press Enter, wait for the expected KPI; record its latency or the error."""
    page = session.page
    price, expected = next_price(session, table)
    errors_before = len(session.page_errors)
    error: str | None = None
    t0 = time.perf_counter()
    try:
        field_ = page.locator(INPUT)
        await field_.fill(f"{price:.3f}", timeout=UPDATE_TIMEOUT_S * 1000)
        await field_.press("Enter", timeout=max(1.0, (UPDATE_TIMEOUT_S - (time.perf_counter() - t0)) * 1000))
        remaining_ms = max(1.0, (UPDATE_TIMEOUT_S - (time.perf_counter() - t0)) * 1000)
        await page.wait_for_function(KPI_JS, arg=[COST_KPI, "", expected, None], polling="raf",
                                     timeout=remaining_ms)
        t1 = time.perf_counter()
        shown = await kpi_value_text(page, UPDATE_TIMEOUT_S * 1000)  # outside the clock: the same check via the locator
        session.shown = shown
        if shown != expected:
            error = f"KPI {shown!r} via the locator, expected {expected!r}"
        elif (count := await page.locator(ERROR_SHOWN).count()) > 0:
            error = f"the app shows {count} exception/error element(s)"
        elif len(session.page_errors) > errors_before:
            error = f"page error: {session.page_errors[-1][:200]}"
        else:
            result.latencies_ms.append((t1 - t0) * 1000)
    except PlaywrightTimeoutError:
        error = f"KPI not {expected!r} within {UPDATE_TIMEOUT_S:.0f} s (price {price:.3f})"
    except PlaywrightError as exc:
        error = f"Playwright: {str(exc).splitlines()[0][:200]}"
    if error is None:
        return
    result.errors.append(f"session {session.index}: {error}")
    try:  # start the session over from a fresh page so its next expected figure is known
        await load_page(session, url)
    except PlaywrightError as exc:
        session.alive = False
        result.errors.append(f"session {session.index}: dropped, reload failed: {str(exc).splitlines()[0][:200]}")


async def close_all(sessions: list[Session]) -> None:
    for session in sessions:
        try:
            await asyncio.wait_for(session.context.close(), timeout=CLOSE_TIMEOUT_S)
        except (PlaywrightError, TimeoutError) as exc:
            print(f"warning: closing session {session.index}'s context: {exc!r}")


async def run_step(browser: Browser, url: str, n: int, rounds: int, wall_s: float,
                   table: list[tuple[float, str]], server_pid: int) -> StepResult:
    result = StepResult(sessions=n)
    t_setup = time.perf_counter()
    opened = await asyncio.gather(*(open_session(browser, i, url, len(table)) for i in range(n)),
                                  return_exceptions=True)
    sessions = [s for s in opened if isinstance(s, Session)]
    result.errors += [f"opening a session: {str(e).splitlines()[0][:200]}" for e in opened
                      if isinstance(e, BaseException)]
    result.setup_s = time.perf_counter() - t_setup
    try:
        cpu0 = process_cpu_s(server_pid)
        t_start = time.perf_counter()
        while result.rounds < rounds and time.perf_counter() - t_start < wall_s:
            alive = [s for s in sessions if s.alive]
            if not alive:
                break
            result.planned += len(alive)
            await asyncio.gather(*(update(s, table, url, result) for s in alive))
            result.rounds += 1
        result.wall_s = time.perf_counter() - t_start
        cpu1 = process_cpu_s(server_pid)
        if cpu0 is not None and cpu1 is not None:
            result.server_cpu_s = cpu1 - cpu0
    finally:
        await close_all(sessions)
    return result


def report(result: StepResult) -> None:
    ms = result.latencies_ms
    stats = (f"median {percentile(ms, 50):.0f} ms, p95 {percentile(ms, 95):.0f} ms, max {max(ms):.0f} ms"
             if ms else "no completed updates")
    cpu = (f"; server CPU {result.server_cpu_s:.1f} s = {result.server_cpu_s / result.wall_s:.2f} cores busy"
           if result.server_cpu_s is not None and result.wall_s > 0 else "")
    print(f"sessions {result.sessions}: {result.done}/{result.planned} updates done in {result.rounds} rounds, "
          f"errors {len(result.errors)}; latency {stats} (rounds {result.wall_s:.1f} s, opening the sessions "
          f"{result.setup_s:.1f} s{cpu})", flush=True)
    for error in result.errors[:5]:
        print(f"  error: {error}")
    if len(result.errors) > 5:
        print(f"  ... and {len(result.errors) - 5} more errors")


async def run_all(url: str, counts: list[int], rounds: int, wall_s: float, table: list[tuple[float, str]],
                  server_pid: int, executable: str) -> list[StepResult]:
    results: list[StepResult] = []
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, timeout=LOAD_TIMEOUT_MS)
        try:
            for n in counts:
                result = await run_step(browser, url, n, rounds, wall_s, table, server_pid)
                report(result)
                results.append(result)
        finally:
            try:
                await asyncio.wait_for(browser.close(), timeout=CLOSE_TIMEOUT_S)
            except (PlaywrightError, TimeoutError) as exc:
                print(f"warning: closing the browser: {exc!r}")
    return results


def parse_counts(text: str) -> list[int]:
    counts = sorted({int(part) for part in text.split(",") if part.strip()})
    if not counts or counts[0] < 1 or counts[-1] > 64:
        raise argparse.ArgumentTypeError("session counts must be between 1 and 64")
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--sessions", type=parse_counts, default=[1, 2, 4, 8],
                    help="comma-separated numbers of concurrent sessions (default 1,2,4,8)")
    ap.add_argument("--rounds", type=int, default=10, help="rounds of updates per number of sessions (default 10)")
    ap.add_argument("--wall", type=float, default=60.0, help="seconds of rounds per number of sessions (default 60)")
    args = ap.parse_args()
    if not 1 <= args.rounds <= 1000:
        ap.error("--rounds must be between 1 and 1000")
    if not 1 <= args.wall <= 600:
        ap.error("--wall must be between 1 and 600 seconds")
    executable = shutil.which("chromium") or "/usr/bin/chromium"
    table = price_table()  # computed before the server starts, so it costs the app nothing
    initial = expected_cost_kpi(economics.default_scenario().electricity_usd_per_kwh)

    port = free_port()
    url = f"http://{HOST}:{port}"
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.address", HOST,
           "--server.port", str(port), "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    t_begin = time.perf_counter()
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_healthy(port, proc, log)
            print(f"server healthy at {url} (pid {proc.pid}); default KPI {initial!r}; {len(table)} prices cycled; "
                  f"up to {args.rounds} rounds and {args.wall:.0f} s of rounds per N; update timeout "
                  f"{UPDATE_TIMEOUT_S:.0f} s", flush=True)
            results = asyncio.run(run_all(url, args.sessions, args.rounds, args.wall, table, proc.pid, executable))
        finally:
            stop_server(proc)

    print()
    print(f"{'sessions':>8} {'updates':>8} {'errors':>6} {'median ms':>9} {'p95 ms':>7}")
    for r in results:
        median = f"{percentile(r.latencies_ms, 50):.0f}" if r.latencies_ms else "-"
        p95 = r.p95()
        p95_text = f"{p95:.0f}" if p95 is not None else "-"
        print(f"{r.sessions:>8} {r.done:>8} {len(r.errors):>6} {median:>9} {p95_text:>7}")
    held = 0
    for r in results:  # ascending N; stop at the first that fails, so the answer holds for every smaller N too
        if not r.holds():
            break
        held = r.sessions
    total_errors = sum(len(r.errors) for r in results)
    print(f"errors in total: {total_errors} (expected 0)")
    if held:
        print(f"the {os.cpu_count()}-core machine holds {held} session(s) with p95 < {P95_TARGET_MS / 1000:.0f} s "
              f"(largest N tested whose p95 stays under {P95_TARGET_MS / 1000:.0f} s with no errors)")
    else:
        print(f"the {os.cpu_count()}-core machine holds no tested N with p95 < {P95_TARGET_MS / 1000:.0f} s "
              f"and no errors")
    print(f"total {time.perf_counter() - t_begin:.0f} s; Python {sys.version.split()[0]}; Chromium {executable}")


if __name__ == "__main__":
    main()
