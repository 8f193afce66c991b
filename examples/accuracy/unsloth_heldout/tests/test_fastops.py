"""Every op of fastops against a plain torch reference (TRITON_INTERPRET=1 on a CPU)."""

import types

import pytest
import torch
import torch.nn.functional as F
import triton

from fastops.rmsnorm import RMSNormFn, _rms_rows_fwd, rms_norm
from fastops.rope import RopeFn, _rotate_heads_kernel, apply_rope, rope_tables
from fastops.settings import row_block_and_warps
from fastops.swiglu import GATE_TILE, _silu_mul_kernel, silu_mul
from fastops.xent import CrossEntropyFn, _xent_bwd_kernel, _xent_fwd_kernel, cross_entropy_loss

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _ctx():
    ctx = types.SimpleNamespace(saved=None)
    ctx.save_for_backward = lambda *tensors: setattr(ctx, "saved", tensors)
    return ctx


def _rotate_half_reference(q, cos, sin):
    half = q.shape[-1] // 2
    return q * cos + torch.cat((-q[..., half:], q[..., :half]), dim=-1) * sin


def test_row_block_and_warps_picks_the_tile_and_refuses_wider_rows():
    assert row_block_and_warps(100) == (128, 4)
    assert row_block_and_warps(4096) == (4096, 8)
    assert row_block_and_warps(9000) == (16384, 16)
    assert row_block_and_warps(40000) == (65536, 32)
    with pytest.raises(RuntimeError, match="70000"):
        row_block_and_warps(70000)


def test_rms_rows_kernel_and_rms_norm_fn_match_torch():
    x, w = torch.randn(3, 24, device=DEVICE), torch.randn(24, device=DEVICE)
    expected = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    out, inv = torch.empty_like(x), torch.empty(3, device=DEVICE)
    _rms_rows_fwd[(3,)](out, out.stride(0), x, x.stride(0), w, inv, 24, 1e-6, TILE=32)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(inv, torch.rsqrt(x.pow(2).mean(-1) + 1e-6), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(RMSNormFn.forward(_ctx(), x.view(1, 3, 24), w, 1e-6), expected.view(1, 3, 24),
                               atol=1e-5, rtol=1e-5)


def test_rms_norm_reads_the_weight_and_either_epsilon_name():
    x = torch.randn(2, 5, 16, device=DEVICE)
    for norm in (types.SimpleNamespace(weight=torch.randn(16, device=DEVICE), variance_epsilon=1e-5),
                 types.SimpleNamespace(weight=torch.randn(16, device=DEVICE), eps=1e-5)):
        expected = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * norm.weight
        torch.testing.assert_close(rms_norm(norm, x), expected, atol=1e-5, rtol=1e-5)


def test_rotate_heads_kernel_and_rope_fn_match_rotate_half():
    cos, sin = rope_tables(8, 16, device=DEVICE)
    q = torch.randn(2, 6, 5, 16, device=DEVICE)  # (batch, seqlen, heads, head_dim)
    expected = _rotate_half_reference(q, cos[:6, None, :], sin[:6, None, :])
    rows = q.clone().view(12, 80)
    _rotate_heads_kernel[(12, triton.cdiv(5, 4))](rows, rows.stride(0), cos, cos.stride(0), sin, sin.stride(0), 6,
                                                  16, 5, HALF_TILE=8, GROUP=4)
    torch.testing.assert_close(rows.view(2, 6, 5, 16), expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(RopeFn.forward(_ctx(), q.clone(), cos, sin), expected, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="9 positions"):
        RopeFn.forward(_ctx(), torch.randn(1, 9, 1, 16, device=DEVICE), cos, sin)


def test_apply_rope_rotates_q_and_k_laid_out_by_heads():
    cos, sin = rope_tables(4, 8, device=DEVICE)
    q, k = torch.randn(1, 3, 4, 8, device=DEVICE), torch.randn(1, 3, 4, 8, device=DEVICE)  # (batch, heads, seqlen, d)
    rq, rk = apply_rope(q.clone(), k.clone(), cos, sin)
    torch.testing.assert_close(rq, _rotate_half_reference(q, cos, sin), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(rk, _rotate_half_reference(k, cos, sin), atol=1e-5, rtol=1e-5)


def test_silu_mul_kernel_and_silu_mul_gate_elementwise():
    e, g = torch.randn(2, 3, 700, device=DEVICE), torch.randn(2, 3, 700, device=DEVICE)
    h = torch.empty_like(e)
    _silu_mul_kernel[(triton.cdiv(e.numel(), GATE_TILE),)](e, g, h, e.numel(), TILE=GATE_TILE)
    torch.testing.assert_close(h, F.silu(e) * g)
    torch.testing.assert_close(silu_mul(e, g), F.silu(e) * g)


def test_xent_kernels_give_losses_and_gradient_in_place():
    logits, labels = torch.randn(4, 40, device=DEVICE), torch.tensor([3, -100, 39, 0], device=DEVICE)
    reference = logits.clone().requires_grad_()
    expected = F.cross_entropy(reference, labels, reduction="none")
    expected.sum().backward()
    losses, lse = torch.empty(4, device=DEVICE), torch.empty(4, device=DEVICE)
    _xent_fwd_kernel[(4,)](logits, logits.stride(0), losses, lse, labels, VOCAB=40, TILE=64, CAPPED=False, CAP=0.0)
    torch.testing.assert_close(losses, expected.detach(), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(lse, torch.logsumexp(logits, -1), atol=1e-5, rtol=1e-5)
    dloss = torch.ones(4, device=DEVICE)
    _xent_bwd_kernel[(4, 1)](logits, logits.stride(0), dloss, dloss.stride(0), lse, labels,
                             VOCAB=40, TILE=64, CAPPED=False, CAP=0.0)
    torch.testing.assert_close(logits, reference.grad, atol=1e-5, rtol=1e-5)


def test_cross_entropy_fn_forward_and_backward_with_softcapping():
    logits, labels = torch.randn(5, 30, device=DEVICE) * 4, torch.tensor([1, 2, -100, 29, 0], device=DEVICE)
    reference = logits.clone().requires_grad_()
    capped = 5.0 * torch.tanh(reference / 5.0)
    expected = F.cross_entropy(capped, labels, reduction="none")
    (expected * 2).sum().backward()
    ctx = _ctx()
    losses = CrossEntropyFn.forward(ctx, logits, labels, 5.0)
    torch.testing.assert_close(losses, expected.detach(), atol=1e-4, rtol=1e-4)
    ctx.saved_tensors = ctx.saved
    grad, *_ = CrossEntropyFn.backward(ctx, torch.full((5,), 2.0, device=DEVICE))
    torch.testing.assert_close(grad, reference.grad, atol=1e-4, rtol=1e-4)


def test_cross_entropy_loss_is_the_mean_over_labelled_tokens_or_n_items():
    logits = torch.randn(2, 3, 20, device=DEVICE, requires_grad=True)
    labels = torch.tensor([[1, -100, 4], [19, 0, -100]], device=DEVICE)
    keep = labels != -100
    expected = F.cross_entropy(logits.detach()[keep], labels[keep])
    loss = cross_entropy_loss(logits * 1.0, labels)
    torch.testing.assert_close(loss, expected, atol=1e-5, rtol=1e-5)
    loss.backward()
    assert logits.grad[0, 1].abs().max() == 0
    torch.testing.assert_close(cross_entropy_loss(logits.detach().clone(), labels, n_items=8), expected * 4 / 8,
                               atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="labels of"):
        cross_entropy_loss(logits.detach(), labels.view(-1))
