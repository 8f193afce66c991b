import pytest
import torch

from vllm import _custom_ops as ops


def _fp8_ds_mla_cache(num_blocks: int, block_size: int) -> torch.Tensor:
    cache = torch.randint(0, 120, (num_blocks, block_size, 656),
                          dtype=torch.uint8, device="cuda")
    scales = torch.rand(num_blocks, block_size, 4, device="cuda") * 2 + 0.1
    cache[..., 512:528] = scales.view(torch.uint8).view(num_blocks, block_size, 16)
    return cache


@pytest.mark.parametrize("seq_lens", [[1], [64], [128], [256, 128, 384]])
def test_cp_gather_and_upconvert_fp8_kv_cache(seq_lens):
    block_size = 64
    lens = torch.tensor(seq_lens, dtype=torch.int32, device="cuda")
    starts = torch.zeros_like(lens)
    starts[1:] = torch.cumsum(lens, 0)[:-1]
    blocks = [(n + block_size - 1) // block_size for n in seq_lens]
    cache = _fp8_ds_mla_cache(sum(blocks), block_size)
    block_table = torch.zeros(len(seq_lens), max(blocks), dtype=torch.int32,
                              device="cuda")
    first = 0
    for row, count in enumerate(blocks):
        block_table[row, :count] = torch.arange(first, first + count)
        first += count
    dst = torch.empty(sum(seq_lens), 576, dtype=torch.bfloat16, device="cuda")
    ops.cp_gather_and_upconvert_fp8_kv_cache(cache, dst, block_table, lens,
                                             starts, len(seq_lens))
    rope = cache[0, 0, 528:656].view(torch.bfloat16)
    assert torch.equal(dst[0, 512:], rope)
