"""Triton ops of a decoder block: RMSNorm (plain and after a residual add),
the SiLU and tanh-GELU gates of a gated MLP, and the NeoX rotary embedding.

Re-exports what the engine calls; the kernels live in the submodules. The
ops run forward only, on one NVIDIA GPU at a time. Nothing here knows about
models, schedulers or how upstream registers its operators with torch.
"""

# Upstream wraps its kernels in a launch cache and a pointwise code generator;
# these ops launch plain triton.jit kernels with their own grids instead.

from . import rope
from .glu import SiluMulFn, gelu_and_mul, silu_and_mul, silu_and_mul_packed
from .norms import RMSNormFn, add_rms_norm, rms_norm

__all__ = [
    "RMSNormFn", "SiluMulFn", "add_rms_norm", "gelu_and_mul", "rms_norm", "rope",
    "silu_and_mul", "silu_and_mul_packed",
]
