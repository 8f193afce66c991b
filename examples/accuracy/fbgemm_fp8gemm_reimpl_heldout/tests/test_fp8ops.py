"""The FP8 quantisers and scaled matmuls against plain torch, and the engine's layers.

Runs on a GPU, or on the CPU under TRITON_INTERPRET=1.
"""

import os

import pytest
import torch
import triton

from engine import Fp8BlockwiseLinear, Fp8RowwiseLinear
from fp8ops.gemm import (_blockwise_kernel, _prepare_matmul, _rowwise_kernel,
                         fp8_blockwise_matmul, fp8_rowwise_matmul)
from fp8ops import dequantize_rowwise
from fp8ops.quant import (FP8_E4M3_MAX, _blockwise_quant_kernel, _launch_rowwise_quant,
                          _rowwise_quant_kernel, as_fp8, quantize_blockwise, quantize_rowwise)

if not torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip("the kernels need a GPU or TRITON_INTERPRET=1", allow_module_level=True)

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


def _assert_fp8_cast(got, scaled):
    """``got`` is ``scaled`` cast to e4m3 (round to nearest). The CPU
    interpreter's cast drops the carry when rounding up reaches the next power
    of two (127.9 becomes 64, not 128); only that case is let through there."""
    want = scaled.to(torch.float8_e4m3fn).float()
    got = got.float()
    off = got != want
    if INTERPRETED:
        off &= ~((want.abs().log2() == want.abs().log2().round()) & (got * 2 == want))
    assert not bool(off.any()), f"{int(off.sum())} values differ from torch's e4m3 cast"


def _rows(m, n, seed):
    torch.manual_seed(seed)
    return torch.randn(m, n, device=DEVICE)


def test_as_fp8_reinterprets_bytes_and_refuses_wide_dtypes():
    raw = torch.tensor([0x38, 0x40], dtype=torch.uint8, device=DEVICE)
    assert as_fp8(raw).float().tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="one-byte"):
        as_fp8(torch.zeros(2, device=DEVICE))


def test_rowwise_quant_kernel_maps_each_row_amax_to_the_fp8_max():
    x = _rows(5, 70, 0)
    scale = torch.empty(5, device=DEVICE)
    out = as_fp8(torch.empty(5, 70, dtype=torch.uint8, device=DEVICE))
    _rowwise_quant_kernel[(5,)](x, scale, out, 5, 70, x.stride(0), x.stride(1), TILE=32)
    torch.testing.assert_close(scale, FP8_E4M3_MAX.value / x.abs().amax(1))
    _assert_fp8_cast(out, x * scale[:, None])
    q, s = _launch_rowwise_quant(x)
    assert q.dtype == torch.float8_e4m3fn and torch.equal(s, scale)


def test_quantize_rowwise_triton_and_torch_agree():
    x = _rows(7, 40, 1)
    q, s = quantize_rowwise(x)
    q_ref, s_ref = quantize_rowwise(x, use_triton=False)
    torch.testing.assert_close(s, s_ref)
    _assert_fp8_cast(q, x * s[:, None])
    _assert_fp8_cast(q_ref, x * s_ref[:, None])


def test_blockwise_quantisation_has_one_scale_per_block():
    x = _rows(40, 72, 2)
    scale = torch.ones(2, 3, device=DEVICE)
    out = as_fp8(torch.empty(40, 72, dtype=torch.uint8, device=DEVICE))
    _blockwise_quant_kernel[(6,)](x, scale, out, 40, 72, x.stride(0), x.stride(1),
                                  scale.stride(0), scale.stride(1), BLOCK_M=32, BLOCK_K=32)
    q, s = quantize_blockwise(x, 32, 32)
    assert s.shape == (2, 3) and torch.equal(s, scale)
    torch.testing.assert_close(s[1, 2], FP8_E4M3_MAX.value / x[32:, 64:].abs().max())
    _assert_fp8_cast(q, x * s.repeat_interleave(32, 0)[:40].repeat_interleave(32, 1)[:, :72])


def test_prepare_matmul_checks_shapes_and_picks_the_accumulator():
    a = as_fp8(torch.zeros(3, 8, dtype=torch.uint8, device=DEVICE))
    b = as_fp8(torch.zeros(5, 8, dtype=torch.uint8, device=DEVICE))
    M, N, K, out, acc = _prepare_matmul(a, b)
    assert (M, N, K, tuple(out.shape), out.dtype) == (3, 5, 8, (3, 5), torch.bfloat16)
    assert acc == triton.language.float32
    with pytest.raises(ValueError, match="expected"):
        _prepare_matmul(a, as_fp8(torch.zeros(5, 4, dtype=torch.uint8, device=DEVICE)))


@pytest.mark.parametrize("fast_accum", [True, False])
def test_rowwise_matmul_matches_dequantised_product(fast_accum):
    a, b = _rows(33, 80, 3), _rows(20, 80, 4)
    (aq, sa), (bq, sb) = quantize_rowwise(a), quantize_rowwise(b)
    ref = (aq.float() / sa[:, None]) @ (bq.float() / sb[:, None]).T
    out = fp8_rowwise_matmul(aq, bq, sa, sb, fp8_fast_accum=fast_accum)
    torch.testing.assert_close(out.float(), ref, atol=0.05, rtol=0.02)
    direct = torch.empty(33, 20, dtype=torch.bfloat16, device=DEVICE)
    _rowwise_kernel[(triton.cdiv(33, 32),)](aq, bq, direct, 33, 20, 80, sa, sb,
                                            aq.stride(0), aq.stride(1), bq.stride(0), bq.stride(1),
                                            direct.stride(0), direct.stride(1),
                                            ACC_DTYPE=triton.language.float32, FAST_ACCUM=fast_accum,
                                            BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=1, EVEN_K=False)
    torch.testing.assert_close(direct.float(), ref, atol=0.05, rtol=0.02)


@pytest.mark.parametrize("fast_accum", [True, False])
def test_blockwise_matmul_matches_dequantised_product(fast_accum):
    a, b = _rows(64, 128, 5), _rows(32, 128, 6)
    (aq, sa), (bq, sb) = quantize_blockwise(a, 32, 64), quantize_blockwise(b, 32, 64)
    deq_a = aq.float() / sa.repeat_interleave(32, 0).repeat_interleave(64, 1)
    deq_b = bq.float() / sb.repeat_interleave(32, 0).repeat_interleave(64, 1)
    out = fp8_blockwise_matmul(aq, bq, sa, sb, 32, 32, 64, fp8_fast_accum=fast_accum)
    torch.testing.assert_close(out.float(), deq_a @ deq_b.T, atol=0.05, rtol=0.02)
    direct = torch.empty(64, 32, dtype=torch.bfloat16, device=DEVICE)
    _blockwise_kernel[(2,)](aq, bq, direct, 64, 32, 128, sa, sb, 32, 32, 64,
                            aq.stride(0), aq.stride(1), bq.stride(0), bq.stride(1),
                            direct.stride(0), direct.stride(1),
                            sa.stride(0), sa.stride(1), sb.stride(0), sb.stride(1),
                            ACC_DTYPE=triton.language.float32, FAST_ACCUM=fast_accum,
                            BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=8, EVEN_K=True)
    torch.testing.assert_close(direct, out)


def test_engine_layers_run_the_quantised_product():
    x, w = _rows(16, 128, 7), _rows(48, 128, 8) * 0.1
    rowwise = Fp8RowwiseLinear(w)
    xq, sx = quantize_rowwise(x)
    want = dequantize_rowwise(xq, sx) @ rowwise.dense_weight(torch.float32).T
    got = rowwise(x).float()
    torch.testing.assert_close(got, want, atol=0.05, rtol=0.02)
    assert float((got - x @ w.T).norm() / (x @ w.T).norm()) < 0.1
    blockwise = Fp8BlockwiseLinear(w, block=64)
    got = blockwise(x).float()
    assert float((got - x @ w.T).norm() / (x @ w.T).norm()) < 0.1
    with pytest.raises(ValueError, match="scale_block_m"):
        fp8_blockwise_matmul(rowwise.weight, rowwise.weight, torch.ones(1, 1), torch.ones(1, 1), 48, 32, 32)
