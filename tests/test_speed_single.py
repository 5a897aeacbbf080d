"""The single-scenario path of issue #43's engine round gives exactly what it gave before (no timed tests: each
faster form is held to the form it replaced, bit for bit).

- a :class:`~economics.domain.formula.Formula` runs as one function generated from its checked parse tree; the tree
  of closures it replaces is kept here as the reference, and every formula of the domain gives the same bits;
- a scenario is validated from its model's own field values (``Scenario.__dict__``), which are ``model_dump()``'s,
  and a finite float reads in the model without the parser's calls (:func:`economics.schema.values.for_model`);
- :func:`economics.engine.pipeline.warning_text` is remembered per flag combination;
- the rows that share an infeasible fleet's sentence are grouped column by column
  (:func:`economics.engine.pipeline._group_codes`), as ``pandas.MultiIndex.factorize`` grouped them.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_core import PydanticCustomError, PydanticUseDefault

import economics.domain
from economics.domain import formula as fm
from economics.domain.formula import CONSTANTS, Formula
from economics.engine import pipeline
from economics.engine.pipeline import warning_text
from economics.schema import values
from economics.schema.outputs import RowWarning
from economics.schema.scenario import FIELDS, Scenario

Run = Callable[[Mapping[str, Any]], Any]


def closures(node: ast.expr) -> Run:
    """The reference: the closure tree the formulas ran through before (one closure per node of the tree)."""
    if isinstance(node, ast.Constant):
        value = fm._constant(node)
        return lambda values: value
    if isinstance(node, ast.Name):
        if node.id in CONSTANTS:
            constant = CONSTANTS[node.id][0]
            return lambda values: constant
        name = node.id
        return lambda values: values[name]
    if isinstance(node, ast.UnaryOp):
        operand = closures(node.operand)
        return lambda values: np.negative(operand(values))
    if isinstance(node, ast.BinOp):
        op, left, right = fm._BINARY[type(node.op)][0], closures(node.left), closures(node.right)
        return lambda values: op(left(values), right(values))
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    fn, args = fm._FUNCTIONS[node.func.id], [closures(a) for a in node.args]
    return lambda values: fn(*(a(values) for a in args))


def domain_formulas() -> list[Formula]:
    """Every Formula the domain modules define (alone or in a tuple), each once."""
    found: dict[tuple[str, str], Formula] = {}
    for info in pkgutil.iter_modules(economics.domain.__path__):
        module = importlib.import_module(f"economics.domain.{info.name}")
        for value in vars(module).values():
            for f in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(f, Formula):
                    found[(f.name, f.expression)] = f
    return list(found.values())


FORMULAS = domain_formulas()
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 1e-300, 1e300, -2.5]


def test_the_domain_defines_many_formulas() -> None:
    assert len(FORMULAS) > 150  # the test below reads them all (a broken collection would test nothing)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), rows=st.sampled_from([1, 3, 40]))
def test_each_formula_gives_the_closure_trees_bits(seed: int, rows: int) -> None:
    rng = np.random.default_rng(seed)
    for f in FORMULAS:
        values: dict[str, Any] = {}
        for name in f.reads:
            column = rng.normal(size=rows) * 10.0 ** rng.integers(-3, 7, size=rows)
            column[rng.random(rows) < 0.2] = rng.choice(SPECIAL)
            values[name] = column if rng.random() < 0.8 else float(column[0])  # a column or one number
        with np.errstate(all="ignore"):
            got, want = f.evaluate(values), closures(f._tree)(values)
        got, want = np.asarray(got), np.asarray(want)
        assert (got.dtype, got.shape) == (want.dtype, want.shape), f.name
        assert got.tobytes() == want.tobytes(), f.name


def test_an_hourly_formula_gives_the_closure_trees_bits() -> None:
    f = Formula("kwh_per_day", "kWh/day", "hours_sum(min(power_kw_by_hour, cap) * -ln(x) ** 2) / HOURS_PER_DAY")
    rng = np.random.default_rng(5)
    values = {"power_kw_by_hour": rng.random((24, 7)) * 100, "cap": rng.random(7) * 80, "x": rng.random(7)}
    assert f.evaluate(values).tobytes() == closures(f._tree)(values).tobytes()


def test_a_formula_reads_no_name_but_its_columns() -> None:
    f = Formula("y", "-", "max(a, 2) * b")
    with pytest.raises(KeyError, match="b"):
        f.evaluate({"a": 1.0})
    with pytest.raises(ValueError, match="Attribute is not allowed"):
        Formula("y", "-", "a.__class__")


def test_a_scenarios_own_values_are_its_dump() -> None:
    scenarios = [Scenario(), Scenario(ownership="rent", facility_cooling="liquid", accelerator_cooling="liquid",
                                      workload="sessions", accelerator_count=8)]
    scenarios.append(scenarios[0].model_copy(update={"electricity_usd_per_kwh": 0.11}))
    for s in scenarios:
        own, dump = s.__dict__, s.model_dump()
        assert list(own) == list(dump) == list(FIELDS)
        assert [(type(v), v) for v in own.values()] == [(type(v), v) for v in dump.values()]


def test_warning_text_is_the_same_remembered() -> None:
    rng = np.random.default_rng(3)
    for flags in [0, (1 << len(RowWarning)) - 1, *rng.integers(0, 1 << len(RowWarning), 300).tolist()]:
        want = "; ".join(w.text for w in RowWarning if flags & w)
        assert warning_text(flags) == want == warning_text(RowWarning(flags))


CELLS = {"float": st.sampled_from([np.nan, 0.0, -0.0, 1.5, 2.0, 1e300]),
         "text": st.sampled_from(["h100-sxm", "b200", "", "mi300x"]),
         "int": st.sampled_from([0, 1, 4, 6])}


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_fleet_reason_groups_are_the_multiindex_groups(data: st.DataObject) -> None:
    """The rows of one infeasible fleet's sentence are grouped as ``MultiIndex.factorize`` grouped them (the same
    codes, first appearance first)."""
    rows = data.draw(st.integers(1, 40))
    kinds = data.draw(st.lists(st.sampled_from(sorted(CELLS)), min_size=1, max_size=5))
    keys = [np.array(data.draw(st.lists(CELLS[k], min_size=rows, max_size=rows)),
                     dtype=object if k == "text" else float if k == "float" else np.int64) for k in kinds]
    want, uniques = pd.MultiIndex.from_arrays(keys).factorize()
    got, count = pipeline._group_codes(keys)
    assert got.tolist() == want.tolist() and count == len(uniques)


FLOAT_FIELDS = [spec for spec in FIELDS.values() if spec.kind == "float"]


@settings(max_examples=200, deadline=None)
@given(x=st.floats(allow_nan=True, allow_infinity=True), k=st.integers(0, len(FLOAT_FIELDS) - 1))
def test_a_float_reads_in_a_model_as_the_parser_reads_it(x: float, k: int) -> None:
    """``for_model``'s shortcut for a finite float gives what the parser gives (NaN and infinity take the parser)."""
    spec = FLOAT_FIELDS[k]
    try:
        want: Any = values.parse(spec, x)
    except values.ValueProblem:
        want = "refused"
    try:
        got: Any = values.for_model(spec, x)
    except PydanticCustomError:
        got = "refused"
    except PydanticUseDefault:
        got = values.EMPTY
    if want is values.EMPTY and spec.optional:
        want = None
    assert (type(got), got) == (type(want), want)
