"""The engine's entry point: quantise Q and K per block and run the int8
attention, causal or not. Must not launch kernels itself."""

from .attention import int8_attention, int8_attention_causal
from .quant import quantize_qk


# portq: ports sageattention:sageattention/core.py::attention
# portq: ports sageattention:sageattention/core.py::sageattn_qk_int8_pv_fp16_triton
# portq: not-carried sageattention:sageattention/core.py::attention[return_lse] -- the engine never asks for the log-sum-exp
# portq: not-carried sageattention:sageattention/core.py::attention[smooth_k] -- the engine's keys are quantised as they come; no mean subtraction
# portq: not-carried sageattention:sageattention/attn_qk_int8_per_block_hd128.py::forward -- head dimension 64 only
# portq: not-carried sageattention:sageattention/attn_qk_int8_per_block_hd128_causal.py::forward -- head dimension 64 only
# portq: not-carried sageattention:sageattention/core.py::sageattn_varlen -- the engine pads its batches; no packed variable-length path
# portq: not-carried sageattention:sageattention/core.py::sageattn_qk_int8_pv_fp16_cuda -- CUDA backend; the engine runs the Triton path on every GPU
# portq: not-carried sageattention:sageattention/core.py::sageattn_qk_int8_pv_fp8_cuda -- CUDA backend; the engine runs the Triton path on every GPU
# portq: not-carried sageattention:sageattention/core.py::sageattn_qk_int8_pv_fp8_cuda_sm90 -- CUDA backend; the engine runs the Triton path on every GPU
# portq: not-carried sageattention:sageattention/core.py::get_cuda_arch_versions -- no per-architecture dispatch: one backend
# portq: not-carried sageattention:sageattention/core.py::get_cuda_version -- no per-architecture dispatch: one backend
def int8_sdpa(q, k, v, is_causal=False):
    """Attention of (B, H, L, 64) fp16 q, k, v through int8 Q·K."""
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    q_codes, q_scale, k_codes, k_scale = quantize_qk(q, k)
    if is_causal:
        return int8_attention_causal(q_codes, k_codes, v, q_scale, k_scale)
    return int8_attention(q_codes, k_codes, v, q_scale, k_scale)
