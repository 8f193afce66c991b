"""A video-diffusion self-attention block on the vendored modules:
projections in torch, the sparse entry point for long sequences, dense int8
attention on the vendored per-block quantiser for short ones. The engine
sets its own sparsity thresholds. Owns no kernels; the vendored modules are
upstream's, unmodified."""

import torch

from spas_sage_attn.quant_per_block import per_block_int8

try:
    from spas_sage_attn.core import spas_sage_attn_meansim_cuda
except ImportError:  # the CUDA extension is not built on this machine
    spas_sage_attn_meansim_cuda = None

SIM_THRESHOLD = 0.3
CDF_THRESHOLD = 0.96
SPARSE_MIN_LEN = 128


def _dense_int8(q, k, v, scale):
    q_int8, q_scale, k_int8, k_scale = per_block_int8(q, k, sm_scale=scale)
    n_q, n_k = q.shape[-2], k.shape[-2]
    qf = q_int8.float() * q_scale.repeat_interleave(128, dim=-2)[..., :n_q, :]
    kf = k_int8.float() * k_scale.repeat_interleave(64, dim=-2)[..., :n_k, :]
    probs = torch.softmax((qf @ kf.transpose(-1, -2)) / 1.44269504, dim=-1)
    return (probs @ v.float()).to(q.dtype)


def self_attention(x, w_qkv, w_out, heads, causal=False):
    """x (B, L, E) fp16; w_qkv (E, 3E); w_out (E, E)."""
    batch, length, width = x.shape
    dim = width // heads
    qkv = (x @ w_qkv).view(batch, length, 3, heads, dim).permute(2, 0, 3, 1, 4)
    q, k, v = (t.contiguous() for t in qkv)
    if length >= SPARSE_MIN_LEN:
        assert spas_sage_attn_meansim_cuda is not None, "the sparse path needs SpargeAttn's CUDA extension"
        o = spas_sage_attn_meansim_cuda(q, k, v, is_causal=causal, simthreshd1=SIM_THRESHOLD, cdfthreshd=CDF_THRESHOLD)
    else:
        assert not causal, "short sequences are non-causal in this engine"
        o = _dense_int8(q, k, v, dim ** -0.5)
    return x + o.transpose(1, 2).reshape(batch, length, width) @ w_out
