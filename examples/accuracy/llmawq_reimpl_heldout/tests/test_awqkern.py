"""The AWQ ports against plain torch fp32 references: the int4 packing
bit-exact against the nibble order upstream's dequantisation reads, the
W4A16 GEMM (both column tilings, split-K with more slices than K tiles and
with fewer) and the quantised linear layer against the dequantised weight,
the RMSNorm (widths not powers of two, wider than one block, the fp16 clamp)
and the engine's MLP block. fp16 inputs; tolerances 2e-2 absolute plus 1e-2
relative on GEMM outputs of magnitude about 1, 2e-3 on normalised values.
The rotary embedding is CUDA source built on first use: the full decoder
layer runs only on a CUDA device."""

import pytest
import torch
from torch import nn

from awqkern import AWQLinear, FusedRMSNorm, pack_int4, rms_norm, w4a16_gemm
from engine import DecoderLayer

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _unpack_ref(packed):
    """Upstream's magic-number conversion yields, from nibbles n0..n7 of a
    word, columns in the order n0, n4, n1, n5, n2, n6, n3, n7."""
    nibbles = [(packed >> (4 * p)) & 0xF for p in range(8)]
    cols = [nibbles[p] for p in (0, 4, 1, 5, 2, 6, 3, 7)]
    return torch.stack(cols, dim=-1).reshape(packed.shape[0], -1)


def _quantise(weight, group):
    """Min-max 4-bit quantisation per group of input features: codes (K, N),
    scales and zeros (K/G, N), as AWQ's quantiser produces them."""
    out_f, in_f = weight.shape
    w = weight.t().reshape(in_f // group, group, out_f)
    lo, hi = w.amin(dim=1), w.amax(dim=1)
    scales = ((hi - lo).clamp(min=1e-5) / 15).half().float()
    zeros = torch.clamp(torch.round(-lo / scales), 0, 15)
    return scales, zeros


def _dequant_ref(qweight, qzeros, scales, group):
    codes = _unpack_ref(qweight).float()
    zeros = _unpack_ref(qzeros).float().repeat_interleave(group, dim=0)
    return (codes - zeros) * scales.float().repeat_interleave(group, dim=0)


def test_packing_is_bit_exact_against_the_dequantiser_order():
    codes = torch.randint(0, 16, (6, 32), generator=_gen(0), dtype=torch.int32)
    packed = pack_int4(codes)
    assert packed.shape == (6, 4)
    assert torch.equal(_unpack_ref(packed), codes)


@pytest.mark.parametrize("n_dim,group,split_k", [(128, 32, 8), (64, 64, 2), (192, 32, 1)])
def test_gemm_matches_the_dequantised_weight(n_dim, group, split_k):
    k_dim, rows = 128, 5
    codes = torch.randint(0, 16, (k_dim, n_dim), generator=_gen(1), dtype=torch.int32)
    zeros = torch.randint(0, 16, (k_dim // group, n_dim), generator=_gen(2), dtype=torch.int32)
    scales = (torch.rand(k_dim // group, n_dim, generator=_gen(3)) * 0.02 + 0.005).half()
    x = torch.randn(rows, k_dim, generator=_gen(4)).half()
    qweight, qzeros = pack_int4(codes), pack_int4(zeros)
    want = x.float() @ _dequant_ref(qweight, qzeros, scales, group)
    got = w4a16_gemm(x.to(DEVICE), qweight.to(DEVICE), scales.to(DEVICE), qzeros.to(DEVICE), split_k)
    assert got.shape == (rows, n_dim) and got.dtype == torch.float16
    torch.testing.assert_close(got.float().cpu(), want, atol=2e-2, rtol=1e-2)


def test_gemm_rejects_an_unsupported_group():
    with pytest.raises(ValueError):
        w4a16_gemm(torch.zeros(1, 96).half(), torch.zeros(96, 8, dtype=torch.int32),
                   torch.zeros(2, 64).half(), torch.zeros(2, 8, dtype=torch.int32))


def test_linear_layer_from_float_matches_its_dequantised_weight():
    linear = nn.Linear(128, 64, bias=True)
    with torch.no_grad():
        linear.weight.copy_(torch.randn(64, 128, generator=_gen(5)) * 0.1)
        linear.bias.copy_(torch.randn(64, generator=_gen(6)) * 0.1)
    scales, zeros = _quantise(linear.weight.data, 32)
    layer = AWQLinear.from_float(linear, 4, 32, scales=scales, zeros=zeros).to(DEVICE)
    want_w = _dequant_ref(layer.qweight.cpu(), layer.qzeros.cpu(), layer.scales.cpu(), 32)
    assert (want_w - linear.weight.data.t()).abs().max() <= scales.max() / 2 + 1e-3
    x = torch.randn(2, 3, 128, generator=_gen(7)).half()
    want = x.float() @ want_w + linear.bias.data.half().float()
    got = layer.forward(x.to(DEVICE))
    assert got.shape == (2, 3, 64)
    torch.testing.assert_close(got.float().cpu(), want, atol=2e-2, rtol=1e-2)


def test_linear_layer_buffers_have_the_packed_shapes():
    layer = AWQLinear(4, 32, 128, 64, True, "cpu")
    assert layer.qweight.shape == (128, 8) and layer.qweight.dtype == torch.int32
    assert layer.qzeros.shape == (4, 8) and layer.scales.shape == (4, 64) and layer.bias.shape == (64,)
    assert AWQLinear(4, -1, 128, 64, False, "cpu").scales.shape == (1, 64)


def _rms_ref(x, w, eps):
    xf = x.float()
    return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()


@pytest.mark.parametrize("width", [48, 1100])
def test_rms_norm_matches_torch(width):
    x = torch.randn(2, 3, width, generator=_gen(8)).half()
    w = torch.randn(width, generator=_gen(9)).half()
    out = torch.empty_like(x).to(DEVICE)
    rms_norm(x.to(DEVICE), w.to(DEVICE), out, 1e-6)
    torch.testing.assert_close(out.float().cpu(), _rms_ref(x, w, 1e-6), atol=2e-3, rtol=2e-3)


def test_rms_norm_clamps_half_outputs_to_the_finite_range():
    x = torch.tensor([[[4.0, 0.0, 0.0, 0.0], [-4.0, 0.0, 0.0, 0.0]]]).half()
    w = torch.tensor([60000.0, 1.0, 1.0, 1.0]).half()
    out = FusedRMSNorm(w.to(DEVICE))(x.to(DEVICE)).cpu()
    assert torch.isfinite(out).all()
    assert out[0, 0, 0] == 65504.0 and out[0, 1, 0] == -65504.0


def _layer(width=128, ffn=128, heads=2):
    def q(out_f, in_f, seed):
        lin = nn.Linear(in_f, out_f, bias=False)
        with torch.no_grad():
            lin.weight.copy_(torch.randn(out_f, in_f, generator=_gen(seed)) * 0.05)
        s, z = _quantise(lin.weight.data, 32)
        return AWQLinear.from_float(lin, 4, 32, scales=s, zeros=z)

    # parameters, as a model's norm weights are, so that .to(DEVICE) moves them with the layer
    norm = lambda seed: nn.Parameter((torch.rand(width, generator=_gen(seed)) + 0.5).half(), requires_grad=False)
    return DecoderLayer(q(3 * width, width, 10), q(width, width, 11), q(ffn, width, 12), q(ffn, width, 13),
                        q(width, ffn, 14), norm(15), norm(16), heads).to(DEVICE)


def _deq(layer):
    return _dequant_ref(layer.qweight.cpu(), layer.qzeros.cpu(), layer.scales.cpu(), layer.group_size)


def test_engine_mlp_block_matches_a_float_reference():
    layer = _layer()
    x = torch.randn(1, 4, 128, generator=_gen(17)).half()
    h = _rms_ref(x, layer.mlp_norm.weight.cpu(), 1e-6).half().float()
    want = x.float() + (torch.nn.functional.silu(h @ _deq(layer.gate)) * (h @ _deq(layer.up))) @ _deq(layer.down)
    got = layer.mlp(x.to(DEVICE))
    torch.testing.assert_close(got.float().cpu(), want, atol=3e-2, rtol=1e-2)


@pytest.mark.skipif(DEVICE != "cuda", reason="the rotary embedding is a CUDA extension built on first use")
def test_engine_decoder_layer_runs_on_cuda():
    layer = _layer()
    x = torch.randn(1, 4, 128, generator=_gen(18)).half().to(DEVICE)
    pos = torch.arange(4, device=DEVICE, dtype=torch.int64)[None]
    y = layer(x, pos)
    assert y.shape == x.shape and torch.isfinite(y).all()
