"""The ports against plain PyTorch references. Bit-exact where the op
dequantises or copies (the reconstruction, with and without act-order, the
column remap, the sequentialisation); against an fp32 reference where it
computes: the quantised matmul (both paths) within 2e-2 absolute plus 2e-2
relative on outputs of magnitude about 1, the RMSNorm and the rotary
embedding within 1e-2 (three or two half roundings), the decoder layer
within 5e-2. Tiny shapes: dim 256 (upstream's multiple), 32 columns."""

import torch

from engine import DecoderLayer, QuantLinear
from q4kern import dequantize_q4, llama_rms_norm, matmul_q4, rope_, sequentialize_q4
from q4kern.ops import column_remap_

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _pack_columns(codes):
    """(rows, cols) codes -> (rows/8, cols) int32, row r in bits 4*(r % 8)."""
    c = codes.view(-1, 8, codes.shape[1]).long() << (4 * torch.arange(8))[None, :, None]
    p = c.sum(1)
    return torch.where(p >= 2**31, p - 2**32, p).int()


def _pack_rows(codes):
    """(rows, cols) codes -> (rows, cols/8) int32, column c in bits 4*(c % 8)."""
    return _pack_columns(codes.t().contiguous()).t().contiguous()


def _quant(dim, width, groups, seed, act_order=False):
    g = _gen(seed)
    codes = torch.randint(0, 16, (dim, width), generator=g)
    zeros = torch.randint(0, 15, (groups, width), generator=g)
    scales = (torch.rand(groups, width, generator=g) * 0.02 + 0.005).half()
    if act_order:
        g_idx = torch.randint(0, groups, (dim,), generator=g).int()
    else:
        g_idx = (torch.arange(dim) // (dim // groups)).int()
    ref = ((codes - (zeros[g_idx.long()] + 1)).half() * scales[g_idx.long()])
    return _pack_columns(codes), scales, _pack_rows(zeros), g_idx, ref


def _dev(*ts):
    return [t.to(DEVICE) for t in ts]


def test_reconstruction_is_bit_exact_with_and_without_act_order():
    for act in (False, True):
        qweight, scales, qzeros, g_idx, ref = _quant(256, 32, 4, 1, act)
        qweight, scales, qzeros, g_idx = _dev(qweight, scales, qzeros, g_idx)
        layer = QuantLinear(qweight, scales, qzeros, g_idx, dequant=True)
        assert (layer.x_map is not None) == act
        assert torch.equal(dequantize_q4(layer.quant_args()).cpu(), ref)
        assert torch.equal(layer.weight.cpu(), ref)


def test_sequentialisation_groups_rows_stably_and_counts_down():
    qweight, scales, qzeros, g_idx, ref = _quant(256, 32, 4, 2, True)
    w = qweight.clone().to(DEVICE)
    seq_g_idx, x_map = sequentialize_q4(w, g_idx.to(DEVICE), 4)
    order = torch.sort(g_idx.long(), stable=True).indices
    assert torch.equal(x_map.cpu().long(), order)
    sorted_groups = g_idx.long()[order]
    left = torch.tensor([int((sorted_groups[i:] == sorted_groups[i]).sum()) for i in range(256)])
    assert torch.equal(seq_g_idx.cpu().view(-1, 2).long(), torch.stack([sorted_groups, left], 1))
    assert seq_g_idx.dtype == torch.int16
    shifts = 4 * torch.arange(8)
    unpack = lambda p: ((p[:, None, :] >> shifts[None, :, None]) & 0xF).reshape(256, -1)
    assert torch.equal(unpack(w.cpu()), unpack(qweight)[order])


def test_column_remap_copies_bit_exactly():
    x = torch.randn(5, 256, generator=_gen(3)).half().to(DEVICE)
    x_map = torch.randperm(256, generator=_gen(4)).int().to(DEVICE)
    out = torch.empty_like(x)
    column_remap_(x, out, x_map)
    assert torch.equal(out, x[:, x_map.long()])


def test_quantised_matmul_both_paths_against_fp32():
    for act in (False, True):
        qweight, scales, qzeros, g_idx, ref = _quant(256, 32, 2, 5, act)
        layer = QuantLinear(*_dev(qweight, scales, qzeros, g_idx))
        x = (torch.randn(1, 3, 256, generator=_gen(6)) * 0.5).half()
        expect = x.float() @ ref.float()
        for switch in (False, True):
            got = matmul_q4(x.to(DEVICE), layer.quant_args(), switch).float().cpu()
            torch.testing.assert_close(got, expect, atol=2e-2, rtol=2e-2)


def test_rms_norm_puts_epsilon_inside_the_root():
    x = torch.randn(2, 3, 256, generator=_gen(7)).half() * 0.01
    w = (torch.rand(256, generator=_gen(8)) + 0.5).half()
    eps = 1e-4
    got = llama_rms_norm(x.to(DEVICE), w.to(DEVICE), eps).float().cpu()
    xf = x.float()
    expect = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()
    torch.testing.assert_close(got, expect, atol=1e-2, rtol=1e-2)


def _rope_ref(x, sin, cos, past_len):
    half = x.shape[-1] // 2
    pos = past_len + torch.arange(x.shape[1])
    s, c = sin[0, 0, pos].float()[None, :, None], cos[0, 0, pos].float()[None, :, None]
    xf = x.float()
    rotated = torch.cat([-xf[..., half:], xf[..., :half]], -1)
    return xf * c + rotated * s


def test_rope_in_place_half_layout_from_past_len():
    from engine.llama import sincos
    sin, cos = sincos(16, 128, 10000.0, "cpu")
    x = torch.randn(1, 4, 2, 128, generator=_gen(9)).half()
    expect = _rope_ref(x, sin, cos, 3)
    y = x.clone().to(DEVICE)
    rope_(y, sin.to(DEVICE), cos.to(DEVICE), 3, 2, 128)
    torch.testing.assert_close(y.float().cpu(), expect, atol=1e-2, rtol=1e-2)


def test_engine_decoder_layer_against_fp32_reference():
    from engine.llama import sincos
    mats = [_quant(256, 256, 2, 20 + i, act_order=(i % 2 == 1)) for i in range(7)]
    layers = [QuantLinear(*_dev(*m[:4]), recons_rows=2) for m in mats]
    norm1 = (torch.rand(256, generator=_gen(30)) + 0.5).half()
    norm2 = (torch.rand(256, generator=_gen(31)) + 0.5).half()
    layer = DecoderLayer(*layers, norm1.to(DEVICE), norm2.to(DEVICE), num_heads=2, max_pos=16)
    x = (torch.randn(1, 3, 256, generator=_gen(32)) * 0.1).half()
    got = layer.forward(x.to(DEVICE)).float().cpu()

    W = [m[4].float() for m in mats]
    sin, cos = sincos(16, 128, 10000.0, "cpu")

    def norm(h, w):
        return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()

    xf = x.float()
    h = norm(xf, norm1)
    q = _rope_ref((h @ W[0]).view(1, 3, 2, 128), sin, cos, 0)
    k = _rope_ref((h @ W[1]).view(1, 3, 2, 128), sin, cos, 0)
    v = (h @ W[2]).view(1, 3, 2, 128)
    a = torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
    xf = xf + a.transpose(1, 2).reshape(1, 3, 256) @ W[3]
    h = norm(xf, norm2)
    expect = xf + (torch.nn.functional.silu(h @ W[4]) * (h @ W[5])) @ W[6]
    torch.testing.assert_close(got, expect, atol=5e-2, rtol=5e-2)
