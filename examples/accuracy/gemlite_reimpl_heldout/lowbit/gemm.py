"""Tiled GEMM over packed n-bit weights: C = A @ dequant(B).

A (M, K) fp16/bf16; B (K / per_word, N) int32, row r holding K rows
r*per_word .. r*per_word + per_word - 1, row j of the word at bits
nbits*j (least significant first); scales and zeros (K / group, N) in A's
dtype. A K tile never straddles a group (the pruner caps BLOCK_K at the
group size), so one scale row and one zero row serve a whole tile."""

import torch
import triton
import triton.language as tl

from .tuning import first_only, pow2_at_least_16


# portq: ports gemlite:gemlite/triton_kernels/gemm_A16fWnO16f_int32packing.py::kernel_config_pruner @1fc7d50
def _prune_gemm(configs, nargs, **kwargs):
    m, n, k = (pow2_at_least_16(nargs[d]) for d in ("M", "N", "K"))  # tl.dot needs 16 at least
    seen = set()
    for cfg in configs:
        bm = min(m, cfg.kwargs["BLOCK_SIZE_M"])
        bn = min(n, cfg.kwargs["BLOCK_SIZE_N"])
        bk = min(k, cfg.kwargs["BLOCK_SIZE_K"], nargs["group_size"])
        gm = cfg.kwargs["GROUP_SIZE_M"]
        key = (bm, bn, bk, gm, cfg.num_stages, cfg.num_warps)
        if key in seen:
            continue
        seen.add(key)
        yield triton.Config({"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": gm},
                            num_stages=cfg.num_stages, num_warps=cfg.num_warps)


# portq: ports gemlite:gemlite/triton_kernels/gemm_A16fWnO16f_int32packing.py::get_gemm_config @1fc7d50
def gemm_configs():
    return [
        triton.Config({"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": 8},
                      num_stages=stages, num_warps=warps)
        for bm in (16, 32, 64, 128)
        for bn in (32, 64, 128)
        for bk in (32, 64, 128)
        for warps in (2, 4)
        for stages in (2, 4)
    ]


# portq: ports gemlite:gemlite/triton_kernels/gemm_A16fWnO16f_int32packing.py::gemm_A16fWnO16f_int32packing_kernel @1fc7d50
@triton.autotune(
    configs=first_only(gemm_configs()),
    key=["M", "N", "K", "group_size", "W_nbits"],
    prune_configs_by={"early_config_prune": _prune_gemm},
    warmup=200,
    rep=50,
)
@triton.jit
def _gemm_lowbit(
    x, w_packed, out, scales, zeros,
    M, N, K,
    W_nbits: tl.constexpr, group_size: tl.constexpr, unpack_mask: tl.constexpr, elements_per_sample: tl.constexpr,
    sx_m, sx_k, sw_k, sw_n, so_m, so_n, s_meta,
    acc_dtype: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    num_stages: tl.constexpr,
):
    # grouped ordering of the output tiles over one flat grid
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_SIZE_M)
    tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
    steps_k = tl.cdiv(K, BLOCK_SIZE_K)
    per_group = GROUP_SIZE_M * tiles_n
    first_m = (pid // per_group) * GROUP_SIZE_M
    rows_in_group = min(tiles_m - first_m, GROUP_SIZE_M)
    tile_m = first_m + (pid % rows_in_group)
    tile_n = (pid % per_group) // rows_in_group

    rm = tile_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    rn = tile_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    rk = tl.arange(0, BLOCK_SIZE_K)

    x_ptrs = x + rm[:, None] * sx_m + rk[None, :] * sx_k
    x_rows = rm[:, None] < M
    w_ptrs = w_packed + (rk[:, None] // elements_per_sample) * sw_k + rn[None, :] * sw_n
    shifts = ((rk % elements_per_sample) * W_nbits).to(tl.int32)[:, None]
    tiles_per_group = BLOCK_SIZE_K / group_size

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=acc_dtype)
    for step in tl.range(0, steps_k, 1, num_stages=1):
        words = tl.load(w_ptrs, eviction_policy="evict_first")
        g = (step * tiles_per_group).to(tl.int32)
        s = tl.load(scales + rn[None, :] + g * s_meta)
        z = tl.load(zeros + rn[None, :] + g * s_meta)
        a = tl.load(x_ptrs, mask=x_rows, other=0.0, eviction_policy="evict_last")
        w = ((words >> shifts) & unpack_mask).to(a.dtype)
        w = (w - z) * s
        acc = tl.dot(a, w, acc=acc, out_dtype=acc_dtype, input_precision="ieee")
        x_ptrs += BLOCK_SIZE_K
        w_ptrs += (BLOCK_SIZE_K // elements_per_sample) * sw_k

    o_ptrs = out + rm[:, None] * so_m + rn[None, :] * so_n
    tl.store(o_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


# portq: ports gemlite:gemlite/triton_kernels/gemm_A16fWnO16f_int32packing.py::gemm_A16fWnO16f_int32packing_forward @1fc7d50
def gemm_lowbit(x, w_packed, scales, zeros, W_nbits, group_size, unpack_mask, elements_per_sample, acc_dtype=tl.float16):
    M, K, N = x.shape[0], x.shape[1], w_packed.shape[1]
    out = torch.empty((M, N), device=w_packed.device, dtype=scales.dtype)

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_SIZE_M"]) * triton.cdiv(N, meta["BLOCK_SIZE_N"]),)

    _gemm_lowbit[grid](
        x, w_packed, out, scales, zeros,
        M, N, K,
        W_nbits, group_size, unpack_mask, elements_per_sample,
        x.stride(0), x.stride(1), w_packed.stride(0), w_packed.stride(1), out.stride(0), out.stride(1),
        scales.stride(0),
        acc_dtype,
    )
    return out


# portq: ports gemlite:gemlite/triton_kernels/gemm_A16fWnO16f_int32packing.py::gemm_A16fWnO16f_int32packing @1fc7d50
class GEMM:
    kernel = _gemm_lowbit
    forward = staticmethod(gemm_lowbit)
    matmul_type = "GEMM"
