"""convstate against plain torch, by each ported definition's name, and the
engine's mixer from prefill through decoding.

Runs on a CUDA device, or on the CPU under TRITON_INTERPRET=1.
"""

import pytest
import torch

from convstate import host, kernels
from convstate.interface import (
    _conv1d_forward, causal_conv1d_fn, causal_conv1d_update, conv1d_reference,
    conv1d_update_reference, prefill_with_state,
)
from convstate.kernels import (
    _causal_conv_fwd_kernel, _conv_step_kernel, _launch_causal_conv_fwd, _launch_conv_step,
    run_causal_conv_fwd, run_conv_step,
)
from convstate.params import ConvParams, make_conv_params
from engine import ConvMixer

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
TOL = {torch.float32: (1e-4, 1e-4), torch.float16: (3e-3, 5e-3)}


def _inputs(batch, dim, seqlen, width, dtype, has_bias=True, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, dim, seqlen, generator=g).to(DEVICE, dtype)
    weight = torch.randn(dim, width, generator=g).to(DEVICE, dtype)
    bias = torch.randn(dim, generator=g).to(DEVICE, dtype) if has_bias else None
    return x, weight, bias


@pytest.mark.parametrize("width", [2, 3, 4])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("activation", [None, "silu"])
@pytest.mark.parametrize("seqlen", [5, 130])
def test_causal_conv1d_fn_matches_torch(width, dtype, activation, seqlen):
    x, weight, bias = _inputs(2, 6, seqlen, width, dtype)
    rtol, atol = TOL[dtype]
    torch.testing.assert_close(causal_conv1d_fn(x, weight, bias, activation),
                               conv1d_reference(x, weight, bias, activation), rtol=rtol, atol=atol)


def test_forward_makes_a_strided_input_contiguous_and_rejects_bad_inputs():
    x, weight, _ = _inputs(1, 4, 9, 3, torch.float32)
    strided = x.transpose(1, 2).contiguous().transpose(1, 2)  # stride(2) != 1
    torch.testing.assert_close(_conv1d_forward(strided, weight), conv1d_reference(x, weight))
    with pytest.raises(NotImplementedError):
        causal_conv1d_fn(x, weight, activation="gelu")
    with pytest.raises(ValueError):
        host.conv1d_fwd(x, torch.randn(4, 5, device=DEVICE), None, False)
    with pytest.raises(ValueError):
        host.conv1d_fwd(strided, weight, None, False)


@pytest.mark.parametrize("width", [2, 4])
@pytest.mark.parametrize("has_bias", [False, True])
def test_causal_conv1d_update_rolls_the_state_like_torch(width, has_bias):
    x, weight, bias = _inputs(3, 70, width, width, torch.float32, has_bias)
    token = torch.randn(3, 70, device=DEVICE)
    state, state_ref = x.clone(), x.clone()
    out = causal_conv1d_update(token, state, weight, bias, "silu")
    ref = conv1d_update_reference(token, state_ref, weight, bias, "silu")
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(state, state_ref)


def test_params_and_launchers_by_name():
    x, weight, bias = _inputs(2, 3, 17, 3, torch.float32)
    out = torch.empty_like(x)
    params = make_conv_params(2, 3, 17, 3, x, weight, out, bias, True)
    assert isinstance(params, ConvParams) and params.x_strides == (x.stride(0), x.stride(1), 1)
    run_causal_conv_fwd(params)
    torch.testing.assert_close(out, conv1d_reference(x, weight, bias, "silu"))
    out.zero_()
    _launch_causal_conv_fwd(params, 3)
    torch.testing.assert_close(out, conv1d_reference(x, weight, bias, "silu"))
    assert _causal_conv_fwd_kernel is not None and kernels.FWD_TILE_L == 128

    state = torch.randn(2, 3, 3, device=DEVICE)
    token = torch.randn(2, 3, device=DEVICE)
    ref_state = state.clone()
    ref = conv1d_update_reference(token, ref_state, weight, bias)
    step = make_conv_params(2, 3, 1, 3, token, weight, torch.empty_like(token), bias, False)
    step.conv_state, step.conv_state_strides = state, tuple(state.stride())
    run_conv_step(step)
    torch.testing.assert_close(step.out, ref)
    torch.testing.assert_close(state, ref_state)
    state.copy_(ref_state.roll(1, -1))  # put the state back one step, then step again by the launcher
    state[:, :, 0] = 0
    assert _conv_step_kernel is not None
    _launch_conv_step(step, 3)
    torch.testing.assert_close(state[:, :, -1], token)
    assert host.conv1d_update(token, state.clone(), weight, bias, False).shape == (2, 3)


def test_mixer_decoding_continues_the_prefill():
    x, weight, bias = _inputs(2, 8, 12, 4, torch.float32, seed=3)
    mixer = ConvMixer(weight, bias)
    out = mixer.prefill(x[..., :10])
    torch.testing.assert_close(out, conv1d_reference(x[..., :10], weight, bias, "silu"))
    full = conv1d_reference(x, weight, bias, "silu")
    for t in (10, 11):
        torch.testing.assert_close(mixer.decode(x[..., t].contiguous()), full[..., t])
    torch.testing.assert_close(mixer.convolve(x), full)
    _, state = prefill_with_state(x[..., :2], weight, bias, "silu")
    assert state.shape == (2, 8, 4) and (state[..., :2] == 0).all()
