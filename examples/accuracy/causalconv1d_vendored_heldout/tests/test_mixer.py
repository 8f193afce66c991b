"""The engine's mixer on causal-conv1d's vendored interface, against plain
torch. Needs a CUDA device and the causal_conv1d_cuda extension built from the
vendored csrc/ (see causal_conv1d/__init__.py); skipped otherwise, since the
interface imports the extension at import time."""

import importlib.util

import pytest
import torch
import torch.nn.functional as F

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available() or importlib.util.find_spec("causal_conv1d_cuda") is None,
    reason="needs a GPU and the causal_conv1d_cuda extension built from the vendored csrc/",
)


def _reference(x, weight, bias):
    width = weight.shape[-1]
    out = F.conv1d(x.float(), weight.float().unsqueeze(1), bias.float(), padding=width - 1, groups=weight.shape[0])
    return F.silu(out[..., : x.shape[-1]]).to(x.dtype)


@pytest.mark.parametrize("width", [2, 3, 4])
def test_decoding_continues_the_prefill(width):
    from engine import ConvMixer

    torch.manual_seed(0)
    x = torch.randn(2, 64, 40, device="cuda", dtype=torch.float16)
    weight = torch.randn(64, width, device="cuda", dtype=torch.float16)
    bias = torch.randn(64, device="cuda", dtype=torch.float16)
    mixer = ConvMixer(weight, bias)
    full = _reference(x, weight, bias)
    torch.testing.assert_close(mixer.prefill(x[..., :37]), full[..., :37], rtol=3e-3, atol=5e-3)
    for t in range(37, 40):
        torch.testing.assert_close(mixer.decode(x[..., t].contiguous()), full[..., t], rtol=3e-3, atol=5e-3)


def test_vendored_functions_by_name():
    from causal_conv1d.causal_conv1d_interface import (
        causal_conv1d_fn, causal_conv1d_ref, causal_conv1d_update, causal_conv1d_update_ref,
    )

    torch.manual_seed(1)
    x = torch.randn(1, 16, 9, device="cuda")
    weight = torch.randn(16, 4, device="cuda")
    torch.testing.assert_close(causal_conv1d_fn(x, weight), causal_conv1d_ref(x, weight), rtol=1e-4, atol=1e-4)
    state, token = torch.randn(1, 16, 4, device="cuda"), torch.randn(1, 16, device="cuda")
    ref_state = state.clone()
    torch.testing.assert_close(causal_conv1d_update(token, state, weight),
                               causal_conv1d_update_ref(token, ref_state, weight), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(state, ref_state)
