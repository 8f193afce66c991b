"""GEMV over packed n-bit weights for a handful of rows: one program per
(row, K tile, N tile), each adding its partial dot product into the
zeroed output with an atomic add (fp16 output only: the atomic has no
bf16). Same packing and group layout as the GEMM; no masks, so K and N
must be multiples of the tiles."""

import torch
import triton
import triton.language as tl

from .tuning import first_only, pow2_at_least_16


# portq: ports gemlite:gemlite/triton_kernels/gemv_A16fWnO16f_int32packing.py::init_to_zero @1fc7d50
def zero_output(name):
    return lambda nargs: nargs[name].zero_()


# portq: ports gemlite:gemlite/triton_kernels/gemv_A16fWnO16f_int32packing.py::kernel_config_pruner @1fc7d50
def _prune_gemv(configs, nargs, **kwargs):
    n, k = pow2_at_least_16(nargs["N"]), pow2_at_least_16(nargs["K"])
    seen = set()
    for cfg in configs:
        bn = min(n, cfg.kwargs["BLOCK_SIZE_N"])
        bk = min(k, cfg.kwargs["BLOCK_SIZE_K"], nargs["group_size"])
        key = (1, bn, bk, cfg.num_stages, cfg.num_warps)
        if key in seen:
            continue
        seen.add(key)
        yield triton.Config({"BLOCK_SIZE_M": 1, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk},
                            num_stages=cfg.num_stages, num_warps=cfg.num_warps, pre_hook=cfg.pre_hook)


# portq: ports gemlite:gemlite/triton_kernels/gemv_A16fWnO16f_int32packing.py::get_gemv_config @1fc7d50
def gemv_configs():
    return [
        triton.Config({"BLOCK_SIZE_M": 1, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk},
                      num_stages=stages, num_warps=warps, pre_hook=zero_output("c_ptr"))
        for bn in (128, 256)
        for bk in (32, 64)
        for warps in (2, 4)
        for stages in (1, 2)
    ]


# portq: ports gemlite:gemlite/triton_kernels/gemv_A16fWnO16f_int32packing.py::gemv_A16fWnO16f_int32packing_kernel @1fc7d50
@triton.autotune(
    configs=first_only(gemv_configs()),
    key=["M", "N", "K", "group_size", "W_nbits"],
    prune_configs_by={"early_config_prune": _prune_gemv},
    warmup=200,
    rep=100,
)
@triton.jit
def _gemv_lowbit(
    a_ptr, b_ptr, c_ptr, scales, zeros,
    M, N, K,
    W_nbits, group_size, unpack_mask, elements_per_sample,
    sa_m, sa_k, sb_k, sb_n, sc_m, sc_n, s_meta,
    acc_dtype: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
):
    row = tl.program_id(0)
    tile_k = tl.program_id(1)
    tile_n = tl.program_id(2)

    rm = row * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    rk = tile_k * BLOCK_SIZE_K + tl.arange(0, BLOCK_SIZE_K)
    rn = tile_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)

    words = tl.load(b_ptr + (rk[:, None] // elements_per_sample) * sb_k + rn[None, :] * sb_n, eviction_policy="evict_first")
    g = (tile_k * (BLOCK_SIZE_K / group_size)).to(tl.int32)
    s = tl.load(scales + rn[None, :] + g * s_meta)
    z = tl.load(zeros + rn[None, :] + g * s_meta)
    a = tl.load(a_ptr + rm[:, None] * sa_m + rk[None, :] * sa_k, eviction_policy="evict_last").to(acc_dtype)

    w = (words >> ((rk % elements_per_sample) * W_nbits).to(tl.int32)[:, None]) & unpack_mask
    w = ((w - z) * s).to(acc_dtype)
    partial = tl.sum(a.reshape((BLOCK_SIZE_K, 1), can_reorder=False) * w, axis=0)
    tl.atomic_add(c_ptr + rn + row * N, partial, sem="relaxed", scope="cta")


# portq: ports gemlite:gemlite/triton_kernels/gemv_A16fWnO16f_int32packing.py::gemv_A16fWnO16f_int32packing_forward @1fc7d50
def gemv_lowbit(x, w_packed, scales, zeros, W_nbits, group_size, unpack_mask, elements_per_sample, acc_dtype=tl.float16):
    M, K, N = x.shape[0], x.shape[1], w_packed.shape[1]
    out = torch.empty((M, N), device=w_packed.device, dtype=scales.dtype)

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_SIZE_M"]), triton.cdiv(K, meta["BLOCK_SIZE_K"]), triton.cdiv(N, meta["BLOCK_SIZE_N"]))

    _gemv_lowbit[grid](
        x, w_packed, out, scales, zeros,
        M, N, K,
        W_nbits, group_size, unpack_mask, elements_per_sample,
        x.stride(0), x.stride(1), w_packed.stride(0), w_packed.stride(1), out.stride(0), out.stride(1),
        scales.stride(0),
        acc_dtype,
    )
    return out


# portq: ports gemlite:gemlite/triton_kernels/gemv_A16fWnO16f_int32packing.py::gemv_A16fWnO16f_int32packing @1fc7d50
class GEMV:
    kernel = _gemv_lowbit
    forward = staticmethod(gemv_lowbit)
    matmul_type = "GEMV"
