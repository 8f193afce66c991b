"""SwiGLU, silu(gate) * up, row by row, with its backward, which overwrites
the saved inputs with their gradients to save memory.

It activates; the projections around it belong to the caller (mlp.py).
"""

import torch
import triton
import triton.language as tl

from ._rows import contiguous_inputs, row_tile


# portq: ports liger:src/liger_kernel/ops/swiglu.py::silu
@triton.jit
def _silu(x):
    return x * tl.sigmoid(x)


# portq: ports liger:src/liger_kernel/ops/swiglu.py::_swiglu_forward_kernel
@triton.jit
def _swiglu_rows_fwd(gate_ptr, up_ptr, out_ptr, row_stride, width: tl.constexpr, TILE: tl.constexpr):
    """One program per row: out = silu(gate) * up, the sigmoid taken in fp32."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, TILE)
    inside = cols < width
    start = row * row_stride
    gate = tl.load(gate_ptr + start + cols, mask=inside, other=0).to(tl.float32)
    up = tl.load(up_ptr + start + cols, mask=inside, other=0)
    tl.store(out_ptr + start + cols, _silu(gate).cast(up.dtype) * up, mask=inside)


# portq: ports liger:src/liger_kernel/ops/swiglu.py::_swiglu_backward_kernel
@triton.jit
def _swiglu_rows_bwd(grad_ptr, gate_ptr, up_ptr, row_stride, width: tl.constexpr, TILE: tl.constexpr):
    """One program per row: gate and up are overwritten with d(gate) and d(up)."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, TILE)
    inside = cols < width
    start = row * row_stride
    grad = tl.load(grad_ptr + start + cols, mask=inside, other=0)
    gate = tl.load(gate_ptr + start + cols, mask=inside, other=0).to(tl.float32)
    up = tl.load(up_ptr + start + cols, mask=inside, other=0)
    sig = tl.sigmoid(gate)
    act = gate * sig
    d_up = grad * act
    d_gate = grad * (act * (1 - sig) + sig) * up
    tl.store(gate_ptr + start + cols, d_gate, mask=inside)
    tl.store(up_ptr + start + cols, d_up, mask=inside)


# portq: ports liger:src/liger_kernel/ops/swiglu.py::swiglu_forward
def swiglu_fwd(gate, up):
    """(gate rows, up rows, out) for gate and up of the same (..., width) shape."""
    shape = gate.shape
    width = shape[-1]
    gate = gate.view(-1, width)
    up = up.view(-1, width)
    out = torch.empty_like(gate)
    tile, warps = row_tile(width)
    _swiglu_rows_fwd[(gate.shape[0],)](gate, up, out, out.stride(-2), width=width, TILE=tile, num_warps=warps)
    return gate, up, out.view(*shape)


# portq: ports liger:src/liger_kernel/ops/swiglu.py::swiglu_backward
def swiglu_bwd(gate, up, grad):
    """Gradients of gate and up, written into the saved gate and up rows."""
    shape = grad.shape
    width = shape[-1]
    grad = grad.view(-1, width)
    tile, warps = row_tile(width)
    _swiglu_rows_bwd[(grad.shape[0],)](grad, gate, up, grad.stride(-2), width=width, TILE=tile, num_warps=warps)
    return gate.view(*shape), up.view(*shape)


class SwiGLUOp(torch.autograd.Function):
    """silu(gate) * up with a recomputing backward."""

    # portq: ports liger:src/liger_kernel/ops/swiglu.py::LigerSiLUMulFunction.forward
    @staticmethod
    @contiguous_inputs
    def forward(ctx, gate, up):
        gate, up, out = swiglu_fwd(gate, up)
        ctx.save_for_backward(gate, up)
        return out

    # portq: ports liger:src/liger_kernel/ops/swiglu.py::LigerSiLUMulFunction.backward
    @staticmethod
    @contiguous_inputs
    def backward(ctx, grad):
        gate, up = ctx.saved_tensors
        return swiglu_bwd(gate, up, grad)


def swiglu_packed(gate_up):
    """SwiGLU of a fused gate/up projection: the first half of the last
    dimension is the gate, the second half the up branch."""
    width = gate_up.shape[-1]
    if width % 2:
        raise ValueError(f"a packed gate/up projection needs an even last dimension, got {width}")
    gate, up = gate_up.split(width // 2, dim=-1)
    return SwiGLUOp.apply(gate, up)
