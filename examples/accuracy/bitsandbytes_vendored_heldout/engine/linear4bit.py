"""4-bit linear layers of the engine around the vendored bitsandbytes kernels:
NF4/FP4 quantisation of a weight at load time, the 8-bit dynamic absmax of
double-quantised checkpoints, dequantisation for prefill and the 4-bit GEMV
for decode, through the engine_bnb torch ops (csrc/bnb_ops.cu)."""

import torch

FP4, NF4 = 1, 2


def quantize_weight(weight, blocksize=64, quant_type=NF4):
    """weight (out_features, in_features) fp16/bf16 -> (packed uint8, absmax fp32)."""
    n = weight.numel()
    packed = torch.empty((n + 1) // 2, dtype=torch.uint8, device=weight.device)
    absmax = torch.empty((n + blocksize - 1) // blocksize, dtype=torch.float32, device=weight.device)
    torch.ops.engine_bnb.quantize_4bit(weight.contiguous(), packed, absmax, blocksize, quant_type)
    return packed, absmax


def unpack_absmax(codes, code, nested_absmax, offset, nested_blocksize=256):
    """Restores a double-quantised absmax: 8-bit dynamic codes times their own absmax, plus the mean offset."""
    out = torch.empty(codes.numel(), dtype=torch.float32, device=codes.device)
    torch.ops.engine_bnb.dequantize_absmax(codes, code, nested_absmax, out, nested_blocksize)
    return out + offset


def dequantize_weight(packed, absmax, shape, dtype=torch.float16, blocksize=64, quant_type=NF4):
    out = torch.empty(shape, dtype=dtype, device=packed.device)
    torch.ops.engine_bnb.dequantize_4bit(packed, absmax, out, blocksize, quant_type)
    return out


def linear(x, packed, absmax, code, shape, blocksize=64, quant_type=NF4):
    """x (..., in_features) -> x @ W.T for the packed weight of shape (out_features, in_features):
    the GEMV for a single token, dequantise-and-matmul otherwise."""
    out_features, in_features = shape
    if x.numel() == in_features:
        out = torch.empty(x.shape[:-1] + (out_features,), dtype=x.dtype, device=x.device)
        torch.ops.engine_bnb.gemv_4bit(x.contiguous(), packed, absmax, code, out, out_features, in_features, blocksize)
        return out
    return x @ dequantize_weight(packed, absmax, shape, x.dtype, blocksize, quant_type).t()
