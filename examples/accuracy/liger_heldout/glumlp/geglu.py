"""GeGLU with the tanh form of GELU, gelu_tanh(gate) * up, row by row,
forward only: the tree runs GeGLU blocks in inference and never
differentiates through them.

It activates; it does not compute the exact (erf) GELU.
"""

import torch
import triton
import triton.language as tl

from ._rows import contiguous_inputs, row_tile

# gelu_tanh(x) = 0.5 * x * (1 + tanh(SQRT_2_OVER_PI * (x + CUBIC * x^3)))
SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)
CUBIC = tl.constexpr(0.044715)


@triton.jit
def _tanh(x):
    # tanh from exp of a non-positive argument, so it never overflows.
    e = tl.exp(-2.0 * tl.abs(x))
    t = (1.0 - e) / (1.0 + e)
    return tl.where(x < 0, -t, t)


# portq: ports liger:src/liger_kernel/ops/geglu.py::_geglu_tanh_forward_kernel
# portq: not-carried liger:src/liger_kernel/ops/geglu.py::_geglu_tanh_backward_kernel -- inference only, no backward
@triton.jit
def _geglu_rows_fwd(gate_ptr, up_ptr, out_ptr, row_stride, width: tl.constexpr, TILE: tl.constexpr):
    """One program per row: out = gelu_tanh(gate) * up, gate taken in fp32."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, TILE)
    inside = cols < width
    start = row * row_stride
    gate = tl.load(gate_ptr + start + cols, mask=inside, other=0).to(tl.float32)
    up = tl.load(up_ptr + start + cols, mask=inside, other=0)
    inner = SQRT_2_OVER_PI * (gate + CUBIC * gate * gate * gate)
    act = 0.5 * gate * (1 + _tanh(inner))
    tl.store(out_ptr + start + cols, act.cast(up.dtype) * up, mask=inside)


# portq: ports liger:src/liger_kernel/ops/geglu.py::geglu_forward
# portq: not-carried liger:src/liger_kernel/ops/geglu.py::geglu_backward -- inference only, no backward
def geglu_fwd(gate, up):
    """(gate rows, up rows, out) for gate and up of the same (..., width) shape."""
    shape = gate.shape
    width = shape[-1]
    gate = gate.view(-1, width)
    up = up.view(-1, width)
    out = torch.empty_like(gate)
    tile, warps = row_tile(width)
    _geglu_rows_fwd[(gate.shape[0],)](gate, up, out, out.stride(-2), width=width, TILE=tile, num_warps=warps)
    return gate, up, out.view(*shape)


class GeGLUOp(torch.autograd.Function):
    """gelu_tanh(gate) * up; no backward."""

    # portq: ports liger:src/liger_kernel/ops/geglu.py::LigerGELUMulFunction.forward
    # portq: not-carried liger:src/liger_kernel/ops/geglu.py::LigerGELUMulFunction.backward -- inference only, no backward
    @staticmethod
    @contiguous_inputs
    def forward(ctx, gate, up):
        return geglu_fwd(gate, up)[2]
