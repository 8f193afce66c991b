"""The engine's layer on the vendored kernels against a plain torch
dequantisation of the same packed 4-bit layer (shuffled group map).

Runs where the scorer has written the vendored modules and on a CUDA device:
the vendored dequantiser allocates on "cuda" and both vendored kernels pick
their tile by timing launches, which the CPU interpreter cannot do, so the
test is skipped elsewhere.
"""

import pytest
import torch

pytest.importorskip("gptqmodel.nn_modules.triton_utils.dequant",
                    reason="the vendored modules are written by the scorer")
if not torch.cuda.is_available():
    pytest.skip("the vendored kernels allocate on and autotune against a CUDA device", allow_module_level=True)

from engine import GPTQLinear  # noqa: E402

DEVICE = "cuda"


def _pack_rows(values, bits):
    per = 32 // bits
    v = values.to(torch.int64).reshape(-1, per, values.shape[1])
    word = sum(v[:, j, :] << (bits * j) for j in range(per))
    return ((word + 2**31) % 2**32 - 2**31).to(torch.int32)


def _layer(k=256, n=128, group=64, bits=4):
    gen = torch.Generator().manual_seed(0)
    maxq = (1 << bits) - 1
    q = torch.randint(0, maxq + 1, (k, n), generator=gen)
    z = torch.randint(0, maxq + 1, (k // group, n), generator=gen)
    scales = (torch.rand((k // group, n), generator=gen) * 0.02 + 0.005).half()
    g_idx = (torch.arange(k) // group)[torch.randperm(k, generator=gen)].to(torch.int32)
    ref = scales.float()[g_idx.long()] * (q - z[g_idx.long()]).float()
    packed = (_pack_rows(q, bits), scales, _pack_rows(z.t().contiguous(), bits).t().contiguous(), g_idx)
    return GPTQLinear(*[t.to(DEVICE) for t in packed], bits), ref.to(DEVICE)


def test_dense_weight_matches_torch():
    layer, ref = _layer()
    torch.testing.assert_close(layer.weight().float(), ref, atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("rows", [4, 64])
def test_decode_and_prefill_paths_match_torch(rows):
    layer, ref = _layer()
    x = torch.randn((rows, ref.shape[0]), device=DEVICE).half()
    torch.testing.assert_close(layer(x).float(), x.float() @ ref, atol=5e-2, rtol=5e-2)
