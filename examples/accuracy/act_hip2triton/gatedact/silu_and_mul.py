"""out = silu(x) * y for input rows [x | y] of width 2 * d.

Ported from HIP to Triton: upstream launches one thread block per token
whose waves stride over the row VEC elements at a time; here one program per
token walks the row in chunks of num_waves * 64 * VEC elements, with the
same vector and wave counts, so the launch shape is the same. Computation is
in fp32; fp32 input may write bf16, fp16 or fp32, 16-bit input writes its
own type (upstream's rule).
"""

import torch
import triton
import triton.language as tl

# The surfaces of activation_kernels.cu this tree does not carry: the MLPs
# here use SiLU gating only, without a fused output scale.
# portq: not-carried aiter:csrc/kernels/activation_kernels.cu::scaled_act_and_mul_kernel -- no fused fp8/int8 output scale in this engine
# portq: not-carried aiter:csrc/kernels/activation_kernels.cu::scaled_silu_and_mul -- no fused fp8/int8 output scale in this engine
# portq: not-carried aiter:aiter/ops/activation.py::scaled_silu_and_mul -- no fused fp8/int8 output scale in this engine
# portq: not-carried aiter:csrc/kernels/activation_kernels.cu::gelu_kernel -- GELU-gated MLPs are not served
# portq: not-carried aiter:csrc/kernels/activation_kernels.cu::gelu_tanh_kernel -- GELU-gated MLPs are not served
# portq: not-carried aiter:csrc/kernels/activation_kernels.cu::gelu_and_mul -- GELU-gated MLPs are not served
# portq: not-carried aiter:csrc/kernels/activation_kernels.cu::gelu_tanh_and_mul -- GELU-gated MLPs are not served
# portq: not-carried aiter:aiter/ops/activation.py::gelu_and_mul -- GELU-gated MLPs are not served
# portq: not-carried aiter:aiter/ops/activation.py::gelu_tanh_and_mul -- GELU-gated MLPs are not served
# portq: not-carried aiter:csrc/kernels/activation_kernels.cu::gelu_fast -- ungated activations are not served
# portq: not-carried aiter:csrc/kernels/activation_kernels.cu::gelu_fast_kernel -- ungated activations are not served
# portq: not-carried aiter:csrc/kernels/activation_kernels.cu::activation_kernel_vec -- ungated activations are not served
# portq: not-carried aiter:csrc/kernels/activation_kernels.cu::fast_tanh -- ungated activations are not served
# portq: not-carried aiter:aiter/ops/activation.py::gelu_fast -- ungated activations are not served

WAVE = 64  # lanes per wave on the AMD GPUs upstream targets
MAX_VEC = 8
MAX_WAVES = 8


# portq: ports aiter:csrc/kernels/activation_kernels.cu::silu_kernel @d113c3fae1
@triton.jit
def _silu(x):
    return x / (1.0 + tl.exp(-x))


# portq: ports aiter:csrc/kernels/activation_kernels.cu::act_and_mul_kernel @d113c3fae1
@triton.jit
def _gated_rows(out, inp, d, in_row, out_row, CHUNK: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    gate = inp + token * in_row
    up = gate + d
    dst = out + token * out_row
    for start in range(0, d, CHUNK):
        cols = start + tl.arange(0, CHUNK)
        keep = cols < d
        g = tl.load(gate + cols, mask=keep, other=0.0).to(tl.float32)
        u = tl.load(up + cols, mask=keep, other=0.0).to(tl.float32)
        tl.store(dst + cols, (_silu(g) * u).to(dst.dtype.element_ty), mask=keep)


def _launch_shape(d: int) -> tuple[int, int]:
    """(vector width, waves per block) as upstream's host code picks them."""
    vec = min(max(triton.next_power_of_2(max(d // WAVE, 1)), 2), MAX_VEC)
    waves = min(triton.next_power_of_2(max(d // WAVE // vec, 1)), MAX_WAVES)
    return vec, waves


# portq: ports aiter:csrc/kernels/activation_kernels.cu::silu_and_mul @d113c3fae1
# portq: ports aiter:aiter/ops/activation.py::silu_and_mul @d113c3fae1
def silu_and_mul(out: torch.Tensor, input: torch.Tensor) -> None:
    """Write silu(input[..., :d]) * input[..., d:] into out (..., d)."""
    if input.shape[-1] % 2:
        raise ValueError(f"input is {tuple(input.shape)}: expected an even last dimension [x | y]")
    d = input.shape[-1] // 2
    if tuple(out.shape) != tuple(input.shape[:-1]) + (d,):
        raise ValueError(f"out is {tuple(out.shape)}: expected {tuple(input.shape[:-1]) + (d,)}")
    if input.dtype != torch.float32 and out.dtype != input.dtype:
        raise ValueError(f"out is {out.dtype}: expected {input.dtype} for {input.dtype} input")
    rows_in = input.reshape(-1, 2 * d)
    rows_out = out.view(-1, d)
    vec, waves = _launch_shape(d)
    grid = (rows_in.shape[0],)
    _gated_rows[grid](
        rows_out, rows_in, d, rows_in.stride(0), rows_out.stride(0),
        CHUNK=waves * WAVE * vec, num_warps=waves,
    )
