"""The Python functions the engine calls: the prefill convolution, the
decoding step, and the engine's own prefill that also returns the conv state
decoding starts from. Forward only: no autograd Function, no gradient."""

import torch
import torch.nn.functional as F

from . import host

ACTIVATIONS = (None, "silu", "swish")


def _silu_flag(activation) -> bool:
    if activation not in ACTIVATIONS:
        raise NotImplementedError("activation must be None, silu, or swish")
    return activation in ("silu", "swish")


# portq: not-carried causalconv1d:causal_conv1d/causal_conv1d_interface.py::CausalConv1dFn.backward -- inference only, no gradient
# portq: ports causalconv1d:causal_conv1d/causal_conv1d_interface.py::CausalConv1dFn.forward
def _conv1d_forward(x, weight, bias=None, activation=None):
    silu = _silu_flag(activation)
    if x.stride(2) != 1:
        x = x.contiguous()
    bias = bias.contiguous() if bias is not None else None
    return host.conv1d_fwd(x, weight, bias, silu)


# portq: ports causalconv1d:causal_conv1d/causal_conv1d_interface.py::causal_conv1d_fn
def causal_conv1d_fn(x, weight, bias=None, activation=None):
    """x (batch, dim, seqlen), weight (dim, width), bias (dim,) -> (batch, dim, seqlen)."""
    return _conv1d_forward(x, weight, bias, activation)


# portq: ports causalconv1d:causal_conv1d/causal_conv1d_interface.py::causal_conv1d_update
def causal_conv1d_update(x, conv_state, weight, bias=None, activation=None):
    """x (batch, dim), conv_state (batch, dim, width) updated in place -> (batch, dim)."""
    return host.conv1d_update(x, conv_state, weight, bias, _silu_flag(activation))


def prefill_with_state(x, weight, bias=None, activation=None):
    """The prefill convolution and the conv state (batch, dim, width) that
    decoding continues from: the last width inputs, zero-padded on the left."""
    out = causal_conv1d_fn(x, weight, bias, activation)
    width = weight.shape[-1]
    state = F.pad(x, (max(width - x.shape[-1], 0), 0))[..., -width:].contiguous()
    return out, state


def conv1d_reference(x, weight, bias=None, activation=None):
    """The semantics in plain torch: a grouped conv1d cut to the sequence."""
    silu = _silu_flag(activation)
    width = weight.shape[-1]
    out = F.conv1d(x.to(weight.dtype), weight.unsqueeze(1), bias, padding=width - 1, groups=weight.shape[0])
    out = out[..., : x.shape[-1]]
    return (F.silu(out) if silu else out).to(x.dtype)


def conv1d_update_reference(x, conv_state, weight, bias=None, activation=None):
    """The decoding step in plain torch; rolls conv_state in place like the kernel."""
    silu = _silu_flag(activation)
    conv_state.copy_(torch.roll(conv_state, shifts=-1, dims=-1))
    conv_state[:, :, -1] = x
    out = (conv_state.float() * weight.float()).sum(-1)
    if bias is not None:
        out = out + bias.float()
    return (F.silu(out) if silu else out).to(x.dtype)
