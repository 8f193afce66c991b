"""The norms of one decoder block: the attention input's RMSNorm with the
residual stream, the final RMSNorm layer, and a LayerNorm'd projection head.
Calls normops; owns no kernels."""

import torch

import normops.rms_norm as rms
from normops import RMSNormLayer
from normops.layernorm import layernorm_fwd as head_norm


class DecoderNorms:
    """Holds the block's norm weights and applies them in the block's order."""

    def __init__(self, hidden: int, eps: float = 1e-6, device=None):
        self.eps = eps
        self.attn_weight = torch.ones(hidden, device=device)
        self.final = RMSNormLayer(hidden, eps=eps, device=device)
        self.head_weight = torch.ones(hidden, device=device)
        self.head_bias = torch.zeros(hidden, device=device)

    def attn_input(self, hidden_states, residual):
        """(normed, new residual) for the attention input."""
        return rms.rmsnorm(hidden_states, self.attn_weight, residual=residual,
                           eps=self.eps, prenorm=True)

    def mlp_input(self, hidden_states, residual):
        """The residual stream updated in place; returns the normed sum."""
        return rms.add_rmsnorm_(hidden_states, residual, self.attn_weight, self.eps)

    def final_norm(self, hidden_states):
        return self.final(hidden_states)

    def head_input(self, hidden_states):
        flat = hidden_states.reshape(-1, hidden_states.shape[-1])
        return head_norm(flat, self.head_weight, self.head_bias, eps=self.eps).reshape(hidden_states.shape)
