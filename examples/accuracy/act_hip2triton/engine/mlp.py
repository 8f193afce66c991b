"""The engine's gated MLP: gate_up projection, SiLU gating, down projection."""

import torch

from gatedact import silu_and_mul


def gated_mlp(x: torch.Tensor, w_gate_up: torch.Tensor, w_down: torch.Tensor) -> torch.Tensor:
    gate_up = x @ w_gate_up.T
    hidden = torch.empty(*gate_up.shape[:-1], gate_up.shape[-1] // 2, dtype=x.dtype, device=x.device)
    silu_and_mul(hidden, gate_up)
    return hidden @ w_down.T
