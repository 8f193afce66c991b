import torch

from mlaport.mla_sparse import (
    prepare_sparse_mla_safe_lengths,
    triton_convert_req_index_to_global_index,
    triton_filter_and_convert_dcp_index,
)


def test_convert_maps_tokens_to_slots():
    req_id = torch.zeros(1, dtype=torch.int32)
    table = torch.tensor([[3, 1]], dtype=torch.int32)
    tokens = torch.tensor([[0, 17, -1] + [-1] * 125], dtype=torch.int32)
    out = triton_convert_req_index_to_global_index(req_id, table, tokens, BLOCK_SIZE=16,
                                                   NUM_TOPK_TOKENS=128)
    assert out[0, :3].tolist() == [48, 17, -1]


def test_dcp_filter_drops_other_ranks():
    req_id = torch.zeros(1, dtype=torch.int32)
    table = torch.arange(8, dtype=torch.int32).view(1, 8)
    tokens = torch.arange(128, dtype=torch.int32).view(1, 128)
    out = triton_filter_and_convert_dcp_index(req_id, table, tokens, 2, 0, BLOCK_SIZE=16,
                                              NUM_TOPK_TOKENS=128)
    assert (out[0, 1::2] == -1).all()


def test_safe_lengths_install_a_dummy_slot():
    indices = torch.full((3, 4), 9, dtype=torch.int32)
    counts = torch.tensor([0, 2, 0], dtype=torch.int32)
    lengths = prepare_sparse_mla_safe_lengths(indices, counts)
    assert lengths.tolist() == [1, 2, 1]
    assert indices[:, 0].tolist() == [0, 9, 0]
