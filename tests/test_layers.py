"""Layers on the real import graph: each layer imports only those below it, nothing in economics imports the app,
every module is placed in a layer, and no function hides an import (a cycle dodged is a design bug)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
OPTIONAL_HEAVY = frozenset({"dask", "distributed", "playwright", "altair", "typst", "vl_convert", "uvicorn"})
"""Optional heavy dependencies a function may import where it needs them (the report's and the HTTP API's: their
extras, never imported by a command that makes no report or serves nothing)."""
SLOW_TO_IMPORT = frozenset({"scipy.stats", "openpyxl", "scipy.special", "scipy.optimize"})
"""Modules a function may import on first use because importing them costs a cold start seconds and most paths never
use them (issue #43: scipy.stats, about 1.1 s, is read only when a spare count is worked out; openpyxl, with PIL and
an XML parser, only when an Excel workbook is written; scipy.special (0.13 s) only for Erlang B past the recursion's
pool sizes and scipy.optimize (0.16 s) only when the calibration fits, neither of which the app's first page does
before its first KPI; the engine's measured curves are interpolated without scipy, economics.engine.measured.Pchip)."""


def test_import_contracts_hold() -> None:
    linter = Path(sys.executable).parent / "lint-imports"
    r = subprocess.run([str(linter), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout


def _placed(layers: list[str], prefix: str = "") -> set[str]:
    return {prefix + m.strip() for layer in layers for m in layer.replace(":", "|").split("|")}


def test_every_module_has_a_layer() -> None:
    """Each top-level module and each layer folder sits in the main contract; each module in a folder sits in its
    folder's own contract, so the tree and the contracts cannot drift apart."""
    contracts = [c for c in CONFIG["contracts"] if c["type"] == "layers"]
    main = next(c for c in contracts if "containers" not in c)
    placed = _placed(main["layers"])
    for c in contracts:
        for container in c.get("containers", []):
            placed |= _placed(c["layers"], container + ".")
    modules = set()
    for path in (ROOT / "economics").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if "migrations" in parts:  # Alembic's scripts, run from their folder by economics.store.database, not imported
            continue
        if parts[-1] != "__main__" and len(parts) > 1:
            modules.add(".".join(parts))
    folders = {m for m in modules if (ROOT / m.replace(".", "/")).is_dir()}
    assert folders >= {"economics.schema", "economics.catalog", "economics.domain", "economics.engine",
                       "economics.studies", "economics.io"}
    assert sorted(modules - placed) == []


def test_no_function_local_imports() -> None:
    found = []
    for path in [*(ROOT / "economics").rglob("*.py"), *(ROOT / "ui").glob("*.py"), ROOT / "app.py"]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [("." * node.level) + (node.module or "")]
                else:
                    continue
                if not all(n.split(".")[0] in OPTIONAL_HEAVY or n in SLOW_TO_IMPORT for n in names):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {names}")
    assert found == []


def test_pages_draw_no_bare_strings() -> None:
    """Streamlit's magic draws a page's bare string statements (a docstring under a constant, say) as text; only the
    module docstring is skipped. A page's constant is documented by a comment."""
    pages = re.findall(r'st\.Page\("(ui/[a-z_]+\.py)"', (ROOT / "app.py").read_text(encoding="utf-8"))
    assert len(pages) >= 8
    found = []
    for page in pages:
        body = ast.parse((ROOT / page).read_text(encoding="utf-8")).body
        found += [f"{page}:{node.lineno}" for node in body[1:] if isinstance(node, ast.Expr)
                  and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)]
    assert found == []
