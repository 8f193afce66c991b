"""The engine's attention calls on the vendored SageAttention modules: the
prefill goes through upstream's entry point (K smoothed), the cross-attention
of precomputed keys quantises once and calls the non-causal kernel of its
head dimension directly. Owns no kernels; the vendored modules are
upstream's, unmodified."""

import sageattention.attn_qk_int8_per_block_hd128 as wide
from sageattention import attn_qk_int8_per_block_h64
from sageattention.core import attention as sage_attention
from sageattention.quant_per_block import per_block_int8


def prefill(q, k, v):
    """Causal attention of fp16 (B, H, L, D) tensors, D in {64, 128}."""
    return sage_attention(q, k.clone(), v, is_causal=True)


def cross_attention(q, k, v):
    """Non-causal attention without K smoothing (the keys are reused)."""
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    q_int8, q_scale, k_int8, k_scale = per_block_int8(q, k)
    if q.size(-1) == 64:
        return attn_qk_int8_per_block_h64.forward(q_int8, k_int8, v, q_scale, k_scale)
    return wide.forward(q_int8, k_int8, v, q_scale, k_scale)
