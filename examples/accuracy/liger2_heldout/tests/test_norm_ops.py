"""Each op against torch's reference on small shapes (TRITON_INTERPRET=1 on a CPU)."""

import torch

from normops import DynamicTanh, DyTOp, LayerNormOp, groupnorm, tiles
from normops.dyt import dyt_backward, dyt_forward
from normops.layernorm import ln_backward, ln_forward

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def test_row_tile_refuses_rows_wider_than_one_tile():
    assert tiles.row_tile(1000) == (1024, 4)
    try:
        tiles.row_tile(tiles.ROW_TILE_LIMIT + 1)
    except RuntimeError as error:
        assert str(tiles.ROW_TILE_LIMIT) in str(error)
    else:
        raise AssertionError("a row wider than the tile limit was accepted")


def test_layer_norm_forward_and_backward_match_torch():
    torch.manual_seed(0)
    x = torch.randn(2, 5, 48, device=DEVICE)
    w = torch.randn(48, device=DEVICE)
    b = torch.randn(48, device=DEVICE)
    y, rows, mean, rstd, _, _ = ln_forward(x, w, b, 1e-6)
    torch.testing.assert_close(y, torch.nn.functional.layer_norm(x, (48,), w, b, 1e-6), atol=1e-4, rtol=1e-4)
    dy = torch.randn_like(x)
    dx, dw, db = ln_backward(dy, rows, w, mean, rstd)
    xr, wr, br = (t.clone().requires_grad_() for t in (x, w, b))
    torch.nn.functional.layer_norm(xr, (48,), wr, br, 1e-6).backward(dy)
    torch.testing.assert_close(dx, xr.grad, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(dw, wr.grad, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(db, br.grad, atol=1e-4, rtol=1e-4)


def test_layer_norm_op_is_differentiable():
    x = torch.randn(3, 40, device=DEVICE, requires_grad=True)
    w = torch.ones(40, device=DEVICE, requires_grad=True)
    b = torch.zeros(40, device=DEVICE, requires_grad=True)
    LayerNormOp.apply(x, w, b, 1e-6).sum().backward()
    assert x.grad.abs().max() < 1e-3  # the sum of a normalised row does not depend on the row
    torch.testing.assert_close(b.grad, torch.full_like(b, 3.0))


def test_group_norm_forward_matches_torch_and_refuses_uneven_groups():
    torch.manual_seed(1)
    x = torch.randn(2, 6, 4, 5, device=DEVICE)
    w = torch.randn(6, device=DEVICE)
    b = torch.randn(6, device=DEVICE)
    y, _, mean, _, _ = groupnorm.gn_forward(x, 6, 3, w, b, 1e-5)
    torch.testing.assert_close(y, torch.nn.functional.group_norm(x, 3, w, b, 1e-5), atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(mean, x.view(2, 3, -1).mean(-1), atol=1e-5, rtol=1e-5)
    try:
        groupnorm.gn_forward(x, 6, 4, w, b, 1e-5)
    except ValueError as error:
        assert "multiple" in str(error)
    else:
        raise AssertionError("uneven groups were accepted")


def _dyt_reference(x, alpha, gamma, beta):
    y = torch.tanh(alpha * x) * gamma
    return y if beta is None else y + beta


def test_dyt_forward_backward_and_out_buffer():
    torch.manual_seed(2)
    x = torch.randn(7, 100, device=DEVICE)
    alpha = torch.tensor([0.7], device=DEVICE)
    gamma = torch.randn(100, device=DEVICE)
    beta = torch.randn(100, device=DEVICE)
    out = torch.empty_like(x)
    y = dyt_forward(x, alpha, gamma, beta, out=out)
    torch.testing.assert_close(y, _dyt_reference(x, alpha, gamma, beta), atol=1e-5, rtol=1e-5)
    assert y.data_ptr() == out.data_ptr()
    dy = torch.randn_like(x)
    dx, da, dg, db = dyt_backward(dy, x, alpha, gamma, beta)
    refs = [t.clone().requires_grad_() for t in (x, alpha, gamma, beta)]
    _dyt_reference(*refs).backward(dy)
    for got, ref in zip((dx, da, dg, db), refs):
        torch.testing.assert_close(got, ref.grad, atol=1e-4, rtol=1e-4)
    assert dyt_backward(dy, x, alpha, gamma, None)[3] is None


def test_dyt_op_and_module_without_beta():
    layer = DynamicTanh(32, beta=False, init_alpha=0.25).to(DEVICE)
    x = torch.randn(4, 32, device=DEVICE, requires_grad=True)
    y = layer(x)
    torch.testing.assert_close(y, _dyt_reference(x, layer.alpha, layer.gamma, None), atol=1e-5, rtol=1e-5)
    y.sum().backward()
    assert layer.alpha.grad.shape == (1,) and layer.gamma.grad.shape == (32,)
    z = DyTOp.apply(x, layer.alpha, layer.gamma, None)
    torch.testing.assert_close(z, y)
