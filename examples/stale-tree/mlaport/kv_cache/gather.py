"""gather_and_maybe_dequant_cache: the context gather of the chunked prefill.

One program per output token: token_to_seq maps each output row back to its
request, and the program copies (or dequantises) one cache entry.
"""

import torch
import triton
import triton.language as tl

# portq: not-carried vllm:csrc/libtorch_stable/cache_kernels.cu::cp_gather_cache -- raw gather for the fp8-query and DCP paths; this engine runs neither


# portq: ports vllm:csrc/libtorch_stable/cache_kernels.cu::gather_and_maybe_dequant_cache @7412a96f78
@triton.jit
def gather_and_maybe_dequant_cache_kernel(
    src_cache,
    dst,
    block_table,
    cu_seq_lens,
    token_to_seq,
    num_tokens,
    block_size,
    block_table_stride,
    cache_block_stride,
    cache_entry_stride,
    dst_entry_stride,
    scale,
    seq_starts,
    HAS_SEQ_STARTS: tl.constexpr,
    ENTRY_SIZE: tl.constexpr,
    IS_FP8: tl.constexpr,
):
    token_id = tl.program_id(0)
    batch_id = tl.load(token_to_seq + token_id)
    batch_start = tl.load(cu_seq_lens + batch_id)
    batch_end = tl.load(cu_seq_lens + batch_id + 1)
    if token_id >= batch_end:
        return
    offset = token_id - batch_start
    if HAS_SEQ_STARTS:
        offset += tl.load(seq_starts + batch_id)
    physical_block = tl.load(block_table + batch_id * block_table_stride + offset // block_size)
    src = src_cache + physical_block.to(tl.int64) * cache_block_stride + (offset % block_size) * cache_entry_stride
    cols = tl.arange(0, ENTRY_SIZE)
    values = tl.load(src + cols)
    if IS_FP8:
        values = values.to(tl.float32) * tl.load(scale)
    tl.store(dst + token_id.to(tl.int64) * dst_entry_stride + cols, values.to(dst.dtype.element_ty))


# portq: ports vllm:csrc/libtorch_stable/cache_kernels.cu::gather_and_maybe_dequant_cache @7412a96f78
# portq: ports vllm:vllm/_custom_ops.py::gather_and_maybe_dequant_cache @7412a96f78
def gather_and_maybe_dequant_cache(
    src_cache: torch.Tensor,
    dst: torch.Tensor,
    block_table: torch.Tensor,
    cu_seq_lens: torch.Tensor,
    token_to_seq: torch.Tensor,
    num_tokens: int,
    kv_cache_dtype: str,
    scale: torch.Tensor,
    seq_starts: torch.Tensor | None = None,
) -> None:
    """Copy rows [cu_seq_lens[r], cu_seq_lens[r+1]) of each request into dst."""
    for name, tensor in (("block_table", block_table), ("cu_seq_lens", cu_seq_lens),
                         ("token_to_seq", token_to_seq)):
        if tensor.dtype != torch.int32:
            raise TypeError(f"{name} must be int32, got {tensor.dtype}")
    if kv_cache_dtype not in ("auto", "fp8"):
        raise ValueError(f"kv_cache_dtype must be 'auto' or 'fp8', got {kv_cache_dtype!r}")
    grid = (num_tokens,)
    gather_and_maybe_dequant_cache_kernel[grid](
        src_cache, dst, block_table, cu_seq_lens, token_to_seq, num_tokens,
        src_cache.shape[1], block_table.stride(0), src_cache.stride(0),
        src_cache.stride(1), dst.stride(0), scale,
        seq_starts if seq_starts is not None else cu_seq_lens,
        HAS_SEQ_STARTS=seq_starts is not None,
        ENTRY_SIZE=dst.shape[-1],
        IS_FP8=kv_cache_dtype == "fp8",
    )
