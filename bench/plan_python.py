"""Where a Plan page edit's stages spend their CPU outside HiGHS: the page's 8 demand edits as bench/plan.py runs
them (``plan_stages(...).result()``, HiGHS's memo cleared before each), each planner function's thread CPU (its
outermost call on each thread, every thread counted; HiGHS is ``milp._run``), the edit's whole CPU and the rest
(the whole less HiGHS), with a digest of the 8 drawn plans to compare trees by (docs/speed.md, branch ``planpy``).

``--callgrind``: the 8 edits only, run inside ``itertools.filterfalse`` after the warm-up, so that
``valgrind --tool=callgrind --collect-atstart=no --toggle-collect=filterfalse_next python bench/plan_python.py
--callgrind`` counts their instructions alone; the stages' second thread runs its work in the calling thread (the
same work, one thread for the toggle to see), and HiGHS's time limit is lifted (under valgrind a solve would reach
it). HiGHS's share is the inclusive count of ``Highs::run()`` (``callgrind_annotate --inclusive=yes``).
``--callgrind --remembered``: the 8 edits solved once first, then counted again with HiGHS's answers remembered
(its memo, 43 answers of 64) and everything else made afresh each edit (the plans of solved models and the engine's
rate tables forgotten): the instructions of the work outside HiGHS alone (the report's shadow-price LP, one an edit,
still runs HiGHS), minutes under callgrind where the whole edits take tens on a busy machine (docs/speed.md,
branch ``planedit11``).

No timed tests: this script reports, it does not assert. Run it on two trees alternated (a base tree made by
``git archive``) and compare the rest's CPU, or the instruction counts.

Usage: python bench/plan_python.py [--rounds N] [--callgrind [--remembered]]
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import sys
import threading
import time
from collections import Counter
from concurrent.futures import Future
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import economics  # noqa: E402
from economics.studies import planner  # noqa: E402
from economics.studies.planner import build, candidates, hourly, milp, report, run, solve  # noqa: E402
from economics.studies.planner.neighbours import Neighbourhood  # noqa: E402
from ui import links  # noqa: E402

PAGE_LINK = {"model": "llama-3.1-70b", "precision": "fp8", "target_output_tokens_per_s_per_user": 30.0,
             "output_tokens_per_s_per_accelerator": None}
"""The Plan page's scenario in bench/app_latency.py (bench/plan.py's ``PAGE_LINK``)."""
PAGE_DEMANDS = [(5e9 if i % 2 else 2e10) + 1e8 * i for i in range(1, 9)]
"""The demands bench/app_latency.py types into the Plan page (bench/plan.py's ``PAGE_DEMANDS``)."""
TIMED = [(milp, "_run"), (candidates, "catalog_candidates"), (hourly, "stage_two"), (build, "build_model"),
         (build, "hourly_models"), (run, "_problem"), (report, "plan_result"), (solve, "trim_flows")]
"""The functions timed (each replaced in every planner module that imported it by name)."""


def _page() -> tuple[economics.Scenario, planner.PlanSettings, list[str]]:
    s0 = economics.Scenario(**{**economics.default_scenario().model_dump(), **PAGE_LINK})
    page = links.default_settings()
    return s0, links.plan_settings(page), list(page[links.PLAN_PREFIX + "accelerators"])


def edits(s0: economics.Scenario, settings: planner.PlanSettings, ids: list[str], remembered: bool = False) -> str:
    """The 8 edits' stages, HiGHS's memo cleared before each (``remembered``: only the plans of solved models and
    the rate tables forgotten, HiGHS's answers kept); a digest of the drawn plans (CSV and summary)."""
    out = []
    for d in PAGE_DEMANDS:
        if remembered:
            with milp._MEMO_LOCK:
                milp._SOLVED.clear()
            candidates.clear_rates_memo()
        else:
            planner.clear_milp_memo()
        r = planner.plan_stages(s0.model_copy(update={"demand_output_tokens_per_day": d}), settings, None,
                                ids).result()
        out.append(r.plan.to_csv() + json.dumps(r.summary, sort_keys=True, default=str))
    return hashlib.sha256("".join(out).encode()).hexdigest()[:16]


class _Clock:
    """Thread CPU per timed function (outermost call per thread) while active."""

    def __init__(self) -> None:
        self.cpu: Counter[str] = Counter()
        self._local = threading.local()
        self._saved: list[tuple[object, str, object]] = []

    def _wrap(self, fn, label: str):
        def timed_call(*args, **kwargs):
            open_ = self._local.__dict__.setdefault("open", set())
            if label in open_:
                return fn(*args, **kwargs)
            open_.add(label)
            t = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.cpu[label] += time.thread_time() - t
                open_.discard(label)
        return timed_call

    def __enter__(self) -> _Clock:
        modules = [m for m in sys.modules.values() if getattr(m, "__name__", "").startswith(
            "economics.studies.planner")]
        for owner, name in TIMED:
            fn = getattr(owner, name)
            for module in modules:
                if getattr(module, name, None) is fn:
                    self._saved.append((module, name, fn))
                    setattr(module, name, self._wrap(fn, name))
        tries = Neighbourhood.tries
        self._saved.append((Neighbourhood, "tries", tries))
        clock = self

        def timed_tries(near, *args, **kwargs):
            t = time.thread_time()
            out = tries(near, *args, **kwargs)
            clock.cpu["Neighbourhood.tries"] += time.thread_time() - t
            return out
        Neighbourhood.tries = timed_tries  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        for module, name, fn in reversed(self._saved):
            setattr(module, name, fn)


class _Serial:
    """An executor that runs each task at once in the calling thread (``--callgrind``: one thread to count)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def __enter__(self) -> _Serial:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def submit(self, fn, *args, **kwargs) -> Future:
        done: Future = Future()
        done.set_result(fn(*args, **kwargs))
        return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1, help="the 8 edits this many times (one line each)")
    parser.add_argument("--callgrind", action="store_true", help="the edits alone, for callgrind's toggle")
    parser.add_argument("--remembered", action="store_true", help="with --callgrind: HiGHS's answers remembered")
    args = parser.parse_args()
    s0, settings, ids = _page()
    if args.callgrind:
        milp.TIME_LIMIT_S = 1e6
        solve.ThreadPoolExecutor = _Serial  # type: ignore[misc,assignment]
        planner.plan(s0, settings, None, ids, costed=False, proof=False)  # imports and the engine's caches warm
        if args.remembered:  # HiGHS's answers of the 8 edits remembered (their 43 fit MEMO_SIZE)
            planner.clear_milp_memo()
            edits(s0, settings, ids, remembered=True)
        found: list[str] = []
        list(itertools.filterfalse(lambda _: found.append(edits(s0, settings, ids, args.remembered)), [0]))
        print(f"digest of the 8 drawn plans {found[0]}")
        return
    planner.plan(s0, settings, None, ids)  # the engine's caches warm, as bench/plan.py's page_edit
    for _ in range(args.rounds):
        with _Clock() as clock:
            c = time.process_time()
            digest = edits(s0, settings, ids)
            whole = (time.process_time() - c) / len(PAGE_DEMANDS) * 1000
        highs = clock.cpu["_run"] / len(PAGE_DEMANDS) * 1000
        parts = ", ".join(f"{name} {cpu / len(PAGE_DEMANDS) * 1000:.1f}" for name, cpu in clock.cpu.most_common()
                          if name != "_run")
        print(f"an edit's stages: {whole:.1f} ms CPU, HiGHS {highs:.1f}, the rest {whole - highs:.1f} ms (load "
              f"{os.getloadavg()[0]:.1f}; digest {digest}); thread CPU [ms an edit, nested calls counted in "
              f"each]: {parts}")


if __name__ == "__main__":
    main()
