"""A session's first switch to a page from a session opened without a link (the default state, on the Cost page),
in a real headless browser (Chromium via Playwright), trees alternated: each tree's ``streamlit run app.py`` is
started once, then each round opens a new session on each tree (the order reversed every other round), reads the
Cost page 3 s and until the server is idle, and clicks the page in the sidebar: the time from the click until the
page's run has finished with its title shown (bench/app_latency.py's switch), and the JavaScript files the browser
fetched meanwhile (the element code a page needs that the Cost page did not load). It prints figures and asserts
nothing; the servers and the browser only talk over 127.0.0.1.

The switch to Plan from the default state is the one bench/app_latency.py measures once per run (after its rounds);
here it is alone, repeated and paired, so a change to what the page draws is seen apart from the load of the rounds.

Usage: python bench/first_switch.py BASE_ROOT NEW_ROOT [--rounds 2] [--page Plan]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.app_latency import (  # noqa: E402
    CHROMIUM_ARGS,
    COST_KPI,
    HOST,
    STARTUP_TIMEOUT_S,
    WAIT_TIMEOUT_MS,
    _switch,
    free_port,
    settle,
    stop,
    wait_healthy,
    wait_idle,
    wait_kpi,
)

READ_S = 3.0
"""Seconds the session reads the Cost page before the click (as app_latency's switch session)."""


def serve(root: str, log: IO[bytes]) -> tuple[subprocess.Popen[bytes], str]:
    """``streamlit run app.py`` of the tree at ``root`` on a free port; the process and its address."""
    port = free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
           "--server.address", HOST, "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    proc = subprocess.Popen(cmd, cwd=root, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    wait_healthy(port, proc, log)
    return proc, f"http://{HOST}:{port}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("roots", nargs=2, help="two trees (e.g. main unpacked with git archive, and this one)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds, each tree once per round (default 2)")
    ap.add_argument("--page", default="Plan", help="the sidebar title of the page switched to (default Plan)")
    args = ap.parse_args()
    times: dict[str, list[float]] = {root: [] for root in args.roots}
    with sync_playwright() as p, tempfile.TemporaryFile() as log:
        browser = p.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                    args=CHROMIUM_ARGS, timeout=STARTUP_TIMEOUT_S * 1000)
        servers = {root: serve(root, log) for root in args.roots}
        try:
            for r in range(args.rounds):
                for root in args.roots if r % 2 == 0 else args.roots[::-1]:
                    proc, url = servers[root]
                    page = browser.new_page(viewport={"width": 1400, "height": 900})
                    page.set_default_timeout(WAIT_TIMEOUT_MS)
                    page.goto(url)
                    wait_kpi(page, COST_KPI)
                    settle(page)
                    time.sleep(READ_S)
                    wait_idle(proc.pid, timeout_s=60.0)
                    fetched: list[str] = []
                    page.on("request", lambda req, got=fetched: got.append(req.url) if req.url.endswith(".js")
                            else None)
                    took = _switch(page, args.page) * 1000
                    times[root].append(took)
                    names = sorted({u.rsplit("/", 1)[-1].split(".")[0] for u in fetched})
                    print(f"round {r + 1} {root}: switch to {args.page} {took:.0f} ms; {len(fetched)} script files "
                          f"fetched: {' '.join(names)}", flush=True)
                    page.close()
        finally:
            for proc, _ in servers.values():
                stop(proc)
            browser.close()
    base, new = (statistics.median(times[root]) for root in args.roots)
    for root in args.roots:
        print(f"{root}: median {statistics.median(times[root]):.0f} ms of {len(times[root])} "
              f"({', '.join(f'{t:.0f}' for t in times[root])})")
    print(f"ratio of the medians (second / first): {new / base:.2f}")


if __name__ == "__main__":
    main()
