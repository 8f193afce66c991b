"""The engine's entry point: quantise Q and K per block and run the int8
attention, causal or not. Must not launch kernels itself."""

from .attention import int8_attention, int8_attention_causal
from .quant import quantize_qk


# portq: ports sageattention:sageattention/core.py::attention
# portq: not-carried sageattention:sageattention/core.py::attention[smooth_k] -- the engine's keys are quantised as they come; no mean subtraction
# portq: not-carried sageattention:sageattention/attn_qk_int8_per_block_hd128.py::forward -- head dimension 64 only
# portq: not-carried sageattention:sageattention/attn_qk_int8_per_block_hd128_causal.py::forward -- head dimension 64 only
def int8_sdpa(q, k, v, is_causal=False):
    """Attention of (B, H, L, 64) fp16 q, k, v through int8 Q·K."""
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    q_codes, q_scale, k_codes, k_scale = quantize_qk(q, k)
    if is_causal:
        return int8_attention_causal(q_codes, k_codes, v, q_scale, k_scale)
    return int8_attention(q_codes, k_codes, v, q_scale, k_scale)
