"""flat_kv_row_view and request_row_bounds."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from portq_kernels.mla_sparse import (
    flat_kv_row_view,
    request_row_bounds,
    triton_convert_req_index_to_global_index,
)


def test_contiguous_cache_rows_are_blocks_back_to_back(device):
    cache = torch.randn(5, 16, 576, device=device).to(torch.bfloat16)
    rows, stride_rows = flat_kv_row_view(cache, 16)
    assert stride_rows == 16 and rows.shape == (80, 576)
    assert rows.data_ptr() == cache.data_ptr()
    assert torch.equal(rows[3 * 16 + 7], cache[3, 7])


@pytest.mark.parametrize("head_dim", [656, 576])
def test_interleaved_layers_and_remap_address_the_same_rows(device, head_dim):
    """A per-layer view of a [blocks, layers, block_size, head_dim] buffer: blocks
    are layers*block_size rows apart, and remapped indices land on the tokens."""
    num_blocks, layers, block_size, layer = 6, 3, 16, 1
    storage = torch.randint(0, 255, (num_blocks, layers, block_size, head_dim),
                            dtype=torch.uint8, device=device)
    cache = storage[:, layer]
    rows, stride_rows = flat_kv_row_view(cache, block_size)
    assert stride_rows == layers * block_size
    assert rows.shape == ((num_blocks - 1) * stride_rows + block_size, head_dim)
    block_table = torch.tensor([[4, 0, 5]], dtype=torch.int32, device=device)
    tok = torch.full((1, 128), -1, dtype=torch.int32, device=device)
    tok[0, :5] = torch.tensor([0, 15, 16, 40, 47])
    slots = triton_convert_req_index_to_global_index(
        torch.zeros(1, dtype=torch.int32, device=device), block_table, tok,
        BLOCK_SIZE=block_size, BLOCK_STRIDE_ROWS=stride_rows, NUM_TOPK_TOKENS=128)
    for k, t in enumerate([0, 15, 16, 40, 47]):
        blk = int(block_table[0, t // block_size])
        assert torch.equal(rows[int(slots[0, k])], cache[blk, t % block_size])


def test_storage_offset_is_kept(device):
    storage = torch.randn(4, 2, 8, 64, device=device)
    cache = storage[:, 1]
    rows, _ = flat_kv_row_view(cache, 8)
    assert torch.equal(rows[0], cache[0, 0]) and torch.equal(rows[16 + 3], cache[1, 3])


@pytest.mark.parametrize("case", ["2-D", "block size", "ragged block stride", "column stride",
                                  "no blocks"])
def test_bad_caches_raise(device, case):
    base = torch.zeros(4, 8, 64, device=device)
    cache, block_size = {
        "2-D": (base[0], 8),
        "block size": (base, 16),
        "ragged block stride": (torch.zeros(4 * 8 * 64 + 4 * 10, device=device).as_strided(
            (4, 8, 64), (8 * 64 + 10, 64, 1)), 8),
        "column stride": (torch.zeros(4, 8, 128, device=device)[:, :, ::2], 8),
        "no blocks": (base[:0], 8),
    }[case]
    with pytest.raises(ValueError):
        flat_kv_row_view(cache, block_size)


def test_request_row_bounds():
    assert request_row_bounds(np.array([3, 3, 1, 1, 1, 7])).tolist() == [0, 2, 5, 6]
    assert request_row_bounds(np.array([0])).tolist() == [0, 1]
    assert request_row_bounds(np.array([5, 4, 3])).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("bad", [np.array([1, 2, 1]), np.array([], dtype=np.int64),
                                 np.zeros((2, 2), dtype=np.int64)])
def test_request_row_bounds_rejects(bad):
    with pytest.raises(ValueError):
        request_row_bounds(bad)
