"""Forward-only Triton kernels of the engine's feed-forward block: RMS
normalisation and the SiLU-gated product. Re-exports the host entry points;
holds no kernels of its own and imports nothing from engine/."""

from .blocks import POW2_BLOCKS, norm_tiles
from .norm import RMSNormOp, rms_norm, rms_norm_reference
from .gated import SwiGLUOp, swiglu, swiglu_reference

__all__ = [
    "POW2_BLOCKS",
    "norm_tiles",
    "RMSNormOp",
    "rms_norm",
    "rms_norm_reference",
    "SwiGLUOp",
    "swiglu",
    "swiglu_reference",
]
