"""Multinomial sampling of one token per row from probabilities that sum to
one, driven by a per-row seed and offset so a replayed step draws the same
tokens.

The caller gives the probabilities (sorted or not) and, optionally, the
token id of each column; the kernel walks each row's running sum.
"""

import torch
import triton
import triton.language as tl

# Rows one program samples.
SAMPLING_ROWS_PER_PROGRAM = 32
# Columns a program adds to its running sums per step.
SAMPLING_COLS_PER_STEP = 64


# portq: ports lmdeploy:lmdeploy/pytorch/kernels/multinomial_sampling.py::_multinomial_sampling_kernel
@triton.jit
def draw_from_cumsum_kernel(probs, seeds, offsets, token_ids, picked,
                            probs_row_stride, probs_col_stride, ids_row_stride, ids_col_stride,
                            n_rows, n_cols, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < n_rows
    seed = tl.load(seeds + rows, mask=row_ok)
    offset = tl.load(offsets + rows, mask=row_ok).to(tl.int32)
    u = tl.rand(seed, offset)[:, None]
    running = tl.zeros((ROWS,), dtype=probs.dtype.element_ty)
    choice = tl.full((ROWS,), -1, dtype=tl.int64)
    for start in range(0, n_cols, COLS):
        cols = start + tl.arange(0, COLS)
        ok = row_ok[:, None] & (cols[None, :] < n_cols)
        p = tl.load(probs + rows[:, None] * probs_row_stride + cols[None, :] * probs_col_stride,
                    mask=ok, other=0.0)
        upper = running[:, None] + tl.cumsum(p, 1)
        running += tl.sum(p, 1)
        hit = (u > upper - p) & (u <= upper)
        found = tl.sum(hit.to(tl.int32), 1) > 0
        where = start + tl.argmax(hit.to(tl.int32), 1)
        ids = tl.load(token_ids + rows * ids_row_stride + where * ids_col_stride,
                      mask=found & row_ok, other=-1)
        choice = tl.where(found, ids, choice)
    tl.store(picked + rows, choice, mask=row_ok)


# portq: ports lmdeploy:lmdeploy/pytorch/kernels/multinomial_sampling.py::multinomial_sampling
@torch.no_grad()
def sample_multinomial(probs: torch.Tensor, seeds: torch.Tensor, offsets: torch.Tensor,
                       token_ids: torch.Tensor | None = None) -> torch.Tensor:
    """One draw per row of probs [rows, cols]: token_ids[row, col] (col itself
    without token_ids), -1 where the row's sum never reaches the draw."""
    if probs.dim() != 2:
        raise ValueError(f"sample_multinomial: probs has {probs.dim()} dimensions, expected 2")
    n_rows, n_cols = probs.shape
    if n_cols == 1:
        return torch.zeros_like(probs, dtype=torch.long)
    if token_ids is None:
        token_ids = torch.arange(n_cols, device=probs.device).expand_as(probs)
    if token_ids.shape != probs.shape:
        raise ValueError(f"sample_multinomial: token_ids {tuple(token_ids.shape)} is not probs' {tuple(probs.shape)}")
    picked = token_ids.new_empty(n_rows)
    draw_from_cumsum_kernel[(triton.cdiv(n_rows, SAMPLING_ROWS_PER_PROGRAM),)](
        probs, seeds, offsets, token_ids, picked,
        probs.stride(0), probs.stride(1), token_ids.stride(0), token_ids.stride(1),
        n_rows, n_cols, ROWS=SAMPLING_ROWS_PER_PROGRAM, COLS=SAMPLING_COLS_PER_STEP)
    return picked


def sample_from_logits(logits: torch.Tensor, temperature: float, seeds: torch.Tensor,
                       offsets: torch.Tensor) -> torch.Tensor:
    """The engine's sampler: softmax(logits / temperature), sorted descending, then one draw."""
    probs, order = (logits.float() / temperature).softmax(-1).sort(-1, descending=True)
    return sample_multinomial(probs, seeds, offsets, order)
