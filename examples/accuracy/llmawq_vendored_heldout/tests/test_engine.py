"""The engine's decoder layer and the vendored quantised linear layer
against plain torch fp32 references.

Runs where the scorer has written the vendored modules. The vendored
qmodule.py and fused_norm.py import the built extension (and fused_norm.py
transformers' LlamaRMSNorm) at the top: without a CUDA device, the tests
stand in for both with torch references of their own (the GEMM reading the
packed layout through the nibble order of upstream's dequantisation), so the
packing of WQLinear.from_linear is checked bit-exact and the engine's MLP
block end to end on the CPU. On a CUDA device with a compiler the extension
is built from the vendored sources and the same checks run on it, plus the
full layer with the rotary embedding. Tolerances 2e-2 absolute plus 1e-2
relative on outputs of magnitude about 1 (fp16).
"""

import os
import shutil
import sys
import types

import pytest
import torch
from torch import nn

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if not os.path.exists(os.path.join(HERE, "awq", "quantize", "qmodule.py")):
    pytest.skip("the vendored modules are written by the scorer", allow_module_level=True)

CUDA = torch.cuda.is_available() and shutil.which("nvcc") is not None
DEVICE = "cuda" if CUDA else "cpu"


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _unpack_ref(packed):
    """Upstream's magic-number conversion yields, from nibbles n0..n7 of a
    word, columns in the order n0, n4, n1, n5, n2, n6, n3, n7."""
    nibbles = [(packed >> (4 * p)) & 0xF for p in range(8)]
    cols = [nibbles[p] for p in (0, 4, 1, 5, 2, 6, 3, 7)]
    return torch.stack(cols, dim=-1).reshape(packed.shape[0], -1)


def _dequant_ref(qweight, qzeros, scales):
    group = qweight.shape[0] // scales.shape[0]
    codes = _unpack_ref(qweight.cpu()).float()
    zeros = _unpack_ref(qzeros.cpu()).float().repeat_interleave(group, dim=0)
    return (codes - zeros) * scales.cpu().float().repeat_interleave(group, dim=0)


def _rms_ref(x, w, eps):
    xf = x.float()
    return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()


def _stand_in_extension():
    ext = types.ModuleType("awq_inference_engine")

    def gemm_forward_cuda(x, qweight, scales, qzeros, split_k):
        return (x.float() @ _dequant_ref(qweight, qzeros, scales)).to(x.dtype)

    def layernorm_forward_cuda(x, gamma, out, eps):
        out.copy_(_rms_ref(x, gamma, eps).to(out.dtype))

    ext.gemm_forward_cuda = gemm_forward_cuda
    ext.layernorm_forward_cuda = layernorm_forward_cuda
    sys.modules["awq_inference_engine"] = ext


def _stand_in_transformers():
    """fused_norm.py imports LlamaRMSNorm only for its model patching."""
    llama = types.ModuleType("transformers.models.llama.modeling_llama")
    llama.LlamaRMSNorm = type("LlamaRMSNorm", (nn.Module,), {})
    for name in ("transformers", "transformers.models", "transformers.models.llama"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules.setdefault("transformers.models.llama.modeling_llama", llama)


if not CUDA:
    _stand_in_extension()
try:
    import transformers.models.llama.modeling_llama  # noqa: F401
except ImportError:
    _stand_in_transformers()

from engine import DecoderLayer  # noqa: E402
from engine.decoder import quantised  # noqa: E402


def _quantise(weight, group):
    """Min-max 4-bit quantisation per group of input features: scales and
    zeros (K/G, N), as AWQ's quantiser produces them."""
    out_f, in_f = weight.shape
    w = weight.t().reshape(in_f // group, group, out_f)
    lo, hi = w.amin(dim=1), w.amax(dim=1)
    scales = ((hi - lo).clamp(min=1e-5) / 15).half().float()
    zeros = torch.clamp(torch.round(-lo / scales), 0, 15)
    return scales, zeros


def _linear(out_f, in_f, seed, bias=False):
    lin = nn.Linear(in_f, out_f, bias=bias)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(out_f, in_f, generator=_gen(seed)) * 0.05)
        if bias:
            lin.bias.copy_(torch.randn(out_f, generator=_gen(seed + 100)) * 0.1)
    return lin


def test_wqlinear_packs_codes_and_zeros_in_the_dequantiser_order():
    lin = _linear(64, 128, 1, bias=True)
    scales, zeros = _quantise(lin.weight.data, 32)
    layer = quantised(lin, scales, zeros, 32)
    assert layer.qweight.shape == (128, 8) and layer.qzeros.shape == (4, 8)
    codes = torch.round((lin.weight.data.t() + (zeros * scales).repeat_interleave(32, 0))
                        / scales.half().float().repeat_interleave(32, 0)).to(torch.int32)
    assert torch.equal(_unpack_ref(layer.qweight), codes)
    assert torch.equal(_unpack_ref(layer.qzeros), zeros.to(torch.int32))
    x = torch.randn(3, 5, 128, generator=_gen(2)).half()
    want = x.float() @ _dequant_ref(layer.qweight, layer.qzeros, layer.scales) + lin.bias.data.half().float()
    layer = layer.to(DEVICE)
    got = layer(x.to(DEVICE))
    assert got.shape == (3, 5, 64)
    torch.testing.assert_close(got.float().cpu(), want, atol=2e-2, rtol=1e-2)


def _layer(width=128, ffn=128, heads=2):
    def q(out_f, in_f, seed):
        lin = _linear(out_f, in_f, seed)
        return quantised(lin, *_quantise(lin.weight.data, 32), 32)

    norm = lambda seed: (torch.rand(width, generator=_gen(seed)) + 0.5).half()
    layer = DecoderLayer(q(3 * width, width, 10), q(width, width, 11), q(ffn, width, 12), q(ffn, width, 13),
                         q(width, ffn, 14), norm(15).to(DEVICE), norm(16).to(DEVICE), heads)
    return layer.to(DEVICE)


def test_engine_mlp_block_matches_a_float_reference():
    layer = _layer()
    x = torch.randn(1, 4, 128, generator=_gen(17)).half()
    deq = lambda m: _dequant_ref(m.qweight, m.qzeros, m.scales)
    h = _rms_ref(x, layer.mlp_norm.weight.cpu(), 1e-6).half().float()
    want = x.float() + (torch.nn.functional.silu(h @ deq(layer.gate)) * (h @ deq(layer.up))) @ deq(layer.down)
    got = layer.mlp(x.to(DEVICE))
    torch.testing.assert_close(got.float().cpu(), want, atol=3e-2, rtol=1e-2)


@pytest.mark.skipif(not CUDA, reason="the rotary embedding needs the extension built on a CUDA device")
def test_engine_decoder_layer_runs_on_cuda():
    layer = _layer()
    x = torch.randn(1, 4, 128, generator=_gen(18)).half().to(DEVICE)
    pos = torch.arange(4, device=DEVICE, dtype=torch.int64)[None]
    y = layer(x, pos)
    assert y.shape == x.shape and torch.isfinite(y).all()
