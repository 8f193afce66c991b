"""The short causal convolution in front of a Mamba-style mixer's scan, on
causal-conv1d's vendored interface (causal_conv1d/causal_conv1d_interface.py):
the prefill over a whole prompt, after which the mixer keeps the last width
inputs of every sequence as its conv state, and the decoding step that
consumes one token per sequence and rolls that state in place. Inference
only: nothing here asks for a gradient. Owns no kernels and no scan."""

import torch
import torch.nn.functional as F

import causal_conv1d.causal_conv1d_interface as conv_iface
from causal_conv1d.causal_conv1d_interface import causal_conv1d_update as conv_step


class ConvMixer:
    """The convolution weights of one mixer layer and the conv state of the running batch."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None = None, activation: str = "silu"):
        self.weight, self.bias, self.activation = weight, bias, activation
        self.conv_state: torch.Tensor | None = None

    @torch.inference_mode()
    def prefill(self, x: torch.Tensor) -> torch.Tensor:
        """x (batch, dim, seqlen), channel-first -> the activated convolution; keeps the conv state."""
        out = conv_iface.causal_conv1d_fn(x, self.weight, self.bias, activation=self.activation)
        width = self.weight.shape[-1]
        self.conv_state = F.pad(x, (max(width - x.shape[-1], 0), 0))[..., -width:].contiguous()
        return out

    @torch.inference_mode()
    def decode(self, x: torch.Tensor) -> torch.Tensor:
        """x (batch, dim), one token per sequence -> (batch, dim); rolls the conv state."""
        if self.conv_state is None:
            raise RuntimeError("decode before prefill: no conv state")
        return conv_step(x, self.conv_state, self.weight, self.bias, self.activation)
