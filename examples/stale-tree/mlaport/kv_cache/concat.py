"""concat_and_cache_mla: write each token's latent and rope part into its slot."""

import torch
import triton
import triton.language as tl


# portq: ports vllm:csrc/libtorch_stable/cache_kernels.cu::concat_and_cache_mla_kernel @7412a96f78
@triton.jit
def concat_and_cache_mla_kernel(
    kv_c,
    k_pe,
    kv_cache,
    slot_mapping,
    block_stride,
    entry_stride,
    kv_c_stride,
    k_pe_stride,
    scale,
    block_size,
    KV_LORA_RANK: tl.constexpr,
    PE_DIM: tl.constexpr,
    IS_FP8: tl.constexpr,
):
    token_idx = tl.program_id(0)
    slot_idx = tl.load(slot_mapping + token_idx)
    if slot_idx < 0:
        return
    block_idx = slot_idx // block_size
    block_offset = slot_idx % block_size
    dst_base = block_idx * block_stride + block_offset * entry_stride
    lora = tl.arange(0, KV_LORA_RANK)
    pe = tl.arange(0, PE_DIM)
    c = tl.load(kv_c + token_idx * kv_c_stride + lora)
    r = tl.load(k_pe + token_idx * k_pe_stride + pe)
    if IS_FP8:
        inv = 1.0 / tl.load(scale)
        c = (c.to(tl.float32) * inv).to(tl.float8e4nv)
        r = (r.to(tl.float32) * inv).to(tl.float8e4nv)
    tl.store(kv_cache + dst_base + lora, c)
    tl.store(kv_cache + dst_base + KV_LORA_RANK + pe, r)


# portq: ports vllm:csrc/libtorch_stable/cache_kernels.cu::concat_and_cache_mla @7412a96f78
def concat_and_cache_mla(kv_c, k_pe, kv_cache, slot_mapping, kv_cache_dtype: str,
                         scale: torch.Tensor) -> None:
    """Write slot_mapping.shape[0] tokens; negative slots are padding."""
    kv_lora_rank, pe_dim = kv_c.shape[1], k_pe.shape[1]
    if kv_cache.shape[2] != kv_lora_rank + pe_dim:
        raise ValueError("kv_cache entries must hold kv_c and k_pe")
    if kv_cache_dtype not in ("auto", "fp8"):
        raise ValueError(f"kv_cache_dtype must be 'auto' or 'fp8', got {kv_cache_dtype!r}")
    num_tokens = slot_mapping.shape[0]
    concat_and_cache_mla_kernel[(num_tokens,)](
        kv_c, k_pe, kv_cache, slot_mapping,
        kv_cache.stride(0), kv_cache.stride(1), kv_c.stride(0), k_pe.stride(0),
        scale, kv_cache.shape[1],
        KV_LORA_RANK=kv_lora_rank, PE_DIM=pe_dim, IS_FP8=kv_cache_dtype == "fp8",
    )
