"""Triton ops the decoder engine runs around attention: rotary position
embedding of q and k, RMSNorm with an optional fused residual add, and the
cross-entropy of the language-model head.

The kernels live in the submodules; this package only re-exports the entry
points the engine calls. It targets NVIDIA GPUs and runs on one device: no
tensor-parallel vocabulary, no packed variable-length batches. Nothing here
knows about models, checkpoints or training loops.
"""

# The engine calls the functions and autograd ops directly; upstream's nn.Module wrappers are not carried.
# portq: not-carried flashattn:flash_attn/losses/cross_entropy.py::CrossEntropyLoss -- the engine reduces the per-token losses itself
# portq: not-carried flashattn:flash_attn/layers/rotary.py::RotaryEmbedding -- the engine builds its cos/sin tables once (rotary.cos_sin_table)

from . import norm, rotary, xent
from .norm import rms_norm
from .rotary import RotaryFn, rotary_emb
from .xent import CrossEntropyFn

__all__ = ["CrossEntropyFn", "RotaryFn", "norm", "rms_norm", "rotary", "rotary_emb", "xent"]
