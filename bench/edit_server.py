"""The server's side of an edit: each page edit of bench/app_latency.py but Plan's (its link, field, values, KPI) under
``streamlit.testing`` (no browser), the run's CPU until the KPI's element is made (what the KPI waits for on the
server before Streamlit sends it) and the whole run's, each tree in a fresh process, trees alternated within each
round; with ``--sections``, the CPU of the named functions before the KPI.

CPU is the script thread's (``time.thread_time``), from the run's start (the edit's callback included) to the KPI's
``st.metric`` call: the machine's load inflates it far less than wall time. The scripts are compiled once per process,
as a server's script cache keeps them (``streamlit.testing`` compiles app.py and the page on every run: 1.5-4.5 ms
that no browser's edit pays). It prints figures and each tree's ratio to the first; it asserts nothing about time.

Usage: python bench/edit_server.py [ROOT ...] [--rounds 3] [--edits 10] [--pages WORD ...]
       [--sections ui.common.evaluate ui.studies.monte_carlo_of ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r'''
import importlib, json, logging, os, sys, time
from urllib.parse import parse_qsl
root, which, edits, sections = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
sys.path.insert(0, root)
os.chdir(root)
logging.disable(logging.CRITICAL)  # AppTest's "missing ScriptRunContext" warnings
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime.scriptrunner import script_cache, script_runner
from streamlit.testing.v1 import AppTest
from bench.app_latency import PAGES

shared = {}  # one script cache for the process, as a server's runtime holds one
script_cache.ScriptCache.__init__ = lambda self: (setattr(self, "_cache", shared),
                                                 setattr(self, "_lock", __import__("threading").Lock()))[0]
now = {"label": "", "start": None, "kpi": None}
spent = {name: 0.0 for name in sections}

def timed(name):
    module, _, attr = name.rpartition(".")
    mod = importlib.import_module(module)
    inner = getattr(mod, attr)
    def wrapper(*args, **kwargs):
        if now["kpi"] is not None or now["start"] is None:
            return inner(*args, **kwargs)
        t0 = time.thread_time()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[name] += time.thread_time() - t0
    setattr(mod, attr, wrapper)

for name in sections:
    timed(name)
metric = DeltaGenerator.metric
def kpi(self, label, *args, **kwargs):
    if now["kpi"] is None and now["start"] is not None and str(label).startswith(now["label"]):
        now["kpi"] = time.thread_time()
    return metric(self, label, *args, **kwargs)
DeltaGenerator.metric = kpi
run_script = script_runner.ScriptRunner._run_script
def started(self, *args, **kwargs):
    now["start"], now["kpi"] = time.thread_time(), None
    for name in spent:
        spent[name] = 0.0
    try:
        return run_script(self, *args, **kwargs)
    finally:
        now["end"] = time.thread_time()
script_runner.ScriptRunner._run_script = started

out = []
for i in which:
    title, path, field, label, value = PAGES[i]
    page, _, query = path.partition("?")
    at = AppTest.from_file(root + "/app.py", default_timeout=600)
    for k, v in parse_qsl(query, keep_blank_values=True):
        at.query_params[k] = v
    if page:
        at.switch_page(f"ui/{page}.py")
    at.run()
    for step in (100, 101):  # warm: the page's caches and lookups of the kind an edit reads
        at.text_input(key=field).set_value(f"{value(step):g}").run()
    now["label"] = label
    row = {"page": f"{title} ({field})", "kpi": [], "run": [], "sections": {n: [] for n in sections}}
    for step in range(edits):
        at.text_input(key=field).set_value(f"{value(step):g}").run()
        assert not at.exception, [e.value for e in at.exception]
        assert now["kpi"] is not None, f"no KPI {label!r} drawn"
        row["kpi"].append((now["kpi"] - now["start"]) * 1000)
        row["run"].append((now["end"] - now["start"]) * 1000)
        for name in sections:
            row["sections"][name].append(spent[name] * 1000)
    now["start"] = None
    out.append(row)
print(json.dumps(out))
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("roots", nargs="*", default=[str(Path(__file__).resolve().parent.parent)], help="trees to run")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, each tree once per round (default 3)")
    ap.add_argument("--edits", type=int, default=10, help="timed edits per page and round (default 10)")
    ap.add_argument("--pages", nargs="*", default=[], help="only the edits of pages whose title contains a word")
    ap.add_argument("--sections", nargs="*", default=[],
                    help="dotted names of functions (module.attribute) whose CPU before the KPI is printed")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from app_latency import PAGES

    which = [i for i, p in enumerate(PAGES) if p[0] != "Plan" and (
        not args.pages or any(w.lower() in p[0].lower() for w in args.pages))]
    got: dict[str, list[list[dict[str, object]]]] = {root: [] for root in args.roots}
    for r in range(args.rounds):
        for root in args.roots:
            done = subprocess.run([sys.executable, "-c", CHILD, str(Path(root).resolve()), json.dumps(which),
                                   str(args.edits), json.dumps(args.sections)],
                                  capture_output=True, text=True, timeout=900)
            if done.returncode:
                raise SystemExit(f"{root}: the child failed:\n{done.stderr[-3000:]}")
            got[root].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(f"round {r + 1}, {root}: " + "; ".join(
                f"{row['page']} {statistics.median(row['kpi']):.1f}" for row in got[root][-1])  # type: ignore[arg-type]
                + " ms CPU to the KPI (medians)", flush=True)
    first: dict[str, float] = {}
    for root in args.roots:
        print(f"{root}, medians over {args.rounds} rounds x {args.edits} edits:")
        for k, row in enumerate(got[root][0]):
            page, rows = str(row["page"]), [rnd[k] for rnd in got[root]]
            kpi = _median(rows, "kpi")
            first.setdefault(page, kpi)
            print(f"  {page}: to the KPI {kpi:.2f} ms CPU ({kpi / first[page]:.2f}x the first tree), the whole run "
                  f"{_median(rows, 'run'):.1f} ms")
            for name in args.sections:  # those the page calls before its KPI
                spent = _median([r["sections"] for r in rows], name)  # type: ignore[misc]
                if spent > 0:
                    print(f"    {name}: {spent:.2f} ms before the KPI")


def _median(rows: list[dict[str, object]], part: str) -> float:
    """The median of one figure over every round's edits of a page."""
    return statistics.median(v for row in rows for v in row[part])  # type: ignore[attr-defined]

if __name__ == "__main__":
    main()
