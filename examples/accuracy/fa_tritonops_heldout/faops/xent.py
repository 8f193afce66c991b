"""Per-token cross-entropy of (tokens, vocab) logits against (tokens,)
labels, with label smoothing, a logit scale and the z-loss (a multiple of
lse^2), forward and backward.

Vocabularies wider than one tile are reduced in column blocks whose partial
log-sum-exps the host combines. It returns per-token losses; reducing them
(mean over non-ignored tokens, sum) is the caller's business.
"""

import torch
import triton
import triton.language as tl

from ._launch import device_guard, warps_for

# Widest column block one forward program reduces; wider vocabularies are split.
FWD_TILE_LIMIT = 64 * 1024
# Column block of one backward program.
BWD_TILE_LIMIT = 4 * 1024
# Labels equal to this are skipped unless the caller names another value.
IGNORE_LABEL = -100


# portq: ports flashattn:flash_attn/ops/triton/cross_entropy.py::cross_entropy_fwd_kernel
# portq: not-carried flashattn:flash_attn/ops/triton/cross_entropy.py::cross_entropy_fwd_kernel[class_start_idx] -- one device holds the whole vocabulary
# portq: not-carried flashattn:flash_attn/ops/triton/cross_entropy.py::cross_entropy_fwd_kernel[total_classes] -- the vocabulary is n_cols on one device
@triton.heuristics({"HAS_SMOOTHING": lambda args: args["smoothing"] > 0.0})
@triton.jit
def _xent_fwd_kernel(
    loss_ptr, lse_ptr, logits_ptr, labels_ptr,
    smoothing, logit_scale, lse_square_scale, ignore_label,
    n_cols, n_rows, logits_stride,
    TILE: tl.constexpr,
    HAS_SMOOTHING: tl.constexpr,
    SPLIT: tl.constexpr,  # the tile is one of several: leave lse and z-loss to the host
):
    """One program per (row, column block): partial lse and the block's share of the loss."""
    row = tl.program_id(0)
    blk = tl.program_id(1)
    logits_ptr += row * logits_stride.to(tl.int64)
    cols = blk * TILE + tl.arange(0, TILE)
    valid = cols < n_cols
    z = tl.load(logits_ptr + cols, mask=valid, other=-float("inf")).to(tl.float32) * logit_scale
    peak = tl.max(z, 0)
    lse = peak + tl.log(tl.sum(tl.exp(z - peak), 0))
    tl.store(lse_ptr + blk * n_rows + row, lse)
    if HAS_SMOOTHING:
        z_total = tl.sum(tl.where(valid, z, 0.0), 0)
    own = 0.0 if SPLIT else lse
    label = tl.load(labels_ptr + row)
    if label == ignore_label:
        loss = 0.0
    else:
        if (label >= blk * TILE) & (label < min(n_cols, (blk + 1) * TILE)):
            z_label = tl.load(logits_ptr + label).to(tl.float32) * logit_scale
            if HAS_SMOOTHING:
                loss = own - smoothing * z_total / n_cols - (1 - smoothing) * z_label
            else:
                loss = own - z_label
        else:
            if HAS_SMOOTHING:
                loss = smoothing * (own - z_total / n_cols)
            else:
                loss = 0.0
        if not SPLIT:
            loss += lse_square_scale * lse * lse
    tl.store(loss_ptr + blk * n_rows + row, loss)


# portq: ports flashattn:flash_attn/ops/triton/cross_entropy.py::cross_entropy_bwd_kernel
# portq: not-carried flashattn:flash_attn/ops/triton/cross_entropy.py::cross_entropy_bwd_kernel[class_start_idx] -- one device holds the whole vocabulary
# portq: not-carried flashattn:flash_attn/ops/triton/cross_entropy.py::cross_entropy_bwd_kernel[total_classes] -- the vocabulary is n_cols on one device
@triton.heuristics({"HAS_SMOOTHING": lambda args: args["smoothing"] > 0.0})
@triton.jit
def _xent_bwd_kernel(
    dlogits_ptr, dloss_ptr, logits_ptr, lse_ptr, labels_ptr,
    smoothing, logit_scale, lse_square_scale, ignore_label,
    n_cols, logits_stride, dlogits_stride, dloss_stride,
    TILE: tl.constexpr,
    HAS_SMOOTHING: tl.constexpr,
):
    """d loss / d logits of one column block of one row: (softmax - target) scaled."""
    row = tl.program_id(0)
    blk = tl.program_id(1)
    logits_ptr += row * logits_stride.to(tl.int64)
    dlogits_ptr += row * dlogits_stride.to(tl.int64)
    cols = blk * TILE + tl.arange(0, TILE)
    valid = cols < n_cols
    label = tl.load(labels_ptr + row)
    if label == ignore_label:
        dloss = 0.0
    else:
        dloss = tl.load(dloss_ptr + row * dloss_stride)
    z = tl.load(logits_ptr + cols, mask=valid, other=-float("inf")).to(tl.float32) * logit_scale
    lse = tl.load(lse_ptr + row)
    p = tl.exp(z - lse)
    p = p * (1.0 + 2.0 * lse_square_scale * lse)
    if HAS_SMOOTHING:
        p = tl.where(cols == label, p - (1.0 - smoothing), p) - smoothing / n_cols
    else:
        p = tl.where(cols == label, p - 1.0, p)
    tl.store(dlogits_ptr + cols, (dloss * logit_scale) * p, mask=valid)


class CrossEntropyFn(torch.autograd.Function):
    """Per-token losses of (tokens, vocab) logits; the backward may reuse the logits' storage."""

    # portq: ports flashattn:flash_attn/ops/triton/cross_entropy.py::CrossEntropyLoss.forward
    # portq: not-carried flashattn:flash_attn/ops/triton/cross_entropy.py::CrossEntropyLoss.forward[process_group] -- one device holds the whole vocabulary
    @staticmethod
    def forward(ctx, logits, labels, smoothing=0.0, logit_scale=1.0, lse_square_scale=0.0,
                ignore_label=IGNORE_LABEL, inplace_backward=False):
        n_rows, n_cols = logits.shape
        if labels.shape != (n_rows,):
            raise ValueError(f"labels {tuple(labels.shape)}: expected ({n_rows},)")
        if logits.stride(-1) != 1:
            logits = logits.contiguous()
        tile = min(triton.next_power_of_2(n_cols), FWD_TILE_LIMIT)
        n_blocks = triton.cdiv(n_cols, tile)
        split = n_blocks > 1
        shape = (n_blocks, n_rows) if split else (n_rows,)
        losses = torch.empty(shape, dtype=torch.float32, device=logits.device)
        lse = torch.empty(shape, dtype=torch.float32, device=logits.device)
        with device_guard(logits):
            _xent_fwd_kernel[(n_rows, n_blocks)](
                losses, lse, logits, labels,
                smoothing, logit_scale, lse_square_scale, ignore_label,
                n_cols, n_rows, logits.stride(0),
                TILE=tile, SPLIT=split, num_warps=warps_for(tile),
            )
        if split:
            # Each block left its label term (and smoothing share); add the whole row's lse and z-loss.
            lse = torch.logsumexp(lse, dim=0)
            losses = losses.sum(dim=0) + lse
            if lse_square_scale != 0.0:
                losses += lse_square_scale * lse.square()
            losses.masked_fill_(labels == ignore_label, 0.0)
        ctx.save_for_backward(logits, lse, labels)
        ctx.settings = (smoothing, logit_scale, lse_square_scale, ignore_label, inplace_backward)
        return losses

    # portq: ports flashattn:flash_attn/ops/triton/cross_entropy.py::CrossEntropyLoss.backward
    @staticmethod
    def backward(ctx, grad_losses):
        logits, lse, labels = ctx.saved_tensors
        smoothing, logit_scale, lse_square_scale, ignore_label, inplace_backward = ctx.settings
        dlogits = logits if inplace_backward else torch.empty_like(logits)
        n_rows, n_cols = logits.shape
        tile = min(triton.next_power_of_2(n_cols), BWD_TILE_LIMIT)
        with device_guard(logits):
            _xent_bwd_kernel[(n_rows, triton.cdiv(n_cols, tile))](
                dlogits, grad_losses, logits, lse, labels,
                smoothing, logit_scale, lse_square_scale, ignore_label,
                n_cols, logits.stride(0), dlogits.stride(0), grad_losses.stride(0),
                TILE=tile, num_warps=warps_for(tile, caps=((2048, 4), (8192, 8))),
            )
        return dlogits, None, None, None, None, None, None


# portq: not-carried flashattn:flash_attn/ops/triton/cross_entropy.py::cross_entropy_loss -- the engine applies CrossEntropyFn itself
