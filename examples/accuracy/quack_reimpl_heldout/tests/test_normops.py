"""The engine's row norms against plain torch, under TRITON_INTERPRET=1 on
the CPU or on a GPU. Every ported definition is called by name."""

import pytest
import torch

from engine import DecoderNorms
from normops.layernorm import layernorm_fwd, layernorm_reference
from normops.rms_norm import (
    RMSNormLayer,
    _row_norm_kernel,
    _rmsnorm_rows,
    add_rmsnorm_,
    launch_row_norm,
    rmsnorm,
    rmsnorm_fwd,
    rmsnorm_reference,
    row_norm_,
    warps_for_width,
)

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _rows(m, n, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(m, n, generator=g).to(DEVICE, dtype)


def test_warps_grow_with_the_row_width():
    assert [warps_for_width(n) for n in (64, 128, 2048, 4096, 8192, 32768)] == [1, 1, 1, 2, 4, 8]


@pytest.mark.parametrize("n", [48, 256, 1000])
def test_rmsnorm_fwd_matches_the_reference_with_weight_bias_and_rstd(n):
    x, w, b = _rows(5, n), _rows(1, n, seed=1)[0], _rows(1, n, seed=2)[0]
    out, summed, rstd = rmsnorm_fwd(x, w, bias=b, store_rstd=True)
    torch.testing.assert_close(out, rmsnorm_reference(x, w, bias=b), atol=1e-5, rtol=1e-5)
    assert summed is x
    torch.testing.assert_close(rstd, torch.rsqrt(x.square().mean(-1) + 1e-6))


def test_residual_is_added_and_returned_in_its_dtype():
    x, res = _rows(4, 96, torch.float16), _rows(4, 96, torch.float32, seed=3)
    out, summed, rstd = rmsnorm_fwd(x, None, residual=res)
    ref_out, ref_sum = rmsnorm_reference(x, residual=res)
    assert rstd is None and summed.dtype == torch.float32
    torch.testing.assert_close(out, ref_out, atol=2e-3, rtol=2e-3)
    torch.testing.assert_close(summed, ref_sum)


def test_row_norm_writes_mean_and_rstd_for_the_centered_norm():
    x = _rows(3, 200) + 2.0
    out, rstd, mean = torch.empty_like(x), torch.empty(3, device=DEVICE), torch.empty(3, device=DEVICE)
    row_norm_(x, None, out, rstd=rstd, mean=mean, is_layernorm=True)
    torch.testing.assert_close(mean, x.mean(-1))
    torch.testing.assert_close(out, torch.nn.functional.layer_norm(x, (200,)), atol=1e-5, rtol=1e-5)
    out2 = torch.empty_like(x)
    launch_row_norm(x, None, None, None, out2, None, None, None, 1e-6, True)
    torch.testing.assert_close(out2, out)


def test_row_norm_rejects_unsupported_dtypes():
    x = torch.zeros(2, 8, dtype=torch.int32)
    with pytest.raises(TypeError, match="x: expected"):
        row_norm_(x, None, torch.empty_like(x))


def test_rmsnorm_keeps_the_shape_and_returns_the_sum_with_prenorm():
    x, res, w = _rows(6, 64).reshape(2, 3, 64), _rows(6, 64, seed=4).reshape(2, 3, 64), _rows(1, 64, seed=5)[0]
    out, summed = rmsnorm(x, w, residual=res, prenorm=True)
    ref_out, ref_sum = rmsnorm_reference(x, w, residual=res)
    torch.testing.assert_close(out, ref_out, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(summed, ref_sum)
    torch.testing.assert_close(_rmsnorm_rows(x, w, None, None, None, None, 1e-6, False),
                               rmsnorm_reference(x, w), atol=1e-5, rtol=1e-5)


def test_layer_and_fused_residual_step():
    x = _rows(4, 32)
    layer = RMSNormLayer(32, eps=1e-6, device=DEVICE)
    torch.testing.assert_close(layer.forward(x), torch.nn.functional.rms_norm(x, (32,), layer.weight, 1e-6),
                               atol=1e-5, rtol=1e-5)
    res = _rows(4, 32, seed=6)
    expect = rmsnorm_reference(x + res, layer.weight.detach())
    out = add_rmsnorm_(x, res, layer.weight.detach())
    torch.testing.assert_close(out, expect, atol=1e-5, rtol=1e-5)


def test_layernorm_fwd_returns_what_it_is_asked_for():
    x, w, b = _rows(5, 128), _rows(1, 128, seed=7)[0], _rows(1, 128, seed=8)[0]
    out, rstd, mean = layernorm_fwd(x, w, b, return_rstd=True, return_mean=True)
    torch.testing.assert_close(out, torch.nn.functional.layer_norm(x, (128,), w, b, 1e-6),
                               atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(mean, x.mean(-1))
    torch.testing.assert_close(layernorm_fwd(x, w), layernorm_reference(x, w), atol=1e-5, rtol=1e-5)


def test_decoder_block_norms():
    norms = DecoderNorms(64, device=DEVICE)
    h, res = _rows(3, 64), _rows(3, 64, seed=9)
    normed, new_res = norms.attn_input(h, res)
    torch.testing.assert_close(new_res, h + res)
    torch.testing.assert_close(normed, rmsnorm_reference(h + res), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(norms.final_norm(h), rmsnorm_reference(h), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(norms.head_input(h), torch.nn.functional.layer_norm(h, (64,), eps=1e-6),
                               atol=1e-5, rtol=1e-5)
    res2 = res.clone()
    out = norms.mlp_input(h, res2)
    torch.testing.assert_close(res2, h + res)
    torch.testing.assert_close(out, rmsnorm_reference(h + res), atol=1e-5, rtol=1e-5)


def test_an_empty_batch_launches_nothing():
    x = torch.empty(0, 64, device=DEVICE)
    out, summed, rstd = rmsnorm_fwd(x, store_rstd=True)
    assert out.shape == (0, 64) and rstd.shape == (0,) and summed is x


def test_the_row_kernel_launched_directly_normalises_a_strided_row_block():
    base = _rows(4, 80)
    x = base[:, :64]  # row stride 80, unit column stride
    out = torch.empty(4, 64, device=DEVICE)
    _row_norm_kernel[(4,)](x, x, x, x, out, x, x, x, x.stride(0), 0, out.stride(0), 0, 64, 1e-6,
                           HAS_WEIGHT=False, HAS_BIAS=False, HAS_RESIDUAL=False,
                           WRITE_RESIDUAL=False, WRITE_RSTD=False, WRITE_MEAN=False,
                           CENTERED=False, BLOCK=64)
    torch.testing.assert_close(out, rmsnorm_reference(x), atol=1e-5, rtol=1e-5)
