"""The DeepSeek-V3.2 lightning indexer's key cache: every decode step writes
the new tokens' keys, every prefill chunk gathers the cached ones back."""

import torch

QUANT_BLOCK = 128


def write_keys(keys: torch.Tensor, key_cache: torch.Tensor, slot_mapping: torch.Tensor) -> None:
    torch.ops.dsv32.indexer_k_quant_and_cache(keys, key_cache, slot_mapping, QUANT_BLOCK, "ue8m0")


def gather_keys(key_cache: torch.Tensor, block_table: torch.Tensor, cu_seq_lens: torch.Tensor, head_dim: int):
    tokens = int(cu_seq_lens[-1])
    keys = torch.empty(tokens, head_dim, dtype=torch.uint8, device=key_cache.device)
    scales = torch.empty(tokens, head_dim // QUANT_BLOCK, dtype=torch.float32, device=key_cache.device)
    torch.ops.dsv32.cp_gather_indexer_k_quant_cache(key_cache, keys, scales, block_table, cu_seq_lens)
    return keys, scales
