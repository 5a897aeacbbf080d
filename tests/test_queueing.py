"""Time to first token by M/G/c queueing: Erlang C by hand, the M/M/c closed form, and the Allen-Cunneen
approximation against a discrete-event simulation (P99 wait within 10 % for utilization up to 0.9)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from economics.domain.queueing import erlang_c, max_utilization, simulate_waits_s, ttft_percentile_s, wait_percentile_s


def test_erlang_c_by_hand() -> None:
    # M/M/1: the probability of waiting is rho
    assert erlang_c(1, 0.7) == pytest.approx(0.7, rel=1e-12)
    # c = 2, a = 1: Erlang B(1) = 1/2, B(2) = (1 x 1/2) / (2 + 1/2) = 0.2; C = 0.2 / (1 - 0.5 x (1 - 0.2)) = 1/3
    assert erlang_c(2, 1.0) == pytest.approx(1.0 / 3.0, rel=1e-12)
    # c = 3, a = 2: B(3) = (2^3/3!) / (1 + 2 + 2 + 8/6) = 1.3333/6.3333 = 0.210526; rho = 2/3
    # C = 0.210526 / (1 - 2/3 x 0.789474) = 0.210526 / 0.473684 = 0.444444
    assert erlang_c(3, 2.0) == pytest.approx(4.0 / 9.0, rel=1e-9)
    assert erlang_c(4, 0.0) == 0.0
    assert erlang_c(4, 4.0) == 1.0


def test_mm1_percentile_is_the_closed_form() -> None:
    # M/M/1, S = 0.2 s, rho = 0.8: P(W > t) = rho exp(-(mu - lambda) t), mu - lambda = (1 - 0.8) / 0.2 = 1 /s
    # t99 = ln(0.8 / 0.01) / 1 = 4.382027 s
    assert wait_percentile_s(1, 0.8, 0.2, 0.99) == pytest.approx(math.log(80.0), rel=1e-12)
    # deterministic prompts halve it: (Ca^2 + Cs^2) / 2 = (1 + 0) / 2
    assert wait_percentile_s(1, 0.8, 0.2, 0.99, service_cv2=0.0) == pytest.approx(math.log(80.0) / 2, rel=1e-12)
    # fewer than 1 % wait at all: the P99 wait is 0 and the TTFT is the prefill itself
    assert wait_percentile_s(1, 0.005, 0.2, 0.99) == 0.0
    assert ttft_percentile_s(1, 0.005, 0.2, 0.99) == pytest.approx(0.2)
    assert math.isinf(wait_percentile_s(2, 1.0, 0.2, 0.99))


def test_max_utilization_meets_the_target_exactly() -> None:
    # M/M/1 with S = 0.1 s and a P99 TTFT target of 0.5 s: solve ln(rho/0.01) / ((1 - rho)/0.1) + 0.1 = 0.5 by
    # bisection here, independently of the code's own search
    lo, hi = 0.011, 0.999
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.log(mid / 0.01) * 0.1 / (1 - mid) + 0.1 <= 0.5 else (lo, mid)
    assert max_utilization(1, 0.1, 0.5, 0.99) == pytest.approx(lo, abs=1e-9)
    assert max_utilization(1, 0.6, 0.5, 0.99) == 0.0  # the prefill alone is longer than the target


@settings(max_examples=60, deadline=None)
@given(c=st.integers(1, 64), rho=st.floats(0.05, 0.95), cv2=st.floats(0.0, 4.0))
def test_waits_grow_with_load_and_shrink_with_servers(c: int, rho: float, cv2: float) -> None:
    w = wait_percentile_s(c, rho, 1.0, 0.99, cv2)
    assert w >= 0.0
    assert wait_percentile_s(c, min(rho + 0.04, 0.99), 1.0, 0.99, cv2) >= w - 1e-12
    assert wait_percentile_s(c + 1, rho, 1.0, 0.99, cv2) <= w + 1e-12


@settings(max_examples=30, deadline=None)
@given(c=st.integers(1, 32), s=st.floats(0.01, 2.0), slack=st.floats(1.05, 20.0))
def test_max_utilization_grows_with_pooling(c: int, s: float, slack: float) -> None:
    target = s * slack
    u = max_utilization(c, s, target, 0.99)
    assert 0.0 < u < 1.0
    assert ttft_percentile_s(c, u, s, 0.99) <= target * (1 + 1e-9)
    assert max_utilization(c + 4, s, target, 0.99) >= u - 1e-9


GRID = [(cv2, c, rho) for cv2 in (0.5, 1.0, 2.0) for c in (1, 4, 16) for rho in (0.5, 0.7, 0.9)]


def _check_against_simulation(cv2: float, c: int, rho: float, customers: int) -> None:
    waits = simulate_waits_s(c, rho, 1.0, cv2, customers, seed=7)[customers // 100:]  # warm-up dropped
    simulated = float(np.quantile(waits, 0.99))
    approx = wait_percentile_s(c, rho, 1.0, 0.99, cv2)
    if approx == 0.0:  # fewer than 1 % wait: the simulation's P99 must be (nearly) no wait either
        assert simulated <= 0.02, simulated
        return
    assert approx == pytest.approx(simulated, rel=0.10), (approx, simulated)


@pytest.mark.parametrize(("cv2", "c", "rho"), [g for g in GRID if g[2] < 0.9])
def test_p99_wait_matches_simulation(cv2: float, c: int, rho: float) -> None:
    _check_against_simulation(cv2, c, rho, 400_000)


@pytest.mark.slow
@pytest.mark.parametrize(("cv2", "c", "rho"), [g for g in GRID if g[2] >= 0.9])
def test_p99_wait_matches_simulation_at_utilization_0_9(cv2: float, c: int, rho: float) -> None:
    # near saturation the P99 converges slowly: a longer run
    _check_against_simulation(cv2, c, rho, 1_500_000)


def _erlang_b_by_recursion(servers: int, offered_load: float) -> float:
    b = 1.0
    for k in range(1, servers + 1):
        b = offered_load * b / (k + offered_load * b)
    return b


@pytest.mark.parametrize("servers", [33, 64, 200, 1_001, 5_000, 100_000])
@pytest.mark.parametrize("rho", [0.3, 0.9, 0.999])
def test_erlang_b_in_closed_form_agrees_with_its_recursion(servers: int, rho: float) -> None:
    # beyond RECURSION_SERVERS the Poisson ratio replaces the c-step recursion: the same number, in fixed time
    from economics.domain.queueing import RECURSION_SERVERS, erlang_b

    assert servers > RECURSION_SERVERS
    exact = _erlang_b_by_recursion(servers, rho * servers)
    assert erlang_b(servers, rho * servers) == pytest.approx(exact, rel=1e-9, abs=1e-300)


def test_a_pool_of_a_million_replicas_is_sized_at_an_extreme_percentile() -> None:
    # the planner's cap search at 10^6 servers and p = 0.999999999 (each Erlang C call used to loop a million times,
    # sixty times per bisection): pooling lets a million 0.2 s prefills run close to full within 1 s
    from economics.domain.queueing import max_utilization

    cap = max_utilization(1_000_000, 0.2, 1.0, 0.999999999)
    assert 0.99 < cap < 1.0
    assert max_utilization(1_000_000, 0.2, 1.0, 0.99) >= cap


@settings(max_examples=300, deadline=None)
@given(st.floats(0.0, 40.0), st.floats(0.0, 60.0), st.floats(0.0, 60.0))
def test_one_row_of_erlang_b_is_that_row_of_a_column_bit_for_bit(servers: float, load: float, other: float) -> None:
    # one row takes the recursion on Python floats (max_utilization's bisection), a column numpy's sorted tails:
    # the same operations in the same order, so the same bits, whole counts or not, either side of 32 servers
    from economics.domain.queueing import erlang_b_array

    one = erlang_b_array(np.array([servers]), np.array([load]))
    column = erlang_b_array(np.array([servers, 3.0, 40.0]), np.array([load, other, other]))
    assert one.shape == (1,)
    assert one.tobytes() == column[:1].tobytes()
    assert erlang_b_array(np.array([[servers]]), np.array([load])).tobytes() == one.tobytes()
