"""Cross-entropy over logits rows with hard labels and mean reduction, with
the gradient written into the logits in the same pass (no second buffer).

It computes losses and their gradients only; it does not pick dtypes for
callers or reduce across devices.
"""

import torch
import triton
import triton.language as tl

# Widest vocabulary chunk one loop step of the kernels loads.
XENT_CHUNK = 32768


# portq: ports liger:src/liger_kernel/ops/cross_entropy.py::liger_cross_entropy_kernel
@triton.jit
def _xent_rows_kernel(
    logits_ptr,
    logits_row_stride,
    labels_ptr,
    labels_stride,
    losses_ptr,
    losses_stride,
    vocab,
    counted,
    skip_label,
    CHUNK: tl.constexpr,
):
    """One program per row: online max/sum over the row, then the row is
    overwritten with d(loss)/d(logits) / counted and the row's loss stored."""
    row = tl.program_id(0).to(tl.int64)
    label = tl.load(labels_ptr + row * labels_stride)
    logits_ptr += row * logits_row_stride
    if label == skip_label:
        for start in range(0, vocab, CHUNK):
            cols = start + tl.arange(0, CHUNK)
            tl.store(logits_ptr + cols, 0.0, mask=cols < vocab)
        return
    losses_ptr += row * losses_stride
    running_max = float("-inf")
    running_sum = 0.0
    picked = tl.load(logits_ptr + label)
    for start in range(0, vocab, CHUNK):
        cols = start + tl.arange(0, CHUNK)
        chunk = tl.load(logits_ptr + cols, mask=cols < vocab, other=float("-inf"))
        new_max = tl.maximum(running_max, tl.max(chunk))
        running_sum = running_sum * tl.exp(running_max - new_max) + tl.sum(tl.exp(chunk - new_max))
        running_max = new_max
    for start in range(0, vocab, CHUNK):
        cols = start + tl.arange(0, CHUNK)
        chunk = tl.load(logits_ptr + cols, mask=cols < vocab, other=float("-inf"))
        tl.store(logits_ptr + cols, tl.exp(chunk - running_max) / running_sum / counted, mask=cols < vocab)
    tl.debug_barrier()
    tl.store(losses_ptr, tl.log(running_sum) + running_max - picked)
    at_label = tl.load(logits_ptr + label)
    tl.store(logits_ptr + label, at_label - 1 / counted)


# portq: ports liger:src/liger_kernel/ops/cross_entropy.py::element_mul
@triton.jit
def _scale_rows_kernel(rows_ptr, row_stride, factor_ptr, width, CHUNK: tl.constexpr):
    """Multiply every row in place by the scalar at ``factor_ptr``."""
    rows_ptr += tl.program_id(0).to(tl.int64) * row_stride
    factor = tl.load(factor_ptr)
    for start in range(0, width, CHUNK):
        cols = start + tl.arange(0, CHUNK)
        values = tl.load(rows_ptr + cols, mask=cols < width)
        tl.store(rows_ptr + cols, values * factor, mask=cols < width)


def scale_rows_(rows, factor):
    """In-place ``rows *= factor`` (a 0-d tensor), one program per row."""
    n_rows, width = rows.shape
    _scale_rows_kernel[(n_rows,)](rows, rows.stride(-2), factor, width,
                                  CHUNK=min(XENT_CHUNK, triton.next_power_of_2(width)), num_warps=32)


class CrossEntropyOp(torch.autograd.Function):
    """Mean cross-entropy of (rows, vocab) logits against (rows,) labels."""

    # portq: ports liger:src/liger_kernel/ops/cross_entropy.py::LigerCrossEntropyFunction.forward
    @staticmethod
    def forward(ctx, logits, labels, skip_label):
        rows, vocab = logits.shape
        losses = torch.zeros(rows, dtype=logits.dtype, device=logits.device)
        counted = (labels != skip_label).sum().item()
        if logits.stride(-1) != 1:
            logits = logits.contiguous()
        if labels.stride(-1) != 1:
            labels = labels.contiguous()
        _xent_rows_kernel[(rows,)](
            logits, logits.stride(-2), labels, labels.stride(-1), losses, losses.stride(-1),
            vocab, counted, skip_label,
            CHUNK=min(XENT_CHUNK, triton.next_power_of_2(vocab)), num_warps=32,
        )
        ctx.save_for_backward(logits.detach())
        return losses.sum() / counted

    # portq: ports liger:src/liger_kernel/ops/cross_entropy.py::LigerCrossEntropyFunction.backward
    @staticmethod
    def backward(ctx, grad_loss):
        (grad_logits,) = ctx.saved_tensors
        if not torch.equal(grad_loss, torch.tensor(1.0, device=grad_loss.device)):
            scale_rows_(grad_logits, grad_loss)
        return grad_logits, None, None
