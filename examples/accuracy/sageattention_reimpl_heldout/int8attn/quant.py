"""Per-block int8 quantisation of queries and keys (one scale per block of
rows of one head). The query scale also folds in the softmax scale and
log2(e), so the attention kernel can use exp2. Must not launch attention."""

import torch
import triton
import triton.language as tl

# log2(e): the attention kernel exponentiates in base 2.
LOG2E = tl.constexpr(1.44269504)
# the largest magnitude an int8 code takes
INT8_MAX = tl.constexpr(127.0)
# rows per quantisation block for queries and keys (the attention tiles)
Q_ROWS = 128
K_ROWS = 64


@triton.jit
def _round_half_away(x):
    return x + 0.5 * tl.where(x >= 0, 1, -1)


# portq: ports sageattention:sageattention/quant_per_block.py::q_kernel_per_block_int8
@triton.jit
def _quant_q_rows(src, dst, ROWS: tl.constexpr, scales, seq_len, DIM: tl.constexpr, scale_stride):
    blk = tl.program_id(0)
    head = tl.program_id(1)
    base = head * seq_len * DIM
    rows = blk * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, DIM)
    live = rows[:, None] < seq_len
    offs = base + rows[:, None] * DIM + cols[None, :]
    x = tl.load(src + offs, mask=live, other=0.0).to(tl.float32)
    x = x * (DIM ** -0.5 * LOG2E)
    scale = tl.max(tl.abs(x)) / INT8_MAX
    codes = _round_half_away(x / scale).to(tl.int8)
    tl.store(dst + offs, codes, mask=live)
    tl.store(scales + head * scale_stride + blk, scale)


# portq: ports sageattention:sageattention/quant_per_block.py::k_kernel_per_block_int8
@triton.jit
def _quant_k_rows(src, dst, ROWS: tl.constexpr, scales, seq_len, DIM: tl.constexpr, scale_stride):
    blk = tl.program_id(0)
    head = tl.program_id(1)
    base = head * seq_len * DIM
    rows = blk * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, DIM)
    live = rows[:, None] < seq_len
    offs = base + rows[:, None] * DIM + cols[None, :]
    x = tl.load(src + offs, mask=live, other=0.0).to(tl.float32)
    scale = tl.max(tl.abs(x)) / INT8_MAX
    codes = _round_half_away(x / scale).to(tl.int8)
    tl.store(dst + offs, codes, mask=live)
    tl.store(scales + head * scale_stride + blk, scale)


# portq: ports sageattention:sageattention/quant_per_block.py::per_block_int8
def quantize_qk(q, k, q_rows=Q_ROWS, k_rows=K_ROWS):
    """Quantise contiguous (B, H, L, D) q and k; return codes and scales."""
    q_codes = torch.empty_like(q, dtype=torch.int8)
    k_codes = torch.empty_like(k, dtype=torch.int8)
    lead = q.shape[:-2]
    q_scale = torch.empty((*lead, triton.cdiv(q.shape[-2], q_rows), 1), device=q.device, dtype=torch.float32)
    k_scale = torch.empty((*lead, triton.cdiv(k.shape[-2], k_rows), 1), device=q.device, dtype=torch.float32)
    q3 = q.reshape(-1, q.shape[-2], q.shape[-1])
    k3 = k.reshape(-1, k.shape[-2], k.shape[-1])
    heads, seq_len, dim = q3.shape
    _quant_q_rows[(triton.cdiv(seq_len, q_rows), heads)](
        q3, q_codes, q_rows, q_scale, seq_len, dim, q_scale.stride(-3))
    _quant_k_rows[(triton.cdiv(seq_len, k_rows), heads)](
        k3, k_codes, k_rows, k_scale, seq_len, dim, k_scale.stride(-3))
    return q_codes, q_scale, k_codes, k_scale


def dequantize(codes, scale, rows):
    """The engine's own inverse of quantize_qk, for checks and debugging."""
    expanded = scale.repeat_interleave(rows, dim=-2)[..., : codes.shape[-2], :]
    return codes.float() * expanded
