"""The app's cold start in a real headless browser (Chromium via Playwright), step by step, for one or more trees of
the app run in alternation (A B A B ...), so that a change is measured against the code before it on the same machine
in the same minutes.

Each start launches ``python -m streamlit run app.py`` in the tree, waits for its health check (wall time from the
launch), then opens the default page in a fresh browser context (nothing cached) and times, in the page's own clock
from the navigation's start: the page's DOMContentLoaded, the websocket opening (the first run starts then), the
run's ``page_config_changed`` (app.py's first element), the first KPI's message (``Cost per M tokens``), the KPI in
the DOM and the KPI visible (checked every animation frame); "total" is the health check's wall time plus the
navigation to the visible KPI, the cold start as bench/app_latency.py times it less the time Playwright takes to hand
the page over. It also counts the frontend's JavaScript files fetched after the websocket opened and before the KPI
showed (Streamlit's frontend loads an element's code when the first such element arrives; ui/assets.py names the
first page's in Streamlit's page) and their size, and whether the KPI, once shown, was hidden again within
``--after`` seconds (a later update of the first run drawing a fallback over it).

Prints every start, then per tree the median of each step and, for two or more trees, each tree's median total as a
ratio to the first tree's. It asserts nothing about time; the server and the browser only talk over 127.0.0.1.

Usage: python bench/cold_browser.py [TREE ...] [--rounds 3] [--after 2]
(TREE: a checkout of the app; default this one)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.app_latency import CHROMIUM_ARGS, COST_KPI, HOST, free_port, stop, wait_healthy, wait_kpi  # noqa: E402
from bench.browser_trace import INIT_JS, describe  # noqa: E402

# Before the page's own scripts: when the websocket opened, and every animation frame whether the KPI's value is in
# the DOM and whether it is visible (bench/browser_trace.py's INIT_JS records each message's arrival).
WATCH_JS = """
(() => {
  window.__kpiInDom = null; window.__kpiShown = null; window.__wsOpen = null; window.__kpiHidden = null;
  const Native = window.WebSocket;
  window.WebSocket = function (...args) {
    const ws = new Native(...args);
    ws.addEventListener('open', () => { if (window.__wsOpen === null) window.__wsOpen = performance.now(); });
    return ws;
  };
  window.WebSocket.prototype = Native.prototype; Object.assign(window.WebSocket, Native);
  const tick = () => {
    const value = document.querySelector('[data-testid="stMetricValue"]');
    if (value && window.__kpiInDom === null) window.__kpiInDom = performance.now();
    const visible = Boolean(value && value.checkVisibility());
    if (visible && window.__kpiShown === null) window.__kpiShown = performance.now();
    if (!visible && window.__kpiShown !== null && window.__kpiHidden === null) window.__kpiHidden = performance.now();
    if (window.__kpiHidden === null) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})();
"""
STEPS = ("healthy", "dom_loaded", "ws_open", "page_config", "kpi_message", "kpi_in_dom", "kpi_shown", "total",
         "js_late", "js_late_kb", "hidden")


def one_start(browser: Browser, tree: Path, after: float = 0.0) -> dict[str, float]:
    """A server started in ``tree``, a fresh page on it; the steps of :data:`STEPS` (seconds; files; kB; "hidden" 1
    if the KPI, once shown, was not shown at some frame within ``after`` seconds, else 0)."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.add_init_script(INIT_JS + WATCH_JS)
    port = free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
           "--server.address", HOST, "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    with tempfile.TemporaryFile() as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=tree, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_healthy(port, proc, log, say=False)  # its wall time is in the steps reported
            healthy = time.perf_counter() - t0
            page.goto(f"http://{HOST}:{port}", wait_until="commit")
            wait_kpi(page, COST_KPI)
            page.wait_for_function("() => window.__kpiShown !== null")
            page.wait_for_timeout(after * 1000)  # the rest of the first run arrives meanwhile: is the KPI kept?
            return _steps(page, healthy)
        finally:
            stop(proc)
            page.close()


def _steps(page: Any, healthy: float) -> dict[str, float]:
    """The page's clock read back once the KPI shows (seconds from the navigation's start)."""
    nav = page.evaluate("() => performance.getEntriesByType('navigation')[0].toJSON()")
    got = page.evaluate("() => [window.__wsOpen, window.__kpiInDom, window.__kpiShown]")
    hidden = page.evaluate("() => window.__kpiHidden !== null")
    messages = [(at / 1000, describe(payload)) for at, payload in page.evaluate("() => window.__msgs")]

    def first(prefix: str) -> float:
        return next((at for at, what in messages if what.startswith(prefix)), float("nan"))

    ws_open, in_dom, shown = (x / 1000 for x in got)
    files = page.evaluate("() => performance.getEntriesByType('resource').map(e => [e.name, e.startTime, "
                          "e.responseEnd, e.encodedBodySize])")
    kpi_message = first("metric:" + COST_KPI[:14])
    late = [(size, name) for name, start, end, size in files
            if "/static/js/" in name and end / 1000 > kpi_message and start / 1000 <= shown]
    return {"healthy": healthy, "dom_loaded": nav["domContentLoadedEventEnd"] / 1000, "ws_open": ws_open,
            "page_config": first("[page_config_changed]"), "kpi_message": kpi_message,
            "kpi_in_dom": in_dom, "kpi_shown": shown, "total": healthy + shown, "js_late": len(late),
            "js_late_kb": sum(size for size, _ in late) / 1024, "hidden": float(hidden)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("trees", nargs="*", type=Path, help="checkouts of the app to alternate (default: this one)")
    ap.add_argument("--rounds", type=int, default=3, help="starts of each tree (default 3)")
    ap.add_argument("--after", type=float, default=2.0, metavar="S",
                    help="seconds to keep watching the KPI once shown, for a later update hiding it (default 2)")
    args = ap.parse_args()
    trees = [t.resolve() for t in args.trees] or [ROOT]
    if args.rounds < 1 or any(not (t / "app.py").is_file() for t in trees):
        ap.error("--rounds must be at least 1 and every tree must hold app.py")
    runs: dict[Path, list[dict[str, float]]] = {t: [] for t in trees}
    load_before = os.getloadavg()[0]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                    args=CHROMIUM_ARGS)
        try:
            for i in range(args.rounds):
                for tree in trees:
                    r = one_start(browser, tree, args.after)
                    runs[tree].append(r)
                    print(f"round {i + 1} {tree}: " + ", ".join(f"{k} {r[k]:.2f}" for k in STEPS) +
                          f" (load {os.getloadavg()[0]:.1f})")
        finally:
            browser.close()
    base = statistics.median(r["total"] for r in runs[trees[0]])
    for tree, rs in runs.items():
        med = {k: statistics.median(r[k] for r in rs) for k in STEPS}
        print(f"median of {len(rs)}, {tree}: health check {med['healthy']:.2f} s after the launch; then in the page: "
              f"DOMContentLoaded {med['dom_loaded']:.2f} s, websocket open {med['ws_open']:.2f} s, page config "
              f"{med['page_config']:.2f} s, the KPI's message {med['kpi_message']:.2f} s, in the DOM "
              f"{med['kpi_in_dom']:.2f} s, shown {med['kpi_shown']:.2f} s; total {med['total']:.2f} s "
              f"({med['total'] / base:.2f}x the first tree's; target 3 s); {med['js_late']:.0f} JavaScript files "
              f"({med['js_late_kb']:.0f} kB) still loading at the KPI's message; the KPI hidden again after it "
              f"showed in {sum(r['hidden'] for r in rs):.0f} of {len(rs)} starts")
    print(f"load average (1 min) {load_before:.2f} before, {os.getloadavg()[0]:.2f} after (the bench adds about 1)")


if __name__ == "__main__":
    main()
