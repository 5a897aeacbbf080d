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

import importlib

from economics.version import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (loaded before the CLI's signal handlers)
if TYPE_CHECKING:  # the names as the type checker sees them; at run time each is imported on first use (below)
    from typing import Any

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
        session_profile,
    )
    from economics.engine.pipeline import split_warnings
    from economics.engine.provenance import throughput_description
    from economics.io.benchmarks import BenchmarkError, curves_csv, import_benchmark
    from economics.schema.presets import default_scenario, preset_scenarios
    from economics.schema.scenario import CATALOG_FIELDS, FIELDS, Scenario, with_changes
    from economics.schema.user_curves import CurveFile, CurveFileError, load_curves
    from economics.schema.validation import InputError

_LAZY = {
    "catalog": "economics.catalog",
    **dict.fromkeys(("RESULT_COLUMNS", "ScenarioError", "evaluate", "evaluate_scenario", "evaluate_with_report",
                     "explain_row", "explain_scenario", "explain_text", "session_profile"),
                    "economics.engine.batch"),
    "split_warnings": "economics.engine.pipeline",
    "throughput_description": "economics.engine.provenance",
    **dict.fromkeys(("BenchmarkError", "curves_csv", "import_benchmark"), "economics.io.benchmarks"),
    **dict.fromkeys(("default_scenario", "preset_scenarios"), "economics.schema.presets"),
    **dict.fromkeys(("CATALOG_FIELDS", "FIELDS", "Scenario", "with_changes"), "economics.schema.scenario"),
    **dict.fromkeys(("CurveFile", "CurveFileError", "load_curves", "read_bounded"), "economics.schema.user_curves"),
    "InputError": "economics.schema.validation",
}
"""Public name -> the module that defines it. Imported on first use, not with the package: ``python -m economics``
sets its Ctrl-C and SIGTERM handlers (economics/__main__.py) before the engine, pandas and scipy are loaded, so a
signal in the first second ends it with one line, not a traceback of the imports."""


def __getattr__(name: str) -> Any:
    """A public name of the package, imported from its module on first use (then kept as an attribute)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'economics' has no attribute {name!r}")
    value = importlib.import_module(module)
    value = value if module.endswith("." + name) else getattr(value, name)
    globals()[name] = value
    return value


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
    "session_profile",
    "split_warnings",
    "throughput_description",
    "with_changes",
]
