"""Each op against a torch reference on small shapes (TRITON_INTERPRET=1 on a CPU)."""

import math

import pytest
import torch
import triton

from faops import norm, rotary, xent
from faops.norm import _norm_rows_kernel, norm_forward, rms_norm
from faops.rotary import RotaryFn, _rotate_kernel, rotary_apply, rotary_emb
from faops.xent import CrossEntropyFn, _xent_bwd_kernel, _xent_fwd_kernel

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _rotary_reference(x, cos, sin, offset, interleaved):
    rd = cos.shape[1] * 2
    seqlen = x.shape[1]
    c = cos[offset:offset + seqlen].float()
    s = sin[offset:offset + seqlen].float()
    xr = x[..., :rd].float()
    if interleaved:
        a, b = xr[..., 0::2], xr[..., 1::2]
        c, s = c[None, :, None, :], s[None, :, None, :]
        rot = torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)
    else:
        a, b = xr.chunk(2, dim=-1)
        c, s = c[None, :, None, :], s[None, :, None, :]
        rot = torch.cat((a * c - b * s, a * s + b * c), dim=-1)
    return torch.cat((rot.to(x.dtype), x[..., rd:]), dim=-1)


@pytest.mark.parametrize("interleaved", [False, True])
def test_rotary_apply_matches_the_reference_and_copies_the_unrotated_tail(interleaved):
    torch.manual_seed(0)
    x = torch.randn(2, 5, 3, 16, device=DEVICE)
    cos, sin = rotary.cos_sin_table(12, 10, device=DEVICE)
    out = rotary_apply(x, cos, sin, seqlen_offsets=3, interleaved=interleaved)
    torch.testing.assert_close(out, _rotary_reference(x, cos, sin, 3, interleaved), atol=1e-5, rtol=1e-5)
    assert torch.equal(out[..., 10:], x[..., 10:])


def test_rotary_offsets_per_sequence_and_the_conjugate_undoes_the_rotation():
    torch.manual_seed(1)
    x = torch.randn(2, 4, 2, 8, device=DEVICE)
    cos, sin = rotary.cos_sin_table(10, 8, device=DEVICE)
    offsets = torch.tensor([0, 5], dtype=torch.int32, device=DEVICE)
    out = rotary_apply(x, cos, sin, seqlen_offsets=offsets)
    torch.testing.assert_close(out[1:], _rotary_reference(x[1:], cos, sin, 5, False), atol=1e-5, rtol=1e-5)
    back = rotary_apply(out, cos, sin, seqlen_offsets=offsets, conjugate=True)
    torch.testing.assert_close(back, x, atol=1e-5, rtol=1e-5)


def test_rotary_kernel_launched_directly_rotates_one_head():
    x = torch.zeros(1, 1, 1, 32, device=DEVICE)
    x[..., 0] = 1.0  # feature 0 pairs with feature 16 in the halves layout
    cos = torch.tensor([[0.0] * 16], device=DEVICE)
    sin = torch.tensor([[1.0] * 16], device=DEVICE)
    out = torch.empty_like(x)
    _rotate_kernel[(1, 1, 1)](out, x, cos, sin, 0, 1, 32, 1, *out.stride(), *x.stride(),
                              TILE=32, OFFSET_PER_SEQ=False, PAIRS=False, CONJUGATE=False, ROWS=4)
    assert out[0, 0, 0, 16].item() == 1.0 and out[0, 0, 0, 0].item() == 0.0


def test_rotary_emb_is_differentiable_and_in_place_returns_its_input():
    torch.manual_seed(2)
    x = torch.randn(1, 6, 2, 8, device=DEVICE, requires_grad=True)
    cos, sin = rotary.cos_sin_table(6, 8, device=DEVICE)
    y = rotary_emb(x, cos, sin, False, False, 0)
    g = torch.randn_like(y)
    y.backward(g)
    xr = x.detach().clone().requires_grad_()
    _rotary_reference(xr, cos, sin, 0, False).backward(g)
    torch.testing.assert_close(x.grad, xr.grad, atol=1e-5, rtol=1e-5)
    buf = torch.randn(1, 6, 2, 8, device=DEVICE)
    expected = _rotary_reference(buf, cos, sin, 0, True)
    out = RotaryFn.apply(buf, cos, sin, True, True, 0)
    assert out.data_ptr() == buf.data_ptr()
    torch.testing.assert_close(buf, expected, atol=1e-5, rtol=1e-5)


def test_rotary_refuses_a_table_shorter_than_the_sequence():
    cos, sin = rotary.cos_sin_table(3, 8, device=DEVICE)
    with pytest.raises(ValueError, match="tables of 3 positions"):
        rotary_apply(torch.zeros(1, 4, 1, 8, device=DEVICE), cos, sin)


def _xent_reference(logits, labels, smoothing, z_loss, ignore=-100):
    lse = torch.logsumexp(logits.float(), dim=-1)
    safe = labels.clamp(min=0)
    ce = torch.nn.functional.cross_entropy(logits.float(), safe, reduction="none", label_smoothing=smoothing)
    return torch.where(labels == ignore, 0.0, ce + z_loss * lse * lse)


@pytest.mark.parametrize("smoothing,z_loss", [(0.0, 0.0), (0.1, 1e-3)])
def test_cross_entropy_forward_and_backward_match_torch(smoothing, z_loss):
    torch.manual_seed(3)
    logits = torch.randn(6, 50, device=DEVICE, requires_grad=True)
    labels = torch.tensor([1, 7, -100, 49, 0, 3], device=DEVICE)
    losses = CrossEntropyFn.apply(logits, labels, smoothing, 1.0, z_loss, -100, False)
    ref_in = logits.detach().clone().requires_grad_()
    ref = _xent_reference(ref_in, labels, smoothing, z_loss)
    torch.testing.assert_close(losses, ref, atol=1e-4, rtol=1e-4)
    losses.sum().backward()
    ref.sum().backward()
    torch.testing.assert_close(logits.grad, ref_in.grad, atol=1e-4, rtol=1e-4)


def test_cross_entropy_splits_a_vocabulary_wider_than_one_tile(monkeypatch):
    monkeypatch.setattr(xent, "FWD_TILE_LIMIT", 16)
    torch.manual_seed(4)
    logits = torch.randn(3, 40, device=DEVICE)
    labels = torch.tensor([39, 2, 20], device=DEVICE)
    losses = CrossEntropyFn.apply(logits, labels, 0.0, 1.0, 1e-2, -100, False)
    torch.testing.assert_close(losses, _xent_reference(logits, labels, 0.0, 1e-2), atol=1e-4, rtol=1e-4)


def test_cross_entropy_kernels_launched_directly():
    logits = torch.tensor([[0.0, math.log(3.0)]], device=DEVICE)
    labels = torch.tensor([1], device=DEVICE)
    loss = torch.empty(1, device=DEVICE)
    lse = torch.empty(1, device=DEVICE)
    _xent_fwd_kernel[(1, 1)](loss, lse, logits, labels, 0.0, 1.0, 0.0, -100, 2, 1, logits.stride(0),
                             TILE=2, SPLIT=False)
    torch.testing.assert_close(lse, torch.tensor([math.log(4.0)], device=DEVICE))
    torch.testing.assert_close(loss, torch.tensor([math.log(4.0 / 3.0)], device=DEVICE))
    dlogits = torch.empty_like(logits)
    _xent_bwd_kernel[(1, 1)](dlogits, torch.ones(1, device=DEVICE), logits, lse, labels, 0.0, 1.0, 0.0, -100,
                             2, logits.stride(0), dlogits.stride(0), 1, TILE=2)
    torch.testing.assert_close(dlogits, torch.tensor([[0.25, -0.25]], device=DEVICE))


def test_norm_forward_computes_layer_norm_and_rms_norm_with_a_residual():
    torch.manual_seed(5)
    x = torch.randn(4, 24, device=DEVICE)
    r = torch.randn(4, 24, device=DEVICE)
    w = torch.randn(24, device=DEVICE)
    b = torch.randn(24, device=DEVICE)
    y, mean, rstd, res_out = norm_forward(x, w, b, 1e-5, residual=r)
    torch.testing.assert_close(y, torch.nn.functional.layer_norm(x + r, (24,), w, b, 1e-5), atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(mean, (x + r).mean(-1), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(res_out, x + r)
    y, mean, rstd, same = norm_forward(x, w, None, 1e-5, is_rms_norm=True)
    assert mean is None and same is x
    torch.testing.assert_close(y, x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w, atol=1e-4, rtol=1e-4)


def test_norm_kernel_launched_directly_keeps_one_over_std():
    x = torch.tensor([[3.0, 4.0]], device=DEVICE)
    y = torch.empty_like(x)
    rstd = torch.empty(1, device=DEVICE)
    w = torch.ones(2, device=DEVICE)
    _norm_rows_kernel[(1,)](x, y, w, None, None, None, None, rstd, 2, 2, 0, 0, 2, 0.0,
                            IS_RMS_NORM=True, BLOCK_N=2, HAS_RESIDUAL=False, STORE_RESIDUAL_OUT=False, HAS_BIAS=False)
    torch.testing.assert_close(rstd, torch.tensor([1 / math.sqrt(12.5)], device=DEVICE))


def test_rms_norm_prenorm_returns_the_fp32_residual_sum():
    torch.manual_seed(6)
    x = torch.randn(2, 3, 32, device=DEVICE, dtype=torch.float16)
    r = torch.randn(2, 3, 32, device=DEVICE, dtype=torch.float16)
    w = torch.rand(32, device=DEVICE, dtype=torch.float16)
    y, res = rms_norm(x, w, None, residual=r, prenorm=True)
    s = x.float() + r.float()
    torch.testing.assert_close(y.float(), s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float(),
                               atol=2e-2, rtol=2e-2)
    assert res.dtype == torch.float16 and y.shape == x.shape
    _, res32 = rms_norm(x, w, None, prenorm=True, residual_in_fp32=True)
    assert res32.dtype == torch.float32


def test_norm_refuses_rows_wider_than_one_program_holds():
    too_wide = norm.ROW_BYTES_LIMIT // 4 * 2
    with pytest.raises(RuntimeError, match="does not tile rows"):
        norm_forward(torch.zeros(1, too_wide, device=DEVICE), torch.ones(too_wide, device=DEVICE), None, 1e-6)
    assert triton.next_power_of_2(too_wide) == too_wide
