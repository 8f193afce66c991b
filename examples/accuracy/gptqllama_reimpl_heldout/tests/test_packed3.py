"""The ports against plain PyTorch references. Bit-exact where the op packs
or unpacks (the 3-bit stream over int32 words, codes crossing word
boundaries) or dequantises (scale * q - zero with zero = zero-point *
scale, fp32); the Triton matvec against an fp32 reference of the same
dequantised weight within 1e-4 absolute plus 1e-4 relative; the engine's
decoding MLP against the same MLP on the grid weights within 1e-3. Tiny
shapes: 1024 or 2048 inputs (the layer's multiple), 8 to 40 outputs."""

import pytest
import torch

from engine import DecodeMLP, quantize_model
from packed3 import MinMaxQuantizer, Packed3Linear, matvec3, pack_codes3, round_to_grid, unpack_codes3

# the kernels run compiled on a GPU where there is one, under the interpreter on the CPU otherwise
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _reference_pack(codes):
    # the three-word group written word by word, as a loop over bits
    n_in, n_out = codes.shape
    out = []
    for col in range(n_out):
        bits = []
        for k in range(n_in):
            v = int(codes[k, col])
            bits += [(v >> b) & 1 for b in range(3)]
        words = [sum(bits[32 * w + b] << b for b in range(32)) for w in range(len(bits) // 32)]
        out.append([w - 2**32 if w >= 2**31 else w for w in words])
    return torch.tensor(out, dtype=torch.int64).t().to(torch.int32)


def test_pack_is_the_bitstream_bit_exact():
    codes = torch.randint(0, 8, (1024, 3), generator=_gen(0), dtype=torch.int32)
    packed = pack_codes3(codes)
    assert packed.shape == (96, 3) and packed.dtype == torch.int32
    assert torch.equal(packed, _reference_pack(codes))
    # code 10 straddles words 0 and 1, code 21 words 1 and 2
    w0, w1, w2 = (int(packed[i, 0]) & 0xFFFFFFFF for i in range(3))
    assert ((w0 >> 30) | ((w1 & 1) << 2)) == int(codes[10, 0])
    assert ((w1 >> 31) | ((w2 & 3) << 1)) == int(codes[21, 0])
    assert torch.equal(unpack_codes3(packed, 1024), codes)


def test_quantizer_grid_and_round_trip():
    w = torch.randn(8, 1024, generator=_gen(1))
    q = MinMaxQuantizer()
    q.configure(3, perchannel=True, sym=False)
    q.find_params(w, weight=True)
    assert q.scale.shape == (8, 1) and bool(q.ready()) and bool(q.enabled())
    lo, hi = w.min(1)[0].clamp(max=0), w.max(1)[0].clamp(min=0)
    assert torch.equal(q.scale.flatten(), (hi - lo) / 7)
    assert torch.equal(q.zero.flatten(), torch.round(-lo / ((hi - lo) / 7)))
    assert torch.equal(q.quantize(w), round_to_grid(w, q.scale, q.zero, q.maxq))
    sym = MinMaxQuantizer()
    sym.configure(3, perchannel=False, sym=True, mse=True, grid=10)
    sym.find_params(w, weight=True)
    assert sym.scale.shape == (8, 1) and torch.all(sym.zero == 4)


def _layer(n_in, n_out, seed):
    g = _gen(seed)
    codes = torch.randint(0, 8, (n_out, n_in), generator=g).float()
    scales = torch.rand(n_out, 1, generator=g) * 0.02 + 0.01
    zeros = torch.randint(0, 8, (n_out, 1), generator=g).float()
    lin = torch.nn.Linear(n_in, n_out)
    lin.weight.data = scales * (codes - zeros)
    lin.bias.data = torch.randn(n_out, generator=g)
    layer = Packed3Linear(n_in, n_out)
    layer.pack(lin, scales, zeros)
    return layer, codes, scales, zeros, lin


def test_pack_recovers_the_codes_and_dequantises_bit_exact():
    layer, codes, scales, zeros, _ = _layer(1024, 8, 2)
    q = unpack_codes3(layer.qweight, 1024)
    assert torch.equal(q.t().float(), codes)
    deq = layer.scales * q.t().float() - layer.zeros
    assert torch.equal(deq, scales * codes - zeros * scales)


@pytest.mark.parametrize("n_in,n_out", [(1024, 8), (2048, 40)])
def test_matvec_matches_the_fp32_reference(n_in, n_out):
    layer, codes, scales, zeros, _ = _layer(n_in, n_out, n_in + n_out)
    layer = layer.to(DEVICE)
    x = torch.randn(n_in, generator=_gen(3)).to(DEVICE)
    w = (scales * codes - zeros * scales).t().to(DEVICE)
    want = layer.bias + x @ w
    y = layer.bias.clone()
    matvec3(x, layer.qweight, y, layer.scales, layer.zeros, block_n=16)
    assert torch.allclose(y, want, atol=1e-4, rtol=1e-4), (y - want).abs().max()
    got = layer(x.half().reshape(1, 1, -1))
    assert got.shape == (1, 1, n_out) and got.dtype == torch.float16
    with pytest.raises(ValueError):
        layer(torch.randn(2, n_in, device=DEVICE))


def test_engine_decodes_on_the_grid_weights():
    torch.manual_seed(0)
    model = DecodeMLP(1024, 1024)
    ref = DecodeMLP(1024, 1024)
    ref.load_state_dict(model.state_dict())
    quantize_model(model)
    assert isinstance(model.up, Packed3Linear) and isinstance(model.down, Packed3Linear)
    for name in ("up", "down"):
        q = MinMaxQuantizer()
        q.configure(3, perchannel=True, sym=False)
        lin = getattr(ref, name)
        q.find_params(lin.weight.data, weight=True)
        lin.weight.data = q.quantize(lin.weight.data)
    model, ref = model.to(DEVICE), ref.to(DEVICE)
    x = torch.randn(1, 1024, generator=_gen(4)).to(DEVICE)
    assert torch.allclose(model(x), ref(x), atol=1e-3, rtol=1e-3)
