"""AWQ inference kernels for the engine: the W4A16 GEMM with in-register
int4 dequantisation (Triton), the quantised linear layer that packs and
calls it, the RMSNorm (Triton) and the neox rotary embedding (CUDA source
of our own under csrc/, built on first use). Must not import the engine."""

from .gemm import w4a16_gemm
from .qlinear import AWQLinear, pack_int4
from .rmsnorm import FusedRMSNorm, rms_norm

__all__ = ["w4a16_gemm", "AWQLinear", "pack_int4", "FusedRMSNorm", "rms_norm"]
