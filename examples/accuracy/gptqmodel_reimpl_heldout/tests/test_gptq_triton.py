"""Every ported definition against a plain torch dequantisation of the same
packed layer (4- and 8-bit, shuffled group map), on the CPU interpreter or a
GPU."""

import pytest
import torch
import triton

from engine import GPTQLinear
from gptq_triton import dequant, fused, tuning

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _pack_rows(values, bits):
    """(K, N) small ints -> (K * bits // 32, N) int32, rows packed low bits first."""
    per = 32 // bits
    v = values.to(torch.int64).reshape(-1, per, values.shape[1])
    word = sum(v[:, j, :] << (bits * j) for j in range(per))
    return ((word + 2**31) % 2**32 - 2**31).to(torch.int32)


def _layer(k, n, group, bits, seed=0):
    gen = torch.Generator().manual_seed(seed)
    maxq = (1 << bits) - 1
    q = torch.randint(0, maxq + 1, (k, n), generator=gen)
    groups = k // group
    z = torch.randint(0, maxq + 1, (groups, n), generator=gen)
    scales = (torch.rand((groups, n), generator=gen) * 0.02 + 0.005).half()
    g_idx = (torch.arange(k) // group)[torch.randperm(k, generator=gen)].to(torch.int32)
    ref = scales.float()[g_idx.long()] * (q - z[g_idx.long()]).float()
    packed = (_pack_rows(q, bits), scales, _pack_rows(z.t().contiguous(), bits).t().contiguous(), g_idx)
    return [t.to(DEVICE) for t in packed], ref.to(DEVICE)


@pytest.mark.parametrize("bits", [4, 8])
def test_dequantize_weight_and_configs(bits):
    (qw, sc, qz, gi), ref = _layer(64, 64, 16, bits)
    assert len(dequant._dequant_configs([128, 256], [4])) == 2
    out = dequant.dequantize_weight(qw, sc, qz, gi, bits)
    torch.testing.assert_close(out.float(), ref, atol=1e-3, rtol=1e-3)


def test_dequant_matmul_function_and_own_linear():
    (qw, sc, qz, gi), ref = _layer(64, 32, 32, 4, seed=1)
    x = torch.randn((5, 64), device=DEVICE).half()
    want = x.float() @ ref
    torch.testing.assert_close(dequant.dequant_matmul(x, qw, sc, qz, gi, 4).float(), want, atol=2e-2, rtol=2e-2)
    got = dequant.DequantLinearFn.apply(x, qw, sc, qz, gi, 4, 15)
    torch.testing.assert_close(got.float(), want, atol=2e-2, rtol=2e-2)
    bias = torch.ones(32, device=DEVICE).half()
    got = dequant.dequant_linear(x.reshape(1, 5, 64), qw, sc, qz, gi, 4, bias=bias)
    torch.testing.assert_close(got.float().reshape(5, 32), want + 1, atol=2e-2, rtol=2e-2)


def test_shrink_block_configs_caps_and_dedups():
    cfgs = list(tuning.shrink_block_configs(fused.FUSED_CONFIGS, {"M": 3, "N": 40, "K": 64}))
    assert all(c.kwargs["BLOCK_SIZE_M"] == 16 and c.kwargs["BLOCK_SIZE_N"] <= 64 for c in cfgs)
    shapes = [(tuple(sorted(c.kwargs.items())), c.num_stages, c.num_warps) for c in cfgs]
    assert len(shapes) == len(set(shapes)) == 3  # six candidates, three distinct once capped
    assert cfgs[0].kwargs["BLOCK_SIZE_N"] == 64
    assert isinstance(cfgs[0], triton.Config)


@pytest.mark.parametrize("bits", [4, 8])
def test_fused_qmatmul_and_inference_launcher(bits):
    (qw, sc, qz, gi), ref = _layer(64, 32, 16, bits, seed=2)
    x = torch.randn((3, 64), device=DEVICE).half()
    want = x.float() @ ref
    torch.testing.assert_close(fused.fused_qmatmul(x, qw, sc, qz, gi, bits, (1 << bits) - 1).float(),
                               want, atol=2e-2, rtol=2e-2)
    out = fused.fused_qmatmul_inference(x, qw, sc, qz, gi, bits, (1 << bits) - 1)
    assert out.dtype == torch.float16
    torch.testing.assert_close(out.float(), want, atol=2e-2, rtol=2e-2)


def test_engine_layer_takes_both_paths():
    (qw, sc, qz, gi), ref = _layer(64, 32, 16, 4, seed=3)
    layer = GPTQLinear(qw, sc, qz, gi, 4)
    for rows in (2, 40):
        x = torch.randn((rows, 64), device=DEVICE).half()
        torch.testing.assert_close(layer(x).float(), x.float() @ ref, atol=2e-2, rtol=2e-2)


def test_kernels_launched_directly():
    (qw, sc, qz, gi), ref = _layer(64, 32, 16, 4, seed=4)
    dst = torch.empty((64, 32), device=DEVICE, dtype=torch.float16)
    dequant._unpack_dequant_kernel[(dst.numel() // 256,)](
        gi, sc, qw, qz, dst, dst.numel(), value_mask=15, bits=4, n_cols=32, n_groups=4, TILE=256)
    torch.testing.assert_close(dst.float(), ref, atol=1e-3, rtol=1e-3)
    x = torch.randn((16, 64), device=DEVICE).half()
    out = torch.empty((16, 32), device=DEVICE, dtype=torch.float16)
    fused._fused_qmatmul_kernel[(1,)](
        x, qw, out, sc, qz, gi, 16, 32, 64, 4, 15,
        x.stride(0), x.stride(1), qw.stride(0), qw.stride(1), out.stride(0), out.stride(1),
        sc.stride(0), qz.stride(0), BLOCK_SIZE_M=16, BLOCK_SIZE_N=32, BLOCK_SIZE_K=32, GROUP_SIZE_M=8)
    torch.testing.assert_close(out.float(), x.float() @ ref, atol=2e-2, rtol=2e-2)
