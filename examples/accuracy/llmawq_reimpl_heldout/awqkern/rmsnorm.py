"""RMSNorm (T5-style layer norm: no mean, no bias) over the last dimension,
one program per row; fp32 statistics, half outputs clamped to the finite
fp16 range."""

import torch
import triton
import triton.language as tl
from torch import nn

HALF_MAX = tl.constexpr(65504.0)  # a compiled kernel reads only constexpr globals


# portq: ports llmawq:awq/kernels/csrc/layernorm/layernorm.cu::generalT5LayerNorm @5f377ef
# portq: ports llmawq:awq/kernels/csrc/layernorm/reduction.cuh::blockReduceSum @5f377ef
# portq: ports llmawq:awq/kernels/csrc/layernorm/reduction.cuh::warpReduceSum @5f377ef
# portq: ports llmawq:awq/kernels/csrc/layernorm/reduction.cuh::clamp_inf_for_half @5f377ef
@triton.jit
def _rms_norm_kernel(src, gamma, dst, eps, width, CLAMP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * width
    sq = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, width, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(src + base + cols, mask=cols < width, other=0.0).to(tl.float32)
        sq += v * v
    inv = 1.0 / tl.sqrt(tl.sum(sq, axis=0) / width + eps)
    for start in range(0, width, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        keep = cols < width
        v = tl.load(src + base + cols, mask=keep, other=0.0).to(tl.float32)
        g = tl.load(gamma + cols, mask=keep, other=0.0).to(tl.float32)
        y = v * inv * g
        if CLAMP:
            y = tl.minimum(tl.maximum(y, -HALF_MAX), HALF_MAX)
        tl.store(dst + base + cols, y.to(dst.dtype.element_ty), mask=keep)


# portq: ports llmawq:awq/kernels/csrc/layernorm/layernorm.cu::layernorm_forward_cuda @5f377ef
# portq: ports llmawq:awq/kernels/csrc/layernorm/layernorm.cu::invokeGeneralT5LayerNorm @5f377ef
def rms_norm(x, weight, out, eps):
    """x (B, N, C) fp16 -> out (same shape), written in place."""
    rows = x.shape[0] * x.shape[1]
    width = x.shape[2]
    block = min(triton.next_power_of_2(width), 1024)
    _rms_norm_kernel[(rows,)](x, weight, out, eps, width, CLAMP=x.dtype == torch.float16, BLOCK=block)


# portq: ports llmawq:tinychat/modules/fused_norm.py::FTLlamaRMSNorm @5f377ef
# portq: not-carried llmawq:tinychat/modules/fused_norm.py::make_quant_norm -- the engine builds its own layers; no model patching
class FusedRMSNorm(nn.Module):
    def __init__(self, weight, eps=1e-6):
        super().__init__()
        self.weight = weight
        self.variance_epsilon = eps

    def forward(self, x):
        out = torch.empty_like(x)
        rms_norm(x, self.weight, out, self.variance_epsilon)
        return out
