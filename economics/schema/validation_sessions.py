"""Validation of the agent-session fields (``workload=sessions``) against the request fields they replace.

A session row takes its request shape, prefix cache hit rate and demand from the session (docs/model.md,
"Sessions"), so a session row that also sets those is refused, naming the field, rather than one silently
overriding the other; a request row that sets a session field or a KV tier is refused the same way. A session needs
its shape, a model (its KV bytes per token size the cache) and, for each KV tier with capacity, that tier's read
bandwidth and price.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from economics.schema.scenario import FIELDS, Workload

SESSION_SHAPE = ("turns_per_session", "session_prefix_tokens", "input_tokens_per_turn", "output_tokens_per_turn",
                 "seconds_between_turns")
"""The fields a session row must give."""
TIERS = (("kv_host_memory_gb_per_system", ("kv_host_read_gb_per_s", "kv_host_memory_usd_per_gb")),
         ("kv_ssd_gb_per_system", ("kv_ssd_read_gb_per_s", "kv_ssd_usd_per_gb")),
         ("kv_remote_gb", ("kv_remote_read_gb_per_s", "kv_remote_usd_per_gb_month")))
"""Each tier's capacity and the figures a tier with capacity needs."""
SESSION_ONLY = (*SESSION_SHAPE, "demand_sessions_per_day", "ttft_target_s", *(f for _, need in TIERS for f in need))
"""Fields that mean nothing on a request row (empty unless workload=sessions)."""
SESSION_SPREAD = ("turns_per_session_cv",)
"""Session fields whose default is 0 rather than empty: above 0 on a request row, refused like a KV tier."""
SESSION_DEFAULTED = ("ttft_percentile",)
"""Session fields with a default of their own: changed from it on a request row, refused (it would do nothing)."""
REQUEST_DEMAND = ("demand_input_tokens_per_day", "demand_output_tokens_per_day", "demand_requests_per_s")
REQUEST_SHAPE = ("input_tokens_per_request", "output_tokens_per_request", "prefix_cache_hit_rate")
"""The request fields a session sets itself: left at their defaults on a session row."""


class Problems(Protocol):
    """What :class:`economics.schema.validation._Problems` offers this module."""

    def add(self, mask: np.ndarray, field: str, values: Any, message: Any) -> None: ...  # noqa: D102

    def flagged(self, *fields: str) -> np.ndarray: ...  # noqa: D102


def check(c: dict[str, np.ndarray], problems: Problems) -> None:
    """Report every session field that is missing, or given where it does not apply (rows of ``c``)."""
    sessions = np.asarray(c["workload"] == Workload.SESSIONS.value, dtype=bool)
    requests = ~sessions
    for field in SESSION_ONLY:
        problems.add(requests & ~np.isnan(c[field]) & ~problems.flagged(field), field, c[field],
                     f"{field}: applies to workload=sessions only; set workload=sessions or leave it empty")
    for capacity, _ in TIERS:
        problems.add(requests & (c[capacity] > 0), capacity, c[capacity],
                     f"{capacity}: a KV tier applies to workload=sessions only; set workload=sessions or 0")
    for field in SESSION_SPREAD:
        problems.add(requests & (c[field] > 0) & ~problems.flagged(field), field, c[field],
                     f"{field}: applies to workload=sessions only; set workload=sessions or 0")
    for field in SESSION_DEFAULTED:
        problems.add(requests & (c[field] != float(FIELDS[field].default)) & ~problems.flagged(field), field,
                     c[field], f"{field}: applies to workload=sessions only; set workload=sessions or leave it at "
                               f"its default {FIELDS[field].default}")
    if not sessions.any():
        return
    for field in SESSION_SHAPE:
        problems.add(sessions & np.isnan(c[field]) & ~problems.flagged(field), field, "",
                     f"{field}: needed when workload=sessions")
    problems.add(sessions & (c["decode_accelerator"] != "") & ~problems.flagged("decode_accelerator"),
                 "decode_accelerator", c["decode_accelerator"], "decode_accelerator: workload=sessions is computed "
                 "for aggregated serving only so far (which pool holds a session's KV between turns is not modelled); "
                 "leave it empty")
    problems.add(sessions & (c["model"] == "") & ~problems.flagged("model"), "model", "",
                 "model: needed when workload=sessions (its KV bytes per token size the cache)")
    for field in REQUEST_DEMAND:
        problems.add(sessions & ~np.isnan(c[field]) & ~problems.flagged(field), field, c[field],
                     f"{field}: with workload=sessions the demand is demand_sessions_per_day; leave it empty")
    for field in REQUEST_SHAPE:
        default = float(FIELDS[field].default)
        problems.add(sessions & (c[field] != default) & ~problems.flagged(field), field, c[field],
                     f"{field}: with workload=sessions it follows from the session (its turns, the computed KV hit "
                     f"rate); leave it at its default ({default:g})")
    for capacity, needs in TIERS:
        for field in needs:
            problems.add(sessions & (c[capacity] > 0) & np.isnan(c[field]) & ~problems.flagged(field, capacity),
                         field, "", f"{field}: needed with {capacity} above 0")
    problems.add(sessions & np.isnan(c["demand_sessions_per_day"]) & np.isnan(c["accelerator_count"])
                 & ~problems.flagged("demand_sessions_per_day", "accelerator_count"), "accelerator_count", "",
                 "accelerator_count: give a fixed fleet (accelerator_count) or demand_sessions_per_day to size it "
                 "from")
