"""The MILP's rows as a sparse matrix (:meth:`PlanModel.matrix`, read into arrays in one pass, #43): the same matrix
to the bit as the rows appended entry by entry, whatever the rows (empty ones, a column in no row, any order of
columns within a row)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import coo_matrix, csr_matrix

from economics.studies.planner.model import PlanModel, Row


def entry_by_entry(m: PlanModel) -> csr_matrix:
    """The matrix as it was built before: one (row, column, value) appended per entry."""
    r, c, v = [], [], []
    for i, coefs in enumerate(m.rows):
        for j, val in coefs.items():
            r.append(i)
            c.append(j)
            v.append(val)
    return coo_matrix((v, (r, c)), shape=(len(m.rows), len(m.c))).tocsr()


def test_a_hand_model() -> None:
    # min x0 + x1 + x2 with  -x0 - 2 x2 <= -1  and  3 x1 - x0 <= 4 (columns given out of order) and an empty row
    m = PlanModel()
    for _ in range(3):
        m.var(1.0, False)
    m.row({0: -1.0, 2: -2.0}, -1.0, Row.DEMAND_OUTPUT)
    m.row({1: 3.0, 0: -1.0}, 4.0, Row.CAPACITY)
    m.row({}, 0.0, Row.RACKS)
    a = m.matrix()
    assert a.toarray().tolist() == [[-1.0, 0.0, -2.0], [-1.0, 3.0, 0.0], [0.0, 0.0, 0.0]]
    assert a.indptr.tolist() == [0, 2, 4, 4] and a.indices.tolist() == [0, 2, 0, 1]  # sorted within each row


rows = st.lists(st.dictionaries(st.integers(0, 29), st.floats(-1e9, 1e9, allow_nan=False), max_size=12),
                max_size=25)


@settings(max_examples=200, deadline=None)
@given(rows, st.integers(0, 5))
def test_the_same_matrix_as_entry_by_entry(coefs: list[dict[int, float]], extra_columns: int) -> None:
    m = PlanModel()
    for _ in range(30 + extra_columns):
        m.var(0.0, False)
    for row in coefs:
        m.row(row, 0.0, Row.CAPACITY)
    got, want = m.matrix(), entry_by_entry(m)
    assert got.shape == want.shape
    for part in ("data", "indices", "indptr"):
        g, w = getattr(got, part), getattr(want, part)
        assert g.dtype == w.dtype and g.tobytes() == w.tobytes()
    assert np.array_equal(got.toarray(), want.toarray())
