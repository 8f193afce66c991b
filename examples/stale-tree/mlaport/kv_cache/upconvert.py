"""The sparse prefill's gathers: fp8_ds_mla (656 bytes) and nvfp4_ds_mla
(352 bytes) cache entries upconverted to bf16 rows of 576 values.

One program per output token; the owning request is the last one whose
workspace start is at or before the token.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _owning_request(workspace_starts, out_token, num_reqs, MAX_REQS: tl.constexpr):
    reqs = tl.arange(0, MAX_REQS)
    starts = tl.load(workspace_starts + reqs, mask=reqs < num_reqs, other=2**30)
    return tl.max(tl.where(starts <= out_token, reqs, 0), axis=0)


# portq: ports vllm:csrc/libtorch_stable/cache_kernels.cu::cp_gather_and_upconvert_fp8_kv_cache @7412a96f78
@triton.jit
def cp_gather_and_upconvert_fp8_kv_cache_kernel(
    src_cache,
    dst,
    block_table,
    seq_lens,
    workspace_starts,
    num_reqs,
    block_size,
    total_tokens,
    block_table_stride,
    cache_block_stride,
    cache_entry_stride,
    dst_entry_stride,
    MAX_REQS: tl.constexpr,
):
    out_token = tl.program_id(0)
    req = _owning_request(workspace_starts, out_token, num_reqs, MAX_REQS)
    token_offset = out_token - tl.load(workspace_starts + req)
    block = tl.load(block_table + req * block_table_stride + token_offset // block_size)
    entry = src_cache + block.to(tl.int64) * cache_block_stride + (token_offset % block_size) * cache_entry_stride
    nope = tl.arange(0, 512)
    codes = tl.load(entry + nope).to(tl.float8e4nv, bitcast=True).to(tl.float32)
    scales = tl.load((entry + 512).to(tl.pointer_type(tl.float32)) + nope // 128)
    out = dst + out_token.to(tl.int64) * dst_entry_stride
    tl.store(out + nope, (codes * scales).to(tl.bfloat16))
    rope = tl.arange(0, 64)
    tl.store(out + 512 + rope, tl.load((entry + 528).to(tl.pointer_type(tl.bfloat16)) + rope))


# portq: ports vllm:csrc/libtorch_stable/cache_kernels.cu::cp_gather_and_upconvert_fp8_kv_cache @7412a96f78
# portq: ports vllm:vllm/_custom_ops.py::cp_gather_and_upconvert_fp8_kv_cache @7412a96f78
def cp_gather_and_upconvert_fp8_kv_cache(
    src_cache: torch.Tensor,
    dst: torch.Tensor,
    block_table: torch.Tensor,
    seq_lens: torch.Tensor,
    workspace_starts: torch.Tensor,
    batch_size: int,
) -> None:
    """fp8_ds_mla -> bf16; request r fills rows from workspace_starts[r]."""
    if dst.dtype != torch.bfloat16 or dst.shape[1] != 576:
        raise ValueError("dst must be bf16 [T, 576]")
    if seq_lens.dtype != torch.int32 or workspace_starts.dtype != torch.int32:
        raise TypeError("seq_lens and workspace_starts must be int32")
    total_tokens = dst.shape[0]
    cp_gather_and_upconvert_fp8_kv_cache_kernel[(total_tokens,)](
        src_cache, dst, block_table, seq_lens, workspace_starts, batch_size,
        src_cache.shape[1], total_tokens, block_table.stride(0),
        src_cache.stride(0), src_cache.stride(1), dst.stride(0),
        MAX_REQS=triton.next_power_of_2(batch_size),
    )


# portq: ports vllm:csrc/libtorch_stable/nvfp4_ds_mla_cache_kernels.cu::cp_gather_and_upconvert_nvfp4_kv_cache_kernel @7412a96f78
@triton.jit
def cp_gather_and_upconvert_nvfp4_kv_cache_kernel(
    src_cache,
    dst,
    block_table,
    workspace_starts,
    num_reqs,
    block_size,
    total_tokens,
    block_table_stride,
    cache_block_stride,
    cache_entry_stride,
    dst_entry_stride,
    E2M1_VALUES,
    MAX_REQS: tl.constexpr,
):
    out_token_id = tl.program_id(0)
    req_id = _owning_request(workspace_starts, out_token_id, num_reqs, MAX_REQS)
    token_offset = out_token_id - tl.load(workspace_starts + req_id)
    block = tl.load(block_table + req_id * block_table_stride + token_offset // block_size)
    entry = src_cache + block.to(tl.int64) * cache_block_stride + (token_offset % block_size) * cache_entry_stride
    tiles = tl.arange(0, 32)
    sf = tl.load(entry + 320 + 8 * (tiles & 3) + (tiles >> 2)).to(tl.float8e4nv, bitcast=True).to(tl.float32)
    pairs = tl.arange(0, 256)
    packed = tl.load(entry + pairs)
    low = tl.load(E2M1_VALUES + (packed & 0xF))
    high = tl.load(E2M1_VALUES + (packed >> 4))
    tile_scale = tl.reshape(tl.broadcast_to(sf[:, None], (32, 8)), (256,))
    out = dst + out_token_id.to(tl.int64) * dst_entry_stride
    tl.store(out + 2 * pairs, (low * tile_scale).to(tl.bfloat16))
    tl.store(out + 2 * pairs + 1, (high * tile_scale).to(tl.bfloat16))
    rope = tl.arange(0, 64)
    rope_values = tl.load(entry + 256 + rope).to(tl.float8e4nv, bitcast=True).to(tl.float32)
    tl.store(out + 512 + rope, rope_values.to(tl.bfloat16))


_E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)


# portq: ports vllm:csrc/libtorch_stable/cache_kernels.cu::cp_gather_and_upconvert_nvfp4_kv_cache @7412a96f78
# portq: ports vllm:vllm/_custom_ops.py::cp_gather_and_upconvert_nvfp4_kv_cache @7412a96f78
def cp_gather_and_upconvert_nvfp4_kv_cache(
    src_cache: torch.Tensor,
    dst: torch.Tensor,
    block_table: torch.Tensor,
    workspace_starts: torch.Tensor,
    batch_size: int,
) -> None:
    """nvfp4_ds_mla -> bf16; request r fills rows from workspace_starts[r]."""
    if src_cache.dtype != torch.uint8 or src_cache.shape[2] != 352:
        raise ValueError("src_cache must be uint8 [num_blocks, block_size, 352]")
    if dst.dtype != torch.bfloat16 or dst.shape[1] != 576:
        raise ValueError("dst must be bf16 [T, 576]")
    total_tokens = dst.shape[0]
    e2m1 = torch.tensor(_E2M1, dtype=torch.float32, device=dst.device)
    cp_gather_and_upconvert_nvfp4_kv_cache_kernel[(total_tokens,)](
        src_cache, dst, block_table, workspace_starts, batch_size,
        src_cache.shape[1], total_tokens, block_table.stride(0),
        src_cache.stride(0), src_cache.stride(1), dst.stride(0), e2m1,
        MAX_REQS=triton.next_power_of_2(batch_size),
    )
