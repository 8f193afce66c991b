"""Reconstruction of the half weight from the 4-bit matrix, bit for bit
what upstream's kernel writes: the code less the stored zero plus one,
converted exactly, times the group's half scale rounded once to half."""

import torch
import triton
import triton.language as tl

from .packing import column_code, row_code


# portq: ports exllama:exllama_ext/cuda_func/q4v2_recons.cu::q4v2_recons_kernel @3dc7cd9
@triton.jit
def _recons_kernel(w_ptr, out_ptr, scales_ptr, zeros_ptr, group_of_row_ptr, height, width,
                   BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid_r = tl.program_id(0)
    pid_c = tl.program_id(1)
    rows = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    keep = (rows[:, None] < height) & (cols[None, :] < width)
    r = tl.where(rows < height, rows, 0)
    c = tl.where(cols < width, cols, 0)
    group = tl.load(group_of_row_ptr + r)
    code = column_code(w_ptr, r[:, None], c[None, :], width)
    zero = row_code(zeros_ptr, group[:, None], c[None, :], width) + 1
    scale = tl.load(scales_ptr + group[:, None].to(tl.int64) * width + c[None, :]).to(tl.float32)
    value = (code - zero).to(tl.float32) * scale
    tl.store(out_ptr + r[:, None].to(tl.int64) * width + c[None, :], value.to(tl.float16), mask=keep)


def group_of_rows(height, groupsize, seq_g_idx, device):
    """The group of each unpacked row: from the sequentialised index when
    there is one (its even entries), else row // groupsize."""
    if seq_g_idx is not None:
        return seq_g_idx.view(-1, 2)[:, 0].to(torch.int32).contiguous()
    return (torch.arange(height, device=device, dtype=torch.int32) // groupsize).contiguous()


# portq: ports exllama:exllama_ext/cuda_func/q4v2_recons.cu::q4v2_recons_cuda @3dc7cd9
def recons_q4(w, out, scales, zeros, groupsize, seq_g_idx=None):
    """w (height/8, width) int32 -> out (height, width) half."""
    height, width = w.shape[0] * 8, w.shape[1]
    groups = group_of_rows(height, groupsize, seq_g_idx, w.device)
    grid = (triton.cdiv(height, 16), triton.cdiv(width, 32))
    _recons_kernel[grid](w, out, scales, zeros, groups, height, width, BLOCK_R=16, BLOCK_C=32)
    return out
