"""Model architecture arithmetic: KV-cache bytes per token from the published configuration.

Pure functions over floats or arrays. Figures in data/models.csv are the configs' own numbers; everything derived
(here, KV bytes per token) is computed, never typed in.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray


def kv_cache_bytes_per_token_gqa(
    full_attention_layers: ArrayLike, kv_heads: ArrayLike, head_dim: ArrayLike, bytes_per_value: ArrayLike = 2.0
) -> NDArray[np.float64]:
    r"""KV cache of one token for multi-head / grouped-query attention (keys and values in every layer).

    .. math:: b_{KV} = 2 \cdot L \cdot H_{KV} \cdot d_{head} \cdot b

    Parameters
    ----------
    full_attention_layers : L, layers that keep the whole context [-] (sliding-window layers keep a bounded window
        and are not counted per token of context)
    kv_heads : H_KV, key/value heads per layer [-] (= query heads for MHA)
    head_dim : d_head [-]
    bytes_per_value : b, 2 for BF16/FP16, 1 for FP8 [byte]

    Returns bytes per token [byte/token].

    References: Ainslie et al., "GQA", EMNLP 2023; Llama 3 paper (Dubey et al. 2024), Table 3.

    >>> float(kv_cache_bytes_per_token_gqa(80, 8, 128))   # Llama 3.1 70B, BF16
    327680.0
    """
    return 2.0 * np.asarray(full_attention_layers, dtype=float) * np.asarray(kv_heads, dtype=float) * np.asarray(
        head_dim, dtype=float) * np.asarray(bytes_per_value, dtype=float)


def kv_cache_bytes_per_token_mla(
    layers: ArrayLike, kv_lora_rank: ArrayLike, qk_rope_head_dim: ArrayLike, bytes_per_value: ArrayLike = 2.0
) -> NDArray[np.float64]:
    r"""KV cache of one token for multi-head latent attention: one compressed latent plus the RoPE key per layer.

    .. math:: b_{KV} = L \cdot (d_c + d_{rope}) \cdot b

    References: DeepSeek-V2 paper (arXiv:2405.04434), section 2.1; DeepSeek-V3 config (d_c = 512, d_rope = 64).

    >>> float(kv_cache_bytes_per_token_mla(61, 512, 64))   # DeepSeek-V3, BF16
    70272.0
    """
    return np.asarray(layers, dtype=float) * (np.asarray(kv_lora_rank, dtype=float) + np.asarray(
        qk_rope_head_dim, dtype=float)) * np.asarray(bytes_per_value, dtype=float)
