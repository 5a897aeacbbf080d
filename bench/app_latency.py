"""Latency of the Streamlit app as a user sees it, in a real headless browser (Chromium via Playwright).

Measures:

* cold start: from launching ``python -m streamlit run app.py`` (a fresh server process) until the first KPI
  ("Cost per M tokens" on the default page) is visible in the page; also reported: when the server answered its
  health check and how long the page took from navigation to the KPI. Target: under 5 s.
* update latency: from changing an input (the electricity price: fill the field and press Enter) until the KPI
  shows the new figure, over N changes; the median, 95th percentile and maximum. Target: median under 300 ms.
  The expected figure is computed beforehand with the repo's own functions (``economics.evaluate_scenario`` and
  ``ui.format.usd_per_m_tokens``) and the wait is for exactly that text, so a stale or wrong figure never counts.
* second page (Fleet, skip with ``--no-second-page``): a fresh tab's load of ``/fleet`` until its "Facility power"
  KPI is visible (server warm), and the latency of N changes of the headroom input until that KPI changes.

Times are wall-clock ``time.perf_counter`` in this process; waits poll the DOM on every animation frame, so they
carry up to one frame (about 16 ms) of granularity. An update's time starts just before Playwright fills the field,
so it includes Playwright's round trips for the fill and the key press; the figure from the Enter keydown to the new
KPI, both on the page's own clock (``performance.now()``), is printed alongside. It prints figures and targets;
it asserts nothing about time. The browser is started before the clock; the server and the browser only talk
over 127.0.0.1.

Usage: python bench/app_latency.py [--changes 30] [--no-second-page]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import economics  # noqa: E402
from ui.format import usd_per_m_tokens  # noqa: E402

HOST = "127.0.0.1"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--no-proxy-server"]
STARTUP_TIMEOUT_S = 60.0
WAIT_TIMEOUT_MS = 30_000
UPDATE_TIMEOUT_MS = 10_000
COST_KPI = "Cost per M tokens"
FLEET_KPI = "Facility power"

# Resolves to [the KPI's value text, the page's performance.now()] once the metric labelled `label` shows a visible
# value that satisfies the test: equal to `exact` if given, else matching `pattern` and (if given) different from
# `before`; false until then.
KPI_JS = """([label, pattern, exact, before]) => {
  for (const metric of document.querySelectorAll('[data-testid="stMetric"]')) {
    if (!metric.textContent.toLowerCase().includes(label.toLowerCase())) continue;
    const value = metric.querySelector('[data-testid="stMetricValue"]');
    if (!value || !value.checkVisibility()) continue;
    const text = value.textContent.trim();
    const ok = exact !== null ? text === exact : new RegExp(pattern).test(text) && (before === null || text !== before);
    if (ok) return [text, performance.now()];
  }
  return false;
}"""


# Records the page-clock time of the latest Enter key press (capture phase, before the app handles it).
ENTER_JS = """() => {
  if (window.__benchEnterHooked) return;
  window.__benchEnterHooked = true;
  document.addEventListener("keydown", (e) => {
    if (e.key === "Enter") window.__benchEnter = performance.now();
  }, true);
}"""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def wait_healthy(port: int, proc: subprocess.Popen[bytes], log: IO[bytes]) -> None:
    """Poll the server's health endpoint until it answers "ok" (bounded; fails if the server exits)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through a proxy
    deadline = time.perf_counter() + STARTUP_TIMEOUT_S
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}:\n{tail(log)}")
        try:
            with opener.open(f"http://{HOST}:{port}/_stcore/health", timeout=1.0) as response:
                if response.read().decode().strip() == "ok":
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.02)
    raise TimeoutError(f"streamlit not healthy after {STARTUP_TIMEOUT_S:.0f} s:\n{tail(log)}")


def tail(log: IO[bytes], chars: int = 3000) -> str:
    log.flush()
    log.seek(0)
    return log.read().decode(errors="replace")[-chars:]


def wait_kpi(page: Page, label: str, *, pattern: str = r"^\$\d", exact: str | None = None,
             before: str | None = None, timeout_ms: int = WAIT_TIMEOUT_MS) -> tuple[str, float]:
    """Wait (polling every animation frame) until the KPI's value passes the test of KPI_JS; return its text and
    the page-clock time (performance.now(), ms) when the test passed."""
    handle = page.wait_for_function(KPI_JS, arg=[label, pattern, exact, before], polling="raf", timeout=timeout_ms)
    text, at_ms = handle.json_value()
    return str(text), float(at_ms)


def kpi_text(page: Page, label: str) -> str:
    value = page.get_by_test_id("stMetric").filter(has_text=label).get_by_test_id("stMetricValue")
    return (value.text_content(timeout=WAIT_TIMEOUT_MS) or "").strip()


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100), linear between the closest ranks (as numpy's default)."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def summary(times_s: list[float], from_enter_ms: list[float]) -> str:
    ms = [t * 1000 for t in times_s]
    return (f"median {percentile(ms, 50):.0f} ms, p95 {percentile(ms, 95):.0f} ms, max {max(ms):.0f} ms "
            f"(min {min(ms):.0f} ms, first {ms[0]:.0f} ms; from the Enter key, in-page clock: median "
            f"{percentile(from_enter_ms, 50):.0f} ms, p95 {percentile(from_enter_ms, 95):.0f} ms)")


def expected_cost_kpi(electricity_usd_per_kwh: float) -> str:
    """The text the default page's KPI shows for the default scenario at this electricity price."""
    scenario = economics.with_changes(economics.default_scenario(), electricity_usd_per_kwh=electricity_usd_per_kwh)
    return usd_per_m_tokens(economics.evaluate_scenario(scenario)["cost_usd_per_m_tokens"])


def electricity_plan(changes: int) -> list[tuple[float, str]]:
    """N (value, expected KPI) pairs, each KPI different from the one before (the default's for the first)."""
    plan: list[tuple[float, str]] = []
    shown = expected_cost_kpi(economics.default_scenario().electricity_usd_per_kwh)
    for i in range(changes):
        for step in range(200):  # alternate low and high prices; nudge until the shown figure changes
            value = round((0.030 if i % 2 == 0 else 0.300) + 0.001 * ((i + step) % 50), 3)
            text = expected_cost_kpi(value)
            if text != shown:
                break
        else:
            raise RuntimeError(f"no electricity price changes the KPI after {shown!r}")
        plan.append((value, text))
        shown = text
    return plan


def measure_updates(page: Page, selector: str, label: str, plan: list[tuple[float, str | None]],
                    fmt: str) -> tuple[list[float], list[float]]:
    """Fill each value into the input, press Enter, and time until the KPI shows the expected (or any new) text.

    Returns the times in seconds from just before the fill (this process's clock; includes Playwright's fill and
    key press round trips) and in ms from the Enter keydown to the KPI passing the test (the page's clock)."""
    field = page.locator(selector)
    field.wait_for(state="visible", timeout=WAIT_TIMEOUT_MS)
    page.evaluate(ENTER_JS)
    times: list[float] = []
    from_enter: list[float] = []
    for value, expected in plan:
        before = kpi_text(page, label)
        t0 = time.perf_counter()
        field.fill(format(value, fmt), timeout=UPDATE_TIMEOUT_MS)
        field.press("Enter", timeout=UPDATE_TIMEOUT_MS)
        if expected is not None:
            _, at_ms = wait_kpi(page, label, exact=expected, timeout_ms=UPDATE_TIMEOUT_MS)
        else:
            _, at_ms = wait_kpi(page, label, pattern=r"\d", before=before, timeout_ms=UPDATE_TIMEOUT_MS)
        times.append(time.perf_counter() - t0)
        from_enter.append(at_ms - float(page.evaluate("() => window.__benchEnter")))
    return times, from_enter


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--changes", type=int, default=30, help="input changes to time per page (default 30)")
    ap.add_argument("--no-second-page", action="store_true", help="skip the Fleet page")
    args = ap.parse_args()
    if args.changes < 1:
        ap.error("--changes must be at least 1")
    executable = shutil.which("chromium") or "/usr/bin/chromium"
    plan = electricity_plan(args.changes)  # computed before the server starts, so it costs the app nothing
    initial = expected_cost_kpi(economics.default_scenario().electricity_usd_per_kwh)

    port = free_port()
    url = f"http://{HOST}:{port}"
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
           "--server.address", HOST, "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    with sync_playwright() as p, tempfile.TemporaryFile() as log:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, timeout=WAIT_TIMEOUT_MS)
        proc: subprocess.Popen[bytes] | None = None
        try:
            page = browser.new_page()
            page.set_default_timeout(WAIT_TIMEOUT_MS)
            page.goto("about:blank")  # warm the renderer outside the clock

            t_start = time.perf_counter()
            proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
            wait_healthy(port, proc, log)
            t_healthy = time.perf_counter()
            page.goto(url, wait_until="commit", timeout=WAIT_TIMEOUT_MS)
            first, _ = wait_kpi(page, COST_KPI)
            t_kpi = time.perf_counter()
            if first != initial:
                print(f"warning: first KPI {first!r}, expected {initial!r} for the default scenario")
            print(f"cold start: server healthy after {t_healthy - t_start:.2f} s, first KPI ({first}) after "
                  f"{t_kpi - t_start:.2f} s (page load to KPI {t_kpi - t_healthy:.2f} s) (target < 5 s)")

            cost_times, cost_enter = measure_updates(page, ".st-key-electricity_usd_per_kwh input", COST_KPI,
                                         [(v, t) for v, t in plan], ".3f")
            print(f"input change -> updated KPI over {len(cost_times)} changes (electricity price, Cost per token "
                  f"page): {summary(cost_times, cost_enter)} (target median < 300 ms)")

            if not args.no_second_page:
                fleet = browser.new_page()
                fleet.set_default_timeout(WAIT_TIMEOUT_MS)
                t_nav = time.perf_counter()
                fleet.goto(f"{url}/fleet", wait_until="commit", timeout=WAIT_TIMEOUT_MS)
                shown, _ = wait_kpi(fleet, FLEET_KPI, pattern=r"MW$")
                t_fleet = time.perf_counter()
                print(f"second page (Fleet, new tab, warm server): page load to KPI ({FLEET_KPI} {shown}) "
                      f"{t_fleet - t_nav:.2f} s")
                # headroom alternates low/high so the facility power always changes; wait for any new figure
                headroom: list[tuple[float, str | None]] = [
                    (round((0.0 if i % 2 else 0.5) + 0.01 * (i % 10), 2), None) for i in range(args.changes)]
                fleet_times, fleet_enter = measure_updates(fleet, ".st-key-headroom input", FLEET_KPI, headroom, ".2f")
                print(f"input change -> updated KPI over {len(fleet_times)} changes (headroom, Fleet page): "
                      f"{summary(fleet_times, fleet_enter)} (target median < 300 ms)")
        finally:
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)
            browser.close()
    print(f"machine: {os.cpu_count()} cores (os.cpu_count()); Python {sys.version.split()[0]}; "
          f"Chromium {executable}")


if __name__ == "__main__":
    main()
