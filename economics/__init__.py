"""Token economics for LLM inference: cost per token, capacity, revenue and margins from sourced catalogs.

Python API (the CLI ``python -m economics`` and the Streamlit app use the same functions)::

    import economics
    s = economics.default_scenario()
    out = economics.evaluate_scenario(s)          # one scenario -> dict of inputs and outputs
    print(economics.explain_text(s))              # every output with the numbers substituted
    table = economics.evaluate(df)                # a DataFrame of scenarios, column-wise
    curves = economics.import_benchmark(["run.json"], accelerator="h100-sxm", accelerators=8, precision="fp8")
    mine = economics.load_curves(economics.curves_csv(curves).encode())   # kept under its SHA-256
    economics.evaluate_scenario(s.model_copy(update={"curves_sha256": mine.sha256, ...}))
"""

from __future__ import annotations

from economics import catalog
from economics.engine.batch import (
    RESULT_COLUMNS,
    ScenarioError,
    evaluate,
    evaluate_scenario,
    evaluate_with_report,
    explain_row,
    explain_scenario,
    explain_text,
)
from economics.engine.pipeline import split_warnings
from economics.engine.provenance import throughput_description
from economics.io.benchmarks import BenchmarkError, curves_csv, import_benchmark
from economics.presets import default_scenario, preset_scenarios
from economics.scenario import CATALOG_FIELDS, FIELDS, Scenario, with_changes
from economics.user_curves import CurveFile, CurveFileError, read_bounded
from economics.user_curves import load as _load
from economics.validation import InputError

__version__ = "0.1.0"
"""The package's version: pyproject.toml reads it from here (``[tool.setuptools.dynamic]``)."""


def load_curves(source: str | bytes, name: str = "") -> CurveFile:
    """A curve file (``import-benchmark`` output) read from a path or bytes, checked and kept under its SHA-256:
    set a scenario's ``curves_sha256`` to ``.sha256`` to use it. Raises :class:`CurveFileError` naming each bad
    cell (row, field, value).
    """
    if isinstance(source, bytes):
        return _load(source, name or "curves.csv")
    return _load(read_bounded(source), name or source.rsplit("/", 1)[-1])

__all__ = [
    "__version__",
    "CATALOG_FIELDS",
    "BenchmarkError",
    "CurveFile",
    "CurveFileError",
    "FIELDS",
    "RESULT_COLUMNS",
    "InputError",
    "Scenario",
    "ScenarioError",
    "catalog",
    "curves_csv",
    "default_scenario",
    "evaluate",
    "evaluate_scenario",
    "evaluate_with_report",
    "explain_row",
    "explain_scenario",
    "explain_text",
    "import_benchmark",
    "load_curves",
    "preset_scenarios",
    "split_warnings",
    "throughput_description",
    "with_changes",
]
