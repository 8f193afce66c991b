"""The engine's encoder layer and the vendored entry points against plain
torch fp32 references.

Runs where the scorer has written the vendored modules, on a CUDA device
only: at this base the LayerNorm launcher allocates its statistics on
"cuda", and the attention kernel calls tl.dot with trans_b, which only the
Triton of its day accepts (the attention tests skip otherwise). Lengths are
powers of two (64): at this base the attention kernel gives the padded keys
of a partial tile a score of 0 rather than -inf. Tolerance 2e-2 (absolute)
on fp16 outputs of magnitude about 1.
"""

import inspect
import math

import pytest
import torch

pytest.importorskip("kernl_impl.layer_norm", reason="the vendored modules are written by the scorer")
if not torch.cuda.is_available():
    pytest.skip("the vendored launchers need a CUDA device", allow_module_level=True)

import triton.language as tl  # noqa: E402

from kernl_impl.attention import attention_forward  # noqa: E402
from kernl_impl.layer_norm import layer_norm  # noqa: E402
from engine import encoder_layer  # noqa: E402

OLD_DOT = "trans_b" in inspect.signature(tl.dot).parameters
needs_old_dot = pytest.mark.skipif(not OLD_DOT, reason="the vendored kernel calls tl.dot(..., trans_b=True)")


def _randn(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).half().cuda()


def _ref_attention(q, k, v, scale, causal, mask):
    s = (q.float() @ k.float().transpose(-1, -2)) * scale
    if mask is not None:
        s = s + mask.float()
    if causal:
        n = q.shape[2]
        s = s.masked_fill(torch.ones(n, n, device=q.device).tril() == 0, float("-inf"))
    return torch.softmax(s, dim=-1) @ v.float()


def test_layer_norm_matches_torch():
    x, w, b = _randn(2, 3, 300, seed=1), _randn(300, seed=2), _randn(300, seed=3)
    out = layer_norm(x, w, b, 1e-5)
    want = torch.nn.functional.layer_norm(x.float(), (300,), w.float(), b.float(), 1e-5)
    assert (out.float() - want).abs().max() < 2e-2


@needs_old_dot
@pytest.mark.parametrize("causal", [False, True])
def test_attention_matches_torch(causal):
    q, k, v = (_randn(1, 2, 64, 32, seed=4 + i) for i in range(3))
    out = attention_forward(q, k, v, torch.empty_like(q), 0.2, causal)
    assert (out.float() - _ref_attention(q, k, v, 0.2, causal, None)).abs().max() < 2e-2


@needs_old_dot
def test_engine_encoder_layer_matches_torch():
    batch, length, width, heads = 2, 64, 64, 2
    hidden = _randn(batch, length, width, seed=11)
    ln_w, ln_b = _randn(width, seed=12), _randn(width, seed=13)
    w_qkv, w_out = _randn(width, 3 * width, seed=14) * 0.1, _randn(width, width, seed=15) * 0.1
    pad = torch.zeros(batch, 1, 1, length, dtype=torch.float16, device="cuda")
    pad[0, :, :, 50:] = float("-inf")
    got = encoder_layer(hidden, ln_w, ln_b, w_qkv, w_out, heads, pad)
    normed = torch.nn.functional.layer_norm(hidden.float(), (width,), ln_w.float(), ln_b.float(), 1e-5)
    qkv = (normed @ w_qkv.float()).view(batch, length, 3, heads, width // heads).permute(2, 0, 3, 1, 4)
    att = _ref_attention(qkv[0], qkv[1], qkv[2], 1.0 / math.sqrt(width // heads), False, pad)
    want = hidden.float() + att.transpose(1, 2).reshape(batch, length, width) @ w_out.float()
    assert (got.float() - want).abs().max() < 1e-1
