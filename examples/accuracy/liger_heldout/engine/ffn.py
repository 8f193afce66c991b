"""Feed-forward layers of a decoder block: the dense SwiGLU block, a fused
gate/up SwiGLU and an inference-only GeGLU block."""

import torch

import glumlp.geglu as gg
from glumlp import swiglu_packed
from glumlp.mlp import SwiGLUMLP as DenseFFN
from glumlp.swiglu import SwiGLUOp


def dense_ffn(width: int, hidden: int) -> torch.nn.Module:
    """The SwiGLU feed-forward block of a decoder layer."""
    return DenseFFN(width, hidden)


def gated_silu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """silu(gate) * up for callers that project gate and up themselves."""
    return SwiGLUOp.apply(gate, up)


def fused_gate_up(gate_up: torch.Tensor) -> torch.Tensor:
    """SwiGLU of a single gate/up projection, gate first."""
    return swiglu_packed(gate_up)


def geglu_ffn(x: torch.Tensor, gate_w: torch.Tensor, up_w: torch.Tensor, down_w: torch.Tensor) -> torch.Tensor:
    """down(gelu_tanh(x gate_w^T) * x up_w^T) in inference."""
    with torch.no_grad():
        _, _, act = gg.geglu_fwd(x @ gate_w.t(), x @ up_w.t())
        return act @ down_w.t()
