"""FP8 e4m3 quantisation with one scale per row or per 2-D block.

A quantised tensor holds ``x * scale`` cast to e4m3, and its scale is
``FP8_E4M3_MAX / amax`` of the row or block: dividing by the scale gives the
original values back. This module only quantises; the matmuls that consume
these tensors live in ``gemm``.
"""

import torch
import triton
import triton.language as tl

# Largest finite e4m3 value; every scale maps a row's or block's amax onto it.
FP8_E4M3_MAX = tl.constexpr(448.0)

ROW_TILE = 1024


# portq: ports fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::convert_fp8_type
def as_fp8(t: torch.Tensor) -> torch.Tensor:
    """The same bytes seen as e4m3 values (no conversion of the data)."""
    if t.dtype == torch.float8_e4m3fn:
        return t
    if t.element_size() != 1:
        raise ValueError(f"as_fp8: t has dtype {t.dtype}; expected a one-byte dtype")
    return t.view(torch.float8_e4m3fn)


# portq: not-carried fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::_kernel_quantize_fp8_row[M] -- one program per row, the row count is the grid
# portq: ports fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::_kernel_quantize_fp8_row
@triton.jit
def _rowwise_quant_kernel(x_ptr, scale_ptr, out_ptr, M, N, stride_xm, stride_xn,
                          TILE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, TILE)
    amax = 0.0
    for start in range(0, N, TILE):
        offs = start + cols
        x = tl.load(x_ptr + row * stride_xm + offs * stride_xn, mask=offs < N, other=0.0)
        amax = tl.maximum(amax, tl.max(tl.abs(x.to(tl.float32))))
    scale = FP8_E4M3_MAX / amax
    tl.store(scale_ptr + row, scale)
    for start in range(0, N, TILE):
        offs = start + cols
        x = tl.load(x_ptr + row * stride_xm + offs * stride_xn, mask=offs < N, other=0.0)
        q = (x.to(tl.float32) * scale).to(tl.float8e4nv)
        tl.store(out_ptr + row * stride_xm + offs * stride_xn, q, mask=offs < N)


# portq: ports fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::triton_quantize_fp8_row
def _launch_rowwise_quant(x: torch.Tensor):
    """One program per row of a 2-D ``x``: (e4m3 tensor, float32 scale per row)."""
    rows, cols = x.shape
    scale = torch.empty(rows, dtype=torch.float32, device=x.device)
    out = as_fp8(torch.empty((rows, cols), dtype=torch.uint8, device=x.device))
    _rowwise_quant_kernel[(rows,)](x, scale, out, rows, cols, x.stride(0), x.stride(1),
                                   TILE=min(ROW_TILE, triton.next_power_of_2(cols)))
    return out, scale


# portq: not-carried fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::quantize_fp8_row[output_device] -- weights are quantised on the device that serves them
# portq: ports fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::quantize_fp8_row
def quantize_rowwise(x: torch.Tensor, use_triton: bool = True):
    """Row-wise e4m3 quantisation of a 2-D ``x``: (quantised, scale per row).

    ``use_triton=False`` computes the same in torch (an all-zero row gets
    scale 1 there)."""
    if x.dim() != 2:
        raise ValueError(f"quantize_rowwise: x has shape {tuple(x.shape)}; expected 2-D")
    if use_triton:
        return _launch_rowwise_quant(x)
    amax = x.abs().amax(dim=1).to(torch.float32)
    scale = torch.finfo(torch.float8_e4m3fn).max / amax
    scale[scale == float("inf")] = 1.0
    return as_fp8((x * scale[:, None]).to(torch.float8_e4m3fn)), scale


def dequantize_rowwise(q: torch.Tensor, scale: torch.Tensor, dtype=torch.float32) -> torch.Tensor:
    """The values a row-wise quantised tensor stands for (the engine's checkpoint export)."""
    return (q.to(torch.float32) / scale[:, None]).to(dtype)


# portq: ports fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::_kernel_quantize_fp8_block
@triton.jit
def _blockwise_quant_kernel(x_ptr, scale_ptr, out_ptr, M, K, stride_xm, stride_xk,
                            stride_sm, stride_sk, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    blocks_k = tl.cdiv(K, BLOCK_K)
    bm = pid // blocks_k
    bk = pid % blocks_k
    rows = bm * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = bk * BLOCK_K + tl.arange(0, BLOCK_K)
    offs = rows[:, None] * stride_xm + cols[None, :] * stride_xk
    inside = (rows < M)[:, None] & (cols < K)[None, :]
    x = tl.load(x_ptr + offs, mask=inside, other=0.0).to(tl.float32)
    scale = FP8_E4M3_MAX / tl.max(tl.max(tl.abs(x), axis=1), axis=0)
    tl.store(scale_ptr + bm * stride_sm + bk * stride_sk, scale)
    tl.store(out_ptr + offs, (x * scale).to(tl.float8e4nv), mask=inside)


# portq: ports fbgemm:fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py::quantize_fp8_block
def quantize_blockwise(x: torch.Tensor, block_m: int = 256, block_k: int = 256):
    """Block-wise e4m3 quantisation of a 2-D ``x``: (quantised, scale per
    [block_m, block_k] block, shaped [cdiv(M, block_m), cdiv(K, block_k)])."""
    if x.dim() != 2:
        raise ValueError(f"quantize_blockwise: x has shape {tuple(x.shape)}; expected 2-D")
    M, K = x.shape
    grid_m, grid_k = triton.cdiv(M, block_m), triton.cdiv(K, block_k)
    scale = torch.ones((grid_m, grid_k), dtype=torch.float32, device=x.device)
    out = as_fp8(torch.empty((M, K), dtype=torch.uint8, device=x.device))
    _blockwise_quant_kernel[(grid_m * grid_k,)](x, scale, out, M, K, x.stride(0), x.stride(1),
                                                scale.stride(0), scale.stride(1),
                                                BLOCK_M=block_m, BLOCK_K=block_k)
    return out, scale
