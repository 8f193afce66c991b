"""The engine's prelude on the vendored xformers ops against plain torch.

Runs where the scorer has written the vendored modules. The RMSNorm half runs
anywhere Triton does (under TRITON_INTERPRET=1 on the CPU). The RoPE half
needs a CUDA device and a Triton that still exposes pow as tl.math.pow or
tl.libdevice.pow, which the vendored kernel reads at its base; elsewhere it
is skipped.
"""

import pytest
import torch
import triton.language as tl

pytest.importorskip("xformers.ops.rmsnorm", reason="the vendored modules are written by the scorer")
pytest.importorskip("xformers.ops.rope_padded", reason="the vendored modules are written by the scorer")

from engine import AttentionPrelude  # noqa: E402
from xformers.ops.fmha.attn_bias import BlockDiagonalCausalWithOffsetPaddedKeysMask  # noqa: E402
from xformers.ops.rmsnorm import RMSNorm, rms_norm, rms_norm_add  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ROPE_RUNS = torch.cuda.is_available() and (hasattr(tl.math, "pow") or hasattr(tl, "libdevice"))


def _reference_rms(x, w, eps):
    y = x.double() * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + eps)
    return y if w is None else y * w.double()


@torch.no_grad()
def test_vendored_rms_norm_and_fused_add_match_torch():
    torch.manual_seed(0)
    x = torch.randn(4, 200, device=DEVICE)
    w = torch.randn(200, device=DEVICE)
    torch.testing.assert_close(rms_norm(x, w, 1e-6).double().cpu(), _reference_rms(x.cpu(), w.cpu(), 1e-6),
                               atol=1e-5, rtol=1e-5)
    resid, delta = x.clone(), torch.randn_like(x)
    out = rms_norm_add(resid, delta, None, 1e-6)
    torch.testing.assert_close(resid, x + delta)
    torch.testing.assert_close(out.double().cpu(), _reference_rms((x + delta).cpu(), None, 1e-6),
                               atol=1e-5, rtol=1e-5)
    layer = RMSNorm(200).to(DEVICE)
    torch.testing.assert_close(layer(x), rms_norm(x, layer.weight, layer.eps))


@pytest.mark.skipif(not ROPE_RUNS, reason="the vendored RoPE kernel needs CUDA and tl.math.pow or tl.libdevice.pow")
@torch.no_grad()
def test_engine_prelude_writes_values_into_the_padded_cache():
    torch.manual_seed(1)
    prelude = AttentionPrelude(hidden=64, q_heads=4, kv_heads=2, head_dim=16).to(DEVICE)
    bias = BlockDiagonalCausalWithOffsetPaddedKeysMask.from_seqlens(q_seqlen=[2, 1], kv_padding=4,
                                                                     kv_seqlen=[3, 4])
    x = torch.randn(3, 64, device=DEVICE)
    k_cache = torch.zeros(1, 8, 2, 16, device=DEVICE)
    v_cache = torch.zeros_like(k_cache)
    q = prelude.first_layer(x, k_cache, v_cache, bias)
    h = _reference_rms(x.cpu(), prelude.norm.weight.cpu(), prelude.norm.eps).float()
    v = (h @ prelude.wv.cpu().t()).view(3, 2, 16)
    torch.testing.assert_close(v_cache[0, 1:3].cpu(), v[:2], atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(v_cache[0, 7].cpu(), v[2], atol=1e-4, rtol=1e-4)
    assert q.shape == (1, 3, 4, 16)
    resid, delta = x.clone(), torch.randn_like(x)
    prelude(resid, delta, k_cache, v_cache, bias)
    torch.testing.assert_close(resid, x + delta)
