"""The gated activations against PyTorch references, under TRITON_INTERPRET=1."""

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from glumlp._rows import contiguous_inputs, row_tile
from glumlp.geglu import GeGLUOp, _geglu_rows_fwd, geglu_fwd
from glumlp.mlp import SwiGLUMLP
from glumlp.swiglu import SwiGLUOp, _silu, _swiglu_rows_bwd, _swiglu_rows_fwd, swiglu_bwd, swiglu_fwd, swiglu_packed

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def _silu_probe(x_ptr, out_ptr, n: tl.constexpr):
    cols = tl.arange(0, n)
    tl.store(out_ptr + cols, _silu(tl.load(x_ptr + cols)))


def test_silu_matches_torch():
    x = torch.randn(16).to(DEVICE)
    out = torch.empty_like(x)
    _silu_probe[(1,)](x, out, n=16)
    torch.testing.assert_close(out, F.silu(x))


def test_row_tile_picks_tile_and_warps_and_refuses_too_wide_rows():
    assert row_tile(100) == (128, 4)
    assert row_tile(4096) == (4096, 8)
    assert row_tile(40000) == (65536, 32)
    try:
        row_tile(70000)
    except RuntimeError as error:
        assert "70000" in str(error)
    else:
        raise AssertionError("a row wider than one tile was accepted")


def test_contiguous_inputs_hands_contiguous_tensors_to_the_op():
    seen = []
    contiguous_inputs(lambda ctx, x: seen.append(x.is_contiguous()))(None, torch.randn(4, 6).t())
    assert seen == [True]


def test_swiglu_kernels_forward_and_backward_rows():
    gate, up = torch.randn(3, 20).to(DEVICE), torch.randn(3, 20).to(DEVICE)
    out = torch.empty_like(gate)
    _swiglu_rows_fwd[(3,)](gate, up, out, 20, width=20, TILE=32)
    torch.testing.assert_close(out, F.silu(gate) * up)
    grad = torch.randn(3, 20).to(DEVICE)
    g, u = gate.clone().requires_grad_(), up.clone().requires_grad_()
    (F.silu(g) * u).backward(grad)
    d_gate, d_up = gate.clone(), up.clone()
    _swiglu_rows_bwd[(3,)](grad, d_gate, d_up, 20, width=20, TILE=32)
    torch.testing.assert_close(d_gate, g.grad)
    torch.testing.assert_close(d_up, u.grad)


def test_swiglu_op_and_helpers_match_autograd():
    gate, up = torch.randn(2, 3, 24).to(DEVICE).requires_grad_(), torch.randn(2, 3, 24).to(DEVICE).requires_grad_()
    ref_gate, ref_up = gate.detach().clone().requires_grad_(), up.detach().clone().requires_grad_()
    # The backward overwrites the saved inputs with their gradients, so keep copies.
    plain_gate, plain_up = gate.detach().clone(), up.detach().clone()
    out = SwiGLUOp.apply(gate, up)
    ref = F.silu(ref_gate) * ref_up
    torch.testing.assert_close(out, ref)
    out.sum().backward()
    ref.sum().backward()
    torch.testing.assert_close(gate.grad, ref_gate.grad)
    torch.testing.assert_close(up.grad, ref_up.grad)
    a, b, c = swiglu_fwd(plain_gate, plain_up)
    torch.testing.assert_close(c, ref.detach())
    d_a, d_b = swiglu_bwd(a.clone(), b.clone(), torch.ones(2, 3, 24, device=DEVICE))
    torch.testing.assert_close(d_a, ref_gate.grad)
    torch.testing.assert_close(d_b, ref_up.grad)


def test_swiglu_packed_splits_gate_first():
    gate_up = torch.randn(4, 32).to(DEVICE)
    torch.testing.assert_close(swiglu_packed(gate_up), F.silu(gate_up[:, :16]) * gate_up[:, 16:])


def test_geglu_forward_is_gelu_tanh_times_up():
    gate, up = (torch.randn(5, 40) * 3).to(DEVICE), torch.randn(5, 40).to(DEVICE)
    expected = F.gelu(gate, approximate="tanh") * up
    out = torch.empty_like(gate)
    _geglu_rows_fwd[(5,)](gate, up, out, 40, width=40, TILE=64)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(geglu_fwd(gate, up)[2], expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(GeGLUOp.apply(gate, up), expected, atol=1e-5, rtol=1e-5)


def test_swiglu_mlp_is_down_of_gated_projections():
    mlp = SwiGLUMLP(8, 24).to(DEVICE)
    x = torch.randn(3, 8).to(DEVICE)
    expected = mlp.down_proj(F.silu(mlp.gate_proj(x)) * mlp.up_proj(x))
    torch.testing.assert_close(mlp(x), expected, atol=1e-5, rtol=1e-5)
    try:
        SwiGLUMLP(8, 24, activation="gelu")
    except ValueError as error:
        assert "gelu" in str(error)
    else:
        raise AssertionError("an unsupported activation was accepted")


class _Context:
    """Stands in for autograd's ctx when a forward is called directly."""

    saved = None

    def save_for_backward(self, *tensors):
        self.saved = tensors


def test_op_forwards_called_directly_save_what_backward_needs():
    gate, up = torch.randn(2, 16).to(DEVICE), torch.randn(2, 16).to(DEVICE)
    ctx = _Context()
    torch.testing.assert_close(SwiGLUOp.forward(ctx, gate, up), F.silu(gate) * up)
    assert [t.data_ptr() for t in ctx.saved] == [gate.data_ptr(), up.data_ptr()]
    expected = F.gelu(gate, approximate="tanh") * up
    torch.testing.assert_close(GeGLUOp.forward(_Context(), gate, up), expected, atol=1e-5, rtol=1e-5)


def test_swiglu_mlp_init_sizes_the_projections_and_forward_uses_them():
    mlp = SwiGLUMLP(8, 24)
    SwiGLUMLP.__init__(mlp, 6, 10)
    mlp.to(DEVICE)
    assert (mlp.gate_proj.weight.shape, mlp.up_proj.weight.shape, mlp.down_proj.weight.shape) == ((10, 6), (10, 6), (6, 10))
    x = torch.randn(4, 6).to(DEVICE)
    torch.testing.assert_close(mlp.forward(x), mlp.down_proj(F.silu(mlp.gate_proj(x)) * mlp.up_proj(x)), atol=1e-5, rtol=1e-5)
