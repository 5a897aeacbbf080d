"""Number formats: the bytes a weight or a KV-cache value takes at each precision, and the KV cache's precision when
a scenario leaves it empty. The one table every step reads (the roofline, the engine's KV transfer, the planner's
KV link, the calibration), so one scenario has one KV size everywhere.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

BYTES_PER_VALUE: dict[str, float] = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "fp4": 0.5}
"""Storage per weight or KV value at each precision [byte]."""

KV_WHEN_EMPTY: dict[str, str] = {"bf16": "bf16", "fp16": "fp16", "fp8": "fp8", "int8": "int8", "fp4": "fp8"}
"""The KV cache's precision when a scenario gives none: the weights', except FP8 for FP4 weights (no serving engine
measured in data/ keeps an FP4 KV cache; attention runs at FP8 there too)."""


FEW_VALUES = 64
"""Up to this many values a plain loop is quicker than one vectorised pass per precision."""


def bytes_per_value(precisions: ArrayLike) -> NDArray[np.float64]:
    r"""Bytes per stored value of each precision; NaN for an unknown or empty one.

    .. math:: b = \text{BYTES\_PER\_VALUE}[p]  \quad [\text{byte}]

    >>> bytes_per_value(["bf16", "fp8", "fp4", ""]).tolist()
    [2.0, 1.0, 0.5, nan]
    """
    p = np.asarray(precisions, dtype=object)
    if p.size <= FEW_VALUES:
        return np.array([BYTES_PER_VALUE.get(x, np.nan) if isinstance(x, str) else np.nan for x in p.ravel()],
                        dtype=float).reshape(p.shape)
    return np.select([p == k for k in BYTES_PER_VALUE], list(BYTES_PER_VALUE.values()), np.nan).astype(float)


def kv_precision(precision: ArrayLike, kv_cache_precision: ArrayLike) -> NDArray[Any]:
    """The KV cache's precision of each row: the one given, else (``""``) :data:`KV_WHEN_EMPTY` of the weight
    precision.

    >>> kv_precision(["fp4", "fp4", "bf16"], ["", "fp4", ""]).tolist()
    ['fp8', 'fp4', 'bf16']
    """
    weights = np.asarray(precision, dtype=object)
    kv = np.asarray(kv_cache_precision, dtype=object)
    implied = weights
    for given, used in KV_WHEN_EMPTY.items():
        if given != used:
            implied = np.where(weights == given, used, implied)
    return np.where(kv == "", implied, kv)
