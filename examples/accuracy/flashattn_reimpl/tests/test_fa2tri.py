import math

import pytest
import torch
import triton
import triton.language as tl

from fa2tri import flash_attn_fwd, fwd_hdim32, fwd_hdim64, fwd_hdim128
from fa2tri.softmax import max_exp2_sum

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def reference(q, k, v, causal, scale):
    qf, kf, vf = (t.float().transpose(1, 2) for t in (q, k, v))
    scores = qf @ kf.transpose(-1, -2) * scale
    if causal:
        rows = torch.arange(q.shape[1], device=q.device)[:, None]
        cols = torch.arange(k.shape[1], device=k.device)[None, :]
        scores = scores.masked_fill(cols > rows, float("-inf"))
    return (scores.softmax(-1) @ vf).transpose(1, 2).to(q.dtype)


@pytest.mark.parametrize("seqlen_q, seqlen_k, head_dim", [(5, 5, 32), (70, 130, 64), (33, 33, 48)])
@pytest.mark.parametrize("causal", [False, True])
def test_forward_matches_torch(seqlen_q, seqlen_k, head_dim, causal):
    torch.manual_seed(0)
    q = torch.randn(2, seqlen_q, 3, head_dim, dtype=torch.float16).to(DEVICE)
    k = torch.randn(2, seqlen_k, 3, head_dim, dtype=torch.float16).to(DEVICE)
    v = torch.randn(2, seqlen_k, 3, head_dim, dtype=torch.float16).to(DEVICE)
    out = flash_attn_fwd(q, k, v, causal=causal)
    expected = reference(q, k, v, causal, 1.0 / math.sqrt(head_dim))
    torch.testing.assert_close(out.float(), expected.float(), atol=2e-2, rtol=2e-2)


def test_fixed_tile_entry_point_writes_the_given_output():
    torch.manual_seed(1)
    q, k, v = (torch.randn(1, 40, 2, 64, dtype=torch.float16).to(DEVICE) for _ in range(3))
    out = torch.zeros_like(q)
    result = fwd_hdim64(q, k, v, out, 0.125, False)
    assert result is out
    torch.testing.assert_close(out.float(), reference(q, k, v, False, 0.125).float(), atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("head_dim", [32, 128])
def test_head_dim_entry_points_match_torch(head_dim):
    torch.manual_seed(2)
    q, k, v = (torch.randn(1, 19, 2, head_dim, dtype=torch.float16).to(DEVICE) for _ in range(3))
    scale = 1.0 / math.sqrt(head_dim)
    if head_dim == 32:
        out = fwd_hdim32(q, k, v, torch.empty_like(q), scale, True)
    else:
        out = fwd_hdim128(q, k, v, torch.empty_like(q), scale, True)
    torch.testing.assert_close(out.float(), reference(q, k, v, True, scale).float(), atol=2e-2, rtol=2e-2)


@triton.jit
def _row_softmax_probe(X, P, M, L, scale, N: tl.constexpr):
    rows = tl.arange(0, N)
    x = tl.load(X + rows[:, None] * N + rows[None, :])
    maxima, probs, sums = max_exp2_sum(x, scale)
    tl.store(P + rows[:, None] * N + rows[None, :], probs)
    tl.store(M + rows, maxima)
    tl.store(L + rows, sums)


def test_max_exp2_sum_is_an_unnormalised_base2_softmax():
    torch.manual_seed(3)
    x = torch.randn(16, 16)
    x[3] = float("-inf")
    x = x.to(DEVICE)
    probs, maxima, sums = torch.empty_like(x), torch.empty(16, device=DEVICE), torch.empty(16, device=DEVICE)
    _row_softmax_probe[(1,)](x, probs, maxima, sums, 0.5, N=16)
    expected = torch.exp2(x * 0.5 - torch.where(x.amax(1) == float("-inf"), 0.0, x.amax(1) * 0.5)[:, None])
    torch.testing.assert_close(probs, expected.nan_to_num(0.0))
    torch.testing.assert_close(sums, expected.nan_to_num(0.0).sum(1))
    torch.testing.assert_close(maxima, x.amax(1))
