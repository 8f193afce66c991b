"""Cross-entropy of the head's logits against hard labels, per token, with
optional logit soft-capping (t * tanh(x / t)); the backward writes the
gradient into the logits' own storage.

It computes per-token losses and their gradient only; the caller reduces.
Vocabularies wider than one tile (the chunked kernel) and logit scaling are
not carried: the engine's models have neither.
"""

import torch
import triton
import triton.language as tl

from . import settings

# Label of a token that carries no loss.
IGNORE_LABEL = -100
# Vocabulary columns one backward program writes.
GRAD_TILE = 4096

# portq: not-carried unsloth:unsloth/kernels/cross_entropy_loss.py::_chunked_cross_entropy_forward -- vocabularies fit one tile: wider ones are refused


@triton.jit
def _tanh(x):
    return 2.0 * tl.sigmoid(2.0 * x) - 1.0


# portq: ports unsloth:unsloth/kernels/cross_entropy_loss.py::_cross_entropy_forward
# portq: not-carried unsloth:unsloth/kernels/cross_entropy_loss.py::_cross_entropy_forward[DO_LOGIT_SCALING] -- no logit scaling
# portq: not-carried unsloth:unsloth/kernels/cross_entropy_loss.py::_cross_entropy_forward[LOGIT_SCALE] -- no logit scaling
@triton.jit
def _xent_fwd_kernel(logits_ptr, logits_stride, losses_ptr, lse_ptr, labels_ptr, VOCAB: tl.constexpr,
                     TILE: tl.constexpr, CAPPED: tl.constexpr, CAP: tl.constexpr):
    """One program per row: logsumexp of the (capped) row kept, loss = lse - x[label] (0 when ignored)."""
    row = tl.program_id(0)
    logits_ptr += row.to(tl.int64) * logits_stride
    cols = tl.arange(0, TILE)
    label = tl.load(labels_ptr + row).to(tl.int32)
    x = tl.load(logits_ptr + cols, mask=cols < VOCAB, other=-float("inf")).to(tl.float32)
    if CAPPED:
        x = CAP * _tanh(x / CAP)
    top = tl.max(x, 0)
    lse = top + tl.log(tl.sum(tl.exp(x - top), 0))
    loss = 0.0
    if label != -100:
        picked = tl.load(logits_ptr + label).to(tl.float32)
        if CAPPED:
            picked = CAP * _tanh(picked / CAP)
        loss = lse - picked
    tl.store(lse_ptr + row, lse)
    tl.store(losses_ptr + row, loss)


# portq: ports unsloth:unsloth/kernels/cross_entropy_loss.py::_cross_entropy_backward
# portq: not-carried unsloth:unsloth/kernels/cross_entropy_loss.py::_cross_entropy_backward[DO_LOGIT_SCALING] -- no logit scaling
# portq: not-carried unsloth:unsloth/kernels/cross_entropy_loss.py::_cross_entropy_backward[LOGIT_SCALE] -- no logit scaling
@triton.jit
def _xent_bwd_kernel(logits_ptr, logits_stride, dloss_ptr, dloss_stride, lse_ptr, labels_ptr,
                     VOCAB: tl.constexpr, TILE: tl.constexpr, CAPPED: tl.constexpr, CAP: tl.constexpr):
    """Program (row, tile): logits <- dloss * d(loss)/d(logits) over one tile of the row."""
    row = tl.program_id(0)
    cols = tl.program_id(1) * TILE + tl.arange(0, TILE)
    inside = cols < VOCAB
    logits_ptr += row.to(tl.int64) * logits_stride
    label = tl.load(labels_ptr + row).to(tl.int32)
    dloss = 0.0
    if label != -100:
        dloss = tl.load(dloss_ptr + row * dloss_stride)
    x = tl.load(logits_ptr + cols, mask=inside, other=-float("inf")).to(tl.float32)
    squashed = x
    if CAPPED:
        squashed = _tanh(x / CAP)
        x = CAP * squashed
    grad = tl.exp(x - tl.load(lse_ptr + row))
    grad = tl.where(cols == label, grad - 1.0, grad)
    if CAPPED:
        grad = grad * (1.0 - squashed * squashed)
    tl.store(logits_ptr + cols, dloss * grad, mask=inside)


class CrossEntropyFn(torch.autograd.Function):
    """Per-row losses of (rows, vocab) logits against (rows,) labels."""

    # portq: ports unsloth:unsloth/kernels/cross_entropy_loss.py::Fast_CrossEntropyLoss.forward
    # portq: not-carried unsloth:unsloth/kernels/cross_entropy_loss.py::Fast_CrossEntropyLoss.forward[logit_scaling] -- no logit scaling
    @staticmethod
    def forward(ctx, logits, labels, softcap=0.0):
        rows, vocab = logits.shape
        tile, warps = settings.row_block_and_warps(vocab)
        losses = torch.empty(rows, dtype=torch.float32, device=logits.device)
        lse = torch.empty(rows, dtype=torch.float32, device=logits.device)
        capped = softcap != 0
        _xent_fwd_kernel[(rows,)](logits, logits.stride(0), losses, lse, labels, VOCAB=vocab, TILE=tile,
                                  CAPPED=capped, CAP=softcap, num_warps=warps)
        ctx.save_for_backward(logits, lse, labels)
        ctx.capped, ctx.softcap = capped, softcap
        return losses

    # portq: ports unsloth:unsloth/kernels/cross_entropy_loss.py::Fast_CrossEntropyLoss.backward
    @staticmethod
    def backward(ctx, dlosses):
        logits, lse, labels = ctx.saved_tensors
        rows, vocab = logits.shape
        _xent_bwd_kernel[(rows, triton.cdiv(vocab, GRAD_TILE))](
            logits, logits.stride(0), dlosses, dlosses.stride(0), lse, labels,
            VOCAB=vocab, TILE=GRAD_TILE, CAPPED=ctx.capped, CAP=ctx.softcap, num_warps=8,
        )
        return logits, None, None


# portq: ports unsloth:unsloth/kernels/cross_entropy_loss.py::fast_cross_entropy_loss
# portq: not-carried unsloth:unsloth/kernels/cross_entropy_loss.py::fast_cross_entropy_loss[logit_scaling] -- no logit scaling
def cross_entropy_loss(logits, labels, softcap=0.0, n_items=None):
    """Mean loss of (batch, seqlen, vocab) logits over the labelled tokens (or over ``n_items``)."""
    batch, seqlen, vocab = logits.shape
    if labels.shape != (batch, seqlen):
        raise ValueError(f"labels of {tuple(labels.shape)} for logits of {tuple(logits.shape)}")
    losses = CrossEntropyFn.apply(logits.view(batch * seqlen, vocab), labels.view(-1), softcap)
    if n_items is None:
        n_items = torch.count_nonzero(labels != IGNORE_LABEL)
    return losses.sum() / n_items
