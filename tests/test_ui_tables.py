"""Static tables (ui/common.py ``draw_table``): the headers and cell text a data grid shows, drawn with ``st.html``
when a table is short, every cell escaped; a long table keeps the grid."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from ui.common import STATIC_ROWS, grid_number


@pytest.mark.parametrize(("value", "form", "shown"), [
    # JavaScript's toFixed rounds the binary value half away from zero: 2.5 -> "3" (Python's "%.0f" says "2"), and
    # 1.005 is 1.00499999999999989... in binary -> "1.00"
    (2.5, "%,.0f", "3"), (-2.5, "%,.0f", "-3"), (1.005, "%,.2f", "1.00"), (1234.5, "%,.0f", "1,235"),
    (61761922.3563, "%,.0f", "61,761,922"), (0.4317, "%.3f", "0.432"), (0.0123, "%.4f", "0.0123"),
    (-0.3, "%,.0f", "-0"),  # a negative rounding to zero keeps its sign, as toFixed's does
    (2000.0, "%,d", "2,000"), (1999.9, "%,d", "1,999"),  # %d: the whole part (parseInt)
    # Intl percent, 0 to 2 decimals: 0.8675 x 100 = 86.75; 0.12345 is 0.1234500000000000041... -> 12.35; 1 -> 100
    (0.8675, "percent", "86.75%"), (0.12345, "percent", "12.35%"), (1.0, "percent", "100%"),
    (0.0, "percent", "0%"), (-1.2473, "percent", "-124.73%"), (12.5, "percent", "1,250%"),
    # Intl dollars, 2 decimals, the sign before the $
    (-4318837.2, "dollar", "-$4,318,837.20"), (38150004.365, "dollar", "$38,150,004.37"), (0.0, "dollar", "$0.00"),
    # a float column with no format: 4 decimals, trailing zeros dropped, no separators; below 1e-4 as many decimals
    # as the exponent (1.5e-5: 5)
    (763.0, "", "763"), (566.123456, "", "566.1235"), (12345.5, "", "12345.5"), (1.5e-5, "", "0.00002"),
    (2000.0, "%d", "2000"),
])
def test_the_text_a_grid_shows_for_each_format(value: float, form: str, shown: str) -> None:
    assert grid_number(value, form) == shown


def test_a_format_no_static_table_writes_is_refused_not_guessed() -> None:
    with pytest.raises(ValueError, match="'%e'"):
        grid_number(1.0, "%e")


@given(st.floats(min_value=-1e15, max_value=1e15, allow_nan=False), st.integers(min_value=0, max_value=6))
def test_a_printf_number_reads_back_within_half_its_last_place(value: float, places: int) -> None:
    # exactly: the text, read as a decimal, is within half a unit of its last place of the binary value
    text = grid_number(value, f"%,.{places}f")
    assert abs(Decimal(text.replace(",", "")) - Decimal(value)) <= Decimal(5).scaleb(-places - 1)
    assert len(text.partition(".")[2]) == places


def _page(rows: int) -> AppTest:
    def script(rows: int) -> None:
        import pandas as pd
        import streamlit as st

        from ui import common
        common.draw_table(pd.DataFrame({"name": ["<b>x</b>"] * rows, "npv": [-1234.5] * rows,
                                        "ok": [True] * rows, "empty": [None] * rows}),
                          {"npv": st.column_config.NumberColumn("NPV [USD]", format="%,.0f")})

    at = AppTest.from_function(script, args=(rows,))
    at.run()
    assert not at.exception
    return at


def test_a_short_table_is_drawn_static_with_the_grids_headers_and_text_escaped() -> None:
    at = _page(STATIC_ROWS)
    assert not at.dataframe
    (table,) = [h.value for h in at.html]
    assert table.count("<tr>") == STATIC_ROWS + 1
    assert '<th>name</th><th class="figure">NPV [USD]</th><th>ok</th><th>empty</th>' in table  # the label given
    # -1,234.5 at %,.0f: -1,235 (a half away from zero); True as ✓; an empty cell —, never "None"
    assert '<tr><td>&lt;b&gt;x&lt;/b&gt;</td><td class="figure">-1,235</td><td>✓</td><td>—</td></tr>' in table
    assert "<b>" not in table


def test_a_long_table_keeps_the_grid_to_sort_and_search() -> None:
    at = _page(STATIC_ROWS + 1)
    assert not at.html and len(at.dataframe) == 1 and len(at.dataframe[0].value) == STATIC_ROWS + 1
