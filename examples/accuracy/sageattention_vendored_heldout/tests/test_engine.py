"""The engine's attention on the vendored SageAttention modules against
plain torch attention, and each vendored entry point it uses by name.

Runs where the scorer has written the vendored modules, on a CUDA device or
on the CPU under TRITON_INTERPRET=1. Sequence lengths are multiples of the
key block (64): at this base the non-causal kernels do not mask keys past
the end of the sequence.
"""

import pytest
import torch
import torch.nn.functional as F

pytest.importorskip("sageattention.core", reason="the vendored modules are written by the scorer")

from sageattention import attn_qk_int8_per_block_hd64_causal as causal64  # noqa: E402
from sageattention import attn_qk_int8_per_block_hd128_causal as causal128  # noqa: E402
from sageattention import attn_qk_int8_per_block_h64, attn_qk_int8_per_block_hd128  # noqa: E402
from sageattention.core import attention  # noqa: E402
from sageattention.quant_per_block import per_block_int8  # noqa: E402
from engine import cross_attention, prefill  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _qkv(dim, length=128, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(1, 2, length, dim, generator=g).half().to(DEVICE) for _ in range(3)]


def _close(out, q, k, v, causal):
    want = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    assert (out.float() - want).abs().max() < 0.05


def test_per_block_int8_scales_cover_each_block():
    q, k, _ = _qkv(64)
    q_int8, q_scale, k_int8, k_scale = per_block_int8(q, k)
    assert q_int8.dtype == torch.int8 and q_scale.shape == (1, 2, 1, 1) and k_scale.shape == (1, 2, 2, 1)
    k_back = k_int8.float() * k_scale.repeat_interleave(64, dim=2)
    assert (k_back - k.float()).abs().max() <= k_scale.max() * 0.5 + 1e-6


@pytest.mark.parametrize("dim, plain, causal_module", [(64, attn_qk_int8_per_block_h64, causal64),
                                                       (128, attn_qk_int8_per_block_hd128, causal128)])
def test_forward_kernels_match_torch(dim, plain, causal_module):
    q, k, v = _qkv(dim, seed=dim)
    q_int8, q_scale, k_int8, k_scale = per_block_int8(q, k)
    _close(plain.forward(q_int8, k_int8, v, q_scale, k_scale), q, k, v, False)
    _close(causal_module.forward(q_int8, k_int8, v, q_scale, k_scale), q, k, v, True)


@pytest.mark.parametrize("dim", [64, 128])
def test_attention_and_the_engine_match_torch(dim):
    q, k, v = _qkv(dim, seed=3)
    _close(attention(q, k.clone(), v, is_causal=False), q, k, v, False)
    _close(prefill(q, k, v), q, k, v, True)
    _close(cross_attention(q, k, v), q, k, v, False)
