"""SiLU-gated product (SwiGLU), forward only: an elementwise Triton kernel,
its host launch and a torch reference. Must not save anything for a backward."""

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from .blocks import POW2_BLOCKS


# portq: ports cutekernels:khd/kernels/swiglu/triton_implementation.py::swiglu_forward_triton_kernel
@triton.jit
def silu_gate_kernel(gate, up, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    g = tl.load(gate + offs, mask=ok).to(tl.float32)
    u = tl.load(up + offs, mask=ok)
    tl.store(out + offs, u * (g * tl.sigmoid(g)), mask=ok)


# portq: not-carried cutekernels:khd/kernels/swiglu/triton_implementation.py::swiglu_backward_triton_kernel -- inference only, no gradient
# portq: not-carried cutekernels:khd/kernels/swiglu/__init__.py::_Swiglu_KHD.backward -- inference only, no gradient
class SwiGLUOp:
    """Host side of the forward: checks the pair and launches one program per block."""

    # portq: ports cutekernels:khd/kernels/swiglu/__init__.py::_Swiglu_KHD.forward
    # portq: not-carried cutekernels:khd/kernels/swiglu/__init__.py::_Swiglu_KHD.forward[kernel_backend_forward] -- no CUDA backend, Triton only
    @staticmethod
    def forward(gate: torch.Tensor, up: torch.Tensor, block: int) -> torch.Tensor:
        assert gate.shape == up.shape, "gate and up must have the same shape"
        assert gate.dtype == up.dtype, "gate and up must have the same dtype"
        if gate.stride() != up.stride():
            gate, up = gate.contiguous(), up.contiguous()
        out = torch.empty_like(gate)
        n = gate.numel()
        silu_gate_kernel[(triton.cdiv(n, block),)](gate, up, out, n, BLOCK=block)
        return out


# portq: ports cutekernels:khd/kernels/swiglu/__init__.py::swiglu_khd
# portq: not-carried cutekernels:khd/kernels/swiglu/__init__.py::swiglu_khd[kernel_backend_backward] -- inference only, no gradient
# portq: not-carried cutekernels:khd/kernels/swiglu/__init__.py::swiglu_khd[BLOCK_SIZE_backward] -- inference only, no gradient
def swiglu(gate: torch.Tensor, up: torch.Tensor, block: int = POW2_BLOCKS[-1]) -> torch.Tensor:
    return SwiGLUOp.forward(gate, up, block)


# portq: ports cutekernels:khd/kernels/swiglu/torch_implementation.py::swiglu_torch
def swiglu_reference(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    return up * F.silu(gate)
