"""The engine's attention on the vendored piecewise attention against a
plain torch fp32 reference, forward and backward.

Runs where the scorer has written the vendored module, on a CUDA device
only: at this base the launchers switch devices through torch.cuda. Lengths
are multiples of the tiles (128 queries, 64 keys): at this base the kernels
do not mask keys past the end of the sequence. Tolerance 2e-2 (absolute)
on outputs, 5e-2 on gradients.
"""

import math

import pytest
import torch

pytest.importorskip("flag_attn.piecewise", reason="the vendored module is written by the scorer")
if not torch.cuda.is_available():
    pytest.skip("the vendored launchers need a CUDA device", allow_module_level=True)

from flag_attn.piecewise import attention  # noqa: E402
from engine import prefill, train_step  # noqa: E402


def _inputs(length=128, dim=64, seed=0, grad=False):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(1, 2, length, dim, generator=g).half().cuda().requires_grad_(grad) for _ in range(5)]


def _reference(q1, k1, q2, k2, v, w, causal):
    q1, k1, q2, k2, v = (t.float() for t in (q1, k1, q2, k2, v))
    n = q1.shape[2]
    pos = torch.arange(n, device=q1.device)
    far = pos[:, None] >= pos[None, :] + w
    s = torch.where(far, q2 @ k2.transpose(-1, -2), q1 @ k1.transpose(-1, -2)) / math.sqrt(q1.shape[-1])
    if causal:
        s = s.masked_fill(pos[:, None] < pos[None, :], float("-inf"))
    return torch.softmax(s, dim=-1) @ v


@pytest.mark.parametrize("causal", [False, True])
def test_attention_matches_torch(causal):
    q1, k1, q2, k2, v = _inputs(seed=int(causal))
    out = attention(q1, k1, q2, k2, v, 32, causal, 1.0 / math.sqrt(64))
    assert (out.float() - _reference(q1, k1, q2, k2, v, 32, causal)).abs().max() < 2e-2


def test_engine_prefill_and_train_step_match_torch():
    tensors = _inputs(seed=3)
    out = prefill(*tensors)
    assert (out.float() - _reference(*tensors, 64, True)).abs().max() < 2e-2
    leaves = _inputs(seed=4, grad=True)
    train_step(*leaves)
    copies = [t.detach().clone().requires_grad_(True) for t in leaves]
    _reference(*copies, 64, False).sum().backward()
    for got, want in zip(leaves, copies):
        assert (got.grad.float() - want.grad).abs().max() < 5e-2
