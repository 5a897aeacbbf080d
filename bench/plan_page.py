"""The Plan page's server CPU per edit, under ``streamlit.testing`` (no browser): the demand edits bench/plan.py and
bench/app_latency.py make, each timed from the run's start to the first KPI sent, to the plan's final status line
(the proof done), to what the operations settings cost (the table before "Systems hour by hour") and to the run's
end; and where the first KPI's CPU goes: the page before the plan's solve (``ui.planning.planned`` called), the
solve (the planner's stages and the page's copy of their plan) and the page after it, to the KPI. Each element is
timed as the page hands it to Streamlit (``DeltaGenerator._enqueue`` wrapped), in CPU time of the process
(the page runs in a thread of this one; HiGHS on one thread), so the figures hold on a shared machine.

It runs the page of any tree (``root``, e.g. a detached worktree of main), so two commits compare in one sitting.
HiGHS's remembered answers are forgotten before each edit; the engine's caches are warm (the page was opened
first), as on a server already running.

Usage: python bench/plan_page.py [ROOT] [--edits 8]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

DEMANDS = [(5e9 if i % 2 else 2e10) + 1e8 * i for i in range(1, 9)]
"""The demands bench/app_latency.py types into the Plan page, one edit each (bench/plan.py's PAGE_DEMANDS)."""
QUERY = {"model": "llama-3.1-70b", "precision": "fp8", "target_output_tokens_per_s_per_user": "30",
         "output_tokens_per_s_per_accelerator": ""}
"""The Plan page's scenario in bench/app_latency.py: the default scenario with these fields (its link)."""


class Marks:
    """CPU time of the first element of each kind a run sends (``since`` set before each run)."""

    def __init__(self) -> None:
        self.since, self.seen = 0.0, {}  # type: float, dict[str, float]

    def wrap(self, enqueue: Any) -> Any:
        def timed(dg: Any, delta_type: str, element_proto: Any, *args: Any, **kwargs: Any) -> Any:
            now = time.process_time() - self.since
            text = str(getattr(element_proto, "body", ""))
            if delta_type == "metric":
                self.seen.setdefault("kpi", now)
            if delta_type == "markdown" and " systems on site; " in text and text.endswith("."):
                self.seen["status"] = now  # the last status line: the plan proven (or needing no proof)
            if delta_type == "heading" and text.startswith("Systems hour by hour"):
                self.seen.setdefault("costs", now)
            return enqueue(dg, delta_type, element_proto, *args, **kwargs)

        return timed

    def around(self, planned: Any) -> Any:
        """``ui.planning.planned`` timed: CPU at its first call's start and end in a run (the page's own plan; a
        pinned baseline's solve comes after)."""
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.seen.setdefault("solve", time.process_time() - self.since)
            try:
                return planned(*args, **kwargs)
            finally:
                self.seen.setdefault("solved", time.process_time() - self.since)

        return timed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", default=str(Path(__file__).resolve().parent.parent), help="the tree to run")
    ap.add_argument("--edits", type=int, default=8, help="demand edits (1-8; default 8)")
    args = ap.parse_args()
    root = Path(args.root).resolve()
    sys.path.insert(0, str(root))
    os.chdir(root)
    from streamlit.delta_generator import DeltaGenerator
    from streamlit.testing.v1 import AppTest

    from economics.studies import planner
    from ui import planning

    marks = Marks()
    DeltaGenerator._enqueue = marks.wrap(DeltaGenerator._enqueue)  # type: ignore[method-assign]
    planning.planned = marks.around(planning.planned)  # ui/plan.py reads it from the module at each call
    at = AppTest.from_file(str(root / "app.py"), default_timeout=600)
    for name, value in QUERY.items():
        at.query_params[name] = value
    at.switch_page("ui/plan.py").run()  # the page open: the engine's caches warm
    assert not at.exception, [e.value for e in at.exception]
    load = os.getloadavg()[0]
    rows = []
    for demand in DEMANDS[:max(1, min(args.edits, len(DEMANDS)))]:
        planner.clear_milp_memo()
        marks.seen = {}
        marks.since = time.process_time()
        at.text_input(key="demand_output_tokens_per_day").set_value(f"{demand:,.0f}").run()
        end = time.process_time() - marks.since
        assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
        cost = next(str(m.value) for m in at.metric if m.label == "Cost per day")
        seen = marks.seen
        rows.append((seen["kpi"], seen["status"], seen["costs"], end, seen["solve"], seen["solved"] - seen["solve"],
                     seen["kpi"] - seen["solved"]))
        print(f"demand {demand:,.0f}: first KPI {rows[-1][0] * 1000:.0f} ms (the page {rows[-1][4] * 1000:.0f}, the "
              f"solve {rows[-1][5] * 1000:.0f}, the page {rows[-1][6] * 1000:.0f}), plan proven "
              f"{rows[-1][1] * 1000:.0f} ms, settings' costs {rows[-1][2] * 1000:.0f} ms, run {end * 1000:.0f} ms CPU; "
              f"cost per day {cost}")
    med = [statistics.median(r[k] for r in rows) * 1000 for k in range(7)]
    print(f"{root}: median of {len(rows)} edits, server CPU from the edit: first KPI {med[0]:.0f} ms (target 300: "
          f"ratio {med[0] / 300:.2f}; the page before the solve {med[4]:.0f} ms, the solve {med[5]:.0f}, the page "
          f"after it {med[6]:.0f}), plan proven {med[1]:.0f} ms, the settings' costs {med[2]:.0f} ms "
          f"({med[2] - med[1]:.0f} ms after the proof; {med[2] - med[0]:.0f} after the first KPI), run {med[3]:.0f} ms;"
          f" load average {load:.2f} before, {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
