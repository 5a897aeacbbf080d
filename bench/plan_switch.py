"""A switch to the Plan page: the server's CPU of the page's run under ``streamlit.testing`` (no browser), each in a
fresh process, for two sessions:

* ``default``: a session opened without a link (the default scenario and planner settings) on the Cost page, after
  the server's start has done what its lifespan does (:func:`ui.memory.preload`: the first page, then, once the
  first run is drawn, the Plan page's plan of that state, when the tree has it), then a click on Plan;
* ``decode``: bench/app_latency.py's page-switch session (opened on its Decode link), then a click on Plan: a state
  nothing planned before.

Also the first run's CPU to its page (the Cost page's run, which the preload must not slow) and, for ``default``,
the plan's first KPI and cost per day (the same on every tree). Trees alternate within each round (``--rounds``), so
two commits compare in one sitting on a shared machine; the medians and the ratio to the first tree are printed.
It asserts nothing about time.

Usage: python bench/plan_switch.py [ROOT ...] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r'''
import json, os, sys, threading, time
from urllib.parse import parse_qsl
root, which = sys.argv[1], sys.argv[2]
sys.path.insert(0, root)
os.chdir(root)
from streamlit.testing.v1 import AppTest
from ui import memory
at = AppTest.from_file(root + "/app.py", default_timeout=600)
if which == "decode":
    for k, v in parse_qsl(sys.argv[3], keep_blank_values=True):
        at.query_params[k] = v
    at.switch_page("ui/decode.py")
t0 = time.process_time()
at.run()
first = time.process_time() - t0
plan_thread = getattr(memory, "_plan_page", None)
if which == "default" and plan_thread is not None:  # the lifespan's second thread, as the server starts it
    worker = threading.Thread(target=plan_thread)
    worker.start()
    worker.join()
assert not at.exception, [e.value for e in at.exception]
t0 = time.process_time()
at.switch_page("ui/plan.py").run()
switch = time.process_time() - t0
assert not at.exception, [e.value for e in at.exception]
cost = next(str(m.value) for m in at.metric if m.label == "Cost per day")
print(json.dumps({"first_run_s": first, "switch_s": switch, "cost": cost,
                  "preload": which == "default" and plan_thread is not None}))
'''


def _decode_query() -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from app_latency import DECODE_LINK  # the page-switch session's link

    return DECODE_LINK.split("?", 1)[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("roots", nargs="*", default=[str(Path(__file__).resolve().parent.parent)], help="trees to run")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, each tree once per round and session (default 3)")
    args = ap.parse_args()
    query = _decode_query()
    got: dict[tuple[str, str], list[dict[str, object]]] = {}
    for _ in range(args.rounds):
        for which in ("default", "decode"):
            for root in args.roots:
                done = subprocess.run([sys.executable, "-c", CHILD, str(Path(root).resolve()), which, query],
                                      capture_output=True, text=True, timeout=600, check=True)
                row = json.loads(done.stdout.strip().splitlines()[-1])
                got.setdefault((root, which), []).append(row)
                print(f"{root} {which}: first run {row['first_run_s'] * 1000:.0f} ms CPU, switch to Plan "
                      f"{row['switch_s'] * 1000:.0f} ms CPU (preload of the Plan page: {row['preload']}; "
                      f"cost per day {row['cost']})", flush=True)
    for which in ("default", "decode"):
        base = None
        for root in args.roots:
            rows = got[(root, which)]
            switch = statistics.median(float(r["switch_s"]) for r in rows) * 1000  # type: ignore[arg-type]
            first = statistics.median(float(r["first_run_s"]) for r in rows) * 1000  # type: ignore[arg-type]
            base = base or switch
            print(f"{which}: {root}: median of {len(rows)}: switch to Plan {switch:.0f} ms CPU ({switch / base:.2f}x "
                  f"the first tree; target 500 ms wall), first run {first:.0f} ms CPU")


if __name__ == "__main__":
    main()
