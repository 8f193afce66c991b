"""Dequantise GPTQ-packed weights to fp16 in Triton, then multiply densely.

Weights are packed along the input dimension (32 // bits values per int32
row word), zero points along the output dimension, one scale and zero per
group and output column, and ``g_idx`` maps each input row to its group.
Forward only: it must not hold a backward or pick between kernels.

# portq: not-carried gptqmodel:gptqmodel/nn_modules/triton_utils/dequant.py::QuantLinearFunction.backward -- inference only, no gradient through the quantised weight
"""

import itertools

import torch
import triton
import triton.language as tl
from torch.amp import custom_fwd

# 32-bit words hold the packed values.
WORD_BITS = tl.constexpr(32)


# portq: ports gptqmodel:gptqmodel/nn_modules/triton_utils/dequant.py::make_dequant_configs
def _dequant_configs(tile_widths, warp_counts):
    """One autotune candidate per (elements a program, warps) pair."""
    return [triton.Config({"TILE": width}, num_warps=warps)
            for width, warps in itertools.product(tile_widths, warp_counts)]


DEQUANT_CONFIGS = _dequant_configs([128, 256, 512, 1024], [4, 8])


def _pick_dequant_config(total):
    """The widest candidate a single program does not overrun, with the most warps
    (no timed sweep: the engine launches the same shape every call)."""
    fitting = [c for c in DEQUANT_CONFIGS if c.kwargs["TILE"] <= total] or DEQUANT_CONFIGS[:1]
    return max(fitting, key=lambda c: (c.kwargs["TILE"], c.num_warps))


# portq: ports gptqmodel:gptqmodel/nn_modules/triton_utils/dequant.py::dequant_kernel_248
@triton.jit
def _unpack_dequant_kernel(
    group_of_row_ptr, scale_ptr, packed_w_ptr, packed_z_ptr, dst_ptr,
    total,
    value_mask: tl.constexpr,
    bits: tl.constexpr,
    n_cols: tl.constexpr,
    n_groups: tl.constexpr,
    TILE: tl.constexpr,
):
    flat = tl.program_id(0) * TILE + tl.arange(0, TILE)
    live = flat < total
    row = flat // n_cols
    col = flat % n_cols
    per_word: tl.constexpr = WORD_BITS // bits

    grp = tl.load(group_of_row_ptr + row)
    tl.device_assert(grp >= 0, "g_idx holds a negative group")
    grp = tl.where(grp < 0, grp + n_groups, grp)

    word = tl.load(packed_w_ptr + (row // per_word) * n_cols + col)
    q = (word >> ((row % per_word) * bits)) & value_mask
    zword = tl.load(packed_z_ptr + grp * (n_cols // per_word) + col // per_word)
    z = (zword >> ((col % per_word) * bits)) & value_mask
    s = tl.load(scale_ptr + grp * n_cols + col).to(tl.float32)

    tl.store(dst_ptr + flat, s * (q - z).to(tl.float32), mask=live)


# portq: ports gptqmodel:gptqmodel/nn_modules/triton_utils/dequant.py::dequant248
def dequantize_weight(qweight, scales, qzeros, g_idx, bits, maxq=None):
    """The fp16 weight (in_features, out_features) of a packed 2/4/8-bit layer."""
    n_groups, n_cols = scales.shape
    n_rows = g_idx.shape[0]
    dst = torch.empty((n_rows, n_cols), device=qweight.device, dtype=torch.float16)
    total = dst.numel()
    value_mask = (1 << bits) - 1 if maxq is None else maxq
    cfg = _pick_dequant_config(total)
    _unpack_dequant_kernel[(triton.cdiv(total, cfg.kwargs["TILE"]),)](
        g_idx, scales, qweight, qzeros, dst, total,
        value_mask=value_mask, bits=bits, n_cols=n_cols, n_groups=n_groups,
        num_warps=cfg.num_warps, **cfg.kwargs,
    )
    return dst


# portq: ports gptqmodel:gptqmodel/nn_modules/triton_utils/dequant.py::quant_matmul_248
# portq: not-carried gptqmodel:gptqmodel/nn_modules/triton_utils/dequant.py::quant_matmul_248[transpose] -- the transposed product serves the backward only
def dequant_matmul(x, qweight, scales, qzeros, g_idx, bits, maxq=None):
    """x @ W for 2-D x, W dequantised first."""
    return x @ dequantize_weight(qweight, scales, qzeros, g_idx, bits, maxq=maxq)


class DequantLinearFn(torch.autograd.Function):
    """The dequantise-then-matmul product as an autograd node, forward only."""

    # portq: ports gptqmodel:gptqmodel/nn_modules/triton_utils/dequant.py::QuantLinearFunction.forward
    @staticmethod
    @custom_fwd(device_type="cuda")
    def forward(ctx, x, qweight, scales, qzeros, g_idx, bits, maxq):
        return dequant_matmul(x, qweight, scales, qzeros, g_idx, bits, maxq)


def dequant_linear(x, qweight, scales, qzeros, g_idx, bits, bias=None):
    """The engine's own entry: any leading shape, optional bias, fp16 out."""
    flat = x.reshape(-1, x.shape[-1])
    out = DequantLinearFn.apply(flat, qweight, scales, qzeros, g_idx, bits, (1 << bits) - 1)
    out = out.to(torch.float16).reshape(*x.shape[:-1], out.shape[-1])
    return out if bias is None else out + bias
