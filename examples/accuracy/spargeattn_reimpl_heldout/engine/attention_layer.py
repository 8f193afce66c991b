"""A video-diffusion self-attention block: projections in torch, sparse
attention for long sequences, dense int8 attention (per-tile quantised Q and
K) for short ones. The engine sets its own sparsity thresholds. Owns no
kernels."""

import torch

from sparsekern.attention import sparse_sage_attention
from sparsekern.quant import quantize_qk_per_tile

SIM_THRESHOLD = 0.3
CDF_THRESHOLD = 0.96
SPARSE_MIN_LEN = 128


def _dense_int8(q, k, v, scale):
    q_codes, q_scale, k_codes, k_scale = quantize_qk_per_tile(q, k, sm_scale=scale)
    n_q, n_k = q.shape[-2], k.shape[-2]
    qf = q_codes.float() * q_scale.repeat_interleave(128, dim=-2)[..., :n_q, :]
    kf = k_codes.float() * k_scale.repeat_interleave(64, dim=-2)[..., :n_k, :]
    probs = torch.softmax((qf @ kf.transpose(-1, -2)) / 1.44269504, dim=-1)
    return (probs @ v.float()).to(q.dtype)


def self_attention(x, w_qkv, w_out, heads, causal=False):
    """x (B, L, E) fp16; w_qkv (E, 3E); w_out (E, E)."""
    batch, length, width = x.shape
    dim = width // heads
    qkv = (x @ w_qkv).view(batch, length, 3, heads, dim).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    if length >= SPARSE_MIN_LEN:
        o = sparse_sage_attention(q, k, v, is_causal=causal, simthreshd1=SIM_THRESHOLD, cdfthreshd=CDF_THRESHOLD)
    else:
        assert not causal, "short sequences are non-causal in this engine"
        o = _dense_int8(q.contiguous(), k.contiguous(), v, dim ** -0.5)
    return x + o.transpose(1, 2).reshape(batch, length, width) @ w_out
