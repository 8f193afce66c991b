"""Every op of gemsops and the engine against plain torch (TRITON_INTERPRET=1 on a CPU)."""

import pytest
import torch
import torch.nn.functional as F

from engine.attention import Rotary, attention_inputs
from engine.mlp import GatedMLP, Norm
from gemsops.glu import SiluMulFn, gelu_and_mul, silu_and_mul, silu_and_mul_packed
from gemsops.launch import MAX_ROW_TILE, half_tile, row_tile
from gemsops.norms import RMSNormFn, _add_rms_rows_kernel, _rms_rows_kernel, add_rms_norm, rms_norm
from gemsops.rope import _rope_tokens_kernel, apply_rope

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _rms_reference(x, w, eps):
    x32 = x.float()
    return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w


def _rope_reference(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half].float(), x[..., half:].float()
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).to(x.dtype)


def test_tiles_cover_the_row_and_refuse_wider_ones():
    assert row_tile(100) == 128 and row_tile(128) == 128
    assert half_tile(8) == 16 and half_tile(128) == 64
    with pytest.raises(ValueError, match="tile over"):
        row_tile(MAX_ROW_TILE + 1)


def test_rms_norm_matches_reference_over_two_normalized_dims():
    x = torch.randn(3, 4, 5, device=DEVICE)
    w = torch.randn(4, 5, device=DEVICE)
    expected = _rms_reference(x.reshape(3, 20), w.reshape(20), 1e-5).reshape(3, 4, 5)
    torch.testing.assert_close(rms_norm(x, (4, 5), w), expected)
    torch.testing.assert_close(RMSNormFn.apply(x, (4, 5), w, 1e-5), expected)


def test_row_kernels_launched_directly():
    x, r, w = (torch.randn(6, 40, device=DEVICE) for _ in range(3))
    w = w[0].contiguous()
    out = torch.empty_like(x)
    _rms_rows_kernel[(6,)](out, x, w, 40, 40, 40, 1e-6, TILE=64)
    torch.testing.assert_close(out, _rms_reference(x, w, 1e-6))
    _add_rms_rows_kernel[(6,)](out, x, r, w, 40, 40, 1e-6, TILE=64)
    torch.testing.assert_close(out, _rms_reference(x + r, w, 1e-6))


def test_add_rms_norm_normalises_the_sum_and_leaves_inputs_alone():
    x, r = torch.randn(5, 33, device=DEVICE), torch.randn(5, 33, device=DEVICE)
    w = torch.randn(33, device=DEVICE)
    before = (x.clone(), r.clone())
    torch.testing.assert_close(add_rms_norm(x, r, (33,), w), _rms_reference(x + r, w, 1e-5))
    assert torch.equal(x, before[0]) and torch.equal(r, before[1])


def test_gates_match_reference_in_half_precision():
    a, b = torch.randn(4, 300, device=DEVICE, dtype=torch.float16), torch.randn(4, 300, device=DEVICE, dtype=torch.float16)
    silu = (F.silu(a.float()) * b.float()).half()
    gelu = (F.gelu(a.float(), approximate="tanh") * b.float()).half()
    torch.testing.assert_close(silu_and_mul(a, b), silu, atol=2e-3, rtol=2e-3)
    torch.testing.assert_close(SiluMulFn.apply(a, b), silu, atol=2e-3, rtol=2e-3)
    torch.testing.assert_close(gelu_and_mul(a, b), gelu, atol=2e-3, rtol=2e-3)
    torch.testing.assert_close(silu_and_mul_packed(torch.cat((a, b), dim=-1)), silu, atol=2e-3, rtol=2e-3)


def test_gates_refuse_operands_of_two_shapes():
    with pytest.raises(ValueError, match="one shape"):
        silu_and_mul(torch.randn(2, 3), torch.randn(3))


def test_rope_by_position_ids_and_by_sequence_index():
    rotary = Rotary(32, 16, device=DEVICE)
    q, k = torch.randn(7, 4, 16, device=DEVICE), torch.randn(7, 2, 16, device=DEVICE)
    pos = torch.tensor([3, 0, 9, 31, 5, 5, 1], device=DEVICE)
    q_rot, k_rot = apply_rope(q, k, rotary.cos, rotary.sin, pos)
    cos, sin = rotary.cos[pos][:, None], rotary.sin[pos][:, None]
    torch.testing.assert_close(q_rot, _rope_reference(q, cos, sin))
    torch.testing.assert_close(k_rot, _rope_reference(k, cos, sin))
    q4, k4 = torch.randn(2, 5, 3, 16, device=DEVICE), torch.randn(2, 5, 1, 16, device=DEVICE)
    q_rot, k_rot = rotary(q4, k4)
    cos, sin = rotary.cos[:5][None, :, None], rotary.sin[:5][None, :, None]
    torch.testing.assert_close(q_rot, _rope_reference(q4, cos, sin))
    torch.testing.assert_close(k_rot, _rope_reference(k4, cos, sin))


def test_rope_kernel_launched_directly():
    rotary = Rotary(8, 16, device=DEVICE)
    q, k = torch.randn(3, 2, 16, device=DEVICE), torch.randn(3, 1, 16, device=DEVICE)
    q_out, k_out = torch.empty_like(q), torch.empty_like(k)
    _rope_tokens_kernel[(3,)](q_out, k_out, q, k, rotary.cos, rotary.sin, rotary.cos, 32, 16, 16, 16, 32, 16, 16, 16,
                              8, 8, 3, Q_HEADS=2, K_HEADS=1, HALF=8, HALF_TILE=16, HAS_POSITIONS=False)
    cos, sin = rotary.cos[:3][:, None], rotary.sin[:3][:, None]
    torch.testing.assert_close(q_out, _rope_reference(q, cos, sin))
    torch.testing.assert_close(k_out, _rope_reference(k, cos, sin))


def test_rope_refuses_mismatched_head_dims():
    with pytest.raises(ValueError, match="head dims"):
        apply_rope(torch.randn(2, 1, 16), torch.randn(2, 1, 8), torch.randn(4, 8), torch.randn(4, 8), torch.arange(2))


def test_engine_mlp_paths_agree_and_norm_after_residual():
    torch.manual_seed(0)
    wg, wu, wd = torch.randn(24, 8, device=DEVICE), torch.randn(24, 8, device=DEVICE), torch.randn(8, 24, device=DEVICE)
    x = torch.randn(5, 8, device=DEVICE)
    expected = (F.silu(x @ wg.t()) * (x @ wu.t())) @ wd.t()
    torch.testing.assert_close(GatedMLP(wg, wu, wd)(x), expected, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(GatedMLP(wg, wu, wd, merged=True)(x), expected, atol=1e-4, rtol=1e-4)
    gelu = (F.gelu(x @ wg.t(), approximate="tanh") * (x @ wu.t())) @ wd.t()
    torch.testing.assert_close(GatedMLP(wg, wu, wd, activation="gelu_tanh")(x), gelu, atol=1e-4, rtol=1e-4)
    norm = Norm(8, device=DEVICE)
    torch.testing.assert_close(norm.after_residual(x, x), _rms_reference(2 * x, norm.weight, 1e-6))


def test_engine_attention_inputs_are_normed_then_rotated():
    torch.manual_seed(1)
    hidden = torch.randn(4, 32, device=DEVICE)
    w_q, w_k = torch.randn(32, 32, device=DEVICE), torch.randn(16, 32, device=DEVICE)
    norm, rotary = Norm(32, device=DEVICE), Rotary(16, 16, device=DEVICE)
    pos = torch.tensor([0, 1, 2, 7], device=DEVICE)
    q, k = attention_inputs(hidden, norm, rotary, w_q, w_k, 2, 1, pos)
    x = _rms_reference(hidden, norm.weight, 1e-6)
    cos, sin = rotary.cos[pos][:, None], rotary.sin[pos][:, None]
    torch.testing.assert_close(q, _rope_reference((x @ w_q.t()).view(4, 2, 16), cos, sin), atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(k, _rope_reference((x @ w_k.t()).view(4, 1, 16), cos, sin), atol=1e-4, rtol=1e-4)
