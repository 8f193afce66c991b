import torch

from mlaport.kv_cache import (
    concat_and_cache_mla,
    cp_gather_and_upconvert_fp8_kv_cache,
    cp_gather_and_upconvert_nvfp4_kv_cache,
    gather_and_maybe_dequant_cache,
)


def test_concat_then_gather_round_trips():
    kv_c, k_pe = torch.randn(6, 512), torch.randn(6, 64)
    cache = torch.zeros(4, 4, 576)
    slots = torch.tensor([0, 1, 2, 5, 6, 7])
    concat_and_cache_mla(kv_c, k_pe, cache, slots, "auto", torch.ones(1))
    dst = torch.empty(6, 576)
    cu = torch.tensor([0, 3, 6], dtype=torch.int32)
    token_to_seq = torch.tensor([0, 0, 0, 1, 1, 1], dtype=torch.int32)
    table = torch.tensor([[0, 3], [1, 2]], dtype=torch.int32)
    gather_and_maybe_dequant_cache(cache, dst, table, cu, token_to_seq, 6, "auto", torch.ones(1))
    assert torch.equal(dst[:3, :512], kv_c[:3])


def test_upconvert_gathers_write_every_row():
    cache = torch.zeros(2, 4, 656, dtype=torch.uint8)
    dst = torch.full((8, 576), 7.0, dtype=torch.bfloat16)
    seq_lens = torch.tensor([4, 4], dtype=torch.int32)
    starts = torch.tensor([0, 4], dtype=torch.int32)
    table = torch.tensor([[0], [1]], dtype=torch.int32)
    cp_gather_and_upconvert_fp8_kv_cache(cache, dst, table, seq_lens, starts, 2)
    assert (dst == 0).all()
    nvfp4 = torch.zeros(2, 4, 352, dtype=torch.uint8)
    cp_gather_and_upconvert_nvfp4_kv_cache(nvfp4, dst, table, starts, 2)
    assert (dst == 0).all()
