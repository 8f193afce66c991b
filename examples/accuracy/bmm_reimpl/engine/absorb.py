"""MLA weight absorption in the decode path: per head, the query's nope part
is multiplied by that head's W_UK (and the attention output by W_UV)."""

import torch

from mlabmm import bmm_bf16


def absorb_query(q_nope: torch.Tensor, w_uk: torch.Tensor) -> torch.Tensor:
    """q_nope (heads, tokens, nope) times w_uk (heads, latent, nope)^T."""
    return bmm_bf16(q_nope, w_uk, out_dtype=q_nope.dtype)


def expand_output(o_latent: torch.Tensor, w_uv: torch.Tensor) -> torch.Tensor:
    """o_latent (heads, tokens, latent) times w_uv (heads, v_dim, latent)^T."""
    return bmm_bf16(o_latent, w_uv, out_dtype=o_latent.dtype)
