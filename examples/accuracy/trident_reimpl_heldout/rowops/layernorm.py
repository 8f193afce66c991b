"""Layer norm over the trailing normalised shape: each row's mean and
variance, then (x - mean) / sqrt(var + eps), scaled and shifted when a
weight and a bias are given.

Forward only: the engine never differentiates through it.
"""

import functools
import operator

import torch
import triton
import triton.language as tl

from .reduce import row_mean, row_variance, tile_and_warps

# Accumulator dtypes of the reductions, by input dtype.
ACC_DTYPE = {torch.float32: tl.float32, torch.float16: tl.float16}


# portq: ports trident:trident/kernel/layer_norm.py::LayerNorm.forward
@triton.jit
def layer_norm_row_kernel(src, width, weight, bias, eps, dst,
                          TILE: tl.constexpr, ACC: tl.constexpr,
                          HAS_WEIGHT: tl.constexpr, HAS_BIAS: tl.constexpr):
    row = tl.program_id(0)
    src += row * width
    dst += row * width
    centre = row_mean(src, width, TILE, ACC)
    spread = tl.sqrt(row_variance(src, width, centre, TILE, ACC) + eps)
    for start in range(0, width, TILE):
        cols = start + tl.arange(0, TILE)
        inside = cols < width
        vals = tl.load(src + cols, mask=inside, other=0.0)
        normed = (vals - centre) / spread
        if HAS_WEIGHT:
            normed *= tl.load(weight + cols, mask=inside, other=0.0)
        if HAS_BIAS:
            normed += tl.load(bias + cols, mask=inside, other=0.0)
        tl.store(dst + cols, normed.to(dst.dtype.element_ty), mask=inside)


# portq: not-carried trident:trident/kernel/layer_norm.py::LayerNorm.backward -- inference only, no gradient
# portq: not-carried trident:trident/operation/layer_norm.py::LayerNorm.setup_context -- inference only, nothing saved
# portq: not-carried trident:trident/operation/layer_norm.py::LayerNorm.backward -- inference only, no gradient
# portq: not-carried trident:trident/operation/layer_norm.py::LayerNorm.__backward -- inference only, no gradient
class LayerNormOp:
    """Layer norm's host side, called directly (no autograd)."""

    # portq: ports trident:trident/operation/layer_norm.py::LayerNorm.forward
    @staticmethod
    def forward(inp, norm_shape, weight, bias, eps):
        return LayerNormOp.launch(inp, norm_shape, weight, bias, eps)

    # portq: ports trident:trident/operation/layer_norm.py::LayerNorm.__forward
    @staticmethod
    def launch(inp, norm_shape, weight, bias, eps):
        if inp.dtype not in ACC_DTYPE:
            raise ValueError(f"layer_norm: dtype {inp.dtype}: expected float32 or float16")
        width = LayerNormOp.row_width(norm_shape)
        rows = inp.numel() // width
        out = torch.empty_like(inp)
        tile, warps = tile_and_warps(width, inp.element_size())
        layer_norm_row_kernel[(rows,)](inp, width, weight, bias, eps, out,
                                       TILE=tile, ACC=ACC_DTYPE[inp.dtype],
                                       HAS_WEIGHT=weight is not None, HAS_BIAS=bias is not None,
                                       num_warps=warps)
        return out

    # portq: ports trident:trident/operation/layer_norm.py::LayerNorm.__get_vec_sz
    @staticmethod
    def row_width(norm_shape) -> int:
        return functools.reduce(operator.mul, norm_shape, 1)


def layer_norm(inp, norm_shape, weight=None, bias=None, eps: float = 1e-5):
    """Layer norm of inp over its trailing norm_shape."""
    return LayerNormOp.forward(inp.contiguous(), tuple(norm_shape), weight, bias, eps)
