"""A fused GPTQ matmul in Triton: each program dequantises (BLOCK_K, BLOCK_N)
tiles of the packed weight in registers and accumulates x @ W in fp32. The
launcher takes the first tile shape ``tuning.shrink_block_configs`` leaves.
Forward only; it must not time kernels or hold the transposed backward.

# portq: not-carried gptqmodel:gptqmodel/nn_modules/triton_utils/kernels.py::transpose_quant_matmul_248_kernel -- backward only
# portq: not-carried gptqmodel:gptqmodel/nn_modules/triton_utils/kernels.py::transpose_quant_matmul_248 -- backward only
# portq: not-carried gptqmodel:gptqmodel/nn_modules/triton_utils/kernels.py::QuantLinearFunction.forward -- the training node; the engine calls the launchers
# portq: not-carried gptqmodel:gptqmodel/nn_modules/triton_utils/kernels.py::QuantLinearFunction.backward -- backward only
# portq: not-carried gptqmodel:gptqmodel/nn_modules/triton_utils/kernels.py::QuantLinearInferenceOnlyFunction.forward -- the engine calls the launchers, not an autograd node
"""

import torch
import triton
import triton.language as tl

from .tuning import shrink_block_configs

# Candidate tiles, widest first; shrunk to the problem and the first one launched.
FUSED_CONFIGS = [
    triton.Config({"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8},
                  num_stages=stages, num_warps=warps)
    for bm, bn, stages, warps in ((64, 256, 4, 4), (128, 128, 4, 4), (64, 128, 4, 4),
                                  (128, 32, 4, 4), (64, 64, 4, 4), (64, 128, 2, 8))
]


# portq: ports gptqmodel:gptqmodel/nn_modules/triton_utils/kernels.py::quant_matmul_248_kernel
@triton.jit
def _fused_qmatmul_kernel(
    x_ptr, packed_w_ptr, out_ptr, scale_ptr, packed_z_ptr, group_of_row_ptr,
    M, N, K, bits, value_mask,
    sx_m, sx_k, sw_k, sw_n, so_m, so_n, s_scale, s_zero,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
):
    per_word = 32 // bits
    # Grouped ordering: GROUP_SIZE_M row-tiles share each column sweep.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_SIZE_M)
    tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
    band = GROUP_SIZE_M * tiles_n
    first_m = (pid // band) * GROUP_SIZE_M
    band_rows = min(tiles_m - first_m, GROUP_SIZE_M)
    tm = first_m + (pid % band_rows)
    tn = (pid % band) // band_rows

    rm = tm * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    rn = tn * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    rk = tl.arange(0, BLOCK_SIZE_K)
    w_shift = (rk % per_word) * bits
    z_shift = (rn % per_word) * bits
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k0 in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        kk = k0 * BLOCK_SIZE_K + rk
        grp = tl.load(group_of_row_ptr + kk)
        s = tl.load(scale_ptr + grp[:, None] * s_scale + rn[None, :])
        zw = tl.load(packed_z_ptr + grp[:, None] * s_zero + (rn[None, :] // per_word))
        z = (zw >> z_shift[None, :]) & value_mask
        a = tl.load(x_ptr + rm[:, None] * sx_m + kk[None, :] * sx_k, mask=rm[:, None] < M, other=0.0)
        w = tl.load(packed_w_ptr + (kk[:, None] // per_word) * sw_k + rn[None, :] * sw_n)
        w = (w >> w_shift[:, None]) & value_mask
        b = ((w - z).to(tl.float32) * s.to(tl.float32)).to(a.dtype)
        acc += tl.dot(a, b)
    out_ptrs = out_ptr + rm[:, None] * so_m + rn[None, :] * so_n
    tl.store(out_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _launch(x, qweight, scales, qzeros, g_idx, bits, maxq, out):
    M, K = x.shape
    N = qweight.shape[1]
    cfg = next(shrink_block_configs(FUSED_CONFIGS, {"M": M, "N": N, "K": K}))
    grid = (triton.cdiv(M, cfg.kwargs["BLOCK_SIZE_M"]) * triton.cdiv(N, cfg.kwargs["BLOCK_SIZE_N"]),)
    _fused_qmatmul_kernel[grid](
        x, qweight, out, scales, qzeros, g_idx, M, N, K, bits, maxq,
        x.stride(0), x.stride(1), qweight.stride(0), qweight.stride(1),
        out.stride(0), out.stride(1), scales.stride(0), qzeros.stride(0),
        num_warps=cfg.num_warps, num_stages=cfg.num_stages, **cfg.kwargs,
    )
    return out


# portq: ports gptqmodel:gptqmodel/nn_modules/triton_utils/kernels.py::quant_matmul_248
def fused_qmatmul(x, qweight, scales, qzeros, g_idx, bits, maxq):
    """x @ W in x's dtype, scales cast to it first."""
    out = torch.empty((x.shape[0], qweight.shape[1]), device=x.device, dtype=x.dtype)
    return _launch(x, qweight, scales.to(x.dtype), qzeros, g_idx, bits, maxq, out)


# portq: ports gptqmodel:gptqmodel/nn_modules/triton_utils/kernels.py::quant_matmul_inference_only_248
def fused_qmatmul_inference(x, qweight, scales, qzeros, g_idx, bits, maxq):
    """x @ W always written as fp16, the scales as stored."""
    out = torch.empty((x.shape[0], qweight.shape[1]), device=x.device, dtype=torch.float16)
    return _launch(x, qweight, scales, qzeros, g_idx, bits, maxq, out)
