"""The engine's decoding MLP on the vendored quant.py against plain torch
fp32 references.

Runs where the scorer has written the vendored files. quant.py imports the
CUDA extension quant_cuda, which CI cannot build: the test stands in for it
with a torch reference of vecquant3matmul that reads upstream's 3-bit
layout (code k of a column at bit 3k of the column's int32 words, 1024
inputs in 96 words) and dequantises as scale * q - zero in fp32, so
Quantizer, Quant3Linear's pack and forward and make_quant3 run on the CPU.
Bit-exact on the packing (against a bit-by-bit reference) and the
dequantisation; 1e-3 on the MLP."""

import os
import sys
import types

import pytest
import torch

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if not os.path.exists(os.path.join(HERE, "gptq_llama", "quant.py")):
    pytest.skip("the vendored files are written by the scorer", allow_module_level=True)


def _unpack(words, n_in):
    w = words.to(torch.int64) & 0xFFFFFFFF
    out = torch.empty((n_in, words.shape[1]), dtype=torch.int64)
    for k in range(n_in):
        i, s = divmod(3 * k, 32)
        stream = w[i] | ((w[i + 1] << 32) if s > 29 else 0)
        out[k] = (stream >> s) & 0x7
    return out


def _stand_in():
    ext = types.ModuleType("quant_cuda")

    def vecquant3matmul(vec, mat, mul, scales, zeros):
        q = _unpack(mat, mat.shape[0] // 96 * 1024).float()
        w = scales.reshape(1, -1) * q - zeros.reshape(1, -1)
        mul += vec.reshape(-1) @ w

    ext.vecquant3matmul = vecquant3matmul
    return ext


sys.modules.setdefault("quant_cuda", _stand_in())

from engine import DecodeMLP, quantize_model  # noqa: E402
from gptq_llama.quant import Quant3Linear, Quantizer, quantize  # noqa: E402


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def test_pack_writes_the_3bit_stream_bit_exact():
    g = _gen(0)
    codes = torch.randint(0, 8, (4, 1024), generator=g).float()
    scales = torch.rand(4, 1, generator=g) * 0.02 + 0.01
    zeros = torch.randint(0, 8, (4, 1), generator=g).float()
    lin = torch.nn.Linear(1024, 4)
    lin.weight.data = scales * (codes - zeros)
    layer = Quant3Linear(1024, 4)
    layer.pack(lin, scales, zeros)
    assert layer.qweight.shape == (96, 4) and layer.qweight.dtype == torch.int32
    bits = [(int(codes[0, k]) >> b) & 1 for k in range(1024) for b in range(3)]
    for r in range(96):
        assert int(layer.qweight[r, 0]) & 0xFFFFFFFF == sum(bits[32 * r + b] << b for b in range(32))
    q = _unpack(layer.qweight, 1024).t().float()
    assert torch.equal(q, codes)
    assert torch.equal(layer.scales * q - layer.zeros, scales * codes - zeros * scales)


def test_quantizer_grid():
    w = torch.randn(8, 1024, generator=_gen(1))
    q = Quantizer()
    q.configure(3, perchannel=True, sym=False)
    q.find_params(w, weight=True)
    lo, hi = w.min(1)[0].clamp(max=0), w.max(1)[0].clamp(min=0)
    assert torch.equal(q.scale.flatten(), (hi - lo) / 7)
    assert torch.equal(q.quantize(w), quantize(w, q.scale, q.zero, q.maxq))


def test_engine_decodes_on_the_grid_weights():
    torch.manual_seed(0)
    model = DecodeMLP(1024, 1024)
    ref = DecodeMLP(1024, 1024)
    ref.load_state_dict(model.state_dict())
    quantize_model(model)
    assert isinstance(model.up, Quant3Linear)
    for name in ("up", "down"):
        q = Quantizer()
        q.configure(3, perchannel=True, sym=False)
        lin = getattr(ref, name)
        q.find_params(lin.weight.data, weight=True)
        lin.weight.data = q.quantize(lin.weight.data)
    x = torch.randn(1, 1024, generator=_gen(4))
    assert torch.allclose(model(x), ref(x), atol=1e-3, rtol=1e-3)
    with pytest.raises(ValueError):
        model.up(torch.randn(2, 1024))
