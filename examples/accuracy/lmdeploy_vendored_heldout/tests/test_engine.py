"""The engine's step on the vendored kernels against plain torch.

Runs where the scorer has written the vendored modules and on a CUDA device:
the vendored files take the launch stream from Triton 2's
``triton.runtime.jit.get_cuda_stream``, which the CPU interpreter's Triton
lacks, so the test is skipped elsewhere.
"""

import pytest
import torch

pytest.importorskip("lmdeploy.pytorch.kernels.rms_norm",
                    reason="the vendored modules are written by the scorer and need Triton 2's get_cuda_stream")
if not torch.cuda.is_available():
    pytest.skip("the vendored kernels launch on a CUDA stream only", allow_module_level=True)

from engine.decode_step import DecodeStep  # noqa: E402

DEVICE = "cuda"


def _rms_reference(x, w, eps=1e-6):
    x32 = x.float()
    return (w.float() * (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps))).to(x.dtype)


def _rotary_reference(x, cos, sin, positions):
    c, s = cos[positions][:, None, :].float(), sin[positions][:, None, :].float()
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1).float()
    return (x.float() * c + rotated * s).to(x.dtype)


def test_decode_step_rotates_fills_the_cache_and_samples():
    torch.manual_seed(4)
    width, n_heads, n_kv, head_dim, block_size, vocab = 32, 4, 2, 8, 4, 12
    dt = dict(device=DEVICE, dtype=torch.float16)
    wq = torch.randn(width, n_heads * head_dim, **dt) * 0.1
    wk = torch.randn(width, n_kv * head_dim, **dt) * 0.1
    wv = torch.randn(width, n_kv * head_dim, **dt) * 0.1
    step = DecodeStep(wq, wk, wv, torch.randn(width, vocab, **dt), torch.ones(width, **dt), n_heads, n_kv)
    hidden = torch.randn(6, width, **dt)
    inv = 1.0 / (10000 ** (torch.arange(0, head_dim, 2, device=DEVICE).float() / head_dim))
    angles = torch.arange(32, device=DEVICE).float()[:, None] * inv[None, :]
    angles = torch.cat((angles, angles), dim=-1)
    cos, sin = angles.cos().half(), angles.sin().half()
    positions = torch.tensor([0, 1, 2, 3, 4, 0], device=DEVICE)
    kc = torch.zeros(8, block_size, n_kv, head_dim, **dt)
    vc = torch.zeros_like(kc)
    table = torch.tensor([[5, 1], [6, 2]], device=DEVICE)
    seq_length = torch.tensor([5, 1], device=DEVICE)
    start_loc = torch.tensor([0, 5], device=DEVICE)
    q, tokens = step(hidden, cos, sin, positions, kc, vc, start_loc, seq_length, table, [0, 0],
                     torch.tensor([1, 2], device=DEVICE), torch.zeros(2, dtype=torch.long, device=DEVICE))
    x = _rms_reference(hidden, step.norm_weight)
    k = _rotary_reference((x @ wk).view(6, n_kv, head_dim), cos, sin, positions)
    torch.testing.assert_close(q, _rotary_reference((x @ wq).view(6, n_heads, head_dim), cos, sin, positions),
                               atol=2e-2, rtol=2e-2)
    written = torch.stack([kc[5, 0], kc[5, 1], kc[5, 2], kc[5, 3], kc[1, 0], kc[6, 0]])
    torch.testing.assert_close(written, k, atol=2e-2, rtol=2e-2)
    assert tokens.shape == (2,) and bool(((tokens >= 0) & (tokens < vocab)).all())
