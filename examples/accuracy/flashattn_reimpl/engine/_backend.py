"""Which attention implementation the engine runs: the Triton port, bound
once here so the layers do not import the port themselves."""

import fa2tri.launch as fa_launch
from fa2tri import flash_attn_fwd as fused_attention

__all__ = ["fa_launch", "fused_attention"]
