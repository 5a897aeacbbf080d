"""What the validation-set add scripts (tools/add_validation_set_4.py to _10.py) share: reading a set's transcription,
the curves' format cells of a row (weights, compute and KV cache apart) and what the curves' parser refuses in them,
the serving-stack row of a stack first published with a set's points, and the append to data/.

Each add script keeps what is its own (the reading rules in its docstring, its sources, how a transcription row becomes
a row of data/throughput_curves.csv) and calls :func:`append` to write it: the set's points at the end of
data/throughput_curves.csv and the serving stacks not yet in data/serving_stacks.csv at the end of that file, with the
columns and line ends those files already have, so that re-running the scripts in order on data/ as it was before the
fourth set gives data/ byte for byte (tests/test_validation_sets.py).
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
sys.path.insert(0, str(ROOT))
from economics.schema import user_curves  # noqa: E402

READ = "2026-12-05"
"""The date the fourth to seventh sets were read."""


def transcription(name: str) -> list[dict[str, str]]:
    """The rows of tools/<name> (a set's transcription, one row per published figure)."""
    with open(ROOT / "tools" / name, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def point(t: dict[str, str], what: str, **own: object) -> dict[str, object]:
    """The data/throughput_curves.csv row of the transcription row ``t`` published by ``what``: what every set's rows
    share (one node, offline, not disaggregated, no pipeline parallelism; the accelerator, model, precision and
    published per-accelerator throughput; the source and the date read) and its defaults (expert parallel 1, no
    attention data parallelism, no speculative decoding), then the set's own cells (``own``, over the defaults).
    """
    return {"accelerator": t["accelerator"], "model": t["model"], "precision": t["precision"],
            "output_tokens_per_s_per_accelerator": t["output_tokens_per_s_per_accelerator"], "point_kind": "offline",
            "time_to_first_token_s": "", "pipeline_parallel": 1, "expert_parallel": 1, "data_parallel_attention": "",
            "speculative_decoding": "none", "disaggregated": "no", "nodes": 1, "source": f"{what} {t['url']}",
            "source_date": READ, **own}


def formats(t: dict[str, str]) -> dict[str, str]:
    """The curves' format cells of a transcription row: ``precision`` is the compute's format, and the weights' and
    the KV cache's are written only where they differ from it (an empty cell is ``precision``'s, as in a scenario).

    >>> formats({"weight_precision": "int4", "compute_precision": "bf16", "kv_cache_precision": "bf16"})
    {'precision': 'bf16', 'weight_precision': 'int4', 'compute_precision': '', 'kv_cache_precision': ''}
    """
    c, w, kv = t["compute_precision"], t["weight_precision"], t["kv_cache_precision"]
    return {"precision": c, "weight_precision": "" if w == c else w, "compute_precision": "",
            "kv_cache_precision": "" if kv == c else kv}


def published_formats(t: dict[str, str]) -> str:
    """The row's formats in its curve id: its one precision, or weights, compute and KV cache apart."""
    return t["precision"] or f"w{t['weight_precision']}-c{t['compute_precision']}-kv{t['kv_cache_precision']}"


def format_problems(t: dict[str, str]) -> list[str]:
    """What the curves' parser (``economics.schema.user_curves.point_problems``: the scenario's fields, and a pair of
    formats the accelerator runs) refuses in a row's formats: [] when data/throughput_curves.csv can hold them."""
    cells = {**dict.fromkeys(user_curves.COLUMNS, ""), "accelerator": t["accelerator"], "model": t["model"],
             **formats(t)}
    columns = ("precision", *user_curves.FORMAT_COLUMNS)
    return [p for p in user_curves.point_problems(cells) if p.split(":")[0] in columns]


def layout_point(t: dict[str, str], k: int, n: int, ordinal: str, group: tuple[str, str, str, str], how: str,
                 stack: str, read: str) -> dict[str, object]:
    """The data/throughput_curves.csv row of the ``k``-th (0-based) row ``t`` of the ``n``-th set (``ordinal``:
    "ninth"), a set that records its rows' formats and parallel layout: ``group`` its source's (holdout_group,
    stack prefix, confidence, description), ``how`` its load in words, ``stack`` its serving stack, ``read`` the date
    it was read.
    """
    holdout, _, confidence, what = group
    tp, conc, i, o = int(t["tensor_parallel"]), t["concurrency_or_batch"], t["input_tokens"], t["output_tokens"]
    return point(
        t, what, curve_id=f"set{n}-{holdout}-{t['accelerator']}-{t['model']}-{published_formats(t)}-tp{tp}-"
                          f"{round(float(i))}-{round(float(o))}-r{k + 1}",
        accelerator_count=t["accelerator_count"], input_tokens=i, output_tokens=o, output_tokens_per_s_per_user="",
        framework=t["framework_and_version"], serving_stack=stack, concurrency=conc, tensor_parallel=tp,
        pipeline_parallel=int(t["pipeline_parallel"]), expert_parallel=int(t["expert_parallel"]),
        data_parallel_attention=t["data_parallel_attention"], nodes=int(t["nodes"]), holdout_group=holdout,
        confidence=confidence, source_date=read,
        note=f"{how}, TP {tp}, input {i}, output {o}, model as published {t['model_as_published']}: published "
             f"{t['value_as_published']} ({t['note']}); {ordinal} validation set, selection rule committed before it "
             f"was gathered (tools/validation_set_{n}.md), gathered without comparing it to the estimate, never "
             f"fitted; read {read}", **formats(t))


def framework_name(framework: str) -> str:
    """The serving stack's framework from a point's ``framework`` cell ("vLLM 0.6.6" -> "vLLM")."""
    return "TensorRT-LLM" if framework.startswith("TensorRT") else framework.split(" ")[0]


def stack_row(sid: str, r: dict[str, object], ordinal: str) -> dict[str, object]:
    """The data/serving_stacks.csv row of a stack id first published with the points of the ``ordinal`` set."""
    return {"stack_id": sid, "framework": framework_name(str(r["framework"])), "version": r["framework"],
            "tensor_parallel": r["tensor_parallel"], "expert_parallel": 1, "data_parallel_attention": "no",
            "speculative_method": "none", "draft_tokens": 0, "acceptance_rate": "", "draft_cost_fraction": "",
            "disaggregated": "no", "nodes": 1, "accelerators": r["tensor_parallel"], "precision": r["precision"],
            "measured_on": r["accelerator"], "source": str(r["source"]).split(" ")[-1], "source_date": READ,
            "confidence": r["confidence"],
            "note": f"configuration as published with the measured points (data/throughput_curves.csv, serving_stack "
                    f"{sid}); {ordinal} validation set"}


def _read(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def _write(path: Path, fields: list[str], rows: Iterable[dict[str, object]]) -> None:
    with open(path, "a", newline="", encoding="utf-8") as f:
        csv.DictWriter(f, fieldnames=fields, lineterminator="\n").writerows(rows)


def append(new: list[dict[str, object]], groups: Iterable[str], ordinal: str, data: Path = DATA,
           stack: Callable[[str, dict[str, object], str], dict[str, object]] = stack_row) -> None:
    """Append a set's points (``new``, rows of data/throughput_curves.csv) and their new serving stacks to ``data``.

    Refuses (SystemExit, nothing written) when a point of one of the set's ``groups`` (holdout groups) is already
    in the file, so that a set is never added twice.
    """
    fields, existing = _read(data / "throughput_curves.csv")
    mine = set(groups)
    if any(r["holdout_group"] in mine for r in existing):
        raise SystemExit(f"the {ordinal} validation set is already in data/throughput_curves.csv")
    _write(data / "throughput_curves.csv", fields, new)
    stack_fields, stacks_known = _read(data / "serving_stacks.csv")
    known = {r["stack_id"] for r in stacks_known}
    stacks = {str(r["serving_stack"]): r for r in new if r["serving_stack"] not in known}
    _write(data / "serving_stacks.csv", stack_fields, (stack(sid, r, ordinal) for sid, r in stacks.items()))
    print(f"appended {len(new)} points and {len(stacks)} serving stacks")
