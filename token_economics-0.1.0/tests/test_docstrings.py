"""Docstrings of the package: pydocstyle's rules (numpy convention) hold for economics/ whatever the lint selection
says elsewhere, and every formula of economics/domain shows itself, as an equation or as a worked example."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOMAIN = ROOT / "economics" / "domain"
LINT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
HOUSE_STYLE = frozenset({"D401", "D205"})
"""The pydocstyle rules the house style overrides (pyproject.toml says why): summaries name the quantity returned
and may run to two lines."""


def test_pydocstyle_passes_on_the_package() -> None:
    """``ruff check economics --select D`` with the numpy convention. A ``--select`` on the command line also drops
    the configured ``ignore``, so pyproject.toml's D ignores are passed again, and may only be the house style's."""
    ignored = sorted(r for r in LINT.get("ignore", []) if r.startswith("D"))
    assert set(ignored) <= HOUSE_STYLE, ignored
    command = [sys.executable, "-m", "ruff", "check", "economics", "--select", "D", "--no-cache",
               "--config", "lint.pydocstyle.convention = 'numpy'", "--output-format", "concise"]
    command += ["--ignore", ",".join(ignored)] if ignored else []
    r = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]


def _public_functions(path: Path) -> list[ast.FunctionDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]


def test_every_domain_formula_has_an_equation_or_a_doctest() -> None:
    """Each public function of the formula modules says what it computes in a ``.. math::`` block or shows it in a
    doctest (``>>>``)."""
    checked, missing = 0, []
    for path in sorted(DOMAIN.glob("*.py")):
        for fn in _public_functions(path):
            checked += 1
            doc = ast.get_docstring(fn) or ""
            if ".. math::" not in doc and ">>>" not in doc:
                missing.append(f"{path.relative_to(ROOT)}:{fn.lineno} {fn.name}")
    assert checked > 50, checked  # the modules were found
    assert not missing, "no equation and no doctest:\n" + "\n".join(missing)
