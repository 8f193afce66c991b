"""One pre-norm attention step and the output head's distribution on the
vendored Trident operations: layer norm, attention weights by softmax, the
next-token probabilities. Owns no kernels; the vendored modules are
upstream's, unmodified."""

import torch

import trident.operation.softmax as row_softmax
from trident.operation.layer_norm import LayerNorm as Norm


class EncoderStep:
    """Projections of one single-head layer and the head, with the norm's weight and bias."""

    def __init__(self, wq, wk, wv, head, norm_weight, norm_bias, eps: float = 1e-5):
        self.wq, self.wk, self.wv, self.head = wq, wk, wv, head
        self.norm_weight, self.norm_bias, self.eps = norm_weight, norm_bias, eps

    def __call__(self, hidden: torch.Tensor, temperature: float = 1.0):
        width = hidden.shape[-1]
        x = Norm.apply(hidden.contiguous(), (width,), self.norm_weight, self.norm_bias, self.eps)
        q, k, v = x @ self.wq, x @ self.wk, x @ self.wv
        scores = (q @ k.transpose(0, 1)) / (q.shape[-1] ** 0.5)
        attn = row_softmax.Softmax.apply(scores.contiguous(), 1)
        mixed = x + attn @ v
        logits = (mixed[-1:] @ self.head).float() / temperature
        return mixed, row_softmax.Softmax.apply(logits.contiguous(), 1)
