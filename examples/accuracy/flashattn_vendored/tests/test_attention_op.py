import math

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA kernels")


@pytest.mark.parametrize("head_dim", [32, 64, 96, 128, 256])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_op_matches_torch(head_dim, causal):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 77, 4, head_dim, device="cuda", dtype=torch.float16) for _ in range(3))
    out = torch.empty_like(q)
    lse = torch.empty(2, 4, 77, device="cuda", dtype=torch.float32)
    torch.ops.engine_attn.attention_forward(q, k, v, out, lse, 1.0 / math.sqrt(head_dim), causal)
    expected = torch.nn.functional.scaled_dot_product_attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=causal
    ).transpose(1, 2)
    torch.testing.assert_close(out, expected, atol=2e-3, rtol=2e-3)
