"""Decoder layer of the engine: rotary embedding of the packed queries and
keys of a prefill chunk (or of one decode step, offset by each sequence's
start position) and the MLP's gated SiLU, run by Transformer Engine's
vendored CUDA kernels through the engine_te torch ops (csrc/te_ops.cu). The
attention itself and the projections stay in torch."""

import torch


def rotary_angles(max_positions, rot_dim, base=10000.0, device="cuda"):
    """(max_positions, rot_dim) fp32 angles, each half repeating the inverse frequencies."""
    inv_freq = 1.0 / (base ** (torch.arange(0, rot_dim, 2, device=device, dtype=torch.float32) / rot_dim))
    angles = torch.outer(torch.arange(max_positions, device=device, dtype=torch.float32), inv_freq)
    return torch.cat([angles, angles], dim=-1)


def rotate_packed(q, k, cu_seqlens, angles, start_positions=None):
    """q, k (tokens, heads, head_dim) packed by cu_seqlens -> rotated copies."""
    starts = start_positions if start_positions is not None else torch.empty(0, dtype=torch.int32, device=q.device)
    return (torch.ops.engine_te.rope_forward(q, cu_seqlens, angles, starts),
            torch.ops.engine_te.rope_forward(k, cu_seqlens, angles, starts))


def gated_mlp(x, w_gate_up, w_down):
    """x (tokens, hidden) -> down(silu(gate) * up), the gate and up projections fused in one GEMM."""
    return torch.ops.engine_te.swiglu(x @ w_gate_up) @ w_down
