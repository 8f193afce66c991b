"""mxfp8 along dim 1: each column of a row-major matrix cast to float8 e4m3 in
blocks of 32 rows, each block with an e8m0 (power-of-two) scale.

The scale is the block's largest magnitude rounded down to a power of two,
less e4m3's largest exponent; the values are divided by it and cast. Output
is the transposed cast (column-major) and the scales one row per column.
Holds the kernel, its launcher and the engine's own dequantisation.
"""

import torch
import triton
import triton.language as tl

# The engine's fixed tile: every matrix it casts has dims divisible by 64.
ROW_TILE = 64
COL_TILE = 64
MX_BLOCK = 32


# portq: ports torchao:torchao/prototype/mx_formats/kernels.py::_triton_calculate_scale
@triton.jit
def _e8m0_floor_scale(magnitudes, axis):
    # e4m3's largest power of two is 2**8; bf16 has 7 mantissa bits, bias 127
    peak = tl.max(magnitudes, axis=axis).to(tl.bfloat16)
    exp = ((peak.to(tl.int16, bitcast=True) >> 7) & 0xFF) - 127
    # clamped to e8m0's range in integers (the interpreter's bf16 clamp is wrong)
    unbiased = tl.minimum(tl.maximum(exp - 8, -127), 127)
    biased = (unbiased + 127).to(tl.uint8)
    scale = (biased.to(tl.int32) << 23).to(tl.float32, bitcast=True)
    return scale, biased


# portq: ports torchao:torchao/prototype/mx_formats/kernels.py::to_mxfp8_dim1_kernel
# portq: not-carried torchao:torchao/prototype/mx_formats/kernels.py::_get_mxfp8_dim1_kernel_autotune_configs -- the engine launches one fixed tile; no autotuning
@triton.jit
def _mxfp8_cols_kernel(src, dst_t, scales, n_rows, n_cols,
                       ROWS: tl.constexpr, COLS: tl.constexpr, BLOCK: tl.constexpr):
    r0 = tl.program_id(0) * ROWS
    c0 = tl.program_id(1) * COLS
    r = r0 + tl.arange(0, ROWS)[:, None]
    c = c0 + tl.arange(0, COLS)[None, :]
    inside = (r < n_rows) & (c < n_cols)
    x = tl.load(src + r * n_cols + c, mask=inside, other=0.0)
    blocks = tl.reshape(tl.trans(x), (COLS * (ROWS // BLOCK), BLOCK))
    scale, biased = _e8m0_floor_scale(tl.abs(blocks), 1)
    cast = tl.trans(tl.reshape(blocks / scale[:, None], (COLS, ROWS)))
    # saturate to e4m3's finite range, as the GPU's conversion does
    cast = tl.minimum(tl.maximum(cast, -448.0), 448.0)
    # onto e4m3's grid first (3 mantissa bits, subnormal step 2**-9), so the
    # narrowing cast is exact: the interpreter's fp8 rounding drops a carry
    step = tl.exp2(tl.maximum(tl.floor(tl.log2(tl.abs(cast))), -6.0) - 3.0)
    cast = tl.floor(cast / step + 0.5) * step
    tl.store(dst_t + c * n_rows + r, cast.to(tl.float8e4nv), mask=inside)
    # scale of column c, row block b at c * (n_rows // BLOCK) + b
    k = tl.arange(0, COLS * (ROWS // BLOCK))
    col = c0 + k // (ROWS // BLOCK)
    blk = r0 // BLOCK + k % (ROWS // BLOCK)
    tl.store(scales + col * (n_rows // BLOCK) + blk, biased)


# portq: ports torchao:torchao/prototype/mx_formats/kernels.py::triton_to_mxfp8_dim1
# portq: not-carried torchao:torchao/prototype/mx_formats/kernels.py::custom_triton_to_mxfp8_dim1_sharding -- the engine does not shard activations as DTensors
# portq: not-carried torchao:torchao/prototype/mx_formats/kernels.py::triton_to_mxfp8_dim1_reference -- the tests compare against the engine's own dequantisation
def to_mxfp8_cols(x: torch.Tensor, block: int = MX_BLOCK):
    """(x cast along dim 1 as float8_e4m3fn, transposed view; e8m0 scales (n_cols, n_rows // block, 1) as uint8)."""
    if x.dim() != 2 or not x.is_contiguous():
        raise ValueError(f"to_mxfp8_cols: x must be a contiguous matrix, got shape {tuple(x.shape)}")
    if block > 32:
        raise ValueError(f"to_mxfp8_cols: block {block} is over 32")
    n_rows, n_cols = x.shape
    if n_rows % ROW_TILE or n_cols % COL_TILE:
        raise ValueError(f"to_mxfp8_cols: shape {tuple(x.shape)} is not a multiple of {ROW_TILE}x{COL_TILE}")
    out_t = torch.empty((n_cols, n_rows), dtype=torch.float8_e4m3fn, device=x.device)
    scales = torch.empty((n_cols, n_rows // block, 1), dtype=torch.uint8, device=x.device)
    grid = (n_rows // ROW_TILE, n_cols // COL_TILE)
    _mxfp8_cols_kernel[grid](x, out_t, scales, n_rows, n_cols, ROWS=ROW_TILE, COLS=COL_TILE, BLOCK=block)
    return out_t.t(), scales


def mxfp8_cols_to_float(cast: torch.Tensor, scales: torch.Tensor, block: int = MX_BLOCK) -> torch.Tensor:
    """The engine's inverse of ``to_mxfp8_cols``: float32 values of the cast times their block's scale."""
    factors = torch.exp2(scales.squeeze(-1).float() - 127)  # (n_cols, n_rows // block)
    return cast.float() * factors.t().repeat_interleave(block, dim=0)
