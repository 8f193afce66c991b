"""4-bit linear layers of the engine: NF4/FP4 blockwise quantisation of a
weight at load time, its dequantisation for prefill, and the 4-bit GEMV (with
an optional fused bias) for decode, through the engine_q4 torch ops of
csrc/bindings.cu."""

import torch

FP4, NF4 = 1, 2

NF4_LEVELS = (-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
              -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
              0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
              0.7229568362236023, 1.0)
FP4_LEVELS = tuple(s * v for s in (1.0, -1.0) for v in (0.0, 0.005208333333, 0.66666667, 1.0, 0.33333333, 0.5,
                                                        0.16666667, 0.25))


def levels(quant_kind, device):
    """The 16 fp32 levels the GEMV decodes through, indexed by code."""
    return torch.tensor(NF4_LEVELS if quant_kind == NF4 else FP4_LEVELS, dtype=torch.float32, device=device)


def quantize_weight(weight, blocksize=64, quant_kind=NF4):
    """weight (out_features, in_features) fp16/bf16 -> (packed uint8, absmax fp32)."""
    n = weight.numel()
    packed = torch.empty((n + 1) // 2, dtype=torch.uint8, device=weight.device)
    absmax = torch.empty((n + blocksize - 1) // blocksize, dtype=torch.float32, device=weight.device)
    torch.ops.engine_q4.quantize_blockwise_4bit(weight.contiguous(), packed, absmax, blocksize, quant_kind)
    return packed, absmax


def dequantize_weight(packed, absmax, shape, dtype=torch.float16, blocksize=64, quant_kind=NF4):
    out = torch.empty(shape, dtype=dtype, device=packed.device)
    torch.ops.engine_q4.dequantize_blockwise_4bit(packed, absmax, out, blocksize, quant_kind)
    return out


def linear(x, packed, absmax, shape, bias=None, blocksize=64, quant_kind=NF4):
    """x (..., in_features) -> x @ W.T + bias for the packed weight of shape (out_features, in_features):
    the GEMV for a single token, dequantise-and-matmul otherwise."""
    out_features, in_features = shape
    if x.numel() == in_features:
        out = torch.empty(x.shape[:-1] + (out_features,), dtype=x.dtype, device=x.device)
        torch.ops.engine_q4.gemv_4bit_inference(x.contiguous(), packed, absmax, levels(quant_kind, x.device), bias,
                                                out, out_features, in_features, blocksize)
        return out
    y = x @ dequantize_weight(packed, absmax, shape, x.dtype, blocksize, quant_kind).t()
    return y if bias is None else y + bias
