"""A GPTQ linear layer as the engine runs it: the fused kernel for short
batches (decode), dequantise-then-matmul for long ones (prefill). Owns no
kernels; it must not pack or quantise weights."""

import torch

import gptq_triton.dequant as dq
from gptq_triton import fused
from gptq_triton.fused import fused_qmatmul_inference as decode_matmul

# Rows above which dequantising once and calling the dense matmul wins.
PREFILL_ROWS = 32


class GPTQLinear:
    """Packed weight, scales, zeros and group map of one layer, with its bits."""

    def __init__(self, qweight, scales, qzeros, g_idx, bits: int, bias=None):
        self.qweight, self.scales, self.qzeros, self.g_idx = qweight, scales, qzeros, g_idx
        self.bits, self.bias = bits, bias
        self.maxq = (1 << bits) - 1

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, x.shape[-1])
        if flat.shape[0] > PREFILL_ROWS:
            out = dq.DequantLinearFn.apply(flat, self.qweight, self.scales, self.qzeros, self.g_idx,
                                           self.bits, self.maxq)
        elif x.dtype == torch.float16:
            out = decode_matmul(flat, self.qweight, self.scales, self.qzeros, self.g_idx, self.bits, self.maxq)
        else:
            out = fused.fused_qmatmul(flat, self.qweight, self.scales, self.qzeros, self.g_idx,
                                      self.bits, self.maxq)
        out = out.reshape(*x.shape[:-1], out.shape[-1])
        return out if self.bias is None else out + self.bias
