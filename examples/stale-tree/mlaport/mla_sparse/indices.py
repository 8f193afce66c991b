"""Map request-local top-k token indices to physical cache slots (or to rows
of the prefill workspace), optionally filtered to one DCP rank."""

import torch
import triton
import triton.language as tl


# portq: ports vllm:vllm/v1/attention/backends/mla/sparse_utils.py::_convert_req_index_to_global_index_kernel @7412a96f78
@triton.jit
def _convert_req_index_to_global_index_kernel(
    req_id_ptr,
    block_table_ptr,
    token_indices_ptr,
    out_ptr,
    valid_count_ptr,
    prefill_request_id_ptr,
    workspace_starts_ptr,
    max_num_blocks_per_req: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    NUM_TOPK_TOKENS: tl.constexpr,
    BLOCK_N: tl.constexpr,
    HAS_PREFILL: tl.constexpr,
    COUNT_VALID: tl.constexpr,
    COMPACT_TO_FRONT: tl.constexpr,
    DCP_SIZE: tl.constexpr,
    DCP_RANK: tl.constexpr,
    DCP_INTERLEAVE: tl.constexpr,
):
    token_id = tl.program_id(0)
    indice_id = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    req = tl.load(req_id_ptr + token_id)
    tok = tl.load(token_indices_ptr + token_id * NUM_TOPK_TOKENS + indice_id)
    invalid = tok < 0
    owner = (tok // DCP_INTERLEAVE) % DCP_SIZE
    local = (tok // (DCP_SIZE * DCP_INTERLEAVE)) * DCP_INTERLEAVE + tok % DCP_INTERLEAVE
    block_id = local // BLOCK_SIZE
    in_table = (block_id >= 0) & (block_id < max_num_blocks_per_req)
    base = tl.load(block_table_ptr + req * max_num_blocks_per_req + block_id,
                   mask=in_table & ~invalid, other=0)
    out_val = tl.where(in_table & (owner == DCP_RANK) & ~invalid,
                       base * BLOCK_SIZE + local % BLOCK_SIZE, -1)
    if HAS_PREFILL:
        prefill_req = tl.load(prefill_request_id_ptr + token_id)
        if prefill_req >= 0:
            out_val = tl.where(invalid, -1, tl.load(workspace_starts_ptr + prefill_req) + tok)
    is_valid = out_val >= 0
    if COUNT_VALID:
        slot = tl.atomic_add(valid_count_ptr + token_id, tl.sum(is_valid.to(tl.int32), axis=0))
    if COMPACT_TO_FRONT:
        dest = slot + tl.cumsum(is_valid.to(tl.int32), axis=0) - 1
        tl.store(out_ptr + token_id * NUM_TOPK_TOKENS + dest, out_val, mask=is_valid)
    else:
        tl.store(out_ptr + token_id * NUM_TOPK_TOKENS + indice_id, out_val)


def _launch(req_id, block_table, token_indices, out, valid_counts, prefill_ids, prefill_starts,
            BLOCK_SIZE, NUM_TOPK_TOKENS, BLOCK_N, compact, dcp):
    grid = (req_id.shape[0], NUM_TOPK_TOKENS // BLOCK_N)
    _convert_req_index_to_global_index_kernel[grid](
        req_id.contiguous(), block_table.contiguous(), token_indices.contiguous(), out,
        valid_counts, prefill_ids, prefill_starts,
        max_num_blocks_per_req=block_table.shape[1],
        BLOCK_SIZE=BLOCK_SIZE, NUM_TOPK_TOKENS=NUM_TOPK_TOKENS, BLOCK_N=BLOCK_N,
        HAS_PREFILL=prefill_ids is not None, COUNT_VALID=valid_counts is not None,
        COMPACT_TO_FRONT=compact, DCP_SIZE=dcp[0], DCP_RANK=dcp[1], DCP_INTERLEAVE=dcp[2],
    )


def _check(req_id, block_table, token_indices, NUM_TOPK_TOKENS, BLOCK_N):
    for name, tensor in (("req_id", req_id), ("block_table", block_table),
                         ("token_indices", token_indices)):
        if tensor.dtype != torch.int32:
            raise TypeError(f"{name} must be int32, got {tensor.dtype}")
    if token_indices.shape[1] != NUM_TOPK_TOKENS or NUM_TOPK_TOKENS % BLOCK_N:
        raise ValueError("token_indices must be [N, NUM_TOPK_TOKENS], a multiple of BLOCK_N")


# portq: ports vllm:vllm/v1/attention/backends/mla/sparse_utils.py::triton_convert_req_index_to_global_index @7412a96f78
def triton_convert_req_index_to_global_index(
    req_id: torch.Tensor,
    block_table: torch.Tensor,
    token_indices: torch.Tensor,
    BLOCK_SIZE: int = 64,
    NUM_TOPK_TOKENS: int = 2048,
    BLOCK_N: int = 128,
    HAS_PREFILL_WORKSPACE: bool = False,
    prefill_workspace_request_ids: torch.Tensor | None = None,
    prefill_workspace_starts: torch.Tensor | None = None,
    return_valid_counts: bool = False,
):
    """Physical slot of every top-k entry; -1 stays -1, out-of-range is -1."""
    _check(req_id, block_table, token_indices, NUM_TOPK_TOKENS, BLOCK_N)
    if HAS_PREFILL_WORKSPACE and (prefill_workspace_request_ids is None
                                  or prefill_workspace_starts is None):
        raise ValueError("HAS_PREFILL_WORKSPACE needs the workspace request ids and starts")
    out = torch.empty_like(token_indices)
    valid_counts = (torch.zeros(req_id.shape[0], dtype=torch.int32, device=req_id.device)
                    if return_valid_counts else None)
    _launch(req_id, block_table, token_indices, out, valid_counts,
            prefill_workspace_request_ids if HAS_PREFILL_WORKSPACE else None,
            prefill_workspace_starts if HAS_PREFILL_WORKSPACE else None,
            BLOCK_SIZE, NUM_TOPK_TOKENS, BLOCK_N, False, (1, 0, 1))
    return (out, valid_counts) if return_valid_counts else out


# portq: ports vllm:vllm/v1/attention/backends/mla/sparse_utils.py::triton_filter_and_convert_dcp_index @7412a96f78
def triton_filter_and_convert_dcp_index(
    req_id: torch.Tensor,
    block_table: torch.Tensor,
    token_indices: torch.Tensor,
    dcp_size: int,
    dcp_rank: int,
    cp_kv_cache_interleave_size: int = 1,
    BLOCK_SIZE: int = 64,
    NUM_TOPK_TOKENS: int = 2048,
    BLOCK_N: int = 128,
    return_valid_counts: bool = False,
):
    """Keep only the entries this DCP rank owns, as rank-local slots."""
    if not 0 <= dcp_rank < dcp_size:
        raise ValueError(f"dcp_rank must be in [0, {dcp_size}), got {dcp_rank}")
    if BLOCK_SIZE % cp_kv_cache_interleave_size:
        raise ValueError("BLOCK_SIZE must be a multiple of cp_kv_cache_interleave_size")
    if dcp_size == 1:
        return triton_convert_req_index_to_global_index(
            req_id, block_table, token_indices, BLOCK_SIZE=BLOCK_SIZE,
            NUM_TOPK_TOKENS=NUM_TOPK_TOKENS, BLOCK_N=BLOCK_N,
            return_valid_counts=return_valid_counts)
    _check(req_id, block_table, token_indices, NUM_TOPK_TOKENS, BLOCK_N)
    out = torch.empty_like(token_indices)
    valid_counts = (torch.zeros(req_id.shape[0], dtype=torch.int32, device=req_id.device)
                    if return_valid_counts else None)
    _launch(req_id, block_table, token_indices, out, valid_counts, None, None,
            BLOCK_SIZE, NUM_TOPK_TOKENS, BLOCK_N, False,
            (dcp_size, dcp_rank, cp_kv_cache_interleave_size))
    return (out, valid_counts) if return_valid_counts else out
