import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA kernels")


def test_keys_written_then_gathered_round_trip():
    head_dim, block, pages = 128, 16, 4
    keys = torch.randn(20, head_dim, device="cuda").to(torch.bfloat16)
    cache = torch.zeros(pages, block, head_dim + 4, dtype=torch.uint8, device="cuda")
    slots = torch.arange(20, device="cuda", dtype=torch.int64)
    torch.ops.dsv32.indexer_k_quant_and_cache(keys, cache, slots, 128, "ue8m0")
    out = torch.empty(20, head_dim, dtype=torch.uint8, device="cuda")
    scales = torch.empty(20, 1, dtype=torch.float32, device="cuda")
    table = torch.arange(pages, dtype=torch.int32, device="cuda").reshape(1, pages)
    torch.ops.dsv32.cp_gather_indexer_k_quant_cache(cache, out, scales, table, torch.tensor([0, 20], dtype=torch.int32, device="cuda"))
    back = out.view(torch.float8_e4m3fn).float() * scales
    torch.testing.assert_close(back, keys.float(), atol=0.1, rtol=0.1)
