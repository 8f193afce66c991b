"""The engine's norms on the vendored QuACK module against plain torch.

Runs where the scorer has written the vendored module and on a CUDA device
of compute capability 9.0 or newer: the vendored file imports QuACK's other
modules (utils, copy_utils, reduce, reduction_base, compile and DSL helpers)
that the tree does not vendor, and the CuTe DSL (nvidia-cutlass-dsl) that
compiles its kernels, so the test is skipped elsewhere.
"""

import pytest
import torch

pytest.importorskip("cutlass.cute", reason="the vendored kernels are compiled by the CuTe DSL")
pytest.importorskip("quack.rmsnorm",
                    reason="the vendored module is written by the scorer and imports QuACK's other modules")
if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] < 9:
    pytest.skip("the vendored kernels run on CUDA devices of sm_90 and newer", allow_module_level=True)

from engine import DecoderNorms, norm_train_step  # noqa: E402

DEVICE = "cuda"


def test_block_norms_match_torch():
    torch.manual_seed(0)
    norms = DecoderNorms(256, device=DEVICE)
    h, res = torch.randn(8, 256, device=DEVICE), torch.randn(8, 256, device=DEVICE)
    normed, new_res = norms.attn_input(h, res)
    torch.testing.assert_close(new_res, h + res)
    torch.testing.assert_close(normed, torch.nn.functional.rms_norm(h + res, (256,), eps=1e-6),
                               atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(norms.final_norm(h), torch.nn.functional.rms_norm(h, (256,), eps=1e-6),
                               atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(norms.head_input(h), torch.nn.functional.layer_norm(h, (256,), eps=1e-6),
                               atol=1e-4, rtol=1e-4)


def test_train_step_gradients_match_autograd():
    torch.manual_seed(1)
    x = torch.randn(16, 512, device=DEVICE)
    w = torch.randn(512, device=DEVICE)
    g = torch.randn(16, 512, device=DEVICE)
    out, dx, dw = norm_train_step(x, w, g)
    xr, wr = x.clone().requires_grad_(), w.clone().requires_grad_()
    ref = torch.nn.functional.rms_norm(xr, (512,), wr, eps=1e-6)
    ref.backward(g)
    torch.testing.assert_close(out, ref.detach(), atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(dx, xr.grad, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(dw, wr.grad, atol=1e-3, rtol=1e-3)
