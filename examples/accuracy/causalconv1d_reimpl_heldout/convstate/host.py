"""Host entry points of the convolution: check the caller's tensors (shapes,
dtypes, layout, width), allocate the output, fill a ConvParams and launch.
They hold no state and never touch an engine's cache layout."""

import torch

from .kernels import SUPPORTED_WIDTHS, run_causal_conv_fwd, run_conv_step
from .params import make_conv_params

_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def _check_bias(bias, weight, dim):
    if bias is None:
        return None
    if bias.dtype != weight.dtype or bias.stride(-1) != 1 or tuple(bias.shape) != (dim,):
        raise ValueError(f"bias must be a contiguous ({dim},) tensor of the weight's dtype")
    return bias


# portq: ports causalconv1d:csrc/causal_conv1d.cpp::causal_conv1d_fwd
def conv1d_fwd(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, silu_activation: bool) -> torch.Tensor:
    """x (batch, dim, seqlen), channel-first; weight (dim, width) -> out like x."""
    if x.dtype not in _DTYPES or weight.dtype not in _DTYPES:
        raise ValueError("x and weight must be float32, float16 or bfloat16")
    batch, dim, seqlen = x.shape
    width = weight.shape[-1]
    if tuple(weight.shape) != (dim, width):
        raise ValueError(f"weight must have shape ({dim}, {width})")
    # Only the channel-first layout is carried (the channel-last kernels are not).
    if x.stride(2) != 1:
        raise ValueError("x must be channel-first: x.stride(2) == 1")
    if width not in SUPPORTED_WIDTHS:
        raise ValueError("causal conv1d supports filter widths 2 to 4")
    bias = _check_bias(bias, weight, dim)
    out = torch.empty_like(x)
    params = make_conv_params(batch, dim, seqlen, width, x, weight, out, bias, silu_activation)
    run_causal_conv_fwd(params)
    return out


# portq: not-carried causalconv1d:csrc/causal_conv1d.cpp::causal_conv1d_bwd -- inference only, no gradient
# portq: not-carried causalconv1d:csrc/causal_conv1d.cpp::set_conv_params_bwd -- inference only, no gradient
# portq: ports causalconv1d:csrc/causal_conv1d.cpp::causal_conv1d_update
def conv1d_update(x: torch.Tensor, conv_state: torch.Tensor, weight: torch.Tensor,
                  bias: torch.Tensor | None, silu_activation: bool) -> torch.Tensor:
    """One decoding token: x (batch, dim); conv_state (batch, dim, width), rolled in place."""
    if x.dtype not in _DTYPES or weight.dtype not in _DTYPES or conv_state.dtype != x.dtype:
        raise ValueError("x, conv_state (x's dtype) and weight must be float32, float16 or bfloat16")
    batch, dim = x.shape
    width = weight.shape[-1]
    if tuple(conv_state.shape) != (batch, dim, width) or tuple(weight.shape) != (dim, width):
        raise ValueError(f"conv_state must be ({batch}, {dim}, {width}) and weight ({dim}, {width})")
    if width not in SUPPORTED_WIDTHS:
        raise ValueError("causal conv1d supports filter widths 2 to 4")
    bias = _check_bias(bias, weight, dim)
    out = torch.empty_like(x)
    params = make_conv_params(batch, dim, 1, width, x, weight, out, bias, silu_activation)
    params.conv_state = conv_state
    params.conv_state_strides = (conv_state.stride(0), conv_state.stride(1), conv_state.stride(2))
    run_conv_step(params)
    return out
