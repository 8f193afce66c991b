"""The engine's FP8 layers on the vendored kernels against the dense product.

Runs where the scorer has written the vendored module and on a CUDA device:
the vendored file imports Triton 2's ``triton.ops.matmul_perf_model`` and
``triton.runtime.jit.reinterpret``, which the CPU interpreter's Triton lacks,
and its block-wise path refuses CPU tensors, so the test is skipped elsewhere.
"""

import pytest
import torch

pytest.importorskip("fbgemm_gpu.experimental.gemm.triton_gemm.fp8_gemm",
                    reason="the vendored module is written by the scorer and needs Triton 2's triton.ops")
if not torch.cuda.is_available():
    pytest.skip("the vendored kernels launch on a CUDA device only", allow_module_level=True)

from engine.fp8_linear import Fp8BlockwiseLinear, Fp8RowwiseLinear  # noqa: E402


def _relative_error(got, want):
    return float((got.float() - want).norm() / want.norm())


def test_rowwise_and_blockwise_layers_track_the_dense_product():
    torch.manual_seed(0)
    x = torch.randn(64, 512, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(256, 512, device="cuda", dtype=torch.bfloat16) * 0.05
    dense = x.float() @ w.float().T
    assert _relative_error(Fp8RowwiseLinear(w)(x), dense) < 0.1
    assert _relative_error(Fp8RowwiseLinear(w, fast_accum=False)(x), dense) < 0.1
    assert _relative_error(Fp8BlockwiseLinear(w)(x), dense) < 0.1
