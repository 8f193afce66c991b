"""Softmax over the last axis of a 2-D contiguous tensor: the row's maximum,
the sum of exponentials, then the normalised row, in three tiled passes.

Forward only: the engine never differentiates through it.
"""

import torch
import triton
import triton.language as tl

from .reduce import row_max, tile_and_warps

# Warp multiplier softmax launches with over the shared tile-and-warp choice.
SOFTMAX_WARP_SCALE = 4


# portq: ports trident:trident/kernel/softmax.py::Softmax.forward
@triton.jit
def softmax_row_kernel(src, width, dst, TILE: tl.constexpr):
    row = tl.program_id(0)
    src += row * width
    dst += row * width
    peak = row_max(src, width, TILE)
    denom = 0.0
    for start in range(0, width, TILE):
        cols = start + tl.arange(0, TILE)
        vals = tl.load(src + cols, mask=cols < width, other=float("-inf")).to(tl.float32)
        denom += tl.sum(tl.exp(vals - peak), 0)
    for start in range(0, width, TILE):
        cols = start + tl.arange(0, TILE)
        inside = cols < width
        vals = tl.load(src + cols, mask=inside, other=float("-inf")).to(tl.float32)
        probs = tl.exp(vals - peak) / denom
        tl.store(dst + cols, probs.to(dst.dtype.element_ty), mask=inside)


# portq: not-carried trident:trident/kernel/softmax.py::Softmax.backward -- inference only, no gradient
# portq: not-carried trident:trident/operation/softmax.py::Softmax.setup_context -- inference only, nothing saved
# portq: not-carried trident:trident/operation/softmax.py::Softmax.backward -- inference only, no gradient
# portq: not-carried trident:trident/operation/softmax.py::Softmax.__backward -- inference only, no gradient
class SoftmaxOp:
    """Softmax's host side, called directly (no autograd)."""

    # portq: ports trident:trident/operation/softmax.py::Softmax.forward
    @staticmethod
    def forward(inp: torch.Tensor, axis: int) -> torch.Tensor:
        return SoftmaxOp.launch(inp, axis)

    # portq: ports trident:trident/operation/softmax.py::Softmax.__forward
    @staticmethod
    def launch(inp: torch.Tensor, axis: int) -> torch.Tensor:
        if not inp.is_contiguous() or inp.dim() != 2:
            raise ValueError("softmax: expected a contiguous 2-D tensor")
        if axis != 1:
            raise ValueError(f"softmax: axis {axis}: only the last axis (1) is supported")
        rows, width = inp.shape
        out = torch.empty_like(inp)
        tile, warps = tile_and_warps(width, inp.element_size(), SOFTMAX_WARP_SCALE)
        softmax_row_kernel[(rows,)](inp, width, out, TILE=tile, num_warps=warps)
        return out


def softmax(inp: torch.Tensor, axis: int = 1) -> torch.Tensor:
    """Softmax over axis 1 of a 2-D tensor."""
    return SoftmaxOp.forward(inp, axis)


def softmax_with_temperature(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """The sampler's distribution: softmax of logits / temperature, in float32."""
    if temperature <= 0:
        raise ValueError(f"softmax_with_temperature: temperature {temperature}: expected > 0")
    return SoftmaxOp.forward((logits.float() / temperature).contiguous(), 1)
