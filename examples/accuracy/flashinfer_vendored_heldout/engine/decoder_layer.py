"""Decoder layer of the engine around attention: the input norm, RoPE on the
packed queries and keys, and the MLP's SiLU gate, run by FlashInfer's vendored
CUDA kernels through the engine_fi torch ops (csrc/fi_ops.cu)."""

import torch


def input_norm(x, weight, eps=1e-6):
    """x (tokens, hidden) fp16 -> RMSNorm(x) * weight."""
    out = torch.empty_like(x)
    torch.ops.engine_fi.rms_norm(out, x, weight, eps)
    return out


def rotate_qk(q, k, indptr, offsets, rope_theta=1e4, rope_scale=1.0):
    """Applies non-interleaved (Llama) RoPE to q and k in place; indptr splits the packed
    tokens by request, offsets gives each request's first position."""
    torch.ops.engine_fi.apply_rope_inplace(q, k, indptr, offsets, False, rope_scale, rope_theta)
    return q, k


def mlp_gate(gate_up):
    """gate_up (tokens, 2 * d) fp16 -> silu(gate) * up, (tokens, d)."""
    out = torch.empty(*gate_up.shape[:-1], gate_up.shape[-1] // 2, dtype=gate_up.dtype, device=gate_up.device)
    torch.ops.engine_fi.silu_and_mul(out, gate_up)
    return out
