"""Readers of benchmark result files: each turns a tool's own format into :class:`Run` records, as recorded.

Nothing is converted or guessed here (that is :mod:`economics.io.benchmarks`): a reader takes the figures the tool
wrote, in the units it wrote them, and leaves empty what the file does not say. The formats and the keys read:

- ``vllm``: ``vllm bench serve --save-result`` (and the older ``benchmarks/benchmark_serving.py``) JSON, one run:
  ``median_tpot_ms``, ``output_throughput``, ``median_ttft_ms``, ``total_input_tokens``, ``total_output_tokens``,
  ``completed``, ``max_concurrency``, ``request_rate``, ``model_id``, ``date`` (``YYYYMMDD-HHMMSS``).
- ``sglang``: ``python -m sglang.bench_serving --output-file`` JSONL, one run a line, the same metric names.
- ``genai-perf``: GenAI-Perf ``profile_export_genai_perf.json``: metrics as ``{"unit", "avg", "p50", ...}`` objects
  (``inter_token_latency``, ``time_to_first_token``, ``output_token_throughput``, ``input_sequence_length``,
  ``output_sequence_length``) and ``input_config`` (model names, concurrency, request rate).
- ``aiperf``: AIPerf ``profile_export_aiperf.json``: the same metric objects under ``records`` (or at the top).
- ``guidellm``: GuideLLM ``benchmarks.json``: ``benchmarks[]``, each with ``metrics`` (``time_per_output_token_ms``,
  ``output_tokens_per_second``, ``time_to_first_token_ms``, ``prompt_token_count``, ``output_token_count``, each
  split by ``successful``) and its strategy (synchronous, concurrent streams, constant rate).
- ``inferencex``: InferenceX result rows (its ``/api/v1/benchmarks`` JSON: hardware, framework, precision, isl/osl,
  conc, topology, ``metrics`` with ``median_intvty``, ``output_tput_per_gpu`` ...).
- ``mlperf``: an MLPerf Inference ``mlperf_log_summary.txt`` (LLM benchmarks).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from economics.catalog import yes_no
from economics.schema.values import shown, unique_keys


class BenchmarkFormat(StrEnum):
    """A benchmark file's format (``import-benchmark --format``, the API's ``benchmark_format``): ``auto`` tells the
    others apart by content (:func:`detect`).

    >>> [f.value for f in BenchmarkFormat][:3]
    ['auto', 'vllm', 'sglang']
    """

    AUTO = "auto"
    VLLM = "vllm"
    SGLANG = "sglang"
    GENAI_PERF = "genai-perf"
    AIPERF = "aiperf"
    GUIDELLM = "guidellm"
    INFERENCEX = "inferencex"
    MLPERF = "mlperf"
    CURVES = "curves"


FORMATS = tuple(f.value for f in BenchmarkFormat if f is not BenchmarkFormat.AUTO)
"""The formats a file is read in (:class:`BenchmarkFormat` but ``auto``)."""
MAX_RUNS = 100_000


class BenchmarkError(ValueError):
    """A benchmark file that cannot become curve points: the message names the file, the run and what is missing
    (the flag that supplies it) or wrong (field and value).
    """


@dataclass(frozen=True)
class Run:
    """One benchmark run as its tool recorded it (numbers in the units named; None where the file is silent)."""

    tool: str
    index: int
    per_user: float | None = None  # token/s/user
    output_tokens_per_s: float | None = None  # over the whole deployment
    output_tokens_per_s_per_accelerator: float | None = None  # where the file states it per accelerator
    ttft_s: float | None = None
    concurrency: float | None = None
    request_rate_per_s: float | None = None
    input_tokens: float | None = None
    output_tokens: float | None = None
    model_name: str = ""
    accelerator: str = ""
    accelerators: float | None = None
    precision: str = ""
    tool_version: str = ""
    run_date: str = ""
    framework: str = ""
    stack: dict[str, str] = field(default_factory=dict)
    group: str = ""  # runs of one group (a published run) share a curve; '' = by configuration alone
    token_basis: str = ""
    point_kind: str = "measured"
    source: str = ""
    note: str = ""


def _number(obj: Any, *keys: str) -> float | None:
    """The first of ``keys`` in ``obj`` holding a finite number (JSON numbers, or text of one), else None."""
    for key in keys:
        v = obj.get(key) if isinstance(obj, dict) else None
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, (int, float)):
            x = float(v)
        elif isinstance(v, str):
            try:
                x = float(v.strip())
            except ValueError:
                continue
        else:
            continue
        if x == x and abs(x) != float("inf"):
            return x
    return None


def _per_user_from_ms(ms: float | None) -> float | None:
    return 1000.0 / ms if ms and ms > 0 else None


def _mean(total: float | None, count: float | None) -> float | None:
    return total / count if total is not None and count else None


def _date(text: Any) -> str:
    """An ISO date (YYYY-MM-DD) from the dates tools write: vLLM's ``20250101-120000``, ISO timestamps, or epoch
    seconds; '' when there is none.
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool) and 1e9 < text < 1e11:
        return dt.datetime.fromtimestamp(float(text), dt.UTC).date().isoformat()
    s = str(text or "").strip()
    m = re.match(r"^(\d{4})(\d{2})(\d{2})-\d{6}", s) or re.match(r"^(\d{4})-(\d{2})-(\d{2})", s)
    return f"{m.group(1)}-{m.group(2)}-{m.group(3)}" if m else ""


def _vllm_like(obj: dict[str, Any], tool: str, index: int) -> Run:
    """A vLLM or SGLang serving benchmark's run (they write the same metric names)."""
    completed = _number(obj, "completed")
    rate = _number(obj, "request_rate")
    return Run(
        tool=tool, index=index,
        per_user=_per_user_from_ms(_number(obj, "median_tpot_ms") or _number(obj, "median_itl_ms")),
        output_tokens_per_s=_number(obj, "output_throughput"),
        ttft_s=(_number(obj, "median_ttft_ms") or 0) / 1000 or None,
        concurrency=_number(obj, "max_concurrency"),
        request_rate_per_s=rate,  # inf (all at once) is not a number here: empty
        input_tokens=_mean(_number(obj, "total_input_tokens"), completed) or _number(obj, "random_input_len"),
        output_tokens=_mean(_number(obj, "total_output_tokens"), completed) or _number(obj, "random_output_len"),
        model_name=str(obj.get("model_id") or obj.get("model") or obj.get("tokenizer_id") or ""),
        tool_version=str(obj.get("version") or obj.get("vllm_version") or obj.get("sglang_version") or ""),
        run_date=_date(obj.get("date")), framework={"vllm": "vLLM", "sglang": "SGLang"}[tool],
        token_basis="output tokens/s of the run (output_throughput) / accelerators",
        note=f"median TPOT {number_cell(_number(obj, 'median_tpot_ms'), 4)} ms; {number_cell(completed)} requests "
             "completed")


def read_vllm(obj: dict[str, Any]) -> list[Run]:
    """The one run of a vLLM serving benchmark's result file (``vllm bench serve --save-result``)."""
    return [_vllm_like(obj, "vllm", 1)]


def read_sglang(lines: list[dict[str, Any]]) -> list[Run]:
    """SGLang's runs, with the server's configuration where the line records it (``server_info``: model path,
    TP/EP/DP attention, speculative algorithm, version).
    """
    runs = []
    for i, obj in enumerate(lines, start=1):
        run = _vllm_like(obj, "sglang", i)
        info = obj.get("server_info") if isinstance(obj.get("server_info"), dict) else {}
        if info:
            spec = str(info.get("speculative_algorithm") or "none").lower()
            run = replace(run, model_name=run.model_name or str(info.get("model_path") or ""),
                          tool_version=run.tool_version or str(info.get("version") or ""),
                          framework=f"SGLang {info['version']}" if info.get("version") else run.framework,
                          stack={"tensor_parallel": number_cell(_number(info, "tp_size")),
                                 "expert_parallel": number_cell(_number(info, "ep_size")),
                                 "data_parallel_attention": yes_no(bool(info.get("enable_dp_attention"))),
                                 "speculative_decoding": "mtp" if spec in ("eagle", "nextn", "mtp") else spec})
        runs.append(run)
    return runs


def _stat(metric: Any, *names: str) -> float | None:
    """A statistic of a GenAI-Perf/AIPerf metric object (``{"unit": "ms", "avg": ..., "p50": ...}``)."""
    return _number(metric, *names) if isinstance(metric, dict) else None


def _perf_analyzer_like(obj: dict[str, Any], tool: str) -> Run:
    """GenAI-Perf or AIPerf: one profile export is one run (one concurrency or request rate). Per-user speed is
    the median of the per-request ``output_token_throughput_per_user`` (1 / each request's inter-token latency;
    1,000 / the median ITL where the file has no per-user metric).
    """
    records = obj.get("records")
    metrics: dict[str, Any] = records if isinstance(records, dict) else obj
    given = obj.get("input_config")
    cfg: dict[str, Any] = given if isinstance(given, dict) else {}

    def m(*names: str) -> dict[str, Any]:
        return next((metrics[n] for n in names if isinstance(metrics.get(n), dict)), {})

    per_user = _stat(m("output_token_throughput_per_user", "output_token_throughput_per_request"), "p50")
    itl = m("inter_token_latency")
    if per_user is None:
        per_user = _per_user_from_ms(_in_ms(_stat(itl, "p50"), itl.get("unit", "ms")))
    ttft = m("time_to_first_token")
    stimulus = _find(cfg, "stimulus") if isinstance(_find(cfg, "stimulus"), dict) else {}
    loadgen = cfg.get("loadgen") if isinstance(cfg.get("loadgen"), dict) else {}
    model = (_find(cfg, "model_names") or cfg.get("model") or "")
    count = _stat(m("request_count"), "avg")
    total_out = _stat(m("total_output_tokens", "total_osl"), "avg")
    return Run(
        tool=tool, index=1, per_user=per_user, output_tokens_per_s=_stat(m("output_token_throughput"), "avg"),
        ttft_s=_in_seconds(_stat(ttft, "p50"), ttft.get("unit", "ms")),
        concurrency=_number(stimulus, "concurrency") or _number(loadgen, "concurrency") or _number(cfg, "concurrency"),
        request_rate_per_s=_number(stimulus, "request_rate") or _number(loadgen, "request_rate")
        or _number(cfg, "request_rate"),
        input_tokens=_stat(m("input_sequence_length"), "avg"),
        output_tokens=_mean(total_out, count) or _stat(m("output_sequence_length"), "avg"),
        model_name=str(model[0] if isinstance(model, list) and model else model or ""),
        tool_version=str(obj.get("aiperf_version") or obj.get("version") or ""),
        run_date=_date(obj.get("start_time") or ""), framework="",
        token_basis="output token throughput of the run (output_token_throughput) / accelerators",
        note=f"median per-user output speed of the requests; {number_cell(count)} requests")


def _in_seconds(value: float | None, unit: str) -> float | None:
    ms = _in_ms(value, unit)
    return None if ms is None else ms / 1000


def _in_ms(value: float | None, unit: str) -> float | None:
    if value is None:
        return None
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1000.0, "sec": 1000.0}.get(str(unit).strip().lower())
    if scale is None:
        raise BenchmarkError(f"unit: {shown(unit)} is not a time unit (ns, us, ms, s)")
    return value * scale


def read_guidellm(obj: dict[str, Any]) -> list[Run]:
    """Each of a GuideLLM report's benchmarks (one strategy: synchronous, concurrent streams, a constant rate).
    Per-user speed is 1,000 / the median inter-token latency of the successful requests (``time_per_output_token_ms``
    counts the first token too); throughput the mean output tokens/s.
    """
    runs = []
    for i, b in enumerate(obj.get("benchmarks") or [], start=1):
        metrics = b.get("metrics", {}) if isinstance(b, dict) else {}

        def ok(name: str, stat: str, metrics: Any = metrics) -> float | None:
            v = metrics.get(name, {}) if isinstance(metrics, dict) else {}
            return _number(v.get("successful", v) if isinstance(v, dict) else {}, stat)

        strategy = _strategy(b)
        kind = str(strategy.get("type_") or strategy.get("type") or "")
        streams = 1.0 if kind == "synchronous" else _number(strategy, "streams")
        backend = _find(b, "backend") if isinstance(_find(b, "backend"), dict) else {}
        model = (_find(b, "backend_model") or backend.get("model") or _find(obj.get("args", {}), "model")
                 or _find(obj.get("config", {}), "model") or "")
        runs.append(Run(
            tool="guidellm", index=i,
            per_user=_per_user_from_ms(ok("inter_token_latency_ms", "median")),
            output_tokens_per_s=ok("output_tokens_per_second", "mean"),
            ttft_s=(ok("time_to_first_token_ms", "median") or 0) / 1000 or None,
            concurrency=streams, request_rate_per_s=_number(strategy, "rate"),
            input_tokens=ok("prompt_token_count", "mean"), output_tokens=ok("output_token_count", "mean"),
            model_name=str(model), tool_version=str(_find(obj.get("metadata", {}), "guidellm_version") or ""),
            run_date=_date(b.get("start_time") if isinstance(b, dict) else ""), framework="",
            token_basis="mean output tokens/s of the benchmark (output_tokens_per_second) / accelerators",
            note=f"strategy {shown(kind)}"))
    return runs


def _strategy(b: Any) -> dict[str, Any]:
    found = _find(b, "strategy")
    return found if isinstance(found, dict) else {}


def _find(obj: Any, key: str, depth: int = 0) -> Any:
    """The first value under ``key`` in nested dicts (breadth-first over a few levels): GuideLLM's reports move
    their configuration between versions (``args``, ``config``, ``run_info``).
    """
    if not isinstance(obj, dict) or depth > 4:
        return None
    if key in obj:
        return obj[key]
    for v in obj.values():
        hit = _find(v, key, depth + 1)
        if hit is not None:
            return hit
    return None


INFERENCEX_HARDWARE = {"h100": "h100-sxm", "h200": "h200-sxm", "b200": "b200", "b300": "b300",
                       "gb200": "gb200-nvl72", "gb300": "gb300-nvl72", "mi300x": "mi300x", "mi325x": "mi325x",
                       "mi355x": "mi355x"}
"""InferenceX's hardware names -> catalog ids (a GB200/GB300 GPU is one GPU of an NVL72 rack)."""


def read_inferencex(rows: list[Any], skipped: list[str] | None = None) -> list[Run]:
    """InferenceX result rows. Per-accelerator output over the whole deployment: single-node rows divide by the
    tensor-parallel GPUs already (``output_tput_per_gpu``); disaggregated rows divide output by the decode GPUs
    only, so it is scaled by D / (P + D) to count every GPU (total tokens: ``tput_per_gpu`` over P + D).

    A row that cannot be read (no output figure, or GPU counts that contradict its throughputs) is refused, or,
    with a ``skipped`` list, left out and named there with its reason.
    """
    runs = []
    for i, r in enumerate(rows, start=1):
        try:
            runs.append(_inferencex_row(i, r))
        except BenchmarkError as exc:
            if skipped is None:
                raise
            skipped.append(str(exc))
    return runs


def _inferencex_row(i: int, r: Any) -> Run:
    """One InferenceX row as a run (see :func:`read_inferencex`)."""
    if not isinstance(r, dict):
        raise BenchmarkError(f"row {i}: not an object")
    m = r.get("metrics") if isinstance(r.get("metrics"), dict) else r  # the API nests them; the raw artifact not
    out = _number(m, "output_tput_per_gpu")
    if out is None:
        raise BenchmarkError(f"row {i}: no output_tput_per_gpu (tput_per_gpu alone counts input tokens too, and "
                             "random lengths leave no exact conversion)")
    disagg = bool(r.get("disagg"))
    p, d = _number(r, "num_prefill_gpu"), _number(r, "num_decode_gpu")
    tp, ep = _number(r, "decode_tp", "tp"), _number(r, "decode_ep", "ep")
    if "hardware" not in r:  # the benchmark repository's raw artifact: GPUs of one node = TP x PP x PCP
        tp = (tp or 1.0) * (_number(r, "pp") or 1.0) * (_number(r, "pcp_size") or 1.0) if tp else None
    gpus: float | None
    per_acc: float | None
    if disagg:
        total, inp = _number(m, "tput_per_gpu"), _number(m, "input_tput_per_gpu")
        if not (p and d and total and inp is not None):
            raise BenchmarkError(f"row {i}: a disaggregated row needs num_prefill_gpu, num_decode_gpu, "
                                 "tput_per_gpu, input_tput_per_gpu and output_tput_per_gpu")
        if abs(total * (p + d) - (inp * p + out * d)) > 0.01 * total * (p + d):
            raise BenchmarkError(f"row {i}: tput_per_gpu x (P + D) = {total * (p + d):,.0f} is not input x P + "
                                 f"output x D = {inp * p + out * d:,.0f} (P = {p:g}, D = {d:g}): the row's GPU "
                                 "counts do not match its throughputs")
        gpus, per_acc = p + d, out * d / (p + d)
        basis = (f"InferenceX output_tput_per_gpu (per decode GPU) x {d:g} decode / {p + d:g} GPUs "
                 f"({p:g} prefill + {d:g} decode)")
    else:
        gpus, per_acc = tp, out
        basis = f"InferenceX output_tput_per_gpu (output tokens/s / {shown(tp)} tensor-parallel GPUs)"
    spec = str(r.get("spec_method") or r.get("spec_decoding") or "none")
    hw = str(r.get("hardware") or str(r.get("hw") or "").split("-")[0]).lower()  # raw runner names: b200-nv_2
    url = str(r.get("run_url") or "")
    return Run(
        tool="inferencex", index=i, per_user=_number(m, "median_intvty") or _per_user_from_ms(
            (_number(m, "median_tpot") or 0) * 1000), output_tokens_per_s_per_accelerator=per_acc,
        ttft_s=_number(m, "median_ttft"), concurrency=_number(r, "conc"),
        input_tokens=_number(r, "isl"), output_tokens=_number(r, "osl"),
        model_name=str(r.get("model") or r.get("infmax_model_prefix") or ""),
        accelerator=INFERENCEX_HARDWARE.get(hw, hw), accelerators=gpus, precision=str(r.get("precision") or ""),
        run_date=_date(r.get("date")), framework=str(r.get("framework") or ""),
        stack={"tensor_parallel": number_cell(tp), "expert_parallel": number_cell(ep),
               "data_parallel_attention": yes_no(_truthy(r.get("decode_dp_attention", r.get("dp_attention")))),
               "speculative_decoding": spec, "disaggregated": yes_no(bool(disagg)),
               "prefill_accelerators": number_cell(p) if disagg else "",
               "decode_accelerators": number_cell(d) if disagg else ""},
        group=url.split("/attempts")[0], token_basis=basis, source=url,
        note=f"concurrency {shown(r.get('conc'))}; image {shown(r.get('image') or '')}; nominal ISL/OSL")


def _truthy(v: Any) -> bool:
    """InferenceX booleans: JSON true/false in the API, the strings "true"/"false" in the raw artifact."""
    return v is True or str(v).strip().lower() == "true"


def number_cell(x: float | None, digits: int = 6) -> str:
    """A number as a cell: empty for None, whole numbers without a point (below 1e15: a larger one would be
    hundreds of digits no reader takes), else ``digits`` significant digits.

    >>> number_cell(None), number_cell(8.0), number_cell(1343.834422657952), number_cell(0.000123456789)
    ('', '8', '1343.83', '0.000123457')
    >>> number_cell(1e303)
    '1e+303'
    """
    return "" if x is None else (str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:.{digits}g}")


MLPERF_LINE = re.compile(r"^\s*([^:]+?)\s*:\s*(.*?)\s*$")


def read_mlperf_summary(text: str) -> list[Run]:
    """An MLPerf Inference LLM ``mlperf_log_summary.txt``: tokens per second of the system, the p99 time per output
    token (a lower bound on per-user speed: ``constraint`` points) and the mean TTFT where the scenario logs them.
    """
    kv: dict[str, str] = {}
    for line in text.splitlines():
        m = MLPERF_LINE.match(line)
        if m and m.group(1) not in kv:
            kv[m.group(1)] = m.group(2)
    tokens = _number(kv, "Tokens per second", "Completed tokens per second")
    tpot_ns = _number(kv, "50.00 percentile time to output token (ns)", "50.00 percentile time per output token (ns)")
    ttft_ns = _number(kv, "50.00 percentile first token latency (ns)")
    samples = _number(kv, "Samples per second", "Completed samples per second")
    valid = kv.get("Result is", "")
    scenario = kv.get("Scenario", "")
    return [Run(
        tool="mlperf", index=1, per_user=1e9 / tpot_ns if tpot_ns else None, output_tokens_per_s=tokens,
        ttft_s=ttft_ns / 1e9 if ttft_ns else None, output_tokens=_mean(tokens, samples),
        input_tokens=MLPERF_NO_INPUT, point_kind="measured" if tpot_ns else "offline",
        token_basis="MLPerf tokens per second (generated tokens) / accelerators",
        note=f"SUT {shown(kv.get('SUT name', ''))}; scenario {shown(scenario)}; result {shown(valid)}; per-user = "
             "1e9 / median time per output token [ns]; the log records no prompt length")]


MLPERF_NO_INPUT = None
"""MLPerf logs record no prompt length: asked for (``--input-tokens``) or the point stays without one."""
MLPERF_TPOT_LIMIT_MS = {("llama2-70b", "server"): 200.0, ("llama2-70b", "interactive"): 40.0,
                        ("llama3.1-405b", "server"): 175.0}
"""Per-user speed bounds of MLPerf Inference's LLM scenarios (p99 time per output token limits, ms), used for the
summary table's rows, which carry no latency (MLPerf Inference rules, LLM latency constraints)."""
MLPERF_ACCELERATORS = ("gb300", "gb200", "b300", "b200", "h200", "h100", "mi355x", "mi325x", "mi300x", "a100",
                       "l40s")


def mlperf_accelerator(name: str) -> str:
    """The catalog id in an MLPerf accelerator name ('NVIDIA H200-SXM-141GB' -> h200-sxm), '' when it names none
    or a variant the catalog does not hold (PCIe, NVL).
    """
    text = re.sub(r"[^a-z0-9]", "", name.lower())
    if "pcie" in text or "nvl" in text and "nvl72" not in text:
        return ""
    key = next((k for k in MLPERF_ACCELERATORS if k in text), "")
    return {"h200": "h200-sxm", "h100": "h100-sxm", "gb200": "gb200-nvl72", "gb300": "gb300-nvl72",
            "a100": "a100-sxm"}.get(key, key)


def read_mlperf_table(text: str) -> list[Run]:
    """The rows of an MLPerf results summary table (``summary.csv``): the system's tokens/s over its accelerators
    (nodes x per node); power rows (``Units`` = Watts) are not runs. Offline rows have no per-user speed; Server and
    Interactive rows take their scenario's bound (``constraint`` points).
    """
    runs = []
    for i, r in enumerate(csv.DictReader(io.StringIO(text)), start=1):
        if str(r.get("Units", "")).strip().lower() == "watts":
            continue
        scenario = str(r.get("Scenario", "")).strip().lower()
        model = str(r.get("MlperfModel") or r.get("Model") or "").strip()
        family = re.sub(r"-(interactive-)?99(\.9)?$", "", model.lower())
        limit = MLPERF_TPOT_LIMIT_MS.get((family, "interactive" if "interactive" in model.lower() else scenario))
        tokens = re.search(r"TOKENS_PER_SAMPLE:\s*([0-9.]+)", str(r.get("Accuracy", "")))
        nodes, per_node = _number(r, "number_of_nodes"), _number(r, "accelerators_per_node")
        runs.append(Run(
            tool="mlperf", index=i, per_user=1000.0 / limit if limit and scenario != "offline" else None,
            output_tokens_per_s=_number(r, "Result"), output_tokens=float(tokens.group(1)) if tokens else None,
            model_name=model, accelerator=mlperf_accelerator(str(r.get("accelerator_model_name", ""))),
            accelerators=(nodes or 1.0) * per_node if per_node else None,
            precision=str(r.get("weight_data_types") or "").replace("nvfp4", "fp4"), tool_version=str(
                r.get("version") or ""), framework=str(r.get("framework") or ""),
            point_kind="offline" if scenario == "offline" else "constraint",
            token_basis="MLPerf system tokens/s (generated tokens) / (nodes x accelerators per node)",
            note=f"{shown(r.get('SystemName', ''))}; {shown(r.get('Scenario', ''))}; {shown(r.get('Availability', ''))}"
                 + (f"; per-user = 1,000 / the scenario's p99 TPOT limit of {limit:g} ms, a lower bound" if limit
                    and scenario != "offline" else "")))
    return runs


def detect(data: bytes, name: str) -> str:
    """The format of a file from its content (and, for text summaries, its first lines)."""
    text = data.decode("utf-8-sig", errors="replace").lstrip()
    if text.startswith("=") or "MLPerf Results Summary" in text[:2000]:
        return "mlperf"
    if text.startswith("Organization,") and "Scenario" in text.split("\n", 1)[0]:
        return "mlperf"
    if not text.startswith(("{", "[")):
        return "curves"
    first = text.split("\n", 1)[0].strip()
    try:
        obj = load_json(text, name)
    except json.JSONDecodeError:
        if first.startswith("{"):
            return "sglang"  # one JSON object a line
        raise BenchmarkError(f"{shown(name)}: not JSON, a JSONL of runs, a curve CSV or an MLPerf summary") from None
    if isinstance(obj, list):
        if obj and isinstance(obj[0], dict) and ({"median_intvty", "hardware", "metrics", "hw"} & set(obj[0])):
            return "inferencex"
        raise BenchmarkError(f"{shown(name)}: a JSON list that is not InferenceX result rows")
    if not isinstance(obj, dict):
        raise BenchmarkError(f"{shown(name)}: JSON that is not a benchmark result")
    if "benchmarks" in obj:
        return "guidellm"
    if "records" in obj or "aiperf" in json.dumps(obj.get("input_config", ""))[:4000].lower():
        return "aiperf"
    if "output_token_throughput" in obj or "inter_token_latency" in obj:
        return "genai-perf"
    if "output_throughput" in obj:
        return "sglang" if "dataset_name" in obj and "model_id" not in obj else "vllm"
    raise BenchmarkError(f"{shown(name)}: a JSON object of no known benchmark format (give --format)")


def load_json(text: str, name: str) -> Any:
    """A benchmark file's JSON, read as scenario JSON is: a repeated key refused (its last value would silently win,
    :func:`economics.schema.values.unique_keys`), as is nesting too deep to read; :class:`json.JSONDecodeError` for text
    that is not JSON (the callers say which format they expected).
    """
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise BenchmarkError(f"{shown(name)}: not usable JSON: nested too deeply") from None
    except ValueError as exc:  # a repeated key (unique_keys); an integer of more digits than Python converts (4,300)
        raise BenchmarkError(f"{shown(name)}: not usable JSON: {shown(str(exc).split(';')[0], 200)}") from None


def read_runs(data: bytes, name: str, fmt: str = BenchmarkFormat.AUTO, skipped: list[str] | None = None) -> list[Run]:
    """The runs of one benchmark file in format ``fmt`` (``auto``: :func:`detect`); not for ``curves``. With a
    ``skipped`` list, InferenceX rows whose GPU counts contradict their throughputs are named there, not refused.
    """
    fmt = detect(data, name) if fmt == BenchmarkFormat.AUTO else fmt
    text = data.decode("utf-8-sig", errors="strict")
    try:
        if fmt == "mlperf":
            table = text.lstrip().startswith("Organization,")
            return _bounded(read_mlperf_table(text) if table else read_mlperf_summary(text))
        if fmt == "sglang":
            lines = [load_json(line, name) for line in text.splitlines() if line.strip()]
            if not all(isinstance(x, dict) for x in lines):
                raise BenchmarkError(f"{shown(name)}: a line is not a JSON object")
            return _bounded(read_sglang(lines))
        obj = load_json(text, name)
    except json.JSONDecodeError as exc:
        raise BenchmarkError(f"{shown(name)}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    readers: dict[str, Callable[[Any], list[Run]]] = {
        "vllm": read_vllm, "genai-perf": lambda o: [_perf_analyzer_like(o, "genai-perf")],
        "aiperf": lambda o: [_perf_analyzer_like(o, "aiperf")], "guidellm": read_guidellm,
        "inferencex": lambda rows: read_inferencex(rows, skipped)}
    if fmt not in readers:
        raise BenchmarkError(f"--format: {shown(fmt)} is not one of auto, {', '.join(FORMATS)}")
    expected = list if fmt == "inferencex" else dict
    if not isinstance(obj, expected):
        raise BenchmarkError(f"{shown(name)}: a {fmt} file is a JSON {'list' if expected is list else 'object'}")
    return _bounded(readers[fmt](obj))


def _bounded(runs: list[Run]) -> list[Run]:
    if len(runs) > MAX_RUNS:
        raise BenchmarkError(f"{len(runs):,} runs, more than the {MAX_RUNS:,} a file may hold")
    return runs
