"""The SwiGLU gate of the MLP, forward only: h = silu(e) * g elementwise.

It gates; it does not project, and it has no backward (the engine serves).
"""

import torch
import triton
import triton.language as tl

# Elements one program gates.
GATE_TILE = 1024


# portq: ports unsloth:unsloth/kernels/swiglu.py::_fg_kernel
# portq: not-carried unsloth:unsloth/kernels/swiglu.py::_DWf_DW_dfg_kernel -- inference only, no backward
@triton.jit
def _silu_mul_kernel(e_ptr, g_ptr, h_ptr, n, TILE: tl.constexpr):
    """h = silu(e) * g, with silu taken in fp32 and cast to g's dtype before the product."""
    offsets = tl.program_id(0) * TILE + tl.arange(0, TILE)
    inside = offsets < n
    e = tl.load(e_ptr + offsets, mask=inside, other=0).to(tl.float32)
    g = tl.load(g_ptr + offsets, mask=inside, other=0)
    gate = (e * tl.sigmoid(e)).to(g.dtype)
    tl.store(h_ptr + offsets, gate * g, mask=inside)


# portq: ports unsloth:unsloth/kernels/swiglu.py::swiglu_fg_kernel
# portq: not-carried unsloth:unsloth/kernels/swiglu.py::swiglu_DWf_DW_dfg_kernel -- inference only, no backward
def silu_mul(e, g):
    """(batch, seqlen, hidden) gate and up projections to their gated product."""
    batch, seqlen, hidden = e.shape
    n = e.numel()
    h = torch.empty((batch, seqlen, hidden), dtype=e.dtype, device=e.device)
    _silu_mul_kernel[(triton.cdiv(n, GATE_TILE),)](e, g, h, n, TILE=GATE_TILE)
    return h
