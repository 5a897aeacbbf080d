"""Where the browser's main thread spends an edit, from Chromium's own performance trace (the one DevTools records),
on one page of the app or on bench/app_latency.py's one-widget floor page, in a real headless browser (Chromium via
Playwright).

For each edit (the values bench/app_latency.py types; the page settled first, outside the span) it records a trace
(categories ``devtools.timeline``, ``v8``, ``blink``) from just before the fill to the frame that showed the new KPI,
and prints, for the renderer's main thread in that span:

* the time in its tasks (wall) and their thread CPU (the trace's ``tdur``: what the machine's load inflates least);
* script (``FunctionCall``, Playwright's own calls among them), style (``UpdateLayoutTree``), layout, paint (pre-paint,
  paint, layerize, commit) and garbage collection, wall, and the thread CPU of style, layout and paint;
* the CSS transitions started (``transitionrun`` events) and the tasks over 10 ms (start after the fill, length);
* when Enter went in and the KPI showed, in the page's clock from just before the fill.

``--css A B ...`` adds these style sheets to the page, all disabled, and before edit i enables the one numbered
``i mod (n + 1)`` (0: none), so the page's own style and each variant are measured in turn in one session: a
within-page comparison of a style change, paired edit by edit. ``--root`` serves the app of another tree (a base made
with ``git archive``). It prints figures and asserts nothing; the server and the browser only talk over 127.0.0.1.
docs/speed.md (the ``pages7`` entry) says what it found.

Usage: python bench/edit_trace.py [--page WORD [--field N] | --floor] [--edits 6] [--css STYLE ...] [--root DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.app_latency import (  # noqa: E402
    CHROMIUM_ARGS,
    ENTER_JS,
    FLOOR_APP,
    HOST,
    IDLE_JS,
    PAGES,
    free_port,
    kpi_text,
    settle,
    stop,
    wait_healthy,
    wait_kpi,
)

CATEGORIES = ["devtools.timeline", "v8", "v8.execute", "blink", "blink.user_timing",
              "disabled-by-default-devtools.timeline"]
KINDS = {"FunctionCall": "script", "UpdateLayoutTree": "style", "Layout": "layout", "PrePaint": "paint",
         "Paint": "paint", "Layerize": "paint", "Commit": "paint", "MinorGC": "gc", "MajorGC": "gc"}
"""Trace events counted, by what the main thread does in them."""
TASKS = ("RunTask", "ThreadControllerImpl::RunTask")
"""The main thread's top-level tasks."""


def main_thread(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The complete events of the renderer main thread with the most of them (the page's; a trace also holds the
    browser's and other renderers' threads), in time order."""
    mains = {(e["pid"], e["tid"]) for e in events
             if e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"}
    complete = [e for e in events if e.get("ph") == "X" and "dur" in e and (e.get("pid"), e.get("tid")) in mains]
    counts: dict[tuple[int, int], int] = defaultdict(int)
    for e in complete:
        counts[(e["pid"], e["tid"])] += 1
    busiest = max(counts, key=lambda k: counts[k])
    return sorted((e for e in complete if (e["pid"], e["tid"]) == busiest), key=lambda e: e["ts"])


def split(events: list[dict[str, Any]], start_us: float, end_us: float) -> dict[str, Any]:
    """The main thread's time from ``start_us`` to ``end_us`` (the trace's clock) by kind [ms], and its long tasks."""
    main = main_thread(events)
    inside = [e for e in main if start_us <= e["ts"] < end_us]
    tasks = [e for e in inside if e["name"] in TASKS]
    row: dict[str, Any] = defaultdict(float)
    row["busy"] = sum(min(e["ts"] + e["dur"], end_us) - e["ts"] for e in tasks) / 1000
    row["cpu"] = sum(e.get("tdur", 0) for e in tasks) / 1000
    for e in inside:
        kind = KINDS.get(e["name"])
        if kind is not None:
            row[kind] += e["dur"] / 1000
            if kind in ("style", "layout", "paint"):
                row[f"cpu_{kind}"] += e.get("tdur", 0) / 1000
    row["transitions"] = sum(1 for e in events if e.get("name") == "EventDispatch" and start_us <= e["ts"] < end_us
                             and e["args"].get("data", {}).get("type") == "transitionrun")
    row["long"] = [(round((e["ts"] - start_us) / 1000), round(e["dur"] / 1000)) for e in tasks if e["dur"] > 10_000]
    return row


def traced_edit(page: Page, browser: Any, target: tuple[str, str], value: float) -> dict[str, Any]:
    """One edit from a settled page, traced from just before the fill until the frame that showed the KPI."""
    field, label = target
    settle(page)
    page.evaluate(IDLE_JS)
    page.wait_for_timeout(300)  # the previous run's tail drawn, outside the span
    before = kpi_text(page, label)
    browser.start_tracing(page=page, categories=CATEGORIES)
    start = float(page.evaluate("() => { performance.mark('bench-start'); return performance.now(); }"))
    box = page.locator(f".st-key-{field} input")
    box.fill(f"{value:g}")
    box.press("Enter")
    _, shown = wait_kpi(page, label, pattern=r"\d", before=before)
    enter = float(page.evaluate("() => window.__benchEnter"))
    page.evaluate("() => performance.clearMarks()")
    trace = json.loads(browser.stop_tracing())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    mark = next(e["ts"] for e in events if e.get("name") == "bench-start")
    row = split(events, mark, mark + (shown - start) * 1000)
    row["enter"], row["kpi"] = enter - start, shown - start
    return dict(row)


def words(row: dict[str, Any]) -> str:
    """An edit's figures in a line."""
    keys = ("kpi", "enter", "busy", "cpu", "script", "style", "layout", "paint", "gc", "cpu_style", "cpu_layout",
            "cpu_paint", "transitions")
    return ", ".join(f"{k} {row.get(k, 0):.0f}" for k in keys)


def serve(root: Path, script: str, port: int, log: Any) -> Any:
    """``streamlit run script`` in the tree at ``root``."""
    cmd = [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true", "--server.port", str(port),
           "--server.address", HOST, "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    proc = subprocess.Popen(cmd, cwd=root, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    wait_healthy(port, proc, log)
    return proc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--page", default="Fleet", help="a word of the page's title (bench/app_latency.py's PAGES)")
    ap.add_argument("--field", type=int, default=0, help="which of the page's edits (0: the first it lists)")
    ap.add_argument("--floor", action="store_true", help="the one-widget floor page instead")
    ap.add_argument("--edits", type=int, default=6)
    ap.add_argument("--css", nargs="*", default=[], help="style sheets measured in turn with the page's own (0)")
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                    help="the tree whose app.py is served (default this one)")
    args = ap.parse_args()
    if args.floor:
        path, field, label, step = "", "x", "Floor KPI", lambda i: 3.0 + i
    else:
        _, path, field, label, step = [p for p in PAGES if args.page.lower() in p[0].lower()][args.field]
    variants = len(args.css) + 1
    rows: list[list[dict[str, Any]]] = [[] for _ in range(variants)]
    with sync_playwright() as p, tempfile.TemporaryFile() as log, tempfile.TemporaryDirectory() as tmp:
        browser = p.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                    args=CHROMIUM_ARGS)
        script = "app.py"
        if args.floor:
            script = str(Path(tmp) / "floor.py")
            Path(script).write_text(FLOOR_APP, encoding="utf-8")
        port, proc = free_port(), None
        try:
            proc = serve(args.root, script, port, log)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"http://{HOST}:{port}/{path}")
            wait_kpi(page, label, pattern=r"\d")
            settle(page)
            page.evaluate(ENTER_JS)
            page.evaluate("(sheets) => sheets.forEach((css, j) => { const s = document.createElement('style'); "
                          "s.id = 'bench-css-' + j; s.textContent = css; document.head.append(s); })", args.css)
            for i in range(args.edits):
                variant = i % variants
                page.evaluate("([on, n]) => { for (let j = 0; j < n; j++) "
                              "document.getElementById('bench-css-' + j).disabled = j + 1 !== on; }",
                              [variant, len(args.css)])
                row = traced_edit(page, browser, (field, label), round(step(i), 6))
                rows[variant].append(row)
                print(f"edit {i} (style {variant}): {words(row)} [ms; transitions a count]; tasks over 10 ms "
                      f"(start, length) {row['long']}", flush=True)
        finally:
            stop(proc)
            browser.close()
    for variant, done in enumerate(rows):
        if done:
            median = {k: statistics.median(float(r.get(k, 0)) for r in done) for k in done[0] if k != "long"}
            print(f"style {variant}, median of {len(done)}: {words(median)}")


if __name__ == "__main__":
    main()
