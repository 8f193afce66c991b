"""The split-K reduce and the tile choice of the 16-bit GEMM (upstream keeps
them in the kernel file; here they stay put when the GEMM kernel is swapped
for another snapshot, see examples/accuracy/gemm_copy_early)."""

import triton
import triton.language as tl


# portq: ports aiter:aiter/ops/triton/_triton_kernels/gemm/basic/gemm_a16w16.py::_gemm_a16w16_reduce_kernel @7cfe51983c
@triton.jit
def _gemm_a16w16_reduce_kernel(
    bias_ptr,
    c_in_ptr,
    c_out_ptr,
    M,
    N,
    stride_c_in_k,
    stride_c_in_m,
    stride_c_in_n,
    stride_c_out_m,
    stride_c_out_n,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    ACTUAL_KSPLIT: tl.constexpr,
    MAX_KSPLIT: tl.constexpr,
    activation: tl.constexpr,
    use_activation: tl.constexpr,
    ADD_BIAS: tl.constexpr,
):
    # Sum the split-K partial planes of one tile, then bias and activation.
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)

    offs_m = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_n = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, MAX_KSPLIT)
    c_in_ptrs = (
        c_in_ptr
        + offs_k[:, None, None] * stride_c_in_k
        + offs_m[None, :, None] * stride_c_in_m
        + offs_n[None, None, :] * stride_c_in_n
    )
    if ACTUAL_KSPLIT == MAX_KSPLIT:
        c = tl.load(c_in_ptrs)
    else:
        c = tl.load(c_in_ptrs, mask=offs_k[:, None, None] < ACTUAL_KSPLIT, other=0.0)
    c = tl.sum(c, axis=0)
    acc_dtype = tl.float32 if c_in_ptr.type.element_ty != tl.int8 else tl.int32
    if ADD_BIAS:
        bias = tl.load(bias_ptr + offs_n).to(dtype=acc_dtype)
        c += tl.broadcast_to(bias[None, :], (BLOCK_SIZE_M, BLOCK_SIZE_N))
    if use_activation:
        c = activation(c)
    c = c.to(c_out_ptr.type.element_ty)
    c_out_ptrs = c_out_ptr + offs_m[:, None] * stride_c_out_m + offs_n[None, :] * stride_c_out_n
    tl.store(c_out_ptrs, c)


# portq: not-carried aiter:aiter/ops/triton/_triton_kernels/gemm/basic/gemm_a16w16.py::_get_config -- upstream reads tuned per-architecture JSON tables; this port picks one tile shape
def _get_config(M: int, N: int, K: int):
    """A fixed tile choice in place of upstream's tuned JSON tables (not
    carried): 128 × 128 × 64 tiles, split K only when M and N give too few
    tiles to fill the device."""
    tiles = triton.cdiv(M, 128) * triton.cdiv(N, 128)
    ksplit = 1 if tiles >= 64 or K < 2048 else min(8, triton.cdiv(K, 1024))
    return {
        "BLOCK_SIZE_M": 128,
        "BLOCK_SIZE_N": 128,
        "BLOCK_SIZE_K": 64,
        "GROUP_SIZE_M": 4,
        "NUM_KSPLIT": ksplit,
        "SPLITK_BLOCK_SIZE": triton.cdiv(triton.cdiv(K, ksplit), 64) * 64,
        "cache_modifier": None,
        "num_warps": 8,
        "num_stages": 2,
    }
