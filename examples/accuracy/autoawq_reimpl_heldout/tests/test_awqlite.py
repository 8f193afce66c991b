"""The ports against plain PyTorch references. Bit-exact on the grid
(fake_quantize against a per-group loop) and on the packing (the
interleaved nibble order against a word-by-word reference, and pack then
unpack); the Triton GEMM against x @ ((q - zero) * step) in fp32 within
1e-4; the clipping search never increases the grouped output error; the
engine's packed blocks against the same blocks on the fake-quantised
weights within 1e-2 (fp16 steps). Tiny shapes."""

import torch
from torch import nn

from awqlite import (
    Packed4Linear,
    clamp_to_clips,
    dequant_gemm,
    fake_quantize,
    interleave_shift,
    search_clip,
    search_clips,
    unpack_words,
)
from engine import MLPBlock, calibrate_and_pack, collect_inputs

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def test_grid_matches_a_loop_over_groups():
    w = torch.randn(6, 32, generator=_gen(0))
    out, step, zero = fake_quantize(w, n_bit=4, q_group_size=8, get_scale_zp=True)
    assert step.shape == (6, 4) and zero.shape == (6, 4)
    for r in range(6):
        for g in range(4):
            part = w[r, g * 8:(g + 1) * 8]
            s = (part.max() - part.min()).clamp(min=1e-5) / 15
            z = (-torch.round(part.min() / s)).clamp(0, 15)
            ref = (torch.clamp(torch.round(part / s) + z, 0, 15) - z) * s
            assert torch.equal(out[r, g * 8:(g + 1) * 8], ref)


def test_interleaved_order():
    assert [interleave_shift(j) // 4 for j in range(8)] == [0, 4, 1, 5, 2, 6, 3, 7]
    codes = torch.arange(16, dtype=torch.int32).reshape(1, 16) % 16
    lin = nn.Linear(8, 16, bias=False)
    step = torch.ones(1, 16)
    zero = torch.zeros(1, 16)
    lin.weight.data = codes.t().float().repeat(1, 8)
    packed = Packed4Linear.from_float(lin, 4, 8, False, step, zero)
    word = int(packed.qweight[0, 0]) & 0xFFFFFFFF
    assert [(word >> (4 * i)) & 0xF for i in range(8)] == [0, 2, 4, 6, 1, 3, 5, 7]
    assert torch.equal(unpack_words(packed.qweight), codes.repeat(8, 1))


def test_gemm_matches_dequantised_reference():
    lin = nn.Linear(64, 32)
    lin.weight.data, step, zero = fake_quantize(lin.weight.data, n_bit=4, q_group_size=16, get_scale_zp=True)
    packed = Packed4Linear.from_float(lin, 4, 16, False, step.t().contiguous(), zero.t().contiguous()).to(DEVICE)
    x = torch.randn(5, 64, generator=_gen(1)).to(DEVICE)
    q = unpack_words(packed.qweight).float()
    z = unpack_words(packed.qzeros).float().repeat_interleave(16, 0)
    s = packed.scales.float().repeat_interleave(16, 0)
    ref = x @ ((q - z) * s)
    got = dequant_gemm(x, packed.qweight, packed.scales, packed.qzeros, 16)
    torch.testing.assert_close(got, ref, atol=1e-4, rtol=1e-4)


def test_clip_never_worse():
    w = torch.randn(256, 32, generator=_gen(2))
    feats = torch.randn(64, 32, generator=_gen(3))
    cfg = {"q_group_size": 16}
    bound = search_clip(w, feats, 4, cfg, n_grid=10)
    g = w.reshape(256, 1, 2, 16)
    f = feats.reshape(1, 64, 2, 16)
    ref = (f * g).sum(-1)

    def err(x):
        return ((f * fake_quantize(x, n_bit=4, q_group_size=16)).sum(-1) - ref).pow(2).mean(1)

    clipped = torch.clamp(g, -bound.unsqueeze(1), bound.unsqueeze(1))
    assert (err(clipped) <= err(g) + 1e-7).all()


def test_engine_blocks_match_fake_quantised():
    torch.manual_seed(4)
    blocks = [MLPBlock(256, 256), MLPBlock(256, 256)]
    x = torch.randn(96, 256, generator=_gen(5))
    feats = collect_inputs(blocks[0], x)
    assert set(feats) == {"up", "down"}
    found = dict(search_clips(blocks[0], 4, {"q_group_size": 32}, feats))
    assert set(found) == {"up", "down"}
    ref_blocks = [MLPBlock(256, 256), MLPBlock(256, 256)]
    for r, b in zip(ref_blocks, blocks):
        r.load_state_dict(b.state_dict())
    calibrate_and_pack(blocks, x, 4, 32, clip=False)
    for r in ref_blocks:
        for m in (r.up, r.down):
            m.weight.data = fake_quantize(m.weight.data, n_bit=4, q_group_size=32)
            m.bias.data = m.bias.data.half().float()
    assert isinstance(blocks[0].up, Packed4Linear)
    y = x
    ref = x
    for b, r in zip(blocks, ref_blocks):
        y, ref = b(y), r(ref)
    torch.testing.assert_close(y, ref, atol=1e-2, rtol=1e-2)


def test_engine_clips_then_packs():
    blocks = [MLPBlock(256, 256)]
    x = torch.randn(64, 256, generator=_gen(6))
    calibrate_and_pack(blocks, x, 4, 32, clip=True)
    assert isinstance(blocks[0].up, Packed4Linear) and isinstance(blocks[0].down, Packed4Linear)
    assert torch.isfinite(blocks[0](x)).all()


def test_clamp_to_clips_bounds_the_weight():
    block = MLPBlock(32, 256)
    bound = torch.full((256, 1, 1), 0.01)
    clamp_to_clips(block, [("up", bound)])
    assert block.up.weight.abs().max() <= 0.01
