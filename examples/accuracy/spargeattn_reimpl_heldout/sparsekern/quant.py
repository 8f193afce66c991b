"""Per-block int8 quantisation of Q and K (Triton). One scale per tile of
rows and per head; Q is pre-multiplied by the softmax scale in base 2 so the
attention can use exp2. Values round half away from zero."""

import torch
import triton
import triton.language as tl

LOG2E = 1.44269504


# portq: ports spargeattn:spas_sage_attn/quant_per_block.py::quant_per_block_int8_kernel @97fac836b3
@triton.jit
def _tile_int8_kernel(src, dst, scales, rows,
                      s_src_b, s_src_h, s_src_n,
                      s_dst_b, s_dst_h, s_dst_n,
                      s_scl_b, s_scl_h,
                      mult,
                      DIM: tl.constexpr, TILE: tl.constexpr):
    tile = tl.program_id(0)
    head = tl.program_id(1)
    batch = tl.program_id(2)
    rws = tile * TILE + tl.arange(0, TILE)
    cols = tl.arange(0, DIM)
    keep = rws[:, None] < rows
    vals = tl.load(src + batch * s_src_b + head * s_src_h + rws[:, None] * s_src_n + cols[None, :], mask=keep)
    vals = vals.to(tl.float32) * mult
    step = tl.math.div_rn(tl.max(tl.abs(vals)), 127.0) + 0.0000001
    codes = tl.math.div_rn(vals, step)
    codes += 0.5 * tl.where(codes >= 0, 1, -1)
    tl.store(dst + batch * s_dst_b + head * s_dst_h + rws[:, None] * s_dst_n + cols[None, :], codes.to(tl.int8), mask=keep)
    tl.store(scales + batch * s_scl_b + head * s_scl_h + tile, step)


def _seq_strides(t, layout):
    if layout == "HND":
        return t.stride(0), t.stride(1), t.stride(2)
    return t.stride(0), t.stride(2), t.stride(1)


def _quantize(x, codes, rows, heads, batch, tile, mult, dim, layout):
    scales = torch.empty((batch, heads, triton.cdiv(rows, tile), 1), device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(rows, tile), heads, batch)
    _tile_int8_kernel[grid](
        x, codes, scales, rows,
        *_seq_strides(x, layout), *_seq_strides(codes, layout),
        scales.stride(0), scales.stride(1),
        mult, DIM=dim, TILE=tile,
    )
    return scales


# portq: ports spargeattn:spas_sage_attn/quant_per_block.py::per_block_int8 @97fac836b3
# portq: not-carried spargeattn:spas_sage_attn/quant_per_block.py::per_warp_int8 -- the engine quantises per tile only
def quantize_qk_per_tile(q, k, BLKQ=128, BLKK=64, sm_scale=None, tensor_layout="HND"):
    """int8 codes and per-tile scales of q (times sm_scale * log2 e) and k,
    in the given layout ("HND" or "NHD")."""
    if tensor_layout == "HND":
        batch, q_heads, q_len, dim = q.shape
        _, k_heads, k_len, _ = k.shape
    elif tensor_layout == "NHD":
        batch, q_len, q_heads, dim = q.shape
        _, k_len, k_heads, _ = k.shape
    else:
        raise ValueError(f"unknown tensor layout {tensor_layout}")
    if sm_scale is None:
        sm_scale = dim ** -0.5
    q_codes = torch.empty(q.shape, dtype=torch.int8, device=q.device)
    k_codes = torch.empty(k.shape, dtype=torch.int8, device=k.device)
    q_scale = _quantize(q, q_codes, q_len, q_heads, batch, BLKQ, sm_scale * LOG2E, dim, tensor_layout)
    k_scale = _quantize(k, k_codes, k_len, k_heads, batch, BLKK, 1.0, dim, tensor_layout)
    return q_codes, q_scale, k_codes, k_scale
