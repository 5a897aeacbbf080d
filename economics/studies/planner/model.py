"""The MILP's container: its columns (variables) and rows, with the bookkeeping the solve and the report read
(which column is which pool's count or flow in which hour, the row groups, the operations rules).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
from scipy.sparse import csr_matrix

from economics.domain import queueing
from economics.studies.planner.inputs import PlanSettings
from economics.studies.planner.pools import Pool

ALL_DAY = None
"""The hour type of what holds for the whole day: a count held all day (owned, existing, reserved), a row of no one
hour. (The hour types themselves are 0, 1, ...)"""

HourType = int | None
"""An hour type of the plan's day, or :data:`ALL_DAY`."""


class Row(StrEnum):
    """The families of rows of the MILP, by the name the limits table and the messages use. Each is built by one
    function (docs/planner.md lists them: math, name, function); the hourly adapter
    (:func:`economics.studies.planner.hourly.cover_problem`) declares how it treats each one.
    """

    DEMAND_INPUT = "demand input"
    DEMAND_OUTPUT = "demand output"
    SPOT_SHARE = "spot share"
    CAPACITY = "capacity"
    TTFT = "ttft"
    TTFT_FLOOR = "ttft floor"
    EXISTING_FLEET = "existing fleet"
    RACK_FILL = "rack fill"
    RACKS = "racks"
    SITE_POWER = "site power"
    CAPEX_BUDGET = "capex budget"
    KV_LINK = "KV link"
    POOL_OPEN = "pool open"
    SMALLEST_POOL = "smallest pool"
    POOL_SIZE = "pool size"
    RENTAL_BLOCK = "rental block"
    DISTINCT_POOLS = "distinct pools"


@dataclass
class PlanModel:
    """The MILP in the form ``min c x, A x <= b, lb <= x <= ub``, with names for rows and columns."""

    c: list[float] = field(default_factory=list)
    lb: list[float] = field(default_factory=list)
    ub: list[float] = field(default_factory=list)
    integer: list[int] = field(default_factory=list)
    rows: list[dict[int, float]] = field(default_factory=list)
    b: list[float] = field(default_factory=list)
    row_group: list[str] = field(default_factory=list)  # the row's limit in the limits table: its kind, or a label
    row_kind: list[Row] = field(default_factory=list)
    row_hour: list[HourType] = field(default_factory=list)
    count_col: dict[tuple[int, HourType], int] = field(default_factory=dict)  # (pool, hour type or ALL_DAY) -> column
    flow_col: dict[tuple[int, int], int] = field(default_factory=dict)
    rack_col: dict[int, int] = field(default_factory=dict)
    floor_col: dict[tuple[int, HourType], int] = field(default_factory=dict)
    slack_col: dict[str, list[int]] = field(default_factory=dict)
    rules: Rules | None = None
    hour_weights: np.ndarray = field(default_factory=lambda: np.ones(0), repr=False, compare=False)
    """The hours each hour type stands for [h] (:func:`~economics.studies.planner.inputs.hour_types`), by which its
    columns' costs are multiplied; none for a model built by hand."""
    hours: list[tuple[PlanModel, dict[int, int]]] | None = field(default=None, repr=False, compare=False)
    """Stage 2's per-hour models and their column maps into this model, kept once built (a neighbourhood search
    solves the hours again, :mod:`~economics.studies.planner.neighbours`)."""
    _csr: tuple[list[dict[int, float]], int, int, csr_matrix] | None = field(default=None, init=False, repr=False,
                                                                           compare=False)
    """The last :meth:`matrix` and what it was made from (the rows' list, their number, the columns' number)."""

    def var(self, cost: float, integer: bool, ub: float = math.inf) -> int:
        """Add a column of objective coefficient ``cost``, bounds ``0 <= x <= ub``, integer or not; its index."""
        self.c.append(cost)
        self.lb.append(0.0)
        self.ub.append(ub)
        self.integer.append(1 if integer else 0)
        return len(self.c) - 1

    def row(self, coefs: dict[int, float], b: float, kind: Row, hour: HourType = ALL_DAY, label: str = "") -> int:
        """Add ``coefs . x <= b``, a row of ``kind`` (named ``label`` in the limits table when one kind has several
        limits, e.g. one existing fleet per candidate) in hour type ``hour`` (:data:`ALL_DAY`: of no one hour).
        """
        self.rows.append(coefs)
        self.b.append(b)
        self.row_group.append(label or kind._value_)  # the value without the enum's descriptor (40k rows an edit)
        self.row_kind.append(kind)
        self.row_hour.append(hour)
        return len(self.rows) - 1

    def slack_cols(self) -> set[int]:
        """Every slack column (an elastic model's stretch of a limit or unserved demand)."""
        return {col for cols in self.slack_col.values() for col in cols}

    def matrix(self) -> csr_matrix:
        """The rows as the sparse matrix ``A`` (one row per row, one column per column). The entries are read into
        arrays in one pass each (not appended one by one), in the rows' order, so the matrix is the same to the bit.

        Made once per model while no row or column is added (a solve reads it for the memo's key, for HiGHS and for
        the plan's check: about 40 reads an edit, half of them again); rows are only ever appended
        (:meth:`row`), never changed in place. Callers read it and do not change it.
        """
        made = self._csr
        if made is not None and made[0] is self.rows and made[1] == len(self.rows) and made[2] == len(self.c):
            return made[3]
        a = self._matrix()
        for part in (a.data, a.indices, a.indptr):  # shared by every reader: a change in place would raise
            part.flags.writeable = False
        self._csr = (self.rows, len(self.rows), len(self.c), a)
        return a

    def _matrix(self) -> csr_matrix:
        """:meth:`matrix` made."""
        sizes = [len(coefs) for coefs in self.rows]
        n = sum(sizes)
        r = np.repeat(np.arange(len(self.rows), dtype=np.int64), sizes)
        c = np.fromiter(itertools.chain.from_iterable(self.rows), dtype=np.int64, count=n)
        v = np.fromiter(itertools.chain.from_iterable(coefs.values() for coefs in self.rows), dtype=float, count=n)
        # the CSR arrays made here, each row's entries by column, as scipy's COO to CSR conversion makes them (a
        # row's columns are its dict's keys: no duplicates to sum): the same arrays, without the conversion's passes
        order = np.lexsort((c, r))
        starts = np.zeros(len(self.rows) + 1, dtype=np.int64)
        np.cumsum(sizes, out=starts[1:])
        return csr_matrix((v[order], c[order], starts), shape=(len(self.rows), len(self.c)))


HourModels = list[tuple[PlanModel, dict[int, int]]]
"""Stage 2's per-hour models, each with its map from the day model's columns to the hour's."""


STRETCHABLE = frozenset({Row.DEMAND_INPUT, Row.DEMAND_OUTPUT, Row.RACKS, Row.SITE_POWER, Row.CAPEX_BUDGET,
                         Row.KV_LINK})
"""Rows an elastic model may stretch at a steep price: the demand (what is left unserved) and each limit."""


def count_column(m: PlanModel, p: int, h: int) -> int:
    """The column of pool ``p``'s system count in hour type ``h``: its one count for the day when it has one, else
    the hour's (every pool has one or the other).
    """
    day = m.count_col.get((p, ALL_DAY))
    return day if day is not None else m.count_col[(p, h)]


@dataclass
class Rules:
    """The columns of the operations settings, for stage 2 to close the pools stage 1 left closed and to hold each
    rented pool's block (:func:`apply_rules`).
    """

    open_col: dict[int, int]                 # pool -> binary: the pool has systems (with a pool limit or size)
    closes: dict[int, int]                   # a rented count column -> its pool's binary
    rented: dict[int, tuple[list[int], int]]  # rented pool -> (its count in each hour type, its size)
    block: list[int]                         # the hour types of the rental block (the day's busiest hours)
    min_systems: int
    weights: np.ndarray                      # hours of each hour type [h]
    floors: dict[int, int] = field(default_factory=dict)  # the TTFT floors the model was built with


def utilization_cap(pool: Pool, servers: int, settings: PlanSettings) -> float:
    """The highest prefill utilization at which ``servers`` replicas of ``pool`` (at least 1) meet the TTFT target at
    its percentile (:func:`economics.domain.queueing.max_utilization`). Needs a TTFT target.
    """
    assert settings.ttft_target_s is not None
    return queueing.max_utilization(max(1, servers), pool.service_s, settings.ttft_target_s,
                                    settings.ttft_percentile, settings.prefill_service_cv2)
