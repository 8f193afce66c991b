"""The launch parameters one convolution call carries from the host checks to
the kernels: sizes, the activation flag, the tensors and their element
strides. It builds nothing on the device and launches nothing."""

from dataclasses import dataclass, field

import torch


# portq: ports causalconv1d:csrc/causal_conv1d.h::ConvParamsBase
@dataclass
class ConvParams:
    """Sizes, flag, tensors and element strides of one forward or update call."""

    batch: int
    dim: int
    seqlen: int
    width: int
    silu_activation: bool
    x: torch.Tensor
    weight: torch.Tensor
    out: torch.Tensor
    bias: torch.Tensor | None = None
    x_strides: tuple[int, int, int] = (0, 0, 0)
    weight_strides: tuple[int, int] = (0, 0)
    out_strides: tuple[int, int, int] = (0, 0, 0)
    conv_state: torch.Tensor | None = None
    conv_state_strides: tuple[int, int, int] = field(default=(0, 0, 0))


# portq: not-carried causalconv1d:csrc/causal_conv1d.h::ConvParamsBwd -- inference only, no gradient
# portq: ports causalconv1d:csrc/causal_conv1d.cpp::set_conv_params_fwd
def make_conv_params(batch, dim, seqlen, width, x, weight, out, bias, silu_activation) -> ConvParams:
    """Parameters of a call over x (batch, dim[, seqlen]) with strides in elements, not bytes."""
    def three(t):
        return (t.stride(0), t.stride(1), t.stride(-1)) if t.dim() == 3 else (t.stride(0), t.stride(1), 0)

    return ConvParams(
        batch=batch, dim=dim, seqlen=seqlen, width=width, silu_activation=bool(silu_activation),
        x=x, weight=weight, out=out, bias=bias,
        x_strides=three(x), weight_strides=(weight.stride(0), weight.stride(1)), out_strides=three(out),
    )
