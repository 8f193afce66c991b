"""The pre-attention half of a decoder block: add the residual stream and
RMS-normalise it, then rotate the heads of q and k by their positions."""

import torch

import faops.rotary
from faops import norm as nm


class RotaryTables:
    """cos/sin tables for every position the engine serves, built once."""

    def __init__(self, max_positions: int, rotary_dim: int, base: float = 10000.0, device=None, dtype=torch.float32):
        self.cos, self.sin = faops.rotary.cos_sin_table(max_positions, rotary_dim, base, device=device, dtype=dtype)


class PreAttention:
    """RMSNorm with its weight, then rotary embedding of q and k."""

    def __init__(self, width: int, tables: RotaryTables, eps: float = 1e-6, gptj_pairs: bool = False, device=None):
        self.weight = torch.ones(width, device=device)
        self.eps = eps
        self.tables = tables
        self.gptj_pairs = gptj_pairs

    def normalise(self, hidden: torch.Tensor, residual: torch.Tensor | None):
        """(normed, new residual) of the block's input and the residual stream so far."""
        return nm.rms_norm(hidden, self.weight, None, residual=residual, eps=self.eps, prenorm=True,
                           residual_in_fp32=True)

    def rotate(self, q: torch.Tensor, k: torch.Tensor, positions_done: int | torch.Tensor = 0):
        """q and k of (batch, seqlen, heads, headdim), rotated from ``positions_done`` on."""
        cos, sin = self.tables.cos.to(q.dtype), self.tables.sin.to(q.dtype)
        q = faops.rotary.rotary_emb(q, cos, sin, self.gptj_pairs, False, positions_done)
        k = faops.rotary.rotary_emb(k, cos, sin, self.gptj_pairs, False, positions_done)
        return q, k
