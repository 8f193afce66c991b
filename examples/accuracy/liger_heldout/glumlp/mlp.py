"""The dense SwiGLU feed-forward block: gate and up projections, SwiGLU,
down projection.

Built from sizes, not from a model configuration; mixture-of-experts and
packed-projection variants of upstream are not carried (the engine has
neither), and GeGLU blocks are assembled by the engine from the op.
"""

import torch.nn as nn

from .swiglu import SwiGLUOp

# portq: not-carried liger:src/liger_kernel/transformers/swiglu.py::LigerBlockSparseTop2MLP -- no mixture-of-experts layers here
# portq: not-carried liger:src/liger_kernel/transformers/swiglu.py::LigerPhi3SwiGLUMLP -- packed gate/up goes through swiglu_packed
# portq: not-carried liger:src/liger_kernel/transformers/swiglu.py::LigerQwen3MoeSwiGLUMLP -- no mixture-of-experts layers here
# portq: not-carried liger:src/liger_kernel/transformers/geglu.py::LigerGEGLUMLP -- the engine calls the GeGLU op directly

ACTIVATIONS = ("silu", "swish")


class SwiGLUMLP(nn.Module):
    """down(silu(gate(x)) * up(x)) without biases."""

    # portq: ports liger:src/liger_kernel/transformers/swiglu.py::LigerSwiGLUMLP.__init__
    # portq: not-carried liger:src/liger_kernel/transformers/swiglu.py::LigerSwiGLUMLP.__init__[config] -- sizes are passed directly, there is no model configuration
    def __init__(self, width, hidden, activation="silu"):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation {activation!r}: expected one of {', '.join(ACTIVATIONS)}")
        self.width = width
        self.hidden = hidden
        self.gate_proj = nn.Linear(width, hidden, bias=False)
        self.up_proj = nn.Linear(width, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, width, bias=False)

    # portq: ports liger:src/liger_kernel/transformers/swiglu.py::LigerSwiGLUMLP.forward
    def forward(self, x):
        return self.down_proj(SwiGLUOp.apply(self.gate_proj(x), self.up_proj(x)))
