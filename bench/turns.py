"""Whether some processes run one scenario slower than others: fresh processes measured in turn.

`python bench/batch.py` times one scenario in one process's half-second of calls; its figure swung 0.7-1.4 ms from
one process to the next. If a process itself were slow (its memory layout, say), it would stay slow whatever the
machine does; if the machine's other work is what varies, it falls on every process alike when they take turns.
This starts ``--processes`` fresh processes, each warmed up, then asks them in turn, round after round (the order
reversed every other round), to time ``--calls`` calls of `evaluate_scenario`, and prints for each process its wall
and CPU medians and minima, and in how many rounds it was the fastest (``rounds / processes`` each if none is
slower). docs/speed.md (#43, "steady") has the measurements.

Usage: python bench/turns.py [--processes 8] [--rounds 60] [--calls 20] [--case default|estimate]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import economics  # noqa: E402


def worker(case: str) -> None:
    """Warm up, say so, then for each line read (a number of calls) time that many calls: wall and CPU per call [ms]."""
    base = economics.Scenario().model_dump() | {"accelerator_count": 8}
    calls = iter(range(10**9))
    if case == "default":
        scenario = base | {"output_tokens_per_s_per_accelerator": 1000.0}
        make = lambda: scenario  # noqa: E731
    else:  # an estimate, a price changing on each call (the estimate reused), as bench/batch.py's second case
        estimated = base | {"model": "llama-3.1-70b", "precision": "fp8", "output_tokens_per_s_per_accelerator": None}
        make = lambda: estimated | {"price_usd_per_m_output_tokens": 1.0 + next(calls) * 1e-6}  # noqa: E731
    for _ in range(50):
        economics.evaluate_scenario(make())
    print("ready", flush=True)
    for line in sys.stdin:
        n = int(line)
        t, c = time.perf_counter(), time.process_time()
        for _ in range(n):
            economics.evaluate_scenario(make())
        print(f"{(time.perf_counter() - t) / n * 1e3} {(time.process_time() - c) / n * 1e3}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--processes", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--case", choices=("default", "estimate"), default="default")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.case)
        return
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", "--case", args.case], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for _ in range(args.processes)]
    for p in procs:
        assert p.stdin is not None and p.stdout is not None
        if p.stdout.readline().strip() != "ready":
            raise SystemExit("a worker did not start")
    wall: list[list[float]] = [[] for _ in procs]
    cpu: list[list[float]] = [[] for _ in procs]
    for r in range(args.rounds):
        for i in range(len(procs)) if r % 2 == 0 else reversed(range(len(procs))):
            stdin, stdout = procs[i].stdin, procs[i].stdout
            assert stdin is not None and stdout is not None
            stdin.write(f"{args.calls}\n")
            stdin.flush()
            w, c = map(float, stdout.readline().split())
            wall[i].append(w)
            cpu[i].append(c)
    for p in procs:
        assert p.stdin is not None
        p.stdin.close()
        p.wait()
    fastest = [0] * len(procs)
    for r in range(args.rounds):
        fastest[min(range(len(procs)), key=lambda i: wall[i][r])] += 1
    print(f"{args.processes} fresh processes, {args.rounds} rounds of {args.calls} calls each ({args.case}):")
    for i in range(len(procs)):
        print(f"  process {i}: wall median {statistics.median(wall[i]):.3f} ms (min {min(wall[i]):.3f}), CPU median "
              f"{statistics.median(cpu[i]):.3f} ms (min {min(cpu[i]):.3f}); the fastest in {fastest[i]} rounds")


if __name__ == "__main__":
    main()
