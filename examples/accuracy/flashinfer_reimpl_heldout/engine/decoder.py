"""Decoder layer of the engine around attention: the input norm, RoPE on the
packed queries and keys, and the MLP's SiLU gate, run by the engine's own CUDA
kernels (csrc/) through the engine_fi torch ops of csrc/bindings.cu."""

import torch


def input_norm(x, weight, eps=1e-6):
    """x (tokens, hidden) fp16/bf16 -> RMSNorm(x) * weight."""
    out = torch.empty_like(x)
    torch.ops.engine_fi.launch_rms_norm(out, x.contiguous(), weight, eps)
    return out


def rotate_qk(q, k, indptr, offsets, rope_theta=1e4, rope_scale=1.0):
    """Rotate-half RoPE on q (tokens, q_heads, head_dim) and k (tokens, kv_heads, head_dim) in
    place; indptr splits the packed tokens by request, offsets gives each request's first
    position."""
    torch.ops.engine_fi.launch_rope_inplace(q, k, indptr, offsets, rope_scale, rope_theta)
    return q, k


def mlp_gate(gate_up):
    """gate_up (tokens, 2 * d) -> silu(gate) * up, (tokens, d)."""
    out = gate_up.new_empty(*gate_up.shape[:-1], gate_up.shape[-1] // 2)
    torch.ops.engine_fi.launch_silu_and_mul(out, gate_up.contiguous())
    return out
