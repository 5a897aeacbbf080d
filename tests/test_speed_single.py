"""The single-scenario path of issue #43's engine round gives exactly what it gave before (no timed tests: each
faster form is held to the form it replaced, bit for bit).

- a scenario is validated from its model's own field values (``Scenario.__dict__``), which are ``model_dump()``'s,
  and a finite float reads in the model without the parser's calls (:func:`economics.schema.values.for_model`);
- :func:`economics.engine.pipeline.warning_text` is remembered per flag combination;
- the rows that share an infeasible fleet's sentence are grouped column by column
  (:func:`economics.engine.pipeline._group_codes`), as ``pandas.MultiIndex.factorize`` grouped them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_core import PydanticCustomError, PydanticUseDefault

from economics.engine import pipeline
from economics.engine.pipeline import warning_text
from economics.schema import values
from economics.schema.outputs import RowWarning
from economics.schema.scenario import FIELDS, Scenario
from economics.schema.values import FieldKind


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


FLOAT_FIELDS = [spec for spec in FIELDS.values() if spec.kind is FieldKind.FLOAT]


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
