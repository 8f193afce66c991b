"""A decoder block's feed-forward half: residual around a pre-normalised FFN."""

import torch

from . import ffn


class FeedForwardHalf:
    """x + ffn(norm(x)), with SwiGLU or (inference only) GeGLU."""

    def __init__(self, width: int, hidden: int, kind: str = "swiglu"):
        if kind not in ("swiglu", "geglu"):
            raise ValueError(f"kind {kind!r}: expected 'swiglu' or 'geglu'")
        self.kind = kind
        self.mlp = ffn.dense_ffn(width, hidden)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        normed = torch.nn.functional.rms_norm(x, x.shape[-1:])
        if self.kind == "geglu":
            m = self.mlp
            return x + ffn.geglu_ffn(normed, m.gate_proj.weight, m.up_proj.weight, m.down_proj.weight)
        return x + self.mlp(normed)
