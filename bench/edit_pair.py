"""Page edits of two trees' apps side by side, paired edit by edit, in a real headless browser (Chromium via
Playwright): a change to what the browser does measured against its base in the same minutes.

Each tree's ``streamlit run app.py`` is started once (its modules compiled first and read compiled, as
bench/app_latency.py's ``--bytecode``), with the one-widget floor page of bench/app_latency.py beside them, and a tab
is opened per page edit on each (bench/app_latency.py's PAGES, those matching ``--pages``). Each round makes each
page's edit on both trees in turn (the pages in a balanced order, bench/ratio.py; which tree goes first alternates),
each right after a floor edit and once both servers are idle, and each edit timed and split as app_latency times it
(from just before the fill to the frame that showed the KPI, in the page's clock; the KPI's message to that frame is
the browser's drawing; the renderer processes' CPU). Per page it prints the new tree's figure over the base's, round
by round, as a median with its 95 % bootstrap interval and how many rounds had it lower, for the edit, the drawing
and the renderer CPU; and each tree's edit over the floor edit just before it. Run it twice with the trees swapped:
a tree's position (which tabs opened first, which server started first) can favour it (docs/speed.md, ``pages7``).
``--out`` keeps every edit as JSON. It prints figures and asserts nothing; the servers and the browser only talk over
127.0.0.1.

Usage: python bench/edit_pair.py BASE_ROOT NEW_ROOT [--pages WORD ...] [--rounds 8] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import IO

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.app_latency import (  # noqa: E402
    CHROMIUM_ARGS,
    HOST,
    RECORD_JS,
    Edit,
    Floor,
    Tab,
    free_port,
    open_tabs,
    stop,
    timed,
    wait_healthy,
    wait_idle,
)
from bench.ratio import balanced_order, judge  # noqa: E402


def serve(root: Path, log: IO[bytes]) -> tuple[subprocess.Popen[bytes], str]:
    """``streamlit run app.py`` of the tree at ``root``, its modules compiled first and read compiled; the process
    and its address."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", "economics", "ui", "app.py"], cwd=root, check=True)
    port = free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
           "--server.address", HOST, "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    wait_healthy(port, proc, log)
    return proc, f"http://{HOST}:{port}"


def paired(new: list[float], base: list[float]) -> str:
    """New over base, edit by edit: the median, its interval and how many were lower, in words."""
    ratios = [n / b for n, b in zip(new, base, strict=True) if b > 0]
    judged = judge(ratios, 1.0)
    lower = sum(r < 1 for r in ratios)
    return (f"{statistics.median(base):.0f} -> {statistics.median(new):.0f} ms, new/base median {judged.median:.2f} "
            f"({judged.low:.2f}-{judged.high:.2f}), lower in {lower} of {len(ratios)}")


def report(tabs: tuple[list[Tab], list[Tab]], floors: tuple[list[list[Edit]], list[list[Edit]]]) -> None:
    """Per page: new over base for the edit, the drawing and the renderer CPU; each tree's edit over the floor edit
    made just before it."""
    for k, (base_tab, new_tab) in enumerate(zip(*tabs, strict=True)):
        print(f"{base_tab.title}: {base_tab.field}")
        for part in ("total", "drawing", "renderer_cpu"):
            print(f"  {part}: " + paired([getattr(e, part) for e in new_tab.edits],
                                        [getattr(e, part) for e in base_tab.edits]))
        for name, tab, floor in (("base", base_tab, floors[0][k]), ("new", new_tab, floors[1][k])):
            over = judge([e.total / f.total for e, f in zip(tab.edits, floor, strict=True)], 1.5)
            print(f"  {name} over the floor edit before it: {over.words()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("roots", nargs=2, type=Path, metavar="ROOT", help="the base tree, then the new one")
    ap.add_argument("--pages", nargs="*", help="edits only on pages whose title contains one of these words")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--out", type=Path, help="write every edit (and the floor's) here as JSON")
    args = ap.parse_args()
    with sync_playwright() as p, tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryFile() as floor_log, \
            tempfile.TemporaryFile() as base_log, tempfile.TemporaryFile() as new_log:
        browser = p.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                    args=CHROMIUM_ARGS)
        floor = Floor(browser, tmp, floor_log, RECORD_JS)
        servers = [serve(args.roots[0], base_log), serve(args.roots[1], new_log)]
        try:
            tabs = (open_tabs(browser, servers[0][1], args.pages), open_tabs(browser, servers[1][1], args.pages))
            floors: tuple[list[list[Edit]], list[list[Edit]]] = ([[] for _ in tabs[0]], [[] for _ in tabs[1]])
            loads, t0 = [], time.perf_counter()
            for r in range(args.rounds):
                loads.append(os.getloadavg()[0])
                for k in balanced_order(len(tabs[0]), r):
                    for t in (0, 1) if (r + k) % 2 == 0 else (1, 0):
                        for proc, _ in servers:
                            wait_idle(proc.pid)
                        floor_pid = floor.proc.pid if floor.proc is not None else 0
                        floors[t][k].append(timed(floor.page, "Floor KPI", floor_pid, floor.edit))
                        tabs[t][k].edit(r, servers[t][0].pid)
                print(f"round {r + 1} of {args.rounds} done after {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        finally:
            for proc, _ in servers:
                stop(proc)
            floor.close()
            browser.close()
    print(f"{args.rounds} rounds, base {args.roots[0]}, new {args.roots[1]}; load average (1 min) at the rounds' "
          f"starts {min(loads):.1f}-{max(loads):.1f}")
    report(tabs, floors)
    if args.out is not None:
        args.out.write_text(json.dumps({
            "loads": loads, "floors": [[[asdict(e) for e in f] for f in side] for side in floors],
            "tabs": [[{"title": t.title, "field": t.field, "edits": [asdict(e) for e in t.edits]} for t in side]
                     for side in tabs]}), encoding="utf-8")


if __name__ == "__main__":
    main()
