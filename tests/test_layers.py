"""Layers on the real import graph: each layer imports only those below it, nothing in economics imports the app,
every module is placed in a layer, and no function hides an import (a cycle dodged is a design bug)."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
OPTIONAL_HEAVY = frozenset({"dask", "distributed", "playwright"})
"""Optional heavy dependencies a function may import where it needs them."""


def test_import_contracts_hold() -> None:
    linter = Path(sys.executable).parent / "lint-imports"
    r = subprocess.run([str(linter), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout


def test_every_module_has_a_layer() -> None:
    layers = next(c for c in CONFIG["contracts"] if c["type"] == "layers")["layers"]
    placed = {m.strip() for layer in layers for m in layer.replace(":", "|").split("|")}
    modules = {f"economics.{p.stem}" for p in (ROOT / "economics").glob("*.py") if not p.stem.startswith("__")}
    assert sorted(modules - placed) == []


def test_no_function_local_imports() -> None:
    found = []
    for path in [*(ROOT / "economics").glob("*.py"), *(ROOT / "ui").glob("*.py"), ROOT / "app.py"]:
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
                if not all(n.split(".")[0] in OPTIONAL_HEAVY for n in names):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {names}")
    assert found == []
