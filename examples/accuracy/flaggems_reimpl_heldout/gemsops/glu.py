"""The gates of a gated MLP: SiLU(x) * y and tanh-GELU(x) * y elementwise,
computed in fp32 and stored in the inputs' dtype, plus the packed form that
takes both halves from one projection.

Forward only, operands of one shape (no broadcasting); it knows nothing of
the projections around it.
"""

import torch
import triton
import triton.language as tl

from .launch import GATE_BLOCK

# Gates the element kernel knows, chosen at compile time.
SILU = tl.constexpr(0)
GELU_TANH = 1
# sqrt(2 / pi), the tanh-GELU's inner scale.
SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)


# portq: ports flaggems:src/flag_gems/fused/silu_and_mul.py::silu_and_mul_kernel
@triton.jit
def _silu_mul(x, y):
    x32 = x.to(tl.float32)
    return x32 / (1.0 + tl.exp(-x32)) * y


# portq: ports flaggems:src/flag_gems/fused/gelu_and_mul.py::gelu_tanh_and_mul_kernel
# portq: not-carried flaggems:src/flag_gems/fused/gelu_and_mul.py::gelu_none_and_mul_kernel -- the engine's models use the tanh GELU only
@triton.jit
def _gelu_tanh_mul(x, y):
    x32 = x.to(tl.float32)
    inner = SQRT_2_OVER_PI * x32 * (1 + 0.044715 * x32 * x32)
    e = tl.exp(2 * inner)
    return 0.5 * x32 * (1 + (e - 1) / (e + 1)) * y


@triton.jit
def _gated_kernel(out, gate, up, numel, gate_stride, up_stride, width, GATE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = offs < numel
    row = offs // width
    col = offs % width
    x = tl.load(gate + row * gate_stride + col, mask=keep, other=0.0)
    y = tl.load(up + row * up_stride + col, mask=keep, other=0.0)
    if GATE == SILU:
        z = _silu_mul(x, y)
    else:
        z = _gelu_tanh_mul(x, y)
    tl.store(out + offs, z.to(out.dtype.element_ty), mask=keep)


def _launch_gate(gate: torch.Tensor, up: torch.Tensor, which: int) -> torch.Tensor:
    if gate.shape != up.shape:
        raise ValueError(f"gate and up must have one shape, got {tuple(gate.shape)} and {tuple(up.shape)}")
    width = gate.shape[-1]
    gate2 = gate.reshape(-1, width)
    up2 = up.reshape(-1, width)
    if gate2.stride(-1) != 1:
        gate2 = gate2.contiguous()
    if up2.stride(-1) != 1:
        up2 = up2.contiguous()
    out = torch.empty(gate.shape, dtype=torch.promote_types(gate.dtype, up.dtype), device=gate.device)
    numel = out.numel()
    grid = (triton.cdiv(numel, GATE_BLOCK),)
    _gated_kernel[grid](out, gate2, up2, numel, gate2.stride(0), up2.stride(0), width, GATE=which, BLOCK=GATE_BLOCK)
    return out


class SiluMulFn(torch.autograd.Function):
    """SiLU(a) * b as an autograd Function, for callers that go through ``.apply``."""

    # portq: ports flaggems:src/flag_gems/fused/silu_and_mul.py::SiluAndMul.forward
    @staticmethod
    def forward(ctx, a, b):
        return _launch_gate(a, b, SILU)


# portq: ports flaggems:src/flag_gems/fused/silu_and_mul.py::silu_and_mul
def silu_and_mul(a, b):
    """SiLU(a) * b, elementwise."""
    return SiluMulFn.apply(a, b)


def silu_and_mul_packed(h):
    """SiLU of the first half of ``h``'s last dimension times its second half:
    the output of a merged gate-and-up projection, gated without a copy."""
    gate, up = h.chunk(2, dim=-1)
    return _launch_gate(gate, up, SILU)


# portq: ports flaggems:src/flag_gems/fused/gelu_and_mul.py::gelu_and_mul
# portq: not-carried flaggems:src/flag_gems/fused/gelu_and_mul.py::gelu_and_mul[approximate] -- tanh GELU only: there is no approximation to choose
# portq: not-carried flaggems:src/flag_gems/fused/gelu_and_mul.py::GeluAndMul -- forward only: the gate is launched directly, not through an autograd Function
def gelu_and_mul(a, b):
    """tanh-GELU(a) * b, elementwise."""
    return _launch_gate(a, b, GELU_TANH)
