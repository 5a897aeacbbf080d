"""Start of the HTTP API: seconds from ``python -m economics serve`` to the first 200 of ``/v1/health``, this tree
against another (``--base``, e.g. main's: ``git archive main | tar -x -C /tmp/base``, with a ``.venv`` link),
alternated round by round (the first side alternates), so that a machine's load falls on both alike.

Prints each round's two times and their ratio, then the median of each side and the median of the paired ratios
(this tree over the base); with ``--memory``, the first round's process tree with each process's resident and
proportional set size and its data size (``VmData``, what a worker's ``--worker-memory-mb`` limit counts).

Run: ``python bench/api_start.py --base /tmp/base --rounds 7``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.api_server import HOST, free_port  # noqa: E402
from bench.server_proc import stop_server  # noqa: E402


def _mb(path: str, key: str) -> int:
    """A ``key: N kB`` line of a /proc file, in MB (0 when the process is gone)."""
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


def process_tree(pid: int) -> list[tuple[int, int, str]]:
    """(depth, pid, command) of ``pid`` and its descendants."""
    rows = subprocess.run(["ps", "-e", "-o", "pid=,ppid=,args="], capture_output=True, text=True).stdout
    children: dict[int, list[tuple[int, str]]] = {}
    for line in rows.splitlines():
        child, parent, *args = line.split(None, 2)
        children.setdefault(int(parent), []).append((int(child), args[0] if args else ""))
    out, todo = [], [(0, pid, "serve")]
    while todo:
        depth, p, cmd = todo.pop()
        out.append((depth, p, cmd))
        todo += [(depth + 1, c, a) for c, a in children.get(p, [])]
    return out


def start(root: Path, memory: bool) -> float:
    """Seconds until the server in ``root`` answers ``/v1/health``; its processes printed when ``memory``."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(root)}
    began = time.perf_counter()
    proc = subprocess.Popen([str(root / ".venv" / "bin" / "python"), "-m", "economics", "serve", "--host", HOST,
                             "--port", str(port)], cwd=root, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the server in {root} exited with {proc.returncode}")
            try:
                if httpx.get(f"http://{HOST}:{port}/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.05)
        seconds = time.perf_counter() - began
        if memory:
            for depth, pid, cmd in process_tree(proc.pid):
                print(f"    {'  ' * depth}{pid} RSS {_mb(f'/proc/{pid}/status', 'VmRSS')} MB, PSS "
                      f"{_mb(f'/proc/{pid}/smaps_rollup', 'Pss')} MB, VmData "
                      f"{_mb(f'/proc/{pid}/status', 'VmData')} MB  {cmd[:70]}")
        return seconds
    finally:
        stop_server(proc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True, help="the other tree (with its .venv)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--memory", action="store_true", help="print the first round's processes")
    args = parser.parse_args()
    sides = {"base": args.base.resolve(), "this": ROOT}
    times: dict[str, list[float]] = {name: [] for name in sides}
    for r in range(args.rounds):
        for name in (list(sides) if r % 2 == 0 else list(sides)[::-1]):
            if args.memory and r == 0:
                print(f"  {name}:")
            times[name].append(start(sides[name], args.memory and r == 0))
        print(f"round {r + 1}: base {times['base'][-1]:.2f} s, this {times['this'][-1]:.2f} s, "
              f"ratio {times['this'][-1] / times['base'][-1]:.2f}", flush=True)
    ratios = [b / a for a, b in zip(times["base"], times["this"], strict=True)]
    print(f"median base {statistics.median(times['base']):.2f} s, this {statistics.median(times['this']):.2f} s; "
          f"median of the paired ratios {statistics.median(ratios):.2f} (this / base, {args.rounds} rounds)")


if __name__ == "__main__":
    main()
