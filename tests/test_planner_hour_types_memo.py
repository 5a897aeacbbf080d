"""The day's hour types remembered per workload object (:func:`economics.studies.planner.inputs.hour_types`, #43): a
sequence of workloads (edits of the demand, the profile, the rental block, the prices) gets what working each out
afresh gets, an object gone and a new one at its address is not answered from memory, each call gets its own
arrays, and the memo is bounded."""

from __future__ import annotations

import gc
from dataclasses import replace

import numpy as np

import economics
from economics.studies.planner import inputs
from economics.studies.planner.inputs import PlanSettings, hour_types, type_day, workload


def fresh(wl: inputs.Workload) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return inputs._hour_types(wl)


def same(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> bool:
    return all(x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes() for x, y in zip(a, b,
                                                                                                         strict=True))


def workloads(n: int) -> list[inputs.Workload]:
    """``n`` workloads as a page's edits make them: the demand, the day's profile, a rental block, a tariff."""
    s = economics.default_scenario()
    out = []
    for i in range(n):
        edit = s.model_copy(update={"demand_output_tokens_per_day": 1e9 * (1 + i % 7),
                                    "electricity_tariff": "de-lu-day-ahead-2024" if i % 5 == 0 else None})
        profile = ("flat", "diurnal", "peak", " ".join(["1"] * 8 + ["2"] * 10 + ["1"] * 6))[i % 4]
        wl = workload(edit, PlanSettings(demand_profile=profile))
        out.append(replace(wl, block_hours=float((0, 4, 8)[i % 3])))
    return out


def test_a_sequence_of_workloads_gets_what_a_fresh_computation_gets() -> None:
    # a hand check first: a flat day is one type of 24 hours; diurnal with an 8-hour block splits the block apart
    flat = workload(economics.default_scenario(), PlanSettings(demand_profile="flat"))
    levels, inverse, weights = hour_types(flat)
    assert len(levels) == 1 and inverse.tolist() == [0] * 24 and weights.tolist() == [24]
    for wl in workloads(40):
        assert same(hour_types(wl), fresh(wl))
        assert same(hour_types(wl), fresh(wl))  # the second from memory


def test_an_object_gone_is_not_answered_for_a_new_one_at_its_address() -> None:
    # CPython reuses the address of an object that is gone for the next of the same size: made and dropped in turn,
    # the workloads land on a few addresses, and each must get its own hour types
    addresses = set()
    for i in range(60):
        wl = workloads(i % 12 + 1)[-1]
        addresses.add(id(wl))
        assert same(hour_types(wl), fresh(wl))
        del wl
        gc.collect()
    assert len(addresses) < 60  # addresses were reused (else this test would not test the guard)


def test_each_call_gets_its_own_arrays() -> None:
    wl = workloads(3)[-1]
    levels, inverse, weights = hour_types(wl)
    levels[:] = -1.0
    inverse[:] = 0
    weights[:] = 0
    assert same(hour_types(wl), fresh(wl))


def test_the_memo_is_bounded() -> None:
    kept = workloads(inputs.HOUR_TYPES_MEMO + 5)  # all alive: none of their entries is replaced
    for wl in kept:
        hour_types(wl)
    assert len(inputs._HOUR_TYPES) == inputs.HOUR_TYPES_MEMO
    assert id(kept[0]) not in inputs._HOUR_TYPES or inputs._HOUR_TYPES[id(kept[0])][0]() is not kept[0]
    assert same(hour_types(kept[0]), fresh(kept[0]))  # forgotten, worked out again


def test_a_one_hour_workload_gets_what_the_full_computation_gets() -> None:
    # stage 2's hour models (planner/build.py: one hour's level, no block, that hour's prices) take hour_types'
    # shortcut for one hour; it must give _hour_types' arrays bit for bit, dtypes included
    checked = 0
    for wl in workloads(12):
        day = type_day(wl)
        levels, _, _ = fresh(wl)
        for h, level in enumerate(levels):
            one = replace(wl, hourly_requests_per_s=np.array([level]), block_hours=0.0,
                          day=day.at(np.array([h])) if day is not None else wl.day)
            assert same(hour_types(one), fresh(one)), (h, level)
            checked += 1
    assert checked > 12  # the diurnal and stepped days give several levels each
