import math

import pytest
import torch

from fa2tri import flash_attn_fwd, fwd_hdim64


def reference(q, k, v, causal, scale):
    qf, kf, vf = (t.float().transpose(1, 2) for t in (q, k, v))
    scores = qf @ kf.transpose(-1, -2) * scale
    if causal:
        rows = torch.arange(q.shape[1])[:, None]
        cols = torch.arange(k.shape[1])[None, :]
        scores = scores.masked_fill(cols > rows, float("-inf"))
    return (scores.softmax(-1) @ vf).transpose(1, 2).to(q.dtype)


@pytest.mark.parametrize("seqlen_q, seqlen_k, head_dim", [(5, 5, 32), (70, 130, 64), (33, 33, 48)])
@pytest.mark.parametrize("causal", [False, True])
def test_forward_matches_torch(seqlen_q, seqlen_k, head_dim, causal):
    torch.manual_seed(0)
    q = torch.randn(2, seqlen_q, 3, head_dim, dtype=torch.float16)
    k = torch.randn(2, seqlen_k, 3, head_dim, dtype=torch.float16)
    v = torch.randn(2, seqlen_k, 3, head_dim, dtype=torch.float16)
    out = flash_attn_fwd(q, k, v, causal=causal)
    expected = reference(q, k, v, causal, 1.0 / math.sqrt(head_dim))
    torch.testing.assert_close(out.float(), expected.float(), atol=2e-2, rtol=2e-2)


def test_fixed_tile_entry_point_writes_the_given_output():
    torch.manual_seed(1)
    q, k, v = (torch.randn(1, 40, 2, 64, dtype=torch.float16) for _ in range(3))
    out = torch.zeros_like(q)
    result = fwd_hdim64(q, k, v, out, 0.125, False)
    assert result is out
    torch.testing.assert_close(out.float(), reference(q, k, v, False, 0.125).float(), atol=2e-2, rtol=2e-2)
