"""The short causal convolution in front of a Mamba-style mixer's scan: the
prefill over a whole prompt, which leaves the conv state of every sequence in
the batch, and the decoding step that consumes one token per sequence and
rolls that state. Calls convstate; owns no kernels and no scan."""

import torch

import convstate.interface as conv_iface
from convstate import causal_conv1d_fn
from convstate import causal_conv1d_update as conv_step


class ConvMixer:
    """The convolution weights of one mixer layer and the conv state of the running batch."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None = None, activation: str = "silu"):
        self.weight, self.bias, self.activation = weight, bias, activation
        self.conv_state: torch.Tensor | None = None

    def prefill(self, x: torch.Tensor) -> torch.Tensor:
        """x (batch, dim, seqlen) -> the activated convolution; keeps the conv state."""
        out, self.conv_state = conv_iface.prefill_with_state(x, self.weight, self.bias, self.activation)
        return out

    def convolve(self, x: torch.Tensor) -> torch.Tensor:
        """The convolution alone, for a chunk whose state is not kept."""
        return causal_conv1d_fn(x, self.weight, self.bias, activation=self.activation)

    def decode(self, x: torch.Tensor) -> torch.Tensor:
        """x (batch, dim), one token per sequence -> (batch, dim); rolls the conv state."""
        if self.conv_state is None:
            raise RuntimeError("decode before prefill: no conv state")
        return conv_step(x, self.conv_state, self.weight, self.bias, self.activation)
