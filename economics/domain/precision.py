"""Number formats: the bytes a weight or a KV-cache value takes at each precision, the weights' and the compute's
precision of a scenario (``precision`` is the shorthand for the two equal), and the KV cache's precision when a
scenario leaves it empty. The one table every step reads (the roofline, the engine's KV transfer, the planner's KV
link, the calibration), so one scenario has one KV size everywhere.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from economics.schema.scenario import split_precision

__all__ = ["BYTES_PER_VALUE", "KV_WHEN_EMPTY", "bytes_per_value", "kv_precision", "record_precision",
           "split_precision"]

MXFP4_BYTES = (32 * 4 + 8) / 32 / 8
"""MXFP4: blocks of 32 FP4 (E2M1) values sharing one 8-bit E8M0 scale, 4.25 bits a value (OCP Microscaling
Formats (MX) v1.0 specification, sections 5.1-5.2, https://www.opencompute.org/documents/ocp-microscaling-formats-
mx-v1-0-spec-final-pdf) [byte]."""

INT4_BYTES = (128 * 4 + 16) / 128 / 8
"""INT4 weight-only (GPTQ / AWQ, the group size 128 both papers evaluate): 4-bit values with one FP16 scale per group
of 128, 4.125 bits a value (Frantar et al., "GPTQ", ICLR 2023; Lin et al., "AWQ", MLSys 2024); an asymmetric
checkpoint's 4-bit zero points add 1/32 bit, not counted [byte]."""

BYTES_PER_VALUE: dict[str, float] = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "fp4": 0.5,
                                     "mxfp4": MXFP4_BYTES, "int4": INT4_BYTES}
"""Storage per weight or KV value at each precision [byte]; ``fp4`` is the shorthand precision's 0.5 byte as
before (its block scales not counted), ``mxfp4`` and ``int4`` count theirs."""

KV_WHEN_EMPTY: dict[str, str] = {"bf16": "bf16", "fp16": "fp16", "fp8": "fp8", "int8": "int8", "fp4": "fp8"}
"""The KV cache's precision when a scenario gives none: the compute precision's (which is ``precision``'s when the
scenario gives only that), except FP8 for FP4 (no serving engine measured in data/ keeps an FP4 KV cache; attention
runs at FP8 there too). Weight-only quantization leaves the KV cache at the activations' precision."""


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
    """The KV cache's precision of each row: the one given, else (``""``) :data:`KV_WHEN_EMPTY` of ``precision``
    (the compute precision: :func:`split_precision`).

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


def record_precision(precision: ArrayLike, weight_precision: ArrayLike | None = None,
                     compute_precision: ArrayLike | None = None,
                     kv_cache_precision: ArrayLike | None = None) -> NDArray[Any]:
    """The format a measured record (curve, claim) of each row's configuration is filed under, and a scenario is
    matched on: the one precision when the weights and the compute share it, else ``weights/compute``; then
    `` kv <precision>`` where the KV cache is given apart from what its compute implies (:func:`kv_precision`). A
    row of data/throughput_curves.csv and a scenario use the same columns, so they match on all three formats: a
    curve of BF16 weights and KV cache is never read for a scenario of BF16 weights with an FP8 KV cache.

    >>> record_precision(["bf16", "bf16", "bf16"], ["", "fp8", "mxfp4"], ["", "fp8", ""]).tolist()
    ['bf16', 'fp8', 'mxfp4/bf16']
    >>> record_precision(["bf16", "bf16", "fp4", "bf16"], ["", "", "", "int4"], None,
    ...                  ["fp8", "bf16", "fp8", ""]).tolist()
    ['bf16 kv fp8', 'bf16', 'fp4', 'int4/bf16']
    """
    w, k = split_precision(precision, weight_precision, compute_precision)
    key = np.where(w == k, w, w.astype(str) + "/" + k.astype(str)).astype(object)
    if kv_cache_precision is None:
        return key
    kv = np.asarray(kv_cache_precision, dtype=object)
    apart = (kv != "") & (kv != kv_precision(k, np.full(k.shape, "", dtype=object)))
    return np.where(apart, key.astype(str) + " kv " + kv.astype(str), key).astype(object)
