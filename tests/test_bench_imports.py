"""Every bench script's imports of the package still resolve, without running a bench.

A bench is not run by the suite, so a module moved or a function renamed in ``economics`` (or ``ui``) broke
bench/plan.py at import once and nothing noticed. Each ``bench/*.py`` is parsed with :mod:`ast` and checked:

* ``import economics.x`` (with or without ``as``) imports;
* ``from economics.x import name`` imports ``economics.x`` and ``name`` is an attribute of it or a submodule;
* on a name bound to a package module by a top-level import (``planner`` after ``from economics.studies import
  planner``, ``economics`` after ``import economics``), every attribute read ``planner.X`` exists, and so does each
  link of a chain ``economics.x.y`` while it stays on modules; so does ``getattr(planner, "X")`` without a default
  and a ``(planner, "X")`` pair (how bench/plan.py names the functions it wraps).

Names a script binds again (assigned, a parameter, a loop variable) are not followed, as the value may no longer be
the module. Only the package's modules are imported; no bench code runs.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHES = sorted((ROOT / "bench").glob("*.py"))
FIRST_PARTY = ("economics", "ui")


def _ours(module: str | None) -> bool:
    return module is not None and module.split(".")[0] in FIRST_PARTY


def _resolve(module: str, name: str) -> object:
    """``from module import name``: the attribute, else the submodule; raises as the import would."""
    mod = importlib.import_module(module)
    if hasattr(mod, name):
        return getattr(mod, name)
    return importlib.import_module(f"{module}.{name}")


def _rebound(tree: ast.Module) -> set[str]:
    """Names the script binds other than by an import: assignments, parameters, loop and ``with`` targets, defs."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


def _check_imports(tree: ast.Module) -> tuple[list[str], dict[str, ModuleType]]:
    """Problems with the package imports anywhere in the script, and the module aliases its top-level imports bind."""
    problems: list[str] = []
    aliases: dict[str, ModuleType] = {}
    top = set(map(id, tree.body))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if not _ours(a.name):
                    continue
                try:
                    mod = importlib.import_module(a.name)
                except ImportError as exc:
                    problems.append(f"line {node.lineno}: import {a.name}: {exc}")
                    continue
                if id(node) in top:
                    # ``import a.b`` binds ``a``; ``import a.b as c`` binds ``c`` to ``a.b``
                    bound = a.asname or a.name.split(".")[0]
                    aliases[bound] = mod if a.asname else importlib.import_module(a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _ours(node.module):
            assert node.module is not None
            for a in node.names:
                if a.name == "*":
                    continue
                try:
                    obj = _resolve(node.module, a.name)
                except ImportError as exc:
                    problems.append(f"line {node.lineno}: from {node.module} import {a.name}: {exc}")
                    continue
                if id(node) in top and isinstance(obj, ModuleType):
                    aliases[a.asname or a.name] = obj
    return problems, aliases


def _module_of(node: ast.expr, aliases: dict[str, ModuleType]) -> ModuleType | None:
    """The module an expression ``alias`` or ``alias.x.y`` names (each link a module), else None."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _module_of(node.value, aliases)
        value = getattr(base, node.attr, None) if base is not None else None
        return value if isinstance(value, ModuleType) else None
    return None


def _check_attributes(tree: ast.Module, aliases: dict[str, ModuleType]) -> list[str]:
    """Attribute reads, ``getattr(alias, "X")`` and ``(alias, "X")`` pairs on the package's module aliases."""
    problems: list[str] = []

    def need(mod: ModuleType, attr: str, node: ast.AST, how: str) -> None:
        if not hasattr(mod, attr):
            problems.append(f"line {getattr(node, 'lineno', '?')}: {how}: {mod.__name__} has no {attr!r}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            base = _module_of(node.value, aliases)
            if base is not None:
                need(base, node.attr, node, f"{ast.unparse(node)}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
              and len(node.args) == 2 and not node.keywords and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str)):
            base = _module_of(node.args[0], aliases)
            if base is not None:
                need(base, node.args[1].value, node, ast.unparse(node))
        elif (isinstance(node, ast.Tuple) and len(node.elts) == 2 and isinstance(node.elts[1], ast.Constant)
              and isinstance(node.elts[1].value, str)):
            base = _module_of(node.elts[0], aliases)
            if base is not None:
                need(base, node.elts[1].value, node, ast.unparse(node))
    return problems


def bench_problems(path: Path) -> list[str]:
    """Every package import or module attribute in the script at ``path`` that does not resolve."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    problems, aliases = _check_imports(tree)
    followed = {name: mod for name, mod in aliases.items() if name not in _rebound(tree)}
    return problems + _check_attributes(tree, followed)


def test_benches_found() -> None:
    assert len(BENCHES) >= 10, BENCHES
    assert ROOT / "bench" / "plan.py" in BENCHES


@pytest.mark.parametrize("path", BENCHES, ids=lambda p: p.name)
def test_bench_imports_resolve(path: Path) -> None:
    problems = bench_problems(path)
    assert not problems, f"{path.relative_to(ROOT)}:\n" + "\n".join(problems)


def test_a_moved_name_is_caught(tmp_path: Path) -> None:
    """The check itself: a missing module, a missing name, a missing attribute on an alias and a getattr are found."""
    script = tmp_path / "moved.py"
    script.write_text(
        "import economics\n"
        "from economics import planner\n"
        "from economics.studies import planner as p\n"
        "from economics.studies.planner import hourly, no_such_module\n"
        "p.plan\n"
        "p._build\n"
        "economics.studies.planner.milp.run_milp\n"
        "economics.studies.planner.milp._no_such_run\n"
        "getattr(hourly, '_covered_hour')\n"
        "HOOK = (hourly, 'covered_hour')\n",
        encoding="utf-8")
    found = "\n".join(bench_problems(script))
    for missing in ("from economics import planner", "no_such_module", "'_build'", "'_no_such_run'", "'_covered_hour'"):
        assert missing in found, (missing, found)
    for present in ("'plan'", "'run_milp'", "'covered_hour'"):
        assert present not in found, (present, found)
