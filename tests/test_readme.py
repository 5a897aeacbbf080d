"""The README's generated parts match the code, and its quick-start commands exist."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def block(name: str) -> str:
    m = re.search(rf"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", README, flags=re.S)
    assert m, f"README has no {name} block"
    return m.group(1)


def run(*args: str) -> str:
    return subprocess.run([sys.executable, "-m", "economics", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True, timeout=120).stdout


def test_fields_table_is_generated_from_the_schema() -> None:
    assert block("fields") == run("fields"), "regenerate with: make docs"


def test_model_section_is_generated_from_the_formulas() -> None:
    from economics.io.documents import model_markdown

    assert block("model") == model_markdown(), "regenerate with: make docs"


def test_worked_example_is_what_explain_prints() -> None:
    expected = "```text\n" + run("explain", "docs/example.csv", "--row", "worked-example") + "```\n"
    assert block("worked-example") == expected, "regenerate with: make docs"


def test_quick_start_commands_exist() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("run", "test"):
        assert f"make {target}" in README
        assert re.search(rf"^{target}:", makefile, flags=re.M), target
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_calibration_figures_in_the_readme_are_the_stored_ones() -> None:
    import economics
    from economics.studies.calibration import report

    for scope, row in economics.catalog.calibration().iterrows():
        cells = (f"| {float(row['bandwidth_utilization']):.2f} | {float(row['compute_utilization']):.2f} | "
                 f"{float(row['prefill_compute_utilization']):.2f} | {float(row['step_overhead_us_per_layer']):g} | "
                 f"{row['points']} | {float(row['median_abs_error_pct']):.1f} % | "
                 f"{float(row['worst_abs_error_pct']):.1f} % |")
        assert f"| {scope}" in README and cells in README, (scope, cells)
    _, summary = report()
    assert f"**{summary['median_abs_error_pct']:.1f} %**" in README
    assert f"**{summary['worst_abs_error_pct']:.1f} %**" in README
