"""4-bit AWQ weight-only quantisation for the engine: the grouped
zero-point pseudo-quantiser, the output-error clipping search over the
grouped weight, the packed linear layer (eight 4-bit codes per int32 word
in AWQ's interleaved order, zeros packed the same way, fp16 scales per
group) and a Triton dequantising GEMM behind its forward. Must not import
the engine."""

from .clip import clamp_to_clips, search_clip, search_clips
from .grid import fake_quantize, quantize_blocks
from .packed import Packed4Linear, interleave_shift, unpack_words
from .dequant_gemm import dequant_gemm

__all__ = [
    "Packed4Linear",
    "clamp_to_clips",
    "dequant_gemm",
    "fake_quantize",
    "interleave_shift",
    "quantize_blocks",
    "search_clip",
    "search_clips",
    "unpack_words",
]
