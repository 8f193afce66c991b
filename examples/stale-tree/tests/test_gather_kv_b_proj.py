import torch

from mlaport.mla_prefix import gather_kv_b_proj


def test_gather_kv_b_proj_writes_rope_for_every_head():
    heads, dn, dv = 2, 128, 128
    k_buffer = torch.randn(4, 1, 576).to(torch.bfloat16)
    weight = torch.randn(heads * (dn + dv), 512).to(torch.bfloat16)
    indptr = torch.tensor([0, 4], dtype=torch.int32)
    indices = torch.arange(4, dtype=torch.int32)
    k = torch.empty(4, heads, dn + 64, dtype=torch.bfloat16)
    v = torch.empty(4, heads, dv, dtype=torch.bfloat16)
    gather_kv_b_proj(k_buffer, torch.ones(1), indptr, indices, indptr, weight, None, k, v)
    assert torch.equal(k[:, 0, dn:], k[:, 1, dn:])
