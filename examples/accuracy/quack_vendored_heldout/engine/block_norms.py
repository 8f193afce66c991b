"""The norms of one decoder block on the vendored QuACK RMSNorm/LayerNorm:
the attention input's norm with the residual stream, the final norm layer,
a LayerNorm'd head, and an explicit forward/backward step for a norm weight.
Owns no kernels; the vendored module is upstream's, unmodified."""

import torch

import quack.rmsnorm as qnorm
from quack.rmsnorm import QuackRMSNorm
from quack.rmsnorm import layernorm_fwd as head_norm
from quack.rmsnorm import rmsnorm_bwd as rms_backward


class DecoderNorms:
    """Holds the block's norm weights and applies them in the block's order."""

    def __init__(self, hidden: int, eps: float = 1e-6, device=None):
        self.eps = eps
        self.attn_weight = torch.ones(hidden, device=device)
        self.final = QuackRMSNorm(hidden, eps=eps, device=device)
        self.head_weight = torch.ones(hidden, device=device)
        self.head_bias = torch.zeros(hidden, device=device)

    def attn_input(self, hidden_states, residual):
        """(normed, new residual) for the attention input."""
        return qnorm.rmsnorm(hidden_states, self.attn_weight, residual=residual,
                             eps=self.eps, prenorm=True)

    def final_norm(self, hidden_states):
        return self.final(hidden_states)

    def head_input(self, hidden_states):
        flat = hidden_states.reshape(-1, hidden_states.shape[-1])
        return head_norm(flat, self.head_weight, self.head_bias, eps=self.eps).reshape(hidden_states.shape)


def norm_train_step(x: torch.Tensor, weight: torch.Tensor, grad_out: torch.Tensor, eps: float = 1e-6):
    """RMSNorm forward keeping rstd, then the backward by hand: (out, dx, dweight)."""
    out, _, rstd = qnorm.rmsnorm_fwd(x, weight, eps=eps, store_rstd=True)
    dx, dweight, _, _ = rms_backward(x, weight, grad_out, rstd)
    return out, dx, dweight
