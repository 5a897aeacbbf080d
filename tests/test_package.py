"""The package a user installs: declared dependencies, the console script, the catalogs as package data, and a test
suite that reads nothing outside the repository.

The full check (wheel built, installed into a fresh virtualenv outside the repository, a CSV evaluated there) is
``.ci/wheel-smoke``, run by ``make test``/``make package``; the wheel-building test here is marked slow.
"""

from __future__ import annotations

import ast
import csv
import io
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from economics import catalog

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# import name -> distribution name, for the third-party packages the code imports
DISTRIBUTION = {"numpy": "numpy", "pandas": "pandas", "pydantic": "pydantic", "annotated_types": "pydantic",
                "pydantic_core": "pydantic",
                "numpy_financial": "numpy-financial", "scipy": "scipy", "pyarrow": "pyarrow", "dask": "dask",
                "distributed": "dask", "streamlit": "streamlit", "altair": "altair", "openpyxl": "openpyxl",
                "typst": "typst", "vl_convert": "vl-convert-python", "fastapi": "fastapi",
                "fastapi_offline": "fastapi-offline", "starlette": "starlette", "uvicorn": "uvicorn", "h11": "h11",
                "mcp": "mcp", "anyio": "anyio", "sqlalchemy": "sqlalchemy", "alembic": "alembic"}
EXTRAS = {"report": ROOT / "economics" / "report", "api": ROOT / "economics" / "api", "mcp": ROOT / "economics" / "mcp"}
"""The subpackages whose third-party imports are an optional extra's, not the core install's."""


def imported_top_level(paths: list[Path]) -> set[str]:
    """Top-level module names imported anywhere in ``paths`` (absolute imports only)."""
    names: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names


def declared(requirements: list[str]) -> set[str]:
    """Distribution names in PEP 508 requirement strings, lower case, extras and versions dropped."""
    return {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower() for r in requirements}


def third_party(names: set[str]) -> set[str]:
    stdlib = set(sys.stdlib_module_names) | {"economics", "ui", "app", "__future__"}
    return {n for n in names if n not in stdlib}


def test_every_runtime_import_of_the_package_is_a_declared_dependency() -> None:
    used = third_party(imported_top_level([p for p in sorted((ROOT / "economics").rglob("*.py"))
                                           if not any(p.is_relative_to(d) for d in EXTRAS.values())]))
    unknown = used - set(DISTRIBUTION)
    assert not unknown, f"map these imports to their distribution in DISTRIBUTION: {unknown}"
    needed = {DISTRIBUTION[n] for n in used}
    assert "scipy" in needed  # the calibration (economics/studies/calibration.py) fits with scipy.optimize
    missing = needed - declared(PYPROJECT["project"]["dependencies"])
    assert not missing, f"economics/ imports {missing} but pyproject.toml does not declare them"


@pytest.mark.parametrize(("extra", "expected"), [("report", {"typst", "vl-convert-python", "altair"}),
                                                 ("api", {"fastapi", "starlette", "uvicorn"}),
                                                 ("mcp", {"mcp", "starlette", "uvicorn"})])
def test_an_extras_dependencies_are_declared_in_it_and_pinned(extra: str, expected: set[str]) -> None:
    used = third_party(imported_top_level(sorted(EXTRAS[extra].rglob("*.py"))))
    assert used - set(DISTRIBUTION) == set()
    needed = {DISTRIBUTION[n] for n in used}
    project = PYPROJECT["project"]
    available = declared(project["dependencies"]) | declared(project["optional-dependencies"][extra])
    assert expected <= needed and not needed - available, needed - available
    pins = {line.split("==")[0].split("[")[0].lower() for line in (ROOT / "requirements.txt").read_text().splitlines()
            if "==" in line and not line.startswith("#")}
    assert available <= pins, f"declared but not pinned in requirements.txt: {available - pins}"


def test_the_app_dependencies_are_the_app_extra_and_everything_is_pinned() -> None:
    used = third_party(imported_top_level([ROOT / "app.py", *sorted((ROOT / "ui").glob("*.py"))]))
    needed = {DISTRIBUTION[n] for n in used if n in DISTRIBUTION}
    project = PYPROJECT["project"]
    available = declared(project["dependencies"]) | declared(project["optional-dependencies"]["app"])
    assert "streamlit" in needed and not needed - available, needed - available
    pins = {line.split("==")[0].split("[")[0].lower() for line in (ROOT / "requirements.txt").read_text().splitlines()
            if "==" in line and not line.startswith("#")}
    assert available <= pins, f"declared but not pinned in requirements.txt: {available - pins}"


def test_console_script_is_the_module_entry_point() -> None:
    # economics/__main__.py sets the signal handlers before it imports the command line: both entries go through it
    assert PYPROJECT["project"]["scripts"] == {"token-economics": "economics.__main__:run"}
    main_module = (ROOT / "economics" / "__main__.py").read_text(encoding="utf-8")
    assert "from economics.cli import main" in main_module and "sys.exit(run())" in main_module
    assert main_module.index("_set(_end_now)") < main_module.index("from economics.cli import main")


def test_catalogs_ship_as_package_data_from_the_single_data_folder() -> None:
    tool = PYPROJECT["tool"]["setuptools"]
    assert tool["package-dir"]["economics.data"] == "data" and "economics.data" in tool["packages"]
    assert tool["package-data"]["economics.data"] == ["*.csv"] if "package-data" in tool else \
        PYPROJECT["tool"]["setuptools"]["package-data"]["economics.data"] == ["*.csv"]
    assert not (ROOT / "economics" / "data").exists(), "data/ is the single copy; do not duplicate it in economics/"


def test_every_package_folder_is_listed_for_the_wheel() -> None:
    # setuptools ships only the packages named in pyproject.toml; a folder left out installs a CLI that fails on
    # import (economics.studies.planner was, once, and only the clean-clone wheel smoke test noticed).
    folders = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "economics").rglob("__init__.py")}
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    assert folders - listed == set(), f"package folders missing from [tool.setuptools] packages: {folders - listed}"
    assert listed - folders == {"economics.data"}, listed - folders


def test_data_dir_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOKEN_ECONOMICS_DATA_DIR", raising=False)
    assert catalog.data_dir() == ROOT / "data"  # a source checkout: no economics/data package folder
    monkeypatch.setenv("TOKEN_ECONOMICS_DATA_DIR", str(tmp_path))
    assert catalog.data_dir() == tmp_path


def test_cli_runs_from_another_directory_with_an_override(tmp_path: Path) -> None:
    # A copy of the catalogs whose H100 rent is 3.6 USD/h: 8 rented H100 cost 8 x 3.6 = 28.8 USD/h (the rent
    # includes energy, so nothing else is added).
    own = tmp_path / "catalogs"
    own.mkdir()
    for path in (ROOT / "data").glob("*.csv"):
        (own / path.name).write_bytes(path.read_bytes())
    rows = list(csv.DictReader(io.StringIO((own / "accelerators.csv").read_text(encoding="utf-8"))))
    for row in rows:
        if (row["accelerator"], row["field"]) == ("h100-sxm", "rent_usd_per_hour"):
            row["value"] = "3.6"
    with open(own / "accelerators.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    scenarios = tmp_path / "s.csv"
    scenarios.write_text("name,accelerator,ownership,accelerator_count,output_tokens_per_s_per_accelerator\n"
                         "x,h100-sxm,rent,8,1000\n", encoding="utf-8")
    env = {**os.environ, "TOKEN_ECONOMICS_DATA_DIR": str(own), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "economics", "evaluate", str(scenarios)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    row = next(csv.DictReader(io.StringIO(done.stdout)))
    assert row["valid"] == "True" and float(row["cost_usd_per_hour"]) == pytest.approx(28.8)


def path_literals(path: Path) -> list[str]:
    """String constants in a test file that look like a filesystem path (no spaces; starts with ``/``, ``../``,
    ``~/``), plus any literal ``"shared"`` (a path component beside the repository)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            value = node.value
            if value == "shared" or (re.match(r"^(\.\./|~/|/[A-Za-z_])", value) and not re.search(r"\s", value)):
                found.append(value)
    return found


API_TESTS = ("test_api.py", "test_sessions_everywhere.py", "test_fuzz_slice.py", "test_kv_memory.py",
             "test_session_traces.py", "test_plan_sessions.py", "test_mcp.py", "test_api_schemathesis.py",
             "test_openapi.py", "test_store_api.py", "test_hostile.py")
"""The tests that call the local HTTP API server's routes (tests/test_api.py's fixture)."""
STREAMLIT_SERVER_TESTS = ("test_startup.py",)
"""Outside tests/e2e, the tests that start a local Streamlit server and fetch its routes (page, static files)."""


def test_no_test_reads_outside_the_repository() -> None:
    # Allowed: the system Chromium the browser tests drive, and routes of the local Streamlit server they (and the
    # start-up tests) start, a folder's route ending in "/" before the file's name;
    # in the HTTP API's tests, the routes of the local uvicorn server (URLs on 127.0.0.1, never files); in the
    # signal tests, /proc: the kernel's view of the processes they start (signal handlers, children), not a file.
    allowed_e2e = re.compile(r"^/usr/bin/chromium$|^/[a-z_]+(/[a-z_]+)?/?([?#]\S*)?$")
    allowed_api = re.compile(r"^/(v1(/[A-Za-z0-9_.%-]+){1,4}/?|openapi\.json|docs|mcp)([?#]\S*)?$")
    offenders = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path == Path(__file__).resolve():
            continue  # this file holds the check's own samples (written to tmp_path, never read from outside)
        streamlit_server = "e2e" in path.relative_to(ROOT).parts or path.name in STREAMLIT_SERVER_TESTS
        allowed = allowed_e2e if streamlit_server else allowed_api if path.name in API_TESTS \
            else re.compile(r"^/proc$") if path.name == "test_interrupts.py" else None
        offenders += [f"{path.relative_to(ROOT)}: {v!r}" for v in path_literals(path)
                      if not (allowed and allowed.match(v))]
    assert not offenders, "tests name paths outside the repository:\n" + "\n".join(offenders)


def test_the_outside_path_check_catches_one(tmp_path: Path) -> None:
    sample = tmp_path / "test_x.py"
    sample.write_text('open("../shared/checks/contract.py")\nROOT.parent / "shared"\nPath("/work/main/data")\n'
                      'x = "see ../shared in a sentence"\n', encoding="utf-8")
    assert path_literals(sample) == ["../shared/checks/contract.py", "shared", "/work/main/data"]


@pytest.mark.slow
def test_the_wheel_holds_the_catalogs_the_script_and_the_dependencies(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(tmp_path), str(ROOT)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (wheel,) = tmp_path.glob("token_economics-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta = next(z.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
        entry = next(z.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert {f"economics/data/{p.name}" for p in (ROOT / "data").glob("*.csv")} <= names
    assert "token-economics = economics.__main__:run" in entry
    requires = declared([line.split(":", 1)[1].strip() for line in meta.splitlines()
                         if line.startswith("Requires-Dist:")])
    assert {"scipy", "numpy", "pandas", "pydantic", "numpy-financial", "streamlit"} <= requires
