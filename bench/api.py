"""Throughput of the HTTP API: requests per second and latency for a one-row evaluate and a 10,000-row upload, at 1,
8 and 32 concurrent clients, with one worker process, then a second one, and then the default server.

A server configuration ``WxE`` is ``serve --workers W --evaluate-workers E``: W uvicorn processes, each with a pool
of E evaluate worker processes where the computations run. ``--configs`` (default ``1x1,2x1,1x2``) names them: one
computing process; a second uvicorn worker (each with its own); and the default server, one uvicorn worker with two
evaluate workers. The bench starts ``python -m economics serve`` on a free port of 127.0.0.1 itself
(bench/api_server.py) for each and waits for ``/v1/health``. For each case and each number of clients N, N clients
(one asyncio task each, on one httpx connection pool of N connections) send the case's request again and again for
``--seconds`` seconds; a request under way at the end finishes and counts. Before the clock starts, each case is
sent once and its answer checked against the figure the package computes in this process (the one-row case: the
golden row's 0.044996195 USD per M tokens, worked in tests/test_api.py; the upload: the CLI's CSV bytes for the same
file, ``evaluate -o``), and every answer during the run must be 200 with the expected length, else it counts as an
error.

Per cell it prints the requests completed, errors, requests per second (completed over the wall time), median,
p95 and max latency (from just before the request is sent until its whole body has arrived), the server's CPU
(its processes and their children: CPU seconds over wall seconds, 100 % = one core), this process's CPU, and the
server's resident memory after the cell. Then, per case and N, the ratio of each configuration's requests per
second to the first's, measured in this run. The clients run on the same cores as the server, so on a 2-core
machine the ratio is bounded by what the clients themselves use; their CPU is printed beside it.

Run: ``python bench/api.py`` (defaults: ``--clients 1,8,32 --configs 1x1,2x1,1x2 --seconds 5``; about two
minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import resource
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil  # type: ignore[import-untyped]  # no stubs in the dev environment

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.api_server import free_port, start_api  # noqa: E402
from bench.app_latency import percentile  # noqa: E402
from bench.server_proc import cpu_s, rss, stop_server  # noqa: E402
from economics.cli import main as cli_main  # noqa: E402

# G1 of tests/test_golden.py: 8 owned H100s at 1,000 output token/s each -> 0.044996195 USD per M tokens
GOLDEN = {"name": "golden", "accelerator": "h100-sxm", "ownership": "own", "accelerator_count": 8,
          "accelerator_price_usd": 30000, "accelerator_power_kw": 1.25, "depreciation_years": 5, "cost_of_capital": 0,
          "maintenance_fraction_per_year": 0, "software_usd_per_accelerator_year": 0, "electricity_usd_per_kwh": 0.1,
          "pue": 1, "idle_power_fraction": 1, "colocation_usd_per_kw_month": 0, "facility_capex_usd_per_kw": 0,
          "facility_depreciation_years": 15, "input_tokens_per_request": 1000, "output_tokens_per_request": 250,
          "prefix_cache_hit_rate": 0, "output_tokens_per_s_per_accelerator": 1000, "peak_to_average": 1,
          "round_to_whole_systems": False}
GOLDEN_COST = 0.044996195
UPLOAD_ROWS = 10_000


@dataclass
class Case:
    """One request sent again and again: where, what, and the answer's expected length [bytes]."""

    name: str
    path: str
    params: dict[str, str]
    body: bytes
    content_type: str
    expected_length: int = 0


@dataclass
class Cell:
    """What one case at one number of clients with one worker count measured."""

    case: str
    config: str
    clients: int
    latencies_s: list[float] = field(default_factory=list)
    errors: int = 0
    wall_s: float = 0.0
    server_cpu_s: float = 0.0
    client_cpu_s: float = 0.0
    server_rss: int = 0

    @property
    def per_s(self) -> float:
        return len(self.latencies_s) / self.wall_s if self.wall_s else 0.0


def upload_csv() -> bytes:
    """10,000 scenarios: the golden row with 10,000 names and throughputs (so no two rows are the same)."""
    columns = list(GOLDEN)
    out = io.StringIO()
    out.write(",".join(columns) + "\n")
    for i in range(UPLOAD_ROWS):
        row = {**GOLDEN, "name": f"row-{i}", "output_tokens_per_s_per_accelerator": 500 + i % 2000}
        out.write(",".join(str(row[c]) for c in columns) + "\n")
    return out.getvalue().encode()


def cli_csv(data: bytes) -> bytes:
    """The CLI's CSV for ``data`` (``evaluate -o``): what the API must send back byte for byte."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.csv", Path(tmp) / "out.csv"
        src.write_bytes(data)
        if cli_main(["evaluate", str(src), "-o", str(dst)]) != 0:
            raise SystemExit("the CLI did not evaluate the upload")
        return dst.read_bytes()


def cases() -> tuple[list[Case], bytes]:
    """The two cases, and the CLI's bytes the upload must answer."""
    one = Case("one-row evaluate (JSON)", "/v1/evaluate", {}, json.dumps([GOLDEN]).encode(), "application/json")
    data = upload_csv()
    upload = Case(f"{UPLOAD_ROWS:,}-row upload (CSV)", "/v1/evaluate", {"format": "csv"}, data, "text/csv")
    return [one, upload], cli_csv(data)


async def check(client: httpx.AsyncClient, one: Case, upload: Case, upload_bytes: bytes) -> None:
    """Each case sent once and checked against the package's figure; their answers' lengths recorded."""
    r = await client.post(one.path, params=one.params, content=one.body, headers={"content-type": one.content_type})
    (row,) = r.json()
    if r.status_code != 200 or abs(row["cost_usd_per_m_tokens"] / GOLDEN_COST - 1) > 1e-7:
        raise SystemExit(f"the one-row answer is wrong: {r.status_code} {r.text[:300]}")
    one.expected_length = len(r.content)
    r = await client.post(upload.path, params=upload.params, content=upload.body,
                          headers={"content-type": upload.content_type})
    if r.status_code != 200 or r.content != upload_bytes:
        raise SystemExit(f"the upload's answer is not the CLI's bytes: {r.status_code} {r.text[:300]}")
    upload.expected_length = len(r.content)


async def client_loop(client: httpx.AsyncClient, case: Case, deadline: float, cell: Cell) -> None:
    """One client: the case's request again and again until ``deadline``."""
    headers = {"content-type": case.content_type}
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        try:
            r = await client.post(case.path, params=case.params, content=case.body, headers=headers)
            ok = r.status_code == 200 and len(r.content) == case.expected_length
        except httpx.HTTPError:
            ok = False
        if ok:
            cell.latencies_s.append(time.perf_counter() - start)
        else:
            cell.errors += 1


async def run_cell(url: str, case: Case, clients: int, seconds: float, server: psutil.Process, config: str) -> Cell:
    """``clients`` clients sending ``case`` for ``seconds``."""
    cell = Cell(case.name, config, clients)
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=120) as client:
        cpu0, me0, t0 = cpu_s(server), time.process_time(), time.perf_counter()
        deadline = t0 + seconds
        await asyncio.gather(*(client_loop(client, case, deadline, cell) for _ in range(clients)))
        cell.wall_s = time.perf_counter() - t0
        cell.server_cpu_s, cell.client_cpu_s = cpu_s(server) - cpu0, time.process_time() - me0
    cell.server_rss = rss(server)
    return cell


def line(c: Cell) -> str:
    ms = [t * 1000 for t in c.latencies_s] or [0.0]
    return (f"{c.case:26} {c.config:>7} {c.clients:>7} {len(c.latencies_s):>8} {c.errors:>6} {c.per_s:>9.1f} "
            f"{percentile(ms, 50):>9.1f} {percentile(ms, 95):>9.1f} {max(ms):>9.1f} "
            f"{100 * c.server_cpu_s / c.wall_s:>7.0f} % {100 * c.client_cpu_s / c.wall_s:>7.0f} % "
            f"{c.server_rss / 2**20:>8.0f}")


HEADER = (f"{'case':26} {'server':>7} {'clients':>7} {'requests':>8} {'errors':>6} {'req/s':>9} {'p50 ms':>9} "
          f"{'p95 ms':>9} {'max ms':>9} {'server CPU':>9} {'bench CPU':>9} {'RSS MB':>8}")


async def measure(config: str, all_cases: list[Case], upload_bytes: bytes, clients: list[int],
                  seconds: float) -> list[Cell]:
    """Every case at every number of clients against a server of configuration ``config`` (``WxE``)."""
    port = free_port()
    workers, evaluate_workers = (int(x) for x in config.split("x"))
    with tempfile.TemporaryFile() as log:
        proc = start_api(port, log, args=("--workers", str(workers), "--evaluate-workers", str(evaluate_workers)))
        server, url = psutil.Process(proc.pid), f"http://127.0.0.1:{port}"
        try:
            async with httpx.AsyncClient(base_url=url, timeout=120) as client:
                for _ in range(2 * workers * evaluate_workers):  # every worker process has answered (warm)
                    await check(client, *all_cases, upload_bytes)
            cells = []
            for case in all_cases:
                for n in clients:
                    cells.append(await run_cell(url, case, n, seconds, server, config))
                    print(line(cells[-1]), flush=True)
            return cells
        finally:
            stop_server(proc)


def parse_counts(text: str) -> list[int]:
    counts = sorted({int(part) for part in text.split(",") if part.strip()})
    if not counts or counts[0] < 1 or counts[-1] > 256:
        raise argparse.ArgumentTypeError("counts must be between 1 and 256")
    return counts


def parse_configs(text: str) -> list[str]:
    configs = [part.strip() for part in text.split(",") if part.strip()]
    for c in configs:
        w, _, e = c.partition("x")
        if not (w.isdigit() and e.isdigit() and 1 <= int(w) <= 16 and 1 <= int(e) <= 16):
            raise argparse.ArgumentTypeError(f"{c!r}: a configuration is WxE, uvicorn workers x evaluate workers, "
                                             "each 1..16")
    if not configs or len(set(configs)) != len(configs):
        raise argparse.ArgumentTypeError("give one or more distinct configurations")
    return configs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--clients", type=parse_counts, default=[1, 8, 32], help="concurrent clients (default 1,8,32)")
    ap.add_argument("--configs", type=parse_configs, default=["1x1", "2x1", "1x2"],
                    help="server configurations WxE: --workers W --evaluate-workers E (default 1x1,2x1,1x2)")
    ap.add_argument("--seconds", type=float, default=5.0, help="seconds of requests per cell (default 5, at most 600)")
    args = ap.parse_args()
    if not 0 < args.seconds <= 600:
        ap.error("--seconds must be in (0, 600]")
    all_cases, upload_bytes = cases()
    print(f"upload: {len(all_cases[1].body) / 1e6:.2f} MB in, {len(upload_bytes) / 1e6:.2f} MB back; "
          f"{psutil.cpu_count()} cores")
    print(HEADER)
    cells = [c for config in args.configs for c in asyncio.run(measure(config, all_cases, upload_bytes, args.clients,
                                                                        args.seconds))]
    base = args.configs[0]
    print(f"\nrequests per second of each server over {base} (same case and clients, this run):")
    for c in cells:
        if c.config != base:
            ref = next(x for x in cells if x.config == base and x.case == c.case and x.clients == c.clients)
            print(f"  {c.case:26} {c.clients:>3} clients: {c.config} / {base} = "
                  f"{c.per_s / ref.per_s if ref.per_s else float('nan'):.2f}")
    print(f"bench process peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
