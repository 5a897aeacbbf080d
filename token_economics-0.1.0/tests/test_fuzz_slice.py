"""A bounded slice of ``bench/fuzz.py`` in CI: generated hostile values through the CSV reader, the JSON reader,
the DataFrame API, the link decoder, Scenario and the CLI; no traceback, no parser mismatch, no non-finite output,
no exit code at odds with the rows. (The full run, 100,000 inputs, is ``python bench/fuzz.py``.)"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "fuzz.py"


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzz_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("seed", [1, 2])
def test_fuzz_slice_finds_no_traceback_and_no_mismatch(seed: int) -> None:
    report = load_bench().run(inputs=1500, seed=seed, batch=500)
    assert report.inputs + report.file_inputs == 1500 and report.cli_runs >= 9
    assert report.tracebacks == []
    assert report.mismatches == []
    assert report.nonfinite == []
    assert report.exit_mismatches == []


def test_the_fuzz_counts_a_mismatch_when_paths_disagree() -> None:
    # the bench's own comparison must be able to fail: a link read by another parser would be caught
    bench = load_bench()
    assert bench.reference("accelerator_count", "1_000") == ("bad", None)
    assert bench.reference("rent_includes_energy", "t") == ("ok", True)
    assert bench.reference("electricity_usd_per_kwh", "") == ("ok", 0.0806)
    assert bench.normal(float("nan")) == ("ok", None)
