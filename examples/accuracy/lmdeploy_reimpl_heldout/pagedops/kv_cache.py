"""Writes a step's new keys and values [tokens, heads, head_dim] into the
block-paged caches [blocks, block_size, heads, head_dim], one program per
(sequence, cache block) piece of the copy.

The pieces are planned on the host from each sequence's history length and
block table; the plan is recomputed per call (nothing is kept between the
layers of one step).
"""

from typing import Sequence

import torch
import triton
import triton.language as tl

# Widest column tile one program copies per step of its loop.
FILL_MAX_COLS = 128


# portq: ports lmdeploy:lmdeploy/pytorch/kernels/fill_kv_cache.py::_fill_kv_cache_kernel
@triton.jit
def copy_into_blocks_kernel(keys, values, key_cache, value_cache,
                            src_first, piece_len, slot_first, block_ids,
                            key_tok_stride, value_tok_stride,
                            key_slot_stride: tl.constexpr, value_slot_stride: tl.constexpr,
                            SLOTS: tl.constexpr, COLS: tl.constexpr):
    piece = tl.program_id(0)
    first = tl.load(src_first + piece)
    count = tl.load(piece_len + piece)
    slot = tl.load(slot_first + piece)
    block = tl.load(block_ids + piece)
    rows = tl.arange(0, SLOTS)
    cols = tl.arange(0, COLS)
    live = rows[:, None] < count
    k_src = keys + (first + rows[:, None]) * key_tok_stride + cols[None, :]
    v_src = values + (first + rows[:, None]) * value_tok_stride + cols[None, :]
    k_dst = key_cache + block * (key_slot_stride * SLOTS) + (slot + rows[:, None]) * key_slot_stride + cols[None, :]
    v_dst = value_cache + block * (value_slot_stride * SLOTS) + (slot + rows[:, None]) * value_slot_stride + cols[None, :]
    for c in range(0, key_slot_stride, COLS):
        tl.store(k_dst + c, tl.load(k_src + c, mask=live), mask=live)
    for c in range(0, value_slot_stride, COLS):
        tl.store(v_dst + c, tl.load(v_src + c, mask=live), mask=live)


def _exclusive_cumsum(lengths: torch.Tensor) -> torch.Tensor:
    return torch.cat([lengths.new_zeros((1,)), lengths.cumsum(0)[:-1]])


# portq: ports lmdeploy:lmdeploy/pytorch/kernels/fill_kv_cache.py::_prefilling_cache_info
def plan_prefill_pieces(block_size: int, seq_length: torch.Tensor, block_table: torch.Tensor,
                        history: torch.Tensor, device: torch.device) -> dict:
    """One piece per cache block each new prompt's tokens land in."""
    if block_size == 1:
        pieces = int(seq_length.sum().item())
        piece_len = torch.ones((pieces,), dtype=torch.long, device=device)
        blocks = [row[h:h + n] for row, h, n in zip(block_table, history.tolist(), seq_length.tolist())]
        return dict(src_first=_exclusive_cumsum(piece_len), piece_len=piece_len,
                    slot_first=torch.zeros_like(piece_len), block_ids=torch.cat(blocks))
    first_block = history // block_size
    first_slot = history % block_size
    end_block = (history + seq_length + block_size - 1) // block_size
    per_seq = end_block - first_block
    head = _exclusive_cumsum(per_seq)
    tail = head + per_seq - 1
    pieces = int(per_seq.sum().item())
    slot_first = torch.zeros((pieces,), dtype=torch.long, device=device)
    slot_first[head] = first_slot
    slot_end = torch.full_like(slot_first, block_size)
    last_fill = (seq_length + first_slot) % block_size
    slot_end[tail] = torch.where(last_fill == 0, torch.full_like(last_fill, block_size), last_fill)
    piece_len = slot_end - slot_first
    blocks = [row[a:b] for row, a, b in zip(block_table, first_block.tolist(), end_block.tolist())]
    return dict(src_first=_exclusive_cumsum(piece_len), piece_len=piece_len,
                slot_first=slot_first, block_ids=torch.cat(blocks))


# portq: ports lmdeploy:lmdeploy/pytorch/kernels/fill_kv_cache.py::_decoding_cache_info
def plan_decode_pieces(block_size: int, start_loc: torch.Tensor, seq_length: torch.Tensor,
                       block_table: torch.Tensor, history: torch.Tensor, device: torch.device) -> dict:
    """One piece per sequence: its new token goes to the block its history ends in."""
    rows = torch.arange(block_table.shape[0], device=device)
    return dict(src_first=start_loc, piece_len=seq_length, slot_first=history % block_size,
                block_ids=block_table[rows, history // block_size])


# portq: ports lmdeploy:lmdeploy/pytorch/kernels/fill_kv_cache.py::_create_fill_cache_info
def plan_pieces(decoding: bool, block_size: int, start_loc: torch.Tensor, seq_length: torch.Tensor,
                block_table: torch.Tensor, history: Sequence, device: torch.device) -> dict:
    """src_first, piece_len, slot_first and block_ids, one entry per piece."""
    history = history if isinstance(history, torch.Tensor) else torch.tensor(history, device=device)
    if decoding:
        plan = plan_decode_pieces(block_size, start_loc, seq_length, block_table, history, device)
    else:
        plan = plan_prefill_pieces(block_size, seq_length, block_table, history, device)
    if plan["piece_len"].shape[0] != plan["block_ids"].shape[0]:
        raise ValueError(f"plan_pieces: {plan['piece_len'].shape[0]} lengths for {plan['block_ids'].shape[0]} blocks")
    return plan


# portq: ports lmdeploy:lmdeploy/pytorch/kernels/fill_kv_cache.py::fill_kv_cache
# portq: not-carried lmdeploy:lmdeploy/pytorch/kernels/fill_kv_cache.py::fill_kv_cache[context] -- the plan is recomputed per layer; no step context is shared
@torch.no_grad()
def fill_paged_kv(keys: torch.Tensor, values: torch.Tensor, key_cache: torch.Tensor,
                  value_cache: torch.Tensor, start_loc: torch.Tensor, seq_length: torch.Tensor,
                  block_table: torch.Tensor, history: Sequence) -> None:
    """key_cache/value_cache at each sequence's slots history..history+len = its new tokens."""
    keys, values = keys.contiguous(), values.contiguous()
    plan = plan_pieces(keys.shape[-3] == seq_length.shape[0], key_cache.shape[1], start_loc,
                       seq_length, block_table, history, keys.device)
    cols = min(FILL_MAX_COLS, key_cache.stride(-3), value_cache.stride(-3))
    copy_into_blocks_kernel[(plan["src_first"].shape[0],)](
        keys, values, key_cache, value_cache,
        plan["src_first"], plan["piece_len"], plan["slot_first"], plan["block_ids"],
        keys.stride(-3), values.stride(-3),
        key_slot_stride=key_cache.stride(-3), value_slot_stride=value_cache.stride(-3),
        SLOTS=key_cache.shape[-3], COLS=cols, num_warps=4, num_stages=1)
