"""The engine on the vendored ops against plain torch.

Runs where the scorer has written the vendored modules and FlagGems' own
``flag_gems.utils`` and a CUDA device are present; skipped otherwise (the
vendored modules cannot be imported, or launch, without them).
"""

import pytest
import torch
import torch.nn.functional as F

if not torch.cuda.is_available():
    pytest.skip("the vendored FlagGems kernels launch on CUDA only", allow_module_level=True)
pytest.importorskip("flag_gems.utils", reason="FlagGems' utils (libentry, pointwise_dynamic) are not installed")
pytest.importorskip("flag_gems.ops.rms_norm", reason="the vendored modules are written by the scorer")

from engine.attention import attention_inputs, rotary_tables  # noqa: E402
from engine.block import Norm, gated_mlp  # noqa: E402

DEVICE = "cuda"


def _rms_reference(x, w, eps):
    return (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)) * w


def _rope_reference(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


def test_norm_and_norm_after_residual():
    x, r = torch.randn(5, 64, device=DEVICE), torch.randn(5, 64, device=DEVICE)
    norm = Norm(64, device=DEVICE)
    torch.testing.assert_close(norm(x), _rms_reference(x, norm.weight, 1e-6))
    torch.testing.assert_close(norm.after_residual(x, r), _rms_reference(x + r, norm.weight, 1e-6))


@pytest.mark.parametrize("activation", ["silu", "gelu_tanh"])
def test_gated_mlp(activation):
    wg, wu, wd = (torch.randn(24, 8, device=DEVICE), torch.randn(24, 8, device=DEVICE), torch.randn(8, 24, device=DEVICE))
    x = torch.randn(5, 8, device=DEVICE)
    act = F.silu if activation == "silu" else (lambda t: F.gelu(t, approximate="tanh"))
    expected = (act(x @ wg.t()) * (x @ wu.t())) @ wd.t()
    torch.testing.assert_close(gated_mlp(x, wg, wu, wd, activation), expected, atol=1e-3, rtol=1e-3)


def test_attention_inputs_are_normed_then_rotated():
    hidden = torch.randn(4, 32, device=DEVICE)
    w_q, w_k = torch.randn(32, 32, device=DEVICE), torch.randn(16, 32, device=DEVICE)
    norm = Norm(32, device=DEVICE)
    cos, sin = rotary_tables(16, 16, device=DEVICE)
    pos = torch.tensor([0, 1, 2, 7], device=DEVICE)
    q, k = attention_inputs(hidden, norm, cos, sin, w_q, w_k, 2, 1, pos)
    x = _rms_reference(hidden, norm.weight, 1e-6)
    c, s = cos[pos][:, None], sin[pos][:, None]
    torch.testing.assert_close(q, _rope_reference((x @ w_q.t()).view(4, 2, 16), c, s), atol=1e-3, rtol=1e-3)
    torch.testing.assert_close(k, _rope_reference((x @ w_k.t()).view(4, 1, 16), c, s), atol=1e-3, rtol=1e-3)
