"""Decoder layer of the engine: rotary embedding of the packed queries and
keys of a prefill chunk (or of one decode step, offset by each sequence's
start position) and the MLP's SwiGLU gate, run by the engine's CUDA kernels
through the engine_kernels torch ops (csrc/bindings.cpp). The attention
itself and the projections stay in torch."""

import torch


def rotary_angles(max_positions, rot_dim, theta=10000.0, device="cuda"):
    """(max_positions, rot_dim) fp32 angles for the half-rotation layout, built on the device."""
    return torch.ops.engine_kernels.rope_angles(max_positions, rot_dim, theta, torch.device(device))


def rotate_packed(q, k, cu_seqlens, angles, start_positions=None):
    """q, k (tokens, heads, head_dim) packed by cu_seqlens -> rotated copies."""
    starts = start_positions if start_positions is not None else torch.empty(0, dtype=torch.int32, device=q.device)
    return (torch.ops.engine_kernels.rope_forward(q, cu_seqlens, angles, starts),
            torch.ops.engine_kernels.rope_forward(k, cu_seqlens, angles, starts))


def gated_mlp(x, w_gate_up, w_down):
    """x (tokens, hidden) -> down(silu(gate) * up), the gate and up projections fused in one GEMM."""
    return torch.ops.engine_kernels.swiglu(x @ w_gate_up) @ w_down
