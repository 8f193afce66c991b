"""The engine's depthwise causal 1-D convolution for Mamba-style mixers:
the prefill convolution and the decoding step over a rolling conv state, in
Triton with Python host code. Forward only; it imports no engine code."""

from .interface import causal_conv1d_fn, causal_conv1d_update, prefill_with_state
from .host import conv1d_fwd, conv1d_update

__all__ = ["causal_conv1d_fn", "causal_conv1d_update", "prefill_with_state", "conv1d_fwd", "conv1d_update"]
