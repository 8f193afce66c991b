import pytest
import torch

from vllm.v1.attention.backends.mla.sparse_utils import (
    triton_convert_req_index_to_global_index, triton_filter_and_convert_dcp_index)


def _reference(req_id, block_table, token_indices, block_size):
    blocks = token_indices // block_size
    valid = (token_indices >= 0) & (blocks < block_table.shape[1])
    rows = block_table[req_id.long()].gather(1, blocks.clamp(0, block_table.shape[1] - 1).long())
    out = rows * block_size + token_indices % block_size
    return torch.where(valid, out, torch.full_like(out, -1))


@pytest.mark.parametrize("block_size", [16, 64])
@pytest.mark.parametrize("topk", [128, 256])
def test_triton_convert_req_index_to_global_index_decode_only(block_size, topk):
    req_id = torch.tensor([0, 1, 2, 3, 0, 1, 2, 3], dtype=torch.int32, device="cuda")
    block_table = torch.randint(0, 100, (4, 10), dtype=torch.int32, device="cuda")
    token_indices = torch.randint(-1, 10 * block_size, (8, topk),
                                  dtype=torch.int32, device="cuda")
    out = triton_convert_req_index_to_global_index(
        req_id, block_table, token_indices, BLOCK_SIZE=block_size,
        NUM_TOPK_TOKENS=topk)
    assert torch.equal(out, _reference(req_id, block_table, token_indices, block_size))


@pytest.mark.parametrize("dcp_size", [2, 4])
def test_triton_filter_and_convert_dcp_index(dcp_size):
    req_id = torch.zeros(4, dtype=torch.int32, device="cuda")
    block_table = torch.arange(8, dtype=torch.int32, device="cuda").view(1, 8)
    token_indices = torch.arange(4 * 128, dtype=torch.int32,
                                 device="cuda").view(4, 128)
    out = triton_filter_and_convert_dcp_index(
        req_id, block_table, token_indices, dcp_size, 0, BLOCK_SIZE=16,
        NUM_TOPK_TOKENS=128)
    assert (out[:, 1::dcp_size] == -1).all()
