"""triton_convert_req_index_to_global_index / triton_filter_and_convert_dcp_index
against the PyTorch reference: exact equality, compaction as a set per row."""
from __future__ import annotations

import pytest
import torch

from portq_kernels.mla_sparse import (
    triton_convert_req_index_to_global_index,
    triton_filter_and_convert_dcp_index,
)
from portq_kernels.mla_sparse import reference as ref
from portq_kernels.mla_sparse.convert_index import _remap_tiling

SENTINEL = 0x5EADBEEF


def make_inputs(device, *, num_tokens, topk, block_size, num_requests=4, blocks_per_req=10,
                seed=0, oob_fraction=0.1):
    """Random top-k rows with -1 runs and out-of-range token ids."""
    g = torch.Generator().manual_seed(seed)
    total_blocks = num_requests * blocks_per_req * 3
    block_table = torch.stack([
        torch.randperm(total_blocks, generator=g)[:blocks_per_req] for _ in range(num_requests)
    ]).to(torch.int32)
    paged_len = blocks_per_req * block_size
    tok = torch.randint(0, paged_len, (num_tokens, topk), generator=g)
    oob = torch.rand((num_tokens, topk), generator=g) < oob_fraction
    tok[oob] = paged_len + torch.randint(0, 5 * block_size, (int(oob.sum()),), generator=g)
    for n in range(num_tokens):  # a -1 run of random length at a random place
        start = int(torch.randint(0, topk, (1,), generator=g))
        length = int(torch.randint(0, topk // 2 + 1, (1,), generator=g))
        tok[n, start:start + length] = -1
    req_id = torch.randint(0, num_requests, (num_tokens,), generator=g)
    return (req_id.to(torch.int32).to(device), block_table.to(device),
            tok.to(torch.int32).to(device))


def assert_compacted_equal(out, counts, ref_out, ref_counts):
    """Same counts, valid prefix equal to the reference's as a multiset, -1 tail."""
    assert torch.equal(counts.cpu(), ref_counts.cpu())
    cols = torch.arange(out.shape[1], device=out.device)[None, :]
    in_prefix = cols < counts[:, None]
    assert bool((out[~in_prefix] == -1).all()), "tail of a compacted row is not -1"
    assert bool((out[in_prefix] != -1).all()), "a -1 inside the valid prefix"
    assert torch.equal(out.sort(dim=1).values.cpu(), ref_out.sort(dim=1).values.cpu())


def check_against_reference(args, kwargs):
    got = triton_convert_req_index_to_global_index(*args, **kwargs)
    want = ref.triton_convert_req_index_to_global_index(*args, **kwargs)
    if kwargs.get("return_valid_counts"):
        assert_compacted_equal(got[0], got[1], want[0], want[1])
    else:
        assert torch.equal(got.cpu(), want.cpu())
    return got


@pytest.mark.parametrize("block_size", [16, 64, 128])
@pytest.mark.parametrize("topk", [128, 256, 512])
@pytest.mark.parametrize("return_valid_counts", [False, True])
def test_decode_rows_match_reference(device, block_size, topk, return_valid_counts):
    args = make_inputs(device, num_tokens=8, topk=topk, block_size=block_size)
    got = check_against_reference(args, dict(
        BLOCK_SIZE=block_size, NUM_TOPK_TOKENS=topk, return_valid_counts=return_valid_counts))
    out = got[0] if return_valid_counts else got
    assert bool((out == -1).any()) and bool((out >= 0).any())


@pytest.mark.parametrize("topk", [2048, 2176])
@pytest.mark.parametrize("return_valid_counts", [False, True])
def test_wide_and_non_power_of_two_rows(device, topk, return_valid_counts):
    """2176 = 17 tiles of 128: two 2048-wide tiles without counts (the second masked), one 4096-wide tile when counting."""
    args = make_inputs(device, num_tokens=3, topk=topk, block_size=64, blocks_per_req=40)
    check_against_reference(args, dict(
        BLOCK_SIZE=64, NUM_TOPK_TOKENS=topk, return_valid_counts=return_valid_counts))


def test_multi_tile_counting_uses_atomics_and_matches(device):
    """A non-power-of-two width past 4096 stays tiled: atomic counts, -1 pre-fill."""
    topk = 33 * 128
    assert _remap_tiling(topk, 128, True)[0] is False
    args = make_inputs(device, num_tokens=2, topk=topk, block_size=64, blocks_per_req=80)
    check_against_reference(args, dict(BLOCK_SIZE=64, NUM_TOPK_TOKENS=topk,
                                       return_valid_counts=True))


def test_remap_tiling_choices():
    assert _remap_tiling(2048, 128, True) == (True, 2048, 1, 8)
    assert _remap_tiling(2176, 128, True) == (True, 4096, 1, 8)
    assert _remap_tiling(8192, 128, True) == (True, 8192, 1, 8)
    # Without counting the tile is ours to pick: a row up to 2048 wide per program.
    assert _remap_tiling(2176, 128, False) == (False, 2048, 2, 8)
    assert _remap_tiling(2048, 128, False) == (False, 2048, 1, 8)
    assert _remap_tiling(512, 128, False) == (False, 512, 1, 8)
    assert _remap_tiling(4224, 128, True) == (False, 128, 33, 4)


def test_known_values_and_out_of_range(device):
    block_table = torch.tensor([[5, 9, 2], [7, 1, 3]], dtype=torch.int32, device=device)
    tok = torch.tensor([[0, 15, 16, 47, 48, -1, 100, 33]], dtype=torch.int32, device=device)
    tok = tok.repeat(2, 16)  # 2 rows x 128 columns
    req_id = torch.tensor([0, 1], dtype=torch.int32, device=device)
    out = triton_convert_req_index_to_global_index(req_id, block_table, tok, BLOCK_SIZE=16,
                                                   NUM_TOPK_TOKENS=128)
    assert out[0, :8].tolist() == [80, 95, 144, 47, -1, -1, -1, 33]
    assert out[1, :8].tolist() == [112, 127, 16, 63, -1, -1, -1, 49]


def test_mixed_decode_and_prefill_rows(device):
    """Prefill rows map to workspace_start + t even past the paged range."""
    block_size, topk = 16, 128
    req_id, block_table, tok = make_inputs(device, num_tokens=12, topk=topk,
                                           block_size=block_size, seed=3)
    prefill_ids = torch.tensor([-1] * 6 + [0] * 3 + [1] * 3, dtype=torch.int32, device=device)
    starts = torch.tensor([0, 100], dtype=torch.int32, device=device)
    kwargs = dict(BLOCK_SIZE=block_size, NUM_TOPK_TOKENS=topk, HAS_PREFILL_WORKSPACE=True,
                  prefill_workspace_request_ids=prefill_ids, prefill_workspace_starts=starts)
    out = check_against_reference((req_id, block_table, tok), kwargs)
    prefill_tok = tok[6:].long()
    expected = torch.where(prefill_tok >= 0, prefill_tok + torch.tensor(
        [0] * 3 + [100] * 3, device=device)[:, None], -1)
    assert torch.equal(out[6:].long(), expected)
    assert bool((prefill_tok >= 10 * block_size).any()), "no prefill entry past the table"
    check_against_reference((req_id, block_table, tok), dict(kwargs, return_valid_counts=True))


def test_bad_prefill_request_id_and_padded_req_id_give_minus_one(device):
    req_id, block_table, tok = make_inputs(device, num_tokens=4, topk=128, block_size=16)
    req_id[1] = -1  # CUDA-graph padding row
    req_id[2] = 99  # past the block table
    prefill_ids = torch.tensor([-1, -1, -1, 7], dtype=torch.int32, device=device)
    starts = torch.tensor([0, 50], dtype=torch.int32, device=device)
    out = check_against_reference((req_id, block_table, tok), dict(
        BLOCK_SIZE=16, NUM_TOPK_TOKENS=128, HAS_PREFILL_WORKSPACE=True,
        prefill_workspace_request_ids=prefill_ids, prefill_workspace_starts=starts))
    assert bool((out[1:] == -1).all())


@pytest.mark.parametrize("dcp_size", [2, 4, 8])
@pytest.mark.parametrize("interleave", [1, 64])
@pytest.mark.parametrize("compact", [False, True])
def test_dcp_filter_matches_reference(device, dcp_size, interleave, compact):
    block_size, topk = 64, 256
    req_id, block_table, tok = make_inputs(device, num_tokens=4, topk=topk,
                                           block_size=block_size, blocks_per_req=6,
                                           seed=dcp_size)
    tok = torch.where(tok >= 0, tok * 3, tok)  # global ids, about dcp_size x wider
    for rank in sorted({0, dcp_size - 1}):
        kwargs = dict(dcp_size=dcp_size, dcp_rank=rank, cp_kv_cache_interleave_size=interleave,
                      BLOCK_SIZE=block_size, NUM_TOPK_TOKENS=topk, return_valid_counts=True,
                      compact_valid_to_front=compact)
        got, counts = triton_filter_and_convert_dcp_index(req_id, block_table, tok, **kwargs)
        want, want_counts = ref.triton_filter_and_convert_dcp_index(req_id, block_table, tok,
                                                                    **kwargs)
        if compact:
            assert_compacted_equal(got, counts, want, want_counts)
        else:
            assert torch.equal(got.cpu(), want.cpu())
            assert torch.equal(counts.cpu(), want_counts.cpu())


def test_dcp_owner_and_local_formula_by_hand(device):
    """D=4, I=2: token 13 -> group 6 -> owner 2, local (13 // 8) * 2 + 1 = 3."""
    block_table = torch.tensor([[4, 6]], dtype=torch.int32, device=device)
    tok = torch.full((1, 128), -1, dtype=torch.int32, device=device)
    tok[0, :4] = torch.tensor([13, 12, 5, 40])
    out = triton_filter_and_convert_dcp_index(
        torch.zeros(1, dtype=torch.int32, device=device), block_table, tok, dcp_size=4,
        dcp_rank=2, cp_kv_cache_interleave_size=2, BLOCK_SIZE=4, NUM_TOPK_TOKENS=128,
        compact_valid_to_front=False)
    # 13 -> local 3 -> block 0 off 3 -> 19; 12 -> local 2 -> 18; 5 -> owner 2, local 1 -> 17;
    # 40 -> group 20 -> owner 0 -> not ours.
    assert out[0, :4].tolist() == [19, 18, 17, -1]
    assert bool((out[0, 4:] == -1).all())


def test_dcp_size_one_delegates(device):
    args = make_inputs(device, num_tokens=4, topk=128, block_size=16)
    a = triton_filter_and_convert_dcp_index(*args, dcp_size=1, dcp_rank=0, BLOCK_SIZE=16,
                                            NUM_TOPK_TOKENS=128)
    b = triton_convert_req_index_to_global_index(*args, BLOCK_SIZE=16, NUM_TOPK_TOKENS=128)
    assert torch.equal(a, b)


@pytest.mark.parametrize("dcp_size", [2, 4])
def test_dcp_prefill_workspace_uses_rank_stride(device, dcp_size):
    """Under DCP a prefill row addresses the all-gathered workspace."""
    req_id, block_table, tok = make_inputs(device, num_tokens=6, topk=128, block_size=64,
                                           seed=11)
    prefill_ids = torch.tensor([-1, -1, 0, 0, 1, 1], dtype=torch.int32, device=device)
    starts = torch.tensor([0, 300], dtype=torch.int32, device=device)
    kwargs = dict(BLOCK_SIZE=64, NUM_TOPK_TOKENS=128, HAS_PREFILL_WORKSPACE=True,
                  prefill_workspace_request_ids=prefill_ids, prefill_workspace_starts=starts,
                  prefill_workspace_rank_stride=1000, dcp_size=dcp_size, dcp_rank=1,
                  cp_kv_cache_interleave_size=1, return_valid_counts=True)
    out, counts = check_against_reference((req_id, block_table, tok), kwargs)
    t = int(tok[2][tok[2] >= 0][0])
    assert (t % dcp_size) * 1000 + t // dcp_size in out[2].tolist()


def test_strided_inputs(device):
    """Column-strided token_indices and block_table views are read through strides."""
    req_id, block_table, tok = make_inputs(device, num_tokens=5, topk=256, block_size=16)
    tok_storage = torch.full((5, 512), 12345, dtype=torch.int32, device=device)
    tok_storage[:, ::2] = tok
    bt_storage = torch.full((block_table.shape[0], 2 * block_table.shape[1]), -7,
                            dtype=torch.int32, device=device)
    bt_storage[:, 1::2] = block_table
    strided_tok, strided_bt = tok_storage[:, ::2], bt_storage[:, 1::2]
    assert not strided_tok.is_contiguous() and not strided_bt.is_contiguous()
    for rvc in (False, True):
        check_against_reference((req_id, strided_bt, strided_tok),
                                dict(BLOCK_SIZE=16, NUM_TOPK_TOKENS=256, return_valid_counts=rvc))


def test_block_stride_rows_and_offsets_past_two_gib(device):
    """Rows of a cache with other layers' pages in between (upstream's #55431
    case); row * 656 bytes is far past 2 GiB, the row itself fits in int32."""
    rows_per_block = 64 * 61
    block_table = torch.tensor([[9, 2, 7, 1, 40000]], dtype=torch.int32, device=device)
    tok = torch.full((1, 128), -1, dtype=torch.int32, device=device)
    tok[0, :7] = torch.tensor([0, 63, 64, 127, 191, 255, 256 + 5])
    out = triton_convert_req_index_to_global_index(
        torch.zeros(1, dtype=torch.int32, device=device), block_table, tok, BLOCK_SIZE=64,
        BLOCK_STRIDE_ROWS=rows_per_block, NUM_TOPK_TOKENS=128)
    expected = [9 * rows_per_block, 9 * rows_per_block + 63, 2 * rows_per_block,
                2 * rows_per_block + 63, 7 * rows_per_block + 63, rows_per_block + 63,
                40000 * rows_per_block + 5]
    assert out[0, :7].tolist() == expected
    assert expected[-1] * 656 > 2**31
    assert bool((out[0, 7:] == -1).all())


def test_rows_past_int32_and_negative_blocks_give_minus_one(device):
    block_table = torch.tensor([[2**22, -1, 3]], dtype=torch.int32, device=device)
    tok = torch.full((1, 128), -1, dtype=torch.int32, device=device)
    tok[0, :3] = torch.tensor([1, 65, 130])
    kwargs = dict(BLOCK_SIZE=64, BLOCK_STRIDE_ROWS=1024, NUM_TOPK_TOKENS=128,
                  return_valid_counts=True)
    out, counts = check_against_reference(
        (torch.zeros(1, dtype=torch.int32, device=device), block_table, tok), kwargs)
    assert counts.tolist() == [1] and out[0, 0].item() == 3 * 1024 + 2


@pytest.mark.parametrize("topk", [128, 4224])
def test_out_buffers_are_fully_written(device, topk):
    """Caller buffers (poisoned) are overwritten entirely, also on the atomic path."""
    args = make_inputs(device, num_tokens=2, topk=topk, block_size=64, blocks_per_req=80)
    out = torch.full((2, topk), SENTINEL, dtype=torch.int32, device=device)
    counts = torch.full((2,), SENTINEL, dtype=torch.int32, device=device)
    got, got_counts = triton_convert_req_index_to_global_index(
        *args, BLOCK_SIZE=64, NUM_TOPK_TOKENS=topk, return_valid_counts=True, out=out,
        valid_counts_out=counts)
    assert got is out and got_counts is counts
    assert not bool((out == SENTINEL).any())
    want, want_counts = ref.triton_convert_req_index_to_global_index(
        *args, BLOCK_SIZE=64, NUM_TOPK_TOKENS=topk, return_valid_counts=True)
    assert_compacted_equal(out, counts, want, want_counts)


def test_in_place_without_counts(device):
    args = make_inputs(device, num_tokens=3, topk=128, block_size=16)
    want = ref.triton_convert_req_index_to_global_index(*args, BLOCK_SIZE=16,
                                                        NUM_TOPK_TOKENS=128)
    tok = args[2].clone()
    got = triton_convert_req_index_to_global_index(args[0], args[1], tok, BLOCK_SIZE=16,
                                                   NUM_TOPK_TOKENS=128, out=tok)
    assert got is tok and torch.equal(tok, want)


def test_empty_batch(device):
    req_id, block_table, tok = make_inputs(device, num_tokens=1, topk=128, block_size=16)
    out, counts = triton_convert_req_index_to_global_index(
        req_id[:0], block_table, tok[:0], BLOCK_SIZE=16, NUM_TOPK_TOKENS=128,
        return_valid_counts=True)
    assert out.shape == (0, 128) and counts.shape == (0,)


# ---------------------------------------------------------------------------------------------
# Bad inputs: every check raises before anything is launched.

def _base(device):
    req_id, block_table, tok = make_inputs(device, num_tokens=2, topk=128, block_size=16)
    return dict(req_id=req_id, block_table=block_table, token_indices=tok, BLOCK_SIZE=16,
                NUM_TOPK_TOKENS=128)


BAD_CONVERT_CASES = {
    "req_id dtype": lambda d: dict(req_id=d["req_id"].long()),
    "block_table dtype": lambda d: dict(block_table=d["block_table"].long()),
    "token_indices dtype": lambda d: dict(token_indices=d["token_indices"].long()),
    "token_indices 1-D": lambda d: dict(token_indices=d["token_indices"][0]),
    "block_table 1-D": lambda d: dict(block_table=d["block_table"][0]),
    "req_id longer": lambda d: dict(req_id=torch.cat([d["req_id"], d["req_id"]])),
    "topk mismatch": lambda d: dict(NUM_TOPK_TOKENS=256),
    "topk not multiple of BLOCK_N": lambda d: dict(BLOCK_N=96),
    "BLOCK_N not pow2": lambda d: dict(BLOCK_N=48, NUM_TOPK_TOKENS=128),
    "BLOCK_SIZE zero": lambda d: dict(BLOCK_SIZE=0),
    "stride rows below block": lambda d: dict(BLOCK_STRIDE_ROWS=8),
    "prefill tensors missing": lambda d: dict(HAS_PREFILL_WORKSPACE=True),
    "prefill ids dtype": lambda d: dict(
        HAS_PREFILL_WORKSPACE=True, prefill_workspace_request_ids=d["req_id"].long(),
        prefill_workspace_starts=d["req_id"]),
    "prefill ids length": lambda d: dict(
        HAS_PREFILL_WORKSPACE=True, prefill_workspace_request_ids=d["req_id"][:1],
        prefill_workspace_starts=d["req_id"]),
    "prefill starts strided": lambda d: dict(
        HAS_PREFILL_WORKSPACE=True, prefill_workspace_request_ids=d["req_id"],
        prefill_workspace_starts=torch.zeros(4, dtype=torch.int32,
                                             device=d["req_id"].device)[::2]),
    "dcp prefill without rank stride": lambda d: dict(
        HAS_PREFILL_WORKSPACE=True, prefill_workspace_request_ids=d["req_id"],
        prefill_workspace_starts=d["req_id"], dcp_size=2, dcp_rank=0),
    "negative rank stride": lambda d: dict(
        HAS_PREFILL_WORKSPACE=True, prefill_workspace_request_ids=d["req_id"],
        prefill_workspace_starts=d["req_id"], prefill_workspace_rank_stride=-1),
    "dcp rank out of range": lambda d: dict(dcp_size=2, dcp_rank=2),
    "dcp size zero": lambda d: dict(dcp_size=0),
    "interleave not dividing block": lambda d: dict(dcp_size=2, cp_kv_cache_interleave_size=3),
    "out dtype": lambda d: dict(out=torch.empty(2, 128, dtype=torch.int64)),
    "out shape": lambda d: dict(out=torch.empty(2, 64, dtype=torch.int32,
                                                device=d["req_id"].device)),
    "out strided": lambda d: dict(out=torch.empty(2, 256, dtype=torch.int32,
                                                  device=d["req_id"].device)[:, ::2]),
    "counts out without counting": lambda d: dict(
        valid_counts_out=torch.empty(2, dtype=torch.int32, device=d["req_id"].device)),
    "counts out shape": lambda d: dict(
        return_valid_counts=True,
        valid_counts_out=torch.empty(3, dtype=torch.int32, device=d["req_id"].device)),
    "compaction in place": lambda d: dict(return_valid_counts=True, out=d["token_indices"]),
}


@pytest.mark.parametrize("case", sorted(BAD_CONVERT_CASES))
def test_bad_convert_arguments_raise(device, case):
    base = _base(device)
    kwargs = dict(base, **BAD_CONVERT_CASES[case](base))
    with pytest.raises(TypeError if case.endswith("dtype") else ValueError):
        triton_convert_req_index_to_global_index(**kwargs)


def test_non_tensor_raises_type_error(device):
    base = _base(device)
    with pytest.raises(TypeError):
        triton_convert_req_index_to_global_index(**dict(base, req_id=[0, 1]))


@pytest.mark.parametrize("bad", [dict(dcp_size=4, dcp_rank=4), dict(dcp_size=0, dcp_rank=0),
                                 dict(dcp_size=2, dcp_rank=0, cp_kv_cache_interleave_size=3),
                                 dict(dcp_size=2, dcp_rank=0, NUM_TOPK_TOKENS=256)])
def test_bad_dcp_filter_arguments_raise(device, bad):
    base = _base(device)
    kwargs = dict(base, **bad)
    with pytest.raises(ValueError):
        triton_filter_and_convert_dcp_index(**kwargs)


def test_device_mismatch_raises():
    if not torch.cuda.is_available():
        pytest.skip("needs a second device type")
    base = _base(torch.device("cuda"))
    with pytest.raises(ValueError):
        triton_convert_req_index_to_global_index(**dict(base, req_id=base["req_id"].cpu()))


# ---------------------------------------------------------------------------------------------
# Realistic shapes (GPU only).

@pytest.mark.gpu
@pytest.mark.parametrize("topk", [2048, 2176])
@pytest.mark.parametrize("return_valid_counts", [False, True])
def test_gpu_realistic_batch(topk, return_valid_counts):
    device = torch.device("cuda")
    args = make_inputs(device, num_tokens=4096, topk=topk, block_size=64, num_requests=16,
                       blocks_per_req=1024, seed=5)
    check_against_reference(args, dict(BLOCK_SIZE=64, NUM_TOPK_TOKENS=topk,
                                       return_valid_counts=return_valid_counts))


@pytest.mark.gpu
@pytest.mark.parametrize("dcp_size", [2, 8])
@pytest.mark.parametrize("interleave", [1, 64])
def test_gpu_dcp_realistic(dcp_size, interleave):
    device = torch.device("cuda")
    req_id, block_table, tok = make_inputs(device, num_tokens=1024, topk=2048, block_size=64,
                                           num_requests=8, blocks_per_req=512, seed=6)
    kwargs = dict(dcp_size=dcp_size, dcp_rank=1, cp_kv_cache_interleave_size=interleave,
                  BLOCK_SIZE=64, NUM_TOPK_TOKENS=2048, return_valid_counts=True)
    got = triton_filter_and_convert_dcp_index(req_id, block_table, tok, **kwargs)
    want = ref.triton_filter_and_convert_dcp_index(req_id, block_table, tok, **kwargs)
    assert_compacted_equal(got[0], got[1], want[0], want[1])


@pytest.mark.gpu
def test_gpu_multi_tile_atomic_counting():
    device = torch.device("cuda")
    topk = 33 * 128
    args = make_inputs(device, num_tokens=2048, topk=topk, block_size=64, blocks_per_req=128,
                       seed=8)
    check_against_reference(args, dict(BLOCK_SIZE=64, NUM_TOPK_TOKENS=topk,
                                       return_valid_counts=True))


@pytest.mark.parametrize("return_valid_counts", [False, True])
def test_out_of_range_ids_never_leave_their_tensors(device, return_valid_counts):
    """Top-k ids far past the table, negative ids other than -1, and request ids
    outside the table, with the block table and the output inside sentinel
    margins: a read of the table's margin would put a margin block id into the
    output, a write outside ``out`` would change its margins. The results equal
    the reference (-1 for every such entry)."""
    req_id, block_table, tok = make_inputs(device, num_tokens=6, topk=256, block_size=16)
    tok[0, :8] = torch.tensor([2**31 - 1, 10**9, -5, -2**31, 16 * 10, 16 * 10 + 15, 10**6, -2],
                              dtype=torch.int32)
    req_id[1], req_id[2] = -3, block_table.shape[0] + 7
    margin = block_table.numel()
    table_buffer = torch.full((block_table.numel() + 2 * margin,), 77777, dtype=torch.int32, device=device)
    table_buffer[margin:margin + block_table.numel()] = block_table.reshape(-1)
    guarded_table = table_buffer[margin:margin + block_table.numel()].view(block_table.shape)
    out_buffer = torch.full((tok.numel() + 2 * 256,), SENTINEL, dtype=torch.int32, device=device)
    out = out_buffer[256:256 + tok.numel()].view(tok.shape)
    kwargs = dict(BLOCK_SIZE=16, NUM_TOPK_TOKENS=256, return_valid_counts=return_valid_counts)
    got = triton_convert_req_index_to_global_index(req_id, guarded_table, tok, out=out, **kwargs)
    want = ref.triton_convert_req_index_to_global_index(req_id, block_table, tok, **kwargs)
    if return_valid_counts:
        assert_compacted_equal(got[0], got[1], want[0], want[1])
    else:
        assert torch.equal(got.cpu(), want.cpu())
    assert bool((out_buffer[:256] == SENTINEL).all()) and bool((out_buffer[-256:] == SENTINEL).all())
    assert bool((table_buffer[:margin] == 77777).all()) and bool((table_buffer[-margin:] == 77777).all())
    assert not bool((out // 16 == 77777).any()), "a margin block id reached the output"
