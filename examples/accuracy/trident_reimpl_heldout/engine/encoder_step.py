"""One pre-norm attention step and the output head's distribution: layer norm,
single-head attention weights by softmax, and the next-token probabilities.
Calls rowops; owns no kernels."""

import torch

import rowops.softmax as row_softmax
from rowops.layernorm import LayerNormOp as Norm


class EncoderStep:
    """Projections of one single-head layer and the head, with the norm's weight and bias."""

    def __init__(self, wq, wk, wv, head, norm_weight, norm_bias, eps: float = 1e-5):
        self.wq, self.wk, self.wv, self.head = wq, wk, wv, head
        self.norm_weight, self.norm_bias, self.eps = norm_weight, norm_bias, eps

    def __call__(self, hidden: torch.Tensor, temperature: float = 1.0):
        width = hidden.shape[-1]
        x = Norm.forward(hidden.contiguous(), (width,), self.norm_weight, self.norm_bias, self.eps)
        q, k, v = x @ self.wq, x @ self.wk, x @ self.wv
        scores = (q @ k.transpose(0, 1)) / (q.shape[-1] ** 0.5)
        attn = row_softmax.SoftmaxOp.forward(scores.contiguous(), 1)
        mixed = x + attn @ v
        probs = row_softmax.softmax_with_temperature(mixed[-1:] @ self.head, temperature)
        return mixed, probs
