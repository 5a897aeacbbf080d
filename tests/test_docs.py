"""The documentation site (mkdocs.yml, docs/) and the README's examples.

- the generated blocks (fields, model, worked example) are what the code gives (`make docs` regenerates them);
- every ```console example runs and prints what the page shows (exactly, or the shown lines in order where the
  page elides lines with a line ``...``), every ```pycon example runs as a doctest, and no page keeps a Python
  example that nothing runs;
- every ``python -m economics`` command the pages show names a real command and real options;
- the calibration figures on the throughput page are the stored ones;
- doc links written in the package's own strings point at pages that exist;
- ``mkdocs build --strict`` passes (built into a temporary directory, never into the repository).
"""

from __future__ import annotations

import contextlib
import doctest
import importlib
import importlib.util
import io
import os
import pkgutil
import re
import runpy
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

import economics

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted([ROOT / "README.md", *DOCS.rglob("*.md")])
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
CLI = "python -m economics"


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def fences(language: str) -> list[tuple[Path, int, str]]:
    """(page, line of the fence, body) of every fenced block in that language, README first."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            if m.group(1) == language:
                found.append((page, text.count("\n", 0, m.start()) + 1, m.group(2)))
    return found


def example_id(example: tuple[Path, int, str]) -> str:
    return f"{rel(example[0])}:{example[1]}"


# ------------------------------------------------------------------ generated blocks

@cache
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("update_readme", ROOT / "tools" / "update_readme.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def generated() -> dict[str, str]:
    blocks: dict[str, str] = tool().blocks()
    return blocks


def block(name: str) -> str:
    page = ROOT / tool().PAGES[name]
    m = re.search(tool().block_pattern(name), page.read_text(encoding="utf-8"), flags=re.S)
    assert m, f"{rel(page)} has no {name} block"
    return m.group(2)


def test_fields_table_is_generated_from_the_schema() -> None:
    assert block("fields") == generated()["fields"], "regenerate with: make docs"


def test_model_section_is_generated_from_the_formulas() -> None:
    assert block("model") == generated()["model"], "regenerate with: make docs"


BOUND_ELSEWHERE = {"economics.engine.sessions": "capacity's and fleet's formulas bound to the KV store's columns"}
"""Modules whose formulas are copies of listed ones bound to other columns (the page lists the formula once)."""


def test_model_section_lists_every_formula_the_package_defines() -> None:
    # carbon's and rent's formulas were missing from the page: a module of formulas the page does not list fails here
    from economics.domain.formula import Formula
    from economics.io.documents import MODEL_SECTIONS, formulas

    listed = {id(f) for _, module in MODEL_SECTIONS for f in formulas(module)}
    unlisted = {}
    for package in ("economics.domain", "economics.engine", "economics.studies"):
        for info in pkgutil.iter_modules(importlib.import_module(package).__path__, package + "."):
            module = importlib.import_module(info.name)
            names = [k for k, v in vars(module).items() if isinstance(v, Formula) and id(v) not in listed]
            if names and info.name not in BOUND_ELSEWHERE:
                unlisted[info.name] = names
    assert unlisted == {}, "add the module to economics.io.documents.MODEL_SECTIONS, then: make docs"


def test_worked_example_is_what_explain_prints() -> None:
    assert block("worked-example") == generated()["worked-example"], "regenerate with: make docs"


@pytest.mark.parametrize("name", ["api-endpoints", "api-errors", "api-settings"])
def test_http_api_tables_are_generated_from_the_routes_codes_and_limits(name: str) -> None:
    assert block(name) == generated()[name], "regenerate with: make docs"


def test_each_block_is_on_one_page_only() -> None:
    for name, page in tool().PAGES.items():
        holders = [rel(p) for p in PAGES if f"<!-- {name}:start -->" in p.read_text(encoding="utf-8")]
        assert holders == [page], (name, holders)


# ------------------------------------------------------------------ examples

def matches(shown: list[str], printed: list[str]) -> bool:
    """The shown lines are the printed ones; a shown line ``...`` stands for any lines (none included)."""
    if "..." not in shown:
        return shown == printed
    parts: list[list[str]] = [[]]
    for line in shown:
        if line == "...":
            parts.append([])
        else:
            parts[-1].append(line)
    head, *middle, tail = parts
    if printed[:len(head)] != head or (tail and printed[-len(tail):] != tail):
        return False
    at, end = len(head), len(printed) - len(tail)
    for part in middle:
        while at + len(part) <= end and printed[at:at + len(part)] != part:
            at += 1
        if at + len(part) > end:
            return False
        at += len(part)
    return True


def test_matches_is_strict() -> None:
    printed = ["a", "b", "c", "d"]
    assert matches(["a", "b", "c", "d"], printed)
    assert not matches(["a", "b", "c"], printed)
    assert matches(["a", "...", "d"], printed)
    assert matches(["...", "b", "c", "..."], printed)
    assert not matches(["...", "c", "b", "..."], printed)
    assert not matches(["b", "...", "d"], printed)
    assert not matches(["a", "...", "c"], printed)


def console_runs(body: str) -> list[tuple[str, list[str]]]:
    """The ``$ command`` lines of a console block, each with the output lines shown under it."""
    runs: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            runs.append((line[2:], []))
        else:
            assert runs, f"output before any command: {line!r}"
            runs[-1][1].append(line)
    return runs


CONSOLE = fences("console")


def test_the_pages_have_console_examples() -> None:
    pages = {rel(p) for p, _, _ in CONSOLE}
    assert {"README.md", "docs/tutorial.md", "docs/how-to/plan.md", "docs/how-to/decode-study.md"} <= pages


@pytest.mark.parametrize("example", CONSOLE, ids=example_id)
def test_console_example_prints_what_the_page_shows(example: tuple[Path, int, str]) -> None:
    for command, shown in console_runs(example[2]):
        assert command.startswith(CLI + " "), f"a console example runs {CLI} only: {command}"
        argv = shlex.split(command[len(CLI):])
        proc = subprocess.run([sys.executable, "-m", "economics", *argv], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        printed = proc.stdout.splitlines()
        assert matches(shown, printed), f"{command}\n--- printed:\n{proc.stdout}"


PYCON = sorted({p for p, _, _ in fences("pycon")})


def test_the_pages_have_python_examples() -> None:
    assert {"README.md", "docs/tutorial.md", "docs/how-to/cost.md"} <= {rel(p) for p in PYCON}


def test_every_python_example_is_a_doctest() -> None:
    """A ```python block would be an example nothing runs: Python examples are ```pycon sessions, or (```py) a file
    of docs/examples included whole, which a test runs (the HTTP client needs a live server: tests/test_api.py)."""
    assert [example_id(e) for e in fences("python")] == []
    runners = (ROOT / "tests" / "test_api.py").read_text(encoding="utf-8")
    for example in fences("py"):
        included = re.fullmatch(r'--8<-- "(docs/examples/[\w.-]+\.py)"\n', example[2])
        assert included and (ROOT / included.group(1)).is_file(), example_id(example)
        assert Path(included.group(1)).name in runners, f"no test runs {included.group(1)}"


@pytest.mark.parametrize("page", PYCON, ids=rel)
def test_python_examples_run_as_shown(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the examples read files by their path from the repository root
    globs: dict[str, object] = {}
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report = io.StringIO()
    for _, line, body in (e for e in fences("pycon") if e[0] == page):
        test = doctest.DocTestParser().get_doctest(body, globs, f"{rel(page)}:{line}", str(page), line)
        assert test.examples, f"{rel(page)}:{line}: no example"
        runner.run(test, out=report.write, clear_globs=False)
        globs = test.globs  # a DocTest runs on a copy: the page's next block continues from this one
    result = runner.summarize(verbose=False)
    assert result.failed == 0, report.getvalue()


# ------------------------------------------------------------------ commands shown without output

def shown_commands() -> list[tuple[str, str]]:
    """(where, command) of every ``python -m economics`` line in the pages' shell blocks and console prompts."""
    found = []
    for language in ("bash", "sh", "console"):
        for page, line, body in fences(language):
            joined = re.sub(r"\\\n\s*", " ", body)
            for text in joined.splitlines():
                text = text.removeprefix("$ ").strip()
                if text.startswith(CLI + " "):
                    found.append((f"{rel(page)}:{line}", text.split(" #", 1)[0].strip()))
    return found


@cache
def cli_help(*argv: str) -> str:
    """``python -m economics ARGV --help`` run in this process (the package's own __main__)."""
    out = io.StringIO()
    saved = sys.argv
    sys.argv = ["economics", *argv, "--help"]
    try:
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
            runpy.run_module("economics", run_name="__main__", alter_sys=False)
    finally:
        sys.argv = saved
    return out.getvalue()


def test_every_command_shown_exists_with_its_options() -> None:
    commands = shown_commands()
    assert len(commands) >= 20
    listed = re.search(r"\{([a-z,-]+)\}", cli_help())
    assert listed, cli_help()
    subcommands = set(listed.group(1).split(","))
    for where, command in commands:
        words = shlex.split(command[len(CLI):].split("|")[0].split(">")[0])
        assert words and words[0] in subcommands, (where, command)
        nested = re.search(r"\{([a-z,-]+)\}", cli_help(words[0]))  # a command of commands (store save, ...)
        path = words[:2] if nested and len(words) > 1 and words[1] in nested.group(1).split(",") else words[:1]
        options = set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", cli_help(*path)))
        for word in words[len(path):]:
            if word.startswith("-") and word != "-":
                assert word.split("=")[0] in options, (where, command, word)


# ------------------------------------------------------------------ figures and links

def test_calibration_figures_on_the_throughput_page_are_the_stored_ones() -> None:
    from economics.studies.calibration import report

    page = (DOCS / "throughput-model.md").read_text(encoding="utf-8")
    for scope, row in economics.catalog.calibration().iterrows():
        cells = (f"| {float(row['bandwidth_utilization']):.2f} | {float(row['compute_utilization']):.2f} | "
                 f"{float(row['prefill_compute_utilization']):.2f} | {float(row['step_overhead_us_per_layer']):g} | "
                 f"{row['points']} | {float(row['median_abs_error_pct']):.1f} % | "
                 f"{float(row['worst_abs_error_pct']):.1f} % |")
        assert f"| {scope}" in page and cells in page, (scope, cells)
    _, summary = report()
    assert f"**{summary['median_abs_error_pct']:.1f} %**" in page
    assert f"**{summary['worst_abs_error_pct']:.1f} %**" in page


def test_doc_paths_in_the_package_strings_exist() -> None:
    """economics/ and ui/ name docs pages in their text (docstrings, captions): each must still exist."""
    named = set()
    for source in [*(ROOT / "economics").rglob("*.py"), *(ROOT / "ui").rglob("*.py"), ROOT / "app.py"]:
        named |= set(re.findall(r"\bdocs/[\w/-]+\.md\b", source.read_text(encoding="utf-8")))
    assert named, "no doc path found: the pattern is wrong"
    assert sorted(p for p in named if not (ROOT / p).is_file()) == []


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    api = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    assert 'id="economics.evaluate_scenario"' in api
    assert 'id="economics.domain.cost.capital_usd_per_hour"' in (site / "reference" / "cost" / "index.html").read_text(
        encoding="utf-8")
    assert not list(site.rglob("_raw*"))
    assert "fonts.googleapis.com" not in (site / "index.html").read_text(encoding="utf-8")
