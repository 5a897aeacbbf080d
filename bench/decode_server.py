"""The Decode page's server work per edit, before its first KPI and after it (#41), without a browser.

Runs the page under ``streamlit.testing`` (AppTest) on the worked example with a decode price given, then --edits
edits of the decode price and --edits of the demand (the values bench/retrofit_odds.py types), and prints per kind
the median CPU time of the page's script thread (``time.thread_time``: the machine's load inflates it far less than
wall time): from the run's start (the edit's callback included) to the first KPI (the first ``st.metric``), the
odds (``economics.studies.retrofit_odds.odds``, after the KPIs and the pause), and the rest of the run after the
KPI. With --profile N, the same runs under cProfile, and the N functions of this repository (and Streamlit's) with
the most cumulative time before the first KPI and after it.

AppTest runs the page without a browser, so the page's pause after its KPIs (ui/editor.py, Sidebar) is not taken:
the figures are the server's work alone. It wraps Streamlit's script runner and ``st.metric`` to know when a run
starts and when its first KPI is sent (a measurement, not a test of the page).

Usage: python bench/decode_server.py [--edits 10] [--profile 0]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from streamlit.delta_generator import DeltaGenerator  # noqa: E402
from streamlit.runtime.scriptrunner import script_runner  # noqa: E402

from bench.retrofit_odds import EDITS  # noqa: E402
from economics.studies import retrofit_odds  # noqa: E402
from tests.test_app import start  # noqa: E402

RUN = script_runner.ScriptRunner._run_script
METRIC = DeltaGenerator.metric
ODDS = retrofit_odds.odds


class Clock:
    """What one run of the page took: thread CPU at its start, at its first KPI and at its end, and in the odds;
    with ``profile``, a profiler before the first KPI and one after it."""

    def __init__(self, profile: bool) -> None:
        self.profile = profile
        self.start = self.kpi = self.end = self.odds = 0.0
        self.before: cProfile.Profile | None = None
        self.after: cProfile.Profile | None = None

    def run(self, runner: Any, rerun_data: Any) -> None:
        self.start, self.kpi, self.odds = time.thread_time(), 0.0, 0.0
        self.before, self.after = (cProfile.Profile(), cProfile.Profile()) if self.profile else (None, None)
        if self.before is not None:
            self.before.enable()
        try:
            RUN(runner, rerun_data)
        finally:
            for p in (self.before, self.after):
                if p is not None:
                    p.disable()
            self.end = time.thread_time()

    def metric(self, element: Any, *args: Any, **kwargs: Any) -> Any:
        if not self.kpi:
            if self.before is not None and self.after is not None:
                self.before.disable()
                self.after.enable()
            self.kpi = time.thread_time()
        return METRIC(element, *args, **kwargs)

    def timed_odds(self, *args: Any, **kwargs: Any) -> Any:
        t = time.thread_time()
        try:
            return ODDS(*args, **kwargs)
        finally:
            self.odds += time.thread_time() - t


def _top(profiles: list[cProfile.Profile], n: int) -> str:
    """The ``n`` functions of this repository or Streamlit with the most cumulative time over the profiles."""
    stats = pstats.Stats(profiles[0], stream=io.StringIO())
    for p in profiles[1:]:
        stats.add(p)
    stats.sort_stats("cumulative").print_stats(n * 4)
    out = stats.stream.getvalue().splitlines()  # type: ignore[attr-defined]
    keep = [line for line in out if "ncalls" in line or "/economics/" in line or "/ui/" in line
            or "streamlit/elements" in line or "streamlit/runtime/caching" in line]
    return "\n".join(keep[:n + 1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=10, help="edits timed per kind")
    parser.add_argument("--profile", type=int, default=0, help="list this many functions under cProfile")
    args = parser.parse_args()
    clock = Clock(args.profile > 0)
    # functions, not the clock's bound methods: Streamlit calls them as methods of its runner and elements
    script_runner.ScriptRunner._run_script = lambda runner, data: clock.run(runner, data)  # type: ignore[method-assign,assignment]
    DeltaGenerator.metric = lambda element, *a, **k: clock.metric(element, *a, **k)  # type: ignore[method-assign]
    retrofit_odds.odds = clock.timed_odds
    at = start("decode")
    at.button(key="load_example").click().run()
    at.text_input(key="decode_accelerator_price_usd").set_value("60000").run()
    for field, step in EDITS:
        runs: list[tuple[float, float, float, float]] = []
        before: list[cProfile.Profile] = []
        after: list[cProfile.Profile] = []
        for i in range(args.edits):
            at.text_input(key=field).set_value(f"{round(step(i), 6):g}").run()
            assert not at.exception, [e.value for e in at.exception]
            runs.append(((clock.kpi - clock.start) * 1e3, clock.odds * 1e3, (clock.end - clock.kpi - clock.odds) * 1e3,
                         (clock.end - clock.start) * 1e3))
            if clock.before is not None and clock.after is not None:
                before.append(clock.before)
                after.append(clock.after)
        med = [statistics.median(r[k] for r in runs) for k in range(4)]
        print(f"{field}: {args.edits} edits, script thread CPU, median: to the first KPI {med[0]:.1f} ms; after it, "
              f"the odds {med[1]:.1f} ms and the rest {med[2]:.1f} ms; the whole run {med[3]:.1f} ms")
        if before:
            print(f"-- before the first KPI (cProfile)\n{_top(before, args.profile)}")
            print(f"-- after it (cProfile)\n{_top(after, args.profile)}")


if __name__ == "__main__":
    main()
