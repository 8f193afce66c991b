import pytest
import torch

from vllm import _custom_ops as ops

NUM_TOKENS = [42]
KV_LORA_RANKS = [512]
BLOCK_SIZES = [16]


def _block_tables(batch_size: int, num_blocks: int) -> torch.Tensor:
    return torch.stack([torch.randperm(num_blocks, dtype=torch.int32)
                        for _ in range(batch_size)]).cuda()


@pytest.mark.parametrize("kv_lora_rank", KV_LORA_RANKS)
@pytest.mark.parametrize("block_size", BLOCK_SIZES)
@pytest.mark.parametrize("kv_cache_dtype", ["auto", "fp8"])
def test_concat_and_cache_mla(kv_lora_rank, block_size, kv_cache_dtype):
    num_tokens, pe_dim, num_blocks = 42, 64, 8
    kv_c = torch.randn(num_tokens, kv_lora_rank, device="cuda")
    k_pe = torch.randn(num_tokens, pe_dim, device="cuda")
    slots = torch.randperm(num_blocks * block_size, device="cuda")[:num_tokens]
    cache_dtype = torch.uint8 if kv_cache_dtype == "fp8" else kv_c.dtype
    kv_cache = torch.zeros(num_blocks, block_size, kv_lora_rank + pe_dim,
                           dtype=cache_dtype, device="cuda")
    scale = torch.tensor(0.1, device="cuda")
    ops.concat_and_cache_mla(kv_c, k_pe, kv_cache, slots, kv_cache_dtype, scale)
    if kv_cache_dtype == "auto":
        entry = kv_cache.view(-1, kv_lora_rank + pe_dim)[slots]
        torch.testing.assert_close(entry[:, :kv_lora_rank], kv_c)


@pytest.mark.parametrize("kv_cache_dtype", ["auto", "fp8"])
def test_gather_and_maybe_dequant_cache_mla(kv_cache_dtype):
    batch_size, block_size, num_blocks, entry = 8, 16, 1024, 576
    seq_lens = torch.full((batch_size,), 512, dtype=torch.int32)
    cu_seq_lens = torch.zeros(batch_size + 1, dtype=torch.int32)
    torch.cumsum(seq_lens, 0, out=cu_seq_lens[1:])
    total = int(cu_seq_lens[-1])
    token_to_seq = torch.repeat_interleave(
        torch.arange(batch_size, dtype=torch.int32), seq_lens).cuda()
    src = torch.randn(num_blocks, block_size, entry, device="cuda")
    dst = torch.empty(total, entry, device="cuda")
    block_table = _block_tables(batch_size, num_blocks)
    scale = torch.tensor(0.1, device="cuda")
    ops.gather_and_maybe_dequant_cache(src, dst, block_table, cu_seq_lens.cuda(),
                                       token_to_seq, total, kv_cache_dtype,
                                       scale, None)
    assert dst.isfinite().all()


def test_cp_gather_cache_mla():
    batch_size, block_size, num_blocks, entry = 8, 16, 1024, 576
    seq_lens = torch.randint(0, 513, (batch_size,), dtype=torch.int32)
    cu_seq_lens = torch.zeros(batch_size + 1, dtype=torch.int32)
    torch.cumsum(seq_lens, 0, out=cu_seq_lens[1:])
    src = torch.randn(num_blocks, block_size, entry, device="cuda")
    dst = torch.empty(int(cu_seq_lens[-1]), entry, device="cuda")
    block_table = _block_tables(batch_size, num_blocks)
    ops.cp_gather_cache(src, dst, block_table, cu_seq_lens.cuda(), batch_size)
    expected = src[block_table[0, 0]][: min(int(seq_lens[0]), block_size)]
    torch.testing.assert_close(dst[: expected.shape[0]], expected)
