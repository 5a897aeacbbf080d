"""Where a page switch spends its time, traced in a real headless browser (Chromium via Playwright): the switch session
of bench/app_latency.py (opened on its Decode link), then a click on each page in the bench's order, ``--rounds``
times.

For each switch, from the click, in the page's clock: when ``new_session`` arrived (the run started), when the page's
first and last element arrived, when ``script_finished`` arrived, and when the app root reported the run finished
(what bench/app_latency.py times, ``settled``); the messages the run sent; the CPU the browser's renderer and the
Streamlit server took over the switch (their user and system time, 10 ms ticks) and Chromium's own script, style and
layout time (``Performance.getMetrics``); React commits; the script files the switch fetched (element code the
browser had not loaded yet). So "settled - finished message" is the browser still drawing
after the server was done, and "finished message - new_session" the server's run as the page saw it. It prints figures
and asserts nothing; the server and the browser only talk over 127.0.0.1.

With ``--pause 2`` a user reads each page for 2 s before the next click (the server's worker, ui/ahead.py, makes the
Plan page's plan of a state once no run has started or ended for 1 s).

Usage: python bench/switch_trace.py [--rounds 2] [--pages Cost Fleet ...] [--pause 0.3] [--profile]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
from playwright.sync_api import Page, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.app_latency import (  # noqa: E402
    CHROMIUM_ARGS,
    DECODE_LINK,
    HOST,
    IDLE_JS,
    NAV,
    TITLES,
    WAIT_TIMEOUT_MS,
    cpu_ms,
    free_port,
    renderer_pids,
    settle,
    start_server,
    stop,
    wait_kpi,
)
from bench.browser_trace import INIT_JS, METRICS, _metrics, describe  # noqa: E402

CLICK_JS = """(name) => {
  const link = [...document.querySelectorAll('[data-testid="stSidebarNav"] a')]
    .find(a => a.textContent.trim() === name);
  window.__msgs = []; window.__commits = []; window.__click = performance.now();
  link.click();
}"""


def by_chunk(profile: dict[str, Any]) -> dict[str, float]:
    """A CDP CPU profile's self time [ms] by script file (Streamlit's frontend is split into a file per element kind:
    DataFrame, ArrowVegaLiteChart, TextInput...), program and idle time under their own names."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    deltas = dict.fromkeys(nodes, 0.0)
    for sample, delta in zip(profile["samples"], profile["timeDeltas"], strict=True):
        deltas[sample] += delta / 1000
    out: dict[str, float] = {}
    for node_id, ms in deltas.items():
        frame = nodes[node_id]["callFrame"]
        name = frame["url"].rsplit("/", 1)[-1] or frame["functionName"] or "(anonymous)"
        out[name] = out.get(name, 0.0) + ms
    return out


def trace_switch(page: Page, cdp: Any, title: str, pids: tuple[list[int], list[int]],
                 profile: bool = False, pause_ms: int = 300) -> dict[str, Any]:
    """One switch from a settled page to ``title``: the click, then until the new page's run has finished."""
    settle(page)
    page.evaluate(IDLE_JS)
    page.wait_for_timeout(pause_ms)  # the previous page's tail drawn (a user reading it), outside the span
    if profile:
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 200})
        cdp.send("Profiler.start")
    renderer0, server0, m0 = cpu_ms(pids[0]), cpu_ms(pids[1]), _metrics(cdp)
    t0 = time.perf_counter()
    page.evaluate(CLICK_JS, title)
    page.locator("h1").filter(has_text=TITLES[title]).first.wait_for(state="visible")
    settle(page)
    settled = float(page.evaluate("() => performance.now()")) - float(page.evaluate("() => window.__click"))
    wall = (time.perf_counter() - t0) * 1000
    renderer1, server1, m1 = cpu_ms(pids[0]), cpu_ms(pids[1]), _metrics(cdp)
    chunks = by_chunk(cdp.send("Profiler.stop")["profile"]) if profile else {}
    click = float(page.evaluate("() => window.__click"))
    msgs = [(t - click, describe(b)) for t, b in page.evaluate("() => window.__msgs")]

    def first(prefix: str) -> float:
        return next((t for t, d in msgs if d.startswith(prefix)), float("nan"))

    elements = [t for t, d in msgs if not d.startswith("[")]
    # the element code the switch had to fetch (Streamlit's frontend loads a kind's code when its first element comes)
    fetched = page.evaluate("(t0) => performance.getEntriesByType('resource').filter(e => e.startTime >= t0 && "
                            "e.name.endsWith('.js')).map(e => e.name.split('/').pop())", click)
    return {"new_session": first("[new_session]"), "first_element": elements[0] if elements else float("nan"),
            "last_element": elements[-1] if elements else float("nan"), "finished": first("[script_finished]"),
            "settled": settled, "wall": wall, "messages": len(msgs),
            "renderer_cpu": renderer1 - renderer0, "server_cpu": server1 - server0,
            "script": (m1["ScriptDuration"] - m0["ScriptDuration"]) * 1000,
            "style_layout": sum(m1[k] - m0[k] for k in METRICS[1:]) * 1000,
            "commits": sum(1 for t in page.evaluate("() => window.__commits") if t >= click), "chunks": chunks,
            "fetched": len(fetched)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--rounds", type=int, default=2, help="rounds of switches in the bench's order (default 2)")
    ap.add_argument("--pages", nargs="*", help="print only pages whose title contains one of these words")
    ap.add_argument("--pause", type=float, default=0.3, help="seconds between a page settled and the next click "
                    "(default 0.3; a user reading the page: 2)")
    ap.add_argument("--profile", action="store_true", help="also the renderer's main-thread time by script file "
                    "(CDP Profiler, 200 us sampling), the largest first")
    args = ap.parse_args()
    rows: dict[str, list[dict[str, Any]]] = {t: [] for t in NAV}
    with sync_playwright() as p, tempfile.TemporaryFile() as log:
        browser = p.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                    args=CHROMIUM_ARGS)
        port, proc = free_port(), None
        try:
            proc = start_server("app.py", port, log)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(WAIT_TIMEOUT_MS)
            page.add_init_script(INIT_JS)
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable")
            page.goto(f"http://{HOST}:{port}/{DECODE_LINK}")
            wait_kpi(page, "NPV of adding decode", pattern=r"\d")
            settle(page)
            pids = (renderer_pids(), [proc.pid])
            for title in [NAV[0], *NAV[1:], NAV[0]] * args.rounds:
                shown = not args.pages or any(w.lower() in title.lower() for w in args.pages)
                row = trace_switch(page, cdp, title, pids, args.profile and shown, int(args.pause * 1000))
                rows[title].append(row)
                if shown:
                    print(f"{title}: settled {row['settled']:.0f} ms (wall {row['wall']:.0f}): new_session "
                          f"{row['new_session']:.0f}, first element {row['first_element']:.0f}, last "
                          f"{row['last_element']:.0f}, script_finished {row['finished']:.0f}; {row['messages']} "
                          f"messages; CPU renderer {row['renderer_cpu']:.0f} ms, server {row['server_cpu']:.0f} ms; "
                          f"script {row['script']:.0f} ms, style+layout {row['style_layout']:.0f} ms; "
                          f"{row['commits']} commits; {row['fetched']} script files fetched", flush=True)
                    top = sorted(row["chunks"].items(), key=lambda kv: -kv[1])[:14]
                    if top:
                        print("  " + "; ".join(f"{name} {ms:.0f}" for name, ms in top))
        finally:
            stop(proc)
            browser.close()
    for title, found in rows.items():
        if found and (not args.pages or any(w.lower() in title.lower() for w in args.pages)):
            med = {k: statistics.median(float(r[k]) for r in found) for k in found[0] if k != "chunks"}
            print(f"{title}, median of {len(found)}: settled {med['settled']:.0f} ms, script_finished "
                  f"{med['finished']:.0f}, renderer CPU {med['renderer_cpu']:.0f} ms, server CPU "
                  f"{med['server_cpu']:.0f} ms, {med['messages']:.0f} messages")
    print(f"load average {psutil.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
