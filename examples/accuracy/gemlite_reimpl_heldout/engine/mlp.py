"""A gated MLP whose three projections are low-bit linears: asymmetric
per-group quantisation of fp16 weights to n-bit codes, packed by the
layer; decoding (one row) reaches the GEMV, prefill the GEMM."""

import torch

from lowbit import DType, LowBitLinear


def quantize_linear(weight, nbits, group_size, dtype=DType.FP16):
    """(out, in) float weight -> a packed LowBitLinear (codes, scales, zeros per group)."""
    out_f, in_f = weight.shape
    w = weight.float().reshape(out_f, in_f // group_size, group_size)
    lo, hi = w.amin(-1, keepdim=True), w.amax(-1, keepdim=True)
    scale = ((hi - lo) / (2**nbits - 1)).clamp(min=1e-6)
    zero = torch.round(-lo / scale)
    codes = torch.clamp(torch.round(w / scale) + zero, 0, 2**nbits - 1).to(torch.uint8).reshape(out_f, in_f)
    half = torch.float16 if dtype == DType.FP16 else torch.bfloat16
    layer = LowBitLinear(nbits, group_size, in_f, out_f, input_dtype=dtype, output_dtype=dtype)
    return layer.pack(codes, scale.reshape(out_f, -1).to(half), zero.reshape(out_f, -1).to(half))


class QuantMLP(torch.nn.Module):
    def __init__(self, gate, up, down, nbits=4, group_size=64):
        super().__init__()
        self.gate = quantize_linear(gate, nbits, group_size)
        self.up = quantize_linear(up, nbits, group_size)
        self.down = quantize_linear(down, nbits, group_size)

    def forward(self, x):
        h = torch.nn.functional.silu(self.gate(x).float()) * self.up(x).float()
        return self.down(h.to(x.dtype))
