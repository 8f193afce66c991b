"""3-bit weight-only quantisation for the engine: the per-channel min/max
grid quantiser, the 3-bit bitstream packing (32 codes in three int32 words,
codes straddling word boundaries), a Triton matrix-vector kernel that
unpacks and dequantises as scale * q - zero in fp32, and the linear layer
that packs a float linear and calls the kernel. Must not import the engine."""

from .linear import Packed3Linear, pack_codes3, swap_linears, unpack_codes3
from .matvec import matvec3
from .quantizer import MinMaxQuantizer, round_to_grid

__all__ = [
    "MinMaxQuantizer",
    "Packed3Linear",
    "matvec3",
    "pack_codes3",
    "round_to_grid",
    "swap_linears",
    "unpack_codes3",
]
