r"""Agent sessions: the tokens a multi-turn session reads, and how much of its earlier context a KV-cache hierarchy
still holds when the next turn comes.

**The session.** A session is ``T`` turns. Turn ``t`` (1-based) reads a context of the shared prefix ``S`` (system
prompt, tool definitions: the same for every session), every earlier turn's new input ``u`` and output ``o``, and its
own new input ``u``; it writes ``o`` tokens:

.. math:: C_t = S + (t - 1)(u + o) + u

so the input tokens a session processes are :math:`\sum_t C_t = T (S + u) + (u + o) T (T - 1) / 2`. Of these,
``T S`` are the prefix (cached across sessions), :math:`H = (u + o) T (T - 1) / 2` are earlier turns re-read (cached
if the session's KV survived the idle gap) and ``T u`` are new (always prefilled).

**A spread of session lengths.** The input grows with :math:`T^2`, so a mix of short and long sessions reads more
than its mean session. With ``T`` the mean ``m`` of a spread whose coefficient of variation is ``c``
(``turns_per_session_cv``), :math:`E[T (T - 1)] = m^2 (1 + c^2) - m` takes the place of :math:`T (T - 1)`
(:func:`turn_pairs_per_session`); the token counts are linear in ``T`` and :math:`T (T - 1)`, so their means are
exact for any distribution with that mean and cv.

**Residency (LRU under Che's approximation).** Between turns a session idles (tool or user time); its KV of
``t (u + o)`` tokens after turn ``t`` is re-read after the gap ``G``, taken exponential with mean ``g`` =
``seconds_between_turns`` (the KV is touched by every decode step until the answer ends, so the time since its last
use is the idle gap). Under LRU with characteristic time :math:`T_C` (Che, Tung and Wang 2002; Fricker, Robert and
Roberts 2012: an item stays cached iff it was used within the last :math:`T_C` seconds), the earlier context is
found with probability

.. math:: p = P(G < T_C) = 1 - e^{-T_C / g}

An idle context occupies the cache for :math:`\min(G, T_C)`, whose mean is :math:`g p`; a session's final context,
never read again, occupies it for :math:`T_C`. With sessions arriving at rate :math:`\lambda`, Little's law gives
the tokens held, which must equal the capacity :math:`K` (in tokens of KV), the equation :math:`T_C` solves:

.. math:: \lambda (p) \, [H g p + T (u + o) T_C] = K

The left side grows with :math:`T_C` (and with :math:`\lambda`), so the root is unique; it is found by false
position with bisection steps over whole columns (:func:`characteristic_time_s`). The session rate
:math:`\lambda(p)` may itself depend on ``p``:
a system at full load completes sessions at ``1 / w(p)``, ``w`` the accelerator time a session takes, which falls as
fewer tokens are prefilled again.

**Tiers.** HBM, host DRAM, local SSD and a remote store form an exclusive LRU hierarchy (what HBM evicts is demoted
to host memory, then SSD, then the remote store). By the stack (inclusion) property of LRU, tiers ``1..k`` together
hold what one LRU cache of their summed capacity holds, so the share of earlier context found in tier ``k`` is
:math:`p(K_1 + ... + K_k) - p(K_1 + ... + K_{k-1})`, at the session rate of the whole hierarchy. More memory in any
tier therefore never lowers the hit rate. The shared prefix is always the most recently used item (every turn of
every session reads it): it is held once, at the top of the stack, whenever the hierarchy can hold it. A tier whose
read is slower than prefilling the tokens again is not used (a hit there would cost more than a miss), so it
holds nothing.

References
----------
H. Che, Y. Tung, Z. Wang, "Hierarchical Web caching systems: modeling, design and experimental results", IEEE
JSAC 20(7), 2002. C. Fricker, P. Robert, J. Roberts, "A versatile and accurate approximation for LRU cache
performance", ITC 24, 2012 (arXiv:1202.3974). R. Mattson et al., "Evaluation techniques for storage hierarchies",
IBM Systems Journal 9(2), 1970 (the stack property).
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike, NDArray

from economics.domain import capacity, finance, revenue
from economics.domain.formula import Formula

Array = NDArray[np.float64]


class Tier(StrEnum):
    """The KV tiers, fastest first: the order of the exclusive LRU hierarchy."""

    HBM = "hbm"
    HOST = "host"
    SSD = "ssd"
    REMOTE = "remote"


TIERS: tuple[Tier, ...] = tuple(Tier)

_BISECTIONS = 200
"""Most halvings of the characteristic time's bracket; the loop stops once every row is within 1e-15 of its root."""


def _f(x: ArrayLike) -> Array:
    return np.asarray(x, dtype=float)


def context_tokens(turn: ArrayLike, session_prefix_tokens: ArrayLike, input_tokens_per_turn: ArrayLike,
                   output_tokens_per_turn: ArrayLike) -> Array:
    r"""The context turn ``t`` reads: the shared prefix, every earlier turn's input and output, its own new input.

    .. math:: C_t = S + (t - 1)(u + o) + u

    Parameters
    ----------
    turn : t, 1-based [-]
    session_prefix_tokens : S [token]
    input_tokens_per_turn : u [token]
    output_tokens_per_turn : o [token]

    >>> [float(context_tokens(t, 1000, 500, 100)) for t in (1, 2, 3, 4)]
    [1500.0, 2100.0, 2700.0, 3300.0]
    """
    u, o = _f(input_tokens_per_turn), _f(output_tokens_per_turn)
    return _f(session_prefix_tokens) + (_f(turn) - 1.0) * (u + o) + u


def turn_pairs_per_session(turns_per_session: ArrayLike, turns_per_session_cv: ArrayLike = 0.0) -> Array:
    r"""The mean of :math:`T (T - 1)` over sessions whose turns have mean ``m`` and coefficient of variation ``c``.

    .. math:: E[T (T - 1)] = E[T^2] - E[T] = m^2 (1 + c^2) - m

    Exact for any distribution of ``T`` with that mean and cv (:math:`E[T^2] = Var T + m^2`, :math:`Var T = (c m)^2`):
    the token counts that grow with :math:`T (T - 1)` are linear in it, so their mean is this formula's.

    Parameters
    ----------
    turns_per_session : m, the mean turns [turn], >= 1
    turns_per_session_cv : c, their standard deviation / mean [-], >= 0

    >>> float(turn_pairs_per_session(4)), float(turn_pairs_per_session(4, 0.5))  # 4 x 3; 16 x 1.25 - 4
    (12.0, 16.0)
    """
    return TURN_PAIRS.evaluate({"turns_per_session": _f(turns_per_session),
                                "turns_per_session_cv": _f(turns_per_session_cv)})


def input_tokens_per_session(turns_per_session: ArrayLike, session_prefix_tokens: ArrayLike,
                             input_tokens_per_turn: ArrayLike, output_tokens_per_turn: ArrayLike,
                             turns_per_session_cv: ArrayLike = 0.0) -> Array:
    r"""Input tokens a session processes: every turn's full context, :math:`\sum_{t=1}^{T} C_t`, in closed form,
    and its mean over a spread of session lengths (:func:`turn_pairs_per_session`).

    .. math:: I = T (S + u) + (u + o) T (T - 1) / 2, \quad E[I] = m (S + u) + (u + o) (m^2 (1 + c^2) - m) / 2

    Parameters
    ----------
    turns_per_session : T, or the mean m of a spread [turn], >= 1
    session_prefix_tokens, input_tokens_per_turn, output_tokens_per_turn : S, u, o [token]
    turns_per_session_cv : c, the turns' coefficient of variation [-], 0 = every session T turns

    >>> float(input_tokens_per_session(4, 1000, 500, 100))  # 1,500 + 2,100 + 2,700 + 3,300
    9600.0
    >>> float(input_tokens_per_session(4, 1000, 500, 100, 0.5))  # 4 x 1,500 + 600 x 16 / 2
    10800.0
    """
    v = {"turns_per_session": _f(turns_per_session), "turns_per_session_cv": _f(turns_per_session_cv),
         "session_prefix_tokens": _f(session_prefix_tokens), "input_tokens_per_turn": _f(input_tokens_per_turn),
         "output_tokens_per_turn": _f(output_tokens_per_turn)}
    v["turn_pairs_per_session"] = TURN_PAIRS.evaluate(v)
    v["history_tokens_per_session"] = HISTORY.evaluate(v)
    return INPUT_PER_SESSION.evaluate(v)


def history_tokens_per_session(turns_per_session: ArrayLike, input_tokens_per_turn: ArrayLike,
                               output_tokens_per_turn: ArrayLike, turns_per_session_cv: ArrayLike = 0.0) -> Array:
    r"""Tokens of earlier turns a session reads again: turn ``t`` re-reads ``(t - 1)(u + o)``.

    .. math:: H = (u + o) T (T - 1) / 2, \quad E[H] = (u + o) E[T (T - 1)] / 2

    It is also the token-weighted sum of the session's idle contexts that are read again (after turn ``t`` the
    session holds ``t (u + o)`` tokens of its own, read by turn ``t + 1`` for ``t < T``).

    >>> float(history_tokens_per_session(4, 500, 100))  # (0 + 1 + 2 + 3) x 600
    3600.0
    >>> float(history_tokens_per_session(4, 500, 100, 0.5))  # 600 x 16 / 2
    4800.0
    """
    return HISTORY.evaluate({"input_tokens_per_turn": _f(input_tokens_per_turn), "output_tokens_per_turn":
                             _f(output_tokens_per_turn), "turn_pairs_per_session":
                             turn_pairs_per_session(turns_per_session, turns_per_session_cv)})


def hit_probability(characteristic_time_s: ArrayLike, seconds_between_turns: ArrayLike) -> Array:
    r"""Share of a session's earlier context still held at its next turn: the idle gap, exponential with mean
    ``g``, is shorter than the characteristic time.

    .. math:: p = P(G < T_C) = 1 - e^{-T_C / g}

    Parameters
    ----------
    characteristic_time_s : T_C [s], >= 0
    seconds_between_turns : g, the mean idle gap [s], > 0

    >>> round(float(hit_probability(60.0, 60.0)), 6)
    0.632121
    """
    return -np.expm1(-_f(characteristic_time_s) / _f(seconds_between_turns))


def held_tokens(sessions_per_s: ArrayLike, characteristic_time_s: ArrayLike, seconds_between_turns: ArrayLike,
                history_tokens: ArrayLike, final_tokens: ArrayLike) -> Array:
    r"""Tokens of idle KV an LRU cache of characteristic time :math:`T_C` holds (Little's law): each idle context
    that is read again stays :math:`\min(G, T_C)`, mean :math:`g p`; the final one stays :math:`T_C`.

    .. math:: N = \lambda [H g p + F T_C],  p = 1 - e^{-T_C / g}

    Parameters
    ----------
    sessions_per_s : lambda, sessions starting per second [session/s]
    characteristic_time_s : T_C [s]
    seconds_between_turns : g [s], > 0
    history_tokens : H, the idle contexts read again, token-weighted [token]
    final_tokens : F = T (u + o), the session's own context after its last turn [token]

    >>> round(float(held_tokens(0.1, 60.0, 60.0, 3600.0, 2400.0)), 3)  # 0.1 x (3,600 x 60 x 0.632121 + 2,400 x 60)
    28053.804
    """
    g, tc = _f(seconds_between_turns), _f(characteristic_time_s)
    return _f(sessions_per_s) * (_f(history_tokens) * g * hit_probability(tc, g) + _f(final_tokens) * tc)


def session_rate(hit: ArrayLike, work_s_all_hit: ArrayLike, work_s_all_miss: ArrayLike) -> Array:
    r"""Sessions a server completes per second at full load when a share ``p`` of the earlier context is found:
    the work of a session falls linearly from all-miss to all-hit.

    .. math:: \lambda(p) = 1 / (w_{hit} + (w_{miss} - w_{hit}) (1 - p))

    >>> float(session_rate(0.5, 1.0, 3.0))
    0.5
    """
    lo, hi = _f(work_s_all_hit), _f(work_s_all_miss)
    return 1.0 / (lo + (hi - lo) * (1.0 - _f(hit)))


def characteristic_time_s(capacity_tokens: ArrayLike, seconds_between_turns: ArrayLike, history_tokens: ArrayLike,
                          final_tokens: ArrayLike, work_s_all_hit: ArrayLike, work_s_all_miss: ArrayLike) -> Array:
    r"""Che's characteristic time of an LRU cache of ``capacity_tokens`` serving idle sessions.

    The root of

    .. math:: \lambda(p(T_C)) \, [H g \, p(T_C) + F T_C] = K,   p(T_C) = 1 - e^{-T_C / g}

    with :math:`\lambda` from :func:`session_rate` (a fixed rate ``r``: ``work_s_all_hit = work_s_all_miss = 1 / r``).
    The left side rises with :math:`T_C` from 0, so the root is unique; it lies below :math:`K / (\lambda_{min} F)`
    and is found over whole columns (every row at once) by false position with bisection steps (:func:`_illinois`), to a
    relative 1e-15.

    Special cases: ``K <= 0`` gives 0 (nothing held). ``F > 0`` always (a turn writes output).

    Parameters
    ----------
    capacity_tokens : K, the cache's capacity for sessions' own KV [token]
    seconds_between_turns : g [s], > 0
    history_tokens, final_tokens : H, F [token] (:func:`held_tokens`)
    work_s_all_hit, work_s_all_miss : a session's work on the server when every / no earlier context is found [s]

    References: Che, Tung, Wang (2002); Fricker, Robert, Roberts (2012).

    >>> tc = characteristic_time_s(28053.804, 60.0, 3600.0, 2400.0, 10.0, 10.0)  # the held_tokens example, inverted
    >>> round(float(tc), 4)
    60.0
    """
    k = _f(capacity_tokens)
    g, h, fin = _f(seconds_between_turns), _f(history_tokens), _f(final_tokens)
    w_hit, w_miss = _f(work_s_all_hit), _f(work_s_all_miss)
    shape = np.broadcast_shapes(k.shape, g.shape, h.shape, fin.shape, w_hit.shape, w_miss.shape)
    k, g, h, fin, w_hit, w_miss = (np.broadcast_to(a, shape).ravel() for a in (k, g, h, fin, w_hit, w_miss))
    root = np.zeros(k.shape)
    at = np.flatnonzero(k > 0)
    if at.size:
        root[at] = _illinois(k[at], g[at], h[at], fin[at], w_hit[at], w_miss[at])
    return root.reshape(shape)


def _illinois(k: Array, g: Array, h: Array, fin: Array, w_hit: Array, w_miss: Array) -> Array:
    """The root of :func:`characteristic_time_s`'s equation for rows with ``K > 0``: the Illinois variant of false
    position on the bracket [0, K max(w) / F] (the left side is -K at 0 and at least 0 at the top), each row left out
    once its bracket is within a relative 1e-15 or its point is exact. A point false position puts on or outside the
    bracket, and every fourth step, is the bisection's midpoint, so a bracket always shrinks. It takes about a
    third of plain bisection's time (200,000 random rows: 0.19 s against 0.51 s; issue #39's speed target).
    """
    def excess(t: Array, i: NDArray[np.intp]) -> Array:
        lam = session_rate(hit_probability(t, g[i]), w_hit[i], w_miss[i])
        return held_tokens(lam, t, g[i], h[i], fin[i]) - k[i]

    lo, hi = np.zeros(k.shape), k * np.maximum(w_hit, w_miss) / fin
    f_lo, f_hi = -k.copy(), excess(hi, np.arange(k.size))
    last = np.zeros(k.shape, dtype=np.int8)  # the end replaced last: -1 low, +1 high
    out = 0.5 * (lo + hi)
    live = np.arange(k.size)
    for step in range(_BISECTIONS):
        a, b, fa, fb = lo[live], hi[live], f_lo[live], f_hi[live]
        t = b - fb * (b - a) / (fb - fa)
        mid = 0.5 * (a + b)
        t = np.where((t > a) & (t < b) & (step % 4 != 3), t, mid)
        ft = excess(t, live)
        up = ft > 0  # the root is below t: t is the new high end
        hi[live] = np.where(up, t, b)
        f_hi[live] = np.where(up, ft, np.where(last[live] == -1, 0.5 * fb, fb))
        lo[live] = np.where(up, a, t)
        f_lo[live] = np.where(up, np.where(last[live] == 1, 0.5 * fa, fa), ft)
        last[live] = np.where(up, 1, -1)
        exact = ft == 0
        out[live] = np.where(exact, t, 0.5 * (lo[live] + hi[live]))
        done = exact | (hi[live] - lo[live] <= 1e-15 * hi[live])
        live = live[~done]
        if not live.size:
            break
    return out


def tier_used(read_gb_per_s: ArrayLike, kv_bytes_per_token: ArrayLike,
              prefill_tokens_per_s: ArrayLike) -> NDArray[np.bool_]:
    r"""Whether a tier is worth reading: its tokens load at least as fast as they are prefilled again.

    .. math:: B \cdot 10^9 / b \ge P

    A prefill rate that is not known (NaN: the decode figure includes prefill) leaves every tier in use.

    Parameters
    ----------
    read_gb_per_s : B, the tier's read bandwidth into one system [GB/s]
    kv_bytes_per_token : b [byte/token]
    prefill_tokens_per_s : P, the same system's prefill rate [token/s]

    >>> tier_used(np.array([64.0, 1.0]), 327_680.0, 20_000.0).tolist()  # 195,313 and 3,052 token/s against 20,000
    [True, False]
    """
    load = _f(read_gb_per_s) * 1e9 / _f(kv_bytes_per_token)
    p = _f(prefill_tokens_per_s)
    return np.asarray(np.isnan(p) | (load >= p), dtype=bool)


def prefix_held(total_capacity_tokens: ArrayLike, prefix_tokens: ArrayLike) -> Array:
    r"""Whether the hierarchy holds the shared prefix (1) or not (0): it needs room for it, and some memory at all.

    .. math:: held = [\sum_k K_k \ge S \;\wedge\; \sum_k K_k > 0]

    >>> prefix_held(np.array([0.0, 999.0, 1000.0]), 1000.0).tolist()
    [0.0, 0.0, 1.0]
    """
    total = _f(total_capacity_tokens)
    return ((total >= _f(prefix_tokens)) & (total > 0)).astype(float)


def tier_shares(capacity_tokens: dict[Tier, Array], prefix_tokens: Array, seconds_between_turns: Array,
                history_tokens: Array, final_tokens: Array, work_s_all_hit: Array, work_s_all_miss: Array
                ) -> dict[str, Array]:
    r"""Where a session's earlier context and the shared prefix are found in an exclusive LRU hierarchy.

    ``capacity_tokens`` holds each tier's capacity [token] (0 for a tier not used, :func:`tier_used`). The prefix,
    always the most recent item, is held at the top of the stack when the whole hierarchy can hold it
    (:math:`\sum_k K_k \ge S`, and some memory at all); it is found in the first tier whose cumulative capacity
    holds it. The sessions' own KV shares what is left:
    :math:`K'_{1..k} = \max(0, \sum_{j \le k} K_j - S_{held})`. The session rate is solved with the whole hierarchy
    (:func:`characteristic_time_s` with the full-load :func:`session_rate`); each partial stack is solved at that
    rate (the stack property), and tier ``k``'s share is the difference of consecutive stacks.

    Returns a dict: ``prefix_held`` (0 or 1), ``characteristic_time_s``, ``hit`` (the whole hierarchy's p),
    ``sessions_per_s``, and per tier ``prefix_in_<tier>`` (0 or 1) and ``history_in_<tier>`` (share of H).

    >>> out = tier_shares({Tier.HBM: np.array([0.0]), Tier.HOST: np.array([1e12]), Tier.SSD: np.array([0.0]),
    ...                    Tier.REMOTE: np.array([0.0])}, np.array([1000.0]), np.array([60.0]), np.array([3600.0]),
    ...                   np.array([2400.0]), np.array([10.0]), np.array([10.0]))
    >>> float(out["prefix_in_host"][0]), float(out["history_in_host"][0]), float(out["history_in_hbm"][0])
    (1.0, 1.0, 0.0)
    """
    cumulative, total = [], np.zeros_like(prefix_tokens)
    for tier in TIERS:
        total = total + capacity_tokens[tier]
        cumulative.append(total)
    held = prefix_held(total, prefix_tokens)
    out: dict[str, Array] = {"prefix_held": held}
    stack = prefix_tokens * held
    tc = characteristic_time_s(np.maximum(0.0, total - stack), seconds_between_turns, history_tokens, final_tokens,
                               work_s_all_hit, work_s_all_miss)
    hit = hit_probability(tc, seconds_between_turns)
    rate = session_rate(hit, work_s_all_hit, work_s_all_miss)
    out.update(characteristic_time_s=tc, hit=hit, sessions_per_s=rate)
    fixed = 1.0 / rate
    below, prefix_found = np.zeros_like(hit), np.zeros_like(hit)
    for tier, cum in zip(TIERS, cumulative, strict=True):
        if tier is TIERS[-1]:
            p = hit
        else:
            p = hit_probability(characteristic_time_s(np.maximum(0.0, cum - stack), seconds_between_turns,
                                                      history_tokens, final_tokens, fixed, fixed),
                                seconds_between_turns)
            p = np.minimum(p, hit)  # the partial stack at the whole one's rate: never above the whole (rounding)
        p = np.maximum(p, below)
        out[f"history_in_{tier}"] = p - below
        below = p
        here = held * ((cum >= prefix_tokens) & (cum > 0)) * (1.0 - prefix_found)
        out[f"prefix_in_{tier}"] = here
        prefix_found = prefix_found + here
    return out


# --- formulas the engine evaluates and `explain` renders (economics.domain.formula): each written once ---
F = Formula
TURN_PAIRS = F("turn_pairs_per_session", "turn^2",
               "turns_per_session ** 2 * (1 + turns_per_session_cv ** 2) - turns_per_session",
               note="E[T (T - 1)] = E[T^2] - E[T], E[T^2] = mean^2 (1 + cv^2): exact for any spread of turns with "
                    "that mean and cv (0: every session the mean's length, T (T - 1))")
HISTORY = F("history_tokens_per_session", "token",
            "(input_tokens_per_turn + output_tokens_per_turn) * turn_pairs_per_session / 2",
            note="earlier turns' input and output, read again by each later turn: (u + o) E[T (T - 1)] / 2")
INPUT_PER_SESSION = F("input_tokens_per_session", "token",
                      "turns_per_session * (session_prefix_tokens + input_tokens_per_turn)"
                      " + history_tokens_per_session",
                      note="every turn's full context: sum over t of S + (t - 1)(u + o) + u, over the spread of T")
PREFIX_PER_SESSION = F("prefix_tokens_per_session", "token", "turns_per_session * session_prefix_tokens",
                       note="the shared prefix, read by every turn")
FINAL_CONTEXT = F("final_context_tokens", "token", "turns_per_session * (input_tokens_per_turn"
                  " + output_tokens_per_turn)", note="a session's own KV after its last turn: held until evicted")
OUTPUT_PER_SESSION = F("output_tokens_per_session", "token", "turns_per_session * output_tokens_per_turn")
MEAN_TURN_INPUT = F("input_tokens_per_request", "token", "input_tokens_per_session / turns_per_session",
                    note="workload=sessions: a turn is a request; its input is the session's mean turn context")
MEAN_TURN_OUTPUT = F("output_tokens_per_request", "token", "output_tokens_per_turn",
                     note="workload=sessions: a turn is a request")
TURNS_PER_S = F("demand_requests_per_s", "request/s",
                "demand_sessions_per_day * turns_per_session / SECONDS_PER_DAY",
                note="workload=sessions: every turn of every session is a request")
HIT_PROBABILITY = F("kv_history_hit", "-", "1 - exp(-kv_characteristic_time_s / seconds_between_turns)",
                    note="P(idle gap < T_C): the gap exponential with mean seconds_between_turns")
HELD = F("kv_held_tokens_per_system", "token",
         "kv_sessions_per_s_per_system * (history_tokens_per_session * seconds_between_turns * kv_history_hit"
         " + final_context_tokens * kv_characteristic_time_s)",
         note="Little's law: the idle KV an LRU cache of characteristic time T_C holds = its capacity (Che 2002)")
CACHED = F("cached_input_tokens_per_session", "token",
           "prefix_tokens_per_session * kv_prefix_held + history_tokens_per_session * kv_history_hit",
           note="the prefix where the hierarchy holds it; earlier turns where their KV survived the idle gap")
PREFILL = F("prefill_tokens_per_session", "token", "input_tokens_per_session - cached_input_tokens_per_session",
            note="recomputed: new input, and whatever context was not found in a tier")
HIT_RATE = F("kv_hit_rate", "-", "cached_input_tokens_per_session / input_tokens_per_session")
TIER_HIT_RATE = F("kv_hit_rate_tier", "-", "(prefix_tokens_per_session * kv_prefix_in_tier"
                  " + history_tokens_per_session * kv_history_in_tier) / input_tokens_per_session")
TIER_HIT_RATES: dict[Tier, Formula] = {
    t: TIER_HIT_RATE.bind(f"kv_hit_rate_{t}", kv_prefix_in_tier=f"kv_prefix_in_{t}",
                          kv_history_in_tier=f"kv_history_in_{t}") for t in TIERS}
"""The share of input tokens found in each tier: one definition bound to each tier's columns."""
SESSION_RATE = F("kv_sessions_per_s_per_system", "session/s",
                 "1 / (kv_session_work_s_all_hit + (kv_session_work_s_all_miss - kv_session_work_s_all_hit)"
                 " * (1 - kv_history_hit))", note="a system at full load: sessions it completes at this hit rate")
WORK_ALL_MISS = F("kv_session_work_s_all_miss", "s",
                  "(input_tokens_per_session - prefix_tokens_per_session * kv_prefix_held)"
                  " / (input_tokens_per_s_per_accelerator * accelerators_per_system)"
                  " + output_tokens_per_session / (output_tokens_per_s_per_accelerator * accelerators_per_system)",
                  note="one system's time for a session whose earlier context is never found")
WORK_ALL_HIT = F("kv_session_work_s_all_hit", "s",
                 "(input_tokens_per_session - prefix_tokens_per_session * kv_prefix_held"
                 " - history_tokens_per_session) / (input_tokens_per_s_per_accelerator * accelerators_per_system)"
                 " + output_tokens_per_session / (output_tokens_per_s_per_accelerator * accelerators_per_system)",
                 note="one system's time for a session whose earlier context is always found")
WORK_FOLDED = F("kv_session_work_s_all_miss", "s",
                "output_tokens_per_session / (output_tokens_per_s_per_accelerator * accelerators_per_system)",
                note="no prefill throughput given: the output figure includes prefill, hits or not")
WORK_FOLDED_HIT = WORK_FOLDED.bind("kv_session_work_s_all_hit")
RUNNING_BATCH = F("kv_running_batch_gb_per_system", "GB",
                  "output_tokens_per_s_per_accelerator * accelerators_per_system / kv_per_user_speed"
                  " * (input_tokens_per_request + output_tokens_per_turn) * kv_bytes_per_token / BYTES_PER_GB",
                  note="the sequences decoding at full load (throughput / per-user speed), each at a mean turn's "
                       "context and its answer")
HBM_FREE = F("kv_hbm_free_gb_per_system", "GB",
             "max(0, accelerators_per_system * accelerator_memory_gb * memory_utilization"
             " - model_weights_gb * accelerators_per_system / kv_replica_accelerators"
             " - kv_running_batch_gb_per_system)",
             note="HBM left after the weights and the running batch: the top tier for idle sessions")
HBM_NONE = F("kv_hbm_free_gb_per_system", "GB", "0",
             note="no per-user speed (target or estimate) to size the running batch, or no HBM figure: none counted")
REMOTE_SHARE = F("kv_remote_gb_per_system", "GB", "kv_remote_gb / kv_remote_systems",
                 note="the remote store shared evenly by the fleet's systems")
NO_REMOTE_SHARE = F("kv_remote_gb_per_system", "GB", "0", note="no remote store")
TIER_TOKENS = F("kv_tier_tokens_per_system", "token", "kv_tier_gb_per_system * BYTES_PER_GB / kv_bytes_per_token")
TIER_GB = {Tier.HBM: "kv_hbm_free_gb_per_system", Tier.HOST: "kv_host_memory_gb_per_system",
           Tier.SSD: "kv_ssd_gb_per_system", Tier.REMOTE: "kv_remote_gb_per_system"}
"""The column holding each tier's capacity per system [GB]."""
TIERS_TOKENS: dict[Tier, Formula] = {
    t: TIER_TOKENS.bind(f"kv_{t}_tokens_per_system", kv_tier_gb_per_system=TIER_GB[t]) for t in TIERS}
LOAD_RATE = F("kv_tier_load_tokens_per_s", "token/s", "kv_tier_read_gb_per_s * BYTES_PER_GB / kv_bytes_per_token",
              note="a tier worth reading loads its tokens at least as fast as the system prefills them")
TIER_READ = {Tier.HOST: "kv_host_read_gb_per_s", Tier.SSD: "kv_ssd_read_gb_per_s",
             Tier.REMOTE: "kv_remote_read_gb_per_s"}
"""The column holding each lower tier's read bandwidth into one system [GB/s]."""
LOAD_RATES: dict[Tier, Formula] = {
    t: LOAD_RATE.bind(f"kv_{t}_load_tokens_per_s", kv_tier_read_gb_per_s=col) for t, col in TIER_READ.items()}
PREFILL_RATE = F("kv_prefill_tokens_per_s_per_system", "token/s",
                 "input_tokens_per_s_per_accelerator * accelerators_per_system")
HOST_CAPEX = F("kv_host_capex_usd_per_system", "USD", "kv_host_memory_gb_per_system * kv_host_memory_usd_per_gb",
               note="the host tier's DRAM bought for one system")
SSD_CAPEX = F("kv_ssd_capex_usd_per_system", "USD", "kv_ssd_gb_per_system * kv_ssd_usd_per_gb",
              note="the SSD tier bought for one system")
HOST_COST = F("kv_host_usd_per_hour", "USD/h", "systems * kv_host_capex_usd_per_system * kv_crf / HOURS_PER_YEAR",
              note="the host tier's DRAM, amortised like the hardware")
SSD_COST = F("kv_ssd_usd_per_hour", "USD/h", "systems * kv_ssd_capex_usd_per_system * kv_crf / HOURS_PER_YEAR",
             note="the SSD tier, amortised like the hardware")
REMOTE_COST = F("kv_remote_usd_per_hour", "USD/h",
                "kv_remote_gb * kv_remote_usd_per_gb_month * MONTHS_PER_YEAR / HOURS_PER_YEAR")
TIERS_COST = F("kv_tiers_usd_per_hour", "USD/h", "kv_host_usd_per_hour + kv_ssd_usd_per_hour + kv_remote_usd_per_hour")
NO_TIERS_COST = F("kv_tiers_usd_per_hour", "USD/h", "0", note="a request row: no KV tiers")
SESSIONS_SERVED = F("sessions_served_per_day", "session/day",
                    "served_output_tokens_per_day / output_tokens_per_session")
COST_PER_SESSION = F("cost_usd_per_session", "USD/session", "cost_usd_per_day / sessions_served_per_day")
HIT_RATE_USED = F("prefix_cache_hit_rate", "-", "kv_hit_rate",
                  note="workload=sessions: the computed hit rate in place of the input")
KV_CRF = finance.CRF.bind("kv_crf")
KV_CRF_STRAIGHT_LINE = finance.CRF_STRAIGHT_LINE.bind("kv_crf")
WITH_TIERS: dict[Formula, Formula] = {
    f: F(f.name, f.unit, f.expression + " + kv_tiers_usd_per_hour",
         note=(f.note + "; " if f.note else "") + "with the KV tiers' line")
    for f in (revenue.COST_OWNED, revenue.COST_RENTED, revenue.COST_OWNED_CARBON, revenue.COST_RENTED_CARBON)}
"""The fleet's hourly cost of a session row: each variant of the request rows' with the KV tiers added."""

# --- speed across a session (issue #39, item 3): per turn, the decode step at the turn's context and its TTFT ---
LAST_TURN_CONTEXT = F(
    "last_turn_context_tokens", "token", "session_prefix_tokens + (turns_per_session - 1)"
    " * (input_tokens_per_turn + output_tokens_per_turn) + input_tokens_per_turn",
    note="C_T: the last turn reads the longest context")
SLOWEST_CONTEXT = "_" + LAST_TURN_CONTEXT.name
"""The engine's resolved column holding a session row's last turn context C_T (NaN on request rows; set by
:func:`economics.engine.sessions.request_shape` before the throughput is resolved): the roofline's batch search
holds that turn, the slowest, to the per-user target (:meth:`economics.engine.roofline.Roofline.slowest_user_step`)."""
LAST_TURN_HISTORY = F("last_turn_history_tokens", "token",
                      "(turns_per_session - 1) * (input_tokens_per_turn + output_tokens_per_turn)",
                      note="earlier turns' input and output the last turn reads again")
MEAN_TURN_HISTORY = F("mean_turn_history_tokens", "token", "history_tokens_per_session / turns_per_session",
                      note="the turns' mean: TTFT is linear in it, so the mean turn's TTFT is the turns' mean")
TURN_STEP = F("turn_decode_step_s", "s",
              "1 / kv_per_user_speed + output_tokens_per_s_per_accelerator / kv_per_user_speed * kv_bytes_per_token"
              " * (turn_context_tokens - input_tokens_per_request)"
              " / (accelerator_bandwidth_tb_per_s * BYTES_PER_TB * kv_bandwidth_utilization)",
              note="the mean turn's step, plus the KV bytes its running batch (throughput / per-user speed "
                   "sequences per accelerator) reads more at this turn's context, at the KV read bandwidth")
LAST_TURN_STEP = TURN_STEP.bind("last_turn_decode_step_s", turn_context_tokens="last_turn_context_tokens")
TURN_CURVE_STEP = capacity.CONTEXT_STEP.bind("turn_decode_step_s", context_tokens="turn_context_tokens")
"""A turn's step on a measured speed-against-context curve (long_context_*): the curve read at the turn's context."""
LAST_TURN_CURVE_STEP = TURN_CURVE_STEP.bind("last_turn_decode_step_s", turn_context_tokens="last_turn_context_tokens")
MIN_SPEED = F("min_output_tokens_per_s_per_user", "token/s", "1 / last_turn_decode_step_s",
              note="the slowest turn, the last: its context is the longest")
REPLICA_PREFILL = F("replica_prefill_tokens_per_s", "token/s",
                    "input_tokens_per_s_per_accelerator * accelerators_per_replica",
                    note="one replica prefills one turn's prompt")
TIER_LOAD = F("kv_tier_load_s", "s", "(session_prefix_tokens * kv_prefix_in_tier + turn_history_tokens"
              " * kv_history_in_tier) / kv_tier_load_tokens_per_s",
              note="the context found in this tier, loaded at its read bandwidth")
TURN_TTFT = F("turn_ttft_s", "s",
              "prefill_wait_s + (input_tokens_per_turn + session_prefix_tokens * (1 - kv_prefix_held)"
              " + turn_history_tokens * (1 - kv_history_hit)) / replica_prefill_tokens_per_s + kv_host_load_s"
              " + kv_ssd_load_s + kv_remote_load_s",
              note="the wait for a prefill slot at ttft_percentile; the new input and the context not found, "
                   "prefilled; the context found below HBM, loaded (HBM: in place)")
PREFILL_SERVERS = F("prefill_replicas", "replica", "max(1, floor(accelerators / accelerators_per_replica))",
                    note="the prefill slots a turn waits for: each replica prefills one prompt at a time")
PREFILL_SERVICE = F("prefill_service_s", "s",
                    "(input_tokens_per_turn + session_prefix_tokens * (1 - kv_prefix_held) + mean_turn_history_tokens"
                    " * (1 - kv_history_hit)) / replica_prefill_tokens_per_s",
                    note="a slot's mean service time: the mean turn's prefill on one replica (prefill is linear in "
                         "the turn, so the turns' mean is the mean turn's)")
PREFILL_LOAD = F("prefill_utilization", "-", "slo_load_fraction * capacity_requests_per_s_per_accelerator"
                 " * accelerators * prefill_service_s / prefill_replicas",
                 note="the share of time the prefill slots are busy at the load agents are counted at: full load x "
                      "slo_load_fraction, turns arriving at random (Poisson)")
SERVICE_CV2 = 1.0
"""Squared coefficient of variation of a turn's prefill time in the queue: 1 (exponential), the planner's default
(``prefill_service_cv2``): turns of one session differ by the context each must prefill."""


def _turn_bound(turn: str, history: str) -> tuple[dict[Tier, Formula], Formula]:
    """The tiers' load times and the TTFT of one turn (``turn``: last or mean), bound to its history column."""
    loads = {t: TIER_LOAD.bind(f"{turn}_turn_{t}_load_s", turn_history_tokens=history,
                               kv_prefix_in_tier=f"kv_prefix_in_{t}", kv_history_in_tier=f"kv_history_in_{t}",
                               kv_tier_load_tokens_per_s=f"kv_{t}_load_tokens_per_s") for t in TIERS[1:]}
    name = "ttft_last_turn_s" if turn == "last" else "ttft_mean_turn_s"
    ttft = TURN_TTFT.bind(name, turn_history_tokens=history,
                          **{f"kv_{t}_load_s": f"{turn}_turn_{t}_load_s" for t in TIERS[1:]})
    return loads, ttft


LAST_TURN_LOADS, LAST_TURN_TTFT = _turn_bound("last", "last_turn_history_tokens")
MEAN_TURN_LOADS, MEAN_TURN_TTFT = _turn_bound("mean", "mean_turn_history_tokens")
NO_TIER_LOAD = F("kv_tier_load_s", "s", "0", note="no capacity in this tier: nothing to load from it")
NO_LOADS: dict[str, Formula] = {f.name: NO_TIER_LOAD.bind(f.name) for f in (*LAST_TURN_LOADS.values(),
                                                                            *MEAN_TURN_LOADS.values())}
"""Each turn's and tier's zero load time (by the load time's column)."""

# --- what an operator reads (item 4): cost by stream, the input:output ratio, agents held at an SLO ---
INPUT_OUTPUT_RATIO = F("input_output_ratio", "-", "input_tokens_per_session / output_tokens_per_session")
DEVICE_COST = F("device_cost_usd_per_day", "USD/day", "cost_usd_per_day - kv_tiers_usd_per_hour * HOURS_PER_DAY",
                note="the fleet's cost without the KV tiers: what the device-time shares split")
COST_PER_M_FRESH = F("cost_usd_per_m_fresh_input_tokens", "USD/M token",
                     "device_cost_usd_per_day * input_time_share / (served_input_tokens_per_day"
                     " - served_cached_input_tokens_per_day) * TOKENS_PER_M",
                     note="prefill's share of the device time, over the input tokens prefilled")
COST_PER_M_CACHED = F("cost_usd_per_m_cached_input_tokens", "USD/M token",
                      "kv_tiers_usd_per_hour * HOURS_PER_DAY / served_cached_input_tokens_per_day * TOKENS_PER_M",
                      note="a hit takes no device time (its load is in TTFT): cached tokens carry the tiers' cost")
COST_PER_M_IN = F("cost_usd_per_m_input_tokens", "USD/M token",
                  "(device_cost_usd_per_day * input_time_share + kv_tiers_usd_per_hour * HOURS_PER_DAY)"
                  " / served_input_tokens_per_day * TOKENS_PER_M", note="workload=sessions: fresh and cached input")
COST_PER_M_OUT = F("cost_usd_per_m_output_tokens", "USD/M token",
                   "device_cost_usd_per_day * output_time_share / served_output_tokens_per_day * TOKENS_PER_M",
                   note="workload=sessions: decode's share of the device time (the KV tiers are the cached input's)")
SESSION_DURATION = F("session_duration_s", "s", "turns_per_session * (ttft_mean_turn_s + output_tokens_per_turn"
                     " / kv_per_user_speed + seconds_between_turns)",
                     note="per turn: the mean TTFT, the answer at the mean turn's speed (the step is linear in the "
                          "context, so the turns' mean step is the mean context's) and the idle gap")
AGENTS_PER_ACCELERATOR = F("agents_per_accelerator", "session/accelerator",
                           "capacity_requests_per_s_per_accelerator * slo_load_fraction / turns_per_session"
                           " * session_duration_s",
                           note="Little's law: sessions an accelerator completes per second at full load, times the "
                                "share of it at which every turn's TTFT holds, x a session's duration; counted only "
                                "where the SLO holds")
AGENTS = F("agents_at_slo", "session", "agents_per_accelerator * accelerators",
           note="concurrent sessions the fleet holds at full load with every turn within the SLO")
AGENTS_PER_MW = F("agents_per_mw", "session/MW", "agents_at_slo / (facility_power_kw / KW_PER_MW)")
AGENTS_PER_USD_PER_HOUR = F("agents_per_usd_per_hour", "session/(USD/h)", "agents_at_slo / cost_usd_per_hour")
AGENTS_PER_RACK = F("agents_per_rack", "session/rack", "agents_at_slo / racks")
