"""The engine's quantised linear and the vendored GEMM and GEMV against a
plain torch fp32 reference of the dequantised weight ((W - zeros) *
scales in fp16), within 2e-2 absolute plus 2e-2 relative on outputs of
magnitude about 1 (fp16 accumulation).

Runs where the scorer has written the vendored modules, on a CUDA device
or on the CPU under TRITON_INTERPRET=1, each kernel's autotune list cut to
its first config (tiny shapes: 128 by 128, groups of 64). The layer path
through core.py needs GemLite's CUDA extension and a CUDA device, and is
skipped otherwise."""

import pytest
import torch

pytest.importorskip("gemlite.triton_kernels", reason="the vendored modules are written by the scorer")

from gemlite.triton_kernels import gemm_A16fWnO16f_int32packing, gemv_A16fWnO16f_int32packing  # noqa: E402
from engine import QuantLinear, lowbit_matmul  # noqa: E402
from engine.linear import HAS_EXT  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@pytest.fixture(autouse=True)
def _one_config():
    saved = []
    for op in (gemm_A16fWnO16f_int32packing, gemv_A16fWnO16f_int32packing):
        saved.append((op.kernel, op.kernel.configs))
        op.kernel.configs = op.kernel.configs[:1]
    yield
    for kernel, configs in saved:
        kernel.configs = configs


def _weights(nbits, seed):
    g = torch.Generator().manual_seed(seed)
    codes = torch.randint(0, 2**nbits, (128, 128), generator=g, dtype=torch.uint8)
    scales = (torch.rand(128, 2, generator=g) * 0.02 + 0.01).half()
    zeros = torch.randint(0, 2**nbits, (128, 2), generator=g).half()
    w = ((codes.half().reshape(128, 2, 64) - zeros[..., None]) * scales[..., None]).reshape(128, 128)
    return codes, scales, zeros, w.float()


@pytest.mark.parametrize("rows", [1, 4])
@pytest.mark.parametrize("nbits", [2, 4, 8])
def test_engine_linear_matches_the_dequantised_reference(nbits, rows):
    if HAS_EXT and DEVICE == "cpu":
        pytest.skip("the extension's layer needs a CUDA device")
    codes, scales, zeros, w = _weights(nbits, seed=nbits + rows)
    layer = QuantLinear(codes.to(DEVICE), scales.to(DEVICE), zeros.to(DEVICE), nbits, 64)
    x = (torch.randn(rows, 128, generator=torch.Generator().manual_seed(rows)) * 0.5).half()
    got = layer(x.to(DEVICE)).cpu().float()
    want = x.float() @ w.t()
    assert torch.allclose(got, want, atol=2e-2, rtol=2e-2), (got - want).abs().max()


def test_both_entry_points_agree():
    codes, scales, zeros, w = _weights(4, seed=9)
    layer = QuantLinear(codes.to(DEVICE), scales.to(DEVICE), zeros.to(DEVICE), 4, 64)
    if layer.layer is not None:
        pytest.skip("the extension's layer packs for itself")
    x = (torch.randn(1, 128, generator=torch.Generator().manual_seed(3)) * 0.5).half().to(DEVICE)
    gemv = lowbit_matmul(x, layer.packed, layer.scales, layer.zeros, 4, 64)
    gemm = gemm_A16fWnO16f_int32packing.forward(x, layer.packed, layer.scales, layer.zeros, 4, 64, 15, 8)
    assert torch.allclose(gemv.float(), gemm.float(), atol=2e-2, rtol=2e-2)
