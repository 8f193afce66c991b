"""The parts of a decoder block around attention: the input norm, the
rotation of q and k, and the gated MLP's activation."""

import torch

import fastops.rope
from fastops import swiglu as sg
from fastops.rmsnorm import RMSNormFn


class BlockNorm:
    """An RMSNorm with its learned scale, in the attribute names upstream's callers read."""

    def __init__(self, width: int, eps: float = 1e-6, device=None, dtype=torch.float32):
        self.weight = torch.ones(width, device=device, dtype=dtype)
        self.variance_epsilon = eps

    def __call__(self, hidden: torch.Tensor) -> torch.Tensor:
        return RMSNormFn.apply(hidden, self.weight, self.variance_epsilon)


class Rotary:
    """cos/sin tables built once for every position the engine serves."""

    def __init__(self, positions: int, head_dim: int, base: float = 10000.0, device=None):
        self.cos, self.sin = fastops.rope.rope_tables(positions, head_dim, base, device=device)

    def __call__(self, q: torch.Tensor, k: torch.Tensor):
        """q and k of (batch, heads, seqlen, head_dim), rotated by their positions."""
        seqlen = q.shape[2]
        return fastops.rope.apply_rope(q, k, self.cos[:seqlen].to(q.dtype), self.sin[:seqlen].to(q.dtype))


def mlp_activation(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """The gated product the down projection reads."""
    return sg.silu_mul(gate, up)
