"""The server's side of a page switch: the CPU of each page's run under ``streamlit.testing`` (no browser), on
bench/app_latency.py's switch session (opened on its Decode link, then Cost, Fleet, Decode, Plan, Throughput,
Uncertainty, Cost, Fleet, Decode), each tree in a fresh process, trees alternated within each round.

A tree with :mod:`ui.ahead` has the studies of the session's state made after each run as its server's worker makes
them (``ahead.make``, and ``ahead.plan``, which the worker makes once the session is quiet for a second: called
between the runs, outside the clock; the worker itself runs only for a session in a browser); its CPU is printed
apart. The first arrivals are the figures to read: a revisit reads
every study from the page's cache on any tree. It asserts nothing about time.

Usage: python bench/switch_server.py [ROOT ...] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ORDER = ("cost", "fleet", "decode", "plan", "throughput", "uncertainty", "cost", "fleet", "decode")
CHILD = r'''
import json, os, sys, time
from urllib.parse import parse_qsl
root, query, order = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
sys.path.insert(0, root)
os.chdir(root)
from streamlit.testing.v1 import AppTest
try:
    from ui import ahead
except ImportError:
    ahead = None
at = AppTest.from_file(root + "/app.py", default_timeout=600)
for k, v in parse_qsl(query, keep_blank_values=True):
    at.query_params[k] = v
at.switch_page("ui/decode.py").run()
assert not at.exception, [e.value for e in at.exception]
rows, ahead_s = [], 0.0
for page in order:
    if ahead is not None:  # what the server's worker makes after the previous run
        t0 = time.process_time()
        ahead.make(at.session_state["scenario"], at.session_state["settings"])
        ahead.plan(at.session_state["scenario"], at.session_state["settings"])  # once the session is quiet
        ahead_s += time.process_time() - t0
    t0 = time.process_time()
    at.switch_page(f"ui/{page}.py").run()
    rows.append(time.process_time() - t0)
    assert not at.exception, [e.value for e in at.exception]
print(json.dumps({"runs": rows, "ahead_s": ahead_s, "ahead": ahead is not None}))
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("roots", nargs="*", default=[str(Path(__file__).resolve().parent.parent)], help="trees to run")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, each tree once per round (default 3)")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from app_latency import DECODE_LINK  # the page-switch session's link

    query = DECODE_LINK.split("?", 1)[1]
    got: dict[str, list[dict[str, object]]] = {root: [] for root in args.roots}
    for _ in range(args.rounds):
        for root in args.roots:
            done = subprocess.run([sys.executable, "-c", CHILD, str(Path(root).resolve()), query, ",".join(ORDER)],
                                  capture_output=True, text=True, timeout=600, check=True)
            row = json.loads(done.stdout.strip().splitlines()[-1])
            got[root].append(row)
            runs = ", ".join(f"{p} {t * 1000:.0f}" for p, t in zip(ORDER, row["runs"], strict=True))
            print(f"{root}: {runs} ms CPU (ahead: {row['ahead']}, {row['ahead_s'] * 1000:.0f} ms CPU between the "
                  f"runs)", flush=True)
    first: dict[str, float] = {}
    for root in args.roots:
        medians = [statistics.median(float(r["runs"][i]) for r in got[root]) * 1000  # type: ignore[index]
                   for i in range(len(ORDER))]
        first.setdefault("base", medians[0] + medians[1])
        first.setdefault("plan", medians[3])
        print(f"{root}: median of {len(got[root])}: " + ", ".join(f"{p} {m:.0f}" for p, m in zip(ORDER, medians,
                                                                                                   strict=True))
              + f" ms CPU; first arrivals at Cost and Fleet {medians[0] + medians[1]:.0f} ms "
              f"({(medians[0] + medians[1]) / first['base']:.2f}x the first tree), at Plan {medians[3]:.0f} ms "
              f"({medians[3] / first['plan']:.2f}x)")


if __name__ == "__main__":
    main()
