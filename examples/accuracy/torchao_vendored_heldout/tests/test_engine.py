"""The engine's layer on the vendored MX kernels against plain torch.

Runs where the scorer has written the vendored module and on a CUDA device:
the vendored file imports torchao's own packages (custom_fp_utils, utils,
mx_formats.constants) that the tree does not vendor, and its launchers
assert CUDA tensors, so the test is skipped elsewhere.
"""

import pytest
import torch

pytest.importorskip("torchao.prototype.mx_formats.kernels",
                    reason="the vendored module is written by the scorer and imports torchao's other packages")
if not torch.cuda.is_available():
    pytest.skip("the vendored launchers assert CUDA tensors", allow_module_level=True)

from engine.mx_linear import MXLinear  # noqa: E402

DEVICE = "cuda"
E2M1 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def test_layer_dequantises_packed_codes_and_casts_for_the_weight_gradient():
    torch.manual_seed(2)
    codes = torch.randint(0, 16, (8, 64), dtype=torch.uint8)
    scales = torch.full((8 * 64 // 32,), 126, dtype=torch.uint8)  # 2**-1
    layer = MXLinear(codes.to(DEVICE), scales.to(DEVICE))
    assert torch.equal(layer.codes().cpu(), codes)
    w = torch.cat((E2M1, -E2M1))[codes.long()] * 0.5
    torch.testing.assert_close(layer.weight().float().cpu(), w)
    cast, col_scale = layer.cast_for_wgrad(torch.randn(128, 128, device=DEVICE))
    assert cast.shape == (128, 128) and col_scale.shape == (128, 4, 1)
