"""The engine's prefill layer on the vendored kernels against plain torch.

Runs where the scorer has written the vendored modules (TRITON_INTERPRET=1
on a CPU, or a CUDA device); skipped where they are absent.
"""

import pytest
import torch

pytest.importorskip("lightllm.models.llama.triton_kernel.rmsnorm", reason="the vendored modules are written by the scorer")

from engine.prefill_layer import PrefillLayer  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _rms_reference(x, w, eps):
    x32 = x.float()
    return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


def _rotary_reference(x, cos, sin):
    half = x.shape[-1] // 2
    lo, hi = x[..., :half], x[..., half:]
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat((lo * c - hi * s, lo * s + hi * c), dim=-1)


def _prefill_reference(q, k, v, starts, lengths):
    out = torch.empty_like(q)
    group = q.shape[1] // k.shape[1]
    for s, n in zip(starts.tolist(), lengths.tolist()):
        qs = q[s:s + n].float().transpose(0, 1)
        ks = k[s:s + n].float().repeat_interleave(group, dim=1).transpose(0, 1)
        vs = v[s:s + n].float().repeat_interleave(group, dim=1).transpose(0, 1)
        scores = qs @ ks.transpose(1, 2) / q.shape[-1] ** 0.5
        scores = scores.masked_fill(~torch.ones(n, n, dtype=torch.bool, device=q.device).tril(), float("-inf"))
        out[s:s + n] = (scores.softmax(-1) @ vs).transpose(0, 1).to(q.dtype)
    return out


def test_prefill_layer_runs_norm_rotary_cache_and_attention():
    torch.manual_seed(3)
    width, n_heads, n_kv, head_dim, tokens = 64, 4, 2, 16, 7
    dt = dict(device=DEVICE, dtype=torch.float16)
    wq = torch.randn(width, n_heads * head_dim, **dt) * 0.1
    wk = torch.randn(width, n_kv * head_dim, **dt) * 0.1
    wv = torch.randn(width, n_kv * head_dim, **dt) * 0.1
    wo = torch.randn(n_heads * head_dim, width, **dt) * 0.1
    layer = PrefillLayer(wq, wk, wv, wo, torch.ones(width, **dt), n_heads, n_kv)
    hidden = torch.randn(tokens, width, **dt)
    angles = torch.randn(tokens, head_dim // 2, device=DEVICE)
    cos, sin = angles.cos().half(), angles.sin().half()
    slots = torch.arange(tokens, dtype=torch.int32, device=DEVICE).flip(0)
    kc = torch.zeros(tokens, n_kv, head_dim, **dt)
    vc = torch.zeros_like(kc)
    lens = torch.tensor([3, 4], dtype=torch.int32, device=DEVICE)
    starts = torch.tensor([0, 3], dtype=torch.int32, device=DEVICE)
    out = layer(hidden, cos, sin, slots, kc, vc, starts, lens)

    x = _rms_reference(hidden, layer.norm_weight, layer.eps)
    q = _rotary_reference((x @ wq).view(tokens, n_heads, head_dim).float(), cos.float(), sin.float()).half()
    k = _rotary_reference((x @ wk).view(tokens, n_kv, head_dim).float(), cos.float(), sin.float()).half()
    v = (x @ wv).view(tokens, n_kv, head_dim)
    expected = hidden + _prefill_reference(q, k, v, starts, lens).view(tokens, -1) @ wo
    torch.testing.assert_close(out.float(), expected.float(), atol=5e-2, rtol=5e-2)
    torch.testing.assert_close(kc.flip(0), k, atol=2e-2, rtol=2e-2)
    torch.testing.assert_close(vc.flip(0), v)
