"""Plain-PyTorch reference for ``gather_kv_b_proj``: the semantics, in fp32.

This module *is* the specification the Triton kernel is tested against, and it
is the oracle the in-tree MLA chunked-context prefill uses on CPU tensors. It
favours clarity over speed: one vectorised gather, one fp32 matmul (or one per
128-wide K segment in block-scale mode), one rounding to the output dtype.

What it computes (aiter's ``gather_kv_b_proj``, the MLA cached-prefix
expansion): output row ``t = cu[b] + i`` is token ``i`` of sequence ``b``; its
latent row lives in page ``kv_indices[kv_indptr[b] + i // S]`` at slot
``i % S``. The first ``R`` latent values are projected by every head's
``kv_b_proj`` rows (``Dn`` K rows, then ``Dv`` V rows, head-major), the last
``E`` values (the already-rotated rope key) are copied into every head's K
after ``Dn``. Everything is scaled by the cache's per-tensor ``k_scale`` when
the cache is fp8. Rows at or past ``cu[-1]`` are never written.

Numerics (where this port deliberately differs from upstream): every operand
is upcast exactly to fp32 here, so an fp8 cache with a bf16 weight keeps the
bf16 weight (upstream truncates that weight to fp8 on its paged path). The
Triton kernel matches this with bf16 tensor-core operands, which hold both
fp8 and bf16 values exactly.

It must not import Triton: callers use it where no Triton is installed.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

SCALE_BLOCK = 128
"""Granularity of the 128x128 block weight scales, in weight rows and in R."""


@dataclass(frozen=True)
class PrefixProjection:
    """The fp32 quantities the kernel rounds: what tests need for tolerances.

    ``rows``: output row of each valid token, ``[T]`` int64.
    ``kv``: ``[T, H, Dn+Dv]`` fp32, the projected K_nope|V before rounding.
    ``kv_magnitude``: ``[T, H, Dn+Dv]`` fp32, the same sums over absolute
    values (the scale of the fp32 accumulation error).
    ``rope``: ``[T, E]`` fp32, ``k_pe * k_scale`` before rounding.
    """

    rows: torch.Tensor
    kv: torch.Tensor
    kv_magnitude: torch.Tensor
    rope: torch.Tensor


def cache_scale(k_buffer: torch.Tensor, k_scale: torch.Tensor | None) -> torch.Tensor:
    """The KV dequant factor: ``k_scale[0]`` for an fp8 cache, exactly 1 for bf16."""
    if k_buffer.dtype == torch.bfloat16:
        return torch.ones((), dtype=torch.float32, device=k_buffer.device)
    return k_scale.reshape(-1)[0].to(torch.float32)


def token_slots(kv_indptr, kv_indices, cu, page_size):
    """Map every valid output row to ``(page, slot)``.

    Returns ``(rows, page, slot)`` as int64 tensors over the rows
    ``[cu[0], cu[-1])``; the sequence of row ``t`` is the last ``b`` with
    ``cu[b] <= t`` (empty sequences own no rows).
    """
    cu64 = cu.to(torch.int64)
    first, last = int(cu64[0]), int(cu64[-1])
    rows = torch.arange(first, max(first, last), dtype=torch.int64, device=cu.device)
    seq = torch.searchsorted(cu64, rows, right=True) - 1
    within = rows - cu64[seq]
    page_pos = kv_indptr.to(torch.int64)[seq] + torch.div(within, page_size, rounding_mode="floor")
    page = kv_indices.to(torch.int64)[page_pos]
    return rows, page, within % page_size


def project_prefix(k_buffer, k_scale, kv_indptr, kv_indices, cu, kv_proj_weight,
                   kv_proj_scale, num_heads: int) -> PrefixProjection:
    """Gather the latent rows and project them in fp32 (spec section 7)."""
    _, page_size, hidden = k_buffer.shape
    rank = kv_proj_weight.shape[1]
    rows, page, slot = token_slots(kv_indptr, kv_indices, cu, page_size)
    latent = k_buffer[page, slot].to(torch.float32)
    x, pe = latent[:, :rank], latent[:, rank:hidden]
    w = kv_proj_weight.to(torch.float32)
    n_rows = w.shape[0]
    ks = cache_scale(k_buffer, k_scale)
    if kv_proj_scale is None:
        y, mag = x @ w.T, x.abs() @ w.abs().T
    elif kv_proj_scale.dim() == 1 or kv_proj_scale.shape[-1] == 1:
        s = kv_proj_scale.reshape(1, n_rows).to(torch.float32)
        y, mag = (x @ w.T) * s, (x.abs() @ w.abs().T) * s.abs()
    else:
        s = kv_proj_scale.to(torch.float32).repeat_interleave(SCALE_BLOCK, dim=0)[:n_rows]
        y = torch.zeros(x.shape[0], n_rows, dtype=torch.float32, device=x.device)
        mag = torch.zeros_like(y)
        for j in range(rank // SCALE_BLOCK):
            seg = slice(j * SCALE_BLOCK, (j + 1) * SCALE_BLOCK)
            y = y + (x[:, seg] @ w[:, seg].T) * s[:, j]
            mag = mag + (x[:, seg].abs() @ w[:, seg].abs().T) * s[:, j].abs()
    head_rows = n_rows // num_heads
    kv = (y * ks).view(-1, num_heads, head_rows)
    kv_magnitude = (mag * ks.abs()).view(-1, num_heads, head_rows)
    return PrefixProjection(rows=rows, kv=kv, kv_magnitude=kv_magnitude, rope=pe * ks)


def gather_kv_b_proj(k_buffer, k_scale, kv_indptr, kv_indices, kv_prefix_sum_context_lens,
                     kv_proj_weight, kv_proj_scale, k_prefix, v_prefix,
                     weight_preshuffle: bool = False, shuffled_kv_cache: bool = False) -> None:
    """Reference ``gather_kv_b_proj``: same signature and in-place contract as
    the Triton op; fp32 math, one round-to-nearest-even to the output dtype.

    Only the plain layouts are defined here (the AMD preshuffled weight and
    shuffled cache layouts are not carried by this port).
    """
    if weight_preshuffle or shuffled_kv_cache:
        raise ValueError(
            "gather_kv_b_proj reference: weight_preshuffle/shuffled_kv_cache are AMD MFMA "
            "layouts that this port does not carry; pass row-major weights and a plain cache"
        )
    num_heads, v_head_dim = v_prefix.shape[1], v_prefix.shape[2]
    proj = project_prefix(k_buffer, k_scale, kv_indptr, kv_indices, kv_prefix_sum_context_lens,
                          kv_proj_weight, kv_proj_scale, num_heads)
    nope_dim = proj.kv.shape[2] - v_head_dim
    rows = proj.rows.to(k_prefix.device)
    k_prefix[rows, :, :nope_dim] = proj.kv[..., :nope_dim].to(k_prefix.dtype)
    k_prefix[rows, :, nope_dim:] = proj.rope.to(k_prefix.dtype)[:, None, :].expand(-1, num_heads, -1)
    v_prefix[rows] = proj.kv[..., nope_dim:].to(v_prefix.dtype)
