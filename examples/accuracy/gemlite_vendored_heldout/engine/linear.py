"""A quantised linear for the engine. With GemLite's CUDA extension built,
the layer is upstream's GemLiteLinearTriton (packing, autotuned choice of
GEMM or GEMV); without it the engine packs the same way and calls the
vendored Triton entry points directly: the GEMV for a single row, the
GEMM otherwise."""

import importlib.util

import torch
import triton.language as tl

from gemlite.triton_kernels import gemm_A16fWnO16f_int32packing, gemv_A16fWnO16f_int32packing

HAS_EXT = importlib.util.find_spec("gemlite_lib") is not None


def pack_columns(codes, nbits):
    """uint8 codes (out, in) -> int32 (in * nbits / 32, out), the layer's layout."""
    w = codes.t().contiguous().to(torch.int32)
    per_word = 32 // nbits
    packed = torch.zeros((w.shape[0] // per_word, w.shape[1]), dtype=torch.int32, device=w.device)
    for j in range(per_word):
        packed |= w[j::per_word] << (nbits * j)
    return packed


def lowbit_matmul(x, packed, scales, zeros, nbits, group_size):
    """x (M, in) @ dequant(packed): scales/zeros (groups, out), fp16."""
    op = gemv_A16fWnO16f_int32packing if x.shape[0] == 1 else gemm_A16fWnO16f_int32packing
    return op.forward(x, packed, scales, zeros, nbits, group_size, 2**nbits - 1, 32 // nbits, tl.float16)


class QuantLinear(torch.nn.Module):
    def __init__(self, codes, scales, zeros, nbits, group_size):
        super().__init__()
        out_f, in_f = codes.shape
        self.nbits, self.group_size = nbits, group_size
        if HAS_EXT:
            from gemlite.core import GemLiteLinearTriton

            self.layer = GemLiteLinearTriton(nbits, group_size, in_f, out_f).pack(codes, scales, zeros)
        else:
            self.layer = None
            self.packed = pack_columns(codes, nbits)
            self.scales = scales.reshape(out_f, -1).t().contiguous()
            self.zeros = zeros.reshape(out_f, -1).t().contiguous()

    def forward(self, x):
        if self.layer is not None:
            return self.layer(x)
        flat = x.reshape(-1, x.shape[-1])
        out = lowbit_matmul(flat, self.packed, self.scales, self.zeros, self.nbits, self.group_size)
        return out.view(*x.shape[:-1], -1)
