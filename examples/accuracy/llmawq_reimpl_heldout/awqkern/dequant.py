"""int4 to float dequantisation of AWQ's packed words, in registers.

Eight 4-bit codes share one int32. The order is interleaved: nibble p (bits
4p..4p+3) holds output column ORDER[p] of its group of eight, so that the
magic-number conversion of upstream's CUDA path yields columns 0..7 in
order. Read back: column c of a group sits at nibble NIBBLE_OF[c]."""

import triton
import triton.language as tl

ORDER = (0, 2, 4, 6, 1, 3, 5, 7)      # nibble -> column
NIBBLE_OF = (0, 4, 1, 5, 2, 6, 3, 7)  # column -> nibble


# portq: ports llmawq:awq/kernels/csrc/quantization/dequantize.cuh::dequantize_s4_to_fp16x2 @5f377ef
@triton.jit
def unpack_int4(words, cols):
    """The 4-bit code of column `cols` out of its packed word `words` (the
    same shape): nibble (c%8 -> 0,4,1,5,2,6,3,7) shifted down and masked."""
    c = cols % 8
    nibble = (c % 2) * 4 + c // 2
    return (words >> (nibble * 4)) & 0xF
