"""Cross-entropy of ``hidden @ weight.T`` without materialising all the logits:
the rows are processed in chunks and the gradients of the hidden states and
of the weight are accumulated during the forward pass.

It reuses the row kernels of ``xent``; it does not own a kernel of its own.
"""

import torch
import triton

from . import xent
from .xent import XENT_CHUNK as _CHUNK_LIMIT


class FusedLinearXentOp(torch.autograd.Function):
    """Mean cross-entropy of the projection of (rows, hidden) onto (vocab, hidden)."""

    # portq: ports liger:src/liger_kernel/ops/fused_linear_cross_entropy.py::LigerFusedLinearCrossEntropyFunction.forward
    @staticmethod
    def forward(ctx, hidden, weight, labels, skip_label):
        out_dtype = torch.get_autocast_gpu_dtype() if torch.is_autocast_enabled() else hidden.dtype
        rows, width = hidden.shape
        vocab = weight.shape[0]
        chunk_tile = min(_CHUNK_LIMIT, triton.next_power_of_2(vocab))
        # Chunks hold about as many logits as the hidden states hold values.
        growth = triton.cdiv(vocab, width)
        chunk_rows = triton.next_power_of_2(triton.cdiv(rows, growth))
        grad_weight = torch.zeros_like(weight)
        grad_hidden = torch.zeros_like(hidden)
        losses = torch.zeros(rows, dtype=torch.float32, device=hidden.device)
        counted_total = (labels != skip_label).sum().item()
        for first in range(0, rows, chunk_rows):
            last = min(first + chunk_rows, rows)
            part = hidden[first:last]
            logits = (part @ weight.t()).float().contiguous()
            part_labels = labels[first:last].contiguous()
            part_losses = losses[first:last]
            counted = (part_labels != skip_label).sum().item()
            xent._xent_rows_kernel[(logits.shape[0],)](
                logits, logits.stride(-2), part_labels, part_labels.stride(-1),
                part_losses, part_losses.stride(-1), vocab, counted, skip_label,
                CHUNK=chunk_tile, num_warps=32,
            )
            weight_of_part = counted / counted_total
            logits = logits.to(out_dtype)
            grad_hidden[first:last] = (logits * weight_of_part) @ weight
            torch.addmm(grad_weight, logits.t(), part, out=grad_weight, alpha=weight_of_part, beta=1.0)
        ctx.save_for_backward(grad_hidden.detach(), grad_weight.detach())
        return losses.sum() / counted_total

    # portq: ports liger:src/liger_kernel/ops/fused_linear_cross_entropy.py::LigerFusedLinearCrossEntropyFunction.backward
    @staticmethod
    def backward(ctx, grad_loss):
        grad_hidden, grad_weight = ctx.saved_tensors
        if torch.ne(grad_loss, torch.tensor(1.0, device=grad_loss.device)):
            xent.scale_rows_(grad_hidden, grad_loss)
            xent.scale_rows_(grad_weight, grad_loss)
        return grad_hidden, grad_weight, None, None
